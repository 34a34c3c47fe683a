//! Benchmark input files: deterministic pseudo-random bytes, and page-cache warming.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use crate::error::{Error, Result};

/// Fills `buf` with deterministic pseudo-random bytes (xorshift64*), seeded
/// by `seed`; cheap enough to generate gigabytes.
pub fn fill_pseudo_random(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let v = x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

/// Makes sure `path` holds exactly `size` bytes, writing pseudo-random data
/// if it is missing or of another size. Returns whether it was (re)written.
pub fn ensure_file(path: &Path, size: u64) -> Result<bool> {
    let shown = path.display().to_string();
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_file() && meta.len() == size {
            return Ok(false);
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(&dir.display().to_string(), "create folder", e))?;
    }
    let tmp = path.with_extension("partial");
    let mut f = File::create(&tmp).map_err(|e| Error::from_open(&shown, e))?;
    let mut buf = vec![0u8; 64 << 20];
    let mut written = 0u64;
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    while written < size {
        let n = (size - written).min(buf.len() as u64) as usize;
        fill_pseudo_random(&mut buf[..n], seed);
        seed = seed.wrapping_add(0x9E37_79B9);
        f.write_all(&buf[..n])
            .map_err(|e| Error::io(&shown, "write", e))?;
        written += n as u64;
    }
    f.sync_all().map_err(|e| Error::io(&shown, "fsync", e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(&shown, "rename", e))?;
    Ok(true)
}

/// Reads the whole file once (into the page cache) and returns its CRC-32.
pub fn warm_and_checksum(path: &Path) -> Result<u32> {
    let shown = path.display().to_string();
    let mut f = File::open(path).map_err(|e| Error::from_open(&shown, e))?;
    let mut buf = vec![0u8; 16 << 20];
    let mut hasher = crc32fast::Hasher::new();
    loop {
        let n = f.read(&mut buf).map_err(|e| Error::io(&shown, "read", e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize())
}

/// "256MiB"-style name of a size.
pub fn human(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, unit) in UNITS {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_deterministic_and_not_constant() {
        let mut a = vec![0u8; 1001];
        let mut b = vec![0u8; 1001];
        fill_pseudo_random(&mut a, 7);
        fill_pseudo_random(&mut b, 7);
        assert_eq!(a, b);
        let distinct: std::collections::HashSet<u8> = a.iter().copied().collect();
        assert!(distinct.len() > 200);
    }

    #[test]
    fn ensure_file_writes_once_with_the_right_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.bin");
        assert!(ensure_file(&p, 100_000).unwrap());
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 100_000);
        assert!(!ensure_file(&p, 100_000).unwrap());
        let crc = warm_and_checksum(&p).unwrap();
        assert_eq!(crc, crc32fast::hash(&std::fs::read(&p).unwrap()));
    }
}
