//! Tests of the nesting model and of the level assembly, against arrow-rs:
//! the model's Arrow types against `parquet_to_arrow_schema`, the assembly
//! of levels read with the parquet crate's column reader against
//! `ParquetRecordBatchReader`'s decode of the same file.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, Int32Array, Int64Array, ListArray, RecordBatch, RecordBatchReader,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, RowGroups};
use parquet::arrow::{
    parquet_to_arrow_field_levels, parquet_to_arrow_schema, parquet_to_arrow_schema_by_columns,
    ProjectionMask,
};
use parquet::basic::{ConvertedType, Repetition, Type as PhysicalType};
use parquet::column::page::PageIterator;
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FilePageIterator, FileReader, SerializedFileReader};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::{SchemaDescriptor, Type};

use super::assembly::offsets_at;
use super::testing::*;
use super::*;
use crate::decode::page::plan_error::DecodePlanError;

// ----- arrow-rs's types ----------------------------------------------------

/// arrow-rs's type with the decoder's choice: strings and binaries as
/// views, at any depth.
fn views(data_type: &DataType) -> DataType {
    let field = |f: &FieldRef| Arc::new(f.as_ref().clone().with_data_type(views(f.data_type())));
    match data_type {
        DataType::Utf8 => DataType::Utf8View,
        DataType::Binary => DataType::BinaryView,
        DataType::List(f) => DataType::List(field(f)),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(field).collect()),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        other => other.clone(),
    }
}

fn views_of(fields: &Fields) -> Fields {
    fields
        .iter()
        .map(|f| f.as_ref().clone().with_data_type(views(f.data_type())))
        .collect()
}

fn descriptor(message: &str) -> SchemaDescriptor {
    SchemaDescriptor::new(Arc::new(parse_message_type(message).unwrap()))
}

/// arrow-rs's fields of the schema (all leaves, or those kept), as views.
fn arrow_rs_fields(schema: &SchemaDescriptor, keep: Option<&[usize]>) -> Fields {
    let converted = match keep {
        None => parquet_to_arrow_schema(schema, None),
        Some(keep) => parquet_to_arrow_schema_by_columns(
            schema,
            ProjectionMask::leaves(schema, keep.iter().copied()),
            None,
        ),
    };
    views_of(converted.unwrap().fields())
}

fn assert_types_like_arrow_rs(schema: &SchemaDescriptor, keep: Option<&[usize]>, label: &str) {
    let ours = nest_fields(schema, keep).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(
        arrow_fields(&ours),
        arrow_rs_fields(schema, keep),
        "{label}: keep {keep:?}"
    );
}

