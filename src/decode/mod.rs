//! The GPU decoder: column chunks in device memory become Arrow arrays in
//! device memory.
//!
//! [`kernels`]: the CUDA C kernels (compiled at run time with NVRTC), the
//! `PageTask` the host fills per data page, and their launch wrappers.

pub mod kernels;
