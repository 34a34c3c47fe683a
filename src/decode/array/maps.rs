//! Maps as lists. cuDF has no map type: its own Parquet reader gives a map
//! as the list of its key-value structs, and its Arrow import refuses
//! Arrow's Map. A Map's layout is that list's (offsets, validity, one
//! struct child), so [`DeviceBatch::maps_as_lists`] retypes every Map of a
//! batch, at any depth, over the same buffers: nothing is copied.

use std::sync::Arc;

use arrow::array::{Array, ArrayData, RecordBatch, StructArray};
use arrow::datatypes::{DataType, FieldRef, Schema};

use super::{DeviceArrayError, DeviceBatch, DeviceColumn, Result};

/// `data_type` with every Map in it, at any depth, as the List of its
/// entries struct.
///
/// ```
/// use std::sync::Arc;
/// use arrow::datatypes::{DataType, Field, Fields};
/// use gdscan::decode::array::maps_as_lists_type;
///
/// let entries = Field::new(
///     "entries",
///     DataType::Struct(Fields::from(vec![
///         Field::new("key", DataType::Utf8, false),
///         Field::new("value", DataType::Int32, true),
///     ])),
///     false,
/// );
/// let map = DataType::Map(Arc::new(entries.clone()), false);
/// assert_eq!(maps_as_lists_type(&map), DataType::List(Arc::new(entries)));
/// assert_eq!(maps_as_lists_type(&DataType::Int64), DataType::Int64);
/// ```
pub fn maps_as_lists_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Map(entries, _) => DataType::List(field_as_lists(entries)),
        DataType::List(f) => DataType::List(field_as_lists(f)),
        DataType::LargeList(f) => DataType::LargeList(field_as_lists(f)),
        DataType::FixedSizeList(f, size) => DataType::FixedSizeList(field_as_lists(f), *size),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field_as_lists).collect()),
        other => other.clone(),
    }
}

/// `field` with its type's Maps as lists (the same field where it has none).
fn field_as_lists(field: &FieldRef) -> FieldRef {
    let data_type = maps_as_lists_type(field.data_type());
    if &data_type == field.data_type() {
        return field.clone();
    }
    Arc::new(field.as_ref().clone().with_data_type(data_type))
}

impl DeviceColumn {
    /// The column with every Map in it as the List of its entries struct,
    /// over the same buffers ([`maps_as_lists_type`]).
    pub fn maps_as_lists(&self) -> Result<DeviceColumn> {
        let data_type = maps_as_lists_type(self.data_type());
        if &data_type == self.data_type() {
            return Ok(self.clone());
        }
        // Only containers hold a Map: none has variadic buffers.
        let children = self
            .children()
            .iter()
            .map(DeviceColumn::maps_as_lists)
            .collect::<Result<Vec<_>>>()?;
        DeviceColumn::with_children_at(
            data_type,
            self.offset(),
            self.len(),
            self.null_count(),
            self.validity().cloned(),
            self.buffers().to_vec(),
            children,
        )
    }
}

impl DeviceBatch {
    /// The batch with every Map column (at any depth) as the List of its
    /// key-value structs, as cuDF reads a map: the same buffers and ready
    /// event, nothing copied. Hand this to pylibcudf, whose Arrow import
    /// refuses Map.
    pub fn maps_as_lists(&self) -> Result<DeviceBatch> {
        let columns = self
            .columns()
            .iter()
            .map(DeviceColumn::maps_as_lists)
            .collect::<Result<Vec<_>>>()?;
        DeviceBatch::try_new(
            schema_as_lists(self.schema()),
            self.num_rows(),
            columns,
            self.location(),
            self.ready().cloned(),
        )
    }
}

