//! What the GPU builds for a nested projection: the model flattened into
//! nodes with their buffers, and per leaf the nesting kernels' work (which
//! levels it decodes, the outputs it writes for the nodes it describes).
//! Pure: the decoder's stage turns it into device tasks, and its finish
//! builds the device arrays from the nodes.
//!
//! A node's slots are those of its level `j` (0 the records, `k` the
//! elements of the k-th enclosing list); its *owner* is the first leaf
//! under it, whose levels describe it (as [`assemble`] takes them). Every
//! leaf computes its own slot counts, and the decoder checks that the
//! leaves under a node agree with its owner.

use super::*;

/// A node of the flattened model (preorder: each top-level field, then its
/// subtree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePlan {
    /// The node's Arrow field (a map's entries: the entries field).
    pub field: Field,
    /// What it is, with its children's node indices.
    pub kind: NodeKind,
    /// The level whose slots the node spans.
    pub level: usize,
    /// The leaf column whose levels describe the node's slots.
    pub owner: usize,
    /// `def >= threshold`: the node is valid at a slot; None when it always
    /// is (no validity bitmap).
    pub validity: Option<u32>,
}

/// A node's kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeKind {
    /// A leaf column.
    Leaf {
        /// Its column index.
        column: usize,
    },
    /// A struct and its fields' nodes.
    Struct {
        /// The fields' nodes.
        fields: Vec<usize>,
    },
    /// A list (offsets; a FixedSizeList has none) and its element's node.
    List {
        /// The element's node.
        element: usize,
        /// A FixedSizeList's size.
        fixed: Option<u32>,
    },
    /// A map (offsets), its non-null entries struct, its keys and values.
    Map {
        /// The keys' node.
        key: usize,
        /// The values' node.
        value: usize,
    },
}

/// One output a leaf's nesting task writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafOutput {
    /// The offsets of the list (or map) `node`, whose elements are at
    /// level `level` (written at the slots of `level - 1`).
    Offsets {
        /// The list's node.
        node: usize,
        /// Its elements' level.
        level: usize,
    },
    /// The validity of `node` over the slots of its level.
    Validity {
        /// The node.
        node: usize,
        /// Its level.
        level: usize,
        /// `def >= threshold`: valid.
        threshold: u32,
    },
    /// The leaf's own values, from its entries to its slots at `level`
    /// (the innermost list's elements).
    Values {
        /// The leaf's node.
        node: usize,
        /// Its level.
        level: usize,
    },
}

/// A leaf's nesting work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafWork {
    /// The leaf column.
    pub column: usize,
    /// Its node.
    pub node: usize,
    /// Its max repetition level: lists around it.
    pub max_rep: u32,
    /// Its max definition level.
    pub max_def: u32,
    /// Per level `j` (`max_rep + 1` of them): the definition level at or
    /// above which an entry with `rep <= j` starts a slot.
    pub level_def: Vec<u32>,
    /// Per level `j`: the size of the FixedSizeList whose elements the
    /// level holds, 0 when it is not one (the records, a variable-length
    /// list's or a map's elements). A null or empty FixedSizeList stands
    /// for that many padded (null) slots of its elements' level.
    pub level_fixed: Vec<u32>,
    /// What its task writes.
    pub outputs: Vec<LeafOutput>,
}

impl LeafWork {
    /// Whether the leaf's repetition levels are decoded.
    pub fn needs_rep(&self) -> bool {
        self.max_rep > 0
    }

    /// Whether its definition levels are decoded.
    pub fn needs_def(&self) -> bool {
        self.max_def > 0
    }

    /// The most slots each of its levels holds ([`NEST_LEVELS`] of them)
    /// in a chunk of `entries` level entries and `records` records: the
    /// entries (no level has more slots than entries), but for a level of
    /// FixedSizeList elements (where a null or empty list stands for its
    /// size in padded slots):
    ///
    /// - under FixedSizeLists and structs only, the records times the
    ///   sizes (exact);
    /// - under a variable-length list, the entries times the sizes since
    ///   it when that product is at most [`PADDING_FACTOR`] (no entry
    ///   stands for more slots), else an allowance of
    ///   [`PADDING_FACTOR`] times the entries and [`PADDING_SLACK`]
    ///   ([`LeafWork::is_allowance`]: a chunk padded past it is refused
    ///   with a typed error, never cut).
    ///
    /// None past `i32::MAX` slots.
    ///
    /// ```
    /// use gdscan::decode::page::nesting::LeafWork;
    /// let work = LeafWork {
    ///     column: 0,
    ///     node: 1,
    ///     max_rep: 1,
    ///     max_def: 2,
    ///     level_def: vec![0, 2],
    ///     level_fixed: vec![0, 768],
    ///     outputs: Vec::new(),
    /// };
    /// // 10 records, three of them null: 7 * 768 + 3 entries.
    /// let capacity = work.capacity(7 * 768 + 3, 10).unwrap();
    /// assert_eq!(&capacity[..2], &[7 * 768 + 3, 7680]);
    /// assert!(!work.is_allowance(1));
    /// ```
    pub fn capacity(&self, entries: u64, records: u64) -> Option<[u32; NEST_LEVELS]> {
        let mut capacity = [0u32; NEST_LEVELS];
        // The slots one record (Err: one entry, under a variable-length
        // list) stands for at most, through the FixedSizeLists so far.
        let mut per: Result<u64, u64> = Ok(1);
        for (j, c) in capacity.iter_mut().enumerate() {
            let size = u64::from(self.level_fixed.get(j).copied().unwrap_or(0));
            let slots = if j == 0 {
                entries
            } else if size == 0 {
                per = Err(1);
                entries
            } else {
                match per {
                    Ok(p) => {
                        let n = p.checked_mul(size)?;
                        per = Ok(n);
                        records.checked_mul(n)?.max(entries)
                    }
                    Err(p) => {
                        let n = p.saturating_mul(size);
                        per = Err(n);
                        match n <= PADDING_FACTOR {
                            // A bound: no entry stands for more.
                            true => entries.checked_mul(n)?,
                            false => entries
                                .checked_mul(PADDING_FACTOR)?
                                .checked_add(PADDING_SLACK)?,
                        }
                    }
                }
            };
            *c = u32::try_from(slots)
                .ok()
                .filter(|&n| n <= i32::MAX as u32)?;
        }
        Some(capacity)
    }

