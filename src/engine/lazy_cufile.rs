//! A handle's cuFile state, settled on its first device request: cuFile's
//! driver opened (once per process) and the file registered, or why not.
//! A handle only ever read into host memory touches neither (a registration
//! costs milliseconds, the driver's opening more).

use std::sync::{LazyLock, OnceLock};

use super::error::Result;
use super::open_file::{FileShared, OpenMode};
use super::route::CuFileAvailability;
use crate::config::{CompatMode, Settings};
use crate::cufile::driver::{self, gds_stage2};
use crate::cufile::CuFileError;
use crate::cufile::CuFileHandle;

/// Whether cuFile serves one file: known at open under compat ON,
/// otherwise decided on first use.
#[derive(Debug)]
pub(crate) struct LazyCuFile {
    availability: OnceLock<CuFileAvailability>,
}

impl LazyCuFile {
    /// Nothing decided yet, or `Disabled` from the start under compat ON.
    pub(crate) fn new(settings: &Settings) -> Self {
        let availability = OnceLock::new();
        if settings.compat_mode == CompatMode::On {
            let _ = availability.set(CuFileAvailability::Disabled);
        } else if let Some(why) = compat_only_unopened(settings) {
            let _ = availability.set(CuFileAvailability::CompatPathOnly(why.clone()));
        }
        LazyCuFile { availability }
    }

    /// Whether cuFile serves the file, or why not. The first call opens
    /// cuFile's driver (once per process) and registers the file, keeping
    /// the registration in `file`.
    ///
    /// Under AUTO on a host whose kernel has no nvidia-fs module (GDS only
    /// through P2PDMA, rarely), the driver opens in the background instead
    /// and, until it is open, the answer is [`OPENING`] (the bounce route,
    /// not kept): a small scan never waits the second the opening takes.
    pub(crate) fn get(
        &self,
        settings: &Settings,
        file: &FileShared,
        mode: OpenMode,
    ) -> &CuFileAvailability {
        if let Some(settled) = self.availability.get() {
            return settled;
        }
        if still_opening(settings) {
            return &OPENING;
        }
        self.settled(settings, file, mode)
    }

    /// [`LazyCuFile::get`], waiting for cuFile's driver where it is still
    /// opening (for a caller that needs the outcome now: cuFile's counters
    /// around a read).
    pub(crate) fn settled(
        &self,
        settings: &Settings,
        file: &FileShared,
        mode: OpenMode,
    ) -> &CuFileAvailability {
        self.availability.get_or_init(|| {
            match open_driver(settings) {
                Ok(Some(unavailable)) => return unavailable,
                Err(refused) => return CuFileAvailability::Unavailable(refused.to_string()),
                Ok(None) => {}
            }
            // AUTO takes cuFile only when stage 2 will be GDS (route.rs).
            if settings.compat_mode == CompatMode::Auto {
                if let Some(Err(why)) = crate::cufile::driver::opened().map(gds_stage2) {
                    return CuFileAvailability::CompatPathOnly(why);
                }
            }
            match CuFileHandle::register(
                std::path::Path::new(&file.path),
                mode.can_read(),
                mode.can_write(),
            ) {
                Ok(handle) => {
                    let _ = file.cufile.set(handle);
                    CuFileAvailability::Ready
                }
                Err(why) => CuFileAvailability::Unavailable(why),
            }
        })
    }

    /// [`LazyCuFile::get`] for a device request: a cuFile parameter that
    /// cuFile refuses is an error, not a fallback (the driver's outcome is
    /// cached, so asking again costs nothing).
    pub(crate) fn for_request(
        &self,
        settings: &Settings,
        file: &FileShared,
        mode: OpenMode,
    ) -> Result<&CuFileAvailability> {
        if self.availability.get().is_none() && still_opening(settings) {
            return Ok(&OPENING);
        }
        if matches!(
            self.availability.get(),
            None | Some(CuFileAvailability::Unavailable(_))
        ) {
            open_driver(settings)?;
        }
        Ok(self.get(settings, file, mode))
    }
}

/// What a handle answers under AUTO while cuFile's driver opens in the
/// background (see [`LazyCuFile::get`]).
pub(crate) static OPENING: LazyLock<CuFileAvailability> = LazyLock::new(|| {
    CuFileAvailability::CompatPathOnly(
        "cuFile's driver is still opening in the background (no nvidia-fs module is loaded)"
            .to_string(),
    )
});

/// Under AUTO, why cuFile is not opened at all, where it could only serve
/// reads through its POSIX compat path: the kernel lists no nvidia-fs
/// module and cuFile's configuration does not turn on PCI P2PDMA. (Opening
/// the driver there takes about a second and the process's exit waits for
/// it; AUTO would take the bounce route either way.) Decided once per
/// process.
fn compat_only_unopened(settings: &Settings) -> Option<&'static String> {
    static WHY: OnceLock<Option<String>> = OnceLock::new();
    if settings.compat_mode != CompatMode::Auto || driver::tried() {
        return None;
    }
    WHY.get_or_init(|| {
        // Without cuFile's library the usual path says so ("not found").
        let library = crate::cufile::library::api().is_ok();
        (library && !driver::nvfs_module_loaded() && !driver::p2pdma_configured()).then(|| {
            "no nvidia-fs module is loaded and cuFile's configuration does not turn on PCI P2PDMA \
             (properties.use_pci_p2pdma): cuFile could only run its POSIX compat path, so it is not opened"
                .to_string()
        })
    })
    .as_ref()
}

/// Whether cuFile's driver is opening in the background for AUTO (started
/// here when it is not yet): AUTO with cuFile's library and a GPU present,
/// no nvidia-fs module loaded and the driver's outcome not yet known.
fn still_opening(settings: &Settings) -> bool {
    if settings.compat_mode != CompatMode::Auto
        || driver::tried()
        || driver::nvfs_module_loaded()
        || crate::cufile::library::api().is_err()
        || crate::cuda::driver::ensure().is_err()
    {
        return false;
    }
    driver::open_in_background(&settings.cufile);
    !driver::tried()
}

/// Opens cuFile's driver (once per process; later calls get the first
/// outcome): None when it is open (the handle may register its file), or
/// why cuFile cannot serve files. A cuFile parameter that cuFile refuses is
/// an error, not a fallback. Compat ON never gets here: its handles are
/// `Disabled` from their opening.
fn open_driver(settings: &Settings) -> Result<Option<CuFileAvailability>> {
    match crate::cufile::driver::open(&settings.cufile) {
        Err(e @ CuFileError::ParamRefused { .. }) => Err(e.into()),
        Err(CuFileError::Unavailable(why)) => Ok(Some(CuFileAvailability::Unavailable(why))),
        // The reason shown in reports and route decisions.
        Err(other) => Ok(Some(CuFileAvailability::Unavailable(other.to_string()))),
        Ok(_) => Ok(None),
    }
}
