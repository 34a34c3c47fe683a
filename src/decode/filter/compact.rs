//! A batch cut to its mask's rows on the GPU (stream compaction).
//!
//! The mask is scanned (tiles' sums, their prefix in one block) into the
//! kept rows' numbers, u32, and their count, read back once to size the
//! outputs. Every column is then gathered to those rows
//! (`compact_column`): values, bitmaps (the new null counts counted on the
//! device and read back together at the end), 16-byte views (the data
//! buffers shared, no string byte copied), and nested columns through
//! their children's rows: a struct's children take the struct's rows, a
//! list's child the kept lists' ranges one after the other (the lengths
//! scanned into the new offsets, read back once per list to size the
//! child). All work is queued on the filter's stream, behind the batch's
//! ready event waited on the host; the stream is synchronised before the
//! batch is returned (it carries no ready event), and whenever a call
//! fails, before any buffer goes back to the pool.

use super::evaluate::status_word;
use super::{DeviceMask, FilterError, FilterGpu};
use crate::decode::array::{DeviceArrayError, DeviceBytes, DeviceColumn};
use crate::decode::kernels::{
    compact_tiles, CompactScan, COMPACT_BAD_OFFSETS, COMPACT_OUT_OF_RANGE,
};

/// The rows of a column to keep: `k` u32 positions at device address
/// `list`, each counted from `base` values into the column (the column's
/// own offset comes on top).
#[derive(Debug, Clone, Copy)]
pub(super) struct Rows {
    pub(super) list: u64,
    pub(super) k: u32,
    pub(super) base: u64,
}

/// One compaction's device work: the buffers it allocated (held until the
/// stream is synchronised, outputs included, so that none goes back to the
/// pool while a kernel may still write it) and its counters: the error
/// word, then one unset-bit count per validity bitmap.
pub(super) struct Compaction<'a> {
    pub(super) gpu: &'a FilterGpu,
    held: Vec<DeviceBytes>,
    counters: u64,
    n_counters: usize,
    next_counter: usize,
    /// The evaluator's status word of a mask queued with the compaction
    /// (checked with the first read back).
    mask_status: Option<u64>,
}

