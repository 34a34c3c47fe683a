//! CRC-32 (IEEE, the value of Python's `zlib.crc32`) of bytes where they landed.

use crate::cuda::CudaError;
use crate::cuda::DeviceBuffer;

/// Bytes read back from the device per step (bounded host memory).
pub(crate) const READBACK_CHUNK: usize = 64 << 20;

/// CRC-32 of host bytes.
pub fn crc32_host(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// CRC-32 of `len` bytes of a device buffer starting at `offset`, read back
/// in chunks of `READBACK_CHUNK` (64 MiB).
pub fn crc32_device(buf: &DeviceBuffer, offset: usize, len: usize) -> Result<u32, CudaError> {
    let mut hasher = crc32fast::Hasher::new();
    let mut host = vec![0u8; READBACK_CHUNK.min(len.max(1))];
    let mut done = 0;
    while done < len {
        let n = host.len().min(len - done);
        buf.copy_to_host(offset + done, &mut host[..n])?;
        hasher.update(&host[..n]);
        done += n;
    }
    Ok(hasher.finalize())
}

#[cfg(test)]
mod tests {
    #[test]
    fn matches_zlib_crc32() {
        // zlib.crc32(b"123456789") == 0xCBF43926, the standard check value.
        assert_eq!(super::crc32_host(b"123456789"), 0xCBF4_3926);
        assert_eq!(super::crc32_host(b""), 0);
    }
}
