//! One column gathered to its kept rows on the GPU (values, bitmaps,
//! views, offsets and data, nested children), into a [`Pending`] column
//! that is built once the null counts are read back.

use arrow::datatypes::DataType;

use super::compact::{unsupported, Compaction, Rows};
use super::FilterError;
use crate::decode::array::{is_flat, DeviceArrayError, DeviceBytes, DeviceColumn};
use crate::decode::kernels::{CompactBits, CompactExpand, CompactGather, CompactLengths};

/// A compacted column whose buffers are queued: its validity's null count
/// is the counter at its index, read back at the end.
#[derive(Debug)]
pub(super) struct Pending {
    data_type: DataType,
    len: usize,
    validity: Option<(DeviceBytes, usize)>,
    buffers: Vec<DeviceBytes>,
    children: Vec<Pending>,
}

impl Pending {
    /// The column, with the null counts `counts` read back.
    pub(super) fn build(self, counts: &[u32]) -> Result<DeviceColumn, DeviceArrayError> {
        if self.data_type == DataType::Null {
            return Ok(DeviceColumn::nulls(self.len));
        }
        let null_count = self
            .validity
            .as_ref()
            .map_or(0, |(_, i)| counts.get(*i).map_or(0, |&c| c as usize));
        let validity = self.validity.map(|(bytes, _)| bytes);
        if is_flat(&self.data_type) {
            return DeviceColumn::new(
                self.data_type,
                self.len,
                Some(null_count),
                validity,
                self.buffers,
            );
        }
        let children = self
            .children
            .into_iter()
            .map(|child| child.build(counts))
            .collect::<Result<Vec<_>, _>>()?;
        DeviceColumn::with_children(
            self.data_type,
            self.len,
            Some(null_count),
            validity,
            self.buffers,
            children,
        )
    }
}

/// The bytes per value of a fixed-width type (`None` for the others).
fn fixed_width(data_type: &DataType) -> Option<usize> {
    match data_type {
        DataType::FixedSizeBinary(n) => usize::try_from(*n).ok(),
        DataType::Boolean | DataType::Null => None,
        other => other.primitive_width(),
    }
}

