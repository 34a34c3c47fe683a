//! The GPU filter's compaction (`FilterGpu::compact`, `FilterGpu::count`)
//! against arrow's `filter_record_batch`: random batches of every type
//! device batches hold (fixed width of every size, booleans, views,
//! Utf8/LargeBinary, Null, lists, large lists, maps, fixed-size lists,
//! structs, lists of structs and of lists, nulls at every nullable level;
//! `tests/kernel_emu/random_arrays.rs`), sliced or not, uploaded, cut by
//! masks that keep none, all, one, random and runs of rows, copied back
//! (fully validated) and compared.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, Int32Array, ListArray, StringViewArray};
use arrow::buffer::OffsetBuffer;
use arrow::compute::filter_record_batch;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;

use gdscan::config::decode::KernelConfig;
use gdscan::cuda::{DevicePool, Stream};
use gdscan::decode::array::{DeviceBatch, DeviceBytes, DeviceColumn};
use gdscan::decode::filter::{DeviceMask, FilterError, FilterGpu};
use gdscan::decode::kernels::KernelSet;

#[path = "../../../tests/kernel_emu/random_arrays.rs"]
mod random_arrays;

use random_arrays::{every_field, random_array, random_mask, Rng};

/// A filter on GPU 0, its pool and a stream for the uploads.
fn filter() -> (FilterGpu, Arc<DevicePool>, Stream) {
    let device = super::gpu();
    let pool = DevicePool::new(device, 1 << 30);
    let kernels = KernelSet::get(device, KernelConfig::DEFAULT).expect("kernels compile and load");
    let filter = FilterGpu::new(kernels, pool.clone()).expect("a filter");
    let stream = Stream::new(device).expect("a stream");
    (filter, pool, stream)
}

/// `mask` in device memory.
fn upload_mask(pool: &Arc<DevicePool>, stream: &Stream, mask: &[u8]) -> DeviceMask {
    let buffer = pool.allocate(mask.len().max(1)).unwrap();
    if !mask.is_empty() {
        // SAFETY: `buffer` holds at least `mask.len()` bytes; `mask` is
        // borrowed until the synchronisation below.
        unsafe {
            stream
                .copy_to_device(buffer.device_ptr(), mask.as_ptr(), mask.len())
                .unwrap()
        };
    }
    stream.synchronize().unwrap();
    let bytes = DeviceBytes::from_pooled(buffer)
        .slice(0, mask.len())
        .unwrap();
    DeviceMask::from_bytes(bytes, mask.len()).unwrap()
}

/// A batch of every field, `rows` rows, `offset` rows into longer arrays.
fn random_batch(rng: &mut Rng, rows: usize, offset: usize) -> RecordBatch {
    let fields = every_field();
    let columns: Vec<ArrayRef> = fields
        .iter()
        .map(|f| random_array(rng, f.data_type(), rows + offset + 2, f.is_nullable()))
        .collect();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    batch.slice(offset, rows)
}

