//! Several GPUs of one host: one scan spread over them.
//!
//! Tests named `two_gpus_*` need two GPUs and FAIL on a machine with fewer
//! (never pass vacuously); `benches/h200.sh` (one GPU) skips them by name,
//! `benches/h200x2.sh` runs them. The others need one GPU.

use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use super::reference::{arrow_rs_decode, assert_same_values};
use gdscan::cuda::{driver, CudaError, Device, Devices};
use gdscan::decode::ffi::export_device_array;
use gdscan::decode::scan::{decode, DecodeError, DecodeOptions};
use gdscan::engine::{device_counters, global_counters, Engine, IoPath};
use gdscan::parquet::fetch::{DeviceAllocator, FetchOptions, ReadBack, SourceScan};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::{fetch, plan, ScanRequest};
use gdscan::store::{LocalSource, Source};
use gdscan::Settings;

/// GPUs 0 and 1, or a failure saying why not.
fn two_gpus() -> Vec<Device> {
    assert!(
        driver::is_available(),
        "needs two NVIDIA GPUs: no usable GPU: {:?}",
        driver::ensure().err()
    );
    let count = driver::device_count().expect("device count");
    assert!(
        count >= 2,
        "needs two GPUs, the driver reports {count} (run it on nvidia-h200-x2: benches/h200x2.sh)"
    );
    vec![Device::get(0).unwrap(), Device::get(1).unwrap()]
}

/// TPC-H lineitem at SF 0.1, rewritten with 20 000-row row groups (30 of
/// them) so that a spread has something to balance.
pub(super) fn lineitem_with_small_row_groups(dir: &Path) -> std::path::PathBuf {
    let mut opts = gdscan_cli::tpch::GenOptions::new(0.1, dir.join("gen"));
    opts.quiet = true;
    opts.parts = Some(1);
    opts.tables = vec![gdscan_cli::tpch::Table::LineItem];
    gdscan_cli::tpch::generate(&opts).unwrap();
    let src = std::fs::read_dir(dir.join("gen").join("lineitem"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "parquet"))
        .unwrap();
    let dst = dir.join("lineitem-small-rg.parquet");
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&src).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(20_000))
        .build();
    let mut writer = ArrowWriter::try_new(
        std::fs::File::create(&dst).unwrap(),
        arrow::record_batch::RecordBatchReader::schema(&reader),
        Some(props),
    )
    .unwrap();
    for batch in reader {
        writer.write(&batch.unwrap()).unwrap();
    }
    writer.close().unwrap();
    dst
}

pub(super) fn concat(schema: &arrow::datatypes::SchemaRef, host: &[RecordBatch]) -> RecordBatch {
    if host.is_empty() {
        return RecordBatch::new_empty(schema.clone());
    }
    concat_batches(&host[0].schema(), host).expect("concat")
}

