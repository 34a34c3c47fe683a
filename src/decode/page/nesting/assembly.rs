//! Levels to the Arrow nested layout, with flags and prefix sums (the CPU
//! reference of the GPU's level assembly).

use super::*;

/// A level of the nesting (see the module's doc): entry `i` is one of its
/// slots iff `rep[i] <= rep && def[i] >= def`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotLevel {
    /// Largest repetition level of an entry that starts a slot.
    pub rep: i16,
    /// Smallest definition level of an entry that starts a slot.
    pub def: i16,
}

impl SlotLevel {
    /// The records: every entry with `rep == 0`.
    pub const RECORDS: SlotLevel = SlotLevel { rep: 0, def: 0 };
}

/// The levels of one leaf's column chunk, one entry per level entry, as
/// Parquet stores them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafLevels<'a> {
    /// Number of level entries (values, nulls and empty lists).
    pub entries: usize,
    /// Repetition levels (`entries` of them); None: all 0, allowed only
    /// for a leaf whose max repetition level is 0.
    pub rep: Option<&'a [i16]>,
    /// Definition levels (`entries` of them); None: all 0, allowed only
    /// for a leaf whose max definition level is 0.
    pub def: Option<&'a [i16]>,
}

/// Which levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelKind {
    /// Repetition levels.
    Repetition,
    /// Definition levels.
    Definition,
}

impl fmt::Display for LevelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LevelKind::Repetition => "repetition",
            LevelKind::Definition => "definition",
        })
    }
}

/// Why levels could not be assembled, or the layout built into arrays.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NestError {
    /// No levels were given for a leaf of the model.
    #[error("leaf column {column}: no levels given")]
    MissingLevels {
        /// Leaf column index.
        column: usize,
    },
    /// Levels were left out that the leaf has.
    #[error("leaf column {column}: {which} levels left out, but its max {which} level is {max}")]
    AbsentLevels {
        /// Leaf column index.
        column: usize,
        /// Which levels.
        which: LevelKind,
        /// The leaf's max level of that kind.
        max: i16,
    },
    /// A level slice's length differs from the entry count.
    #[error("leaf column {column}: {found} {which} levels for {entries} entries")]
    LevelCount {
        /// Leaf column index.
        column: usize,
        /// Which levels.
        which: LevelKind,
        /// Entries announced.
        entries: usize,
        /// Levels given.
        found: usize,
    },
    /// A level outside `0..=max`.
    #[error("leaf column {column}, entry {index}: {which} level {level} outside 0..={max}")]
    LevelOutOfRange {
        /// Leaf column index.
        column: usize,
        /// Entry index in the chunk.
        index: usize,
        /// Which levels.
        which: LevelKind,
        /// The level read.
        level: i16,
        /// The leaf's max level of that kind.
        max: i16,
    },
    /// The chunk does not start a record.
    #[error("leaf column {column}: the first entry has repetition level {rep}, not 0")]
    FirstNotRecord {
        /// Leaf column index.
        column: usize,
        /// Its repetition level.
        rep: i16,
    },
    /// An entry adds an element to a list that has none there (null or
    /// empty), or is itself no element of the list it continues.
    #[error(
        "leaf column {column}, entry {index}: repetition level {rep} continues a list \
         whose elements need definition level {need}, after {prev_def} then {def}"
    )]
    BadContinuation {
        /// Leaf column index.
        column: usize,
        /// Entry index in the chunk.
        index: usize,
        /// Its repetition level.
        rep: i16,
        /// Its definition level.
        def: i16,
        /// The previous entry's definition level.
        prev_def: i16,
        /// The list's element threshold.
        need: i16,
    },
    /// Leaves under one node disagree on the node's slots.
    #[error("leaf column {column}: {found} slots where its parent has {expected}")]
    SlotMismatch {
        /// The first leaf column of the disagreeing child.
        column: usize,
        /// The parent's slot (or element) count.
        expected: usize,
        /// The child's.
        found: usize,
    },
    /// A list holds more elements than an i32 offset reaches.
    #[error("{count} list elements overflow an i32 offset")]
    OffsetOverflow {
        /// Element count.
        count: usize,
    },
    /// A FixedSizeList with elements holds another number of them.
    #[error("leaf column {column}: FixedSizeList {slot} holds {length} elements, its type {size}")]
    FixedSize {
        /// Leaf column index (the list's first leaf).
        column: usize,
        /// The list's slot.
        slot: usize,
        /// Its elements.
        length: usize,
        /// The type's size.
        size: u32,
    },
    /// No values were given for a leaf.
    #[error("leaf column {column}: no values given")]
    MissingValues {
        /// Leaf column index.
        column: usize,
    },
    /// A leaf's values are not of its type.
    #[error("leaf column {column}: values of type {found}, expected {expected}")]
    ValueType {
        /// Leaf column index.
        column: usize,
        /// The leaf's type.
        expected: DataType,
        /// The values'.
        found: DataType,
    },
    /// A leaf's value count differs from its levels'.
    #[error("leaf column {column}: {found} values given, its levels hold {expected}")]
    ValueCount {
        /// Leaf column index.
        column: usize,
        /// Values the levels hold.
        expected: usize,
        /// Values given.
        found: usize,
    },
    /// The layout is not one of this model.
    #[error("the layout does not fit the model: {what}")]
    LayoutMismatch {
        /// What does not fit.
        what: String,
    },
    /// Arrow refused the arrays.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow::error::ArrowError),
}

