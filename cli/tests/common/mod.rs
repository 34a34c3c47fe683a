//! Files the tests write themselves (shared with the library's tests), the
//! servers the store tests run against and the scan helpers they share.

#![allow(dead_code)]

pub mod moto;
pub mod range_server;
pub mod scan;

#[path = "../../../tests/common/mod.rs"]
mod files;

pub use files::*;

/// The `.parquet` files of `fuzz/findings/{dir}`, sorted.
pub fn findings(dir: &str) -> Vec<std::path::PathBuf> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/findings")
        .join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    files
}
