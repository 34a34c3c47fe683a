//! The cuFile driver: opened once per process (after gdscan's parameter
//! overrides are applied), and its properties: what stage 2 will do.

use std::mem::MaybeUninit;
use std::sync::OnceLock;

use cudarc::cufile::sys::CUfileDrvProps_t;
use serde::Serialize;

use super::error::CuFileError;
use super::library::api;
use super::params::apply;
use super::status::describe;
use crate::config::CuFileOverrides;

/// What the open driver says about this machine.
#[derive(Debug, Clone, Serialize)]
pub struct DriverInfo {
    /// The library that was loaded.
    pub library: String,
    /// `cuFileGetVersion`, e.g. "1.15.1" (None when the library lacks it).
    pub version: Option<String>,
    /// nvidia-fs kernel driver version from `cuFileDriverGetProperties`;
    /// 0.0 means nvidia-fs is not loaded, so no GPUDirect Storage.
    pub nvfs_version: (u32, u32),
    /// Whether nvidia-fs is present (real GDS is possible).
    pub nvfs_present: bool,
    /// The driver's largest direct I/O size in bytes.
    pub max_direct_io_size: usize,
    /// Poll-mode threshold in bytes.
    pub poll_threshold_size: usize,
    /// Raw status flags (supported file systems and devices).
    pub status_flags: u32,
    /// Raw control flags (poll mode, compat mode).
    pub control_flags: u32,
    /// Whether the nvidia-fs kernel module is loaded, seen by the kernel
    /// (`/proc/driver/nvidia-fs` or `nvidia_fs` in `/proc/modules`), apart
    /// from what cuFile reports.
    pub nvfs_module_loaded: bool,
    /// The overrides applied before the driver opened.
    pub applied: CuFileOverrides,
}

static DRIVER: OnceLock<Result<DriverInfo, CuFileError>> = OnceLock::new();

/// Opens the driver once per process, applying `overrides` first; later
/// calls return the same outcome (the first caller's overrides win, as
/// cuFile takes parameters only before it opens).
pub fn open(overrides: &CuFileOverrides) -> Result<&'static DriverInfo, CuFileError> {
    let outcome = DRIVER.get_or_init(|| open_once(overrides));
    match outcome {
        Ok(info) => {
            if &info.applied != overrides && !overrides.is_empty() {
                tracing::warn!("cuFile is already open: later parameter overrides are ignored");
            }
            Ok(info)
        }
        Err(e) => Err(e.clone()),
    }
}

/// Stops cuFile's statistics and closes its driver, once (what KvikIO does
/// at exit). [`open`] registers it with `atexit`, so it runs before cuFile's
/// own exit handlers: without it, processes that had started cuFile's
/// statistics crashed at exit on the H200 (cuFile 1.15). No cuFile call may
/// follow.
pub fn shutdown() {
    static DONE: std::sync::Once = std::sync::Once::new();
    if opened().is_none() {
        return;
    }
    DONE.call_once(|| {
        if let Ok(api) = api() {
            // SAFETY: the driver is open; both calls only tear down cuFile's state.
            unsafe {
                (api.stats_stop)();
                (api.driver_close)();
            }
        }
    });
}

/// The open driver, if [`open`] has succeeded.
pub fn opened() -> Option<&'static DriverInfo> {
    DRIVER.get().and_then(|r| r.as_ref().ok())
}

/// Whether this process has tried to open the driver yet, whatever came of
/// it (false while an opening is under way).
pub fn tried() -> bool {
    DRIVER.get().is_some()
}