/// The Arrow nested layout of a chunk's top-level fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembly {
    /// Number of records (entries with repetition level 0).
    pub records: usize,
    /// One layout per top-level field of the model, in its order.
    pub fields: Vec<NodeLayout>,
}

/// The layout of one node over its slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeLayout {
    /// A leaf's slots.
    Leaf(LeafLayout),
    /// A struct's slots and fields.
    Struct(StructLayout),
    /// A list's offsets and element.
    List(ListLayout),
    /// A map's offsets, keys and values.
    Map(MapLayout),
}

/// A leaf over its slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafLayout {
    /// The leaf column.
    pub column: usize,
    /// Per slot, whether it holds a value; None when every slot does (the
    /// leaf is at its level's threshold: neither it nor a struct between
    /// it and its level is OPTIONAL).
    pub validity: Option<Vec<bool>>,
    /// Per slot, the index of its value among the leaf's non-null values
    /// (for a slot without value: the number of values before it).
    pub value_index: Vec<usize>,
    /// Number of non-null values the levels hold.
    pub values: usize,
}

/// A struct over its slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructLayout {
    /// Number of slots.
    pub slots: usize,
    /// Per slot, whether the struct is non-null; None when it always is.
    /// Also Some for a REQUIRED struct inside an OPTIONAL one of the same
    /// level (null where that one is), so that Arrow's rule holds (a
    /// non-nullable child has no null where its parent is valid).
    pub validity: Option<Vec<bool>>,
    /// The fields' layouts, over the same slots.
    pub fields: Vec<NodeLayout>,
}

/// A list over its slots (the parent slots).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListLayout {
    /// Offsets into the element's slots, one per parent slot and one more.
    pub offsets: Vec<i32>,
    /// Per parent slot, whether the list is non-null; None when it always
    /// is (same rule as [`StructLayout::validity`]).
    pub validity: Option<Vec<bool>>,
    /// The element's layout over the list's elements.
    pub element: Box<NodeLayout>,
}

/// A map over its slots: a list of key-value entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapLayout {
    /// Offsets into the entries, one per parent slot and one more.
    pub offsets: Vec<i32>,
    /// Per parent slot, whether the map is non-null; None when it always
    /// is.
    pub validity: Option<Vec<bool>>,
    /// The keys' layout over the entries.
    pub key: Box<NodeLayout>,
    /// The values' layout over the entries.
    pub value: Box<NodeLayout>,
}

impl NodeLayout {
    /// Number of slots the node covers.
    pub fn slots(&self) -> usize {
        match self {
            NodeLayout::Leaf(l) => l.value_index.len(),
            NodeLayout::Struct(l) => l.slots,
            NodeLayout::List(l) => l.offsets.len().saturating_sub(1),
            NodeLayout::Map(l) => l.offsets.len().saturating_sub(1),
        }
    }
}

