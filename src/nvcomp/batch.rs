//! Checked calls into nvCOMP: the loaded library ([`Nvcomp`]), one batch's
//! device arrays ([`BatchArgs`]), and splitting work into batches whose
//! scratch memory stays under a cap ([`split_batches`]).

use std::ffi::c_void;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::library::{self, Api, CodecApi, RawAlignments, RawProperties, Slot};
use super::names::{RawStatus, LIBRARY_ENV};
use super::status::{check, NvcompError, NvcompStatus};
use super::Codec;
use crate::cuda::Stream;

/// One batched decompression's arguments: device addresses of arrays of
/// `num_chunks` elements each (and of the scratch buffer).
///
/// Element types are nvCOMP's: pointers and sizes are 8 bytes
/// (`void*`, `size_t`), statuses 4 bytes (`nvcompStatus_t`). All arrays and
/// the chunks they point to must live in device memory of the stream's
/// device until the decompression has completed on the stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchArgs {
    /// `const void*[num_chunks]`: where each compressed chunk starts.
    pub compressed_ptrs: u64,
    /// `size_t[num_chunks]`: each chunk's compressed size.
    pub compressed_bytes: u64,
    /// `size_t[num_chunks]`: each output buffer's capacity (Parquet: the
    /// page's uncompressed size).
    pub uncompressed_capacity: u64,
    /// `size_t[num_chunks]`, written by nvCOMP: bytes actually produced.
    pub actual_uncompressed: u64,
    /// Number of chunks.
    pub num_chunks: usize,
    /// Scratch buffer, at least [`Nvcomp::temp_bytes`] for this batch
    /// (0 when that is 0).
    pub temp_ptr: u64,
    /// Size of the scratch buffer.
    pub temp_bytes: usize,
    /// `void*[num_chunks]`: where each chunk's output goes.
    pub uncompressed_ptrs: u64,
    /// `nvcompStatus_t[num_chunks]`, written by nvCOMP (0 is success; see
    /// [`super::check_chunk_statuses`]). May be 0 to skip statuses (not advised).
    pub statuses: u64,
}

const OP_ARGS: &str = "nvCOMP batch arguments";

impl BatchArgs {
    /// The same arrays restricted to chunks `chunks` (the scratch buffer is
    /// shared): lets one set of arrays be decompressed in several bounded
    /// batches (see [`split_batches`]).
    pub fn sub_batch(&self, chunks: Range<usize>) -> Result<BatchArgs, NvcompError> {
        if chunks.start > chunks.end || chunks.end > self.num_chunks {
            return Err(NvcompError::InvalidArgument {
                op: OP_ARGS,
                what: format!(
                    "chunks {}..{} are not inside the batch of {} chunks",
                    chunks.start, chunks.end, self.num_chunks
                ),
            });
        }
        let skip8 = (chunks.start as u64) * 8;
        let skip4 = (chunks.start as u64) * 4;
        let shift = |base: u64, by: u64| if base == 0 { 0 } else { base + by };
        Ok(BatchArgs {
            compressed_ptrs: shift(self.compressed_ptrs, skip8),
            compressed_bytes: shift(self.compressed_bytes, skip8),
            uncompressed_capacity: shift(self.uncompressed_capacity, skip8),
            actual_uncompressed: shift(self.actual_uncompressed, skip8),
            num_chunks: chunks.end - chunks.start,
            temp_ptr: self.temp_ptr,
            temp_bytes: self.temp_bytes,
            uncompressed_ptrs: shift(self.uncompressed_ptrs, skip8),
            statuses: shift(self.statuses, skip4),
        })
    }