impl<'a> Compaction<'a> {
    /// A compaction with room for `bitmaps` null counts.
    pub(super) fn new(
        gpu: &'a FilterGpu,
        bitmaps: usize,
        mask_status: Option<u64>,
    ) -> Result<Compaction<'a>, FilterError> {
        let mut c = Compaction {
            gpu,
            held: Vec::new(),
            counters: 0,
            n_counters: 1 + bitmaps,
            next_counter: 1,
            mask_status,
        };
        c.counters = c.zeroed(4 * c.n_counters)?.address();
        Ok(c)
    }

    /// A device buffer of `len` bytes (256-byte aligned), held until the
    /// end.
    pub(super) fn alloc(&mut self, len: usize) -> Result<DeviceBytes, FilterError> {
        let buffer = self.gpu.pool.allocate(len.max(16))?;
        let bytes = DeviceBytes::from_pooled(buffer).slice(0, len)?;
        self.held.push(bytes.clone());
        Ok(bytes)
    }

    /// As [`Compaction::alloc`], zeroed on the stream.
    pub(super) fn zeroed(&mut self, len: usize) -> Result<DeviceBytes, FilterError> {
        let bytes = self.alloc(len)?;
        // SAFETY: `bytes` is a fresh allocation of `len` bytes on the
        // stream's device, held until the stream is synchronised.
        unsafe { self.gpu.stream.memset_async(bytes.address(), 0, len)? };
        Ok(bytes)
    }

    /// The device address of the error word.
    pub(super) fn error(&self) -> u64 {
        self.counters
    }

    /// The index and device address of a fresh null count.
    pub(super) fn counter(&mut self) -> Result<(usize, u64), FilterError> {
        let i = self.next_counter;
        if i >= self.n_counters {
            return Err(unsupported("a null count", "more bitmaps than counted"));
        }
        self.next_counter += 1;
        Ok((i, self.counters + 4 * i as u64))
    }

    /// Queues the scan of `n` items at `values` (1: mask bytes, 4: u32);
    /// returns it (its tiles' prefix in `sums`) once its total is read
    /// back, with the total.
    pub(super) fn scan(
        &mut self,
        values: u64,
        n: u64,
        width: u32,
    ) -> Result<(CompactScan, u64), FilterError> {
        let scan = self.queue_scan(values, n, width)?;
        let total = self.read_total(scan.total)?;
        Ok((scan, total))
    }

    /// [`Compaction::scan`] queued, its total not read back.
    pub(super) fn queue_scan(
        &mut self,
        values: u64,
        n: u64,
        width: u32,
    ) -> Result<CompactScan, FilterError> {
        let tiles = usize::try_from(compact_tiles(n))
            .map_err(|_| unsupported("a scan", format!("{n} items")))?;
        let scan = CompactScan {
            values,
            n,
            width,
            sums: self.alloc(8 * tiles)?.address(),
            total: self.alloc(8)?.address(),
        };
        // SAFETY: `values` holds `n` items of `width` bytes (the caller's
        // buffer, alive for the call); `sums` and `total` were allocated
        // above at the sizes `CompactScan` asks, held until the end.
        unsafe { self.gpu.kernels.compact_scan(&self.gpu.stream, &scan)? };
        Ok(scan)
    }

    /// The u64 at `total` once the stream has passed its writes, after the
    /// error word is checked.
    pub(super) fn read_total(&mut self, total: u64) -> Result<u64, FilterError> {
        let mut words = [0u8; 16];
        let stream = &self.gpu.stream;
        // SAFETY: `words` lives until the synchronisation below; `total`
        // is 8 device bytes and the error word 4, held by `self`; the
        // mask's status word 4, held by the caller's queued mask.
        unsafe {
            stream.copy_to_host(words.as_mut_ptr(), total, 8)?;
            stream.copy_to_host(words[8..].as_mut_ptr(), self.error(), 4)?;
            if let Some(status) = self.mask_status.take() {
                stream.copy_to_host(words[12..].as_mut_ptr(), status, 4)?;
            }
        }
        stream.synchronize()?;
        status_word(u32::from_le_bytes([
            words[12], words[13], words[14], words[15],
        ]))?;
        check_error(u32::from_le_bytes([
            words[8], words[9], words[10], words[11],
        ]))?;
        Ok(u64::from_le_bytes(words[..8].try_into().unwrap_or([0; 8])))
    }

    /// The scan of `mask` queued (its total read by the caller).
    pub(super) fn queue_mask_scan(
        &mut self,
        mask: &DeviceMask,
    ) -> Result<CompactScan, FilterError> {
        self.queue_scan(mask.bytes().address(), mask.len() as u64, 1)
    }

    /// The kept rows of `mask` listed, from its scan and the total `k`
    /// read back (no list when none or all are kept).
    pub(super) fn list_kept_rows(
        &mut self,
        mask: &DeviceMask,
        scan: &CompactScan,
        k: u64,
    ) -> Result<(Rows, u64), FilterError> {
        let n = mask.len() as u64;
        let address = mask.bytes().address();
        let mut rows = Rows {
            list: 0,
            k: 0,
            base: 0,
        };
        if k == 0 || k == n {
            return Ok((rows, k));
        }
        rows.k = u32::try_from(k).map_err(|_| unsupported("a mask", format!("{k} rows")))?;
        rows.list = self.alloc(4 * k as usize)?.address();
        // SAFETY: the mask's `n` bytes are the caller's, alive for the
        // call; `sums` holds its scan; `rows` was allocated above for the
        // `k` rows the scan counted.
        unsafe {
            self.gpu.kernels.compact_mask_rows(
                &self.gpu.stream,
                address,
                n,
                scan.sums,
                rows.list,
            )?
        };
        Ok((rows, k))
    }

    /// Waits for every queued launch; returns the counters (error word
    /// checked).
    pub(super) fn finish(&mut self) -> Result<Vec<u32>, FilterError> {
        let mut bytes = vec![0u8; 4 * self.n_counters];
        let stream = &self.gpu.stream;
        // SAFETY: `bytes` holds the counters' length and lives until the
        // synchronisation below; the counters are held by `self`.
        unsafe { stream.copy_to_host(bytes.as_mut_ptr(), self.counters, bytes.len())? };
        stream.synchronize()?;
        let counts: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        check_error(counts[0])?;
        Ok(counts)
    }
}

