//! Device memory exhausted: with the device's free memory held below one
//! row group, a fetch into device memory and a GPU decode each fail with a
//! typed out-of-memory error (`CudaError::OutOfMemory` in the error's
//! source chain), and once the memory is released a scan in the same
//! process returns the file's bytes and arrow-rs's values.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use gdscan::cuda::{driver, CudaError, Device, DeviceBuffer};
use gdscan::decode::scan::{decode, DecodeError, DecodeOptions};
use gdscan::parquet::fetch::{fetch, DeviceAllocator, FetchOptions, SourceScan};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::plan::{plan, ScanRequest};
use gdscan::parquet::ScanError;

/// One row group of 16 MiB of incompressible values, uncompressed.
fn big_row_group_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("big.parquet");
    let mut s = 0x1234_5678_9ABC_DEF1u64;
    let values: Int64Array = (0..(2 << 20))
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as i64
        })
        .collect();
    let batch =
        arrow::record_batch::RecordBatch::try_from_iter([("v", Arc::new(values) as ArrayRef)])
            .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_max_row_group_row_count(Some(4 << 20))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    path
}

fn has_oom(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut e: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(cur) = e {
        if matches!(
            cur.downcast_ref::<CudaError>(),
            Some(CudaError::OutOfMemory { .. })
        ) {
            return true;
        }
        // Transparent wrappers forward `source()` past the error they wrap.
        if let Some(g) = cur.downcast_ref::<gdscan::Error>() {
            if matches!(g, gdscan::Error::Cuda(CudaError::OutOfMemory { .. })) {
                return true;
            }
        }
        if let Some(s) = cur.downcast_ref::<ScanError>() {
            if matches!(s.cuda(), Some(CudaError::OutOfMemory { .. })) {
                return true;
            }
        }
        if let Some(d) = cur.downcast_ref::<DecodeError>() {
            if matches!(d.cuda(), Some(CudaError::OutOfMemory { .. })) {
                return true;
            }
        }
        e = cur.source();
    }
    false
}

/// Holds device memory until less than `leave` bytes are free.
fn hog(dev: Device, leave: usize) -> Vec<DeviceBuffer> {
    let mut held = Vec::new();
    for step in [1usize << 30, 256 << 20, 16 << 20, 1 << 20] {
        loop {
            let (free, _) = dev.memory_info().unwrap();
            if free < leave || free < step {
                break;
            }
            match DeviceBuffer::new(dev, step) {
                Ok(b) => held.push(b),
                Err(_) => break,
            }
        }
    }
    held
}

/// Decodes `path` on the GPU; returns the values, copied back.
fn decode_values(path: &std::path::Path) -> Result<Vec<i64>, DecodeError> {
    decode_with_report(path).map(|(values, _)| values)
}

/// arrow-rs's values of the file.
fn arrow_values(file: &[u8]) -> Vec<i64> {
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        bytes::Bytes::copy_from_slice(file),
    )
    .unwrap()
    .build()
    .unwrap();
    let mut out = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let col = b
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .clone();
        out.extend(col.values().iter().copied());
    }
    out
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn device_memory_exhaustion_is_a_typed_error_and_the_next_scan_works() {
    assert!(
        driver::is_available(),
        "no usable GPU: {:?}",
        driver::ensure().err()
    );
    let dev = Device::get(0).unwrap();
    let dir = tempfile::tempdir_in(".").unwrap();
    let path = big_row_group_file(dir.path());
    let file = std::fs::read(&path).unwrap();
    let want = arrow_values(&file);
    // Warm up: kernels compiled, pools made, before memory runs out.
    assert!(decode_values(&path).unwrap() == want);
    let source: Arc<dyn gdscan::store::Source> =
        gdscan::store::open(path.to_str().unwrap(), &Default::default()).unwrap();
    let meta = load(&source, MetadataOptions::default()).unwrap();
    let p = Arc::new(plan(&meta, &ScanRequest::default()).unwrap());
    let row_group = p.row_groups[0].bytes as usize;
    assert!(row_group > 8 << 20, "{row_group}");

    // The decoder's pools keep the warm-up's buffers for the next scan:
    // give them back, so that the hog below takes the memory they held.
    gdscan::decode::scan::release_cached_memory();
    let held = hog(dev, row_group / 4);
    let (free, _) = dev.memory_info().unwrap();
    eprintln!(
        "holding {} buffers; {free} bytes free, a row group is {row_group}",
        held.len()
    );
    assert!(free < row_group / 2);
    let scan = SourceScan::new(source.clone(), p.clone());
    let err = fetch([scan], [DeviceAllocator::new(dev)], FetchOptions::default())
        .find_map(|rg| rg.err())
        .expect("the fetch fails");
    assert!(
        has_oom(&err),
        "fetch: not a typed out-of-memory error: {err:?}"
    );
    let err = decode_values(&path).expect_err("the decode fails");
    assert!(
        has_oom(&err),
        "decode: not a typed out-of-memory error: {err:?}"
    );

    drop(held);
    // The same process scans again: the bytes, then the values.
    let scan = SourceScan::new(source, p.clone());
    for rg in fetch([scan], [DeviceAllocator::new(dev)], FetchOptions::default()) {
        let rg = rg.unwrap();
        for slice in &rg.chunks {
            let c = &p.chunks[slice.chunk];
            assert!(
                rg.chunk_bytes(slice).unwrap()
                    == file[c.range.start as usize..c.range.end as usize]
            );
        }
    }
    assert!(
        decode_values(&path).unwrap() == want,
        "values after recovery"
    );
}

/// Decodes `path` on the GPU; returns the values, copied back, and the
/// decoder's report.
fn decode_with_report(
    path: &std::path::Path,
) -> Result<(Vec<i64>, gdscan::decode::scan::DecodeReport), DecodeError> {
    let mut stream = decode(
        path.to_str().unwrap(),
        ScanRequest::default(),
        DecodeOptions::from_env().unwrap(),
    )?;
    let mut values = Vec::new();
    for batch in stream.by_ref() {
        let host = batch?.to_host()?;
        let col = host
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("int64")
            .clone();
        values.extend(col.values().iter().copied());
    }
    Ok((values, stream.report().clone()))
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn a_second_scan_takes_its_device_memory_from_the_pool() {
    assert!(
        driver::is_available(),
        "no usable GPU: {:?}",
        driver::ensure().err()
    );
    let dir = tempfile::tempdir_in(".").unwrap();
    let path = big_row_group_file(dir.path());
    let want = arrow_values(&std::fs::read(&path).unwrap());
    gdscan::decode::scan::release_cached_memory();
    let (first, r1) = decode_with_report(&path).unwrap();
    assert!(first == want, "first scan's values");
    assert!(r1.device_pool.created > 0, "{:?}", r1.device_pool);
    // The file's row group is 16 MiB: the scan held at least that.
    assert!(
        r1.device_pool.peak_in_use_bytes >= 16 << 20,
        "{:?}",
        r1.device_pool
    );
    let (second, r2) = decode_with_report(&path).unwrap();
    assert!(second == want, "second scan's values");
    assert_eq!(r2.device_pool.created, 0, "{:?}", r2.device_pool);
    assert_eq!(r2.device_pool.create_seconds, 0.0);
    assert!(
        r2.device_pool.peak_in_use_bytes >= 16 << 20,
        "{:?}",
        r2.device_pool
    );
    // Given back, the next scan allocates again.
    gdscan::decode::scan::release_cached_memory();
    let (third, r3) = decode_with_report(&path).unwrap();
    assert!(third == want, "third scan's values");
    assert!(r3.device_pool.created > 0, "{:?}", r3.device_pool);
}