    /// Host-side checks of what can be checked without touching the device:
    /// no null array, arrays aligned to their element size, scratch present
    /// when it has a size and aligned to `temp_alignment`.
    pub fn validate(&self, temp_alignment: usize) -> Result<(), NvcompError> {
        let arrays = [
            ("compressed_ptrs", self.compressed_ptrs, 8),
            ("compressed_bytes", self.compressed_bytes, 8),
            ("uncompressed_capacity", self.uncompressed_capacity, 8),
            ("actual_uncompressed", self.actual_uncompressed, 8),
            ("uncompressed_ptrs", self.uncompressed_ptrs, 8),
        ];
        let invalid = |what: String| NvcompError::InvalidArgument { op: OP_ARGS, what };
        for (name, addr, align) in arrays {
            if addr == 0 {
                return Err(invalid(format!("{name} is a null device pointer")));
            }
            if addr % align != 0 {
                return Err(invalid(format!(
                    "{name} ({addr:#x}) is not aligned to {align} bytes"
                )));
            }
        }
        if self.statuses % 4 != 0 {
            return Err(invalid(format!(
                "statuses ({:#x}) is not aligned to 4 bytes",
                self.statuses
            )));
        }
        if self.temp_bytes > 0 {
            if self.temp_ptr == 0 {
                return Err(invalid(format!(
                    "temp_ptr is null but temp_bytes is {}",
                    self.temp_bytes
                )));
            }
            let align = temp_alignment.max(1) as u64;
            if self.temp_ptr % align != 0 {
                return Err(invalid(format!(
                    "temp_ptr ({:#x}) is not aligned to {align} bytes",
                    self.temp_ptr
                )));
            }
        }
        Ok(())
    }
}

/// nvCOMP's version and the CUDA runtime it was built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NvcompVersion {
    /// Major version (6 for the wheel gdscan targets).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch version.
    pub patch: u32,
    /// `CUDART_VERSION` nvCOMP was built with (`major * 1000 + minor * 10`).
    pub cudart: u32,
}

impl std::fmt::Display for NvcompVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}.{}.{} (CUDA runtime {}.{})",
            self.major,
            self.minor,
            self.patch,
            self.cudart / 1000,
            (self.cudart % 1000) / 10
        )
    }
}

/// The loaded nvCOMP library. Cheap to share ([`Nvcomp::load`] hands out one
/// `Arc` per process); `Send + Sync`, as nvCOMP's batched calls are
/// thread-safe.
#[derive(Debug)]
pub struct Nvcomp {
    api: Api,
}

/// Runs `$body` with `$api` bound to `$codec`'s table, or returns
/// [`NvcompError::CodecUnavailable`].
macro_rules! with_codec {
    ($self:ident, $codec:expr, $api:ident => $body:expr) => {
        match $codec {
            Codec::Snappy => {
                let $api = $self.slot(Codec::Snappy, &$self.api.snappy)?;
                $body
            }
            Codec::Zstd => {
                let $api = $self.slot(Codec::Zstd, &$self.api.zstd)?;
                $body
            }
            Codec::Lz4 => {
                let $api = $self.slot(Codec::Lz4, &$self.api.lz4)?;
                $body
            }
            Codec::Gzip => {
                let $api = $self.slot(Codec::Gzip, &$self.api.gzip)?;
                $body
            }
            Codec::Deflate => {
                let $api = $self.slot(Codec::Deflate, &$self.api.deflate)?;
                $body
            }
        }
    };
}

impl Nvcomp {
    /// The process's nvCOMP, loaded on first call from [`LIBRARY_ENV`] (that
    /// path only, when set) or else `libnvcomp.so.6`, `libnvcomp.so`. The
    /// outcome, success or error, is cached for the process.
    pub fn load() -> Result<Arc<Nvcomp>, NvcompError> {
        static LOADED: OnceLock<Result<Arc<Nvcomp>, NvcompError>> = OnceLock::new();
        LOADED
            .get_or_init(|| {
                let env = std::env::var_os(LIBRARY_ENV);
                let from_env = env.as_deref().is_some_and(|v| !v.is_empty());
                let candidates = library::candidates(env.as_deref());
                library::open_first(&candidates, from_env).map(|api| Arc::new(Nvcomp { api }))
            })
            .clone()
    }

    /// Loads the library at `path` (or a bare name the dynamic loader
    /// searches), ignoring the environment and the process's cached library.
    pub fn load_from(path: impl AsRef<Path>) -> Result<Nvcomp, NvcompError> {
        let name = path.as_ref().to_string_lossy().into_owned();
        library::open_first(&[name], false).map(|api| Nvcomp { api })
    }

