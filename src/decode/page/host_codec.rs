//! The codecs the host decompresses, for the pages nvCOMP cannot take:
//! Brotli (nvCOMP has no Brotli), legacy LZ4 pages that are not
//! Hadoop-framed (an LZ4 frame or one raw LZ4 block), and GZIP pages made
//! of several members (nvCOMP's Gzip stops after the first); and for those
//! nvCOMP would take unverified: ZSTD, GZIP (`DecompressPlace`). Pure: a
//! page's stored bytes in, exactly its header's decompressed size out.

use std::io::Read;

/// A codec run on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostCodec {
    /// BROTLI pages.
    Brotli,
    /// Legacy LZ4 (`Compression::LZ4`) pages without the Hadoop framing:
    /// an LZ4 frame, else one raw LZ4 block (arrow-rs's fallbacks).
    Lz4Legacy,
    /// GZIP pages (one member or several, one after another), each
    /// member's CRC-32 and length checked.
    GzipMembers,
    /// ZSTD pages (one frame or several), by libzstd, which refuses a
    /// stream it finds corrupt and checks a frame's checksum when it has
    /// one.
    Zstd,
}

impl std::fmt::Display for HostCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HostCodec::Brotli => "BROTLI",
            HostCodec::Lz4Legacy => "LZ4 (frame or raw block)",
            HostCodec::GzipMembers => "GZIP",
            HostCodec::Zstd => "ZSTD",
        })
    }
}

/// Why a page did not decompress on the host.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostCodecError {
    /// The stream is corrupt or truncated (Brotli, GZIP, an LZ4 frame).
    #[error("corrupt or truncated stream")]
    Stream(#[source] std::io::Error),
    /// Legacy LZ4: neither an LZ4 frame nor a raw LZ4 block of the page's
    /// size (the raw block's error).
    #[error("neither an LZ4 frame nor a raw LZ4 block of {expected} bytes")]
    Lz4 {
        /// The page header's decompressed size.
        expected: usize,
        /// The raw block's error.
        #[source]
        source: lz4_flex::block::DecompressError,
    },
    /// The stream ends before the page header's decompressed size.
    #[error("decompresses to {got} bytes, the page header says {expected}")]
    Short {
        /// The page header's decompressed size.
        expected: usize,
        /// Bytes the stream held.
        got: usize,
    },
    /// The stream holds more than the page header's decompressed size.
    #[error("decompresses to more than the {expected} bytes the page header says")]
    Long {
        /// The page header's decompressed size.
        expected: usize,
    },
}

/// Decompresses the page `src` with `codec` into `dst`, whose length is the
/// page header's decompressed size: any other size is an error, and no
/// more than `dst.len() + 1` bytes are ever produced (a lying page cannot
/// make the host allocate).
pub fn decompress_into(codec: HostCodec, src: &[u8], dst: &mut [u8]) -> Result<(), HostCodecError> {
    match codec {
        HostCodec::Brotli => read_exactly(brotli::Decompressor::new(src, 4096), dst),
        HostCodec::GzipMembers => read_exactly(flate2::read::MultiGzDecoder::new(src), dst),
        HostCodec::Lz4Legacy => lz4_legacy(src, dst),
        HostCodec::Zstd => {
            let decoder =
                zstd::stream::read::Decoder::with_buffer(src).map_err(HostCodecError::Stream)?;
            read_exactly(decoder, dst)
        }
    }
}

/// An LZ4 frame when it is one of exactly `dst.len()` bytes, else one raw
/// LZ4 block of that size.
fn lz4_legacy(src: &[u8], dst: &mut [u8]) -> Result<(), HostCodecError> {
    if read_exactly(lz4_flex::frame::FrameDecoder::new(src), dst).is_ok() {
        return Ok(());
    }
    let expected = dst.len();
    match lz4_flex::block::decompress_into(src, dst) {
        Ok(got) if got == expected => Ok(()),
        Ok(got) => Err(HostCodecError::Short { expected, got }),
        Err(source) => Err(HostCodecError::Lz4 { expected, source }),
    }
}

/// Fills `dst` from `reader`, which must then be at its end.
fn read_exactly(mut reader: impl Read, dst: &mut [u8]) -> Result<(), HostCodecError> {
    let expected = dst.len();
    let mut got = 0;
    while got < expected {
        match reader.read(&mut dst[got..]) {
            Ok(0) => return Err(HostCodecError::Short { expected, got }),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(HostCodecError::Stream(e)),
        }
    }
    let mut one = [0u8; 1];
    loop {
        match reader.read(&mut one) {
            Ok(0) => return Ok(()),
            Ok(_) => return Err(HostCodecError::Long { expected }),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(HostCodecError::Stream(e)),
        }
    }
}