/// Schemas covering the forms arrow-rs reads: three-level lists, the
/// legacy two-level forms, maps, structs, every repetition at every level.
const FORMS: &[&str] = &[
    // Three-level lists, every nullability.
    "message m {
        optional group a (LIST) { repeated group list { optional int32 element; } }
        required group b (LIST) { repeated group list { required int64 element; } }
        optional group c (LIST) { repeated group list { required binary element (UTF8); } }
        required group d (LIST) { repeated group list { optional binary element; } }
    }",
    // Lists of lists, lists of structs, structs of lists, at depth.
    "message m {
        optional group a (LIST) { repeated group list {
            optional group element (LIST) { repeated group list {
                optional group element (LIST) { repeated group list { optional binary element (STRING); } }
            } }
        } }
        optional group s {
            optional int32 x;
            required group t {
                required int32 y;
                optional group l (LIST) { repeated group list {
                    optional group element { optional double z; required group u { optional int32 w; } }
                } }
            }
        }
        required group r { required group q { required boolean v; } }
    }",
    // Legacy: repeated primitive in a LIST.
    "message m { optional group f1 (LIST) { repeated int32 element; } }",
    "message m { required group f1 (LIST) { repeated binary str (UTF8); } }",
    // Legacy: repeated group of one field, not named array/_tuple: the
    // field is the element.
    "message m { optional group f1 (LIST) { repeated group element { optional int32 num; } } }",
    // Legacy: repeated group of several fields: the group is the element.
    "message m { optional group f1 (LIST) { repeated group element {
        required binary str (UTF8); required int32 num; } } }",
    // Legacy: parquet-avro (`array`) and parquet-thrift (`<name>_tuple`).
    "message m { optional group f1 (LIST) { repeated group array { required binary str (UTF8); } } }",
    "message m { optional group f1 (LIST) { repeated group f1_tuple { required binary str (UTF8); } } }",
    "message m { required group f1 (LIST) { repeated group array { optional group s { optional int32 i; } } } }",
    // `array` with a single repeated field, and an annotated `array`:
    // regular lists of a list.
    "message m { required group a (LIST) { repeated group array (LIST) { repeated int32 array; } } }",
    "message m { optional group a (LIST) { repeated group array { repeated int32 x; } } }",
    "message m { optional group a_tuple (LIST) { repeated group list { repeated group a_tuple { optional int64 z; } } } }",
    // Repeated fields without annotation, top level and in groups.
    "message m {
        repeated int32 a;
        repeated binary b (UTF8);
        repeated group c { required int32 x; optional binary y (UTF8); repeated int64 z; }
        required group g { repeated int32 p; repeated group q { repeated group r { optional int32 s; } } }
        optional group h { repeated group phone { required int64 number; optional binary kind (UTF8); } }
    }",
    // Maps: standard, MAP_KEY_VALUE, legacy, optional key, nested.
    "message m {
        optional group a (MAP) { repeated group key_value { required int32 key; optional binary value (UTF8); } }
        required group b (MAP) { repeated group key_value { required binary key (UTF8); required int64 value; } }
        optional group c (MAP_KEY_VALUE) { repeated group map { required int32 num; optional binary str (UTF8); } }
        optional group d (MAP) { repeated group map (MAP_KEY_VALUE) { required int32 key; required binary value (UTF8); } }
        optional group e (MAP) { repeated group key_value { optional int32 key; optional int32 value; } }
        optional group f (MAP) { repeated group key_value {
            required binary key (UTF8);
            optional group value (MAP) { repeated group key_value { required int32 key; required boolean value; } }
        } }
        optional group g (MAP) { repeated group key_value {
            required int32 key;
            optional group value (LIST) { repeated group list { optional group element { optional int32 x; repeated int32 y; } } }
        } }
        optional group h (LIST) { repeated group list {
            optional group element (MAP) { repeated group map (MAP) { required binary key (STRING); optional int32 value; } }
        } }
    }",
    // Maps without values: lists of keys (as arrow-rs).
    "message m {
        required group a (MAP) { repeated group key_value { required int32 key; } }
        optional group b (MAP) { repeated group key_value { optional binary key (UTF8); } }
        optional group c (MAP) { repeated group array { required int32 key; } }
    }",
    // Field ids at every level, and leaf types through the type mapping.
    "message m {
        optional group a (LIST) = 1 { repeated group list = 2 { optional int32 element (INTEGER(8,true)) = 3; } }
        optional group s = 4 { optional int64 t (TIMESTAMP(MICROS,true)) = 5; repeated int32 d (DATE) = 6; }
        optional group mp (MAP) = 7 { repeated group key_value = 8 {
            required binary key (STRING) = 9; optional fixed_len_byte_array(16) value (DECIMAL(30,2)) = 10; } }
        optional group l2 (LIST) = 11 { repeated int64 v (INTEGER(64,false)) = 12; }
        repeated float rf = 13;
        optional group o (LIST) = 14 { repeated group array = 15 { required double x = 16; } }
    }",
];

#[test]
fn model_types_match_arrow_rs_for_all_forms() {
    for (i, message) in FORMS.iter().enumerate() {
        let schema = descriptor(message);
        assert_types_like_arrow_rs(&schema, None, &format!("form {i}"));
    }
}

#[test]
fn projected_model_types_match_arrow_rs() {
    for (i, message) in FORMS.iter().enumerate() {
        let schema = descriptor(message);
        let n = schema.num_columns();
        let masks: Vec<Vec<usize>> = vec![
            (0..n).step_by(2).collect(),
            (1..n).step_by(2).collect(),
            (0..n).step_by(3).collect(),
            vec![n - 1],
            vec![],
        ];
        for keep in &masks {
            assert_types_like_arrow_rs(&schema, Some(keep), &format!("form {i}"));
        }
    }
}

#[test]
fn model_levels_are_the_columns_levels() {
    // Every leaf's thresholds are its column's max levels (the parquet
    // crate's), and the leaves are the schema's, in order.
    for (i, message) in FORMS.iter().enumerate() {
        let schema = descriptor(message);
        let fields = nest_fields(&schema, None).unwrap();
        let leaves: Vec<&LeafNode> = fields.iter().flat_map(NestField::leaves).collect();
        assert_eq!(leaves.len(), schema.num_columns(), "form {i}");
        for (at, leaf) in leaves.iter().enumerate() {
            let column = schema.column(leaf.column);
            assert_eq!(leaf.column, at, "form {i}");
            assert_eq!(
                (leaf.def, leaf.rep),
                (column.max_def_level(), column.max_rep_level()),
                "form {i}, leaf {at}"
            );
        }
    }
}