/// `schema` with its fields' Maps as lists.
pub fn schema_as_lists(schema: &Schema) -> Arc<Schema> {
    let fields: Vec<FieldRef> = schema.fields().iter().map(field_as_lists).collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// A host batch with its Maps as lists (the same buffers), for tables the
/// decoder left in host memory.
pub fn host_maps_as_lists(batch: &RecordBatch) -> Result<RecordBatch> {
    let data = StructArray::from(batch.clone()).into_data();
    let retyped = data_as_lists(&data)?;
    let schema = schema_as_lists(batch.schema().as_ref());
    let columns = retyped
        .child_data()
        .iter()
        .map(|c| arrow::array::make_array(c.clone()))
        .collect();
    RecordBatch::try_new(schema, columns).map_err(DeviceArrayError::from)
}

/// `data` retyped by [`maps_as_lists_type`], its children too.
fn data_as_lists(data: &ArrayData) -> Result<ArrayData> {
    let data_type = maps_as_lists_type(data.data_type());
    if &data_type == data.data_type() {
        return Ok(data.clone());
    }
    let children = data
        .child_data()
        .iter()
        .map(data_as_lists)
        .collect::<Result<Vec<_>>>()?;
    let retyped = data
        .clone()
        .into_builder()
        .data_type(data_type)
        .child_data(children)
        .build()?;
    Ok(retyped)
}

#[cfg(test)]
mod tests {
    use arrow::array::{Array, ArrayRef, AsArray, Int32Builder, ListBuilder, MapBuilder};
    use arrow::array::{MapArray, StringBuilder};

    use super::*;
    use crate::decode::array::nested_batch;

    /// Each row of `got` (a list) holds `want`'s (a map's) entries, and is
    /// null where it is, by arrow-rs's own accessors.
    fn assert_entries(got: &dyn Array, want: &MapArray) {
        let got = got.as_list::<i32>();
        assert_eq!(got.len(), want.len());
        for i in 0..want.len() {
            assert_eq!(got.is_null(i), want.is_null(i), "row {i}");
            if want.is_valid(i) {
                assert_eq!(got.value(i).as_struct(), &want.value(i), "row {i}");
            }
        }
    }

    /// nested_batch (a map column among lists, structs and others) and a
    /// list of maps: on the device side the maps become lists of their
    /// entries over the same buffers, hold the same entries and nulls, and
    /// the other columns are untouched; host batches convert the same.
    #[test]
    fn maps_become_lists_of_their_entries_on_the_same_buffers() {
        let mut list_of_maps = ListBuilder::new(MapBuilder::new(
            None,
            StringBuilder::new(),
            Int32Builder::new(),
        ));
        for (row, n) in [(0, 2), (1, 0), (2, 1), (3, 3), (4, 1)] {
            for m in 0..n {
                let maps = list_of_maps.values();
                maps.keys().append_value(format!("k{row}{m}"));
                maps.values().append_option((m != 1).then_some(row + m));
                maps.append(m != 2).unwrap();
            }
            list_of_maps.append(row != 1);
        }
        let mut columns: Vec<(String, ArrayRef)> = nested_batch()
            .schema()
            .fields()
            .iter()
            .zip(nested_batch().columns())
            .map(|(f, c)| (f.name().clone(), c.clone()))
            .collect();
        columns.push(("list_of_maps".into(), Arc::new(list_of_maps.finish())));
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let map_columns = [2, 6];
        for batch in [batch.clone(), batch.slice(1, 3)] {
            let device = DeviceBatch::from_host(&batch).unwrap();
            let lists = device.maps_as_lists().unwrap();
            assert_eq!(
                lists.column(2).unwrap().buffers()[0].address(),
                device.column(2).unwrap().buffers()[0].address(),
                "the map's offsets are the list's"
            );
            let host = lists.to_host().unwrap();
            assert_eq!(host, host_maps_as_lists(&batch).unwrap());
            assert_entries(host.column(2), batch.column(2).as_map());
            let (got, want) = (
                host.column(6).as_list::<i32>(),
                batch.column(6).as_list::<i32>(),
            );
            for i in 0..want.len() {
                assert_eq!(got.is_null(i), want.is_null(i));
                if want.is_valid(i) {
                    assert_entries(got.value(i).as_ref(), want.value(i).as_map());
                }
            }
            for c in 0..batch.num_columns() {
                let retyped = maps_as_lists_type(batch.schema().field(c).data_type());
                assert_eq!(host.schema().field(c).data_type(), &retyped);
                if !map_columns.contains(&c) {
                    assert_eq!(host.column(c), batch.column(c), "column {c} untouched");
                }
            }
            assert!(!format!("{:?}", host.schema()).contains("Map("));
        }
    }
}
