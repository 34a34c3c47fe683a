//! The nesting kernels' interface: the tasks the host fills for a nested
//! leaf's column chunk ([`NestTask`], [`NestOutput`]), their launch shapes
//! and the status they leave.
//!
//! A nested leaf is decoded by `gds_decode_pages` flat over its level
//! entries (one output slot per entry); the same kernel writes each
//! entry's repetition and definition level, one byte each, at the page's
//! first entry in the chunk (`PageTask::out_rep`, `PageTask::out_def`).
//! Then, per row group:
//!
//! 1. `gds_nest_count` (a block per [`NEST_TILE`] entries of each task):
//!    the levels checked (range, first entry, list continuations) and, per
//!    level `j` of the leaf (`0` the records, `k` the elements of the list
//!    at repetition level `k`), the tile's slots: entries with `rep <= j`
//!    and `def >= level_def[j]`;
//! 2. `gds_nest_scan` (a block per task): the tiles' counts into exclusive
//!    prefixes, each level's slot count into the task's status, and the
//!    last entry of each offsets output;
//! 3. `gds_nest_write` (as `gds_nest_count`): each [`NestOutput`], its
//!    slot positions the prefixes plus the block's own scan.
//!
//! The level arithmetic is `decode/page/nesting/assembly.rs`'s, which the
//! kernel emulation checks them against.

use std::mem::{offset_of, size_of};

use crate::cuda::module::LaunchConfig;

use super::layout::{fields, FieldLayout};

pub use crate::decode::page::nesting::NEST_LEVELS;
/// Threads per block of the nesting kernels.
pub const NEST_BLOCK: u32 = 256;
/// Entries each thread of `gds_nest_count` and `gds_nest_write` takes
/// (consecutive entries).
pub const NEST_ITEMS: u32 = 16;
/// Entries per tile of `gds_nest_count` and `gds_nest_write`.
pub const NEST_TILE: u32 = NEST_BLOCK * NEST_ITEMS;
/// 32-bit words of a task's status: `[error, error_index, slots of level
/// 0 .. NEST_LEVELS, valid slots of the task's counted validity outputs ..]`.
pub const NEST_STATUS_WORDS: usize = 32;
/// The first status word that counts a validity output's valid slots
/// ([`NestOutput::src`] of a [`NEST_VALIDITY`] output names its word).
pub const NEST_COUNT_FIRST: usize = 2 + NEST_LEVELS;
/// Validity outputs of one task whose valid slots can be counted (the
/// status words after the slots); later ones are left uncounted.
pub const NEST_COUNTS: usize = NEST_STATUS_WORDS - NEST_COUNT_FIRST;
/// The largest grid's y dimension (tasks per launch).
pub const MAX_GRID_Y: u32 = 65_535;

/// [`NestOutput::kind`]: the list at repetition level `level` gets its
/// offsets: at each slot `p` of level `level - 1`, the element count
/// before it (`i32`, or `i64` when `width` is 8: a LargeList); the scan
/// writes the total after the last.
pub const NEST_OFFSETS: u32 = 1;
/// [`NestOutput::kind`]: a validity bitmap over the slots of `level`: bit
/// `p` set iff the slot's entry has `def >= threshold` (zeroed first).
pub const NEST_VALIDITY: u32 = 2;
/// [`NestOutput::kind`]: `width` bytes per entry at `src` (entry-indexed,
/// as `gds_decode_pages` wrote them) to the slots of `level` at `dst`.
pub const NEST_VALUES: u32 = 3;
/// [`NestOutput::kind`]: as [`NEST_VALUES`] for a bitmap (BOOLEAN values):
/// bit `entry` of `src` to bit `slot` of `dst` (zeroed first).
pub const NEST_BITS: u32 = 4;

/// [`NestOutput::kind`] flag: the output is written only when the leaf's
/// innermost slots are not its entries one for one (some entry is an
/// empty or null list, or under a null): otherwise the page kernel's
/// output already is the slots' (the leaf's values and validity), and the
/// host takes it.
pub const NEST_IF_MOVED: u32 = 0x100;

