//! Stage 1, POSIX side: which route a device read takes, and why.
//!
//! (The cuFile side of stage 1 joins this decision in a later step.)

use std::fs::File;

use serde::Serialize;

use super::mmap::Mapping;
use crate::config::DeviceReadPath;
use crate::error::Result;

/// Requests smaller than this skip the zero-copy route: registering pages
/// costs a system call and a pin per request, which small reads cannot repay.
pub const MIN_ZERO_COPY_BYTES: usize = 1 << 20;

/// Fraction of pages that must be in the page cache for `auto` to choose the
/// zero-copy route (registering cold pages reads them synchronously, one
/// fault at a time, without the bounce route's parallel reads).
pub const MIN_RESIDENT_FRACTION: f64 = 0.9;

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
        DeviceReadPath::Auto => {
            if len < MIN_ZERO_COPY_BYTES {
                return bounce(format!(
                    "request of {len} bytes is below the zero-copy minimum of {MIN_ZERO_COPY_BYTES}"
                ));
            }
            let mapping = Mapping::new(file, path, offset, len)?;
            let resident = mapping.resident_fraction();
            if resident >= MIN_RESIDENT_FRACTION {
                Ok((
                    RouteDecision {
                        route: DeviceRoute::Mmap,
                        reason: format!(
                            "{:.0}% of the range is in the page cache",
                            resident * 100.0
                        ),
                    },
                    Some(mapping),
                ))
            } else {
                bounce(format!(
                    "only {:.0}% of the range is in the page cache",
                    resident * 100.0
                ))
            }
        }
    }
}
