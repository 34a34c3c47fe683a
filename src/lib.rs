//! # gdscan
//!
//! Parquet data from storage into NVIDIA GPU memory, fast and with proof of
//! the path taken.
//!
//! The foundation is a KvikIO-style I/O [`engine`]: a [`FileHandle`] reads and
//! writes file ranges into or out of host or device memory, split into tasks
//! run by a pool of workers. Device reads take one of two POSIX routes:
//! pinned bounce buffers with reads overlapping asynchronous copies, or the
//! page cache registered in place and copied by DMA. Settings use KvikIO's
//! environment variable names ([`config`]).
//!
//! Device requests go through stage 1 (gdscan's choice: cuFile or POSIX,
//! with KvikIO's `KVIKIO_COMPAT_MODE` rules) and, on the cuFile side, stage 2
//! (cuFile's own choice: nvidia-fs GDS or its POSIX compat path). Both are
//! made visible and proven after the fact: see [`cufile`], [`report`] and
//! `doctor`.
//!
//! CUDA and cuFile are loaded at run time ([`cuda`], [`cufile`]): the crate
//! builds and its host paths run on machines without them; asking for a
//! device there is an [`CudaError::Unavailable`](crate::cuda::CudaError::Unavailable), never a panic.

#![warn(missing_docs)]
#![warn(unreachable_pub)]

#[cfg(feature = "cli")]
pub mod bench;
pub mod checksum;
#[cfg(feature = "cli")]
pub mod cli;
pub mod config;
pub mod cuda;
pub mod cufile;
#[cfg(feature = "datafusion")]
pub mod datafusion;
pub mod decode;
#[cfg(feature = "cli")]
mod doctor;
pub mod engine;
pub mod error;
pub mod nvcomp;
pub mod parquet;
pub mod report;
pub mod store;
#[cfg(feature = "cli")]
pub mod tpch;

pub use config::{CompatMode, DeviceReadPath, Settings, SettingsBuilder};
pub use engine::{Engine, FileHandle, IoPath, OpenMode};
pub use error::{Error, Result};