impl Compaction<'_> {
    /// Queues `column` cut to `rows`.
    pub(super) fn column(
        &mut self,
        column: &DeviceColumn,
        rows: &Rows,
    ) -> Result<Pending, FilterError> {
        let first = column.offset() as u64 + rows.base;
        let validity = match column.validity() {
            Some(bits) => {
                let (i, unset) = self.counter()?;
                Some((self.bits(bits, first, rows, unset)?, i))
            }
            None => None,
        };
        let data_type = column.data_type().clone();
        let buffers = column.buffers();
        let (buffers, children) = match &data_type {
            DataType::Null => (Vec::new(), Vec::new()),
            DataType::Boolean => (
                vec![self.bits(value_buffer(column, 0)?, first, rows, 0)?],
                Vec::new(),
            ),
            DataType::Utf8View | DataType::BinaryView => {
                let views = self.gather(value_buffer(column, 0)?, first, 16, rows)?;
                let mut kept = vec![views];
                kept.extend(buffers[1..].iter().cloned());
                (kept, Vec::new())
            }
            DataType::Utf8 | DataType::Binary => (self.bytes(column, first, rows, 4)?, Vec::new()),
            DataType::LargeUtf8 | DataType::LargeBinary => {
                (self.bytes(column, first, rows, 8)?, Vec::new())
            }
            DataType::List(_) | DataType::Map(_, _) => self.list(column, first, rows, 4)?,
            DataType::LargeList(_) => self.list(column, first, rows, 8)?,
            DataType::FixedSizeList(_, size) => self.fixed_list(column, first, rows, *size)?,
            DataType::Struct(_) => {
                let inner = Rows {
                    base: first,
                    ..*rows
                };
                let children = column
                    .children()
                    .iter()
                    .map(|child| self.column(child, &inner))
                    .collect::<Result<Vec<_>, _>>()?;
                (Vec::new(), children)
            }
            other => match fixed_width(other) {
                Some(width) => (
                    vec![self.gather(value_buffer(column, 0)?, first, width, rows)?],
                    Vec::new(),
                ),
                None => {
                    return Err(unsupported(
                        &format!("a {other} column"),
                        "not a device column type",
                    ))
                }
            },
        };
        Ok(Pending {
            data_type,
            len: rows.k as usize,
            validity,
            buffers,
            children,
        })
    }

    /// The bits of `src` at the kept rows (from bit `first`), a fresh
    /// bitmap of whole u32 words; the unset bits added to the counter at
    /// `unset` (0: not counted).
    fn bits(
        &mut self,
        src: &DeviceBytes,
        first: u64,
        rows: &Rows,
        unset: u64,
    ) -> Result<DeviceBytes, FilterError> {
        let dst = self.alloc(4 * (rows.k as usize).div_ceil(32))?;
        let b = CompactBits {
            src: src.address(),
            first,
            src_bits: 8 * src.len() as u64,
            rows: rows.list,
            k: rows.k,
            dst: dst.address(),
            unset,
            error: self.error(),
        };
        // SAFETY: `src` is a buffer of the batch, alive for the call, of
        // `src_bits` bits; `rows` holds `k` u32 and `dst` the words for
        // `k` bits, both held by the compaction, as are the counters.
        unsafe { self.gpu.kernels.compact_bits(&self.gpu.stream, &b)? };
        Ok(dst)
    }

    /// The `width`-byte items of `src` at the kept rows (from item
    /// `first`).
    fn gather(
        &mut self,
        src: &DeviceBytes,
        first: u64,
        width: usize,
        rows: &Rows,
    ) -> Result<DeviceBytes, FilterError> {
        let too_wide = || unsupported("a gather", format!("{} rows of {width} bytes", rows.k));
        let len = width.checked_mul(rows.k as usize).ok_or_else(too_wide)?;
        let dst = self.alloc(len)?;
        if width == 0 {
            return Ok(dst);
        }
        let g = CompactGather {
            src: src.address(),
            first,
            src_count: (src.len() / width) as u64,
            width: u32::try_from(width).map_err(|_| too_wide())?,
            rows: rows.list,
            k: rows.k,
            dst: dst.address(),
            error: self.error(),
        };
        // SAFETY: `src` holds `src_count` items of `width` bytes (a buffer
        // of the batch, alive for the call); `rows` holds `k` u32 and
        // `dst` `k * width` bytes, held by the compaction.
        unsafe { self.gpu.kernels.compact_gather(&self.gpu.stream, &g)? };
        Ok(dst)
    }

    /// A list's (or map's) offsets of `width` bytes and its child, cut to
    /// the kept rows: the child keeps the kept lists' ranges.
    fn list(
        &mut self,
        column: &DeviceColumn,
        first: u64,
        rows: &Rows,
        width: u32,
    ) -> Result<(Vec<DeviceBytes>, Vec<Pending>), FilterError> {
        let child = column
            .children()
            .first()
            .ok_or_else(|| unsupported("a list", "without its child"))?;
        let (offsets, child_rows) = self.ranges(
            value_buffer(column, 0)?,
            width,
            first,
            rows,
            child.len() as u64,
        )?;
        Ok((vec![offsets], vec![self.column(child, &child_rows)?]))
    }

    /// A Utf8/Binary column's offsets of `width` bytes and data, cut to the
    /// kept rows (the kept values' bytes gathered, one after the other).
    fn bytes(
        &mut self,
        column: &DeviceColumn,
        first: u64,
        rows: &Rows,
        width: u32,
    ) -> Result<Vec<DeviceBytes>, FilterError> {
        let data = value_buffer(column, 1)?;
        let (offsets, byte_rows) = self.ranges(
            value_buffer(column, 0)?,
            width,
            first,
            rows,
            data.len() as u64,
        )?;
        let kept = self.gather(data, 0, 1, &byte_rows)?;
        Ok(vec![offsets, kept])
    }

    /// A fixed-size list's child cut to the kept lists' values.
    fn fixed_list(
        &mut self,
        column: &DeviceColumn,
        first: u64,
        rows: &Rows,
        size: i32,
    ) -> Result<(Vec<DeviceBytes>, Vec<Pending>), FilterError> {
        let child = column
            .children()
            .first()
            .ok_or_else(|| unsupported("a fixed-size list", "without its child"))?;
        let size = u32::try_from(size)
            .map_err(|_| unsupported("a fixed-size list", format!("size {size}")))?;
        let too_many = || unsupported("a fixed-size list", format!("{} values", child.len()));
        let total = u32::try_from(u64::from(rows.k) * u64::from(size)).map_err(|_| too_many())?;
        u32::try_from(child.len()).map_err(|_| too_many())?;
        let child_rows = self.alloc(4 * total as usize)?.address();
        // SAFETY: `rows` holds `k` u32 and `child_rows` `k * size` u32
        // (fitting u32), held by the compaction.
        unsafe {
            self.gpu.kernels.compact_fixed_rows(
                &self.gpu.stream,
                rows.list,
                rows.k,
                first,
                size,
                child_rows,
            )?
        };
        let inner = Rows {
            list: child_rows,
            k: total,
            base: 0,
        };
        Ok((Vec::new(), vec![self.column(child, &inner)?]))
    }

    /// New offsets (`width` bytes each) of the kept rows' ranges in
    /// `offsets` (from position `first`) and the child rows they keep, one
    /// range after the other. Reads the kept values' count back.
    fn ranges(
        &mut self,
        offsets: &DeviceBytes,
        width: u32,
        first: u64,
        rows: &Rows,
        child_len: u64,
    ) -> Result<(DeviceBytes, Rows), FilterError> {
        let limit = if width == 4 {
            i32::MAX as u64
        } else {
            u64::from(u32::MAX)
        };
        if child_len > u64::from(u32::MAX) {
            return Err(unsupported(
                "a list",
                format!("a child of {child_len} values"),
            ));
        }
        let lengths = self.alloc(4 * rows.k as usize)?.address();
        let l = CompactLengths {
            offsets: offsets.address(),
            width,
            offsets_count: (offsets.len() / width as usize) as u64,
            first,
            rows: rows.list,
            k: rows.k,
            child_len,
            lengths,
            error: self.error(),
        };
        // SAFETY: `offsets` holds `offsets_count` offsets (a buffer of the
        // batch, alive for the call); `rows` and `lengths` hold `k` u32,
        // held by the compaction, as is the error word.
        unsafe {
            self.gpu
                .kernels
                .compact_list_lengths(&self.gpu.stream, &l)?
        };
        let (scan, total) = self.scan(lengths, u64::from(rows.k), 4)?;
        if total > limit {
            return Err(unsupported("a list", format!("{total} kept values")));
        }
        let new_offsets = self.zeroed((rows.k as usize + 1) * width as usize)?;
        // SAFETY: `scan` is the scan of the `k` lengths, its scratch held;
        // `new_offsets` holds `k + 1` offsets of `width` bytes and the
        // total fits them (checked above).
        unsafe {
            self.gpu.kernels.compact_scan_write(
                &self.gpu.stream,
                &scan,
                width,
                new_offsets.address(),
            )?
        };
        let child_rows = self.alloc(4 * total as usize)?.address();
        let e = CompactExpand {
            new_offsets: new_offsets.address(),
            width,
            k: rows.k,
            offsets: offsets.address(),
            first,
            rows: rows.list,
            total,
            child_rows,
        };
        // SAFETY: the old offsets at the kept rows were checked by the
        // lengths kernel (the error word was clear when `scan` read the
        // total back); `child_rows` holds `total` u32, held by the
        // compaction.
        unsafe { self.gpu.kernels.compact_expand(&self.gpu.stream, &e)? };
        let child = Rows {
            list: child_rows,
            k: total as u32,
            base: 0,
        };
        Ok((new_offsets, child))
    }
}

/// Buffer `i` of `column`, or a layout error.
fn value_buffer(column: &DeviceColumn, i: usize) -> Result<&DeviceBytes, FilterError> {
    column.buffers().get(i).ok_or_else(|| {
        FilterError::Batch(DeviceArrayError::layout(
            column.data_type(),
            format!("no buffer {i}"),
        ))
    })
}