/// Compacts `batch` by `mask` on the GPU; checks the result against
/// arrow's filter and the count against the mask's.
fn check(
    filter: &FilterGpu,
    pool: &Arc<DevicePool>,
    stream: &Stream,
    batch: &RecordBatch,
    mask: &[u8],
    what: &str,
) {
    let device = DeviceBatch::upload(batch, pool, stream).unwrap();
    let keep = BooleanArray::from(mask.iter().map(|&b| b != 0).collect::<Vec<_>>());
    let device_mask = upload_mask(pool, stream, mask);
    assert_eq!(
        filter.count(&device_mask).unwrap(),
        keep.true_count(),
        "{what}: count"
    );
    let expected = filter_record_batch(batch, &keep).unwrap();
    match filter.compact(&device, &device_mask).unwrap() {
        None => assert_eq!(expected.num_rows(), 0, "{what}: None, arrow keeps rows"),
        Some(got) => {
            assert!(
                expected.num_rows() > 0,
                "{what}: rows where arrow keeps none"
            );
            let host = got.to_host().unwrap();
            assert_eq!(host.num_rows(), expected.num_rows(), "{what}");
            for (i, field) in batch.schema().fields().iter().enumerate() {
                assert_eq!(
                    host.column(i).as_ref(),
                    expected.column(i).as_ref(),
                    "{what}: column {}",
                    field.name()
                );
                assert_eq!(
                    host.column(i).null_count(),
                    expected.column(i).null_count(),
                    "{what}: nulls of {}",
                    field.name()
                );
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn compaction_of_every_type_is_arrows_filter() {
    let (filter, pool, stream) = filter();
    let mut rng = Rng(0x0058_c0de);
    for rows in [1, 37, 1000, 4097, 70_001] {
        for kind in 0..5 {
            let offset = if rng.chance(50) {
                rng.below(30) as usize
            } else {
                0
            };
            let batch = random_batch(&mut rng, rows, offset);
            let mask = random_mask(&mut rng, rows, kind);
            let what = format!("{rows} rows (offset {offset}), mask kind {kind}");
            check(&filter, &pool, &stream, &batch, &mask, &what);
        }
    }
}

/// Millions of rows: many tiles of the scans, lists whose children have
/// millions of values.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn compaction_of_millions_of_rows_is_arrows_filter() {
    let (filter, pool, stream) = filter();
    let mut rng = Rng(0x0058_b16b);
    let rows = 3_000_017;
    let ints: Int32Array = (0..rows)
        .map(|i| (i % 11 != 3).then_some(i as i32))
        .collect();
    let views: StringViewArray = (0..rows)
        .map(|i| (i % 7 != 0).then(|| format!("a string past twelve bytes {i}")))
        .collect();
    let item = Arc::new(Field::new("item", DataType::Int32, true));
    let lengths: Vec<usize> = (0..rows).map(|i| i % 4).collect();
    let child: Int32Array = (0..lengths.iter().sum::<usize>() as i32)
        .map(Some)
        .collect();
    let lists = ListArray::try_new(
        item.clone(),
        OffsetBuffer::from_lengths(lengths),
        Arc::new(child),
        None,
    )
    .unwrap();
    let schema = Schema::new(vec![
        Field::new("ints", DataType::Int32, true),
        Field::new("views", DataType::Utf8View, true),
        Field::new("lists", DataType::List(item), true),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(ints), Arc::new(views), Arc::new(lists)],
    )
    .unwrap();
    for kind in [3, 4, 2] {
        let mask = random_mask(&mut rng, rows, kind);
        check(
            &filter,
            &pool,
            &stream,
            &batch,
            &mask,
            &format!("3M rows, mask kind {kind}"),
        );
    }
}

/// The views of a compacted batch point into the input's data buffers:
/// no string byte is copied.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn compacted_views_share_the_data_buffers() {
    let (filter, pool, stream) = filter();
    let views: StringViewArray = (0..500)
        .map(|i| Some(format!("a string past twelve bytes {i}")))
        .collect();
    let schema = Schema::new(vec![Field::new("v", DataType::Utf8View, false)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(views)]).unwrap();
    let device = DeviceBatch::upload(&batch, &pool, &stream).unwrap();
    let mask: Vec<u8> = (0..500).map(|i| u8::from(i % 3 == 0)).collect();
    let got = filter
        .compact(&device, &upload_mask(&pool, &stream, &mask))
        .unwrap()
        .expect("rows kept");
    let before: Vec<u64> = device.columns()[0]
        .variadic_buffers()
        .iter()
        .map(DeviceBytes::address)
        .collect();
    let after: Vec<u64> = got.columns()[0]
        .variadic_buffers()
        .iter()
        .map(DeviceBytes::address)
        .collect();
    assert!(!before.is_empty());
    assert_eq!(before, after);
    assert_eq!(got.num_rows(), 167);
}

/// A mask of another length is an error, not a compaction.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn a_mask_of_another_length_is_an_error() {
    let (filter, pool, stream) = filter();
    let mut rng = Rng(7);
    let batch = random_batch(&mut rng, 10, 0);
    let device = DeviceBatch::upload(&batch, &pool, &stream).unwrap();
    let mask = upload_mask(&pool, &stream, &[1u8; 9]);
    let err = filter.compact(&device, &mask).unwrap_err();
    assert!(matches!(err, FilterError::Batch(_)), "{err}");
}

/// Columns whose values start an Arrow offset into their buffers (as the C
/// Device Data Interface imports them): values and validity bits are read
/// from there.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn columns_with_an_offset_are_read_from_it() {
    let (filter, pool, stream) = filter();
    let mut rng = Rng(0x0ff5e7);
    let fields = vec![
        Field::new("i32", DataType::Int32, true),
        Field::new("bool", DataType::Boolean, true),
        Field::new("views", DataType::Utf8View, true),
    ];
    let (rows, offset) = (3000, 13);
    let whole: Vec<ArrayRef> = fields
        .iter()
        .map(|f| random_array(&mut rng, f.data_type(), rows + offset, true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), whole).unwrap();
    let device = DeviceBatch::upload(&batch, &pool, &stream).unwrap();
    let columns = device
        .columns()
        .iter()
        .zip(batch.columns())
        .map(|(c, host)| {
            let nulls = host.nulls().map(|n| n.slice(offset, rows).null_count());
            DeviceColumn::with_offset(
                c.data_type().clone(),
                offset,
                rows,
                nulls.or(Some(0)),
                c.validity().cloned(),
                c.buffers().to_vec(),
            )
            .unwrap()
        })
        .collect();
    let location = device.location();
    let shifted = DeviceBatch::try_new(schema, rows, columns, location, None).unwrap();
    let expected_input = batch.slice(offset, rows);
    for kind in [2, 3, 4] {
        let mask = random_mask(&mut rng, rows, kind);
        let keep = BooleanArray::from(mask.iter().map(|&b| b != 0).collect::<Vec<_>>());
        let expected = filter_record_batch(&expected_input, &keep).unwrap();
        device.wait().unwrap();
        let got = filter
            .compact(&shifted, &upload_mask(&pool, &stream, &mask))
            .unwrap()
            .expect("rows kept");
        assert_eq!(got.to_host().unwrap(), expected, "mask kind {kind}");
    }
}