impl Drop for Compaction<'_> {
    fn drop(&mut self) {
        // Best effort: no kernel may still write a buffer going back to
        // the pool (a synchronised stream returns at once).
        let _ = self.gpu.stream.synchronize();
    }
}

/// `FilterError::Unsupported` for `part`.
pub(super) fn unsupported(part: &str, why: impl Into<String>) -> FilterError {
    FilterError::Unsupported {
        part: format!("compaction of {part}"),
        why: why.into(),
    }
}

/// The error word's bits as an error.
fn check_error(word: u32) -> Result<(), FilterError> {
    let mut what = Vec::new();
    if word & COMPACT_BAD_OFFSETS != 0 {
        what.push("list offsets negative, decreasing or past their child");
    }
    if word & COMPACT_OUT_OF_RANGE != 0 {
        what.push("a row past its buffer's end");
    }
    if what.is_empty() {
        return Ok(());
    }
    Err(FilterError::Batch(DeviceArrayError::Batch(format!(
        "compaction found {}",
        what.join(" and ")
    ))))
}

/// Validity bitmaps of `column` and of its children.
pub(super) fn bitmaps(column: &DeviceColumn) -> usize {
    usize::from(column.validity().is_some()) + column.children().iter().map(bitmaps).sum::<usize>()
}

impl DeviceMask {
    /// A mask of `len` rows from device bytes (one per row, not 0 = keep),
    /// e.g. uploaded by a caller that computed it elsewhere.
    pub fn from_bytes(bytes: DeviceBytes, len: usize) -> Result<DeviceMask, FilterError> {
        if bytes.len() < len {
            return Err(FilterError::Batch(DeviceArrayError::OutOfRange {
                offset: 0,
                len,
                available: bytes.len(),
            }));
        }
        Ok(DeviceMask::new(bytes, len))
    }
}

impl FilterGpu {
    /// The rows `mask` keeps (one scan on the GPU, its total read back).
    pub fn count(&self, mask: &DeviceMask) -> Result<usize, FilterError> {
        self.check_mask(mask)?;
        let mut c = Compaction::new(self, 0, None)?;
        let (_, k) = c.scan(mask.bytes().address(), mask.len() as u64, 1)?;
        usize::try_from(k).map_err(|_| unsupported("a mask", format!("{k} rows")))
    }
}

impl FilterGpu {
    /// Fails unless `mask` fits the kernels (u32 rows) and lives on this
    /// filter's device.
    pub(super) fn check_mask(&self, mask: &DeviceMask) -> Result<(), FilterError> {
        if u32::try_from(mask.len()).is_err() {
            return Err(unsupported("a mask", format!("{} rows", mask.len())));
        }
        let location = mask.bytes().location();
        if location.cuda_ordinal() != Some(self.device().ordinal()) {
            return Err(FilterError::Batch(DeviceArrayError::Batch(format!(
                "a mask on {location} filtered on CUDA device {}",
                self.device().ordinal()
            ))));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::array::DeviceBatch;

    #[test]
    fn the_error_word_names_what_it_found() {
        assert!(check_error(0).is_ok());
        let text = check_error(COMPACT_BAD_OFFSETS | COMPACT_OUT_OF_RANGE)
            .unwrap_err()
            .to_string();
        assert!(text.contains("offsets"), "{text}");
        assert!(text.contains("past its buffer"), "{text}");
    }

    #[test]
    fn every_validity_bitmap_gets_a_null_count() {
        let batch = DeviceBatch::from_host(&crate::decode::array::nested_batch()).unwrap();
        let expected: usize = crate::decode::array::nested_batch()
            .columns()
            .iter()
            .map(|a| count_nulls_buffers(&a.to_data()))
            .sum();
        let ours: usize = batch.columns().iter().map(bitmaps).sum();
        assert_eq!(ours, expected);
    }

    fn count_nulls_buffers(data: &arrow::array::ArrayData) -> usize {
        usize::from(data.nulls().is_some())
            + data
                .child_data()
                .iter()
                .map(count_nulls_buffers)
                .sum::<usize>()
    }
}