/// One scan over GPUs 0 and 1: every row group decoded on the GPU the
/// spread gave it (the batch and its C Device array say so), batch by batch
/// equal to the same scan on GPU 0 alone, and all of it equal to arrow-rs;
/// each GPU's fetch read exactly its planned bytes, and the shares are
/// within one row group of even.
#[test]
#[ignore = "needs two NVIDIA GPUs: cargo test --test gpu -- --ignored two_gpus"]
fn two_gpus_decode_every_row_group_like_one_gpu_and_arrow_rs() {
    two_gpus();
    let dir = tempfile::tempdir().unwrap();
    let path = lineitem_with_small_row_groups(dir.path());
    let bytes = Bytes::from(std::fs::read(&path).unwrap());
    let meta = parquet::file::reader::FileReader::metadata(
        &parquet::file::serialized_reader::SerializedFileReader::new(bytes.clone()).unwrap(),
    )
    .clone();
    assert!(
        meta.num_row_groups() >= 20,
        "{} row groups",
        meta.num_row_groups()
    );
    let location = path.to_str().unwrap();

    let one: Vec<RecordBatch> = decode(
        location,
        ScanRequest::default(),
        DecodeOptions::from_env().unwrap(),
    )
    .unwrap()
    .map(|b| b.unwrap().to_host().unwrap())
    .collect();

    let stream = decode(
        location,
        ScanRequest::default(),
        DecodeOptions {
            devices: Devices::List(vec![0, 1]),
            ..DecodeOptions::from_env().unwrap()
        },
    )
    .unwrap();
    let schema = stream.schema().clone();
    let spread = stream.spread().clone();
    assert_eq!(spread.placements.len(), meta.num_row_groups());
    let mut stream = stream;
    let mut host = Vec::new();
    let mut rows_on = [0u64; 2];
    for (k, batch) in stream.by_ref().enumerate() {
        let batch = batch.unwrap();
        let p = spread.placements[k];
        assert_eq!(p.row_group, k, "row groups in plan order");
        let want = [0usize, 1][p.share];
        assert_eq!(batch.device_ordinal(), Some(want), "row group {k}");
        let exported = export_device_array(&batch);
        assert_eq!(
            exported.device_id, want as i64,
            "row group {k}: C Device array"
        );
        assert_eq!(batch.num_rows() as i64, meta.row_group(k).num_rows());
        rows_on[p.share] += batch.num_rows() as u64;
        let h = batch.to_host().unwrap();
        assert_same_values(&format!("row group {k}: two GPUs against one"), &one[k], &h);
        host.push(h);
    }
    assert_eq!(host.len(), one.len());
    assert!(
        rows_on[0] > 0 && rows_on[1] > 0,
        "both GPUs decoded rows: {rows_on:?}"
    );
    let expected = arrow_rs_decode(&bytes, None, None, None);
    assert_same_values(
        "two GPUs against arrow-rs",
        &expected,
        &concat(&schema, &host),
    );

    // Each GPU's share of the bytes: what its fetch read is what the
    // spread planned, the shares add up to the file's plan, and they are
    // within one row group of each other.
    let source: Arc<dyn Source> =
        Arc::new(LocalSource::open(Engine::global().unwrap(), &path).unwrap());
    let metadata = load(&source, MetadataOptions::default()).unwrap();
    let whole = plan(&metadata, &ScanRequest::default()).unwrap();
    let shares = stream.shares();
    assert_eq!(shares.len(), 2);
    for (i, s) in shares.iter().enumerate() {
        assert_eq!(s.device, i);
        assert_eq!(s.report.bytes_read, s.planned_bytes, "GPU {i}");
        assert_eq!(s.planned_bytes, spread.bytes[i]);
        assert_eq!(s.report.rows, rows_on[i]);
        let planned: u64 = spread
            .placements
            .iter()
            .filter(|p| p.share == i)
            .map(|p| whole.row_groups[p.position].bytes)
            .sum();
        assert_eq!(planned, s.planned_bytes, "GPU {i}: the plan's row groups");
    }
    assert_eq!(
        shares.iter().map(|s| s.report.bytes_read).sum::<u64>(),
        whole.totals.bytes_read
    );
    let largest = whole.row_groups.iter().map(|r| r.bytes).max().unwrap();
    assert!(shares[0].planned_bytes.abs_diff(shares[1].planned_bytes) <= largest);
    println!(
        "{} row groups: GPU 0 {} bytes, GPU 1 {} bytes (largest row group {largest})",
        spread.placements.len(),
        shares[0].planned_bytes,
        shares[1].planned_bytes
    );
}

