//! nvCOMP batched decompression on the GPU, loaded at run time.
//!
//! Parquet pages are compressed one by one; nvCOMP's batched C API takes the
//! pages of a row group (device arrays of pointers and sizes) and decompresses
//! them all in one launch on a stream. Nothing here links against nvCOMP at
//! build time: the library is opened with libloading on first use, from
//! `GDSCAN_NVCOMP_LIBRARY` when set (that path only), else `libnvcomp.so.6`
//! (pip `nvidia-libnvcomp-cu13==6.0.0.12`, which puts it at
//! `site-packages/nvidia/libnvcomp/lib64/libnvcomp.so.6`), else
//! `libnvcomp.so`. Without it, [`Nvcomp::load`] returns
//! [`NvcompError::LibraryNotFound`], which says how to get it; it never panics.
//!
//! Layers, as in [`crate::cufile`]: [`library`] (loading, raw function table,
//! the 64-byte option structs passed by value) → [`status`] (`nvcompStatus_t`
//! codes to [`NvcompStatus`] and [`NvcompError`]) → [`batch`] (checked calls on
//! the owning [`Nvcomp`], [`BatchArgs`], and [`split_batches`] to keep scratch
//! memory bounded: Zstd needs about three times the uncompressed batch).
//!
//! Codecs, with what Parquet calls them:
//!
//! | Parquet   | [`Codec`]          | nvCOMP entry points                         |
//! |-----------|--------------------|---------------------------------------------|
//! | SNAPPY    | [`Codec::Snappy`]  | `nvcompBatchedSnappyDecompress*` (raw Snappy) |
//! | ZSTD      | [`Codec::Zstd`]    | `nvcompBatchedZstdDecompress*` (zstd frames)  |
//! | LZ4_RAW   | [`Codec::Lz4`]     | `nvcompBatchedLZ4Decompress*` (raw LZ4 blocks)|
//! | GZIP      | [`Codec::Gzip`]    | `nvcompBatchedGzipDecompress*` (one gzip member a page, header parsed by nvCOMP) |
//! | —         | [`Codec::Deflate`] | `nvcompBatchedDeflateDecompress*` (raw Deflate) |
//!
//! Parquet's legacy LZ4 (Hadoop framing), BROTLI and LZO have no nvCOMP
//! decoder here ([`Codec::from_parquet`] gives `None`).
//!
//! Input alignment (nvCOMP 6.0.0.12, asked through
//! `...DecompressGetRequiredAlignments`): 1 byte for Snappy, Zstd, LZ4 and
//! Gzip, so pages can be decompressed where they lie in a row group's buffer;
//! 4 bytes for Deflate. Output alignment is 1 for all; temporary memory 8 for
//! Zstd. [`Nvcomp::alignments`] asks the loaded library.

pub mod batch;
pub mod library;
mod names;
pub mod status;

pub use batch::{split_batches, Batch, BatchArgs, Nvcomp, NvcompVersion};
pub use library::RawAlignments as Alignments;
pub use names::{RawStatus, LIBRARY_ENV, LIBRARY_NAMES, PIP_REQUIREMENT};
pub use status::{check_chunk_statuses, NvcompError, NvcompStatus};

/// A compression format nvCOMP decompresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// Raw Snappy (no framing), Parquet's SNAPPY.
    Snappy,
    /// Zstandard frames, Parquet's ZSTD.
    Zstd,
    /// Raw LZ4 blocks, Parquet's LZ4_RAW.
    Lz4,
    /// Gzip (RFC 1952, one member a chunk), Parquet's GZIP.
    Gzip,
    /// Raw Deflate (RFC 1951).
    Deflate,
}

impl Codec {
    /// Every codec.
    pub const ALL: [Codec; 5] = [
        Codec::Snappy,
        Codec::Zstd,
        Codec::Lz4,
        Codec::Gzip,
        Codec::Deflate,
    ];

    /// The nvCOMP codec for a Parquet column chunk's compression: `None`
    /// for UNCOMPRESSED (nothing to do) and for the codecs nvCOMP has no
    /// decoder for (legacy LZ4 with Hadoop framing, BROTLI, LZO); tell the
    /// two apart by comparing with `Compression::UNCOMPRESSED`.
    pub fn from_parquet(compression: ::parquet::basic::Compression) -> Option<Codec> {
        use ::parquet::basic::Compression;
        match compression {
            Compression::SNAPPY => Some(Codec::Snappy),
            Compression::ZSTD(_) => Some(Codec::Zstd),
            Compression::LZ4_RAW => Some(Codec::Lz4),
            Compression::GZIP(_) => Some(Codec::Gzip),
            _ => None,
        }
    }

    /// The largest chunk (compressed or decompressed) nvCOMP 6's
    /// decompressor for this codec accepts (`nvcomp*DecompressionMaxAllowedChunkSize`;
    /// for Gzip, the default "naive" algorithm's).
    pub fn max_chunk_bytes(self) -> usize {
        const MAX_31: u64 = (1 << 31) - 1;
        const MAX_32: u64 = (1 << 32) - 1;
        let max = match self {
            Codec::Snappy | Codec::Zstd => MAX_31,
            Codec::Lz4 | Codec::Gzip | Codec::Deflate => MAX_32,
        };
        usize::try_from(max).unwrap_or(usize::MAX)
    }
}

impl std::fmt::Display for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Codec::Snappy => "Snappy",
            Codec::Zstd => "Zstd",
            Codec::Lz4 => "LZ4",
            Codec::Gzip => "Gzip",
            Codec::Deflate => "Deflate",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::parquet::basic::{Compression, GzipLevel, ZstdLevel};

    #[test]
    fn parquet_codecs_map_to_nvcomp_codecs() {
        assert_eq!(
            Codec::from_parquet(Compression::SNAPPY),
            Some(Codec::Snappy)
        );
        assert_eq!(
            Codec::from_parquet(Compression::ZSTD(ZstdLevel::default())),
            Some(Codec::Zstd)
        );
        assert_eq!(Codec::from_parquet(Compression::LZ4_RAW), Some(Codec::Lz4));
        assert_eq!(
            Codec::from_parquet(Compression::GZIP(GzipLevel::default())),
            Some(Codec::Gzip)
        );
        assert_eq!(Codec::from_parquet(Compression::UNCOMPRESSED), None);
        assert_eq!(Codec::from_parquet(Compression::LZ4), None);
        assert_eq!(Codec::from_parquet(Compression::LZO), None);
    }

    #[test]
    fn codec_limits_and_names() {
        assert_eq!(Codec::Zstd.max_chunk_bytes(), (1 << 31) - 1);
        assert_eq!(Codec::Lz4.max_chunk_bytes() as u64, (1u64 << 32) - 1);
        assert_eq!(Codec::Lz4.to_string(), "LZ4");
        assert_eq!(
            library::symbols(Codec::Lz4).decompress,
            "nvcompBatchedLZ4DecompressAsync"
        );
        assert_eq!(
            library::symbols(Codec::Zstd).temp_size,
            "nvcompBatchedZstdDecompressGetTempSize"
        );
    }
}