/// Assembles the Arrow nested layout of `fields` from each leaf's levels
/// (`levels`, by leaf column index). The levels are checked first (range,
/// first entry, list continuations); leaves under one node must agree on
/// its slots.
pub fn assemble(
    fields: &[NestField],
    levels: &BTreeMap<usize, LeafLevels<'_>>,
) -> Result<Assembly, NestError> {
    let checked = check_all_levels(fields, levels)?;
    let layouts = fields
        .iter()
        .map(|field| assemble_node(&field.node, SlotLevel::RECORDS, &checked))
        .collect::<Result<Vec<_>, _>>()?;
    let records = layouts.first().map_or(0, NodeLayout::slots);
    for (field, layout) in fields.iter().zip(&layouts) {
        if layout.slots() != records {
            return Err(NestError::SlotMismatch {
                column: field.node.first_column().unwrap_or_default(),
                expected: records,
                found: layout.slots(),
            });
        }
    }
    Ok(Assembly {
        records,
        fields: layouts,
    })
}

/// A leaf's levels, checked and with absent levels filled in, and the
/// lists around it (as in [`LeafShape`]).
#[derive(Debug, Clone)]
struct CheckedLevels {
    rep: Vec<i16>,
    def: Vec<i16>,
    elem_defs: Vec<i16>,
    fixed: Vec<u32>,
}

/// What the check of a leaf's levels needs: its max definition level and
/// the element threshold of each enclosing list (index `k - 1`: the list
/// at repetition level `k`), and each one's FixedSizeList size (0: a
/// variable-length list).
#[derive(Debug, Clone)]
struct LeafShape {
    column: usize,
    max_def: i16,
    elem_defs: Vec<i16>,
    fixed: Vec<u32>,
}

impl LeafShape {
    fn max_rep(&self) -> i16 {
        self.elem_defs.len() as i16
    }
}

/// The shapes of the leaves under `node`; `lists` holds the enclosing
/// lists' (element threshold, FixedSizeList size or 0).
fn leaf_shapes(node: &NestNode, lists: &mut Vec<(i16, u32)>, out: &mut Vec<LeafShape>) {
    match node {
        NestNode::Leaf(leaf) => out.push(LeafShape {
            column: leaf.column,
            max_def: leaf.def,
            elem_defs: lists.iter().map(|l| l.0).collect(),
            fixed: lists.iter().map(|l| l.1).collect(),
        }),
        NestNode::Struct(s) => s
            .fields
            .iter()
            .for_each(|f| leaf_shapes(&f.node, lists, out)),
        NestNode::List(list) => {
            lists.push((list.levels.elem_def, list.fixed.unwrap_or(0)));
            leaf_shapes(&list.element.node, lists, out);
            lists.pop();
        }
        NestNode::Map(map) => {
            lists.push((map.levels.elem_def, 0));
            leaf_shapes(&map.key.node, lists, out);
            leaf_shapes(&map.value.node, lists, out);
            lists.pop();
        }
    }
}

fn check_all_levels(
    fields: &[NestField],
    levels: &BTreeMap<usize, LeafLevels<'_>>,
) -> Result<BTreeMap<usize, CheckedLevels>, NestError> {
    let mut shapes = Vec::new();
    for field in fields {
        leaf_shapes(&field.node, &mut Vec::new(), &mut shapes);
    }
    shapes
        .iter()
        .map(|shape| {
            let given = levels.get(&shape.column).ok_or(NestError::MissingLevels {
                column: shape.column,
            })?;
            Ok((shape.column, check_levels(shape, given)?))
        })
        .collect()
}