/// Schemas arrow-rs refuses: the model refuses them too, with a typed
/// error.
#[test]
fn refusals_match_arrow_rs() {
    let refused = [
        "message m { optional group l (LIST) { repeated int32 a; repeated int32 b; } }",
        "message m { optional group l (LIST) { required group list { optional int32 e; } } }",
        "message m { repeated group l (LIST) { repeated group list { optional int32 e; } } }",
        "message m { repeated group m (MAP) { repeated group kv { required int32 k; optional int32 v; } } }",
        "message m { optional group m (MAP) { required group kv { required int32 k; optional int32 v; } } }",
        "message m { optional group m (MAP) { repeated group kv { required int32 k; optional int32 v; required int32 w; } } }",
        "message m { optional group m (MAP) { repeated group kv { repeated int32 k; optional int32 v; } } }",
        "message m { optional group m (MAP) { repeated group kv { required int32 k; repeated int32 v; } } }",
        "message m { optional group m (MAP) { repeated group a { required int32 k; } repeated group b { required int32 k; } } }",
    ];
    for message in refused {
        let schema = descriptor(message);
        assert!(
            parquet_to_arrow_schema(&schema, None).is_err(),
            "arrow-rs reads {message}"
        );
        let ours = nest_fields(&schema, None);
        assert!(
            matches!(ours, Err(DecodePlanError::Unsupported { .. })),
            "{message}: {ours:?}"
        );
    }
}

#[test]
fn annotated_root_is_refused_like_arrow_rs() {
    let element = Type::primitive_type_builder("element", PhysicalType::INT32)
        .with_repetition(Repetition::REPEATED)
        .build()
        .unwrap();
    let root = Type::group_type_builder("m")
        .with_converted_type(ConvertedType::LIST)
        .with_fields(vec![Arc::new(element)])
        .build()
        .unwrap();
    let schema = SchemaDescriptor::new(Arc::new(root));
    // arrow-rs gives no schema for it (it fails, by an error or a panic).
    let arrow_rs = std::panic::catch_unwind(|| parquet_to_arrow_schema(&schema, None));
    assert!(!matches!(arrow_rs, Ok(Ok(_))), "{arrow_rs:?}");
    assert!(matches!(
        nest_fields(&schema, None),
        Err(DecodePlanError::Unsupported { .. })
    ));
}

#[test]
fn unknown_leaves_are_null_like_arrow_rs() {
    // arrow-rs reads an UNKNOWN leaf of any physical type as Null, flat
    // and at any depth; the model gives the same fields.
    let schema = descriptor(
        "message m {
            optional int32 a (UNKNOWN);
            required int32 b (UNKNOWN);
            optional group l (LIST) { repeated group list { optional int32 item (UNKNOWN); } }
            optional group s { optional binary t (UNKNOWN); required int64 u; optional boolean v (UNKNOWN); }
            optional group mp (MAP) { repeated group key_value {
                required binary key (STRING); optional double value (UNKNOWN); } }
            optional group f (LIST) { repeated fixed_len_byte_array(3) element (UNKNOWN); }
            repeated int96 r (UNKNOWN);
        }",
    );
    assert_types_like_arrow_rs(&schema, None, "UNKNOWN leaves");
    let fields = nest_fields(&schema, None).unwrap();
    let leaves: Vec<&LeafNode> = fields.iter().flat_map(NestField::leaves).collect();
    let shape = |column: usize| {
        let leaf = leaves.iter().find(|l| l.column == column).unwrap();
        let t = &leaf.column_type;
        assert!(t.is_null(), "column {column}: {t:?}");
        assert_eq!(t.conversion, crate::decode::page::codes::Conversion::Copy);
        (t.kind, t.type_length, t.out_width, leaf.nullable)
    };
    use crate::decode::page::codes::Kind;
    // The carrier: the physical values copied as they are (none are read).
    assert_eq!(shape(0), (Kind::Fixed, 4, 4, true));
    assert_eq!(shape(1), (Kind::Fixed, 4, 4, false));
    assert_eq!(shape(2), (Kind::Fixed, 4, 4, true));
    assert_eq!(shape(3), (Kind::ByteArray, 0, 16, true));
    assert_eq!(shape(5), (Kind::Boolean, 0, 0, true));
    assert_eq!(shape(7), (Kind::Fixed, 8, 8, true));
    assert_eq!(shape(8), (Kind::Fixed, 3, 3, false));
    assert_eq!(shape(9), (Kind::Fixed, 12, 12, false));
    let u = leaves.iter().find(|l| l.column == 4).unwrap();
    assert_eq!(u.column_type.data_type, DataType::Int64);
}

