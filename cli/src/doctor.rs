//! `gdscan doctor`: the machine's answer to "will my reads use GDS?", like
//! gdscheck, from the libraries themselves. Never fails for a missing GPU,
//! library or driver: it says what is missing.

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::Serialize;

use gdscan::config::ParamValue;
use gdscan::config::Settings;
use gdscan::cuda::{driver, Device};
use gdscan::cufile::driver::predict_stage2;
use gdscan::cufile::params::{report as param_report, ConfigSource, ParamReport};
use gdscan::cufile::DriverInfo;
use gdscan::engine::CuFileAvailability;
use gdscan::engine::{Engine, FileHandle, OpenMode, RouteDecision};

/// One GPU.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct GpuInfo {
    /// Ordinal.
    pub ordinal: usize,
    /// Name.
    pub name: String,
    /// Total memory in bytes.
    pub memory_total: usize,
}

/// The CUDA side.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CudaReport {
    /// Whether the driver loads and sees a GPU.
    pub available: bool,
    /// Why not.
    pub problem: Option<String>,
    /// The driver's CUDA version, e.g. "13.0".
    pub driver_version: Option<String>,
    /// The GPUs.
    pub devices: Vec<GpuInfo>,
}

/// The cuFile side.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CuFileReport {
    /// The library that loaded, if any.
    pub library: Option<String>,
    /// Why cuFile cannot be used, if so.
    pub problem: Option<String>,
    /// The open driver's properties.
    pub driver: Option<DriverInfo>,
    /// What stage 2 will do.
    pub stage2_prediction: Option<String>,
    /// Which cufile.json cuFile reads.
    pub config: ConfigSource,
    /// Effective parameters and their sources.
    pub params: Vec<ParamReport>,
}

/// What gdscan would do with one file.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FileReport {
    /// The path.
    pub path: String,
    /// Size in bytes.
    pub size: Option<u64>,
    /// "ready", "disabled" or "unavailable: why".
    pub cufile: String,
    /// Whether O_DIRECT opens, or why not.
    pub o_direct: String,
    /// Stage 1 for a read of the whole file into device memory.
    pub stage1: Option<RouteDecision>,
    /// Why the file could not be examined, if so.
    pub problem: Option<String>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DoctorReport {
    /// gdscan's version.
    pub gdscan_version: &'static str,
    /// The settings in force.
    pub settings: Option<Settings>,
    /// Why the settings are invalid, if so.
    pub settings_problem: Option<String>,
    /// CUDA.
    pub cuda: CudaReport,
    /// cuFile.
    pub cufile: CuFileReport,
    /// The file, when one was named.
    pub file: Option<FileReport>,
    /// The answer in one sentence.
    pub answer: String,
}

