//! What a scan produced, to compare a remote object with its local file:
//! every planned chunk's CRC-32 as it landed, and the decoded batches.

use std::sync::Arc;

use arrow::record_batch::RecordBatch;
use futures::StreamExt;
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::{
    fetch, plan, FetchOptions, GdsParquetReader, HostAllocator, ScanPlan, ScanRequest, SourceScan,
};
use gdscan::store::Source;
use parquet::arrow::ParquetRecordBatchStreamBuilder;

/// The plan of `request` over `source`'s metadata.
pub fn plan_of(source: &Arc<dyn Source>, request: &ScanRequest) -> Arc<ScanPlan> {
    let meta = load(
        source,
        MetadataOptions {
            page_index: request.predicate.is_some(),
            ..Default::default()
        },
    )
    .unwrap();
    Arc::new(plan(&meta, request).unwrap())
}

/// `(row group, column, crc32)` of every chunk, fetched into host memory.
pub fn host_crcs(
    source: &Arc<dyn Source>,
    plan: &Arc<ScanPlan>,
) -> gdscan::Result<Vec<(usize, String, u32)>> {
    let mut out = Vec::new();
    for rg in fetch(
        [SourceScan::new(source.clone(), plan.clone())],
        [HostAllocator],
        FetchOptions::default(),
    ) {
        let rg = rg?;
        for slice in &rg.chunks {
            let bytes = rg.chunk_bytes(slice)?;
            let c = &plan.chunks[slice.chunk];
            out.push((c.row_group, c.column.clone(), crc32fast::hash(&bytes)));
        }
    }
    Ok(out)
}

/// Every batch arrow-rs decodes through gdscan's reader over `source`.
pub fn decode(source: Arc<dyn Source>) -> Result<Vec<RecordBatch>, String> {
    futures::executor::block_on(async {
        let reader = GdsParquetReader::new(source);
        let mut stream = ParquetRecordBatchStreamBuilder::new(reader)
            .await
            .map_err(|e| e.to_string())?
            .build()
            .map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while let Some(b) = stream.next().await {
            out.push(b.map_err(|e| e.to_string())?);
        }
        Ok(out)
    })
}

/// The local file at `path`, through the engine.
pub fn local(path: &std::path::Path) -> Arc<dyn Source> {
    gdscan::store::open(path.to_str().unwrap(), &Default::default()).unwrap()
}

/// The batches as Arrow IPC stream bytes: equal batches give equal bytes,
/// NaN included (RecordBatch's own equality says NaN != NaN).
pub fn ipc(batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(first) = batches.first() {
        let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, &first.schema()).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    }
    out
}