#[test]
fn null_columns_written_by_arrow_rs_assemble_like_arrow_rs() {
    // Null columns flat and nested, beside others, every writer setting:
    // the lists' offsets and validity and the structs' validity come from
    // the Null leaves' levels.
    let schema = Arc::new(null_columns_schema());
    let batch = random_batch_of(&schema, 300);
    let mut compared = 0;
    for (name, props) in writer_settings() {
        let bytes = write(&batch, props);
        let reader = SerializedFileReader::new(bytes.clone()).unwrap();
        let parquet = reader.metadata().file_metadata().schema_descr_ptr();
        assert_types_like_arrow_rs(&parquet, None, name);
        compared += assert_assembly_like_arrow_rs(&bytes, None, name);
    }
    assert!(compared >= schema.fields().len() * writer_settings().len());
}

/// One row group of a file, as arrow-rs's array readers take it.
struct OneRowGroup {
    file: Arc<dyn FileReader>,
    index: usize,
}

impl RowGroups for OneRowGroup {
    fn num_rows(&self) -> usize {
        self.file.metadata().row_group(self.index).num_rows() as usize
    }

    fn column_chunks(&self, column: usize) -> parquet::errors::Result<Box<dyn PageIterator>> {
        let row_groups = Box::new(std::iter::once(self.index));
        let pages = FilePageIterator::with_row_groups(column, row_groups, self.file.clone())?;
        Ok(Box::new(pages))
    }

    fn row_groups(&self) -> Box<dyn Iterator<Item = &RowGroupMetaData> + '_> {
        Box::new(std::iter::once(self.file.metadata().row_group(self.index)))
    }

    fn metadata(&self) -> &ParquetMetaData {
        self.file.metadata()
    }
}

/// arrow-rs's decode of one row group (its array readers, as
/// `ParquetRecordBatchReader` runs them), read with the model's Arrow
/// fields as the hint (so strings come as views), the leaves in `keep`
/// when given. (The reader builder would cap the rows at the file's
/// `num_rows`, 0 in repeated_no_annotation.parquet whose row group holds
/// 6.)
fn arrow_rs_row_group(
    file: &Arc<dyn FileReader>,
    hint: &Fields,
    index: usize,
    keep: Option<&[usize]>,
) -> RecordBatch {
    let schema = file.metadata().file_metadata().schema_descr();
    let mask = match keep {
        Some(keep) => ProjectionMask::leaves(schema, keep.iter().copied()),
        None => ProjectionMask::all(),
    };
    let levels = parquet_to_arrow_field_levels(schema, mask, Some(hint)).unwrap();
    let row_group = OneRowGroup {
        file: file.clone(),
        index,
    };
    let batch_size = row_group.num_rows().max(1);
    let reader =
        ParquetRecordBatchReader::try_new_with_row_groups(&levels, &row_group, batch_size, None)
            .unwrap();
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    concat_batches(&schema, &batches).unwrap()
}

/// Assembles every row group of the file from its leaves' levels and
/// values, and checks the arrays equal arrow-rs's decode. Returns the
/// number of arrays compared.
fn assert_assembly_like_arrow_rs(bytes: &Bytes, keep: Option<&[usize]>, label: &str) -> usize {
    let file: Arc<dyn FileReader> = Arc::new(SerializedFileReader::new(bytes.clone()).unwrap());
    // The model as the decoder makes it: the embedded Arrow schema's list
    // kinds (FixedSizeList, LargeList) taken.
    let meta = file.metadata().file_metadata();
    let all = nest_fields_of_file(meta, None).unwrap_or_else(|e| panic!("{label}: {e}"));
    let fields = nest_fields_of_file(meta, keep).unwrap();
    let hint = arrow_fields(&all);
    let mut compared = 0;
    for rg in 0..file.num_row_groups() {
        let rows = file.metadata().row_group(rg).num_rows() as usize;
        let row_group = file.get_row_group(rg).unwrap();
        let chunks: BTreeMap<usize, LeafChunk> = fields
            .iter()
            .flat_map(NestField::leaves)
            .map(|leaf| (leaf.column, read_leaf(row_group.as_ref(), leaf, rows)))
            .collect();
        let levels = chunks
            .iter()
            .map(|(&c, chunk)| (c, chunk.levels()))
            .collect();
        let values = chunks
            .iter()
            .map(|(&c, chunk)| (c, chunk.values.clone()))
            .collect();
        let assembly =
            assemble(&fields, &levels).unwrap_or_else(|e| panic!("{label}, row group {rg}: {e}"));
        if !fields.is_empty() {
            assert_eq!(assembly.records, rows, "{label}, row group {rg}: records");
        }
        let ours = build_arrays(&fields, &assembly, &values)
            .unwrap_or_else(|e| panic!("{label}, row group {rg}: {e}"));
        let theirs = arrow_rs_row_group(&file, &hint, rg, keep);
        assert_eq!(ours.len(), theirs.num_columns(), "{label}");
        for (i, (a, b)) in ours.iter().zip(theirs.columns()).enumerate() {
            assert_eq!(
                a, b,
                "{label}, row group {rg}, field {} (keep {keep:?})",
                fields[i].name
            );
            compared += 1;
        }
    }
    assert_eq!(compared, fields.len() * file.num_row_groups(), "{label}");
    compared
}

