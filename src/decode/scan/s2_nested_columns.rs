//! A row group's nested columns on the device: the nesting kernels' memory
//! and tasks ([`NestStage::allocate`], [`NestStage::tasks`]), and the
//! nested device columns built from them once the row group is done
//! ([`NestStage::build`]).
//!
//! Every nested buffer is sized by its level's capacity
//! ([`crate::decode::page::nesting::LeafWork::capacity`]): the owner
//! leaf's level entries (a level has at most as many slots as the chunk
//! has entries), or for the elements of FixedSizeLists (a null list
//! stands for its size in padded slots) the records times their sizes, or
//! under a variable-length list an allowance (a chunk padded past it is a
//! typed `Unsupported`); so the sizes are known before any kernel runs.
//! The slot counts the kernels find are read back with the row group's
//! status and give the arrays their lengths.

use std::sync::Arc;

use super::decode_error::DecodeError;
use super::gpu_resources::Gpu;
use super::s2_column_out::ColumnOut;
use crate::decode::array::{DeviceBytes, DeviceColumn};
use crate::decode::kernels::launch;
use crate::decode::kernels::nest::{
    nest_tile_bytes, NestOutput, NestStatus, NestTask, NEST_BITS, NEST_COUNTS, NEST_COUNT_FIRST,
    NEST_IF_MOVED, NEST_LEVELS, NEST_OFFSETS, NEST_VALIDITY, NEST_VALUES,
};
use crate::decode::kernels::PageErrorCode;
use crate::decode::page::nesting::{GpuNesting, LeafOutput, NodeKind};
use crate::decode::page::{DecodePlan, Kind};

/// Alignment of every buffer of the nested allocation.
const ALIGN: usize = 256;

/// Bytes at an offset of the nested allocation.
#[derive(Debug, Clone, Copy)]
struct Place {
    at: usize,
    len: usize,
}

/// A leaf's nesting work in this row group.
#[derive(Debug, Clone)]
struct LeafPlace {
    /// Its work's index in [`GpuNesting::leaves`].
    work: usize,
    /// The leaf's column in the plan.
    column: usize,
    /// Its level entries.
    entries: u64,
    /// The most slots each level's outputs hold.
    capacity: [u32; NEST_LEVELS],
    rep: Option<Place>,
    def: Option<Place>,
    tiles: Place,
    /// Its outputs' range in [`NestStage::outputs`].
    outputs: std::ops::Range<usize>,
}

/// A node's buffers (each sized by its owner's entries).
#[derive(Debug, Clone, Copy, Default)]
struct NodePlace {
    offsets: Option<Place>,
    validity: Option<Place>,
    /// A leaf whose values move to its slots: the slots' values.
    values: Option<Place>,
    /// Whether the values are zeroed first (a FixedSizeList's padded
    /// slots are never written).
    zero_values: bool,
    /// Where the kernels count the validity's valid slots: (the owner
    /// leaf's task, its count in [`NestStatus::valid`]); none past the
    /// task's [`NEST_COUNTS`] counted outputs (the null count is then
    /// unknown).
    valid_count: Option<(usize, usize)>,
}

/// A row group's nested columns: the plan, the device memory, the tasks.
pub(crate) struct NestStage {
    pub(crate) nesting: Arc<GpuNesting>,
    leaves: Vec<LeafPlace>,
    nodes: Vec<NodePlace>,
    buffer: DeviceBytes,
    /// Every leaf's outputs, in leaf order (their addresses final).
    pub(crate) outputs: Vec<NestOutput>,
    /// The records of the row group (the batch's rows).
    pub(crate) records: u64,
    /// Each plan column's level entries.
    entries: Vec<u64>,
}

/// Lays out buffers one after another, each aligned.
#[derive(Default)]
struct Layout {
    end: usize,
}

impl Layout {
    fn take(&mut self, len: usize) -> Place {
        let at = self.end.next_multiple_of(ALIGN);
        self.end = at + len;
        Place { at, len }
    }
}

