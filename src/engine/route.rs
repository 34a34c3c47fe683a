//! Stage 1: which route a device request takes, and why.
//!
//! KvikIO's rules, which cuDF users know, with one difference in AUTO:
//! `KVIKIO_COMPAT_MODE=ON` never uses cuFile; `OFF` uses cuFile or fails
//! with the reason; `AUTO` uses cuFile when the library loads, the driver
//! opens, stage 2 will move the data by GPUDirect Storage (nvidia-fs loaded,
//! or cuFile reports PCI P2PDMA support) and the file registers, else POSIX.
//! KvikIO's AUTO takes cuFile once the file registers, even when cuFile will
//! serve it through its own POSIX compat path (O_DIRECT, no page cache),
//! which was measured 27 × slower than the bounce route on cached data and no
//! faster cold (H200, BENCHMARKS.md); gdscan's AUTO takes the bounce route
//! then and says so. `OFF` still forces cuFile, compat path included.
//! Requests below `KVIKIO_GDS_THRESHOLD` take POSIX in every mode, and host
//! memory always does. Every POSIX choice records why.
//!
//! Among the POSIX routes, `auto` takes the bounce route. The zero-copy route (register the page
//! cache in place, DMA from it) moves one pass of host memory instead of
//! three, but `cuMemHostRegister` does not scale across threads: on the H200
//! it peaked at 17 GB/s from a warm ext4 file and 10 GB/s from /dev/shm,
//! where the bounce route reached 53 GB/s (0.95 of the pinned ceiling).
//! It stays available as `GDSCAN_DEVICE_READ_PATH=mmap` for measurement.

use std::fs::File;

use serde::Serialize;

use super::error::IoError;
use super::error::Result;
use super::mmap::Mapping;
use crate::config::{CompatMode, DeviceReadPath, Settings};

/// Whether cuFile can serve a file: ready, or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CuFileAvailability {
    /// Library loaded, driver open, file registered.
    Ready,
    /// AUTO declined cuFile: its driver is open but stage 2 would be
    /// cuFile's POSIX compat path, not GPUDirect Storage (why, in words).
    /// The file is not registered.
    CompatPathOnly(String),
    /// `KVIKIO_COMPAT_MODE=ON`: cuFile is never tried.
    Disabled,
    /// Tried and failed, with the reason.
    Unavailable(String),
}

/// Stage 1 for a device request of `len` bytes: `Some(decision)` when cuFile
/// takes it, `None` when a POSIX route does (the POSIX reason is returned
/// too), or [`IoError::CuFileRequired`] under compat OFF.
pub(crate) fn decide_cufile(
    settings: &Settings,
    cufile: &CuFileAvailability,
    path: &str,
    len: usize,
) -> Result<std::result::Result<RouteDecision, String>> {
    if settings.compat_mode == CompatMode::On {
        return Ok(Err("KVIKIO_COMPAT_MODE=ON: cuFile is never used".into()));
    }
    if len < settings.gds_threshold {
        return Ok(Err(format!(
            "request of {len} bytes is below KVIKIO_GDS_THRESHOLD ({} bytes)",
            settings.gds_threshold
        )));
    }
    match cufile {
        CuFileAvailability::Ready => {
            let stage2 = match crate::cufile::driver::opened() {
                Some(info) if !info.nvfs_present => {
                    "; stage 2 will be cuFile's POSIX compat path (no nvidia-fs), which reads with O_DIRECT and bypasses the page cache"
                }
                _ => "",
            };
            Ok(Ok(RouteDecision {
                route: DeviceRoute::CuFile,
                reason: format!(
                    "KVIKIO_COMPAT_MODE={}: cuFile library loaded, driver open, file registered{stage2}",
                    settings.compat_mode
                ),
            }))
        }
        CuFileAvailability::Unavailable(why) if settings.compat_mode == CompatMode::Off => {
            Err(IoError::CuFileRequired {
                path: path.to_string(),
                reason: why.clone(),
            })
        }
        CuFileAvailability::Unavailable(why) => Ok(Err(format!("cuFile unavailable: {why}"))),
        CuFileAvailability::CompatPathOnly(why) => Ok(Err(format!(
            "cuFile would run its POSIX compat path: {why}; KVIKIO_COMPAT_MODE=AUTO takes the bounce route (KVIKIO_COMPAT_MODE=OFF forces cuFile)"
        ))),
        CuFileAvailability::Disabled => Ok(Err("cuFile disabled".into())),
    }
}

/// The route chosen for a device read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceRoute {
    /// cuFile (`cuFileRead`/`cuFileWrite`).
    CuFile,
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

/// Chooses the POSIX route for a device read of `len` bytes at `offset`
/// (`why_posix` says why cuFile is not taking it); returns the mapping too
/// when the zero-copy route was chosen.
pub(crate) fn decide_posix(
    why_posix: &str,
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
                reason: format!("{why_posix}; {reason}"),
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
                    reason: format!("{why_posix}; GDSCAN_DEVICE_READ_PATH=mmap"),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(compat: CompatMode) -> Settings {
        Settings::builder().compat_mode(compat).build().unwrap()
    }

    #[test]
    fn auto_declines_cufile_when_stage2_is_its_compat_path() {
        let why = "no nvidia-fs".to_string();
        let d = decide_cufile(
            &settings(CompatMode::Auto),
            &CuFileAvailability::CompatPathOnly(why),
            "f",
            1 << 20,
        )
        .unwrap()
        .unwrap_err();
        assert!(
            d.starts_with("cuFile would run its POSIX compat path: no nvidia-fs;"),
            "{d}"
        );
    }

    #[test]
    fn a_registered_file_takes_cufile_above_the_threshold() {
        for compat in [CompatMode::Auto, CompatMode::Off] {
            let d = decide_cufile(&settings(compat), &CuFileAvailability::Ready, "f", 1 << 20)
                .unwrap()
                .unwrap();
            assert_eq!(d.route, DeviceRoute::CuFile);
            let small = decide_cufile(&settings(compat), &CuFileAvailability::Ready, "f", 100)
                .unwrap()
                .unwrap_err();
            assert!(small.contains("KVIKIO_GDS_THRESHOLD"), "{small}");
        }
    }

    #[test]
    fn off_without_cufile_is_an_error_naming_the_file() {
        let err = decide_cufile(
            &settings(CompatMode::Off),
            &CuFileAvailability::Unavailable("nope".into()),
            "/x/f",
            1 << 20,
        )
        .unwrap_err();
        assert!(err.to_string().contains("/x/f"), "{err}");
        assert!(err.to_string().contains("nope"), "{err}");
    }
}