/// One kind of levels, filled with 0 when absent and allowed to be.
fn level_slice(
    shape: &LeafShape,
    given: Option<&[i16]>,
    entries: usize,
    which: LevelKind,
    max: i16,
) -> Result<Vec<i16>, NestError> {
    match given {
        Some(levels) if levels.len() == entries => Ok(levels.to_vec()),
        Some(levels) => Err(NestError::LevelCount {
            column: shape.column,
            which,
            entries,
            found: levels.len(),
        }),
        None if max == 0 => Ok(vec![0; entries]),
        None => Err(NestError::AbsentLevels {
            column: shape.column,
            which,
            max,
        }),
    }
}

/// The first entry whose level is outside `0..=max`.
fn check_range(column: usize, levels: &[i16], which: LevelKind, max: i16) -> Result<(), NestError> {
    match levels.iter().position(|&l| !(0..=max).contains(&l)) {
        Some(index) => Err(NestError::LevelOutOfRange {
            column,
            index,
            which,
            level: levels[index],
            max,
        }),
        None => Ok(()),
    }
}

/// Checks a leaf's levels: each in range, the first a record start, and
/// each continuation (`rep = k > 0`) an element of the level-`k` list that
/// follows one (both entries at or past the list's element threshold).
/// Every test is on one entry and its predecessor: a GPU checks them all at
/// once.
fn check_levels(shape: &LeafShape, given: &LeafLevels<'_>) -> Result<CheckedLevels, NestError> {
    let column = shape.column;
    let rep = level_slice(
        shape,
        given.rep,
        given.entries,
        LevelKind::Repetition,
        shape.max_rep(),
    )?;
    let def = level_slice(
        shape,
        given.def,
        given.entries,
        LevelKind::Definition,
        shape.max_def,
    )?;
    check_range(column, &def, LevelKind::Definition, shape.max_def)?;
    check_range(column, &rep, LevelKind::Repetition, shape.max_rep())?;
    if let Some(&first) = rep.first().filter(|&&r| r != 0) {
        return Err(NestError::FirstNotRecord { column, rep: first });
    }
    for index in 1..rep.len() {
        let r = rep[index];
        let Some(&need) = usize::try_from(r - 1)
            .ok()
            .and_then(|k| shape.elem_defs.get(k))
        else {
            continue;
        };
        let (prev_def, d) = (def[index - 1], def[index]);
        if prev_def < need || d < need {
            return Err(NestError::BadContinuation {
                column,
                index,
                rep: r,
                def: d,
                prev_def,
                need,
            });
        }
    }
    Ok(CheckedLevels {
        rep,
        def,
        elem_defs: shape.elem_defs.clone(),
        fixed: shape.fixed.clone(),
    })
}

/// Exclusive prefix sum of weights: `scan[i]` the weights before `i`,
/// and one more entry, the total.
fn exclusive_scan(weights: impl IntoIterator<Item = usize>) -> Vec<usize> {
    let mut total = 0;
    let mut scan: Vec<usize> = weights
        .into_iter()
        .map(|w| {
            let before = total;
            total += w;
            before
        })
        .collect();
    scan.push(total);
    scan
}

/// Each entry index repeated by its weight, in order: a scan and a
/// scatter.
fn expand(weights: &[usize]) -> Vec<usize> {
    let scan = exclusive_scan(weights.iter().copied());
    let mut positions = vec![0; scan.last().copied().unwrap_or(0)];
    for (entry, (&w, &at)) in weights.iter().zip(&scan).enumerate() {
        positions[at..at + w].fill(entry);
    }
    positions
}

impl CheckedLevels {
    /// The definition level at or above which an entry starts a slot of
    /// level `k` (0 the records, `k` the elements of the k-th list).
    fn level_def(&self, k: usize) -> i16 {
        k.checked_sub(1).map_or(0, |i| self.elem_defs[i])
    }

    /// The slots of `level` entry `(r, d)` stands for: 1 where it starts
    /// one (`r <= level.rep`, `d >= level.def`); where it is a null or
    /// empty FixedSizeList above the level instead, the list's padding
    /// (its size, times the sizes of the FixedSizeLists between it and
    /// the level; 0 through a variable-length list); else 0.
    fn weight(&self, level: SlotLevel, r: i16, d: i16) -> usize {
        let mut k = level.rep.max(0) as usize;
        if r > level.rep {
            return 0;
        }
        let mut w = 1usize;
        while k > 0 && d < self.level_def(k) {
            w = w.saturating_mul(self.fixed[k - 1] as usize);
            k -= 1;
        }
        // A continuation below the level where the entry's slots end
        // cannot pass the level check; counted as nothing.
        if (r as usize) > k {
            return 0;
        }
        w
    }