impl NestStage {
    /// Sizes and allocates the nested memory of `plan` (whose columns have
    /// `column_rows` level entries each) for `nesting`; `values_at(ci)` is
    /// the device address of plan column `ci`'s page output values.
    pub(crate) fn allocate(
        gpu: &Gpu,
        file: &str,
        plan: &DecodePlan,
        nesting: Arc<GpuNesting>,
        column_rows: &[u64],
        records: u64,
        values_at: impl Fn(usize) -> u64,
    ) -> Result<NestStage, DecodeError> {
        let column_of = |leaf: usize| plan_column(plan, leaf);
        let mut layout = Layout::default();
        let mut nodes = vec![NodePlace::default(); nesting.nodes.len()];
        let mut leaves = Vec::with_capacity(nesting.leaves.len());
        // Outputs before their addresses: (leaf work, output) pairs.
        let mut pending = Vec::new();
        for (work_index, work) in nesting.leaves.iter().enumerate() {
            let Some(ci) = column_of(work.column) else {
                continue;
            };
            let entries = column_rows[ci];
            let n = entries as usize;
            let capacity =
                work.capacity(entries, records)
                    .ok_or_else(|| DecodeError::Unsupported {
                        file: file.to_string(),
                        column: plan.columns[ci].column.clone(),
                        what: format!(
                            "FixedSizeLists of {records} records whose padded elements pass 2^31"
                        ),
                    })?;
            let rep = work.needs_rep().then(|| layout.take(n));
            let def = work.needs_def().then(|| layout.take(n));
            let tiles = layout.take(nest_tile_bytes(entries as u32) as usize);
            let first = pending.len();
            let mut counted = 0usize;
            // A work's outputs are those of the nodes it owns: their slots
            // are its levels'.
            for &output in &work.outputs {
                let place = &mut nodes[output_node(output)];
                match output {
                    LeafOutput::Offsets { node, level } => {
                        let width = offset_width(&nesting, node);
                        let parents = capacity[level - 1] as usize;
                        place.offsets = Some(layout.take((parents + 1) * width));
                    }
                    LeafOutput::Validity { level, .. } => {
                        let bytes = launch::bitmap_bytes(u64::from(capacity[level]));
                        place.validity = Some(layout.take(bytes as usize));
                        place.valid_count =
                            (counted < NEST_COUNTS).then_some((leaves.len(), counted));
                        counted += 1;
                    }
                    LeafOutput::Values { level, .. } => {
                        let ty = &plan.columns[ci].ty;
                        let slots = u64::from(capacity[level]);
                        let bytes = match ty.kind {
                            Kind::Boolean => launch::bitmap_bytes(slots),
                            _ => slots * u64::from(ty.out_width),
                        };
                        place.values = Some(layout.take(bytes as usize));
                        place.zero_values = work.level_fixed[level] != 0;
                    }
                }
                pending.push((ci, output));
            }
            leaves.push(LeafPlace {
                work: work_index,
                column: ci,
                entries,
                capacity,
                rep,
                def,
                tiles,
                outputs: first..pending.len(),
            });
        }
        let buffer = DeviceBytes::from_pooled(gpu.pool.allocate(layout.end.max(1))?);
        let base = buffer.address();
        let outputs = pending
            .iter()
            .map(|&(ci, output)| {
                nest_output(output, &nesting, &nodes, base, plan, ci, values_at(ci))
            })
            .collect();
        Ok(NestStage {
            nesting,
            leaves,
            nodes,
            buffer,
            outputs,
            records,
            entries: column_rows.to_vec(),
        })
    }

    /// Device ranges to zero before the kernels: bitmaps written a bit at
    /// a time.
    pub(crate) fn zero_ranges(&self) -> Vec<(u64, usize)> {
        let base = self.buffer.address();
        let mut out = Vec::new();
        for (node, place) in self.nesting.nodes.iter().zip(&self.nodes) {
            if let Some(v) = place.validity {
                out.push((base + v.at as u64, v.len));
            }
            let boolean = matches!(node.field.data_type(), arrow::datatypes::DataType::Boolean);
            if let (Some(v), true) = (place.values, boolean || place.zero_values) {
                out.push((base + v.at as u64, v.len));
            }
        }
        out
    }

