//! Nested columns (LIST, MAP, STRUCT at any depth), pure (no I/O, no GPU):
//!
//! - the nesting model of a projection: [`nest_fields`] turns a Parquet
//!   schema into one [`NestField`] tree per top-level field, with the
//!   definition and repetition thresholds of every node, and the Arrow
//!   type of each node ([`NestField::arrow_field`]) as arrow-rs's
//!   `parquet_to_arrow_schema` gives it (strings and binaries as views);
//! - the CPU reference of level assembly: [`assemble`] turns each leaf's
//!   repetition and definition levels into the Arrow nested layout (list
//!   offsets, validities, the value of each leaf slot) with flags and
//!   prefix sums, the way the GPU kernels will; [`build_arrays`] makes the
//!   Arrow arrays from that layout and each leaf's non-null values.
//!
//! # Levels and slots
//!
//! Every node sits at a *level*: the records, or the elements of its
//! innermost enclosing list. A [`SlotLevel`] `(rep, def)` names the level:
//! level entry `i` of a leaf below is one *slot* of the level iff
//! `rep[i] <= rep && def[i] >= def` (records: `(0, 0)`, every entry with
//! `rep == 0`). A list at repetition level `r` with element threshold
//! `elem_def` opens the level `(r, elem_def)` for its element. A node's
//! slots are its level's slots; its own threshold (a struct's `def`, a
//! list's `null_def`, a leaf's `def`) says at which slots it is present.

//!
//! Files: this one (the model's types), `schema.rs` (the schema walk,
//! [`nest_fields`]), `assembly.rs` (levels to layout, [`assemble`]),
//! `arrays.rs` (layout to Arrow arrays, [`build_arrays`]), `gpu.rs` (the
//! model flattened into the GPU's nodes and each leaf's kernel work,
//! [`GpuNesting`]).

mod arrays;
mod assembly;
mod gpu;
mod hints;
mod schema;

#[cfg(test)]
mod nesting_tests;
#[cfg(any(test, feature = "internals"))]
pub mod testing;

pub use arrays::build_arrays;
pub use assembly::{
    assemble, Assembly, LeafLayout, LeafLevels, LevelKind, ListLayout, MapLayout, NestError,
    NodeLayout, SlotLevel, StructLayout,
};
pub use gpu::{
    GpuNesting, LeafOutput, LeafWork, NodeKind, NodePlan, NEST_LEVELS, PADDING_FACTOR,
    PADDING_SLACK,
};
pub use hints::{apply_arrow_schema, nest_fields_of_file};
pub use schema::nest_fields;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use arrow::array::{
    new_null_array, Array, ArrayRef, FixedSizeListArray, ListArray, MapArray, StructArray,
    UInt64Array,
};
use arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::compute::take;
use arrow::datatypes::{DataType, Field, Fields};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;
use parquet::basic::{ConvertedType, LogicalType, Repetition};
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};

use super::column_type::{leaf_type, ColumnType};
use super::plan_error::DecodePlanError;

/// One Arrow field of the model: a name, the Parquet field id arrow-rs
/// keeps, and what the field holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestField {
    /// The field's name (the Parquet field's; a legacy list's element is
    /// named after its repeated field).
    pub name: String,
    /// The Parquet field id, put in the Arrow field's metadata under
    /// `PARQUET:field_id` as arrow-rs does; None where the Parquet field
    /// has none or arrow-rs drops it (the element of a legacy list).
    pub field_id: Option<i32>,
    /// What the field holds.
    pub node: NestNode,
}

/// A node of the nesting model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NestNode {
    /// A Parquet leaf column.
    Leaf(LeafNode),
    /// A group that is neither a list nor a map.
    Struct(StructNode),
    /// A list: a LIST group, in any of its forms, or a repeated field
    /// without annotation.
    List(ListNode),
    /// A MAP (or MAP_KEY_VALUE) group with keys and values.
    Map(MapNode),
}

/// A leaf column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafNode {
    /// The leaf's index in the [`SchemaDescriptor`].
    pub column: usize,
    /// The type mapping ([`leaf_type`]): physical type, Arrow type, kernel
    /// codes; its `nullable` is this node's.
    pub column_type: ColumnType,
    /// Whether the leaf itself is OPTIONAL (its values may be null).
    pub nullable: bool,
    /// The definition level at which the value is non-null: the column's
    /// max definition level (a level entry holds a value iff its
    /// definition level equals it).
    pub def: i16,
    /// The column's max repetition level: the number of lists around it.
    pub rep: i16,
}

/// A struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructNode {
    /// The struct's fields (those the projection keeps), in schema order.
    pub fields: Vec<NestField>,
    /// Whether the struct is OPTIONAL.
    pub nullable: bool,
    /// Definition level at or above which the struct is non-null (a
    /// REQUIRED struct: its level's threshold, always met at its slots).
    pub def: i16,
}