#[test]
fn random_nested_files_assemble_like_arrow_rs() {
    let mut compared = 0;
    for seed in [1u64, 7, 42] {
        let batch = random_batch(seed, 250);
        for (name, props) in writer_settings() {
            let bytes = write(&batch, props);
            compared +=
                assert_assembly_like_arrow_rs(&bytes, None, &format!("seed {seed}, {name}"));
        }
    }
    // 23 fields; 3 row groups in 3 settings, 1 in the last; 3 seeds.
    assert_eq!(compared, 23 * (3 * 3 + 1) * 3);
}

#[test]
fn random_nested_file_types_match_arrow_rs() {
    let bytes = write(&random_batch(3, 10), writer_settings().remove(0).1);
    let reader = SerializedFileReader::new(bytes).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    assert_types_like_arrow_rs(&schema, None, "random file");
}

#[test]
fn projected_assembly_matches_arrow_rs() {
    let bytes = write(&random_batch(11, 200), writer_settings().remove(0).1);
    let reader = SerializedFileReader::new(bytes.clone()).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let n = schema.num_columns();
    let masks: Vec<Vec<usize>> = vec![
        (0..n).step_by(2).collect(),
        (1..n).step_by(2).collect(),
        (0..n).step_by(5).collect(),
        (0..n - 1).collect(),
    ];
    for keep in &masks {
        assert_types_like_arrow_rs(&schema, Some(keep), "projection");
        let compared = assert_assembly_like_arrow_rs(&bytes, Some(keep), "projection");
        assert!(compared > 0, "keep {keep:?}: nothing compared");
    }
}

#[test]
fn empty_chunk_assembles_like_arrow_rs() {
    let bytes = write(&random_batch(5, 0), writer_settings().remove(0).1);
    assert_assembly_like_arrow_rs(&bytes, None, "empty file");
    let reader = SerializedFileReader::new(bytes).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let fields = nest_fields(&schema, None).unwrap();
    let levels: BTreeMap<usize, LeafLevels<'_>> = fields
        .iter()
        .flat_map(NestField::leaves)
        .map(|leaf| {
            let levels = LeafLevels {
                entries: 0,
                rep: (leaf.rep > 0).then_some(&[][..]),
                def: (leaf.def > 0).then_some(&[][..]),
            };
            (leaf.column, levels)
        })
        .collect();
    let assembly = assemble(&fields, &levels).unwrap();
    assert_eq!(assembly.records, 0);
}

// ----- parquet-testing files ----------------------------------------------

const TESTING_FILES: &[&str] = &[
    "list_columns.parquet",
    "nested_lists.snappy.parquet",
    "nested_maps.snappy.parquet",
    "nested_structs.rust.parquet",
    "nonnullable.impala.parquet",
    "nullable.impala.parquet",
    "nulls.snappy.parquet",
    "old_list_structure.parquet",
    "repeated_no_annotation.parquet",
    "repeated_primitive_no_list.parquet",
    "map_no_value.parquet",
    "incorrect_map_schema.parquet",
];

fn testing_file(name: &str) -> Option<Bytes> {
    let Ok(dir) = std::env::var("PARQUET_TEST_DATA") else {
        eprintln!("PARQUET_TEST_DATA unset: skipping the parquet-testing file {name}");
        return None;
    };
    let path = std::path::Path::new(&dir).join(name);
    Some(Bytes::from(
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    ))
}

#[test]
fn parquet_testing_nested_files_match_arrow_rs() {
    for name in TESTING_FILES {
        let Some(bytes) = testing_file(name) else {
            continue;
        };
        let reader = SerializedFileReader::new(bytes.clone()).unwrap();
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        assert_types_like_arrow_rs(&schema, None, name);
        let compared = assert_assembly_like_arrow_rs(&bytes, None, name);
        eprintln!("{name}: {compared} arrays equal to arrow-rs's");
        assert_eq!(compared, schema.root_schema().get_fields().len(), "{name}");
    }
}

