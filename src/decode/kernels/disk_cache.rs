//! NVRTC's output kept on disk between processes, so that a fresh process
//! loads its kernels instead of compiling them again.
//!
//! A compile is named by a [`CacheKey`]: every kernel source, the generated
//! header (the compiled-in settings), NVRTC's options, NVRTC's and the
//! driver's versions and the target (architecture and code kind). The key's
//! full description is written into the entry and compared on every load,
//! so a hash collision is a miss, never a wrong image; the image carries its
//! length and CRC-32. An entry that is missing, cut short, corrupt or made
//! for another key is ignored and rewritten after the next compile; a cache
//! directory that cannot be created or written is ignored too (the compile's
//! result is used as is). Entries are written to a temporary file and
//! renamed into place, so a reader never sees half an entry.
//!
//! `GDSCAN_KERNEL_CACHE` names the directory, or turns the cache off with
//! `off` (or `0`); unset, it is `$XDG_CACHE_HOME/gdscan/kernels`, else
//! `$HOME/.cache/gdscan/kernels`, else off.
//!
//! ```
//! use gdscan::decode::kernels::disk_cache::{self, CacheKey};
//!
//! let dir = std::env::temp_dir().join(format!("gdscan-kcache-doc-{}", std::process::id()));
//! let key = CacheKey::new(&["__global__ void k() {}"], &["--std=c++17".into()], (13, 0), (13, 0), "sm_90");
//! assert_eq!(disk_cache::load(&dir, &key), None);
//! disk_cache::store(&dir, &key, b"image bytes")?;
//! assert_eq!(disk_cache::load(&dir, &key).as_deref(), Some(&b"image bytes"[..]));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

use twox_hash::XxHash3_128;

/// The variable naming the cache directory (`off` or `0`: no cache).
pub const CACHE_ENV: &str = "GDSCAN_KERNEL_CACHE";

/// The first bytes of an entry: a name and the format's version.
const MAGIC: &[u8; 8] = b"GDSKRN\x00\x01";

/// Where compiled kernels are kept between processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheDir {
    /// No disk cache: every process compiles.
    Off,
    /// Entries live in this directory (created on first store).
    Dir(PathBuf),
}

impl CacheDir {
    /// The cache directory from `GDSCAN_KERNEL_CACHE`, `XDG_CACHE_HOME` and
    /// `HOME` as `lookup` gives them (see the module documentation).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        match lookup(CACHE_ENV) {
            Some(v) if v.eq_ignore_ascii_case("off") || v == "0" => Self::Off,
            Some(v) if !v.is_empty() => Self::Dir(PathBuf::from(v)),
            _ => {
                let non_empty = |name| lookup(name).filter(|v| !v.is_empty());
                if let Some(xdg) = non_empty("XDG_CACHE_HOME") {
                    Self::Dir(Path::new(&xdg).join("gdscan").join("kernels"))
                } else if let Some(home) = non_empty("HOME") {
                    Self::Dir(Path::new(&home).join(".cache/gdscan/kernels"))
                } else {
                    Self::Off
                }
            }
        }
    }

    /// [`CacheDir::from_lookup`] over the process environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }
}

/// Everything a compile's output depends on, described in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    description: String,
}

impl CacheKey {
    /// The key of compiling `sources` (every text NVRTC reads, in a fixed
    /// order) with `options` by NVRTC `nvrtc` for `target` (NVRTC's
    /// architecture name, which also says the code kind: `sm_90` for a
    /// cubin, `compute_90` for PTX) under a driver of CUDA version `driver`.
    pub fn new(
        sources: &[&str],
        options: &[String],
        nvrtc: (i32, i32),
        driver: (i32, i32),
        target: &str,
    ) -> Self {
        let mut hasher = XxHash3_128::new();
        for text in sources {
            // Each text's length first, so that texts cannot run into each other.
            hasher.write(&(text.len() as u64).to_le_bytes());
            hasher.write(text.as_bytes());
        }
        let total: usize = sources.iter().map(|s| s.len()).sum();
        let description = format!(
            "gdscan kernels\nnvrtc {}.{}\ndriver {}.{}\ntarget {}\noptions {}\nsources {} texts, {} bytes, xxh3-128 {:032x}\n",
            nvrtc.0,
            nvrtc.1,
            driver.0,
            driver.1,
            target,
            options.join(" "),
            sources.len(),
            total,
            hasher.finish_128(),
        );
        Self { description }
    }

    /// The entry's file name: a hash of the description.
    fn file_name(&self) -> String {
        format!(
            "{:032x}.kernels",
            XxHash3_128::oneshot(self.description.as_bytes())
        )
    }
}

/// The entry's bytes: magic, the key's description, the image's length and
/// CRC-32, the image.
fn encode(key: &CacheKey, image: &[u8]) -> Vec<u8> {
    let description = key.description.as_bytes();
    let mut out = Vec::with_capacity(MAGIC.len() + 16 + description.len() + image.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(description.len() as u32).to_le_bytes());
    out.extend_from_slice(description);
    out.extend_from_slice(&(image.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(image).to_le_bytes());
    out.extend_from_slice(image);
    out
}

/// The image of an entry made for `key`; None for anything else (another
/// key, another format, cut short, a CRC that does not match, trailing bytes).
fn decode<'a>(key: &CacheKey, bytes: &'a [u8]) -> Option<&'a [u8]> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (len, rest) = split_u32(rest)?;
    let description = key.description.as_bytes();
    if usize::try_from(len).ok()? != description.len() {
        return None;
    }
    let rest = rest.strip_prefix(description)?;
    let (image_len, rest) = rest.split_first_chunk::<8>()?;
    let (crc, image) = split_u32(rest)?;
    let ok = u64::try_from(image.len()).ok()? == u64::from_le_bytes(*image_len)
        && crc32fast::hash(image) == crc;
    ok.then_some(image)
}

