//! Compiling the kernel sources at run time with NVRTC (through cudarc's
//! `nvrtc::sys`, loaded at run time), once per process and target.
//!
//! - **Finding NVRTC.** cudarc opens `libnvrtc.so`, ..., `libnvrtc.so.13` by
//!   name (the dynamic loader's search: `LD_LIBRARY_PATH`, ldconfig) and
//!   panics when none loads, so [`nvrtc_info`] checks presence first and
//!   answers [`KernelError::NvrtcUnavailable`] instead. `GDSCAN_NVRTC_LIBRARY`
//!   may name the library's path (e.g. pip's
//!   `site-packages/nvidia/cu13/lib/libnvrtc.so.13`): it is opened first,
//!   globally, so cudarc's lookup by name finds that already-loaded library
//!   by its soname.
//! - **Choosing the target** ([`choose_target`]): a cubin for exactly the
//!   device's `sm_XX` when NVRTC supports that architecture and the driver
//!   loads NVRTC's cubins (NVRTC not newer than the driver, or of the same
//!   major: cubins load across minor versions). Machine code needs no JIT
//!   by the driver, so a process that finds it in the disk cache starts its
//!   kernels at once. Otherwise PTX for `compute_XX`, the device's compute
//!   capability capped at the highest NVRTC supports
//!   (`nvrtcGetSupportedArchs`), which the driver JIT-compiles; the driver
//!   refuses a PTX ISA newer than itself, and the ISA follows NVRTC's
//!   version, so NVRTC of a newer major than the driver is a typed error.
//! - **Caching**: one compile per [`Target`] per process ([`compile`]), and
//!   its image kept on disk for the next process ([`super::disk_cache`]).

use std::collections::HashMap;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::nvrtc::sys;

use super::disk_cache;
use super::error::KernelError;
use super::task::generated_header;
use crate::config::decode::KernelConfig;

/// Environment variable naming the NVRTC library to load (a path).
pub const LIBRARY_ENV: &str = "GDSCAN_NVRTC_LIBRARY";

/// One CUDA source file of the kernels.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// The file name, as included.
    pub name: &'static str,
    /// Its text.
    pub text: &'static str,
    /// The `extern "C"` kernels it defines.
    pub entries: &'static [&'static str],
}

/// The shared header every source includes (structs, loads, hybrid runs).
pub const COMMON_HEADER: KernelSource = KernelSource {
    name: "common.cuh",
    text: include_str!("cuda/common.cuh"),
    entries: &[],
};

/// The kernel sources, each with its entry points.
pub const SOURCES: [KernelSource; 12] = [
    KernelSource {
        name: "delta.cuh",
        text: include_str!("cuda/delta.cuh"),
        entries: &[],
    },
    KernelSource {
        name: "delta_strings.cuh",
        text: include_str!("cuda/delta_strings.cuh"),
        entries: &[],
    },
    KernelSource {
        name: "decode.cu",
        text: include_str!("cuda/decode.cu"),
        entries: &["gds_decode_pages", "gds_dba_sizes"],
    },
    KernelSource {
        name: "byte_array.cu",
        text: include_str!("cuda/byte_array.cu"),
        entries: &["gds_byte_array_walk", "gds_dict_views", "gds_string_walks"],
    },
    KernelSource {
        name: "byte_array_spread.cu",
        text: include_str!("cuda/byte_array_spread.cu"),
        entries: &["gds_spread_spec", "gds_spread_join", "gds_spread_emit"],
    },
    KernelSource {
        name: "nest.cu",
        text: include_str!("cuda/nest.cu"),
        entries: &["gds_nest_count", "gds_nest_scan", "gds_nest_write"],
    },
    KernelSource {
        name: "status.cu",
        text: include_str!("cuda/status.cu"),
        entries: &["gds_gather_status"],
    },
    KernelSource {
        name: "check.cu",
        text: include_str!("cuda/check.cu"),
        entries: &["gds_check_snappy", "gds_snappy_pieces"],
    },
    KernelSource {
        name: "snappy_scan.cu",
        text: include_str!("cuda/snappy_scan.cu"),
        entries: &[
            "gds_snappy_spec",
            "gds_snappy_spec_later",
            "gds_snappy_spec_rest",
            "gds_snappy_chain",
            "gds_snappy_outs",
            "gds_snappy_prefix",
            "gds_snappy_verify",
            "gds_snappy_finish",
        ],
    },
    KernelSource {
        name: "snappy_decode.cu",
        text: include_str!("cuda/snappy_decode.cu"),
        entries: &["gds_snappy_decode"],
    },
    KernelSource {
        name: "filter_eval.cu",
        text: include_str!("cuda/filter_eval.cu"),
        entries: &["gds_filter_eval"],
    },
    KernelSource {
        name: "compact.cu",
        text: include_str!("cuda/compact.cu"),
        entries: &[
            "gds_compact_tile_sums",
            "gds_compact_scan_sums",
            "gds_compact_mask_rows",
            "gds_compact_scan_write",
            "gds_compact_list_lengths",
            "gds_compact_expand",
            "gds_compact_fixed_rows",
            "gds_compact_gather",
            "gds_compact_bits",
        ],
    },
];