#[test]
fn parquet_testing_null_list_is_a_list_of_nulls() {
    // Its element is UNKNOWN: arrow-rs's Null, and the model's.
    let Some(bytes) = testing_file("null_list.parquet") else {
        return;
    };
    let reader = SerializedFileReader::new(bytes.clone()).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let arrow_rs = parquet_to_arrow_schema(&schema, None).unwrap();
    assert!(matches!(
        arrow_rs.field(0).data_type(),
        DataType::List(f) if f.data_type() == &DataType::Null
    ));
    assert_types_like_arrow_rs(&schema, None, "null_list.parquet");
    assert_eq!(
        assert_assembly_like_arrow_rs(&bytes, None, "null_list.parquet"),
        reader.num_row_groups()
    );
}

// ----- corrupt levels -------------------------------------------------------

/// `optional list<optional int32>`: max def 3 (null list 0, empty 1, null
/// element 2, value 3), max rep 1.
fn list_model() -> Vec<NestField> {
    let schema = descriptor(
        "message m { optional group a (LIST) { repeated group list { optional int32 element; } } }",
    );
    nest_fields(&schema, None).unwrap()
}

fn assemble_one(rep: &[i16], def: &[i16]) -> Result<Assembly, NestError> {
    let levels = BTreeMap::from([(
        0,
        LeafLevels {
            entries: def.len(),
            rep: Some(rep),
            def: Some(def),
        },
    )]);
    assemble(&list_model(), &levels)
}

#[test]
fn valid_list_levels_assemble_like_arrow_rs() {
    // [[1, null], null, [], [2]] written by arrow-rs, assembled from the
    // levels arrow-rs's writer produces for it.
    let rep = [0, 1, 0, 0, 0];
    let def = [3, 2, 0, 1, 3];
    let assembly = assemble_one(&rep, &def).unwrap();
    let values = BTreeMap::from([(0, Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef)]);
    let ours = build_arrays(&list_model(), &assembly, &values).unwrap();

    let item = Arc::new(Field::new("element", DataType::Int32, true));
    let array: ArrayRef = Arc::new(ListArray::new(
        item.clone(),
        OffsetBuffer::from_lengths([2, 0, 0, 1]),
        Arc::new(Int32Array::from(vec![Some(1), None, Some(2)])),
        Some(NullBuffer::from(vec![true, false, true, true])),
    ));
    let schema = Arc::new(Schema::new(vec![Field::new(
        "a",
        array.data_type().clone(),
        true,
    )]));
    let batch = RecordBatch::try_new(schema, vec![array]).unwrap();
    let bytes = write(&batch, WriterProperties::builder().build());
    let file: Arc<dyn FileReader> = Arc::new(SerializedFileReader::new(bytes).unwrap());
    let row_group = file.get_row_group(0).unwrap();
    let fields = list_model();
    let leaf = read_leaf(row_group.as_ref(), fields[0].leaves()[0], 4);
    assert_eq!(
        (leaf.rep.as_slice(), leaf.def.as_slice()),
        (&rep[..], &def[..])
    );
    let decoded = arrow_rs_row_group(&file, &arrow_fields(&fields), 0, None);
    assert_eq!(&ours[0], decoded.column(0));
}

/// Repetition levels, definition levels, and the error they must give.
type CorruptCase = (
    &'static [i16],
    &'static [i16],
    Box<dyn Fn(&NestError) -> bool>,
);

#[test]
fn corrupt_levels_are_typed_errors() {
    let out_of_range = |which: LevelKind, level: i16| move |e: &NestError| matches!(e, NestError::LevelOutOfRange { which: w, level: l, .. } if *w == which && *l == level);
    let cases: Vec<CorruptCase> = vec![
        (
            &[0, 1],
            &[3, 4],
            Box::new(out_of_range(LevelKind::Definition, 4)),
        ),
        (
            &[0, 0],
            &[3, -1],
            Box::new(out_of_range(LevelKind::Definition, -1)),
        ),
        (
            &[0, 2],
            &[3, 3],
            Box::new(out_of_range(LevelKind::Repetition, 2)),
        ),
        (
            &[0, -1],
            &[3, 3],
            Box::new(out_of_range(LevelKind::Repetition, -1)),
        ),
        (
            &[1, 0],
            &[3, 3],
            Box::new(|e: &NestError| matches!(e, NestError::FirstNotRecord { rep: 1, .. })),
        ),
        // An element added to an empty list, then to a null list.
        (
            &[0, 1],
            &[1, 3],
            Box::new(|e: &NestError| matches!(e, NestError::BadContinuation { index: 1, .. })),
        ),
        (
            &[0, 0, 1],
            &[3, 0, 2],
            Box::new(|e: &NestError| matches!(e, NestError::BadContinuation { index: 2, .. })),
        ),
        // A continuation that is itself no element.
        (
            &[0, 1],
            &[3, 1],
            Box::new(|e: &NestError| matches!(e, NestError::BadContinuation { def: 1, .. })),
        ),
    ];
    for (rep, def, is_expected) in cases {
        let err = assemble_one(rep, def).unwrap_err();
        assert!(is_expected(&err), "rep {rep:?} def {def:?}: {err}");
    }
}

