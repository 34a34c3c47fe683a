//! Checks a parsed footer before anything else reads it: what the parquet
//! crate parses but later asserts on (a chunk or page at a negative offset
//! or past the end of the file, a schema its Arrow conversion cannot
//! represent) becomes an error here, at load, so neither gdscan's planner
//! nor arrow-rs's decoder driven through gdscan's reader meets it.
//!
//! Found by fuzzing (`fuzz/findings/reader`): arrow-rs 59 panics on such
//! footers (`column start and length should not be negative`, `Int type
//! with bit width of 0 ... not supported`, `Type NONE not supported`).

use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::ParquetMetaData;

/// Refuses a footer whose chunks, pages or schema cannot be read safely
/// from a file of `file_size` bytes.
///
/// ```
/// use parquet::file::metadata::ParquetMetaDataReader;
/// # use std::sync::Arc;
/// # let batch = arrow::record_batch::RecordBatch::try_from_iter([(
/// #     "x", Arc::new(arrow::array::Int32Array::from(vec![1, 2, 3])) as arrow::array::ArrayRef)]).unwrap();
/// # let mut file = Vec::new();
/// # let mut w = parquet::arrow::ArrowWriter::try_new(&mut file, batch.schema(), None).unwrap();
/// # w.write(&batch).unwrap();
/// # w.close().unwrap();
/// let file = bytes::Bytes::from(file);
/// let meta = ParquetMetaDataReader::new().parse_and_finish(&file).unwrap();
/// assert!(gdscan::parquet::sanity::check(&meta, file.len() as u64).is_ok());
/// // The same footer cannot describe a file of 10 bytes.
/// assert!(gdscan::parquet::sanity::check(&meta, 10).is_err());
/// ```
pub fn check(meta: &ParquetMetaData, file_size: u64) -> Result<(), ParquetError> {
    let inside = |what: &str, start: i64, len: i64| -> Result<(), ParquetError> {
        let end = start.checked_add(len);
        match end {
            Some(end) if start >= 0 && len >= 0 && end as u64 <= file_size => Ok(()),
            _ => Err(ParquetError::General(format!(
                "{what} at offset {start} with length {len} lies outside the file's {file_size} bytes"
            ))),
        }
    };
    for (r, rg) in meta.row_groups().iter().enumerate() {
        if rg.num_rows() < 0 {
            return Err(ParquetError::General(format!(
                "row group {r} has {} rows",
                rg.num_rows()
            )));
        }
        for (c, col) in rg.columns().iter().enumerate() {
            // Where arrow-rs's readers start the chunk (`byte_range`).
            let start = col
                .dictionary_page_offset()
                .unwrap_or(col.data_page_offset());
            inside(
                &format!("row group {r} column {c} data pages"),
                col.data_page_offset(),
                0,
            )?;
            inside(
                &format!("row group {r} column {c}"),
                start,
                col.compressed_size(),
            )?;
        }
    }
    if let Some(offsets) = meta.offset_index() {
        for (r, columns) in offsets.iter().enumerate() {
            for (c, index) in columns.iter().enumerate() {
                for (p, page) in index.page_locations().iter().enumerate() {
                    inside(
                        &format!("row group {r} column {c} page {p}"),
                        page.offset,
                        i64::from(page.compressed_page_size),
                    )?;
                }
            }
        }
    }
    // The Arrow schema arrow-rs's readers derive; its conversion panics on
    // some logical types it does not know.
    let file = meta.file_metadata();
    let converted = crate::border::catch(|| {
        ::parquet::arrow::parquet_to_arrow_schema(file.schema_descr(), file.key_value_metadata())
            .map(|_| ())
    });
    match converted {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e),
        Err(panic) => Err(ParquetError::General(format!(
            "the schema has no Arrow form: {}",
            panic.message()
        ))),
    }
}
