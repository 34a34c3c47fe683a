//! cuFile (GPUDirect Storage), loaded at run time.
//!
//! This part only finds the library; the read path, the driver and stage-2
//! introspection build on it.

/// Library names tried in order: the name ldconfig and the pip package
/// `nvidia-cufile` provide (and KvikIO opens), then the development name.
pub const LIBRARY_NAMES: [&str; 2] = ["libcufile.so.0", "libcufile.so"];

/// Environment variable naming a libcufile to load instead.
pub const LIBRARY_ENV: &str = "GDSCAN_CUFILE_LIBRARY";

/// Candidate paths: the override first, then [`LIBRARY_NAMES`].
pub fn library_candidates() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(p) = std::env::var(LIBRARY_ENV) {
        if !p.is_empty() {
            out.push(p);
        }
    }
    out.extend(LIBRARY_NAMES.iter().map(|s| s.to_string()));
    out
}

/// The first candidate that loads, or why none did.
pub fn find_library() -> Result<String, String> {
    let candidates = library_candidates();
    for name in &candidates {
        // SAFETY: loading libcufile runs its initialisers, which have no
        // preconditions; the handle is dropped at once.
        if unsafe { libloading::Library::new(name) }.is_ok() {
            return Ok(name.clone());
        }
    }
    Err(format!(
        "libcufile not found (tried {})",
        candidates.join(", ")
    ))
}

/// Why compat mode OFF cannot be honoured on this build and machine.
pub fn unavailable_reason() -> String {
    match find_library() {
        Err(missing) => missing,
        Ok(name) => format!("{name} loads, but gdscan's cuFile read path is not built yet"),
    }
}