fn split_u32(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let (head, rest) = bytes.split_first_chunk::<4>()?;
    Some((u32::from_le_bytes(*head), rest))
}

/// The image cached in `dir` for `key`, if a whole, matching entry is there.
pub fn load(dir: &Path, key: &CacheKey) -> Option<Vec<u8>> {
    let bytes = std::fs::read(dir.join(key.file_name())).ok()?;
    let image = decode(key, &bytes);
    if image.is_none() {
        tracing::debug!(
            "kernel cache entry {} does not match its key: ignored",
            key.file_name()
        );
    }
    image.map(<[u8]>::to_vec)
}

/// Writes `image` into `dir` for `key` (the directory is created if
/// needed), through a temporary file renamed into place.
pub fn store(dir: &Path, key: &CacheKey, image: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let name = key.file_name();
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&temp).and_then(|mut f| {
        f.write_all(&encode(key, image))?;
        f.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temp, dir.join(&name))) {
        Ok(()) => Ok(()),
        Err(e) => {
            // Best effort: the temporary file may not exist.
            let _ = std::fs::remove_file(&temp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(source: &str) -> CacheKey {
        let target = "sm_90";
        CacheKey::new(
            &[source, "header"],
            &["--std=c++17".to_string()],
            (13, 0),
            (13, 0),
            target,
        )
    }

    #[test]
    fn every_input_of_the_compile_changes_the_key() {
        let base = key("a");
        let target = "sm_90";
        let opts = ["--std=c++17".to_string()];
        let variants = [
            key("b"),
            CacheKey::new(&["a", "header "], &opts, (13, 0), (13, 0), target),
            // The same bytes split differently between the texts.
            CacheKey::new(&["ah", "eader"], &opts, (13, 0), (13, 0), target),
            CacheKey::new(&["a", "header"], &[], (13, 0), (13, 0), target),
            CacheKey::new(&["a", "header"], &opts, (13, 1), (13, 0), target),
            CacheKey::new(&["a", "header"], &opts, (13, 0), (13, 1), target),
            CacheKey::new(&["a", "header"], &opts, (13, 0), (13, 0), "sm_100"),
            CacheKey::new(&["a", "header"], &opts, (13, 0), (13, 0), "compute_90"),
        ];
        for v in &variants {
            assert_ne!(v, &base);
            assert_ne!(v.file_name(), base.file_name());
        }
        assert_eq!(key("a"), base);
    }

    #[test]
    fn an_entry_round_trips_and_anything_else_is_refused() {
        let k = key("a");
        let image = b"\x7fELF the machine code".to_vec();
        let entry = encode(&k, &image);
        assert_eq!(decode(&k, &entry), Some(image.as_slice()));
        // Another key with the same file contents.
        assert_eq!(decode(&key("b"), &entry), None);
        // Every cut and every flipped byte is refused.
        for cut in 0..entry.len() {
            assert_eq!(decode(&k, &entry[..cut]), None, "cut at {cut}");
        }
        for at in 0..entry.len() {
            let mut bad = entry.clone();
            bad[at] ^= 0x40;
            assert_eq!(decode(&k, &bad), None, "byte {at} flipped");
        }
        let mut longer = entry.clone();
        longer.push(0);
        assert_eq!(decode(&k, &longer), None);
    }

    #[test]
    fn store_then_load_and_corrupt_entries_are_misses() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("made/on/first/store");
        let k = key("a");
        assert_eq!(load(&sub, &k), None);
        store(&sub, &k, b"image").unwrap();
        assert_eq!(load(&sub, &k).as_deref(), Some(&b"image"[..]));
        assert_eq!(load(&sub, &key("b")), None);
        // A corrupt entry is a miss; the next store replaces it.
        let path = sub.join(k.file_name());
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(load(&sub, &k), None);
        store(&sub, &k, b"image 2").unwrap();
        assert_eq!(load(&sub, &k).as_deref(), Some(&b"image 2"[..]));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(&sub).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn an_unwritable_directory_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a file, not a directory");
        std::fs::write(&file, b"x").unwrap();
        assert!(store(&file, &key("a"), b"image").is_err());
        assert_eq!(load(&file, &key("a")), None);
    }

    #[test]
    fn the_directory_follows_the_variables() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            CacheDir::from_lookup(env(&[(CACHE_ENV, "/k"), ("HOME", "/h")])),
            CacheDir::Dir("/k".into())
        );
        assert_eq!(
            CacheDir::from_lookup(env(&[(CACHE_ENV, "OFF"), ("HOME", "/h")])),
            CacheDir::Off
        );
        assert_eq!(
            CacheDir::from_lookup(env(&[(CACHE_ENV, "0")])),
            CacheDir::Off
        );
        assert_eq!(
            CacheDir::from_lookup(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            CacheDir::Dir("/x/gdscan/kernels".into())
        );
        assert_eq!(
            CacheDir::from_lookup(env(&[("HOME", "/h")])),
            CacheDir::Dir("/h/.cache/gdscan/kernels".into())
        );
        assert_eq!(CacheDir::from_lookup(env(&[])), CacheDir::Off);
    }
}
