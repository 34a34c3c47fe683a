//! The GPU decoder: fetched column chunks in device memory become Arrow
//! columns in device memory.
//!
//! [`page`]: the host side, pure: page headers, page walks, the level
//! encoding's CPU reference and the decode plan of a row group.

pub mod page;
