//! Copies of device ranges into host buffers: a plain memcpy for
//! host-readable memory; for CUDA memory, either DMA into two pinned staging
//! chunks from the process's shared pool ([`PinnedPool::shared`]) taken in
//! turn, each emptied into fresh buffers while the other fills, or DMA
//! straight into one pinned buffer from a pool that the host buffers then
//! point into (no host copy; the pinned buffer goes back to its pool when
//! the last of them is dropped).
//!
//! A copy from device memory into pageable host memory is staged by the
//! driver through its own small pinned buffers and runs far below the
//! link's speed when many threads copy at once (DataFusion's partitions,
//! each copying its batches back: 8.4 GB of Q1's columns took 6.5 s of
//! copy time over 16 threads on the H100). Destinations are allocated
//! without zeroing: every byte is written by the copy before it is read.

use std::ptr::NonNull;
use std::sync::Arc;

use arrow::buffer::{Buffer, MutableBuffer};

use super::{DeviceArrayError, DeviceBytes, MemoryLocation, Result};
use crate::cuda::{Device, Event, PinnedPool, PooledPinnedBuffer, Stream};

/// Bytes of one pinned staging chunk: large enough that a DMA runs at the
/// link's speed, small enough that two per copier stay cheap to keep.
const STAGING_CHUNK: usize = 8 << 20;

/// One range to copy: from `src` (device address) into destination `dst`.
pub(super) struct Range {
    src: u64,
    len: usize,
}

/// Part of a range placed in a staging chunk, to be emptied into its
/// destination once the chunk's DMA is done.
struct Placed {
    dst: usize,
    dst_offset: usize,
    staged_at: usize,
    len: usize,
}

/// Copies device ranges into fresh 64-byte-aligned host buffers. Owns the
/// destinations until [`HostCopier::finish`], which returns them in queue
/// order.
pub(super) enum HostCopier {
    Host(Vec<MutableBuffer>),
    Cuda {
        device: Device,
        ranges: Vec<Range>,
        dsts: Vec<MutableBuffer>,
    },
    Pinned {
        device: Device,
        ranges: Vec<Range>,
        pool: Arc<PinnedPool>,
    },
}

/// Where each range of a [`HostCopier::Pinned`] lies in its one buffer:
/// 64-byte aligned, as arrow's buffers are.
fn pinned_offsets(ranges: &[Range]) -> (Vec<usize>, usize) {
    let mut at = 0;
    let offsets = ranges
        .iter()
        .map(|r| {
            let here = at;
            at = (at + r.len).next_multiple_of(64);
            here
        })
        .collect();
    (offsets, at)
}

impl HostCopier {
    /// A copier from memory at `location`.
    pub(super) fn new(location: MemoryLocation) -> Result<HostCopier> {
        if location.device_type.is_host_readable() {
            return Ok(HostCopier::Host(Vec::new()));
        }
        match location.cuda_ordinal() {
            Some(ordinal) => Ok(HostCopier::Cuda {
                device: Device::get(ordinal)?,
                ranges: Vec::new(),
                dsts: Vec::new(),
            }),
            None => Err(DeviceArrayError::Unreachable(location)),
        }
    }

    /// A copier from CUDA memory at `location` into one buffer of `pool`,
    /// which the returned host buffers point into.
    pub(super) fn pinned(location: MemoryLocation, pool: Arc<PinnedPool>) -> Result<HostCopier> {
        match location.cuda_ordinal() {
            Some(ordinal) => Ok(HostCopier::Pinned {
                device: Device::get(ordinal)?,
                ranges: Vec::new(),
                pool,
            }),
            None => Err(DeviceArrayError::Unreachable(location)),
        }
    }