    /// Per entry, the slots of `level` it stands for ([`Self::weight`]).
    fn slot_weights(&self, level: SlotLevel) -> Vec<usize> {
        self.rep
            .iter()
            .zip(&self.def)
            .map(|(&r, &d)| self.weight(level, r, d))
            .collect()
    }

    /// The entry of each slot of `level` (a padded slot: the null or
    /// empty list's entry).
    fn slot_entries(&self, level: SlotLevel) -> Vec<usize> {
        expand(&self.slot_weights(level))
    }

    /// Whether `level` holds the elements of a FixedSizeList (some of its
    /// slots may be padding, always null).
    fn padded(&self, level: SlotLevel) -> bool {
        level.rep > 0 && self.fixed[level.rep as usize - 1] > 0
    }

    /// Per slot, `def >= threshold` (a padded slot: below the level's
    /// threshold, null); None when the threshold is the level's and no
    /// slot is padding (always met).
    fn validity(&self, slots: &[usize], threshold: i16, level: SlotLevel) -> Option<Vec<bool>> {
        (threshold > level.def || self.padded(level))
            .then(|| slots.iter().map(|&e| self.def[e] >= threshold).collect())
    }
}

fn levels_of<'a>(
    node: &NestNode,
    checked: &'a BTreeMap<usize, CheckedLevels>,
) -> Result<&'a CheckedLevels, NestError> {
    let column = node
        .first_column()
        .ok_or_else(|| NestError::LayoutMismatch {
            what: "a struct without fields".into(),
        })?;
    checked
        .get(&column)
        .ok_or(NestError::MissingLevels { column })
}

/// The layout of `node`, whose slots are those of `level`.
fn assemble_node(
    node: &NestNode,
    level: SlotLevel,
    checked: &BTreeMap<usize, CheckedLevels>,
) -> Result<NodeLayout, NestError> {
    let levels = levels_of(node, checked)?;
    let slots = levels.slot_entries(level);
    Ok(match node {
        NestNode::Leaf(leaf) => NodeLayout::Leaf(assemble_leaf(leaf, levels, &slots, level)),
        NestNode::Struct(s) => {
            let fields = s
                .fields
                .iter()
                .map(|f| assemble_child(&f.node, level, checked, slots.len()))
                .collect::<Result<Vec<_>, _>>()?;
            NodeLayout::Struct(StructLayout {
                slots: slots.len(),
                validity: levels.validity(&slots, s.def, level),
                fields,
            })
        }
        NestNode::List(list) => {
            let (offsets, validity) = match list.fixed {
                Some(size) => fixed_offsets(levels, &slots, &list.levels, level, size, node)?,
                None => list_offsets(levels, &slots, &list.levels, level)?,
            };
            let count = element_count(&offsets);
            let inner = list.levels.element_level();
            let element = assemble_child(&list.element.node, inner, checked, count)?;
            NodeLayout::List(ListLayout {
                offsets,
                validity,
                element: Box::new(element),
            })
        }
        NestNode::Map(map) => {
            let (offsets, validity) = list_offsets(levels, &slots, &map.levels, level)?;
            let count = element_count(&offsets);
            let inner = map.levels.element_level();
            let key = assemble_child(&map.key.node, inner, checked, count)?;
            let value = assemble_child(&map.value.node, inner, checked, count)?;
            NodeLayout::Map(MapLayout {
                offsets,
                validity,
                key: Box::new(key),
                value: Box::new(value),
            })
        }
    })
}

