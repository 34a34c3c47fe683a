//! GPU tests of device batches and the Arrow C Device Data Interface.
//! Without a GPU they are listed as ignored; on the GPU machine:
//!
//! ```text
//! cargo test --release --test gpu_device_array -- --ignored --test-threads 1
//! ```
//!
//! Each test uploads arrow arrays (Int32 with nulls, Decimal128, Utf8View
//! over several data buffers, Boolean with nulls, Date32, ...) into device
//! memory from a pool, goes through the C structures, copies back and
//! compares with the arrays it started from. Every test first asserts that a
//! GPU is present, so the run fails, rather than passing vacuously, without.

use std::ffi::c_void;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array,
    StringArray, StringViewBuilder,
};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;

use gdscan::cuda::{driver, Device, DevicePool, Stream};
use gdscan::decode::array::{DeviceArrayError, DeviceBatch, MemoryLocation};
use gdscan::decode::ffi::{
    export_device_batch, export_device_stream, import_device_batch, ArrowDeviceType,
    DeviceStreamReader,
};

const NEEDS_GPU: &str = "needs an NVIDIA GPU: cargo test --test gpu_device_array -- --ignored";

fn gpu() -> Device {
    assert!(
        driver::is_available(),
        "{NEEDS_GPU}; no usable GPU: {:?}",
        driver::ensure().err()
    );
    Device::get(0).expect("device 0")
}

/// `rows` rows of Int32 with nulls, Decimal128(20, 2), Utf8View (inline and
/// long strings in 256-byte blocks, nulls), Boolean with nulls, Date32,
/// Utf8 and Float64; `seed` varies the values.
fn sample(rows: usize, seed: i64) -> RecordBatch {
    sample_in_blocks(rows, seed, 256)
}

