//! [`KernelSet`]: the kernels compiled once per process and target, loaded
//! once per device, and the [`Launcher`] that queues their launches on a
//! stream. The launches themselves are in the `launch_*` files, one family
//! each.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::cuda::driver;
use crate::cuda::module::{Function, LaunchConfig, Module};
use crate::cuda::{Device, Stream};

use super::args::{Args, Kernel, Queue};
use super::error::KernelError;
use super::nvrtc::{self, CodeKind, Target};
use super::KernelConfig;

/// The decode kernels loaded on one device.
#[derive(Debug)]
pub struct KernelSet {
    device: Device,
    target: Target,
    config: KernelConfig,
    module: Module,
    /// One function per [`Kernel`], in the order of [`Kernel::ALL`].
    functions: Vec<Function>,
}

impl KernelSet {
    /// The kernels on `device`, compiled with `config`: compiled on the
    /// first call in the process per target and config, and loaded on the
    /// first call per device and config; later calls return the same set.
    pub fn get(device: Device, config: KernelConfig) -> Result<Arc<KernelSet>, KernelError> {
        type Sets = HashMap<(usize, KernelConfig), Arc<KernelSet>>;
        static SETS: OnceLock<Mutex<Sets>> = OnceLock::new();
        let sets = SETS.get_or_init(|| Mutex::new(HashMap::new()));
        let mut map = sets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(set) = map.get(&(device.ordinal(), config)) {
            return Ok(set.clone());
        }
        let set = Arc::new(Self::load(device, config)?);
        map.insert((device.ordinal(), config), set.clone());
        Ok(set)
    }

    fn load(device: Device, config: KernelConfig) -> Result<KernelSet, KernelError> {
        let info = nvrtc::nvrtc_info()?;
        let driver = driver::driver_version()?;
        let capability = device.compute_capability()?;
        let target = nvrtc::choose_target(capability, driver, info.version, &info.archs)?;
        let compiled = nvrtc::compile(target, config)?;
        // An image from the disk cache is never trusted: if the driver
        // refuses it or it lacks a kernel, this process compiles afresh.
        let (module, functions) = match load_module(device, &compiled) {
            Err(_) if compiled.from_disk => {
                let fresh = nvrtc::compile_uncached(target, config)?;
                load_module(device, &fresh)?
            }
            loaded => loaded?,
        };
        Ok(KernelSet {
            device,
            target,
            config,
            module,
            functions,
        })
    }

    /// The device the kernels are loaded on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The values the kernels were compiled with.
    pub fn config(&self) -> KernelConfig {
        self.config
    }

    /// What NVRTC compiled for (e.g. `compute_90`).
    pub fn target(&self) -> Target {
        self.target
    }

    /// The loaded module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The kernels as (name, function), e.g. to read their register counts.
    pub fn functions(&self) -> [(&'static str, &Function); 33] {
        Kernel::ALL.map(|k| (k.name(), self.function(k)))
    }

    fn function(&self, kernel: Kernel) -> &Function {
        // `load` took one function per kernel, in this order.
        &self.functions[kernel as usize]
    }

    /// A [`Launcher`] queueing on `stream`.
    ///
    /// # Safety
    /// Every launch queued through it must pass device addresses that are
    /// live allocations of the sizes its kernel reads and writes, laid out
    /// as the kernel expects, kept alive and unused by other work until
    /// `stream` has passed the launch.
    pub(super) unsafe fn on<'a>(&'a self, stream: &'a Stream) -> Launcher<'a> {
        Launcher { set: self, stream }
    }
}

/// Queues launches of a [`KernelSet`] on one stream (made by the unsafe
/// [`KernelSet::on`], whose caller answers for the addresses).
pub(super) struct Launcher<'a> {
    set: &'a KernelSet,
    stream: &'a Stream,
}

impl Queue for Launcher<'_> {
    fn queue(&mut self, config: LaunchConfig, mut args: Args) -> Result<(), KernelError> {
        let function = self.set.function(args.kernel());
        let mut params = args.params();
        // SAFETY: `params` points into `args`, alive and unchanged until the
        // call returns (the driver copies the values during it); each
        // `Args` is built for its kernel in a `launch_*` file with the kinds
        // of its C parameters, which `launch_tests.rs` checks against the
        // `extern "C"` signatures of `cuda/`; the addresses are live and
        // reserved for the launch, as whoever made this `Launcher` with
        // `KernelSet::on` promised.
        unsafe { function.launch(self.stream, config, &mut params)? };
        Ok(())
    }

    fn config(&self) -> KernelConfig {
        self.set.config
    }
}

/// `compiled`'s image loaded on `device`, with every kernel looked up (in
/// [`Kernel::ALL`]'s order).
fn load_module(
    device: Device,
    compiled: &nvrtc::CompiledKernels,
) -> Result<(Module, Vec<Function>), KernelError> {
    let module = match compiled.target.code {
        CodeKind::Ptx => {
            let ptx = compiled.ptx().ok_or(KernelError::Compile {
                target: compiled.target.arch_name(),
                log: "NVRTC's PTX is not UTF-8".to_string(),
            })?;
            Module::load_ptx(device, ptx)?
        }
        CodeKind::Cubin => Module::load_cubin(device, &compiled.image)?,
    };
    let functions = Kernel::ALL
        .iter()
        .map(|k| module.function(k.name()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((module, functions))
}