/// A child's layout, which must cover `expected` slots.
fn assemble_child(
    node: &NestNode,
    level: SlotLevel,
    checked: &BTreeMap<usize, CheckedLevels>,
    expected: usize,
) -> Result<NodeLayout, NestError> {
    let layout = assemble_node(node, level, checked)?;
    if layout.slots() != expected {
        return Err(NestError::SlotMismatch {
            column: node.first_column().unwrap_or_default(),
            expected,
            found: layout.slots(),
        });
    }
    Ok(layout)
}

/// A FixedSizeList's offsets (`i * size`: it has none of its own, they
/// give its element count) and validity over its parent slots, with the
/// check that every list with elements holds `size` of them: its first
/// element's slot is its own slot times the size (a null or empty list,
/// padded, holds `size` by its weight), and the elements number the lists
/// times the size. The GPU checks the same way.
fn fixed_offsets(
    levels: &CheckedLevels,
    slots: &[usize],
    list: &ListLevels,
    level: SlotLevel,
    size: u32,
    node: &NestNode,
) -> Result<(Vec<i32>, Option<Vec<bool>>), NestError> {
    let scan = exclusive_scan(levels.slot_weights(list.element_level()));
    let size = size as usize;
    let fail = |slot: usize, length: usize| NestError::FixedSize {
        column: node.first_column().unwrap_or_default(),
        slot,
        length,
        size: size as u32,
    };
    for (i, &e) in slots.iter().enumerate() {
        let own = levels.def[e] >= level.def;
        if own && levels.def[e] >= list.elem_def && scan[e] != i * size {
            // The list before it holds the difference.
            let before = i.saturating_sub(1);
            return Err(fail(before, scan[e].saturating_sub(before * size)));
        }
    }
    let total = scan.last().copied().unwrap_or(0);
    if total != slots.len() * size {
        let last = slots.len().saturating_sub(1);
        return Err(fail(last, total.saturating_sub(last * size)));
    }
    let offsets = (0..=slots.len())
        .map(|i| i32::try_from(i * size).map_err(|_| NestError::OffsetOverflow { count: i * size }))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((offsets, levels.validity(slots, list.null_def, level)))
}

fn element_count(offsets: &[i32]) -> usize {
    offsets.last().map_or(0, |&last| last as usize)
}

/// A leaf's slots: valid iff `def >= leaf.def`; its value index the
/// exclusive prefix sum of the value flags (`def == max def`).
fn assemble_leaf(
    leaf: &LeafNode,
    levels: &CheckedLevels,
    slots: &[usize],
    level: SlotLevel,
) -> LeafLayout {
    let value_scan = exclusive_scan(levels.def.iter().map(|&d| usize::from(d >= leaf.def)));
    LeafLayout {
        column: leaf.column,
        validity: levels.validity(slots, leaf.def, level),
        value_index: slots.iter().map(|&e| value_scan[e]).collect(),
        values: value_scan.last().copied().unwrap_or(0),
    }
}

/// A list's offsets and validity over its parent slots: an entry is an
/// element iff `rep <= list.rep && def >= elem_def`; the offsets are the
/// exclusive prefix sum of the element flags at the parent slots, and the
/// total.
fn list_offsets(
    levels: &CheckedLevels,
    slots: &[usize],
    list: &ListLevels,
    level: SlotLevel,
) -> Result<(Vec<i32>, Option<Vec<bool>>), NestError> {
    let scan = exclusive_scan(levels.slot_weights(list.element_level()));
    let offsets = offsets_at(&scan, slots)?;
    Ok((offsets, levels.validity(slots, list.null_def, level)))
}

/// The offsets of a list: the element scan (`scan`, one entry per level
/// entry and the total) taken at the parent slots' entries, then the
/// total; [`NestError::OffsetOverflow`] past `i32::MAX` elements.
pub(super) fn offsets_at(scan: &[usize], slots: &[usize]) -> Result<Vec<i32>, NestError> {
    let total = scan.last().copied().unwrap_or(0);
    if i32::try_from(total).is_err() {
        return Err(NestError::OffsetOverflow { count: total });
    }
    // Every scan value is at most the total: no cast below truncates.
    let mut offsets: Vec<i32> = slots.iter().map(|&e| scan[e] as i32).collect();
    offsets.push(total as i32);
    Ok(offsets)
}
