//! cuFile (GPUDirect Storage), loaded at run time.
//!
//! Two stages decide how a device read travels. Stage 1 is gdscan's
//! (`crate::engine::route`): cuFile or POSIX. Stage 2 is cuFile's own:
//! nvidia-fs (real GDS) or its internal POSIX compat path. This module makes
//! stage 2 visible: the driver's properties ([`driver`]), the effective
//! cufile.json parameters and where each came from ([`params`]), and
//! cuFile's own counters after the fact ([`stats`]).
//!
//! Layers: [`library`] (loading, raw function table) → `status` (codes to
//! typed errors) → [`driver`], `handle`, `buffer`, [`params`], [`stats`].

mod buffer;
pub mod driver;
mod error;
mod handle;
pub mod library;
pub mod params;
pub mod stats;
pub(crate) mod status;

pub use crate::config::CuFileOverrides;
pub use buffer::BufferRegistration;
pub use driver::DriverInfo;
pub use error::{ConfigFileError, CuFileError, ParamRefusal};
pub use handle::CuFileHandle;
pub use stats::CuFileStats;

/// The first candidate library that loads, or why none did.
pub fn find_library() -> Result<String, String> {
    library::api().map(|a| a.path.clone())
}