    /// Plan column `ci`'s level outputs for its page tasks: (repetition,
    /// definition) addresses, 0 for none; None when it has no nesting work.
    pub(crate) fn page_levels(&self, ci: usize) -> Option<(u64, u64)> {
        let base = self.buffer.address();
        let leaf = self.leaf_of(ci)?;
        let at = |p: Option<Place>| p.map_or(0, |p| base + p.at as u64);
        Some((at(leaf.rep), at(leaf.def)))
    }

    /// The nest tasks, their outputs at `outputs_at` (the device address of
    /// [`NestStage::outputs`] as uploaded) and their status at `status_at`
    /// ([`crate::decode::kernels::nest::NEST_STATUS_WORDS`] words each).
    pub(crate) fn tasks(&self, outputs_at: u64, status_at: u64) -> Vec<NestTask> {
        let base = self.buffer.address();
        let output_bytes = std::mem::size_of::<NestOutput>() as u64;
        let status_bytes = crate::decode::kernels::nest::nest_status_bytes(1);
        self.leaves
            .iter()
            .enumerate()
            .map(|(k, leaf)| {
                let work = &self.nesting.leaves[leaf.work];
                let per_level = |v: &[u32]| {
                    let mut out = [0u32; NEST_LEVELS];
                    for (o, &x) in out.iter_mut().zip(v) {
                        *o = x;
                    }
                    out
                };
                NestTask {
                    rep: leaf.rep.map_or(0, |p| base + p.at as u64),
                    def: leaf.def.map_or(0, |p| base + p.at as u64),
                    tiles: base + leaf.tiles.at as u64,
                    outputs: outputs_at + leaf.outputs.start as u64 * output_bytes,
                    status: status_at + k as u64 * status_bytes,
                    entries: leaf.entries as u32,
                    n_outputs: leaf.outputs.len() as u32,
                    max_rep: work.max_rep,
                    max_def: work.max_def,
                    level_def: per_level(&work.level_def),
                    level_fixed: per_level(&work.level_fixed),
                    capacity: leaf.capacity,
                }
            })
            .collect()
    }

    /// Plan column `ci`'s nesting work in this row group, if it has any.
    fn leaf_of(&self, ci: usize) -> Option<&LeafPlace> {
        self.leaves.iter().find(|l| l.column == ci)
    }

    /// Nest tasks.
    pub(crate) fn n_tasks(&self) -> u32 {
        self.leaves.len() as u32
    }

    /// The most entries of a task.
    pub(crate) fn max_entries(&self) -> u32 {
        self.leaves
            .iter()
            .map(|l| l.entries as u32)
            .max()
            .unwrap_or(0)
    }
}

/// Bytes of one offset of a list node: 8 for a LargeList, else 4.
fn offset_width(nesting: &GpuNesting, node: usize) -> usize {
    match nesting.nodes[node].field.data_type() {
        arrow::datatypes::DataType::LargeList(_) => 8,
        _ => 4,
    }
}

/// The plan column of schema leaf `leaf`, if the plan decodes it.
fn plan_column(plan: &DecodePlan, leaf: usize) -> Option<usize> {
    plan.columns.iter().position(|c| c.leaf == leaf)
}

fn output_node(output: LeafOutput) -> usize {
    match output {
        LeafOutput::Offsets { node, .. }
        | LeafOutput::Validity { node, .. }
        | LeafOutput::Values { node, .. } => node,
    }
}