#[test]
fn missing_or_miscounted_levels_are_typed_errors() {
    let fields = list_model();
    let assemble_with = |levels: LeafLevels<'_>| assemble(&fields, &BTreeMap::from([(0, levels)]));
    let count = assemble_with(LeafLevels {
        entries: 2,
        rep: Some(&[0, 0]),
        def: Some(&[3]),
    });
    assert!(matches!(
        count,
        Err(NestError::LevelCount {
            which: LevelKind::Definition,
            entries: 2,
            found: 1,
            ..
        })
    ));
    let absent = assemble_with(LeafLevels {
        entries: 1,
        rep: None,
        def: Some(&[3]),
    });
    assert!(matches!(
        absent,
        Err(NestError::AbsentLevels {
            which: LevelKind::Repetition,
            max: 1,
            ..
        })
    ));
    let missing = assemble(&fields, &BTreeMap::new());
    assert!(matches!(
        missing,
        Err(NestError::MissingLevels { column: 0 })
    ));
}

#[test]
fn leaves_that_disagree_are_typed_errors() {
    // struct<a: list<int32>, b: int32>: `a` holds two records, `b` three.
    let schema = descriptor(
        "message m { optional group s {
            optional group a (LIST) { repeated group list { optional int32 element; } }
            optional int32 b; } }",
    );
    let fields = nest_fields(&schema, None).unwrap();
    let levels = BTreeMap::from([
        (
            0,
            LeafLevels {
                entries: 3,
                rep: Some(&[0, 1, 0][..]),
                def: Some(&[4, 4, 4][..]),
            },
        ),
        (
            1,
            LeafLevels {
                entries: 3,
                rep: None,
                def: Some(&[2, 2, 2][..]),
            },
        ),
    ]);
    let err = assemble(&fields, &levels).unwrap_err();
    assert!(
        matches!(
            err,
            NestError::SlotMismatch {
                column: 1,
                expected: 2,
                found: 3
            }
        ),
        "{err}"
    );
}

#[test]
fn offsets_past_i32_are_typed_errors() {
    let past = i32::MAX as usize + 1;
    assert!(matches!(
        offsets_at(&[0, past], &[0]),
        Err(NestError::OffsetOverflow { count }) if count == past
    ));
    assert!(matches!(offsets_at(&[0, 1, 2], &[0, 1]), Ok(v) if v == vec![0, 1, 2]));
}

#[test]
fn wrong_values_are_typed_errors() {
    let fields = list_model();
    let assembly = assemble_one(&[0, 1, 0], &[3, 3, 0]).unwrap();
    let build = |values: Vec<(usize, ArrayRef)>| {
        build_arrays(&fields, &assembly, &values.into_iter().collect())
    };
    assert!(matches!(
        build(vec![]),
        Err(NestError::MissingValues { column: 0 })
    ));
    assert!(matches!(
        build(vec![(0, Arc::new(Int32Array::from(vec![1])))]),
        Err(NestError::ValueCount {
            column: 0,
            expected: 2,
            found: 1
        })
    ));
    assert!(matches!(
        build(vec![(0, Arc::new(Int64Array::from(vec![1, 2])))]),
        Err(NestError::ValueType { column: 0, .. })
    ));
}

// ----- FixedSizeList ---------------------------------------------------------

/// `list_model` with the list a FixedSizeList of 2 (as the embedded Arrow
/// schema would say).
fn fixed_model() -> Vec<NestField> {
    let mut fields = list_model();
    let NestNode::List(list) = &mut fields[0].node else {
        unreachable!("a list")
    };
    list.fixed = Some(2);
    fields
}

