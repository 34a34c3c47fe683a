//! orders_nested: TPC-H orders with each order's lineitems nested in it, the
//! table of `gdscan bench decode --cases nested` (a nested benchmark of the
//! GPU decoder against the flat lineitem of the same data).
//!
//! # Schema
//!
//! The nine orders columns as tpchgen-arrow types them, then
//! `o_lineitems: list<item: struct<l_partkey, ..., l_comment>>`: the
//! fifteen lineitem columns but `l_orderkey` (it is the row's `o_orderkey`),
//! in lineitem's order and types. The list and its `item` struct are
//! nullable, as arrow-rs's `Field::new_list_field` makes them and its writer
//! writes them by default (an OPTIONAL `o_lineitems` LIST group, a REPEATED
//! `list` group, an OPTIONAL `item` group and REQUIRED leaves: definition
//! levels up to 2, repetition levels up to 1). No list and no item is ever
//! null, and every order holds its 1 to 7 lineitems in lineitem order.
//!
//! # Generation
//!
//! Each tpchgen part is generated twice, as orders and as lineitems:
//! tpchgen partitions lineitem by order, so the same part of both covers the
//! same orders, in orderkey order. The part's lineitems are grouped into one
//! list per order, checked to belong to it, and written as one batch; a
//! generating thread holds one part at a time, never the table. The files,
//! parts and row groups are sized as lineitem's (see
//! [`Table::sizing_rows`](super::Table::sizing_rows) and
//! [`LINES_PER_ORDER`]).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int64Array, ListArray, RecordBatch, StructArray};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
use arrow::error::ArrowError;
use tpchgen::generators::{LineItemGenerator, OrderGenerator};
use tpchgen_arrow::{LineItemArrow, OrderArrow};

/// TPC-H's mean lineitems per order (1 to 7, uniformly): orders_nested's
/// row groups hold `row_group_rows / LINES_PER_ORDER` orders, so that they
/// carry about as many lineitems (values per leaf column) as a lineitem
/// row group of `row_group_rows` rows.
pub(super) const LINES_PER_ORDER: usize = 4;

/// The list column's name.
pub const LINEITEMS_COLUMN: &str = "o_lineitems";

/// The order's key in lineitem, left out of the nested items.
const LINE_ORDER_KEY: &str = "l_orderkey";

/// The order's key in orders.
const ORDER_KEY: &str = "o_orderkey";

/// The fields of one nested lineitem: lineitem's but `l_orderkey`.
fn item_fields() -> Fields {
    LineItemArrow::schema_ref()
        .fields()
        .iter()
        .filter(|f| f.name() != LINE_ORDER_KEY)
        .cloned()
        .collect()
}

/// The list's element field: a nullable struct named `item`.
fn list_item_field() -> FieldRef {
    Arc::new(Field::new_list_field(DataType::Struct(item_fields()), true))
}

/// orders_nested's Arrow schema: orders' nine fields, then the nullable
/// `o_lineitems` list.
pub(super) fn schema() -> SchemaRef {
    let mut fields: Vec<FieldRef> = OrderArrow::schema_ref().fields().iter().cloned().collect();
    fields.push(Arc::new(Field::new(
        LINEITEMS_COLUMN,
        DataType::List(list_item_field()),
        true,
    )));
    Arc::new(Schema::new(fields))
}

/// tpchgen's `part` (1-based) of `part_count` as orders_nested: one batch
/// holding the part's orders, generated when first asked for.
/// `batch_rows` is the batch size of the two generators underneath.
pub(super) fn batches(
    scale_factor: f64,
    part: i32,
    part_count: i32,
    batch_rows: usize,
) -> Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>> + Send> {
    Box::new(std::iter::once_with(move || {
        nested_part(scale_factor, part, part_count, batch_rows)
    }))
}

/// Generates `part`'s orders and lineitems and nests them.
fn nested_part(
    scale_factor: f64,
    part: i32,
    part_count: i32,
    batch_rows: usize,
) -> Result<RecordBatch, ArrowError> {
    let (sf, p, n) = (scale_factor, part, part_count);
    let orders = concat_all(
        &OrderArrow::schema_ref(),
        OrderArrow::new(OrderGenerator::new(sf, p, n)).with_batch_size(batch_rows),
    )?;
    let lineitems = concat_all(
        &LineItemArrow::schema_ref(),
        LineItemArrow::new(LineItemGenerator::new(sf, p, n)).with_batch_size(batch_rows),
    )?;
    nest(&orders, &lineitems)
}

/// The batches of a generator as one batch of `schema`.
fn concat_all(
    schema: &SchemaRef,
    batches: impl Iterator<Item = Result<RecordBatch, ArrowError>>,
) -> Result<RecordBatch, ArrowError> {
    let batches = batches.collect::<Result<Vec<_>, _>>()?;
    arrow::compute::concat_batches(schema, &batches)
}