    /// Queues the copy of `bytes` (which the caller keeps alive until
    /// [`HostCopier::finish`]); returns its index among the results.
    pub(super) fn queue(&mut self, bytes: &DeviceBytes) -> Result<usize> {
        match self {
            HostCopier::Host(staged) => {
                let mut dst = MutableBuffer::with_capacity(bytes.len());
                if !bytes.is_empty() {
                    let src = std::ptr::with_exposed_provenance::<u8>(bytes.address() as usize);
                    // SAFETY: `DeviceMemory` promises `len` host-readable bytes
                    // at the address while `bytes` lives.
                    let src = unsafe { std::slice::from_raw_parts(src, bytes.len()) };
                    dst.extend_from_slice(src);
                }
                staged.push(dst);
                Ok(staged.len() - 1)
            }
            HostCopier::Cuda { ranges, dsts, .. } => {
                ranges.push(Range {
                    src: bytes.address(),
                    len: bytes.len(),
                });
                dsts.push(MutableBuffer::with_capacity(bytes.len()));
                Ok(dsts.len() - 1)
            }
            HostCopier::Pinned { ranges, .. } => {
                ranges.push(Range {
                    src: bytes.address(),
                    len: bytes.len(),
                });
                Ok(ranges.len() - 1)
            }
        }
    }

    /// Runs the copies and hands the buffers over, in queue order.
    pub(super) fn finish(self) -> Result<Vec<Buffer>> {
        let dsts = match self {
            HostCopier::Host(staged) => staged,
            HostCopier::Cuda {
                device,
                ranges,
                mut dsts,
            } => {
                let total: usize = ranges.iter().map(|r| r.len).sum();
                if total > 0 {
                    Staging::new(device, total)?.copy(&ranges, &mut dsts)?;
                }
                for (dst, range) in dsts.iter_mut().zip(&ranges) {
                    // SAFETY: `Staging::copy` wrote all `len` bytes of each
                    // destination (its capacity is at least `len`).
                    unsafe { dst.set_len(range.len) };
                }
                dsts
            }
            HostCopier::Pinned {
                device,
                ranges,
                pool,
            } => return copy_pinned(device, &ranges, &pool),
        };
        Ok(dsts.into_iter().map(Buffer::from).collect())
    }
}

/// DMA of every range into one pinned buffer of `pool`, waited for with a
/// blocking event; arrow buffers over its pieces, which hold it.
fn copy_pinned(device: Device, ranges: &[Range], pool: &Arc<PinnedPool>) -> Result<Vec<Buffer>> {
    let (offsets, total) = pinned_offsets(ranges);
    let mut pinned = pool.allocate(total.max(1))?;
    let stream = Stream::new(device)?;
    let mut done = Event::blocking(device)?;
    let queued = (|| -> Result<()> {
        for (range, &at) in ranges.iter().zip(&offsets) {
            if range.len > 0 {
                // SAFETY: `at + len <= total` bytes of the pinned buffer,
                // which is not handed out nor freed before the event below
                // is waited for; the source lies within a device range the
                // caller keeps alive.
                unsafe {
                    let dst = pinned.as_mut_ptr().add(at);
                    stream.copy_to_host(dst, range.src, range.len)?;
                }
            }
        }
        done.record(&stream)?;
        done.synchronize()?;
        Ok(())
    })();
    if let Err(e) = queued {
        // No DMA may still write the buffer once it is back in the pool.
        let _ = stream.synchronize();
        return Err(e);
    }
    let base = pinned.as_ptr();
    let owner: Arc<PooledPinnedBuffer> = Arc::new(pinned);
    Ok(ranges
        .iter()
        .zip(&offsets)
        .map(|(range, &at)| {
            if range.len == 0 {
                return Buffer::from(MutableBuffer::new(0));
            }
            // SAFETY: `base + at` is inside the pinned allocation (non-null),
            // `len` initialised bytes follow it, and `owner` keeps the
            // allocation alive (and out of the pool) while any buffer
            // points into it.
            unsafe {
                let ptr = NonNull::new_unchecked(base.add(at).cast_mut());
                Buffer::from_custom_allocation(ptr, range.len, owner.clone())
            }
        })
        .collect())
}