/// Examines the machine (and `path`, if given) with `settings`.
pub(crate) fn diagnose(
    settings: Result<Settings, crate::Error>,
    path: Option<&Path>,
    device: usize,
) -> DoctorReport {
    let (settings, settings_problem) = match settings {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let cuda = cuda_report();
    let overrides = settings
        .as_ref()
        .map(|s| s.cufile.clone())
        .unwrap_or_default();
    let cufile = cufile_report(&overrides);
    let file = match (path, &settings) {
        (Some(p), Some(s)) => Some(file_report(p, s)),
        _ => None,
    };
    let answer = answer(&cuda, device, &cufile, file.as_ref());
    DoctorReport {
        gdscan_version: env!("CARGO_PKG_VERSION"),
        settings,
        settings_problem,
        cuda,
        cufile,
        file,
        answer,
    }
}

fn cuda_report() -> CudaReport {
    if let Err(e) = driver::ensure() {
        return CudaReport {
            available: false,
            problem: Some(e.to_string()),
            driver_version: None,
            devices: vec![],
        };
    }
    let count = driver::device_count().unwrap_or(0);
    let devices = (0..count)
        .filter_map(|i| Device::get(i).ok())
        .map(|d| GpuInfo {
            ordinal: d.ordinal(),
            name: d.name().unwrap_or_default(),
            memory_total: d.memory_info().map(|(_, t)| t).unwrap_or(0),
        })
        .collect::<Vec<_>>();
    CudaReport {
        available: !devices.is_empty(),
        problem: devices.is_empty().then(|| "no CUDA devices".to_string()),
        driver_version: driver::driver_version()
            .ok()
            .map(|(a, b)| format!("{a}.{b}")),
        devices,
    }
}

fn cufile_report(overrides: &gdscan::cufile::CuFileOverrides) -> CuFileReport {
    let config = ConfigSource::locate();
    let api = match gdscan::cufile::library::api() {
        Ok(api) => api,
        Err(why) => {
            return CuFileReport {
                library: None,
                problem: Some(why),
                driver: None,
                stage2_prediction: None,
                config,
                params: vec![],
            }
        }
    };
    let (driver, problem) = match gdscan::cufile::driver::open(overrides) {
        Ok(info) => (Some(info.clone()), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let params = param_report(api, overrides, &config);
    let allow = params
        .iter()
        .find(|p| p.key == "properties.allow_compat_mode")
        .and_then(|p| match p.value {
            Some(ParamValue::Bool(b)) => Some(b),
            _ => None,
        });
    CuFileReport {
        library: Some(api.path.clone()),
        problem,
        stage2_prediction: driver.as_ref().map(|d| predict_stage2(d, allow)),
        driver,
        config,
        params,
    }
}

fn file_report(path: &Path, settings: &Settings) -> FileReport {
    let shown = path.display().to_string();
    let o_direct = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
    {
        Ok(_) => "ok".to_string(),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            "refused by the file system".to_string()
        }
        Err(e) => format!("cannot open: {e}"),
    };
    let opened =
        Engine::new(settings.clone()).and_then(|e| FileHandle::open_with(e, path, OpenMode::Read));
    let handle = match opened {
        Ok(h) => h,
        Err(e) => {
            return FileReport {
                path: shown,
                size: None,
                cufile: "not examined".into(),
                o_direct,
                stage1: None,
                problem: Some(e.to_string()),
            }
        }
    };
    let size = handle.file_size().ok();
    let cufile = match handle.cufile_settled() {
        CuFileAvailability::Ready => "ready".to_string(),
        CuFileAvailability::Disabled => "disabled (KVIKIO_COMPAT_MODE=ON)".to_string(),
        CuFileAvailability::Unavailable(why) => format!("unavailable: {why}"),
        CuFileAvailability::CompatPathOnly(why) => format!(
            "declined by AUTO: cuFile would run its POSIX compat path ({why}); KVIKIO_COMPAT_MODE=OFF forces it"
        ),
    };
    let (stage1, problem) = match size {
        Some(0) | None => (None, Some("empty file: no read to decide".to_string())),
        Some(n) => match handle.device_route(n as usize, 0) {
            Ok(d) => (Some(d), None),
            Err(e) => (None, Some(e.to_string())),
        },
    };
    FileReport {
        path: shown,
        size,
        cufile,
        o_direct,
        stage1,
        problem,
    }
}

fn answer(
    cuda: &CudaReport,
    device: usize,
    cufile: &CuFileReport,
    file: Option<&FileReport>,
) -> String {
    if !cuda.available {
        return format!(
            "No: no usable GPU ({}); gdscan reads into host memory only",
            cuda.problem.as_deref().unwrap_or("unknown")
        );
    }
    if !cuda.devices.iter().any(|d| d.ordinal == device) {
        return format!(
            "No: GPU {device} does not exist ({} present)",
            cuda.devices.len()
        );
    }
    if cufile.library.is_none() {
        return "No: libcufile is not installed; device reads take gdscan's POSIX path (pinned bounce buffers)"
            .to_string();
    }
    let Some(driver) = &cufile.driver else {
        return format!(
            "No: the cuFile driver does not open ({}); device reads take gdscan's POSIX path",
            cufile.problem.as_deref().unwrap_or("unknown")
        );
    };
    let file_part = match file {
        Some(f) => match &f.stage1 {
            Some(d) => format!("; for {}: {:?} ({})", f.path, d.route, d.reason),
            None => format!(
                "; for {}: {}",
                f.path,
                f.problem.as_deref().unwrap_or("not examined")
            ),
        },
        None => String::new(),
    };
    if !driver.nvfs_present {
        format!(
            "No GDS: nvidia-fs is not loaded (version 0.0), so cuFile can only use its POSIX compat path{file_part}"
        )
    } else {
        format!(
            "Possibly: nvidia-fs {}.{} is loaded; `gdscan read --stats` proves it per read{file_part}",
            driver.nvfs_version.0, driver.nvfs_version.1
        )
    }
}

/// The report as text.
pub(crate) fn render(r: &DoctorReport) -> String {
    let mut out = format!("gdscan {}\n", r.gdscan_version);
    if let Some(p) = &r.settings_problem {
        out += &format!("settings: INVALID: {p}\n");
    } else if let Some(s) = &r.settings {
        out += &format!(
            "settings: compat {} threads {} task {} gds_threshold {} bounce {} direct read {} write {} route {}\n",
            s.compat_mode,
            s.num_threads,
            s.task_size,
            s.gds_threshold,
            s.bounce_buffer_size,
            s.auto_direct_io_read,
            s.auto_direct_io_write,
            s.device_read_path
        );
    }
    match &r.cuda.problem {
        Some(p) if !r.cuda.available => out += &format!("GPU: none ({p})\n"),
        _ => {
            out += &format!(
                "CUDA driver: {}\n",
                r.cuda.driver_version.as_deref().unwrap_or("?")
            );
            for d in &r.cuda.devices {
                out += &format!(
                    "GPU {}: {} ({} MiB)\n",
                    d.ordinal,
                    d.name,
                    d.memory_total >> 20
                );
            }
        }
    }
    match &r.cufile.library {
        None => {
            out += &format!(
                "cuFile: not found ({})\n",
                r.cufile.problem.as_deref().unwrap_or("")
            )
        }
        Some(lib) => {
            out += &format!("cuFile library: {lib}\n");
            match &r.cufile.driver {
                Some(d) => {
                    out += &format!(
                    "cuFile driver: open, version {}, nvidia-fs {}.{}, max direct I/O {} bytes\n",
                    d.version.as_deref().unwrap_or("?"),
                    d.nvfs_version.0,
                    d.nvfs_version.1,
                    d.max_direct_io_size
                )
                }
                None => {
                    out += &format!(
                        "cuFile driver: not open ({})\n",
                        r.cufile.problem.as_deref().unwrap_or("")
                    )
                }
            }
            if let Some(p) = &r.cufile.stage2_prediction {
                out += &format!("stage 2: {p}\n");
            }
        }
    }
    out += &format!(
        "cufile.json: {}{} ({})\n",
        r.cufile.config.path,
        if r.cufile.config.from_env {
            " (CUFILE_ENV_PATH_JSON)"
        } else {
            ""
        },
        if r.cufile.config.readable {
            "read".to_string()
        } else {
            r.cufile
                .config
                .problem
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default()
        }
    );
    for p in &r.cufile.params {
        let value = p
            .value
            .as_ref()
            .map(|v| v.to_string())
            .unwrap_or_else(|| "?".into());
        let bounds = p
            .bounds
            .map(|(a, b)| format!(" [{a}..={b}]"))
            .unwrap_or_default();
        out += &format!("  {:<40} {:<12} {:?}{}\n", p.key, value, p.source, bounds);
    }
    if let Some(f) = &r.file {
        out += &format!(
            "file: {} ({} bytes), O_DIRECT {}, cuFile {}\n",
            f.path,
            f.size.map(|s| s.to_string()).unwrap_or("?".into()),
            f.o_direct,
            f.cufile
        );
        if let Some(d) = &f.stage1 {
            out += &format!("stage 1: {:?}: {}\n", d.route, d.reason);
        }
        if let Some(p) = &f.problem {
            out += &format!("  {p}\n");
        }
    }
    out += &format!("answer: {}\n", r.answer);
    out
}