/// The raw fetch spread over GPUs 0 and 1 through one engine: every row
/// group lands on its share's GPU with the file's bytes, and the engine's
/// per-device counters (and bounce pools) show each GPU got its share.
#[test]
#[ignore = "needs two NVIDIA GPUs: cargo test --test gpu -- --ignored two_gpus"]
fn two_gpus_raw_fetch_lands_each_share_on_its_gpu() {
    let devices = two_gpus();
    let dir = tempfile::tempdir().unwrap();
    let path = lineitem_with_small_row_groups(dir.path());
    let file = std::fs::read(&path).unwrap();
    let settings = Settings::builder()
        .compat_mode(gdscan::CompatMode::On)
        .num_threads(8)
        .build()
        .unwrap();
    let engine = Engine::new(settings).unwrap();
    let source: Arc<dyn Source> = Arc::new(LocalSource::open(engine.clone(), &path).unwrap());
    let metadata = load(&source, MetadataOptions::default()).unwrap();
    let whole = Arc::new(plan(&metadata, &ScanRequest::default()).unwrap());
    let total = |d: usize| -> u64 {
        IoPath::ALL
            .iter()
            .map(|&p| device_counters(d).get(p).bytes)
            .sum()
    };
    let before = [total(0), total(1)];
    let mut landed = vec![0u64; 2];
    let spread = gdscan::parquet::spread(std::slice::from_ref(&whole), devices.len());
    for rg in fetch(
        [SourceScan::new(source.clone(), whole.clone())],
        devices.iter().map(|&d| DeviceAllocator::new(d)),
        FetchOptions::default(),
    ) {
        let rg = rg.unwrap();
        let share = rg.share;
        assert_eq!(
            rg.buffer.device().ordinal(),
            share,
            "row group {}",
            rg.index
        );
        for slice in &rg.chunks {
            let got = rg.chunk_bytes(slice).unwrap();
            assert_eq!(slice.file_bytes(&file), Some(got), "row group {}", rg.index);
        }
        let mut first = [0u8; 1];
        rg.buffer.read_back(0, &mut first).unwrap();
        landed[share] += rg.bytes_read;
    }
    assert_eq!(landed, spread.bytes);
    assert_eq!(landed.iter().sum::<u64>(), whole.totals.bytes_read);
    for (d, before) in before.iter().enumerate() {
        assert_eq!(total(d) - before, spread.bytes[d], "GPU {d}'s counters");
        assert!(
            engine.bounce_buffers_allocated_on(d) > 0,
            "GPU {d}'s bounce pool"
        );
        assert!(spread.bytes[d] > 0);
    }
    // The path report shows both GPUs' process-wide counters.
    let report = gdscan::report::build(source.as_ref(), None);
    for d in 0..2 {
        let gpu = report
            .per_device
            .iter()
            .find(|g| g.device == d)
            .unwrap_or_else(|| panic!("GPU {d} missing from the path report"));
        assert!(gpu.counters.iter().map(|c| c.bytes).sum::<u64>() >= spread.bytes[d]);
    }
    println!("{}", gdscan::report::render(&report));
}

/// A GPU that does not exist is `CudaError::NoSuchDevice` before any read:
/// the file named does not even exist (a read would fail with not-found),
/// and the process's counters do not move.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn a_bad_device_index_is_a_typed_error_before_any_io() {
    assert!(driver::is_available(), "needs an NVIDIA GPU");
    let count = driver::device_count().unwrap();
    let moved = || -> u64 {
        IoPath::ALL
            .iter()
            .map(|&p| global_counters().get(p).ops)
            .sum()
    };
    let before = moved();
    let err = decode(
        "/nonexistent/gdscan/none.parquet",
        ScanRequest::default(),
        DecodeOptions {
            devices: Devices::List(vec![0, count]),
            ..DecodeOptions::from_env().unwrap()
        },
    )
    .unwrap_err();
    match &err {
        DecodeError::Cuda(CudaError::NoSuchDevice { device, count: c }) => {
            assert_eq!((*device, *c), (count, count));
        }
        other => panic!("expected NoSuchDevice, got {other}"),
    }
    assert_eq!(Devices::All.open().unwrap().len(), count);
    assert!(matches!(
        Devices::List(vec![count + 3]).open(),
        Err(CudaError::NoSuchDevice { .. })
    ));
    assert_eq!(moved(), before, "no read was made");
}

/// Where the GPUs sit: the PCI bus id the driver gives is a sysfs device,
/// and its NUMA node (when known) is one of the host's nodes.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn numa_placement_comes_from_sysfs() {
    assert!(driver::is_available(), "needs an NVIDIA GPU");
    for d in Devices::All.open().unwrap() {
        let p = d.numa().unwrap();
        let sys = Path::new("/sys/bus/pci/devices").join(&p.pci_bus_id);
        assert!(sys.exists(), "{} is not in sysfs", sys.display());
        assert!(p.host_nodes >= 1);
        if let Some(n) = p.node {
            assert!(n < p.host_nodes.max(n + 1));
            assert!(Path::new(&format!("/sys/devices/system/node/node{n}")).exists());
        }
        println!(
            "GPU {}: PCI {} NUMA node {:?} of {} node(s); pinned memory prefers {:?}",
            d.ordinal(),
            p.pci_bus_id,
            p.node,
            p.host_nodes,
            p.preferred_node()
        );
    }
}