/// Two pinned chunks, the stream their DMA runs on and an event each.
struct Staging {
    stream: Stream,
    chunks: [PooledPinnedBuffer; 2],
    done: [Event; 2],
    placed: [Vec<Placed>; 2],
    /// Whether DMA may still be writing a chunk (waited for on drop).
    in_flight: bool,
}

impl Staging {
    fn new(device: Device, total: usize) -> Result<Staging> {
        let pool = PinnedPool::shared(device);
        let chunk = total.min(STAGING_CHUNK);
        Ok(Staging {
            stream: Stream::new(device)?,
            chunks: [pool.allocate(chunk)?, pool.allocate(chunk)?],
            done: [Event::blocking(device)?, Event::blocking(device)?],
            placed: [Vec::new(), Vec::new()],
            in_flight: false,
        })
    }

    /// Copies every range into its destination (capacity at least its
    /// length): ranges are cut and packed into the chunk being filled;
    /// when it is full its DMA is closed by its event and the other chunk,
    /// once its own DMA is done, is emptied and filled next.
    fn copy(mut self, ranges: &[Range], dsts: &mut [MutableBuffer]) -> Result<()> {
        let chunk = self.chunks[0].len();
        let mut slot = 0;
        let mut fill = 0;
        for (dst, range) in ranges.iter().enumerate() {
            let mut done = 0;
            while done < range.len {
                if fill == chunk {
                    self.close(slot)?;
                    slot ^= 1;
                    self.empty(slot, dsts)?;
                    fill = 0;
                }
                let len = (range.len - done).min(chunk - fill);
                // SAFETY: `fill + len <= chunk` bytes of pinned staging,
                // kept (and not reused) until the chunk's event is waited
                // for; the source lies within a device range the caller
                // keeps alive.
                unsafe {
                    let at = self.chunks[slot].as_mut_ptr().add(fill);
                    self.stream.copy_to_host(at, range.src + done as u64, len)?;
                }
                self.in_flight = true;
                self.placed[slot].push(Placed {
                    dst,
                    dst_offset: done,
                    staged_at: fill,
                    len,
                });
                fill += len;
                done += len;
            }
        }
        self.close(slot)?;
        self.empty(slot ^ 1, dsts)?;
        self.empty(slot, dsts)?;
        self.in_flight = false;
        Ok(())
    }

    /// Marks the end of chunk `slot`'s DMA.
    fn close(&mut self, slot: usize) -> Result<()> {
        Ok(self.done[slot].record(&self.stream)?)
    }

    /// Waits for chunk `slot`'s DMA and copies its parts out.
    fn empty(&mut self, slot: usize, dsts: &mut [MutableBuffer]) -> Result<()> {
        if self.placed[slot].is_empty() {
            return Ok(());
        }
        self.done[slot].synchronize()?;
        for part in self.placed[slot].drain(..) {
            let from = &self.chunks[slot][part.staged_at..part.staged_at + part.len];
            let dst = &mut dsts[part.dst];
            // SAFETY: the destination's capacity is at least its range's
            // length, and `dst_offset + len` lies within it.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    from.as_ptr(),
                    dst.as_mut_ptr().add(part.dst_offset),
                    part.len,
                );
            }
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if self.in_flight {
            // Best effort: the chunks go back to the shared pool after
            // this returns, and no DMA may write them then.
            let _ = self.stream.synchronize();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_pieces_start_on_64_byte_boundaries_and_do_not_overlap() {
        let ranges: Vec<Range> = [5usize, 0, 64, 65, 1]
            .iter()
            .map(|&len| Range { src: 0, len })
            .collect();
        let (offsets, total) = pinned_offsets(&ranges);
        assert_eq!(offsets, vec![0, 64, 64, 128, 256]);
        assert_eq!(total, 320);
        for (r, w) in ranges
            .iter()
            .zip(&offsets)
            .zip(offsets.iter().skip(1))
            .map(|((r, a), b)| (r.len + a, *b))
        {
            assert!(r <= w);
        }
    }
}