/// One nested leaf's column chunk for the nesting kernels.
///
/// Mirrored by `struct NestTask` in `cuda/common.cuh` (checked by every
/// NVRTC compile). 152 bytes, no padding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct NestTask {
    /// Device address of the entries' repetition levels (one byte each);
    /// 0 when the leaf has no list (all 0).
    pub rep: u64,
    /// Device address of the entries' definition levels (one byte each);
    /// 0 when the leaf's max definition level is 0 (all 0).
    pub def: u64,
    /// Device address of [`NEST_LEVELS`] `u32` per tile ([`nest_tiles`]):
    /// each level's slots in the tile, then the slots before it.
    pub tiles: u64,
    /// Device address of `n_outputs` [`NestOutput`]s.
    pub outputs: u64,
    /// Device address of the task's [`NEST_STATUS_WORDS`] status words
    /// (zeroed before the launch).
    pub status: u64,
    /// Level entries of the chunk.
    pub entries: u32,
    /// Outputs at `outputs`.
    pub n_outputs: u32,
    /// The leaf's max repetition level (lists around it), below
    /// [`NEST_LEVELS`].
    pub max_rep: u32,
    /// The leaf's max definition level.
    pub max_def: u32,
    /// Per level `j`: the definition level at or above which an entry with
    /// `rep <= j` starts a slot (0 for the records; a list's element
    /// threshold for its elements' level).
    pub level_def: [u32; NEST_LEVELS],
    /// Per level `j`: the size of the FixedSizeList whose elements the
    /// level holds (a null or empty one stands for that many padded
    /// slots), 0 when it is not one.
    pub level_fixed: [u32; NEST_LEVELS],
    /// Per level `j`: the most slots the outputs of the level hold
    /// ([`crate::decode::page::nesting::LeafWork::capacity`]); more is
    /// [`super::PageErrorCode::SlotCapacity`] and nothing is written.
    pub capacity: [u32; NEST_LEVELS],
}

/// One output of a [`NestTask`].
///
/// Mirrored by `struct NestOutput` in `cuda/common.cuh`. 32 bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct NestOutput {
    /// Device address written: offsets (`i32`, 4-byte aligned), a bitmap
    /// (4-byte words, zeroed) or values (`width`-aligned).
    pub dst: u64,
    /// Device address read by [`NEST_VALUES`] and [`NEST_BITS`]. For
    /// [`NEST_VALIDITY`], the task's status word (from
    /// [`NEST_COUNT_FIRST`]) its valid slots are added to, or 0 for none
    /// (consumers such as cuDF need a bitmap's null count). Else 0.
    pub src: u64,
    /// [`NEST_OFFSETS`], [`NEST_VALIDITY`], [`NEST_VALUES`] or
    /// [`NEST_BITS`], with [`NEST_IF_MOVED`] or not.
    pub kind: u32,
    /// The level whose slots are written (offsets: the list's repetition
    /// level, written at the slots of the level above).
    pub level: u32,
    /// [`NEST_VALIDITY`]: the definition level at or above which a slot is
    /// valid.
    pub threshold: u32,
    /// [`NEST_VALUES`]: bytes per value; [`NEST_OFFSETS`]: 8 for 64-bit
    /// offsets, else 32-bit.
    pub width: u32,
}

/// Every field of [`NestTask`], in order (name, offset, size).
pub fn nest_task_fields() -> &'static [FieldLayout] {
    const FIELDS: &[FieldLayout] = fields!(NestTask;
        rep, def, tiles, outputs, status, entries, n_outputs, max_rep, max_def, level_def,
        level_fixed, capacity);
    FIELDS
}

/// Every field of [`NestOutput`], in order (name, offset, size).
pub fn nest_output_fields() -> &'static [FieldLayout] {
    const FIELDS: &[FieldLayout] = fields!(NestOutput;
        dst, src, kind, level, threshold, width);
    FIELDS
}

const _: () = assert!(size_of::<NestTask>() == 152);
const _: () = assert!(size_of::<NestOutput>() == 32);
const _: () = assert!(offset_of!(NestTask, level_def) == 56);

/// The bytes of a nest task array, as uploaded.
pub fn nest_tasks_as_bytes(tasks: &[NestTask]) -> &[u8] {
    // SAFETY: NestTask is repr(C), integers only, no padding (fields tile
    // it: tested), so every byte is initialised.
    unsafe { std::slice::from_raw_parts(tasks.as_ptr().cast(), std::mem::size_of_val(tasks)) }
}

/// The bytes of an output array, as uploaded.
pub fn nest_outputs_as_bytes(outputs: &[NestOutput]) -> &[u8] {
    // SAFETY: as above.
    unsafe { std::slice::from_raw_parts(outputs.as_ptr().cast(), std::mem::size_of_val(outputs)) }
}

