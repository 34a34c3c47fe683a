//! Loading libnvcomp at run time into a table of function pointers.
//!
//! The declarations follow nvCOMP 6's C headers (`nvcomp/*.h` in the pip
//! wheel `nvidia-libnvcomp-cu13==6.0.0.12`). Every batched decompressor
//! there has the same three entry points, differing only in its options
//! struct, which is passed **by value** and is 64 bytes long:
//!
//! - `nvcompBatched<C>DecompressGetRequiredAlignments(opts, *alignments)`
//! - `nvcompBatched<C>DecompressGetTempSize(num_chunks, max_chunk, opts, *temp, max_total, stream)`
//! - `nvcompBatched<C>DecompressAsync(comp_ptrs, comp_bytes, out_capacity, out_actual,
//!   num_chunks, temp_ptr, temp_bytes, out_ptrs, opts, statuses, stream)`
//!
//! so one generic table, [`CodecApi`], serves all five codecs. Statuses are
//! read as plain integers ([`RawStatus`]), so an unknown code from a newer
//! library can never be an invalid enum value.
//!
//! The wheel's library carries a static CUDA runtime: its `cudaStream_t` is
//! the driver's `CUstream`, and it works in whatever context is current on
//! the calling thread, so callers bind the stream's context first (see
//! [`super::Nvcomp::decompress_async`]).

use std::ffi::{c_char, c_int, c_void, OsStr};

use cudarc::driver::sys::CUstream;

use super::names::{RawStatus, LIBRARY_ENV, LIBRARY_NAMES};
use super::status::NvcompError;
use super::Codec;

/// `nvcompDecompressBackend_t`: let nvCOMP choose (hardware engine or CUDA).
pub const BACKEND_DEFAULT: c_int = 0;

/// `nvcompAlignmentRequirements_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawAlignments {
    /// Minimum alignment of each compressed input chunk.
    pub input: usize,
    /// Minimum alignment of each output buffer.
    pub output: usize,
    /// Minimum alignment of the temporary buffer.
    pub temp: usize,
}

/// `nvcompProperties_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawProperties {
    /// nvCOMP's version, `major * 1000 + minor * 100 + patch`.
    pub version: u32,
    /// The CUDA runtime nvCOMP was built with, `major * 1000 + minor * 10`.
    pub cudart_version: u32,
}

/// `nvcompBatchedSnappyDecompressOpts_t` (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SnappyOpts {
    /// `nvcompDecompressBackend_t`.
    pub backend: c_int,
    /// Sort chunks before hardware decompression (hardware backend only).
    pub sort_before_hw_decompress: c_int,
    /// Must be zero.
    pub reserved: [c_char; 56],
}

/// `nvcompBatchedZstdDecompressOpts_t` (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ZstdOpts {
    /// `nvcompDecompressBackend_t`.
    pub backend: c_int,
    /// Must be zero.
    pub reserved: [c_char; 60],
}

/// `nvcompBatchedLZ4DecompressOpts_t` (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Lz4Opts {
    /// `nvcompDecompressBackend_t`.
    pub backend: c_int,
    /// Sort chunks before hardware decompression (hardware backend only).
    pub sort_before_hw_decompress: c_int,
    /// `nvcompType_t`; `NVCOMP_TYPE_CHAR` (0) for plain LZ4 blocks.
    pub data_type: c_int,
    /// `nvcompBitshuffleMode_t`; `NVCOMP_BITSHUFFLE_NONE` (0).
    pub bitshuffle_mode: c_int,
    /// Must be zero.
    pub reserved: [c_char; 48],
}

/// `nvcompBatchedGzipDecompressOpts_t` (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct GzipOpts {
    /// `nvcompDecompressBackend_t`.
    pub backend: c_int,
    /// `nvcompBatchedGzipDecompressAlgorithm_t`: 0 naive (the default), 1 lookahead.
    pub algorithm: c_int,
    /// Sort chunks before hardware decompression (hardware backend only).
    pub sort_before_hw_decompress: c_int,
    /// Must be zero.
    pub reserved: [c_char; 52],
}