#[test]
fn fixed_size_lists_pad_null_and_empty_lists_like_arrow_rs() {
    // [[1, null], null, [], [2, 3]]: the null and the empty list stand for
    // two null elements each; the empty one is valid (arrow-rs's rule).
    let (rep, def) = ([0, 1, 0, 0, 0, 1], [3, 2, 0, 1, 3, 3]);
    let levels = BTreeMap::from([(
        0,
        LeafLevels {
            entries: 6,
            rep: Some(&rep[..]),
            def: Some(&def[..]),
        },
    )]);
    let assembly = assemble(&fixed_model(), &levels).unwrap();
    let values = BTreeMap::from([(0, Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef)]);
    let ours = build_arrays(&fixed_model(), &assembly, &values).unwrap();
    let item = Arc::new(Field::new("element", DataType::Int32, true));
    let expected = FixedSizeListArray::new(
        item,
        2,
        Arc::new(Int32Array::from(vec![
            Some(1),
            None,
            None,
            None,
            None,
            None,
            Some(2),
            Some(3),
        ])),
        Some(NullBuffer::from(vec![true, false, true, true])),
    );
    assert_eq!(ours[0].as_ref(), &expected as &dyn Array);
}

#[test]
fn fixed_size_lists_of_another_length_are_typed_errors() {
    // A list of one element before another list (arrow-rs: "misaligned
    // row"), and a last list of three: the reference names the list.
    for (rep, def, slot) in [
        (&[0, 0, 1][..], &[3, 3, 3][..], 0),
        (&[0, 1, 0, 1, 1][..], &[3, 3, 3, 3, 3][..], 1),
    ] {
        let levels = BTreeMap::from([(
            0,
            LeafLevels {
                entries: def.len(),
                rep: Some(rep),
                def: Some(def),
            },
        )]);
        let err = assemble(&fixed_model(), &levels).unwrap_err();
        assert!(
            matches!(err, NestError::FixedSize { slot: s, size: 2, .. } if s == slot),
            "{err}"
        );
    }
}

#[test]
fn fixed_size_lists_inside_variable_lists_are_taken() {
    let inner = Field::new(
        "item",
        DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Int32, true)), 2),
        true,
    );
    let outer = DataType::List(Arc::new(inner));
    let schema = Arc::new(Schema::new(vec![Field::new("a", outer.clone(), true)]));
    let batch = random_batch_of(&schema, 50);
    let bytes = write(&batch, WriterProperties::builder().build());
    let reader = SerializedFileReader::new(bytes.clone()).unwrap();
    let fields = nest_fields_of_file(reader.metadata().file_metadata(), None).unwrap();
    assert_eq!(fields[0].arrow_field().data_type(), &outer);
    assert_assembly_like_arrow_rs(&bytes, None, "a FixedSizeList in a list");
}

/// The sizes of a leaf's levels: exact under records and FixedSizeLists,
/// a bound under a variable-length list while the sizes multiply to at
/// most the padding factor, an allowance past it.
#[test]
fn fixed_size_list_levels_are_sized_by_records_bounds_or_an_allowance() {
    let work = |level_fixed: Vec<u32>| LeafWork {
        column: 0,
        node: 0,
        max_rep: level_fixed.len() as u32 - 1,
        max_def: level_fixed.len() as u32,
        level_def: (0..level_fixed.len() as u32).collect(),
        level_fixed,
        outputs: Vec::new(),
    };
    // FixedSizeList<FixedSizeList<_, 3>, 2> of 10 records, 40 entries.
    let top = work(vec![0, 2, 3]);
    // (A level never holds less than the entries' count.)
    assert_eq!(&top.capacity(40, 10).unwrap()[..3], &[40, 40, 60]);
    assert!(!top.is_allowance(1) && !top.is_allowance(2));
    // List<FixedSizeList<FixedSizeList<_, 2>, 2>>: 4 slots an entry at most.
    let bound = work(vec![0, 0, 2, 2]);
    assert_eq!(
        &bound.capacity(100, 10).unwrap()[..4],
        &[100, 100, 200, 400]
    );
    assert!(!bound.is_allowance(3));
    assert!(bound.fixed_under_variable() && !top.fixed_under_variable());
    // List<FixedSizeList<_, 8>>: past the factor, an allowance.
    let allowance = work(vec![0, 0, 8]);
    let cap = allowance.capacity(100, 10).unwrap();
    assert_eq!(u64::from(cap[2]), 100 * PADDING_FACTOR + PADDING_SLACK);
    assert!(allowance.is_allowance(2) && !allowance.is_allowance(1));
    // Past i32::MAX slots: none.
    assert_eq!(top.capacity(40, u64::from(u32::MAX)), None);
}