/// The kernel's form of one output.
/// The leaf's own values and validity are flagged [`NEST_IF_MOVED`]: kept
/// where the page kernel wrote them when its slots are its entries.
fn nest_output(
    output: LeafOutput,
    nesting: &GpuNesting,
    nodes: &[NodePlace],
    base: u64,
    plan: &DecodePlan,
    ci: usize,
    values_at: u64,
) -> NestOutput {
    let at = |p: Option<Place>| p.map_or(0, |p| base + p.at as u64);
    let place = nodes[output_node(output)];
    match output {
        LeafOutput::Offsets { node, level } => NestOutput {
            dst: at(place.offsets),
            kind: NEST_OFFSETS,
            level: level as u32,
            width: offset_width(nesting, node) as u32,
            ..NestOutput::default()
        },
        LeafOutput::Validity {
            node,
            level,
            threshold,
        } => {
            let own = matches!(nesting.nodes[node].kind, NodeKind::Leaf { .. });
            let count_word = place
                .valid_count
                .map_or(0, |(_, k)| (NEST_COUNT_FIRST + k) as u64);
            NestOutput {
                dst: at(place.validity),
                src: count_word,
                kind: NEST_VALIDITY | if own { NEST_IF_MOVED } else { 0 },
                level: level as u32,
                threshold,
                ..NestOutput::default()
            }
        }
        LeafOutput::Values { level, .. } => {
            let ty = &plan.columns[ci].ty;
            let boolean = ty.kind == Kind::Boolean;
            NestOutput {
                dst: at(place.values),
                src: values_at,
                kind: NEST_IF_MOVED | if boolean { NEST_BITS } else { NEST_VALUES },
                level: level as u32,
                threshold: 0,
                width: if boolean { 0 } else { ty.out_width },
            }
        }
    }
}

/// What the finish needs to name a row group's errors.
pub(crate) struct Where<'a> {
    pub(crate) file: &'a str,
    pub(crate) plan: &'a DecodePlan,
}

impl Where<'_> {
    fn error(&self, ci: usize, what: String) -> DecodeError {
        DecodeError::CorruptLevels {
            file: self.file.to_string(),
            column: self.plan.columns[ci].column.clone(),
            row_group: self.plan.row_group,
            what,
        }
    }
}

impl NestStage {
    /// Checks the kernels' status (`status`, one per task) and builds the
    /// top-level nested columns from the page outputs (`columns`, taken)
    /// and the nested buffers; `nulls` are each plan column's page nulls.
    pub(crate) fn build(
        &self,
        at: Where<'_>,
        status: &[NestStatus],
        columns: &mut [Option<ColumnOut>],
        nulls: &[usize],
    ) -> Result<Vec<DeviceColumn>, DecodeError> {
        let slots = self.check(&at, status)?;
        let build = Build {
            stage: self,
            at: &at,
            slots: &slots,
            nulls,
            status,
        };
        let mut out = Vec::with_capacity(self.nesting.roots.len());
        for &root in &self.nesting.roots {
            out.push(build.node(root, columns)?);
        }
        Ok(out)
    }

