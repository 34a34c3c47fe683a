//! A CUDA device and its primary context.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use cudarc::driver::sys;

use super::driver::{check, device_count, ensure};
use super::error::{CudaError, Result};
use super::numa::{placement_under, NumaPlacement};

/// A CUDA device with its retained primary context.
///
/// Cheap to copy. The primary context is retained once per process and kept
/// for the process's lifetime (as the CUDA runtime does), so handles never
/// dangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    ordinal: usize,
    ctx: sys::CUcontext,
}

// SAFETY: a CUcontext handle may be used from any thread; the driver is thread-safe.
unsafe impl Send for Device {}
// SAFETY: see above; the handle is immutable.
unsafe impl Sync for Device {}

struct ContextPtr(sys::CUcontext);
// SAFETY: context handles are plain driver handles, usable from any thread.
unsafe impl Send for ContextPtr {}

fn contexts() -> &'static Mutex<HashMap<usize, ContextPtr>> {
    static CONTEXTS: OnceLock<Mutex<HashMap<usize, ContextPtr>>> = OnceLock::new();
    CONTEXTS.get_or_init(|| Mutex::new(HashMap::new()))
}

impl Device {
    /// Opens device `ordinal` (retaining its primary context on first use).
    pub fn get(ordinal: usize) -> Result<Device> {
        ensure()?;
        let count = device_count()?;
        if count == 0 {
            return Err(CudaError::Unavailable(
                "the driver reports no CUDA devices".to_string(),
            ));
        }
        if ordinal >= count {
            return Err(CudaError::NoSuchDevice {
                device: ordinal,
                count,
            });
        }
        let mut map = contexts().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(ctx) = map.get(&ordinal) {
            return Ok(Device {
                ordinal,
                ctx: ctx.0,
            });
        }
        let mut dev = 0;
        // SAFETY: driver initialised, ordinal checked above.
        check("cuDeviceGet", unsafe {
            sys::cuDeviceGet(&mut dev, ordinal as i32)
        })?;
        let mut ctx = std::ptr::null_mut();
        // SAFETY: `dev` came from cuDeviceGet.
        check("cuDevicePrimaryCtxRetain", unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut ctx, dev)
        })?;
        map.insert(ordinal, ContextPtr(ctx));
        Ok(Device { ordinal, ctx })
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Makes this device's context current on the calling thread.
    pub fn bind(&self) -> Result<()> {
        // SAFETY: the context is retained for the process's lifetime.
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(self.ctx) })
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> Result<String> {
        let mut buf = [0 as std::ffi::c_char; 256];
        let mut dev = 0;
        // SAFETY: driver initialised, ordinal valid.
        check("cuDeviceGet", unsafe {
            sys::cuDeviceGet(&mut dev, self.ordinal as i32)
        })?;
        // SAFETY: `buf` holds 256 bytes, as passed.
        check("cuDeviceGetName", unsafe {
            sys::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as i32, dev)
        })?;
        // SAFETY: the driver writes a NUL-terminated string into `buf`.
        let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        Ok(name.to_string_lossy().into_owned())
    }

    /// The device's PCI bus id as the driver writes it (e.g. `0000:3B:00.0`).
    pub fn pci_bus_id(&self) -> Result<String> {
        let mut buf = [0 as std::ffi::c_char; 64];
        let mut dev = 0;
        // SAFETY: driver initialised, ordinal valid.
        check("cuDeviceGet", unsafe {
            sys::cuDeviceGet(&mut dev, self.ordinal as i32)
        })?;
        // SAFETY: `buf` holds 64 bytes, as passed.
        check("cuDeviceGetPCIBusId", unsafe {
            sys::cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as i32, dev)
        })?;
        // SAFETY: the driver writes a NUL-terminated string into `buf`.
        let id = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        Ok(id.to_string_lossy().into_owned())
    }

    /// Where the device sits: its PCI bus id, its NUMA node and the host's
    /// node count, from sysfs (read once per device and kept).
    pub fn numa(&self) -> Result<NumaPlacement> {
        static PLACEMENTS: OnceLock<Mutex<HashMap<usize, NumaPlacement>>> = OnceLock::new();
        let map = PLACEMENTS.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(p) = map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&self.ordinal)
        {
            return Ok(p.clone());
        }
        let placement = placement_under(std::path::Path::new("/sys"), &self.pci_bus_id()?);
        map.lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(self.ordinal, placement.clone());
        Ok(placement)
    }

    /// Free and total device memory in bytes.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.bind()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: context bound; out pointers valid.
        check("cuMemGetInfo", unsafe {
            sys::cuMemGetInfo_v2(&mut free, &mut total)
        })?;
        Ok((free, total))
    }
}
