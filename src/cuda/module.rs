//! Kernels: loading compiled code into a module, finding its functions and
//! launching them on a [`Stream`].
//!
//! A [`Module`] owns a `CUmodule` loaded with `cuModuleLoadDataEx` (PTX text,
//! which the driver compiles for the device, or a cubin) with the device's
//! context bound; the driver's error log comes back in
//! [`ModuleError::Load`]. [`Module::function`] looks an entry point up by
//! name; [`Function::launch`] queues it with `cuLaunchKernel`. The module is
//! unloaded when the last [`Module`] clone and the last [`Function`] taken from
//! it are dropped.
//!
//! This file also adds two small driver calls the kernels need on types of
//! this layer: [`Device::compute_capability`] and [`Stream::memset_async`].

use std::ffi::{c_void, CString};
use std::sync::Arc;

use cudarc::driver::sys;

use super::device::Device;
use super::driver::{check, error_name};
use super::stream::Stream;

/// Bytes of the driver's JIT error log kept for [`ModuleError::Load`].
const JIT_LOG_BYTES: usize = 16 * 1024;

/// Why loading a module, finding a function or launching one failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModuleError {
    /// The driver refused the image (PTX or cubin): bad code, a PTX ISA newer
    /// than the driver, an architecture the device does not have.
    #[error(
        "cuModuleLoadDataEx failed on device {device}: {name} ({code}){}",
        log_suffix(log)
    )]
    Load {
        /// The device ordinal.
        device: usize,
        /// CUDA error name, e.g. CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
        name: String,
        /// CUDA error number.
        code: i32,
        /// The driver's JIT error log (may be empty).
        log: String,
    },

    /// The image is empty, or PTX text holds a NUL byte.
    #[error("invalid module image: {0}")]
    InvalidImage(&'static str),

    /// No entry point of that name in the module.
    #[error("the module has no function {function:?} ({name}, {code})")]
    NoSuchFunction {
        /// The name asked for.
        function: String,
        /// CUDA error name (CUDA_ERROR_NOT_FOUND).
        name: String,
        /// CUDA error number.
        code: i32,
    },

    /// A launch configuration the hardware cannot run (zero or too large
    /// dimensions), caught before the driver is asked.
    #[error("invalid launch configuration for {function}: {reason}")]
    InvalidConfig {
        /// The function.
        function: String,
        /// What is wrong.
        reason: String,
    },

    /// The stream belongs to another device than the module.
    #[error(
        "{function} is loaded on device {module_device}, the stream is on device {stream_device}"
    )]
    WrongDevice {
        /// The function.
        function: String,
        /// The module's device.
        module_device: usize,
        /// The stream's device.
        stream_device: usize,
    },

    /// `cuLaunchKernel` failed.
    #[error("launching {function} failed: {name} ({code})")]
    Launch {
        /// The function.
        function: String,
        /// CUDA error name.
        name: String,
        /// CUDA error number.
        code: i32,
    },

    /// Another driver call failed (binding the context, an attribute query).
    #[error(transparent)]
    Driver(#[from] super::CudaError),
}

fn log_suffix(log: &str) -> String {
    if log.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", log.trim())
    }
}

#[derive(Debug)]
struct Loaded {
    device: Device,
    raw: sys::CUmodule,
}

// SAFETY: a CUmodule handle may be used from any thread; the driver is thread-safe.
unsafe impl Send for Loaded {}
// SAFETY: the handle is immutable once loaded.
unsafe impl Sync for Loaded {}

impl Drop for Loaded {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: loaded by us and unloaded once, when no Function uses it.
            unsafe {
                sys::cuModuleUnload(self.raw);
            }
        }
    }
}

/// A loaded module (cheap to clone; unloaded when the last clone and the
/// last [`Function`] from it are dropped).
#[derive(Debug, Clone)]
pub struct Module {
    inner: Arc<Loaded>,
}

impl Module {
    /// Loads PTX text on `device` (the driver compiles it for the device).
    pub fn load_ptx(device: Device, ptx: &str) -> Result<Module, ModuleError> {
        if ptx.is_empty() {
            return Err(ModuleError::InvalidImage("empty PTX"));
        }
        let text =
            CString::new(ptx).map_err(|_| ModuleError::InvalidImage("PTX holds a NUL byte"))?;
        Self::load_raw(device, text.as_ptr().cast())
    }

