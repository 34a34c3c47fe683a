//! The file's embedded Arrow schema (`ARROW:schema`, written by arrow-rs
//! and pyarrow) as arrow-rs applies it to nested columns: a list it types
//! as LargeList is a LargeList here too, one it types as FixedSizeList a
//! FixedSizeList (at any depth).

use parquet::arrow::parquet_to_arrow_schema;
use parquet::file::metadata::FileMetaData;

use super::*;

/// The metadata key of the embedded Arrow schema.
const ARROW_SCHEMA_KEY: &str = "ARROW:schema";

/// The nesting model of `leaves` of a file (all when None), with the
/// list kinds arrow-rs takes from the file's embedded Arrow schema.
pub fn nest_fields_of_file(
    file: &FileMetaData,
    leaves: Option<&[usize]>,
) -> Result<Vec<NestField>, DecodePlanError> {
    let schema = file.schema_descr();
    let mut fields = nest_fields(schema, leaves)?;
    let embedded = file
        .key_value_metadata()
        .is_some_and(|kv| kv.iter().any(|e| e.key == ARROW_SCHEMA_KEY));
    if embedded {
        // A schema arrow-rs cannot read gives no hint (nor its types).
        if let Ok(arrow) = parquet_to_arrow_schema(schema, file.key_value_metadata()) {
            apply_arrow_schema(&mut fields, arrow.fields())?;
        }
    }
    Ok(fields)
}

/// Takes arrow-rs's list kinds from `arrow` (its fields of the same
/// file, matched by name at every level) into `fields`.
pub fn apply_arrow_schema(fields: &mut [NestField], arrow: &Fields) -> Result<(), DecodePlanError> {
    for field in fields {
        if let Some(theirs) = arrow.iter().find(|f| f.name() == &field.name) {
            apply_node(&mut field.node, theirs.data_type(), &field.name)?;
        }
    }
    Ok(())
}

fn apply_node(node: &mut NestNode, theirs: &DataType, path: &str) -> Result<(), DecodePlanError> {
    match (node, theirs) {
        (NestNode::List(list), DataType::List(element) | DataType::LargeList(element)) => {
            list.large = matches!(theirs, DataType::LargeList(_));
            apply_node(&mut list.element.node, element.data_type(), path)
        }
        (NestNode::List(list), DataType::FixedSizeList(element, size)) => {
            let size = u32::try_from(*size).map_err(|_| DecodePlanError::Unsupported {
                column: path.to_string(),
                what: format!("a FixedSizeList of size {size}"),
            })?;
            list.fixed = Some(size);
            apply_node(&mut list.element.node, element.data_type(), path)
        }
        (NestNode::Struct(s), DataType::Struct(theirs)) => {
            apply_arrow_schema(&mut s.fields, theirs)
        }
        (NestNode::Map(map), DataType::Map(entries, _)) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Ok(());
            };
            if let (Some(key), Some(value)) = (kv.first(), kv.get(1)) {
                apply_node(&mut map.key.node, key.data_type(), path)?;
                apply_node(&mut map.value.node, value.data_type(), path)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
