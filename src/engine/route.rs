//! Stage 1, POSIX side: which route a device read takes, and why.
//!
//! `auto` takes the bounce route. The zero-copy route (register the page
//! cache in place, DMA from it) moves one pass of host memory instead of
//! three, but `cuMemHostRegister` does not scale across threads: on the H200
//! it peaked at 17 GB/s from a warm ext4 file and 10 GB/s from /dev/shm,
//! where the bounce route reached 53 GB/s (0.95 of the pinned ceiling).
//! It stays available as `GDSCAN_DEVICE_READ_PATH=mmap` for measurement.
//!
//! (The cuFile side of stage 1 joins this decision in a later step.)

use std::fs::File;

use serde::Serialize;

use super::mmap::Mapping;
use crate::config::DeviceReadPath;
use crate::error::Result;

/// The route chosen for a device read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceRoute {
    /// Pinned bounce buffers.
    Bounce,
    /// Registered page cache.
    Mmap,
}

/// A decision with its reason, as the reports print it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteDecision {
    /// The route.
    pub route: DeviceRoute,
    /// Why, in words.
    pub reason: String,
}

/// Chooses the route for a device read of `len` bytes at `offset`; returns
/// the mapping too when the zero-copy route was chosen.
pub(crate) fn decide(
    setting: DeviceReadPath,
    file: &File,
    path: &str,
    offset: u64,
    len: usize,
) -> Result<(RouteDecision, Option<Mapping>)> {
    let bounce = |reason: String| {
        Ok((
            RouteDecision {
                route: DeviceRoute::Bounce,
                reason,
            },
            None,
        ))
    };
    match setting {
        DeviceReadPath::Bounce => bounce("GDSCAN_DEVICE_READ_PATH=bounce".into()),
        DeviceReadPath::Mmap => {
            let mapping = Mapping::new(file, path, offset, len)?;
            Ok((
                RouteDecision {
                    route: DeviceRoute::Mmap,
                    reason: "GDSCAN_DEVICE_READ_PATH=mmap".into(),
                },
                Some(mapping),
            ))
        }
        DeviceReadPath::Auto => bounce(
            "auto: bounce buffers beat page-cache registration (measured on the H200, see BENCHMARKS.md)"
                .into(),
        ),
    }
}