/// `nvcompBatchedDeflateDecompressOpts_t` (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DeflateOpts {
    /// `nvcompDecompressBackend_t`.
    pub backend: c_int,
    /// Sort chunks before hardware decompression (hardware backend only).
    pub sort_before_hw_decompress: c_int,
    /// Must be zero.
    pub reserved: [c_char; 56],
}

// The headers promise 64 bytes for every options struct; a wrong size would
// shift every argument after it on the stack.
const _: () = {
    assert!(std::mem::size_of::<SnappyOpts>() == 64);
    assert!(std::mem::size_of::<ZstdOpts>() == 64);
    assert!(std::mem::size_of::<Lz4Opts>() == 64);
    assert!(std::mem::size_of::<GzipOpts>() == 64);
    assert!(std::mem::size_of::<DeflateOpts>() == 64);
    assert!(std::mem::size_of::<RawAlignments>() == 24);
    assert!(std::mem::size_of::<RawProperties>() == 8);
};

/// The defaults of nvCOMP's headers (`nvcompBatched*DecompressDefaultOpts`):
/// default backend, no sorting, plain bytes, naive gzip algorithm.
pub trait DefaultOpts: Copy {
    /// The header's default options.
    fn default_opts() -> Self;
}

impl DefaultOpts for SnappyOpts {
    fn default_opts() -> Self {
        SnappyOpts {
            backend: BACKEND_DEFAULT,
            sort_before_hw_decompress: 0,
            reserved: [0; 56],
        }
    }
}

impl DefaultOpts for ZstdOpts {
    fn default_opts() -> Self {
        ZstdOpts {
            backend: BACKEND_DEFAULT,
            reserved: [0; 60],
        }
    }
}

impl DefaultOpts for Lz4Opts {
    fn default_opts() -> Self {
        Lz4Opts {
            backend: BACKEND_DEFAULT,
            sort_before_hw_decompress: 0,
            data_type: 0,
            bitshuffle_mode: 0,
            reserved: [0; 48],
        }
    }
}

impl DefaultOpts for GzipOpts {
    fn default_opts() -> Self {
        GzipOpts {
            backend: BACKEND_DEFAULT,
            algorithm: 0,
            sort_before_hw_decompress: 0,
            reserved: [0; 52],
        }
    }
}

impl DefaultOpts for DeflateOpts {
    fn default_opts() -> Self {
        DeflateOpts {
            backend: BACKEND_DEFAULT,
            sort_before_hw_decompress: 0,
            reserved: [0; 56],
        }
    }
}

/// `nvcompBatched<C>DecompressGetRequiredAlignments`.
pub type AlignmentsFn<O> = unsafe extern "C" fn(O, *mut RawAlignments) -> RawStatus;

/// `nvcompBatched<C>DecompressGetTempSize`: num_chunks,
/// max_uncompressed_chunk_bytes, opts, out temp_bytes,
/// max_total_uncompressed_bytes, stream.
pub type TempSizeFn<O> =
    unsafe extern "C" fn(usize, usize, O, *mut usize, usize, CUstream) -> RawStatus;

/// `nvcompBatched<C>DecompressAsync`: compressed chunk pointers, compressed
/// sizes, output capacities, actual output sizes (written), num_chunks, temp
/// pointer, temp bytes, output pointers, opts, statuses (written), stream.
pub type DecompressFn<O> = unsafe extern "C" fn(
    *const *const c_void,
    *const usize,
    *const usize,
    *mut usize,
    usize,
    *mut c_void,
    usize,
    *const *mut c_void,
    O,
    *mut RawStatus,
    CUstream,
) -> RawStatus;

/// One codec's decompression entry points with the options passed to them.
pub struct CodecApi<O> {
    /// The options every call passes (the header's defaults).
    pub opts: O,
    /// `...DecompressGetRequiredAlignments`.
    pub alignments: AlignmentsFn<O>,
    /// `...DecompressGetTempSize`.
    pub temp_size: TempSizeFn<O>,
    /// `...DecompressAsync`.
    pub decompress: DecompressFn<O>,
}

