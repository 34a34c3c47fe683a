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
//! each copying its batches back; BENCHMARKS.md). Destinations are
//! allocated without zeroing: every byte is written by the copy before it
//! is read.

use std::ptr::NonNull;
use std::sync::Arc;

use arrow::buffer::{Buffer, MutableBuffer};

use super::{DeviceArrayError, DeviceBytes, MemoryLocation, Result};
use crate::cuda::{Device, Event, PinnedPool, PooledPinnedBuffer, Stream};

/// Bytes of one pinned staging chunk: large enough that a DMA runs at the
/// link's speed, small enough that two per copier stay cheap to keep.
const STAGING_CHUNK: usize = 8 << 20;

/// One range to copy from device memory: `len` bytes at address `src`.
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

/// Where the copies of device memory land.
pub(super) enum Target {
    /// Fresh 64-byte-aligned host buffers, through pinned staging.
    Fresh,
    /// One buffer of this pool, which the host buffers point into.
    Pinned(Arc<PinnedPool>),
}

/// Copies ranges of memory into host buffers, returned in queue order by
/// [`HostCopier::finish`].
pub(super) enum HostCopier {
    /// Host-readable memory: copied as each range is queued.
    Host(Vec<MutableBuffer>),
    /// CUDA memory: the ranges recorded, copied at the finish.
    Device {
        device: Device,
        ranges: Vec<Range>,
        target: Target,
    },
}

/// Where each range lies in one pinned buffer: 64-byte aligned, as arrow's
/// buffers are; and the buffer's length.
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
    /// A copier from memory at `location`; CUDA memory lands as `target`
    /// says (host-readable memory is copied into fresh buffers).
    pub(super) fn new(location: MemoryLocation, target: Target) -> Result<HostCopier> {
        if location.device_type.is_host_readable() {
            return Ok(HostCopier::Host(Vec::new()));
        }
        match location.cuda_ordinal() {
            Some(ordinal) => Ok(HostCopier::Device {
                device: Device::get(ordinal)?,
                ranges: Vec::new(),
                target,
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
            HostCopier::Device { ranges, .. } => {
                ranges.push(Range {
                    src: bytes.address(),
                    len: bytes.len(),
                });
                Ok(ranges.len() - 1)
            }
        }
    }

    /// Whether nothing is queued.
    pub(super) fn is_empty(&self) -> bool {
        match self {
            HostCopier::Host(staged) => staged.is_empty(),
            HostCopier::Device { ranges, .. } => ranges.is_empty(),
        }
    }

    /// Runs the copies and hands the buffers over, in queue order.
    pub(super) fn finish(self) -> Result<Vec<Buffer>> {
        match self {
            HostCopier::Host(staged) => Ok(staged.into_iter().map(Buffer::from).collect()),
            HostCopier::Device {
                device,
                ranges,
                target: Target::Fresh,
            } => copy_staged(device, &ranges),
            HostCopier::Device {
                device,
                ranges,
                target: Target::Pinned(pool),
            } => copy_pinned(device, &ranges, &pool),
        }
    }
}

/// A stream whose DMA may still write pinned memory of a pool: dropped
/// while armed (an error part way), it waits for the stream, so that no
/// copy writes a buffer after it went back to its pool. Declared before
/// the buffers it guards (fields and locals drop in that order).
struct Dma {
    stream: Stream,
    armed: bool,
}

impl Dma {
    fn new(device: Device) -> Result<Dma> {
        Ok(Dma {
            stream: Stream::new(device)?,
            armed: false,
        })
    }
}

impl Drop for Dma {
    fn drop(&mut self) {
        if self.armed {
            // Best effort: the pinned buffers go back to their pool next.
            let _ = self.stream.synchronize();
        }
    }
}

/// Every range into a fresh host buffer, through two staging chunks.
fn copy_staged(device: Device, ranges: &[Range]) -> Result<Vec<Buffer>> {
    let mut dsts: Vec<MutableBuffer> = ranges
        .iter()
        .map(|r| MutableBuffer::with_capacity(r.len))
        .collect();
    let total: usize = ranges.iter().map(|r| r.len).sum();
    if total > 0 {
        Staging::new(device, total)?.copy(ranges, &mut dsts)?;
    }
    for (dst, range) in dsts.iter_mut().zip(ranges) {
        // SAFETY: `Staging::copy` wrote all `len` bytes of each destination
        // (its capacity is at least `len`).
        unsafe { dst.set_len(range.len) };
    }
    Ok(dsts.into_iter().map(Buffer::from).collect())
}

/// DMA of every range into one pinned buffer of `pool`, waited for with a
/// blocking event; arrow buffers over its pieces, which hold it.
fn copy_pinned(device: Device, ranges: &[Range], pool: &Arc<PinnedPool>) -> Result<Vec<Buffer>> {
    let (offsets, total) = pinned_offsets(ranges);
    let mut pinned = pool.allocate(total.max(1))?;
    let mut dma = Dma::new(device)?;
    let mut done = Event::blocking(device)?;
    for (range, &at) in ranges.iter().zip(&offsets) {
        if range.len > 0 {
            // SAFETY: `at + len <= total` bytes of the pinned buffer, which
            // goes back to the pool only after `dma` waited for the stream;
            // the source lies within a device range the caller keeps alive.
            unsafe {
                let dst = pinned.as_mut_ptr().add(at);
                dma.stream.copy_to_host(dst, range.src, range.len)?;
            }
            dma.armed = true;
        }
    }
    done.record(&dma.stream)?;
    done.synchronize()?;
    dma.armed = false;
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
    /// First: waits for the stream before the chunks go back to the pool.
    dma: Dma,
    chunks: [PooledPinnedBuffer; 2],
    done: [Event; 2],
    placed: [Vec<Placed>; 2],
}

impl Staging {
    fn new(device: Device, total: usize) -> Result<Staging> {
        let pool = PinnedPool::shared(device);
        let chunk = total.min(STAGING_CHUNK);
        Ok(Staging {
            dma: Dma::new(device)?,
            chunks: [pool.allocate(chunk)?, pool.allocate(chunk)?],
            done: [Event::blocking(device)?, Event::blocking(device)?],
            placed: [Vec::new(), Vec::new()],
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
                    self.dma
                        .stream
                        .copy_to_host(at, range.src + done as u64, len)?;
                }
                self.dma.armed = true;
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
        self.dma.armed = false;
        Ok(())
    }

    /// Marks the end of chunk `slot`'s DMA.
    fn close(&mut self, slot: usize) -> Result<()> {
        Ok(self.done[slot].record(&self.dma.stream)?)
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
