//! `tpch gen --encoding`: which Parquet encodings the writer gives each
//! column, and the column types stored with them.

use std::sync::Arc;

use ::parquet::basic::Encoding;
use ::parquet::file::properties::WriterPropertiesBuilder;
use ::parquet::schema::types::ColumnPath;
use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;

use super::table::Table;

/// The encodings `tpch gen` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum GenEncoding {
    /// arrow-rs's writer defaults: dictionary pages (PLAIN once a
    /// dictionary grows past its limit), decimals as INT64.
    #[default]
    Dictionary,
    /// No dictionary: DELTA_BINARY_PACKED for integer and date columns,
    /// DELTA_BYTE_ARRAY for strings, and the decimal columns stored as
    /// DOUBLE with BYTE_STREAM_SPLIT (what Spark and DuckDB's
    /// `PARQUET_VERSION V2` write, and the layout of `gdscan bench
    /// decode`'s delta case).
    Delta,
}

impl GenEncoding {
    /// The name `--encoding` takes.
    pub fn name(self) -> &'static str {
        match self {
            GenEncoding::Dictionary => "dictionary",
            GenEncoding::Delta => "delta",
        }
    }

    /// `table`'s schema as written: under [`GenEncoding::Delta`] every
    /// decimal column becomes Float64 (inside lists and structs too).
    pub fn stored_schema(self, table: Table) -> SchemaRef {
        let schema = table.schema();
        if self == GenEncoding::Dictionary {
            return schema;
        }
        let fields: Vec<Field> = schema.fields().iter().map(|f| stored_field(f)).collect();
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
    }

    /// A generated batch in the stored schema (decimals cast to Float64
    /// under [`GenEncoding::Delta`]).
    pub fn stored_batch(
        self,
        batch: RecordBatch,
        stored: &SchemaRef,
    ) -> Result<RecordBatch, ArrowError> {
        if self == GenEncoding::Dictionary {
            return Ok(batch);
        }
        let columns = batch
            .columns()
            .iter()
            .zip(stored.fields())
            .map(|(c, f)| arrow::compute::cast(c, f.data_type()))
            .collect::<Result<Vec<_>, _>>()?;
        RecordBatch::try_new(Arc::clone(stored), columns)
    }

    /// Sets the per-column encodings of `tables`' columns on `builder`.
    pub fn configure(
        self,
        mut builder: WriterPropertiesBuilder,
        tables: &[Table],
    ) -> WriterPropertiesBuilder {
        if self == GenEncoding::Dictionary {
            return builder;
        }
        builder = builder.set_dictionary_enabled(false);
        for table in tables {
            let mut leaves = Vec::new();
            for field in self.stored_schema(*table).fields() {
                leaf_columns(field, &[], &mut leaves);
            }
            for (path, data_type) in leaves {
                let encoding = match data_type {
                    DataType::Int8
                    | DataType::Int16
                    | DataType::Int32
                    | DataType::Int64
                    | DataType::Date32 => Encoding::DELTA_BINARY_PACKED,
                    DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => {
                        Encoding::DELTA_BYTE_ARRAY
                    }
                    DataType::Float32 | DataType::Float64 => Encoding::BYTE_STREAM_SPLIT,
                    _ => continue,
                };
                builder = builder.set_column_encoding(path, encoding);
            }
        }
        builder
    }
}

/// `field` as stored under [`GenEncoding::Delta`]: decimals as Float64, at
/// any depth.
fn stored_field(field: &Field) -> Field {
    let stored = match field.data_type() {
        DataType::Decimal128(..) => DataType::Float64,
        DataType::List(item) => DataType::List(Arc::new(stored_field(item))),
        DataType::Struct(children) => {
            DataType::Struct(children.iter().map(|c| stored_field(c)).collect())
        }
        other => other.clone(),
    };
    field.clone().with_data_type(stored)
}