/// [`sample`] with its view column's data in blocks of `block` bytes.
fn sample_in_blocks(rows: usize, seed: i64, block: u32) -> RecordBatch {
    let ints: Int32Array = (0..rows)
        .map(|i| (i % 7 != 3).then_some(i as i32 * 31 - seed as i32))
        .collect();
    let decimals = (0..rows)
        .map(|i| (i % 5 != 0).then_some((i as i128 - 50) * 1_000_003 + seed as i128))
        .collect::<Decimal128Array>()
        .with_precision_and_scale(20, 2)
        .unwrap();
    let mut views = StringViewBuilder::new().with_fixed_block_size(block);
    for i in 0..rows {
        match i % 4 {
            0 => views.append_null(),
            1 => views.append_value(format!("s{i}")),
            _ => views.append_value(format!("a longer string, row {i}, seed {seed}")),
        }
    }
    let views = views.finish();
    let bools: BooleanArray = (0..rows)
        .map(|i| (i % 3 != 2).then_some(i % 2 == 0))
        .collect();
    let dates = Date32Array::from_iter_values((0..rows).map(|i| 19_000 + i as i32));
    let strings: StringArray = (0..rows)
        .map(|i| (i % 6 != 1).then(|| format!("row {i}")))
        .collect();
    let floats: Float64Array = (0..rows).map(|i| i as f64 / 3.0).collect();
    let schema = Schema::new(vec![
        Field::new("ints", DataType::Int32, true),
        Field::new("decimals", DataType::Decimal128(20, 2), true),
        Field::new("views", DataType::Utf8View, true),
        Field::new("bools", DataType::Boolean, true),
        Field::new("dates", DataType::Date32, false),
        Field::new("strings", DataType::Utf8, true),
        Field::new("floats", DataType::Float64, false),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(ints),
        Arc::new(decimals),
        Arc::new(views),
        Arc::new(bools),
        Arc::new(dates),
        Arc::new(strings),
        Arc::new(floats),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).unwrap()
}

fn setup() -> (Device, Arc<DevicePool>, Stream) {
    let device = gpu();
    let pool = DevicePool::new(device, 1 << 30);
    let stream = Stream::new(device).unwrap();
    (device, pool, stream)
}

fn buffer_count(batch: &DeviceBatch) -> usize {
    batch
        .columns()
        .iter()
        .map(|c| c.all_buffers().count())
        .sum()
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu_device_array -- --ignored"]
fn uploaded_batches_copy_back_equal() {
    let (device, pool, stream) = setup();
    let batch = sample(1000, 1);
    let views = batch
        .column(2)
        .as_any()
        .downcast_ref::<arrow::array::StringViewArray>();
    assert!(
        views.unwrap().data_buffers().len() > 2,
        "several variadic buffers"
    );
    for expected in [batch.clone(), batch.slice(13, 500), batch.slice(1000, 0)] {
        let on_gpu = DeviceBatch::upload(&expected, &pool, &stream).unwrap();
        assert_eq!(on_gpu.location(), MemoryLocation::cuda(device.ordinal()));
        assert_eq!(on_gpu.device_ordinal(), Some(device.ordinal()));
        assert!(on_gpu.ready().is_some());
        assert_eq!(on_gpu.to_host().unwrap(), expected);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu_device_array -- --ignored"]
fn large_batches_copy_back_equal_through_the_staging_chunks_from_many_threads() {
    // Tens of MiB: the copy back goes through several rounds of its two
    // 8 MiB pinned chunks, buffers cut across chunk ends; eight threads
    // copy the same batch back at once (as DataFusion's partitions do).
    let (device, pool, stream) = setup();
    let expected = sample_in_blocks(1_500_000, 3, 4 << 20);
    let on_gpu = DeviceBatch::upload(&expected, &pool, &stream).unwrap();
    assert!(
        on_gpu.byte_size() > 40 << 20,
        "{} bytes",
        on_gpu.byte_size()
    );
    let copies: Vec<RecordBatch> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| on_gpu.to_host().unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for copy in copies {
        assert_eq!(copy, expected);
    }
    // Into pinned memory the batch's buffers point into, back to the pool
    // once the batch is dropped.
    let pinned = gdscan::cuda::PinnedPool::new(device, 1 << 30);
    let copy = on_gpu.to_host_pinned(&pinned).unwrap();
    assert_eq!(copy, expected);
    assert!(pinned.in_use_bytes() >= on_gpu.byte_size());
    drop(copy);
    assert_eq!(pinned.in_use_bytes(), 0);
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu_device_array -- --ignored"]
fn the_c_round_trip_keeps_device_pointers_and_values() {
    let (device, pool, stream) = setup();
    let expected = sample(777, 2);
    let on_gpu = DeviceBatch::upload(&expected, &pool, &stream).unwrap();
    let (schema, array) = export_device_batch(&on_gpu).unwrap();
    assert_eq!(array.device_type, ArrowDeviceType::CUDA);
    assert_eq!(array.device_id, device.ordinal() as i64);
    assert!(!array.sync_event.is_null());
    let handle = unsafe { *array.sync_event.cast::<*mut c_void>() };
    assert_eq!(handle, on_gpu.ready().unwrap().handle());

    let imported = unsafe { import_device_batch(&schema, array) }.unwrap();
    assert_eq!(imported.location(), on_gpu.location());
    for (a, b) in imported.columns().iter().zip(on_gpu.columns()) {
        assert_eq!(a.data_type(), b.data_type());
        assert_eq!(a.len(), b.len());
        assert_eq!(a.null_count(), b.null_count());
        let addresses = |c: &gdscan::decode::array::DeviceColumn| -> Vec<u64> {
            c.all_buffers().map(|b| b.address()).collect()
        };
        assert_eq!(addresses(a), addresses(b));
    }
    // The imported event is the producer's CUevent; waiting on it works.
    imported.wait().unwrap();
    drop(on_gpu);
    // The Utf8 column's data length was read back from its last offset on
    // the device; the views' sizes from the host sizes buffer.
    assert_eq!(imported.to_host().unwrap(), expected);
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu_device_array -- --ignored"]
fn release_returns_the_buffers_to_the_pool() {
    let (_, pool, stream) = setup();
    let on_gpu = DeviceBatch::upload(&sample(300, 3), &pool, &stream).unwrap();
    let buffers = buffer_count(&on_gpu);
    assert_eq!(pool.cached(), 0);
    let (schema, array) = export_device_batch(&on_gpu).unwrap();
    drop(on_gpu);
    assert_eq!(pool.cached(), 0, "the consumer still holds every buffer");
    drop(array); // the consumer's release
    assert_eq!(pool.cached(), buffers, "every buffer back in the pool");
    drop(schema);

    // Through an import: the release happens when the last imported buffer
    // drops.
    let on_gpu = DeviceBatch::upload(&sample(300, 4), &pool, &stream).unwrap();
    let in_use = buffer_count(&on_gpu);
    let idle = pool.cached();
    let (schema, array) = export_device_batch(&on_gpu).unwrap();
    drop(on_gpu);
    let imported = unsafe { import_device_batch(&schema, array) }.unwrap();
    let kept = imported.columns()[2].buffers()[0].clone();
    drop(imported);
    assert_eq!(pool.cached(), idle);
    drop(kept);
    assert_eq!(pool.cached(), idle + in_use);
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu_device_array -- --ignored"]
fn device_streams_carry_batches_and_errors() {
    let (_, pool, stream) = setup();
    let expected: Vec<RecordBatch> = (0..4).map(|i| sample(200 + i * 50, i as i64)).collect();
    let schema = expected[0].schema();
    let mut items: Vec<Result<DeviceBatch, DeviceArrayError>> = expected
        .iter()
        .map(|b| DeviceBatch::upload(b, &pool, &stream))
        .collect();
    items.push(Err(DeviceArrayError::Import("a failing row group".into())));
    let c_stream = export_device_stream(schema.clone(), ArrowDeviceType::CUDA, items);
    let mut reader = unsafe { DeviceStreamReader::try_new(c_stream) }.unwrap();
    assert_eq!(reader.schema(), schema);
    for want in &expected {
        let batch = reader.next().unwrap().unwrap();
        assert_eq!(batch.location().device_type, ArrowDeviceType::CUDA);
        assert_eq!(&batch.to_host().unwrap(), want);
    }
    let err = reader.next().unwrap().unwrap_err().to_string();
    assert!(err.contains("a failing row group"), "{err}");
    assert!(reader.next().is_none());
}
