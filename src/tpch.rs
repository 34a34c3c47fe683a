//! TPC-H data for the benchmarks: lineitem as one Parquet file, generated
//! with tpchgen-arrow in parallel parts and written in order.
//!
//! (The full `gdscan tpch gen` of all eight tables belongs to the generator
//! issue; this is the part the scan benchmark needs.)

use std::path::Path;

use ::parquet::arrow::ArrowWriter;
use ::parquet::basic::Compression;
use ::parquet::file::properties::{EnabledStatistics, WriterProperties};
use arrow::record_batch::RecordBatch;
use rayon::prelude::*;
use tpchgen::generators::LineItemGenerator;
use tpchgen_arrow::LineItemArrow;

use crate::error::{Error, Result};

/// Rows per row group of the generated files: about 1 M rows (roughly
/// 40–60 MB of compressed lineitem), large enough that a GPU scan moves big
/// contiguous chunks, small enough to stream with bounded memory.
pub const ROW_GROUP_ROWS: usize = 1 << 20;

/// Lineitem rows per generated part (generated in parallel).
const ROWS_PER_PART: f64 = 400_000.0;

fn parts_for(scale_factor: f64) -> i32 {
    ((scale_factor * 6_000_000.0 / ROWS_PER_PART).ceil() as i32).max(1)
}

fn generate_part(scale_factor: f64, part: i32, parts: i32) -> Result<Vec<RecordBatch>> {
    LineItemArrow::new(LineItemGenerator::new(scale_factor, part, parts))
        .with_batch_size(64 * 1024)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::io("<tpchgen>", "generate lineitem", std::io::Error::other(e)))
}

/// Writes TPC-H lineitem at `scale_factor` to `path` (Snappy, page
/// statistics, [`ROW_GROUP_ROWS`] rows per row group) unless it exists.
/// The file is written under a temporary name and renamed when complete.
/// Returns whether it was written.
pub fn ensure_lineitem(scale_factor: f64, path: &Path) -> Result<bool> {
    if path.is_file() {
        return Ok(false);
    }
    let shown = path.display().to_string();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(&shown, "create folder", e))?;
    }
    let tmp = path.with_extension("partial");
    let file = std::fs::File::create(&tmp).map_err(|e| Error::from_open(&shown, e))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let mut writer = ArrowWriter::try_new(file, LineItemArrow::schema_ref(), Some(props))
        .map_err(|e| Error::from_parquet(&shown, e))?;
    let parts = parts_for(scale_factor);
    let wave = rayon::current_num_threads().max(1) as i32;
    let mut next = 1;
    while next <= parts {
        let last = (next + wave - 1).min(parts);
        let generated: Vec<Result<Vec<RecordBatch>>> = (next..=last)
            .into_par_iter()
            .map(|p| generate_part(scale_factor, p, parts))
            .collect();
        for batches in generated {
            for b in batches? {
                writer
                    .write(&b)
                    .map_err(|e| Error::from_parquet(&shown, e))?;
            }
        }
        next = last + 1;
    }
    writer.close().map_err(|e| Error::from_parquet(&shown, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(&shown, "rename", e))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_lineitem_is_written_whole_and_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lineitem.parquet");
        assert!(ensure_lineitem(0.001, &path).unwrap());
        assert!(!ensure_lineitem(0.001, &path).unwrap(), "kept when present");
        let reader = ::parquet::file::serialized_reader::SerializedFileReader::new(
            std::fs::File::open(&path).unwrap(),
        )
        .unwrap();
        use ::parquet::file::reader::FileReader;
        let rows = reader.metadata().file_metadata().num_rows();
        assert!(
            (5_000..7_000).contains(&rows),
            "about 6000 lineitems at SF 0.001, got {rows}"
        );
        assert_eq!(
            reader
                .metadata()
                .file_metadata()
                .schema_descr()
                .num_columns(),
            16
        );
    }
}
