//! The values' buffers of BYTE_ARRAY DELTA_BYTE_ARRAY pages.
//!
//! A DELTA_BYTE_ARRAY value is the first `prefix` bytes of the value before
//! it, then its own suffix: its bytes lie nowhere in the page, so the
//! kernels materialize the values, and Utf8View/BinaryView views of those
//! over 12 bytes point into that copy, which the array must own. Its size
//! is only known once the page's prefix and suffix lengths are decoded (a
//! bound from the page's size alone is quadratic: a long shared prefix is
//! stored once and repeated by every value), and the page's bytes are
//! only on the device (decompressed by nvCOMP). So a row group with such
//! pages takes one more step before its kernels, and the decoder's only
//! wait on the device besides the row group's own event:
//!
//! 1. `gds_dba_sizes` decodes every such page's lengths into its scratch
//!    (where `gds_decode_pages` reads them again) and writes its values'
//!    bytes into its task (`value_bytes`); the task array is copied back
//!    and an event recorded ([`queue_dba_sizes`], from the group's
//!    queueing);
//! 2. the row group is left pending (`InFlight::kernels_pending`): the
//!    decoder queues the rest on one of `Gpu::late_streams` once the event
//!    has completed, seen without waiting after each group it queues, or
//!    waited for when the row group's batch is wanted; so the decoder
//!    never holds the next groups' uploads and decompression back for it;
//! 3. one allocation holds every page's values, a slice each; each page's
//!    task is given its slice (`dict`, `dict_len`, `view_buffer_base`) and
//!    the index of that slice among its column's variadic buffers (after
//!    the row group's bytes and scratch: 2, 3, ...), and the task array is
//!    uploaded again ([`give_dba_buffers`]);
//! 4. the row group's kernels run as for any other row group:
//!    `gds_decode_pages` materializes the values into the slice and writes
//!    the views.
//!
//! Row groups without such pages skip all of it. The alternative, an
//! optimistic size with an overflow reported by the kernel and a retry,
//! has no wait at all but a second decode of the row group where the
//! guess is short; with step 2 the wait is off the decoder's path.

use super::decode_error::DecodeError;
use super::gpu_resources::Gpu;
use super::s2_upload_row_group::Staged;
use crate::cuda::Stream;
use crate::decode::array::DeviceBytes;
use crate::decode::kernels::task::{page_tasks_as_bytes, page_tasks_as_bytes_mut};
use crate::decode::kernels::PageTask;
use crate::decode::page::{Encoding, Kind};

/// Whether `t` is a BYTE_ARRAY DELTA_BYTE_ARRAY page task.
fn is_dba(t: &PageTask) -> bool {
    t.kind == Kind::ByteArray as u32 && t.encoding == Encoding::DeltaByteArray as u32
}

/// Each sized page's (task, offset in the buffer, bytes), and the
/// buffer's bytes: the slices back to back, 16-byte aligned. Pages whose
/// sizing failed get none (their error stands).
pub(crate) fn layout(tasks: &[PageTask]) -> (Vec<(usize, usize, usize)>, usize) {
    let mut places = Vec::new();
    let mut end = 0usize;
    for (k, t) in tasks.iter().enumerate() {
        if is_dba(t) && t.error == 0 {
            let len = t.value_bytes as usize;
            places.push((k, end, len));
            end = (end + len).next_multiple_of(16);
        }
    }
    (places, end)
}

/// Step 1 (see the module) for a staged row group with such pages, on its
/// stream, after its wait for its pages' bytes: the sizes are in the
/// pinned upload buffer once an event recorded behind this has completed.
pub(crate) fn queue_dba_sizes(
    gpu: &Gpu,
    stream: &Stream,
    s: &mut Staged,
) -> Result<(), DecodeError> {
    let bytes = s.work_launch.n_tasks as usize * std::mem::size_of::<PageTask>();
    // SAFETY: the tasks describe the row group's allocations, kept in `s`
    // until its event; the pinned upload buffer holds the task array at
    // its start (`stage::upload_tasks`) and outlives the copy, which the
    // caller's event follows.
    unsafe {
        gpu.kernels
            .dba_sizes(stream, s.work_launch.tasks, s.work_launch.n_tasks)?;
        stream.copy_to_host(s._up.as_mut_ptr(), s.work_launch.tasks, bytes)?;
    }
    Ok(())
}

/// Step 3 (see the module), once the event behind [`queue_dba_sizes`] has
/// completed: the buffers given and the task array uploaded on `stream`.
pub(crate) fn give_dba_buffers(
    gpu: &Gpu,
    stream: &Stream,
    s: &mut Staged,
) -> Result<(), DecodeError> {
    let n = s.work_launch.n_tasks as usize;
    let bytes = n * std::mem::size_of::<PageTask>();
    let mut tasks = vec![PageTask::default(); n];
    page_tasks_as_bytes_mut(&mut tasks).copy_from_slice(&s._up[..bytes]);
    let (places, total) = layout(&tasks);
    let buffer = DeviceBytes::from_pooled(gpu.pool.allocate(total.max(1))?);
    for (k, at, len) in places {
        let ci = s.task_pages[k].column;
        let slice = buffer.slice(at, len)?;
        let t = &mut tasks[k];
        t.dict = slice.address();
        t.dict_len = len as u32;
        t.view_buffer_base = slice.address();
        let column = &mut s.columns[ci];
        // Views columns export their slices; decimals only read them.
        if !column.variadic.is_empty() {
            t.view_buffer_index = column.variadic.len() as u32;
            column.variadic.push(slice);
        }
    }
    s._up[..bytes].copy_from_slice(page_tasks_as_bytes(&tasks));
    // SAFETY: as above: the pinned buffer and the task array are kept until
    // the row group's event, behind which this copy runs.
    unsafe { stream.copy_to_device(s.work_launch.tasks, s._up.as_ptr(), bytes)? };
    s._inputs.push(buffer);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_aligned_and_skip_failed_and_other_pages() {
        let dba = |bytes: u32, error: u32| PageTask {
            kind: Kind::ByteArray as u32,
            encoding: Encoding::DeltaByteArray as u32,
            value_bytes: bytes,
            error,
            ..PageTask::default()
        };
        let other = PageTask {
            kind: Kind::ByteArray as u32,
            encoding: Encoding::Plain as u32,
            value_bytes: 99,
            ..PageTask::default()
        };
        let tasks = [dba(5, 0), other, dba(40, 17), dba(0, 0), dba(33, 0)];
        let (places, total) = layout(&tasks);
        assert_eq!(places, vec![(0, 0, 5), (3, 16, 0), (4, 16, 33)]);
        assert_eq!(total, 64);
        assert_eq!(layout(&[]), (vec![], 0));
    }
}
