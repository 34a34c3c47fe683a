//! Benchmarks run by `gdscan bench` (filled in below).