/// A codec's table, or the first of its symbols the library lacks.
pub type Slot<O> = Result<CodecApi<O>, &'static str>;

/// The nvCOMP entry points gdscan uses.
pub struct Api {
    /// The path or name the library was loaded from.
    pub path: String,
    /// `nvcompGetProperties`.
    pub get_properties: unsafe extern "C" fn(*mut RawProperties) -> RawStatus,
    /// `nvcompGetStatusString`.
    pub get_status_string: unsafe extern "C" fn(RawStatus) -> *const c_char,
    /// Snappy (`nvcompBatchedSnappy*`).
    pub snappy: Slot<SnappyOpts>,
    /// Zstandard (`nvcompBatchedZstd*`).
    pub zstd: Slot<ZstdOpts>,
    /// LZ4 raw blocks (`nvcompBatchedLZ4*`).
    pub lz4: Slot<Lz4Opts>,
    /// Gzip members (`nvcompBatchedGzip*`).
    pub gzip: Slot<GzipOpts>,
    /// Raw Deflate streams (`nvcompBatchedDeflate*`).
    pub deflate: Slot<DeflateOpts>,
    _library: libloading::Library,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("path", &self.path)
            .field("missing", &self.missing_symbols())
            .finish_non_exhaustive()
    }
}

impl Api {
    /// The first missing symbol of `codec`, if any.
    pub fn missing_symbol(&self, codec: Codec) -> Option<&'static str> {
        match codec {
            Codec::Snappy => self.snappy.as_ref().err().copied(),
            Codec::Zstd => self.zstd.as_ref().err().copied(),
            Codec::Lz4 => self.lz4.as_ref().err().copied(),
            Codec::Gzip => self.gzip.as_ref().err().copied(),
            Codec::Deflate => self.deflate.as_ref().err().copied(),
        }
    }

    /// For every codec whose entry points are incomplete, its first missing symbol.
    pub fn missing_symbols(&self) -> Vec<&'static str> {
        Codec::ALL
            .iter()
            .filter_map(|c| self.missing_symbol(*c))
            .collect()
    }
}

/// The candidates to try, given the value of [`LIBRARY_ENV`] (pass
/// `std::env::var_os(LIBRARY_ENV)`): that value alone when it is set and not
/// empty, else [`LIBRARY_NAMES`].
pub fn candidates(env_value: Option<&OsStr>) -> Vec<String> {
    match env_value {
        Some(v) if !v.is_empty() => vec![v.to_string_lossy().into_owned()],
        _ => LIBRARY_NAMES.iter().map(|s| s.to_string()).collect(),
    }
}

/// Opens the first candidate that loads and binds its symbols.
///
/// The first library that loads decides: if it lacks a required symbol, that
/// is the error (a broken or foreign library is not skipped silently).
pub fn open_first(candidates: &[String], from_env: bool) -> Result<Api, NvcompError> {
    let mut tried = Vec::new();
    for name in candidates {
        // SAFETY: loading libnvcomp runs its static initialisers (its static
        // CUDA runtime's included), which have no preconditions.
        match unsafe { libloading::Library::new(name) } {
            Ok(lib) => return bind(name, lib),
            Err(e) => {
                let detail = std::error::Error::source(&e)
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| e.to_string());
                let shown = if from_env {
                    format!("{LIBRARY_ENV}={name}: {detail}")
                } else {
                    detail
                };
                tried.push(shown);
            }
        }
    }
    Err(NvcompError::LibraryNotFound {
        tried: tried.join("; "),
    })
}

fn bind(path: &str, lib: libloading::Library) -> Result<Api, NvcompError> {
    // Required symbols: without them the library is not a usable nvCOMP.
    macro_rules! required {
        ($name:literal) => {
            // SAFETY: the symbol's type is the one declared in nvcomp.h.
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| {
                NvcompError::MissingSymbol {
                    library: path.to_string(),
                    symbol: $name,
                    source: std::sync::Arc::new(e),
                }
            })?
        };
    }
    let get_properties = required!("nvcompGetProperties");
    let get_status_string = required!("nvcompGetStatusString");
    let snappy = codec_slot::<SnappyOpts>(&lib, Codec::Snappy);
    let zstd = codec_slot::<ZstdOpts>(&lib, Codec::Zstd);
    let lz4 = codec_slot::<Lz4Opts>(&lib, Codec::Lz4);
    let gzip = codec_slot::<GzipOpts>(&lib, Codec::Gzip);
    let deflate = codec_slot::<DeflateOpts>(&lib, Codec::Deflate);
    Ok(Api {
        path: path.to_string(),
        get_properties,
        get_status_string,
        snappy,
        zstd,
        lz4,
        gzip,
        deflate,
        _library: lib,
    })
}