/// The leaf columns under `field` (whose parents' path is `parents`), with
/// their Parquet paths as arrow-rs's writer names them (a list's items
/// under `<list>.list.<item>`) and their Arrow types, appended to `out`.
fn leaf_columns(field: &Field, parents: &[String], out: &mut Vec<(ColumnPath, DataType)>) {
    let mut path = parents.to_vec();
    path.push(field.name().clone());
    match field.data_type() {
        DataType::List(item) => {
            path.push("list".to_string());
            leaf_columns(item, &path, out);
        }
        DataType::Struct(children) => {
            for child in children {
                leaf_columns(child, &path, out);
            }
        }
        other => out.push((ColumnPath::new(path), other.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use ::parquet::arrow::ArrowWriter;
    use ::parquet::file::properties::WriterProperties;

    /// Writes lineitem's first rows under `--encoding delta` and reads the
    /// file's own column metadata back: the encodings and types asked for.
    /// `batch` written with `enc`'s settings for `table` (schema `stored`),
    /// opened again by arrow-rs.
    fn written(
        enc: GenEncoding,
        table: Table,
        stored: &arrow::datatypes::SchemaRef,
        batch: &arrow::array::RecordBatch,
    ) -> ParquetRecordBatchReaderBuilder<bytes::Bytes> {
        let props = enc.configure(WriterProperties::builder(), &[table]).build();
        let mut bytes = Vec::new();
        let mut w = ArrowWriter::try_new(&mut bytes, stored.clone(), Some(props)).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
        ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes)).unwrap()
    }

    #[test]
    fn delta_writes_delta_and_byte_stream_split_columns() {
        let enc = GenEncoding::Delta;
        let stored = enc.stored_schema(Table::LineItem);
        let batch = Table::LineItem
            .batches(0.01, 1, 1, 1000)
            .next()
            .unwrap()
            .unwrap();
        let original = batch.clone();
        let batch = enc.stored_batch(batch, &stored).unwrap();
        let reader = written(enc, Table::LineItem, &stored, &batch);
        let meta = reader.metadata().clone();
        let rg = meta.row_group(0);
        for (i, field) in stored.fields().iter().enumerate() {
            let encodings: Vec<Encoding> = rg.column(i).encodings().collect();
            let want = match field.data_type() {
                DataType::Float64 => Encoding::BYTE_STREAM_SPLIT,
                DataType::Utf8 | DataType::Utf8View => Encoding::DELTA_BYTE_ARRAY,
                _ => Encoding::DELTA_BINARY_PACKED,
            };
            assert!(encodings.contains(&want), "{}: {encodings:?}", field.name());
            assert!(
                !encodings.contains(&Encoding::RLE_DICTIONARY),
                "{}: {encodings:?}",
                field.name()
            );
        }
        // The decimals survive as doubles of the same value.
        let read = reader.build().unwrap().next().unwrap().unwrap();
        let price = original.schema().index_of("l_extendedprice").unwrap();
        let cents = original
            .column(price)
            .as_any()
            .downcast_ref::<arrow::array::Decimal128Array>()
            .unwrap();
        let doubles = read
            .column(price)
            .as_any()
            .downcast_ref::<arrow::array::Float64Array>()
            .unwrap();
        for i in 0..cents.len() {
            let want = cents.value(i) as f64 / 100.0;
            assert!((doubles.value(i) - want).abs() <= 1e-9 * want.abs(), "{i}");
        }
    }

    /// orders_nested under `--encoding delta`: the nested lineitem leaves
    /// get the same encodings as lineitem's flat columns, and its decimals
    /// are stored as doubles.
    #[test]
    fn delta_reaches_the_nested_lineitem_columns() {
        let enc = GenEncoding::Delta;
        let stored = enc.stored_schema(Table::OrdersNested);
        let batch = Table::OrdersNested
            .batches(0.001, 1, 4, 1000)
            .next()
            .unwrap()
            .unwrap();
        let batch = enc.stored_batch(batch, &stored).unwrap();
        let reader = written(enc, Table::OrdersNested, &stored, &batch);
        let meta = reader.metadata().clone();
        let descr = meta.file_metadata().schema_descr();
        let rg = meta.row_group(0);
        let mut nested = 0;
        for i in 0..descr.num_columns() {
            let path = descr.column(i).path().string();
            let encodings: Vec<Encoding> = rg.column(i).encodings().collect();
            assert!(
                !encodings.contains(&Encoding::RLE_DICTIONARY),
                "{path}: {encodings:?}"
            );
            let want = match path.rsplit('.').next().unwrap() {
                "l_quantity" | "l_extendedprice" | "l_discount" | "l_tax" => {
                    Encoding::BYTE_STREAM_SPLIT
                }
                "l_partkey" | "l_suppkey" | "l_linenumber" | "l_shipdate" => {
                    Encoding::DELTA_BINARY_PACKED
                }
                "l_comment" | "l_shipmode" => Encoding::DELTA_BYTE_ARRAY,
                _ => continue,
            };
            assert!(path.starts_with("o_lineitems.list.item."), "{path}");
            assert!(encodings.contains(&want), "{path}: {encodings:?}");
            nested += 1;
        }
        assert_eq!(nested, 10);
        let read = reader.build().unwrap().next().unwrap().unwrap();
        assert_eq!(read.schema(), stored);
        assert_eq!(read.num_rows(), batch.num_rows());
    }
}