/// `orders` (tpchgen-arrow's orders columns) with `lineitems` (its lineitem
/// columns, the same orders' lines in orderkey order) nested as each
/// order's `o_lineitems`; an error when a lineitem matches no order, or
/// comes out of order.
pub(super) fn nest(
    orders: &RecordBatch,
    lineitems: &RecordBatch,
) -> Result<RecordBatch, ArrowError> {
    let offsets = list_offsets(
        int64_column(orders, ORDER_KEY)?,
        int64_column(lineitems, LINE_ORDER_KEY)?,
    )?;
    let fields = item_fields();
    let columns = fields
        .iter()
        .map(|f| {
            lineitems.column_by_name(f.name()).cloned().ok_or_else(|| {
                ArrowError::SchemaError(format!("lineitem has no column {}", f.name()))
            })
        })
        .collect::<Result<Vec<ArrayRef>, _>>()?;
    let items = StructArray::try_new(fields, columns, None)?;
    let list = ListArray::try_new(list_item_field(), offsets, Arc::new(items), None)?;
    let mut columns = orders.columns().to_vec();
    columns.push(Arc::new(list));
    RecordBatch::try_new(schema(), columns)
}

/// The Int64 column `name` of `batch`.
fn int64_column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a Int64Array, ArrowError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
        .ok_or_else(|| ArrowError::SchemaError(format!("no Int64 column {name}")))
}

/// The list offsets that give order `i` the lineitems
/// `offsets[i]..offsets[i + 1]`: the run of lineitems carrying its key
/// (empty when there is none). Every lineitem must fall in its order's run:
/// one left over matches no order, or comes out of order.
fn list_offsets(
    order_keys: &Int64Array,
    line_keys: &Int64Array,
) -> Result<OffsetBuffer<i32>, ArrowError> {
    let lines = line_keys.values();
    let mut offsets = Vec::with_capacity(order_keys.len() + 1);
    offsets.push(0i32);
    let mut at = 0usize;
    for &key in order_keys.values() {
        while lines.get(at) == Some(&key) {
            at += 1;
        }
        let offset = i32::try_from(at).map_err(|_| {
            ArrowError::ComputeError(format!(
                "more than {} lineitems in one generated part",
                i32::MAX
            ))
        })?;
        offsets.push(offset);
    }
    if let Some(stray) = lines.get(at) {
        return Err(ArrowError::InvalidArgumentError(format!(
            "lineitem {at} (l_orderkey {stray}) matches no order of its part in order"
        )));
    }
    Ok(OffsetBuffer::new(offsets.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets_of(orders: &[i64], lines: &[i64]) -> Result<Vec<i32>, ArrowError> {
        list_offsets(
            &Int64Array::from(orders.to_vec()),
            &Int64Array::from(lines.to_vec()),
        )
        .map(|o| o.to_vec())
    }

    #[test]
    fn offsets_group_each_orders_run_of_lineitems() {
        assert_eq!(
            offsets_of(&[1, 2, 3, 7], &[1, 1, 2, 3, 3, 3, 7]).unwrap(),
            [0, 2, 3, 6, 7]
        );
        // An order without lineitems gets an empty list.
        assert_eq!(offsets_of(&[1, 2, 3], &[1, 3]).unwrap(), [0, 1, 1, 2]);
        assert_eq!(offsets_of(&[], &[]).unwrap(), [0]);
    }

    #[test]
    fn a_lineitem_without_its_order_in_place_is_an_error() {
        for (orders, lines) in [
            (&[1i64, 2][..], &[1i64, 5][..]),
            (&[1, 2], &[2, 1]),
            (&[], &[1]),
        ] {
            let e = offsets_of(orders, lines).unwrap_err();
            assert!(e.to_string().contains("matches no order"), "{e}");
        }
    }

    #[test]
    fn a_generated_part_nests_every_lineitem_under_its_order() {
        let batch = nested_part(0.001, 2, 3, 1000).unwrap();
        assert_eq!(batch.schema(), schema());
        let orders = concat_all(
            &OrderArrow::schema_ref(),
            OrderArrow::new(OrderGenerator::new(0.001, 2, 3)).with_batch_size(1000),
        )
        .unwrap();
        assert_eq!(batch.num_rows(), orders.num_rows());
        let list = batch
            .column(orders.num_columns())
            .as_any()
            .downcast_ref::<ListArray>()
            .unwrap();
        let lines = LineItemArrow::new(LineItemGenerator::new(0.001, 2, 3))
            .map(|b| b.unwrap().num_rows())
            .sum::<usize>();
        assert_eq!(list.values().len(), lines);
        let lengths: Vec<i32> = (0..list.len()).map(|i| list.value_length(i)).collect();
        assert!(lengths.iter().all(|l| (1..=7).contains(l)), "{lengths:?}");
        assert!((1..=7).all(|n| lengths.contains(&n)), "{lengths:?}");
    }
}
