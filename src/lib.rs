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
//! CUDA is loaded at run time ([`cuda`]): the crate builds and its host paths
//! run on machines without CUDA; asking for a device there is an
//! [`Error::CudaUnavailable`], never a panic.

pub mod bench;
pub mod checksum;
pub mod cli;
pub mod config;
pub mod cuda;
pub mod cufile;
pub mod doctor;
pub mod engine;
pub mod error;
pub mod report;

pub use config::{CompatMode, DeviceReadPath, Settings, SettingsBuilder};
pub use engine::{Engine, FileHandle, IoPath, OpenMode};
pub use error::{Error, Result};