/// The names of a codec's three decompression entry points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodecSymbols {
    /// `nvcompBatched<C>DecompressGetRequiredAlignments`.
    pub alignments: &'static str,
    /// `nvcompBatched<C>DecompressGetTempSize`.
    pub temp_size: &'static str,
    /// `nvcompBatched<C>DecompressAsync`.
    pub decompress: &'static str,
}

/// The entry points of `codec` in nvCOMP 6.
pub fn symbols(codec: Codec) -> CodecSymbols {
    macro_rules! names {
        ($c:literal) => {
            CodecSymbols {
                alignments: concat!("nvcompBatched", $c, "DecompressGetRequiredAlignments"),
                temp_size: concat!("nvcompBatched", $c, "DecompressGetTempSize"),
                decompress: concat!("nvcompBatched", $c, "DecompressAsync"),
            }
        };
    }
    match codec {
        Codec::Snappy => names!("Snappy"),
        Codec::Zstd => names!("Zstd"),
        Codec::Lz4 => names!("LZ4"),
        Codec::Gzip => names!("Gzip"),
        Codec::Deflate => names!("Deflate"),
    }
}

/// Binds `codec`'s entry points; the first one missing marks the codec
/// unavailable (reported when that codec is asked for).
fn codec_slot<O: DefaultOpts>(lib: &libloading::Library, codec: Codec) -> Slot<O> {
    let names = symbols(codec);
    // SAFETY: (and for the two below) `O` is the options struct of `codec` and the
    // function types are those nvCOMP 6's headers declare for it.
    let alignments: AlignmentsFn<O> =
        *unsafe { lib.get::<AlignmentsFn<O>>(names.alignments.as_bytes()) }
            .map_err(|_| names.alignments)?;
    // SAFETY: as above.
    let temp_size: TempSizeFn<O> = *unsafe { lib.get::<TempSizeFn<O>>(names.temp_size.as_bytes()) }
        .map_err(|_| names.temp_size)?;
    // SAFETY: as above.
    let decompress: DecompressFn<O> =
        *unsafe { lib.get::<DecompressFn<O>>(names.decompress.as_bytes()) }
            .map_err(|_| names.decompress)?;
    Ok(CodecApi {
        opts: O::default_opts(),
        alignments,
        temp_size,
        decompress,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_value_is_the_only_candidate_when_set() {
        assert_eq!(
            candidates(Some(OsStr::new("/opt/x/libnvcomp.so.6"))),
            vec!["/opt/x/libnvcomp.so.6".to_string()]
        );
        let defaults = vec!["libnvcomp.so.6".to_string(), "libnvcomp.so".to_string()];
        assert_eq!(candidates(None), defaults);
        assert_eq!(candidates(Some(OsStr::new(""))), defaults);
    }

    #[test]
    fn defaults_match_the_headers() {
        // Every default of nvCOMP 6's headers is all zero bytes.
        fn zero<O: DefaultOpts>() -> bool {
            let o = O::default_opts();
            // SAFETY: O is a plain repr(C) struct of integers, 64 bytes.
            let bytes = unsafe {
                std::slice::from_raw_parts((&o as *const O).cast::<u8>(), std::mem::size_of::<O>())
            };
            bytes.iter().all(|b| *b == 0)
        }
        assert!(zero::<SnappyOpts>());
        assert!(zero::<ZstdOpts>());
        assert!(zero::<Lz4Opts>());
        assert!(zero::<GzipOpts>());
        assert!(zero::<DeflateOpts>());
    }
}
