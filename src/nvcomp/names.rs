//! What nvCOMP is called and where it is found: the names the loader
//! tries, the variable that overrides them, the pip package that brings
//! the library, and the status type of its C API.

use std::ffi::c_int;

/// Library names tried in order when [`LIBRARY_ENV`] is not set: the name
/// the pip wheel ships (with its major version), then the development name.
pub const LIBRARY_NAMES: [&str; 2] = ["libnvcomp.so.6", "libnvcomp.so"];

/// Environment variable naming the libnvcomp to load. When it is set (and
/// not empty) it is the only candidate: a wrong path is an error, never a
/// silent fall back to another library.
pub const LIBRARY_ENV: &str = "GDSCAN_NVCOMP_LIBRARY";

/// The pip requirement that provides a libnvcomp gdscan is written against.
pub const PIP_REQUIREMENT: &str = "nvidia-libnvcomp-cu13==6.0.0.12";

/// Where the library sits inside that wheel (and inside `site-packages`
/// once it is installed).
pub(crate) const WHEEL_LIBRARY_PATH: &str = "nvidia/libnvcomp/lib64/libnvcomp.so.6";

/// `nvcompStatus_t` as a plain integer.
pub type RawStatus = c_int;