    /// Whether a FixedSizeList level lies below a variable-length list:
    /// then an entry may stand for no slot of the innermost level (an
    /// empty list) and another for several (padding), so equal counts of
    /// slots and entries do not make them one for one, and the leaf's
    /// values always move to its slots (the kernels' identity case is
    /// off).
    pub fn fixed_under_variable(&self) -> bool {
        let levels = self.level_fixed.iter().skip(1);
        let first_variable = levels.clone().position(|&s| s == 0);
        first_variable.is_some_and(|v| levels.skip(v).any(|&s| s != 0))
    }

    /// Whether level `level`'s capacity is an allowance, not a bound: it
    /// holds FixedSizeList elements under a variable-length list, whose
    /// sizes since that list multiply past [`PADDING_FACTOR`] (more
    /// padding than [`LeafWork::capacity`] allows is refused with a typed
    /// error, the chunk valid nonetheless).
    pub fn is_allowance(&self, level: usize) -> bool {
        let size = |j: usize| u64::from(self.level_fixed.get(j).copied().unwrap_or(0));
        if size(level) == 0 {
            return false;
        }
        let Some(variable) = (1..level).rev().find(|&j| size(j) == 0) else {
            return false;
        };
        let product = (variable + 1..=level).fold(1u64, |p, j| p.saturating_mul(size(j)));
        product > PADDING_FACTOR
    }
}

/// The most slots per level entry a FixedSizeList level under a
/// variable-length list is sized for (see [`LeafWork::capacity`]).
pub const PADDING_FACTOR: u64 = 4;

/// Slots a FixedSizeList level under a variable-length list may hold past
/// [`PADDING_FACTOR`] times its chunk's entries, where its sizes multiply
/// past that factor (see [`LeafWork::capacity`]).
pub const PADDING_SLACK: u64 = 4096;

/// Levels a nested leaf may have: the records and up to seven lists (the
/// kernels' `NEST_LEVELS`).
pub const NEST_LEVELS: usize = 8;

/// The GPU's plan of a nested projection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuNesting {
    /// The model's top-level fields.
    pub fields: Vec<NestField>,
    /// Every node, preorder.
    pub nodes: Vec<NodePlan>,
    /// The top-level fields' nodes, in order.
    pub roots: Vec<usize>,
    /// Per leaf that has nesting work (in schema order): its work. A leaf
    /// under no list and describing no struct has none (its entries are
    /// its slots).
    pub leaves: Vec<LeafWork>,
}

impl GpuNesting {
    /// The plan of `fields` (the model of a projection).
    pub fn new(fields: Vec<NestField>) -> GpuNesting {
        let mut walk = Walk::default();
        let roots = fields
            .iter()
            .map(|f| walk.node(f, &mut Vec::new(), SlotsAt::RECORDS))
            .collect();
        let leaves = walk
            .leaves
            .into_iter()
            .filter(|l| l.max_rep > 0 || !l.outputs.is_empty())
            .collect();
        GpuNesting {
            fields,
            nodes: walk.nodes,
            roots,
            leaves,
        }
    }

    /// The leaves under `node` (their columns), in schema order.
    pub fn leaves_under(&self, node: usize) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect_leaves(node, &mut out);
        out
    }

    fn collect_leaves(&self, node: usize, out: &mut Vec<usize>) {
        match &self.nodes[node].kind {
            NodeKind::Leaf { column } => out.push(*column),
            NodeKind::Struct { fields } => fields.iter().for_each(|&f| self.collect_leaves(f, out)),
            NodeKind::List { element, .. } => self.collect_leaves(*element, out),
            NodeKind::Map { key, value } => {
                self.collect_leaves(*key, out);
                self.collect_leaves(*value, out);
            }
        }
    }
}