    /// Loads a binary image (a cubin, or a fatbin) on `device`.
    pub fn load_cubin(device: Device, image: &[u8]) -> Result<Module, ModuleError> {
        if image.is_empty() {
            return Err(ModuleError::InvalidImage("empty cubin"));
        }
        // The driver reads the ELF header for the size; keep the bytes in an
        // 8-byte aligned copy, as it expects.
        let mut aligned = vec![0u64; image.len().div_ceil(8)];
        // SAFETY: `aligned` holds at least `image.len()` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                image.as_ptr(),
                aligned.as_mut_ptr().cast::<u8>(),
                image.len(),
            );
        }
        Self::load_raw(device, aligned.as_ptr().cast())
    }

    fn load_raw(device: Device, image: *const c_void) -> Result<Module, ModuleError> {
        device.bind()?;
        let mut log = vec![0u8; JIT_LOG_BYTES];
        let mut options = [
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // The driver takes option values as pointer-sized words.
        let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), JIT_LOG_BYTES as *mut c_void];
        let mut raw = std::ptr::null_mut();
        // SAFETY: context bound; `image` is valid PTX text (NUL-terminated) or
        // an aligned binary image for the call's duration; the log buffer has
        // the size given.
        let status = unsafe {
            sys::cuModuleLoadDataEx(
                &mut raw,
                image,
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if status != sys::CUresult::CUDA_SUCCESS {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            return Err(ModuleError::Load {
                device: device.ordinal(),
                name: error_name(status),
                code: status as i32,
                log: String::from_utf8_lossy(&log[..end]).into_owned(),
            });
        }
        Ok(Module {
            inner: Arc::new(Loaded { device, raw }),
        })
    }

    /// The device the module is loaded on.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// The entry point `name` (an `extern "C"` kernel's name).
    pub fn function(&self, name: &str) -> Result<Function, ModuleError> {
        let c_name = CString::new(name).map_err(|_| ModuleError::NoSuchFunction {
            function: name.to_string(),
            name: "invalid name".to_string(),
            code: 0,
        })?;
        self.inner.device.bind()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: context bound; the module is loaded; `c_name` is NUL-terminated.
        let status = unsafe { sys::cuModuleGetFunction(&mut raw, self.inner.raw, c_name.as_ptr()) };
        if status != sys::CUresult::CUDA_SUCCESS {
            return Err(ModuleError::NoSuchFunction {
                function: name.to_string(),
                name: error_name(status),
                code: status as i32,
            });
        }
        Ok(Function {
            module: self.clone(),
            raw,
            name: name.to_string(),
        })
    }
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory bytes per block.
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// A one-dimensional launch of `blocks` blocks of `threads` threads.
    pub fn linear(blocks: u32, threads: u32) -> LaunchConfig {
        LaunchConfig {
            grid: (blocks, 1, 1),
            block: (threads, 1, 1),
            shared_bytes: 0,
        }
    }

    /// Checks the limits every CUDA device shares (no zero dimension, at
    /// most 1024 threads per block, grid y/z at most 65535, block z at most
    /// 64); the device checks its own (shared memory) at launch.
    pub fn validate(&self) -> Result<(), String> {
        let (gx, gy, gz) = self.grid;
        let (bx, by, bz) = self.block;
        if gx == 0 || gy == 0 || gz == 0 {
            return Err(format!("empty grid {:?}", self.grid));
        }
        if bx == 0 || by == 0 || bz == 0 {
            return Err(format!("empty block {:?}", self.block));
        }
        if gx > i32::MAX as u32 || gy > 65535 || gz > 65535 {
            return Err(format!(
                "grid {:?} exceeds (2^31-1, 65535, 65535)",
                self.grid
            ));
        }
        if bx > 1024 || by > 1024 || bz > 64 || (bx as u64) * (by as u64) * (bz as u64) > 1024 {
            return Err(format!("block {:?} exceeds 1024 threads", self.block));
        }
        Ok(())
    }
}

/// A kernel entry point of a loaded [`Module`] (keeps the module loaded).
#[derive(Debug, Clone)]
pub struct Function {
    module: Module,
    raw: sys::CUfunction,
    name: String,
}

// SAFETY: a CUfunction handle may be used from any thread; the driver is thread-safe.
unsafe impl Send for Function {}
// SAFETY: the handle is immutable.
unsafe impl Sync for Function {}

impl Function {
    /// The entry point's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device its module is loaded on.
    pub fn device(&self) -> Device {
        self.module.device()
    }