    /// Each plan column's slots per level: the kernels' counts, or its
    /// entries (a leaf without nesting work: its entries are its records).
    /// Checks the errors the kernels found, every leaf's records against
    /// the row group's, and the leaves under each node against its owner.
    fn check(
        &self,
        at: &Where<'_>,
        status: &[NestStatus],
    ) -> Result<Vec<[u64; NEST_LEVELS]>, DecodeError> {
        let plan = at.plan;
        let mut slots: Vec<[u64; NEST_LEVELS]> = self
            .entries
            .iter()
            .map(|&e| [e, 0, 0, 0, 0, 0, 0, 0])
            .collect();
        for (leaf, s) in self.leaves.iter().zip(status) {
            let work = &self.nesting.leaves[leaf.work];
            let level = s.error_index as usize;
            if s.error == PageErrorCode::SlotCapacity as u32 && work.is_allowance(level) {
                // A valid chunk past the allowance: refused, never cut.
                return Err(DecodeError::Unsupported {
                    file: at.file.to_string(),
                    column: plan.columns[leaf.column].column.clone(),
                    what: format!(
                        "a FixedSizeList inside a variable-length list whose null or empty lists \
                         pad nesting level {level} to {} slots, past the decoder's allowance of {} \
                         ({} times the chunk's {} level entries and {})",
                        s.slots[level.min(NEST_LEVELS - 1)],
                        leaf.capacity[level.min(NEST_LEVELS - 1)],
                        crate::decode::page::nesting::PADDING_FACTOR,
                        leaf.entries,
                        crate::decode::page::nesting::PADDING_SLACK
                    ),
                });
            }
            if s.error != 0 {
                let what = PageErrorCode::from_code(s.error)
                    .map_or(format!("unknown kernel error {}", s.error), |c| {
                        c.describe().to_string()
                    });
                return Err(at.error(
                    leaf.column,
                    format!("{what} (at level entry {})", s.error_index),
                ));
            }
            slots[leaf.column] = s.slots.map(u64::from);
            // The kernels checked each FixedSizeList with elements against
            // the one before it; the totals check the last.
            for (j, &size) in work.level_fixed.iter().enumerate().skip(1) {
                let (lists, elements) = (slots[leaf.column][j - 1], slots[leaf.column][j]);
                if size != 0 && elements != lists * u64::from(size) {
                    return Err(at.error(
                        leaf.column,
                        format!(
                            "{lists} FixedSizeLists of {size} at nesting level {j} hold {elements} elements"
                        ),
                    ));
                }
            }
        }
        if let Some(ci) = slots.iter().position(|s| s[0] != self.records) {
            return Err(at.error(
                ci,
                format!(
                    "its levels hold {} records, the row group {}",
                    slots[ci][0], self.records
                ),
            ));
        }
        let column_of = |leaf: usize| plan_column(plan, leaf);
        for (index, node) in self.nesting.nodes.iter().enumerate() {
            let Some(owner) = column_of(node.owner) else {
                continue;
            };
            for leaf in self.nesting.leaves_under(index) {
                let Some(ci) = column_of(leaf) else { continue };
                let j = node.level;
                if slots[ci][j] != slots[owner][j] {
                    return Err(at.error(
                        ci,
                        format!(
                            "{} slots at nesting level {j} where {} has {}",
                            slots[ci][j], plan.columns[owner].column, slots[owner][j]
                        ),
                    ));
                }
            }
        }
        Ok(slots)
    }
}

/// The recursive build of the nested columns.
struct Build<'a> {
    stage: &'a NestStage,
    at: &'a Where<'a>,
    slots: &'a [[u64; NEST_LEVELS]],
    nulls: &'a [usize],
    /// The nest tasks' status (the valid slots they counted).
    status: &'a [NestStatus],
}

