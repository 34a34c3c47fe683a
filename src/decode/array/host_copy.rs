//! Copies of device ranges into fresh host buffers: a plain memcpy for
//! host-readable memory; for CUDA memory, DMA into two pinned staging
//! chunks from the process's shared pool ([`PinnedPool::shared`]) taken in
//! turn, each emptied into the destinations while the other fills.
//!
//! A copy from device memory into pageable host memory is staged by the
//! driver through its own small pinned buffers and runs far below the
//! link's speed when many threads copy at once (DataFusion's partitions,
//! each copying its batches back: 8.4 GB of Q1's columns took 6.5 s of
//! copy time over 16 threads on the H100). Destinations are allocated
//! without zeroing: every byte is written by the copy before it is read.

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
        };
        Ok(dsts.into_iter().map(Buffer::from).collect())
    }
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
            done: [Event::new(device)?, Event::new(device)?],
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