    /// The path or name the library was loaded from.
    pub fn path(&self) -> &str {
        &self.api.path
    }

    /// Whether the library has `codec`'s decompression entry points.
    pub fn supports(&self, codec: Codec) -> bool {
        self.api.missing_symbol(codec).is_none()
    }

    /// For every codec the library cannot decompress, its first missing
    /// symbol (empty for nvCOMP 6).
    pub fn missing_symbols(&self) -> Vec<&'static str> {
        self.api.missing_symbols()
    }

    /// nvCOMP's version (`nvcompGetProperties`).
    pub fn version(&self) -> Result<NvcompVersion, NvcompError> {
        let mut props = RawProperties::default();
        // SAFETY: `props` is a valid out pointer of the declared layout.
        check("nvcompGetProperties", unsafe {
            (self.api.get_properties)(&mut props)
        })?;
        Ok(NvcompVersion {
            major: props.version / 1000,
            minor: (props.version % 1000) / 100,
            patch: props.version % 100,
            cudart: props.cudart_version,
        })
    }

    /// nvCOMP's own sentence for a status (`nvcompGetStatusString`).
    pub fn status_string(&self, status: NvcompStatus) -> String {
        // SAFETY: the function takes any code and returns a static string
        // (or null, handled).
        let ptr = unsafe { (self.api.get_status_string)(status.code()) };
        if ptr.is_null() {
            return status.to_string();
        }
        // SAFETY: non-null, NUL-terminated, static in the library.
        unsafe { std::ffi::CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned()
    }

    fn slot<'a, O>(&self, codec: Codec, slot: &'a Slot<O>) -> Result<&'a CodecApi<O>, NvcompError> {
        slot.as_ref()
            .map_err(|symbol| NvcompError::CodecUnavailable {
                codec,
                library: self.api.path.clone(),
                symbol,
            })
    }

    /// The alignments `codec`'s decompressor requires of input chunks,
    /// outputs and scratch memory.
    pub fn alignments(&self, codec: Codec) -> Result<RawAlignments, NvcompError> {
        let op = library::symbols(codec).alignments;
        with_codec!(self, codec, api => {
            let mut out = RawAlignments::default();
            // SAFETY: the function only writes the struct it is given.
            check(op, unsafe { (api.alignments)(api.opts, &mut out) })?;
            Ok(out)
        })
    }

    /// Scratch bytes `codec` needs to decompress `num_chunks` chunks of at
    /// most `max_uncompressed_chunk` bytes, `total_uncompressed` bytes in
    /// all. A host-only query (no work is queued, no GPU is touched). 0 for
    /// an empty batch.
    pub fn temp_bytes(
        &self,
        codec: Codec,
        num_chunks: usize,
        max_uncompressed_chunk: usize,
        total_uncompressed: usize,
    ) -> Result<usize, NvcompError> {
        if num_chunks == 0 {
            return Ok(0);
        }
        let op = library::symbols(codec).temp_size;
        with_codec!(self, codec, api => {
            let mut temp = 0usize;
            // SAFETY: `temp` is a valid out pointer; the query queues no
            // work, so the null (default) stream is never used.
            check(op, unsafe {
                (api.temp_size)(
                    num_chunks,
                    max_uncompressed_chunk,
                    api.opts,
                    &mut temp,
                    total_uncompressed,
                    std::ptr::null_mut(),
                )
            })?;
            Ok(temp)
        })
    }

    /// Splits chunks of the given uncompressed sizes into consecutive batches
    /// whose scratch memory, as this library computes it, stays within
    /// `max_temp_bytes`, with at most `max_chunks` chunks each (see
    /// [`split_batches`]); a chunk over the codec's size limit is an error.
    pub fn split_batches(
        &self,
        codec: Codec,
        uncompressed_sizes: &[usize],
        max_temp_bytes: usize,
        max_chunks: usize,
    ) -> Result<Vec<Batch>, NvcompError> {
        let limit = codec.max_chunk_bytes();
        if let Some((chunk, bytes)) = uncompressed_sizes
            .iter()
            .enumerate()
            .find(|(_, b)| **b > limit)
        {
            return Err(NvcompError::ChunkTooLarge {
                codec,
                chunk,
                bytes: *bytes,
                max: limit,
            });
        }
        split_batches(
            uncompressed_sizes,
            max_temp_bytes,
            max_chunks,
            |n, max, total| self.temp_bytes(codec, n, max, total),
        )
    }

    /// Queues the batched decompression of `args` on `stream` and returns
    /// without waiting. Chunk failures are reported through `args.statuses`
    /// (check them with [`super::check_chunk_statuses`] once the stream has
    /// reached that point); an error here means nothing was queued or the
    /// launch failed.
    ///
    /// The stream's context is made current on the calling thread first:
    /// the library's static CUDA runtime works in the current context.
    ///
    /// # Safety
    /// Every address in `args` must be a device allocation on the stream's
    /// device holding `args.num_chunks` elements of the documented type (the
    /// pointer arrays pointing to compressed chunks of the given sizes and to
    /// outputs of the given capacities; the scratch buffer at least
    /// [`Nvcomp::temp_bytes`] for this batch), and all of them must stay
    /// allocated, and the inputs unchanged, until the decompression has
    /// completed on `stream`. nvCOMP reads corrupt compressed data without
    /// full validation: inputs are expected to be what the file says.
    pub unsafe fn decompress_async(
        &self,
        codec: Codec,
        args: &BatchArgs,
        stream: &Stream,
    ) -> Result<(), NvcompError> {
        if args.num_chunks == 0 {
            return Ok(());
        }
        let align = self.alignments(codec)?;
        args.validate(align.temp)?;
        stream.device().bind().map_err(|e| NvcompError::Cuda {
            op: "making the stream's context current for nvCOMP",
            source: e,
        })?;
        let op = library::symbols(codec).decompress;
        with_codec!(self, codec, api => {
            // SAFETY: the caller guarantees the device arrays (see above);
            // the context of `stream` is current.
            let status = unsafe {
                (api.decompress)(
                    args.compressed_ptrs as usize as *const *const c_void,
                    args.compressed_bytes as usize as *const usize,
                    args.uncompressed_capacity as usize as *const usize,
                    args.actual_uncompressed as usize as *mut usize,
                    args.num_chunks,
                    args.temp_ptr as usize as *mut c_void,
                    args.temp_bytes,
                    args.uncompressed_ptrs as usize as *const *mut c_void,
                    api.opts,
                    args.statuses as usize as *mut RawStatus,
                    stream.raw(),
                )
            };
            check(op, status)
        })
    }
}