/// Tiles of a chunk of `entries` level entries.
pub fn nest_tiles(entries: u32) -> u32 {
    entries.div_ceil(NEST_TILE)
}

/// Bytes of a task's tile counts.
pub fn nest_tile_bytes(entries: u32) -> u64 {
    nest_tiles(entries) as u64 * NEST_LEVELS as u64 * 4
}

/// Bytes of the status of `n_tasks` tasks.
pub fn nest_status_bytes(n_tasks: u32) -> u64 {
    n_tasks as u64 * NEST_STATUS_WORDS as u64 * 4
}

/// `gds_nest_count` and `gds_nest_write` over `n_tasks` tasks of at most
/// `max_entries` entries: x the tiles (grid-stride), y the tasks.
pub fn nest_tiles_config(n_tasks: u32, max_entries: u32) -> Option<LaunchConfig> {
    let tiles = nest_tiles(max_entries).clamp(1, super::launch::MAX_GRID);
    (n_tasks > 0).then(|| LaunchConfig {
        grid: (tiles, n_tasks.min(MAX_GRID_Y), 1),
        block: (NEST_BLOCK, 1, 1),
        shared_bytes: 0,
    })
}

/// `gds_nest_scan`: a block per task (grid-stride).
pub fn nest_scan_config(n_tasks: u32) -> Option<LaunchConfig> {
    (n_tasks > 0).then(|| LaunchConfig::linear(n_tasks.min(super::launch::MAX_GRID), NEST_BLOCK))
}

/// One task's status, as copied back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NestStatus {
    /// 0, or a [`super::PageErrorCode`] as written.
    pub error: u32,
    /// The entry where `error` was found.
    pub error_index: u32,
    /// Slots of each level.
    pub slots: [u32; NEST_LEVELS],
    /// Valid slots of the task's counted validity outputs, by status word
    /// less [`NEST_COUNT_FIRST`].
    pub valid: [u32; NEST_COUNTS],
}

/// Splits the nest status copied back (little-endian words) per task;
/// `None` when its length is not [`nest_status_bytes`]`(n_tasks)`.
pub fn parse_nest_status(bytes: &[u8], n_tasks: u32) -> Option<Vec<NestStatus>> {
    if bytes.len() as u64 != nest_status_bytes(n_tasks) {
        return None;
    }
    let word = |b: &[u8], i: usize| {
        u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    };
    Some(
        bytes
            .chunks_exact(NEST_STATUS_WORDS * 4)
            .map(|e| NestStatus {
                error: word(e, 0),
                error_index: word(e, 1),
                slots: std::array::from_fn(|j| word(e, 2 + j)),
                valid: std::array::from_fn(|j| word(e, NEST_COUNT_FIRST + j)),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_shapes_cover_every_entry() {
        assert_eq!(nest_tiles_config(0, 10), None);
        let c = nest_tiles_config(3, NEST_TILE * 2 + 1).unwrap();
        assert_eq!(c.grid, (3, 3, 1));
        assert_eq!(nest_tiles_config(2, 0).unwrap().grid.0, 1);
        assert_eq!(nest_tiles(0), 0);
        assert_eq!(nest_tiles(NEST_TILE), 1);
        assert_eq!(nest_tile_bytes(NEST_TILE + 1), 2 * 8 * 4);
        assert_eq!(nest_scan_config(5).unwrap().grid.0, 5);
    }

    #[test]
    fn status_parses_per_task() {
        let mut bytes = vec![0u8; nest_status_bytes(2) as usize];
        let second = NEST_STATUS_WORDS * 4;
        let mut put = |word: usize, v: u32| {
            bytes[second + 4 * word..second + 4 * word + 4].copy_from_slice(&v.to_le_bytes())
        };
        put(0, 21);
        put(2, 7);
        put(NEST_COUNT_FIRST + 1, 5);
        put(NEST_STATUS_WORDS - 1, 9);
        let s = parse_nest_status(&bytes, 2).unwrap();
        assert_eq!(s[0], NestStatus::default());
        assert_eq!(s[1].error, 21);
        assert_eq!(s[1].slots[0], 7);
        assert_eq!((s[1].valid[1], s[1].valid[NEST_COUNTS - 1]), (5, 9));
        assert_eq!(parse_nest_status(&bytes[1..], 2), None);
    }
}
