//! The column table the evaluator kernel reads: per program column, where
//! its values and validity bitmaps are in a batch, and the data buffers of
//! views.
//!
//! A column is [`COLUMN_WORDS`] little-endian `u64`s:
//!
//! | word | what |
//! |---|---|
//! | 0 | kind (`ValueKind`) in the low half, bytes per value in the high half |
//! | 1, 2 | the values' address and length in bytes (0, 0: none) |
//! | 3 | row 0's index in the values (bits for booleans) |
//! | 4 | first data buffer in the buffer table (low half), their count (high half) |
//! | 5 | validity bitmaps (at most 4: the column's own and its struct ancestors') |
//! | 6.. | per bitmap: address, length in bytes, row 0's bit |
//!
//! The buffer table is two `u64`s per data buffer: address, length.

use super::filter_columns::{ProgramColumn, ValueKind, MAX_PATH};
use super::{FilterError, GpuPredicate};
use crate::decode::array::{DeviceArrayError, DeviceBatch, DeviceBytes, DeviceColumn};

/// Words of one column in the table (`GDS_FILTER_COLUMN_WORDS`).
pub const COLUMN_WORDS: usize = 6 + 3 * MAX_PATH;

/// One validity bitmap of a column's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitmapSlot {
    /// Its address.
    pub address: u64,
    /// Its length in bytes.
    pub len: u64,
    /// The bit of row 0.
    pub bit_offset: u64,
}

/// One column of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSlot {
    /// How the kernel reads the values (`GDS_FILTER_KIND_*`).
    pub kind: u32,
    /// Bytes per value (fixed-width kinds).
    pub width: u32,
    /// The values' address (views for views, the bitmap for booleans).
    pub values: u64,
    /// The values' length in bytes.
    pub values_len: u64,
    /// Row 0's index in the values (bits for booleans).
    pub value_offset: u64,
    /// The first of its data buffers in the buffer table (views).
    pub first_buffer: u32,
    /// Its data buffers (views).
    pub n_buffers: u32,
    /// The validity bitmaps of its path (its ancestors' and its own): a
    /// row is NULL when any says so.
    pub validity: Vec<BitmapSlot>,
}

/// The column table of a program over one batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnTable {
    /// One slot per program column.
    pub columns: Vec<ColumnSlot>,
    /// The data buffers of views: (address, length).
    pub buffers: Vec<(u64, u64)>,
}

impl ColumnTable {
    /// The columns as the kernel reads them.
    pub fn column_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.columns.len() * COLUMN_WORDS * 8);
        for c in &self.columns {
            let mut words = [0u64; COLUMN_WORDS];
            words[0] = u64::from(c.kind) | u64::from(c.width) << 32;
            words[1] = c.values;
            words[2] = c.values_len;
            words[3] = c.value_offset;
            words[4] = u64::from(c.first_buffer) | u64::from(c.n_buffers) << 32;
            words[5] = c.validity.len().min(MAX_PATH) as u64;
            for (i, v) in c.validity.iter().take(MAX_PATH).enumerate() {
                words[6 + 3 * i] = v.address;
                words[7 + 3 * i] = v.len;
                words[8 + 3 * i] = v.bit_offset;
            }
            out.extend(words.iter().flat_map(|w| w.to_le_bytes()));
        }
        out
    }

    /// The buffer table as the kernel reads it.
    pub fn buffer_bytes(&self) -> Vec<u8> {
        self.buffers
            .iter()
            .flat_map(|(a, l)| a.to_le_bytes().into_iter().chain(l.to_le_bytes()))
            .collect()
    }
}

impl GpuPredicate {
    /// The column table of the program over `batch`, whose schema must be
    /// the compiled one (the columns the program reads: same place, same
    /// type). Addresses are the batch's buffers' (device or host).
    #[cfg(feature = "internals")]
    pub fn column_table(&self, batch: &DeviceBatch) -> Result<ColumnTable, FilterError> {
        self.table(batch)
    }

    /// As `column_table`.
    pub(crate) fn table(&self, batch: &DeviceBatch) -> Result<ColumnTable, FilterError> {
        let mut table = ColumnTable::default();
        for pc in self.program_columns() {
            let slot = slot(pc, batch, &mut table.buffers)?;
            table.columns.push(slot);
        }
        Ok(table)
    }
}

fn mismatch(pc: &ProgramColumn, problem: String) -> FilterError {
    FilterError::Batch(DeviceArrayError::Batch(format!(
        "filter column {:?}: {problem}",
        pc.name
    )))
}

/// The slot of `pc` in `batch`, its data buffers appended to `buffers`.
fn slot(
    pc: &ProgramColumn,
    batch: &DeviceBatch,
    buffers: &mut Vec<(u64, u64)>,
) -> Result<ColumnSlot, FilterError> {
    let mut column: Option<&DeviceColumn> = None;
    let mut validity = Vec::new();
    let mut base = 0usize;
    for &i in &pc.path {
        let next = match column {
            None => batch.column(i),
            Some(parent) => parent.children().get(i),
        };
        let next = next.ok_or_else(|| mismatch(pc, "not in the batch".to_string()))?;
        // A child's row r is its parent's row at the parent's offset,
        // plus the child's own offset (children are whole arrays).
        base = base.saturating_add(next.offset());
        if let Some(v) = next.validity() {
            validity.push(bitmap(v, base));
        }
        column = Some(next);
    }
    let column = column.ok_or_else(|| mismatch(pc, "an empty path".to_string()))?;
    if column.data_type() != &pc.data_type {
        return Err(mismatch(
            pc,
            format!(
                "{} in the batch, {} compiled",
                column.data_type(),
                pc.data_type
            ),
        ));
    }
    let needs_values = matches!(
        pc.kind,
        ValueKind::Signed
            | ValueKind::Unsigned
            | ValueKind::Float
            | ValueKind::Bool
            | ValueKind::View
    );
    let values = match (needs_values, column.buffers().first()) {
        (true, Some(v)) => Some(v),
        (true, None) => return Err(mismatch(pc, "no values buffer".to_string())),
        (false, _) => None,
    };
    let first_buffer = buffers.len() as u32;
    if pc.kind == ValueKind::View {
        buffers.extend(
            column
                .variadic_buffers()
                .iter()
                .map(|b| (b.address(), b.len() as u64)),
        );
    }
    Ok(ColumnSlot {
        kind: pc.kind as u32,
        width: pc.width,
        values: values.map_or(0, DeviceBytes::address),
        values_len: values.map_or(0, |v| v.len() as u64),
        value_offset: base as u64,
        first_buffer,
        n_buffers: buffers.len() as u32 - first_buffer,
        validity,
    })
}

fn bitmap(v: &DeviceBytes, bit_offset: usize) -> BitmapSlot {
    BitmapSlot {
        address: v.address(),
        len: v.len() as u64,
        bit_offset: bit_offset as u64,
    }
}