/// Every entry point of [`SOURCES`].
pub fn entry_points() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().flat_map(|s| s.entries.iter().copied())
}

/// The name of the generated header ([`generated_header`]).
pub const GENERATED_HEADER: &str = "gdscan_generated.cuh";

/// The name of the one translation unit that includes every source.
pub const PROGRAM_NAME: &str = "gdscan_kernels.cu";

/// The program NVRTC compiles: one translation unit including every source
/// (one compile, one module).
pub fn program_text() -> String {
    SOURCES
        .iter()
        .map(|s| format!("#include \"{}\"\n", s.name))
        .collect()
}

/// What NVRTC produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeKind {
    /// PTX text for `compute_XX`, compiled for the device by the driver.
    Ptx,
    /// A cubin for exactly `sm_XX`.
    Cubin,
}

/// An NVRTC target: architecture (e.g. 90 for 9.0) and code kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Target {
    /// Compute capability × 10 + minor, e.g. 90.
    pub arch: u32,
    /// PTX or cubin.
    pub code: CodeKind,
}

impl Target {
    /// The `--gpu-architecture` value, e.g. `compute_90` or `sm_90`.
    pub fn arch_name(&self) -> String {
        match self.code {
            CodeKind::Ptx => format!("compute_{}", self.arch),
            CodeKind::Cubin => format!("sm_{}", self.arch),
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.arch_name())
    }
}

/// Picks the target for a device of compute capability `capability` under a
/// driver of CUDA version `driver`, with NVRTC `nvrtc` supporting `supported`
/// architectures (see the module documentation for the rule).
pub fn choose_target(
    capability: (i32, i32),
    driver: (i32, i32),
    nvrtc: (i32, i32),
    supported: &[u32],
) -> Result<Target, KernelError> {
    if nvrtc.0 > driver.0 {
        return Err(KernelError::NvrtcNewerThanDriver { nvrtc, driver });
    }
    let device_arch = (capability.0.max(0) * 10 + capability.1.clamp(0, 9)) as u32;
    let unsupported = |needs_exact| KernelError::UnsupportedDevice {
        capability,
        nvrtc,
        supported: supported.to_vec(),
        needs_exact,
    };
    if supported.contains(&device_arch) {
        return Ok(Target {
            arch: device_arch,
            code: CodeKind::Cubin,
        });
    }
    if nvrtc <= driver {
        let arch = supported
            .iter()
            .copied()
            .filter(|&a| a <= device_arch)
            .max()
            .ok_or_else(|| unsupported(false))?;
        Ok(Target {
            arch,
            code: CodeKind::Ptx,
        })
    } else {
        Err(unsupported(true))
    }
}