/// Where a node's slots are: its level, the level's slot threshold, and
/// whether the level holds a FixedSizeList's elements (padded slots).
#[derive(Debug, Clone, Copy)]
struct SlotsAt {
    level: usize,
    def: i16,
    padded: bool,
}

impl SlotsAt {
    const RECORDS: SlotsAt = SlotsAt {
        level: 0,
        def: 0,
        padded: false,
    };

    /// The level of a list's elements.
    fn elements(&self, levels: &ListLevels, fixed: Option<u32>) -> SlotsAt {
        SlotsAt {
            level: self.level + 1,
            def: levels.elem_def,
            padded: fixed.is_some(),
        }
    }
}

/// The walk that flattens the model: nodes in preorder, each leaf's work.
#[derive(Default)]
struct Walk {
    nodes: Vec<NodePlan>,
    leaves: Vec<LeafWork>,
}

impl Walk {
    /// Adds `field`'s node and subtree; `lists` are the (element
    /// threshold, FixedSizeList size or 0) of the lists around it, `at`
    /// where its slots are. Returns its index.
    fn node(&mut self, field: &NestField, lists: &mut Vec<(u32, u32)>, at: SlotsAt) -> usize {
        let index = self.nodes.len();
        let owner = field.node.first_column().unwrap_or_default();
        let level = at.level;
        // A padded slot is null whatever the node's threshold.
        let threshold = |t: i16| (t > at.def || at.padded).then_some(t as u32);
        self.nodes.push(NodePlan {
            field: field.arrow_field(),
            kind: NodeKind::Struct { fields: Vec::new() },
            level,
            owner,
            validity: None,
        });
        let (kind, validity) = match &field.node {
            NestNode::Leaf(leaf) => {
                self.leaf(leaf, index, lists);
                (
                    NodeKind::Leaf {
                        column: leaf.column,
                    },
                    threshold(leaf.def),
                )
            }
            NestNode::Struct(s) => {
                let fields = s.fields.iter().map(|f| self.node(f, lists, at)).collect();
                (NodeKind::Struct { fields }, threshold(s.def))
            }
            NestNode::List(list) => {
                lists.push((list.levels.elem_def as u32, list.fixed.unwrap_or(0)));
                let inner = at.elements(&list.levels, list.fixed);
                let element = self.node(&list.element, lists, inner);
                lists.pop();
                let kind = NodeKind::List {
                    element,
                    fixed: list.fixed,
                };
                (kind, threshold(list.levels.null_def))
            }
            NestNode::Map(map) => {
                lists.push((map.levels.elem_def as u32, 0));
                let inner = at.elements(&map.levels, None);
                let key = self.node(&map.key, lists, inner);
                let value = self.node(&map.value, lists, inner);
                lists.pop();
                (NodeKind::Map { key, value }, threshold(map.levels.null_def))
            }
        };
        let node = &mut self.nodes[index];
        node.kind = kind;
        node.validity = validity;
        self.describe(index);
        index
    }

    /// A leaf's work: its levels' thresholds; under a list, its values
    /// move to its slots (with its validity there).
    fn leaf(&mut self, leaf: &LeafNode, node: usize, lists: &[(u32, u32)]) {
        let max_rep = leaf.rep as u32;
        let mut level_def = vec![0];
        level_def.extend(lists.iter().map(|l| l.0));
        let mut level_fixed = vec![0];
        level_fixed.extend(lists.iter().map(|l| l.1));
        let mut work = LeafWork {
            column: leaf.column,
            node,
            max_rep,
            max_def: leaf.def as u32,
            level_def,
            level_fixed,
            outputs: Vec::new(),
        };
        if max_rep > 0 {
            work.outputs.push(LeafOutput::Values {
                node,
                level: max_rep as usize,
            });
        }
        self.leaves.push(work);
    }

    /// The outputs of node `index` (a struct's or list's validity, a list's
    /// offsets; a leaf's validity at its slots when its values move), on
    /// its owner's work.
    fn describe(&mut self, index: usize) {
        let node = self.nodes[index].clone();
        let Some(work) = self.leaves.iter_mut().find(|l| l.column == node.owner) else {
            return;
        };
        match node.kind {
            NodeKind::Leaf { .. } => {
                // At the records, the page kernel's validity is the leaf's.
                if let (Some(threshold), true) = (node.validity, work.max_rep > 0) {
                    work.outputs.push(LeafOutput::Validity {
                        node: index,
                        level: node.level,
                        threshold,
                    });
                }
            }
            NodeKind::Struct { .. } | NodeKind::List { .. } | NodeKind::Map { .. } => {
                if let NodeKind::List { fixed: None, .. } | NodeKind::Map { .. } = node.kind {
                    work.outputs.push(LeafOutput::Offsets {
                        node: index,
                        level: node.level + 1,
                    });
                }
                if let Some(threshold) = node.validity {
                    work.outputs.push(LeafOutput::Validity {
                        node: index,
                        level: node.level,
                        threshold,
                    });
                }
            }
        }
    }
}