/// A run of consecutive chunks decompressed by one nvCOMP call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Indices of the chunks in the list that was split.
    pub chunks: Range<usize>,
    /// The largest uncompressed chunk of the batch.
    pub max_uncompressed_chunk: usize,
    /// The batch's uncompressed bytes.
    pub total_uncompressed: usize,
    /// Scratch bytes the batch needs.
    pub temp_bytes: usize,
}

/// Splits chunks of the given uncompressed sizes, in order, into consecutive
/// batches of at most `max_chunks` chunks (0 counts as 1) whose scratch
/// need, `temp(num_chunks, max_uncompressed_chunk, total_uncompressed)`,
/// stays within `max_temp_bytes`. Greedy: a batch grows while the next chunk
/// fits. A chunk that alone needs more than the cap still gets a batch of
/// its own (its `temp_bytes` then exceeds the cap: the caller decides
/// whether to allocate it or fail). Pure: the scratch model is the caller's
/// (see [`Nvcomp::split_batches`] for nvCOMP's).
pub fn split_batches<E>(
    uncompressed_sizes: &[usize],
    max_temp_bytes: usize,
    max_chunks: usize,
    mut temp: impl FnMut(usize, usize, usize) -> Result<usize, E>,
) -> Result<Vec<Batch>, E> {
    let max_chunks = max_chunks.max(1);
    let mut batches = Vec::new();
    let mut start = 0;
    while start < uncompressed_sizes.len() {
        let first = uncompressed_sizes[start];
        let mut batch = Batch {
            chunks: start..start + 1,
            max_uncompressed_chunk: first,
            total_uncompressed: first,
            temp_bytes: temp(1, first, first)?,
        };
        for (i, &size) in uncompressed_sizes.iter().enumerate().skip(start + 1) {
            let n = i + 1 - start;
            if n > max_chunks {
                break;
            }
            let max = batch.max_uncompressed_chunk.max(size);
            let total = batch.total_uncompressed.saturating_add(size);
            let need = temp(n, max, total)?;
            if need > max_temp_bytes {
                break;
            }
            batch.chunks.end = i + 1;
            batch.max_uncompressed_chunk = max;
            batch.total_uncompressed = total;
            batch.temp_bytes = need;
        }
        start = batch.chunks.end;
        batches.push(batch);
    }
    Ok(batches)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nvcomp::status::NvcompStatus;
    use std::convert::Infallible;

    /// Zstd-like scratch: three times the batch's uncompressed bytes.
    fn zstd_like(_n: usize, _max: usize, total: usize) -> Result<usize, Infallible> {
        Ok(total * 3)
    }

    fn ranges(b: &[Batch]) -> Vec<Range<usize>> {
        b.iter().map(|b| b.chunks.clone()).collect()
    }

    #[test]
    fn batches_stay_under_the_cap_and_cover_every_chunk_in_order() {
        let sizes = [100, 200, 300, 400, 50, 50, 1000];
        let batches = split_batches(&sizes, 1800, 64, zstd_like).unwrap();
        assert_eq!(ranges(&batches), vec![0..3, 3..6, 6..7]);
        for b in &batches {
            assert!(b.temp_bytes <= 1800 || b.chunks.len() == 1);
            let s = &sizes[b.chunks.clone()];
            assert_eq!(b.total_uncompressed, s.iter().sum::<usize>());
            assert_eq!(b.max_uncompressed_chunk, *s.iter().max().unwrap());
            assert_eq!(b.temp_bytes, b.total_uncompressed * 3);
        }
        // Contiguous cover of 0..len.
        assert_eq!(batches.first().unwrap().chunks.start, 0);
        assert_eq!(batches.last().unwrap().chunks.end, sizes.len());
        for w in batches.windows(2) {
            assert_eq!(w[0].chunks.end, w[1].chunks.start);
        }
    }

    #[test]
    fn a_chunk_over_the_cap_gets_a_batch_of_its_own() {
        let sizes = [10, 1000, 10, 10];
        let batches = split_batches(&sizes, 100, 64, zstd_like).unwrap();
        assert_eq!(ranges(&batches), vec![0..1, 1..2, 2..4]);
        assert_eq!(batches[1].temp_bytes, 3000);
    }

    #[test]
    fn scratch_free_codecs_split_by_chunk_count_only() {
        let sizes = vec![1 << 20; 10];
        let none = |_: usize, _: usize, _: usize| Ok::<_, Infallible>(0);
        let batches = split_batches(&sizes, 0, 4, none).unwrap();
        assert_eq!(ranges(&batches), vec![0..4, 4..8, 8..10]);
        // max_chunks 0 behaves as 1.
        assert_eq!(split_batches(&sizes[..2], 0, 0, none).unwrap().len(), 2);
    }

    #[test]
    fn scratch_that_depends_on_the_largest_chunk_is_respected() {
        // cuDF-like model: num_chunks * max_chunk.
        let model = |n: usize, max: usize, _t: usize| Ok::<_, Infallible>(n * max);
        let sizes = [10, 10, 10, 100, 10];
        let batches = split_batches(&sizes, 250, 64, model).unwrap();
        assert_eq!(ranges(&batches), vec![0..3, 3..5]);
        assert_eq!(batches[1].temp_bytes, 200);
    }

    #[test]
    fn empty_input_and_zero_sized_chunks() {
        assert!(split_batches(&[], 10, 8, zstd_like).unwrap().is_empty());
        let batches = split_batches(&[0, 0, 0], 0, 8, zstd_like).unwrap();
        assert_eq!(ranges(&batches), vec![0..3]);
    }

    #[test]
    fn errors_from_the_scratch_model_are_returned() {
        let failing = |n: usize, _: usize, _: usize| {
            if n > 2 {
                Err(NvcompError::Call {
                    op: "temp",
                    status: NvcompStatus::BatchSizeTooLarge,
                })
            } else {
                Ok(0)
            }
        };
        let e = split_batches(&[1, 1, 1], usize::MAX, 8, failing).unwrap_err();
        assert!(matches!(e, NvcompError::Call { .. }));
    }

    #[test]
    fn sub_batches_shift_every_array_by_its_element_size() {
        let args = BatchArgs {
            compressed_ptrs: 0x1000,
            compressed_bytes: 0x2000,
            uncompressed_capacity: 0x3000,
            actual_uncompressed: 0x4000,
            num_chunks: 10,
            temp_ptr: 0x9000,
            temp_bytes: 64,
            uncompressed_ptrs: 0x5000,
            statuses: 0x6000,
        };
        let sub = args.sub_batch(3..7).unwrap();
        assert_eq!(sub.num_chunks, 4);
        assert_eq!(sub.compressed_ptrs, 0x1000 + 24);
        assert_eq!(sub.compressed_bytes, 0x2000 + 24);
        assert_eq!(sub.uncompressed_capacity, 0x3000 + 24);
        assert_eq!(sub.actual_uncompressed, 0x4000 + 24);
        assert_eq!(sub.uncompressed_ptrs, 0x5000 + 24);
        assert_eq!(sub.statuses, 0x6000 + 12);
        assert_eq!((sub.temp_ptr, sub.temp_bytes), (0x9000, 64));
        assert_eq!(args.sub_batch(0..10).unwrap(), args);
        assert!(args.sub_batch(8..11).is_err());
        // A null statuses array stays null.
        let no_status = BatchArgs {
            statuses: 0,
            ..args
        };
        assert_eq!(no_status.sub_batch(2..3).unwrap().statuses, 0);
    }

    #[test]
    fn validation_rejects_null_and_misaligned_arrays() {
        let ok = BatchArgs {
            compressed_ptrs: 0x1000,
            compressed_bytes: 0x2000,
            uncompressed_capacity: 0x3000,
            actual_uncompressed: 0x4000,
            num_chunks: 1,
            temp_ptr: 0x8000,
            temp_bytes: 64,
            uncompressed_ptrs: 0x5000,
            statuses: 0x6004,
        };
        assert!(ok.validate(8).is_ok());
        let cases = [
            BatchArgs {
                compressed_ptrs: 0,
                ..ok
            },
            BatchArgs {
                compressed_bytes: 0x2004,
                ..ok
            },
            BatchArgs {
                uncompressed_ptrs: 0,
                ..ok
            },
            BatchArgs {
                statuses: 0x6002,
                ..ok
            },
            BatchArgs { temp_ptr: 0, ..ok },
            BatchArgs {
                temp_ptr: 0x8004,
                ..ok
            },
        ];
        for bad in cases {
            let e = bad.validate(8).unwrap_err();
            assert!(matches!(e, NvcompError::InvalidArgument { .. }), "{bad:?}");
        }
        // No scratch needed: a null temp pointer is fine.
        assert!(BatchArgs {
            temp_ptr: 0,
            temp_bytes: 0,
            ..ok
        }
        .validate(8)
        .is_ok());
    }

    #[test]
    fn a_missing_library_is_a_typed_error_that_says_how_to_get_it() {
        let path = "/nonexistent/gdscan-test/libnvcomp.so.6";
        let e = Nvcomp::load_from(path).unwrap_err();
        assert!(matches!(e, NvcompError::LibraryNotFound { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(path), "{msg}");
        assert!(
            msg.contains("pip install nvidia-libnvcomp-cu13==6.0.0.12"),
            "{msg}"
        );
        assert!(msg.contains(LIBRARY_ENV), "{msg}");
        assert!(
            msg.contains("nvidia/libnvcomp/lib64/libnvcomp.so.6"),
            "{msg}"
        );

        // Named by the environment variable: the message says so.
        let e = library::open_first(&[path.to_string()], true).unwrap_err();
        assert!(
            e.to_string().contains(&format!("{LIBRARY_ENV}={path}")),
            "{e}"
        );
    }

    #[test]
    fn every_candidate_is_listed_when_none_loads() {
        let names = [
            "/nonexistent/a/libnvcomp.so.6".to_string(),
            "/nonexistent/b/libnvcomp.so".to_string(),
        ];
        let msg = library::open_first(&names, false).unwrap_err().to_string();
        assert!(
            msg.contains("/nonexistent/a/") && msg.contains("/nonexistent/b/"),
            "{msg}"
        );
    }

    #[test]
    fn a_library_without_nvcomp_symbols_is_named_with_the_missing_symbol() {
        // The C library loads everywhere and has no nvCOMP in it.
        let e = Nvcomp::load_from("libc.so.6").unwrap_err();
        match &e {
            NvcompError::MissingSymbol {
                library, symbol, ..
            } => {
                assert_eq!(library, "libc.so.6");
                assert_eq!(*symbol, "nvcompGetProperties");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(e.to_string().contains("nvcompGetProperties"));
    }

    /// Loads a real libnvcomp named by `GDSCAN_TEST_NVCOMP` (e.g. the pip
    /// wheel's `nvidia/libnvcomp/lib64/libnvcomp.so.6`) and checks every
    /// entry point resolves and the host-only queries answer. Needs no GPU.
    #[test]
    fn the_real_library_resolves_every_symbol_when_given() {
        let Some(path) = std::env::var_os("GDSCAN_TEST_NVCOMP").filter(|p| !p.is_empty()) else {
            eprintln!(
                "SKIPPED the_real_library_resolves_every_symbol_when_given: \
                 set GDSCAN_TEST_NVCOMP=/path/to/libnvcomp.so.6 to run it"
            );
            return;
        };
        let nv = Nvcomp::load_from(&path).unwrap();
        assert!(
            nv.missing_symbols().is_empty(),
            "{:?}",
            nv.missing_symbols()
        );
        for codec in Codec::ALL {
            assert!(nv.supports(codec), "{codec}");
            let a = nv.alignments(codec).unwrap();
            assert!(
                a.input >= 1 && a.output >= 1 && a.temp >= 1,
                "{codec}: {a:?}"
            );
            assert_eq!(nv.temp_bytes(codec, 0, 0, 0).unwrap(), 0);
            nv.temp_bytes(codec, 16, 1 << 20, 16 << 20).unwrap();
        }
        let v = nv.version().unwrap();
        assert_eq!(v.major, 6, "{v}");
        eprintln!("nvCOMP {v} from {}", nv.path());
        // Pages can be decompressed where they lie for the Parquet codecs.
        for codec in [Codec::Snappy, Codec::Zstd, Codec::Lz4, Codec::Gzip] {
            assert_eq!(nv.alignments(codec).unwrap().input, 1, "{codec}");
        }
        // Zstd's scratch grows with the batch; a cap splits it.
        let zstd_temp = nv.temp_bytes(Codec::Zstd, 64, 1 << 20, 64 << 20).unwrap();
        assert!(zstd_temp >= 64 << 20, "{zstd_temp}");
        let sizes = vec![1 << 20; 64];
        let cap = zstd_temp / 4;
        let batches = nv.split_batches(Codec::Zstd, &sizes, cap, 1 << 16).unwrap();
        assert!(batches.len() >= 4, "{batches:?}");
        assert!(batches.iter().all(|b| b.temp_bytes <= cap));
        assert_eq!(batches.last().unwrap().chunks.end, 64);
        let e = nv
            .split_batches(Codec::Snappy, &[usize::MAX], cap, 8)
            .unwrap_err();
        assert!(matches!(e, NvcompError::ChunkTooLarge { .. }));
        assert!(nv
            .status_string(NvcompStatus::CannotDecompress)
            .contains("decompress"));
    }

    #[test]
    fn the_process_library_is_loaded_once_and_never_panics() {
        // Whatever this machine has, the outcome is typed and cached.
        match (Nvcomp::load(), Nvcomp::load()) {
            (Ok(a), Ok(b)) => assert!(Arc::ptr_eq(&a, &b)),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("load changed its answer: {a:?} then {b:?}"),
        }
    }
}