/// The target for compiling without a device (the CI check): PTX for the
/// highest supported architecture up to 9.0 (the H200), else the lowest.
pub fn host_target(supported: &[u32]) -> Option<Target> {
    let arch = supported
        .iter()
        .copied()
        .filter(|&a| a <= 90)
        .max()
        .or_else(|| supported.iter().copied().min())?;
    Some(Target {
        arch,
        code: CodeKind::Ptx,
    })
}

/// The loaded NVRTC: its version and architectures.
#[derive(Debug, Clone)]
pub struct NvrtcInfo {
    /// NVRTC's CUDA version (major, minor), e.g. (13, 0).
    pub version: (i32, i32),
    /// Supported architectures (compute capability × 10), ascending.
    pub archs: Vec<u32>,
}

/// Loads NVRTC (once per process) and reads its version and architectures.
///
/// Never panics: a missing library is [`KernelError::NvrtcUnavailable`].
pub fn nvrtc_info() -> Result<&'static NvrtcInfo, KernelError> {
    static INFO: OnceLock<Result<NvrtcInfo, String>> = OnceLock::new();
    INFO.get_or_init(load)
        .as_ref()
        .map_err(|reason| KernelError::NvrtcUnavailable {
            reason: reason.clone(),
        })
}

fn load() -> Result<NvrtcInfo, String> {
    if let Some(path) = std::env::var_os(LIBRARY_ENV).filter(|p| !p.is_empty()) {
        preload(&path)?;
    }
    // SAFETY: only probes whether one of cudarc's candidate names opens.
    if !unsafe { sys::is_culib_present() } {
        return Err(
            "libnvrtc was not found by the dynamic loader (cudarc tries libnvrtc.so, ..., \
             libnvrtc.so.13)"
                .to_string(),
        );
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present, so cudarc's loader will not panic; out pointers valid.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcVersion failed: {}", result_name(status)));
    }
    let mut n: c_int = 0;
    // SAFETY: as above.
    let status = unsafe { sys::nvrtcGetNumSupportedArchs(&mut n) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!(
            "nvrtcGetNumSupportedArchs failed: {}",
            result_name(status)
        ));
    }
    let mut archs = vec![0 as c_int; n.max(0) as usize];
    if !archs.is_empty() {
        // SAFETY: `archs` holds the number of entries NVRTC announced.
        let status = unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) };
        if status != sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(format!(
                "nvrtcGetSupportedArchs failed: {}",
                result_name(status)
            ));
        }
    }
    let mut archs: Vec<u32> = archs
        .into_iter()
        .filter(|&a| a > 0)
        .map(|a| a as u32)
        .collect();
    archs.sort_unstable();
    archs.dedup();
    Ok(NvrtcInfo {
        version: (major, minor),
        archs,
    })
}

/// Opens `path` globally and keeps it loaded, so that cudarc's later
/// `dlopen` by name returns this library (matched by its soname). NVRTC
/// itself opens `libnvrtc-builtins.so.X.Y` by name when it compiles, which
/// fails when that directory is not on the loader's path: the builtins
/// library beside `path` is opened globally first, for the same reason.
fn preload(path: &std::ffi::OsStr) -> Result<(), String> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    static KEPT: OnceLock<Vec<Library>> = OnceLock::new();
    let open = |p: &std::path::Path| {
        // SAFETY: loading NVRTC's libraries runs their initialisers, which
        // have no preconditions.
        // error-source: kept once per process as text (NvrtcUnavailable's reason).
        unsafe { Library::open(Some(p), RTLD_NOW | RTLD_GLOBAL) }
            .map_err(|e| format!("{LIBRARY_ENV}: {} does not load: {e}", p.display()))
    };
    let path = std::path::Path::new(path);
    let mut kept = Vec::new();
    if let Some(builtins) = builtins_beside(path) {
        kept.push(open(&builtins)?);
    }
    kept.push(open(path)?);
    let _ = KEPT.set(kept);
    Ok(())
}

