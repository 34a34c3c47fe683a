//! A batch's compaction in phases (the scan of its mask queued; the kept
//! rows' count read back; the kept rows listed and every column's gather
//! queued; the null counts read back), so that several batches can go
//! through each phase together and the host waits once per phase for all
//! of them ([`FilterGpu::compact_many`]); one batch through all of them
//! is [`FilterGpu::compact`]. The device work of each phase is
//! `compact`'s ([`Compaction`]) and `compact_column`'s.

use std::sync::Arc;

use super::compact::{bitmaps, unsupported, Compaction};
use super::compact_column::Pending;
use super::{DeviceMask, FilterError, FilterGpu};
use crate::decode::array::{DeviceArrayError, DeviceBatch};
use crate::decode::kernels::CompactScan;

impl FilterGpu {
    /// `batch` with only the rows `mask` keeps, in order; `None` when it
    /// keeps none (the batch itself when it keeps all). Waits for the
    /// batch's ready event; the batch returned is ready (no event). Every
    /// column type of device batches is taken: fixed width, booleans,
    /// views (their data buffers shared), Utf8/Binary and their Large
    /// forms, Null, and List, LargeList, Map, FixedSizeList and Struct of
    /// those, a kept row keeping its whole nested value.
    pub fn compact(
        &self,
        batch: &DeviceBatch,
        mask: &DeviceMask,
    ) -> Result<Option<DeviceBatch>, FilterError> {
        self.start(batch, mask, None)?.count()?.gather()?.finish()
    }

    /// [`FilterGpu::compact`] of several batches, each with its queued
    /// mask and that mask's status word: every batch goes through each
    /// phase (the scan of its mask; its count read back; the kept rows
    /// listed and the gathers queued; the null counts read back) before
    /// any goes through the next, so that the host waits for the GPU once
    /// per read-back phase for all of them (the first read back of a phase
    /// waits; the others find their work done), not once per phase and
    /// batch.
    pub(super) fn compact_many(
        &self,
        work: &[(&DeviceBatch, &DeviceMask, Option<u64>)],
    ) -> Result<Vec<Option<DeviceBatch>>, FilterError> {
        let mut phases = Vec::with_capacity(work.len());
        for &(batch, mask, status) in work {
            phases.push(self.start(batch, mask, status)?);
        }
        let mut counted = Vec::with_capacity(phases.len());
        for phase in phases {
            counted.push(phase.count()?);
        }
        let mut gathered = Vec::with_capacity(counted.len());
        for phase in counted {
            gathered.push(phase.gather()?);
        }
        gathered.into_iter().map(CompactPhase::finish).collect()
    }

    /// The first phase: `batch` and `mask` checked, the mask's scan
    /// queued (or the answer known without the GPU).
    fn start<'a, 'b>(
        &'a self,
        batch: &'b DeviceBatch,
        mask: &'b DeviceMask,
        mask_status: Option<u64>,
    ) -> Result<CompactPhase<'a, 'b>, FilterError> {
        if mask.len() != batch.num_rows() {
            return Err(FilterError::Batch(DeviceArrayError::Batch(format!(
                "a mask of {} rows for a batch of {}",
                mask.len(),
                batch.num_rows()
            ))));
        }
        self.check_mask(mask)?;
        if batch.device_ordinal() != Some(self.device().ordinal()) {
            return Err(FilterError::Batch(DeviceArrayError::Batch(format!(
                "a batch on {} filtered on CUDA device {}",
                batch.location(),
                self.device().ordinal()
            ))));
        }
        if batch.num_rows() == 0 {
            return Ok(CompactPhase::Done(None));
        }
        batch.wait()?;
        let bitmaps = batch.columns().iter().map(bitmaps).sum();
        let mut c = Compaction::new(self, bitmaps, mask_status)?;
        let scan = c.queue_mask_scan(mask)?;
        Ok(CompactPhase::Scanned {
            batch,
            mask,
            c,
            scan,
        })
    }
}

/// One batch's compaction between its phases ([`FilterGpu::compact_many`]).
enum CompactPhase<'a, 'b> {
    /// Known without more work on the GPU: no row kept (`None`), or every
    /// row (the batch itself).
    Done(Option<DeviceBatch>),
    /// The mask's scan queued, its total not read back.
    Scanned {
        batch: &'b DeviceBatch,
        mask: &'b DeviceMask,
        c: Compaction<'a>,
        scan: CompactScan,
    },
    /// The kept rows' count `k` read back.
    Counted {
        batch: &'b DeviceBatch,
        mask: &'b DeviceMask,
        c: Compaction<'a>,
        scan: CompactScan,
        k: u64,
    },
    /// The gathers queued, their null counts not read back.
    Gathered {
        batch: &'b DeviceBatch,
        c: Compaction<'a>,
        k: u32,
        pending: Vec<Pending>,
    },
}

impl CompactPhase<'_, '_> {
    /// The second phase: the kept rows' count read back, with the mask's
    /// status word (a corrupt program or column table fails here, before
    /// any column is gathered).
    fn count(self) -> Result<Self, FilterError> {
        let CompactPhase::Scanned {
            batch,
            mask,
            mut c,
            scan,
        } = self
        else {
            return Ok(self);
        };
        let k = c.read_total(scan.total)?;
        Ok(CompactPhase::Counted {
            batch,
            mask,
            c,
            scan,
            k,
        })
    }

    /// The third phase: the kept rows listed and every column's gather
    /// queued.
    fn gather(self) -> Result<Self, FilterError> {
        let CompactPhase::Counted {
            batch,
            mask,
            mut c,
            scan,
            k,
        } = self
        else {
            return Ok(self);
        };
        let (rows, k) = c.list_kept_rows(mask, &scan, k)?;
        if k == 0 {
            return Ok(CompactPhase::Done(None));
        }
        if k == batch.num_rows() as u64 {
            return Ok(CompactPhase::Done(Some(batch.clone())));
        }
        let mut pending = Vec::with_capacity(batch.num_columns());
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            pending.push(
                c.column(column, &rows)
                    .map_err(|e| in_column(e, field.name()))?,
            );
        }
        Ok(CompactPhase::Gathered {
            batch,
            c,
            k: rows.k,
            pending,
        })
    }

    /// The last phase: the null counts read back (the gathers done), the
    /// compacted batch built.
    fn finish(self) -> Result<Option<DeviceBatch>, FilterError> {
        let CompactPhase::Gathered {
            batch,
            mut c,
            k,
            pending,
        } = self
        else {
            return match self {
                CompactPhase::Done(done) => Ok(done),
                _ => Err(unsupported("a compaction", "finished before its gathers")),
            };
        };
        let counts = c.finish()?;
        let mut columns = Vec::with_capacity(pending.len());
        for (field, p) in batch.schema().fields().iter().zip(pending) {
            columns.push(p.build(&counts).map_err(|e| e.in_column(field.name()))?);
        }
        let ready = None;
        Ok(Some(DeviceBatch::try_new(
            Arc::clone(batch.schema()),
            k as usize,
            columns,
            batch.location(),
            ready,
        )?))
    }
}

/// `e` about the column named `name` (array errors say so).
fn in_column(e: FilterError, name: &str) -> FilterError {
    match e {
        FilterError::Batch(e) => FilterError::Batch(e.in_column(name)),
        other => other,
    }
}