/// The thresholds of a list or a map (a map is a list of key-value
/// entries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLevels {
    /// Whether the list (or map) itself is OPTIONAL.
    pub nullable: bool,
    /// `def >= null_def`: the list is non-null.
    pub null_def: i16,
    /// `def >= elem_def`: the list has at least one element at this entry
    /// (`null_def + 1`).
    pub elem_def: i16,
    /// The repetition level of the list's elements: an entry with
    /// `rep <= rep` and `def >= elem_def` starts an element.
    pub rep: i16,
}

impl ListLevels {
    /// The level the list's elements sit at.
    pub fn element_level(&self) -> SlotLevel {
        SlotLevel {
            rep: self.rep,
            def: self.elem_def,
        }
    }
}

/// A list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListNode {
    /// The element field (Arrow: the list's child field).
    pub element: Box<NestField>,
    /// The list's thresholds.
    pub levels: ListLevels,
    /// A LargeList (64-bit offsets), where the file's embedded Arrow schema
    /// says so (as arrow-rs reads it); else a List.
    pub large: bool,
    /// A FixedSizeList of this many elements, where the embedded Arrow
    /// schema says so: no offsets; a null or empty list stands for that
    /// many null elements (arrow-rs's padding), a list with elements must
    /// hold exactly that many.
    pub fixed: Option<u32>,
}

/// A map: a list of non-null `struct<key, value>` entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapNode {
    /// The entries' name (the repeated key-value group's name).
    pub entries_name: String,
    /// The key field; Arrow makes it non-nullable whatever its Parquet
    /// repetition (arrow-rs), so a null key cannot be built.
    pub key: Box<NestField>,
    /// The value field.
    pub value: Box<NestField>,
    /// The map's thresholds (those of the list of entries).
    pub levels: ListLevels,
}

impl NestField {
    /// The Arrow field: arrow-rs's for the same Parquet field (name,
    /// type, nullability, field id metadata), with strings and binaries as
    /// views.
    pub fn arrow_field(&self) -> Field {
        let field = Field::new(&self.name, self.node.data_type(), self.node.nullable());
        match self.field_id {
            Some(id) => field.with_metadata(HashMap::from([(
                PARQUET_FIELD_ID_META_KEY.to_string(),
                id.to_string(),
            )])),
            None => field,
        }
    }

    /// The leaves under this field, in schema order.
    pub fn leaves(&self) -> Vec<&LeafNode> {
        let mut out = Vec::new();
        self.node.collect_leaves(&mut out);
        out
    }
}

impl NestNode {
    /// The node's Arrow type.
    pub fn data_type(&self) -> DataType {
        match self {
            NestNode::Leaf(leaf) => leaf.column_type.data_type.clone(),
            NestNode::Struct(node) => DataType::Struct(arrow_fields(&node.fields)),
            NestNode::List(node) => {
                let element = Arc::new(node.element.arrow_field());
                match node.fixed {
                    Some(size) => DataType::FixedSizeList(element, size as i32),
                    None if node.large => DataType::LargeList(element),
                    None => DataType::List(element),
                }
            }
            NestNode::Map(node) => DataType::Map(Arc::new(node.entries_field()), false),
        }
    }

    /// Whether the node's Parquet field is OPTIONAL (the Arrow field's
    /// nullability, except a map's key, see [`MapNode::key`]).
    pub fn nullable(&self) -> bool {
        match self {
            NestNode::Leaf(leaf) => leaf.nullable,
            NestNode::Struct(node) => node.nullable,
            NestNode::List(node) => node.levels.nullable,
            NestNode::Map(node) => node.levels.nullable,
        }
    }

    /// The first leaf column under the node (whose levels describe the
    /// node's slots); None for a struct without fields.
    fn first_column(&self) -> Option<usize> {
        match self {
            NestNode::Leaf(leaf) => Some(leaf.column),
            NestNode::Struct(node) => node.fields.first()?.node.first_column(),
            NestNode::List(node) => node.element.node.first_column(),
            NestNode::Map(node) => node.key.node.first_column(),
        }
    }

    fn collect_leaves<'a>(&'a self, out: &mut Vec<&'a LeafNode>) {
        match self {
            NestNode::Leaf(leaf) => out.push(leaf),
            NestNode::Struct(node) => node.fields.iter().for_each(|f| f.node.collect_leaves(out)),
            NestNode::List(node) => node.element.node.collect_leaves(out),
            NestNode::Map(node) => {
                node.key.node.collect_leaves(out);
                node.value.node.collect_leaves(out);
            }
        }
    }
}

impl MapNode {
    /// The Arrow entries field: a non-nullable struct of the key
    /// (non-nullable) and the value.
    pub fn entries_field(&self) -> Field {
        let key = self.key.arrow_field().with_nullable(false);
        let fields = Fields::from(vec![key, self.value.arrow_field()]);
        Field::new(&self.entries_name, DataType::Struct(fields), false)
    }
}

/// The Arrow fields of a list of model fields (a struct's, or the
/// top-level fields: the schema's).
pub fn arrow_fields(fields: &[NestField]) -> Fields {
    fields.iter().map(NestField::arrow_field).collect()
}