impl Build<'_> {
    fn column_of(&self, leaf: usize) -> Result<usize, DecodeError> {
        plan_column(self.at.plan, leaf).ok_or_else(|| DecodeError::CorruptLevels {
            file: self.at.file.to_string(),
            column: format!("leaf {leaf}"),
            row_group: self.at.plan.row_group,
            what: "a leaf of the projection has no decoded chunk".into(),
        })
    }

    fn slice(&self, place: Option<Place>) -> Result<Option<DeviceBytes>, DecodeError> {
        place
            .map(|p| self.stage.buffer.slice(p.at, p.len))
            .transpose()
            .map_err(DecodeError::from)
    }

    /// The null count of a node's `len` slots written by the kernels: 0
    /// without a validity, else its slots less the valid ones the owner's
    /// task counted (unknown past the counted outputs).
    fn null_count(
        &self,
        place: NodePlace,
        len: usize,
        owner: usize,
    ) -> Result<Option<usize>, DecodeError> {
        if place.validity.is_none() {
            return Ok(Some(0));
        }
        let Some((task, k)) = place.valid_count else {
            return Ok(None);
        };
        let Some(valid) = self.status.get(task).map(|s| s.valid[k] as usize) else {
            return Ok(None);
        };
        len.checked_sub(valid).map(Some).ok_or_else(|| {
            self.at.error(
                owner,
                format!("{valid} valid slots counted where the level has {len}"),
            )
        })
    }

    fn node(
        &self,
        index: usize,
        columns: &mut [Option<ColumnOut>],
    ) -> Result<DeviceColumn, DecodeError> {
        let node = &self.stage.nesting.nodes[index];
        let place = self.stage.nodes[index];
        let owner = self.column_of(node.owner)?;
        let len = self.slots[owner][node.level] as usize;
        let data_type = node.field.data_type().clone();
        let validity = self.slice(place.validity)?;
        let nulls = self.null_count(place, len, owner)?;
        let column = match &node.kind {
            NodeKind::Leaf { column } => {
                let ci = self.column_of(*column)?;
                let out = columns[ci]
                    .take()
                    .ok_or_else(|| self.at.error(ci, "a leaf taken twice".to_string()))?;
                // A Null leaf: its slots, no buffers (its parents' offsets
                // and validity came from its levels).
                if self.at.plan.columns[ci].ty.is_null() {
                    return Ok(DeviceColumn::nulls(len));
                }
                // Under a list, the slots' values and validity, unless the
                // slots are the entries one for one (the kernels left them
                // in the page's output).
                let mixed = self
                    .stage
                    .leaf_of(ci)
                    .is_some_and(|l| self.stage.nesting.leaves[l.work].fixed_under_variable());
                let moved = place
                    .values
                    .filter(|_| mixed || len as u64 != self.stage.entries[ci]);
                match self.slice(moved)? {
                    Some(values) => {
                        let mut buffers = vec![values];
                        buffers.extend(out.variadic);
                        DeviceColumn::new(data_type, len, nulls, validity, buffers)?
                    }
                    // Its entries are its slots.
                    None => {
                        let mut buffers = vec![out.values];
                        buffers.extend(out.variadic);
                        // A required leaf (no validity at its slots) has
                        // none, whatever the page's bitmap says of entries.
                        let validity = out.validity.filter(|_| node.validity.is_some());
                        let nulls = validity.as_ref().map_or(0, |_| self.nulls[ci]);
                        DeviceColumn::new(data_type, len, Some(nulls), validity, buffers)?
                    }
                }
            }
            NodeKind::Struct { fields } => {
                let children = fields
                    .iter()
                    .map(|&f| self.node(f, columns))
                    .collect::<Result<Vec<_>, _>>()?;
                DeviceColumn::with_children(data_type, len, nulls, validity, Vec::new(), children)?
            }
            NodeKind::List { element, fixed } => {
                let child = self.node(*element, columns)?;
                // A FixedSizeList has no offsets.
                let offsets = match fixed {
                    Some(_) => Vec::new(),
                    None => self.offsets(place, len, offset_width(&self.stage.nesting, index))?,
                };
                DeviceColumn::with_children(data_type, len, nulls, validity, offsets, vec![child])?
            }
            NodeKind::Map { key, value } => {
                let key = self.node(*key, columns)?;
                let value = self.node(*value, columns)?;
                let arrow::datatypes::DataType::Map(entries_field, _) = &data_type else {
                    return Err(self.at.error(owner, "a map node of another type".into()));
                };
                let entries = DeviceColumn::with_children(
                    entries_field.data_type().clone(),
                    self.slots[owner][node.level + 1] as usize,
                    Some(0),
                    None,
                    Vec::new(),
                    vec![key, value],
                )?;
                let offsets = self.offsets(place, len, 4)?;
                DeviceColumn::with_children(
                    data_type,
                    len,
                    nulls,
                    validity,
                    offsets,
                    vec![entries],
                )?
            }
        };
        Ok(column)
    }

    /// A list's offsets: `len + 1` of them, `width` bytes each.
    fn offsets(
        &self,
        place: NodePlace,
        len: usize,
        width: usize,
    ) -> Result<Vec<DeviceBytes>, DecodeError> {
        let offsets = place.offsets.map(|p| Place {
            at: p.at,
            len: ((len + 1) * width).min(p.len),
        });
        Ok(self.slice(offsets)?.into_iter().collect())
    }
}
