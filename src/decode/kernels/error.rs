//! Errors of compiling, loading and launching the decode kernels.

use crate::cuda::module::ModuleError;

/// Why the kernels cannot be compiled, loaded or launched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// libnvrtc cannot be loaded (the runtime compiler the kernels need).
    #[error(
        "NVRTC is not available: {reason}; install it (pip install 'nvidia-cuda-nvrtc==13.0.*') and put \
         its lib directory (site-packages/nvidia/cu13/lib) on LD_LIBRARY_PATH, or name the library in \
         GDSCAN_NVRTC_LIBRARY"
    )]
    NvrtcUnavailable {
        /// What is missing.
        reason: String,
    },

    /// NVRTC is of a newer CUDA major version than the driver: neither its
    /// PTX nor its cubins load there.
    #[error(
        "NVRTC {}.{} is newer than the driver's CUDA {}.{}: its code cannot load; use an NVRTC of CUDA {}.x \
         at most (GDSCAN_NVRTC_LIBRARY or LD_LIBRARY_PATH)",
        nvrtc.0, nvrtc.1, driver.0, driver.1, driver.0
    )]
    NvrtcNewerThanDriver {
        /// NVRTC's CUDA version (major, minor).
        nvrtc: (i32, i32),
        /// The driver's CUDA version (major, minor).
        driver: (i32, i32),
    },

    /// No architecture NVRTC can compile for runs on the device.
    #[error(
        "NVRTC {}.{} cannot compile for compute capability {}.{}{}: it supports {supported:?}",
        nvrtc.0, nvrtc.1, capability.0, capability.1,
        if *needs_exact { " (a cubin for exactly this architecture is needed, the driver being older than NVRTC)" } else { "" }
    )]
    UnsupportedDevice {
        /// The device's compute capability.
        capability: (i32, i32),
        /// NVRTC's version.
        nvrtc: (i32, i32),
        /// The architectures NVRTC supports (e.g. 75, 80, ..., 120).
        supported: Vec<u32>,
        /// Whether only an exact cubin would do (NVRTC newer than the driver).
        needs_exact: bool,
    },

    /// An NVRTC call failed (other than the compile itself).
    #[error("NVRTC call {call} failed: {name} ({code})")]
    Nvrtc {
        /// The function.
        call: &'static str,
        /// NVRTC's error string.
        name: String,
        /// NVRTC's error number.
        code: u32,
    },

    /// The kernel sources did not compile.
    #[error("the decode kernels did not compile for {target}: {log}")]
    Compile {
        /// The target, e.g. compute_90.
        target: String,
        /// NVRTC's log.
        log: String,
    },

    /// The compiled code lacks an entry point the launch wrappers need.
    #[error("the compiled kernels lack the entry point {entry}")]
    MissingEntry {
        /// The kernel's name.
        entry: &'static str,
    },

    /// A task count or size does not fit the kernels' 32-bit fields.
    #[error("{what}: {value} does not fit the kernels' 32-bit fields")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its value.
        value: u64,
    },

    /// Loading the module, finding a function or launching failed.
    #[error(transparent)]
    Module(#[from] ModuleError),

    /// A CUDA driver call failed (version, device attributes).
    #[error(transparent)]
    Cuda(#[from] crate::cuda::CudaError),
}
