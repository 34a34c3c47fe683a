//! gdscan's DataFusion provider (feature `datafusion`), in one test binary
//! (each binary that links DataFusion costs CI most of a minute to link):
//! the filters DataFusion pushes down, planned and read ahead by gdscan
//! (`pruning`); fuzzing findings as rows or typed errors, never a panic
//! (`border`); deltas arrow-rs refuses, explained (`wide_deltas`).

#![cfg(feature = "datafusion")]

mod common;

#[path = "provider/border.rs"]
mod border;
#[path = "provider/pruning.rs"]
mod pruning;
#[path = "provider/wide_deltas.rs"]
mod wide_deltas;