    /// Registers per thread, as compiled for the device.
    pub fn registers(&self) -> Result<i32, ModuleError> {
        self.attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)
    }

    /// Static shared memory bytes per block.
    pub fn static_shared_bytes(&self) -> Result<i32, ModuleError> {
        self.attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
    }

    /// Local memory (stack and spills) bytes per thread.
    pub fn local_bytes(&self) -> Result<i32, ModuleError> {
        self.attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
    }

    fn attribute(&self, attribute: sys::CUfunction_attribute) -> Result<i32, ModuleError> {
        self.module.device().bind()?;
        let mut value = 0;
        // SAFETY: context bound; the function's module is loaded; out pointer valid.
        check("cuFuncGetAttribute", unsafe {
            sys::cuFuncGetAttribute(&mut value, attribute, self.raw)
        })?;
        Ok(value)
    }

    /// Queues the kernel on `stream`.
    ///
    /// `params` holds one pointer per kernel parameter, in order, each to a
    /// value of exactly the parameter's C type (e.g. a `u64` for a device
    /// pointer, a `u32` for an `unsigned int`); the driver copies the values
    /// during this call, so they only need to live until it returns.
    ///
    /// # Safety
    /// The number and types of `params` must match the kernel's signature, and
    /// every device address passed must stay valid, and be used as the kernel
    /// expects, until the launch has completed on the stream.
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        config: LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<(), ModuleError> {
        config
            .validate()
            .map_err(|reason| ModuleError::InvalidConfig {
                function: self.name.clone(),
                reason,
            })?;
        let device = self.module.device();
        if stream.device() != device {
            return Err(ModuleError::WrongDevice {
                function: self.name.clone(),
                module_device: device.ordinal(),
                stream_device: stream.device().ordinal(),
            });
        }
        device.bind()?;
        let (gx, gy, gz) = config.grid;
        let (bx, by, bz) = config.block;
        let params_ptr = if params.is_empty() {
            std::ptr::null_mut()
        } else {
            params.as_mut_ptr()
        };
        let status = sys::cuLaunchKernel(
            self.raw,
            gx,
            gy,
            gz,
            bx,
            by,
            bz,
            config.shared_bytes,
            stream.raw(),
            params_ptr,
            std::ptr::null_mut(),
        );
        if status != sys::CUresult::CUDA_SUCCESS {
            return Err(ModuleError::Launch {
                function: self.name.clone(),
                name: error_name(status),
                code: status as i32,
            });
        }
        Ok(())
    }
}

impl Device {
    /// The device's compute capability as (major, minor), e.g. (9, 0) for an H200.
    pub fn compute_capability(&self) -> Result<(i32, i32), super::CudaError> {
        super::driver::ensure()?;
        let mut dev = 0;
        // SAFETY: driver initialised; the ordinal was checked when the Device was made.
        check("cuDeviceGet", unsafe {
            sys::cuDeviceGet(&mut dev, self.ordinal() as i32)
        })?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: `dev` is valid; out pointers valid.
        check("cuDeviceGetAttribute", unsafe {
            sys::cuDeviceGetAttribute(
                &mut major,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                dev,
            )
        })?;
        // SAFETY: as above.
        check("cuDeviceGetAttribute", unsafe {
            sys::cuDeviceGetAttribute(
                &mut minor,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                dev,
            )
        })?;
        Ok((major, minor))
    }
}

impl Stream {
    /// Queues setting `len` bytes at device address `dst` to `value`.
    ///
    /// # Safety
    /// `dst` must be a device allocation of at least `len` bytes on this
    /// stream's device, not used by other work until the memset completes.
    pub unsafe fn memset_async(
        &self,
        dst: u64,
        value: u8,
        len: usize,
    ) -> Result<(), super::CudaError> {
        if len == 0 {
            return Ok(());
        }
        check(
            "cuMemsetD8Async",
            sys::cuMemsetD8Async(dst, value, len, self.raw()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_config_limits() {
        assert!(LaunchConfig::linear(1, 256).validate().is_ok());
        assert!(LaunchConfig::linear(i32::MAX as u32, 1024)
            .validate()
            .is_ok());
        assert!(LaunchConfig::linear(0, 256).validate().is_err());
        assert!(LaunchConfig::linear(1, 0).validate().is_err());
        assert!(LaunchConfig::linear(1, 1025).validate().is_err());
        assert!(LaunchConfig::linear(u32::MAX, 32).validate().is_err());
        let mut c = LaunchConfig::linear(1, 32);
        c.block = (32, 32, 2);
        assert!(c.validate().is_err());
        c.block = (8, 8, 8);
        assert!(c.validate().is_ok());
        c.grid = (1, 65536, 1);
        assert!(c.validate().is_err());
    }
}
