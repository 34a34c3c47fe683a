//! A scan exported as an Arrow IPC file, decoded on the CPU by arrow-rs
//! over gdscan's reader (`gdscan scan --output`): the scanned columns, the
//! filter applied row-exactly. (The GPU decoder is `crate::decode`.)

use std::path::Path;
use std::sync::Arc;

use ::parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use ::parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::ParquetMetaData;
use arrow::compute::filter_record_batch;
use arrow::ipc::writer::FileWriter;
use futures::StreamExt;

use super::error::{Result, ScanError};
use super::plan::{resolve_projection, Projection, ScanPlan};
use super::predicate::Predicate;
use super::reader::GdsParquetReader;
use crate::engine::IoError;
use crate::store::Source;

/// Decodes the plan's row groups and columns of `source` (a local file or
/// a remote object), keeps the rows where `predicate` holds, and writes
/// them to `out` (an Arrow IPC file, written under a temporary name and
/// renamed when complete). Returns the rows written.
pub fn write_ipc(
    source: Arc<dyn Source>,
    metadata: Arc<ParquetMetaData>,
    plan: &ScanPlan,
    projection: &Projection,
    predicate: Option<&Predicate>,
    out: &Path,
) -> Result<u64> {
    let path = source.location().to_string();
    let pq = |e: ::parquet::errors::ParquetError| ScanError::from_parquet(&path, e);
    let arrow = |source| ScanError::from_arrow(&path, source);
    let schema = metadata.file_metadata().schema_descr_ptr();
    let mut leaves = plan.leaves.clone();
    if let Some(p) = predicate {
        let extra = resolve_projection(
            &schema,
            &Projection::Columns(p.columns().iter().map(|c| c.to_string()).collect()),
        )
        .map_err(|e| e.in_file(&path))?;
        leaves.extend(extra);
        leaves.sort_unstable();
        leaves.dedup();
    }
    let arrow_meta =
        ArrowReaderMetadata::try_new(metadata.clone(), ArrowReaderOptions::new()).map_err(pq)?;
    let wanted: Vec<String> = match projection {
        Projection::All => arrow_meta
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect(),
        Projection::Columns(c) => c
            .iter()
            .map(|s| s.split('.').next().unwrap_or(s).to_string())
            .collect(),
    };
    let reader = GdsParquetReader::new(source).with_metadata(arrow_meta.metadata().clone());
    let builder = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, arrow_meta)
        .with_projection(ProjectionMask::leaves(&schema, leaves))
        .with_row_groups(plan.row_groups.iter().map(|r| r.index).collect());
    let mut stream = builder.build().map_err(pq)?;
    let tmp = out.with_extension("partial");
    let shown = out.display().to_string();
    let file = std::fs::File::create(&tmp).map_err(|e| IoError::from_open(&shown, e))?;
    let mut writer: Option<FileWriter<std::fs::File>> = None;
    let mut rows = 0u64;
    let outcome: Result<()> = futures::executor::block_on(async {
        let mut file = Some(file);
        loop {
            // arrow-rs's decoder panics on some corrupt pages (found by
            // fuzzing, fuzz/findings/reader): a typed error here.
            let next = crate::border::CatchPanic::new(stream.next()).await;
            let batch = match next {
                Ok(Some(batch)) => batch.map_err(pq)?,
                Ok(None) => break,
                Err(panic) => return Err(pq(ParquetError::External(Box::new(panic)))),
            };
            let batch = match predicate {
                Some(p) => {
                    let mask = p.evaluate(&batch).map_err(arrow)?;
                    filter_record_batch(&batch, &mask).map_err(arrow)?
                }
                None => batch,
            };
            let indices: Vec<usize> = wanted
                .iter()
                .filter_map(|name| batch.schema().index_of(name).ok())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let batch = batch.project(&indices).map_err(arrow)?;
            if writer.is_none() {
                let f = file.take().expect("file used once");
                writer = Some(
                    FileWriter::try_new(f, &batch.schema())
                        .map_err(|e| IoError::os(&shown, "write", std::io::Error::other(e)))?,
                );
            }
            rows += batch.num_rows() as u64;
            writer
                .as_mut()
                .expect("writer created above")
                .write(&batch)
                .map_err(|e| IoError::os(&shown, "write", std::io::Error::other(e)))?;
        }
        if let Some(f) = file.take() {
            // No batch at all: write an empty file with the projected schema.
            let full = stream.schema().clone();
            let indices: Vec<usize> = wanted
                .iter()
                .filter_map(|name| full.index_of(name).ok())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let projected = full.project(&indices).map_err(arrow)?;
            writer = Some(
                FileWriter::try_new(f, &projected)
                    .map_err(|e| IoError::os(&shown, "write", std::io::Error::other(e)))?,
            );
        }
        writer
            .as_mut()
            .expect("writer exists")
            .finish()
            .map_err(|e| IoError::os(&shown, "write", std::io::Error::other(e)))?;
        Ok(())
    });
    if let Err(e) = outcome {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, out).map_err(|e| IoError::os(&shown, "rename", e))?;
    Ok(rows)
}