/// `libnvrtc-builtins.so.X.Y` in the directory of `library` (not the
/// `.alt.` variant), if there is one.
fn builtins_beside(library: &std::path::Path) -> Option<std::path::PathBuf> {
    let dir = library.parent()?;
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnvrtc-builtins.so"))
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

fn result_name(status: sys::nvrtcResult) -> String {
    // SAFETY: NVRTC returns a static NUL-terminated string for any code.
    let p = unsafe { sys::nvrtcGetErrorString(status) };
    if p.is_null() {
        format!("{status:?}")
    } else {
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn check(call: &'static str, status: sys::nvrtcResult) -> Result<(), KernelError> {
    if status == sys::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(KernelError::Nvrtc {
            call,
            name: result_name(status),
            code: status as u32,
        })
    }
}

/// The kernels compiled for one target.
#[derive(Debug)]
pub struct CompiledKernels {
    /// The target.
    pub target: Target,
    /// PTX text (without a trailing NUL) or a cubin.
    pub image: Vec<u8>,
    /// NVRTC's log (warnings; empty when clean).
    pub log: String,
    /// The NVRTC version that compiled it.
    pub nvrtc_version: (i32, i32),
    /// Read from the disk cache ([`super::disk_cache`]) rather than
    /// compiled by this process.
    pub from_disk: bool,
}

impl CompiledKernels {
    /// The PTX text, for [`CodeKind::Ptx`].
    pub fn ptx(&self) -> Option<&str> {
        match self.target.code {
            CodeKind::Ptx => std::str::from_utf8(&self.image).ok(),
            CodeKind::Cubin => None,
        }
    }
}

/// The options passed to NVRTC for `target`.
pub fn compile_options(target: Target) -> Vec<String> {
    vec![
        format!("--gpu-architecture={}", target.arch_name()),
        "--std=c++17".to_string(),
        // Line tables only (no effect on the code): compute-sanitizer and
        // profilers can name source lines.
        "--generate-line-info".to_string(),
    ]
}

/// The kernels compiled for `target` with `config`: compiled once per
/// process, target and config, then shared.
pub fn compile(target: Target, config: KernelConfig) -> Result<Arc<CompiledKernels>, KernelError> {
    type Cache = HashMap<(Target, KernelConfig), Arc<CompiledKernels>>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    // The lock is held through the compile: concurrent first users wait
    // for one compile instead of each running their own.
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(done) = map.get(&(target, config)) {
        return Ok(done.clone());
    }
    let compiled = match disk_cache::CacheDir::from_env() {
        disk_cache::CacheDir::Dir(dir) => compile_through_disk(target, config, &dir)?,
        disk_cache::CacheDir::Off => compile_uncached(target, config)?,
    };
    let compiled = Arc::new(compiled);
    map.insert((target, config), compiled.clone());
    Ok(compiled)
}

struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram, destroyed once.
        unsafe {
            sys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

/// Compiles every source for `target` with `config` (no cache) and checks
/// that PTX holds every entry point.
pub fn compile_uncached(
    target: Target,
    config: KernelConfig,
) -> Result<CompiledKernels, KernelError> {
    compile_with_header(target, &generated_header(config))
}

/// [`compile_uncached`] with another text for the generated header (tests
/// use it to check that the layout asserts bite).
pub fn compile_with_header(target: Target, header: &str) -> Result<CompiledKernels, KernelError> {
    compile_program(target, header, &[])
}

/// ptxas's report (`--ptxas-options=-v`: registers, stack, spill bytes per
/// function) of the kernels compiled with `config` into a cubin for
/// `sm_{arch}`, read without a GPU; [`FunctionResources::find`] reads a
/// kernel's line of it.
pub fn ptxas_report(arch: u32, config: KernelConfig) -> Result<String, KernelError> {
    let target = Target {
        arch,
        code: CodeKind::Cubin,
    };
    let compiled = compile_program(target, &generated_header(config), &["--ptxas-options=-v"])?;
    Ok(compiled.log)
}

/// One function's resources in a [`ptxas_report`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionResources {
    /// Bytes of registers spilled to local memory.
    pub spill_stores: u32,
    /// Bytes read back from local memory.
    pub spill_loads: u32,
    /// Registers a thread uses.
    pub registers: u32,
}

impl FunctionResources {
    /// `function`'s figures in `report` (its "Function properties" line
    /// and the "Used N registers" line after it), if listed.
    pub fn find(report: &str, function: &str) -> Option<FunctionResources> {
        let mut lines = report.lines();
        let header = format!("Function properties for {function}");
        lines.find(|l| l.trim_end().ends_with(&header))?;
        let spills = lines.next()?;
        let number_before = |line: &str, what: &str| -> Option<u32> {
            let at = line.find(what)?;
            line[..at].split_whitespace().last()?.parse().ok()
        };
        let spill_stores = number_before(spills, "bytes spill stores")?;
        let spill_loads = number_before(spills, "bytes spill loads")?;
        let used = lines.next()?;
        let registers = number_before(used, "registers")?;
        Some(FunctionResources {
            spill_stores,
            spill_loads,
            registers,
        })
    }
}

fn compile_program(
    target: Target,
    header: &str,
    extra_options: &[&str],
) -> Result<CompiledKernels, KernelError> {
    let info = nvrtc_info()?;
    let cstring = |s: &str| CString::new(s).expect("kernel sources hold no NUL byte");
    let program = cstring(&program_text());
    let program_name = cstring(PROGRAM_NAME);
    let mut header_texts = vec![cstring(COMMON_HEADER.text), cstring(header)];
    let mut header_names = vec![cstring(COMMON_HEADER.name), cstring(GENERATED_HEADER)];
    for s in &SOURCES {
        header_texts.push(cstring(s.text));
        header_names.push(cstring(s.name));
    }
    let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|s| s.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|s| s.as_ptr()).collect();

    let mut raw = std::ptr::null_mut();
    // SAFETY: NVRTC is loaded (nvrtc_info); every pointer is a NUL-terminated
    // string alive for the call; the arrays have `len` entries.
    check("nvrtcCreateProgram", unsafe {
        sys::nvrtcCreateProgram(
            &mut raw,
            program.as_ptr(),
            program_name.as_ptr(),
            text_ptrs.len() as c_int,
            text_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    })?;
    let prog = Program(raw);

    let mut options: Vec<CString> = compile_options(target).iter().map(|o| cstring(o)).collect();
    options.extend(extra_options.iter().map(|o| cstring(o)));
    let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: the program is alive; the options are NUL-terminated strings.
    let status = unsafe {
        sys::nvrtcCompileProgram(prog.0, option_ptrs.len() as c_int, option_ptrs.as_ptr())
    };
    let log = program_log(&prog)?;
    if status == sys::nvrtcResult::NVRTC_ERROR_COMPILATION {
        return Err(KernelError::Compile {
            target: target.arch_name(),
            log,
        });
    }
    check("nvrtcCompileProgram", status)?;

    let mut size = 0usize;
    let image = match target.code {
        CodeKind::Ptx => {
            // SAFETY: compiled program; out pointer valid.
            check("nvrtcGetPTXSize", unsafe {
                sys::nvrtcGetPTXSize(prog.0, &mut size)
            })?;
            let mut buf = vec![0u8; size.max(1)];
            // SAFETY: `buf` holds the size NVRTC announced.
            check("nvrtcGetPTX", unsafe {
                sys::nvrtcGetPTX(prog.0, buf.as_mut_ptr().cast())
            })?;
            while buf.last() == Some(&0) {
                buf.pop();
            }
            buf
        }
        CodeKind::Cubin => {
            // SAFETY: compiled program; out pointer valid.
            check("nvrtcGetCUBINSize", unsafe {
                sys::nvrtcGetCUBINSize(prog.0, &mut size)
            })?;
            let mut buf = vec![0u8; size];
            if size > 0 {
                // SAFETY: `buf` holds the size NVRTC announced.
                check("nvrtcGetCUBIN", unsafe {
                    sys::nvrtcGetCUBIN(prog.0, buf.as_mut_ptr().cast())
                })?;
            }
            buf
        }
    };
    let compiled = CompiledKernels {
        target,
        image,
        log,
        nvrtc_version: info.version,
        from_disk: false,
    };
    check_entries(&compiled)?;
    Ok(compiled)
}

/// Every entry point is in PTX (a cubin's are checked when its module's
/// functions are looked up).
fn check_entries(compiled: &CompiledKernels) -> Result<(), KernelError> {
    if let Some(ptx) = compiled.ptx() {
        if let Some(entry) = entry_points().find(|e| !ptx_has_entry(ptx, e)) {
            return Err(KernelError::MissingEntry { entry });
        }
    }
    Ok(())
}

/// [`compile_uncached`] through the disk cache ([`disk_cache`]): an entry
/// made for exactly these sources, options, versions and target is loaded;
/// otherwise the compile's image is stored for the next process. A cache
/// that cannot be read or written only costs the compile.
fn compile_through_disk(
    target: Target,
    config: KernelConfig,
    dir: &std::path::Path,
) -> Result<CompiledKernels, KernelError> {
    let info = nvrtc_info()?;
    let Ok(driver) = crate::cuda::driver::driver_version() else {
        return compile_uncached(target, config);
    };
    // Every text NVRTC reads, in a fixed order.
    let (program, header) = (program_text(), generated_header(config));
    let mut texts = vec![program.as_str(), COMMON_HEADER.text, header.as_str()];
    texts.extend(SOURCES.iter().map(|s| s.text));
    let key = disk_cache::CacheKey::new(
        &texts,
        &compile_options(target),
        info.version,
        driver,
        &target.arch_name(),
    );
    if let Some(image) = disk_cache::load(dir, &key) {
        let cached = CompiledKernels {
            target,
            image,
            log: String::new(),
            nvrtc_version: info.version,
            from_disk: true,
        };
        if check_entries(&cached).is_ok() {
            return Ok(cached);
        }
    }
    let compiled = compile_uncached(target, config)?;
    if let Err(e) = disk_cache::store(dir, &key, &compiled.image) {
        tracing::debug!("kernel cache {} not written: {e}", dir.display());
    }
    Ok(compiled)
}

fn program_log(prog: &Program) -> Result<String, KernelError> {
    let mut size = 0usize;
    // SAFETY: the program is alive; out pointer valid.
    check("nvrtcGetProgramLogSize", unsafe {
        sys::nvrtcGetProgramLogSize(prog.0, &mut size)
    })?;
    if size <= 1 {
        return Ok(String::new());
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` holds the size NVRTC announced.
    check("nvrtcGetProgramLog", unsafe {
        sys::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr().cast())
    })?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).trim().to_string())
}

/// Whether PTX text declares the kernel `name` (`.entry name(`).
pub fn ptx_has_entry(ptx: &str, name: &str) -> bool {
    ptx.lines().any(|line| {
        let line = line.trim_start();
        let rest = line
            .strip_prefix(".visible .entry ")
            .or_else(|| line.strip_prefix(".entry "));
        rest.is_some_and(|r| {
            r.strip_prefix(name)
                .is_some_and(|after| after.starts_with('(') || after.trim().is_empty())
        })
    })
}

/// The `.version` (PTX ISA) line of PTX text, e.g. (9, 0).
pub fn ptx_isa_version(ptx: &str) -> Option<(u32, u32)> {
    let line = ptx
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(".version "))?;
    let (major, minor) = line[".version ".len()..].trim().split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARCHS_13_0: &[u32] = &[75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];

    #[test]
    fn cubin_for_an_architecture_nvrtc_has_exactly() {
        let t = choose_target((9, 0), (13, 0), (13, 0), ARCHS_13_0).unwrap();
        assert_eq!(
            t,
            Target {
                arch: 90,
                code: CodeKind::Cubin
            }
        );
        assert_eq!(t.arch_name(), "sm_90");
        // An older NVRTC under a newer driver: its cubins load too.
        let t = choose_target((9, 0), (13, 1), (12, 8), &[50, 75, 90]).unwrap();
        assert_eq!(t.code, CodeKind::Cubin);
    }

    #[test]
    fn ptx_when_nvrtc_lacks_the_devices_architecture() {
        let t = choose_target((9, 0), (13, 1), (12, 8), &[50, 75, 80]).unwrap();
        assert_eq!(
            t,
            Target {
                arch: 80,
                code: CodeKind::Ptx
            }
        );
        assert_eq!(t.arch_name(), "compute_80");
        // A device newer than NVRTC knows: the highest PTX it can make, JIT-ed forward.
        let t = choose_target((12, 1), (13, 0), (13, 0), &[75, 80, 90]).unwrap();
        assert_eq!(t.arch, 90);
        // Between listed archs: the highest below.
        let t = choose_target((8, 9), (13, 0), (13, 0), &[75, 80, 86, 90]).unwrap();
        assert_eq!(t.arch, 86);
    }

    #[test]
    fn cubin_when_nvrtc_has_a_newer_minor() {
        let t = choose_target((9, 0), (13, 0), (13, 2), ARCHS_13_0).unwrap();
        assert_eq!(
            t,
            Target {
                arch: 90,
                code: CodeKind::Cubin
            }
        );
        assert_eq!(t.arch_name(), "sm_90");
        // ... but only for an architecture NVRTC has exactly.
        let e = choose_target((12, 2), (13, 0), (13, 2), ARCHS_13_0).unwrap_err();
        assert!(matches!(
            e,
            KernelError::UnsupportedDevice {
                needs_exact: true,
                ..
            }
        ));
    }

    #[test]
    fn typed_errors_for_a_newer_major_or_an_old_device() {
        let e = choose_target((9, 0), (12, 8), (13, 0), ARCHS_13_0).unwrap_err();
        assert!(matches!(
            e,
            KernelError::NvrtcNewerThanDriver {
                nvrtc: (13, 0),
                driver: (12, 8)
            }
        ));
        assert!(e.to_string().contains("newer than the driver"));
        let e = choose_target((7, 0), (13, 0), (13, 0), ARCHS_13_0).unwrap_err();
        assert!(matches!(
            e,
            KernelError::UnsupportedDevice {
                needs_exact: false,
                ..
            }
        ));
        assert!(e.to_string().contains("7.0"));
    }

    #[test]
    fn host_target_prefers_hopper() {
        assert_eq!(host_target(ARCHS_13_0).unwrap().arch, 90);
        assert_eq!(host_target(&[100, 120]).unwrap().arch, 100);
        assert_eq!(host_target(&[]), None);
    }

    #[test]
    fn program_includes_every_source() {
        let p = program_text();
        for s in &SOURCES {
            assert!(p.contains(&format!("#include \"{}\"", s.name)));
            assert!(s.text.contains("#include \"common.cuh\""));
            for e in s.entries {
                assert!(s.text.contains("extern \"C\" __global__"));
                assert!(s.text.contains(e), "{} defines {e}", s.name);
            }
        }
        assert_eq!(entry_points().count(), 33);
        assert!(compile_options(host_target(ARCHS_13_0).unwrap())
            .contains(&"--gpu-architecture=compute_90".to_string()));
    }

    #[test]
    fn ptx_parsing() {
        let ptx = "//\n.version 9.0\n.target sm_90\n.address_size 64\n\n\t// .globl\tgds_decode_pages\n.visible .entry gds_decode_pages(\n\t.param .u64 p\n)\n";
        assert!(ptx_has_entry(ptx, "gds_decode_pages"));
        assert!(!ptx_has_entry(ptx, "gds_decode"));
        assert!(!ptx_has_entry(ptx, "gds_gather_status"));
        assert_eq!(ptx_isa_version(ptx), Some((9, 0)));
        assert_eq!(ptx_isa_version("nothing"), None);
    }
}