/// Starts [`open`] on a thread of its own, once per process, and returns at
/// once: [`tried`] says when it has finished. For callers that have
/// something else to do meanwhile: the opening takes about a second on a
/// host without nvidia-fs (cuFile 1.15 on an H200), far longer than a small
/// file's whole read.
pub fn open_in_background(overrides: &CuFileOverrides) {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let for_thread = overrides.clone();
        let opener = std::thread::Builder::new()
            .name("gdscan-cufile-open".to_string())
            .spawn(move || {
                let _ = open(&for_thread);
            });
        match opener {
            Ok(_) => {
                // SAFETY: registering a plain `extern "C"` function with no captures.
                if unsafe { libc::atexit(wait_for_opening) } != 0 {
                    tracing::warn!("could not register the wait for cuFile's opening at exit");
                }
            }
            Err(e) => {
                tracing::warn!("cuFile's driver opens on the caller's thread: no thread: {e}");
                let _ = open(overrides);
            }
        }
    });
}

/// The process does not exit while cuFile's driver is opening on the
/// background thread (its libraries' exit handlers would run under it);
/// waits at most a minute.
extern "C" fn wait_for_opening() {
    let started = std::time::Instant::now();
    while DRIVER.get().is_none() && started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn open_once(overrides: &CuFileOverrides) -> Result<DriverInfo, CuFileError> {
    let api = api().map_err(CuFileError::Unavailable)?;
    crate::cuda::driver::ensure().map_err(CuFileError::NoCuda)?;
    apply(api, overrides)?;
    // SAFETY: no preconditions; failure is reported through the status.
    let status = unsafe { (api.driver_open)() };
    if status.err != 0 {
        return Err(CuFileError::Unavailable(format!(
            "cuFileDriverOpen failed: {}",
            describe(status)
        )));
    }
    // SAFETY: registering a plain `extern "C"` function with no captures.
    if unsafe { libc::atexit(shutdown_at_exit) } != 0 {
        tracing::warn!("could not register cuFile's shutdown at exit");
    }
    let mut props = MaybeUninit::<CUfileDrvProps_t>::zeroed();
    // SAFETY: the driver is open; `props` is a valid, zeroed out structure.
    let status = unsafe { (api.driver_get_properties)(props.as_mut_ptr()) };
    if status.err != 0 {
        return Err(CuFileError::Unavailable(format!(
            "cuFileDriverGetProperties failed: {}",
            describe(status)
        )));
    }
    // SAFETY: the structure holds only integers; zeroed or filled, it is valid.
    let props = unsafe { props.assume_init() };
    let version = api.get_version.and_then(|f| {
        let mut v = 0;
        // SAFETY: valid out pointer.
        let status = unsafe { f(&mut v) };
        (status.err == 0).then(|| format_version(v))
    });
    let nvfs_version = (props.nvfs.major_version, props.nvfs.minor_version);
    Ok(DriverInfo {
        library: api.path.clone(),
        version,
        nvfs_version,
        nvfs_present: nvfs_version != (0, 0),
        max_direct_io_size: props.nvfs.max_direct_io_size,
        poll_threshold_size: props.nvfs.poll_thresh_size,
        status_flags: props.nvfs.dstatusflags,
        control_flags: props.nvfs.dcontrolflags,
        nvfs_module_loaded: nvfs_module_loaded(),
        applied: overrides.clone(),
    })
}

/// Bit of `dstatusflags` by which cuFile reports NVMe PCI P2PDMA support
/// (`CU_FILE_NVME_P2P_SUPPORTED`): GDS without nvidia-fs, through the
/// upstream kernel's P2PDMA.
pub(crate) const NVME_P2P_SUPPORTED_BIT: u32 = 11;

/// Whether the kernel has the nvidia-fs module loaded.
pub(crate) fn nvfs_module_loaded() -> bool {
    std::path::Path::new("/proc/driver/nvidia-fs").exists()
        || std::fs::read_to_string("/proc/modules")
            .map(|m| m.lines().any(|l| l.split(' ').next() == Some("nvidia_fs")))
            .unwrap_or(false)
}

/// Whether cuFile's configuration (`CUFILE_ENV_PATH_JSON`, else
/// /etc/cufile.json) turns on NVMe PCI P2PDMA (`properties.use_pci_p2pdma`,
/// off by default): the only way cuFile moves data directly without the
/// nvidia-fs module.
pub(crate) fn p2pdma_configured() -> bool {
    super::params::ConfigSource::locate().bool_value("properties.use_pci_p2pdma") == Some(true)
}

/// Whether stage 2 will move data by GPUDirect Storage: `Ok(how)` when
/// nvidia-fs is loaded (cuFile reports its version, or the kernel lists the
/// module) or cuFile reports NVMe PCI P2PDMA support; otherwise `Err(why
/// not)`: cuFile would serve reads through its POSIX compat path. AUTO
/// takes cuFile only on `Ok` (stage 1, `engine::route`).
pub fn gds_stage2(info: &DriverInfo) -> Result<String, String> {
    if info.nvfs_present {
        Ok(format!(
            "nvidia-fs {}.{} is loaded",
            info.nvfs_version.0, info.nvfs_version.1
        ))
    } else if info.nvfs_module_loaded {
        Ok("the nvidia-fs module is loaded (/proc)".to_string())
    } else if info.status_flags & (1 << NVME_P2P_SUPPORTED_BIT) != 0 {
        Ok("cuFile reports NVMe PCI P2PDMA support".to_string())
    } else {
        Err(
            "no nvidia-fs (cuFile reports version 0.0, the kernel lists no nvidia_fs module) and no PCI P2PDMA support reported by cuFile"
                .to_string(),
        )
    }
}

extern "C" fn shutdown_at_exit() {
    shutdown();
}

/// cuFile encodes its version as major*1000 + minor*10 + patch (1151 = 1.15.1).
pub(crate) fn format_version(v: i32) -> String {
    format!("{}.{}.{}", v / 1000, (v % 1000) / 10, v % 10)
}

/// What stage 2 will do, from the driver's properties and allow_compat_mode.
pub fn predict_stage2(info: &DriverInfo, allow_compat_mode: Option<bool>) -> String {
    if info.nvfs_present {
        format!(
            "nvidia-fs {}.{} is loaded: cuFile can use GPUDirect Storage on supported file systems",
            info.nvfs_version.0, info.nvfs_version.1
        )
    } else if allow_compat_mode == Some(false) {
        "no nvidia-fs and allow_compat_mode=false: cuFile reads will fail".to_string()
    } else {
        "no nvidia-fs (version 0.0): cuFile will serve reads through its own POSIX compat path, not GDS"
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_decode() {
        assert_eq!(format_version(1151), "1.15.1");
        assert_eq!(format_version(1150), "1.15.0");
    }

    #[test]
    fn stage2_prediction_follows_nvfs_and_compat() {
        let mut info = DriverInfo {
            library: "libcufile.so.0".into(),
            version: None,
            nvfs_version: (0, 0),
            nvfs_present: false,
            max_direct_io_size: 0,
            poll_threshold_size: 0,
            status_flags: 0,
            control_flags: 0,
            nvfs_module_loaded: false,
            applied: CuFileOverrides::default(),
        };
        assert!(gds_stage2(&info).is_err());
        info.status_flags = 1 << NVME_P2P_SUPPORTED_BIT;
        assert!(gds_stage2(&info).unwrap().contains("P2PDMA"));
        info.status_flags = 0;
        info.nvfs_module_loaded = true;
        assert!(gds_stage2(&info).unwrap().contains("module"));
        info.nvfs_module_loaded = false;
        assert!(predict_stage2(&info, Some(true)).contains("POSIX compat path, not GDS"));
        assert!(predict_stage2(&info, Some(false)).contains("will fail"));
        info.nvfs_version = (2, 20);
        info.nvfs_present = true;
        assert!(predict_stage2(&info, Some(true)).contains("nvidia-fs 2.20"));
        assert!(gds_stage2(&info).unwrap().contains("nvidia-fs 2.20"));
    }
}
