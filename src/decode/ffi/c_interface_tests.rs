//! CPU tests of the C Device Data Interface: layouts, schema export, move
//! and release semantics, round trips through the C structures only, and
//! streams. "CUDA" batches here use fake device memory (addresses that are
//! never dereferenced) and fake events that count their drops, so the
//! ownership logic runs without a GPU; host batches check values, and their
//! export is read back by arrow-rs's own C Data Interface importer.

use std::ffi::{c_void, CStr};
use std::mem::{offset_of, size_of};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use arrow::array::{Array, Int32Array, StructArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow::record_batch::RecordBatch;

use super::*;
use crate::decode::array::test_fakes::{Drops, FakeEvent};
use crate::decode::array::{
    sample_batch, DeviceArrayError, DeviceBatch, DeviceBytes, DeviceColumn, DeviceMemory,
    MemoryLocation, ReadyEvent,
};

/// "Device memory" at a made-up address on CUDA device 0.
#[derive(Debug)]
struct FakeMemory {
    address: u64,
    len: usize,
    drops: Arc<Drops>,
}

impl Drop for FakeMemory {
    fn drop(&mut self) {
        self.drops.0.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: never dereferenced: the tests that use it only compare addresses.
unsafe impl DeviceMemory for FakeMemory {
    fn address(&self) -> u64 {
        self.address
    }
    fn len(&self) -> usize {
        self.len
    }
    fn location(&self) -> MemoryLocation {
        MemoryLocation::cuda(0)
    }
}

/// A fake CUDA batch: Int32 with nulls, Utf8View with two data buffers,
/// Boolean; [`ALLOCATIONS`] allocations in all, each dropped into `drops`.
/// Allocations of [`fake_cuda_batch`]: 2 + 4 + 1.
const ALLOCATIONS: usize = 7;

fn fake_cuda_batch(drops: &Arc<Drops>, event_drops: &Arc<Drops>) -> DeviceBatch {
    let mut next = 0x7000_0000_0000u64;
    let mut fake = |len: usize| {
        next += 0x10_0000;
        DeviceBytes::new(Arc::new(FakeMemory {
            address: next,
            len,
            drops: drops.clone(),
        }))
    };
    let ints = DeviceColumn::new(
        DataType::Int32,
        100,
        Some(7),
        Some(fake(13)),
        vec![fake(400)],
    )
    .unwrap();
    let views = DeviceColumn::new(
        DataType::Utf8View,
        100,
        None,
        Some(fake(13)),
        vec![fake(1600), fake(4096), fake(77)],
    )
    .unwrap();
    let bools = DeviceColumn::new(DataType::Boolean, 100, Some(0), None, vec![fake(13)]).unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("ints", DataType::Int32, true),
        Field::new("views", DataType::Utf8View, true),
        Field::new("bools", DataType::Boolean, false),
    ]));
    let event: Arc<dyn ReadyEvent> = Arc::new(FakeEvent {
        handle: 0xe7e7_0000,
        drops: event_drops.clone(),
    });
    DeviceBatch::try_new(
        schema,
        100,
        vec![ints, views, bools],
        MemoryLocation::cuda(0),
        Some(event),
    )
    .unwrap()
}

/// Every buffer of a batch as (address, len), validity first per column.
fn buffer_table(batch: &DeviceBatch) -> Vec<(u64, usize)> {
    batch
        .columns()
        .iter()
        .flat_map(|c| c.all_buffers().map(|b| (b.address(), b.len())))
        .collect()
}

/// A CPU device array around arrow-rs's own C export of `data`, with its schema.
fn arrow_rs_export(data: &arrow::array::ArrayData) -> (ArrowDeviceArray, FFI_ArrowSchema) {
    let (plain, schema) = arrow::ffi::to_ffi(data).unwrap();
    let array = ArrowDeviceArray {
        array: plain,
        device_id: -1,
        device_type: ArrowDeviceType::CPU,
        sync_event: std::ptr::null_mut(),
        reserved: [0; 3],
    };
    (array, schema)
}

#[test]
fn batches_and_structures_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<DeviceBatch>();
    send_sync::<DeviceBytes>();
    send::<ArrowDeviceArray>();
    send::<ArrowDeviceArrayStream>();
    send::<DeviceStreamReader>();
}

#[test]
fn structures_have_the_spec_layout() {
    // Also asserted at compile time; kept as a test so a failure names it.
    assert_eq!(size_of::<ArrowDeviceArray>(), 128);
    assert_eq!(offset_of!(ArrowDeviceArray, device_id), 80);
    assert_eq!(offset_of!(ArrowDeviceArray, device_type), 88);
    assert_eq!(offset_of!(ArrowDeviceArray, sync_event), 96);
    assert_eq!(offset_of!(ArrowDeviceArray, reserved), 104);
    assert_eq!(size_of::<ArrowDeviceArrayStream>(), 48);
    assert_eq!(offset_of!(ArrowDeviceArrayStream, private_data), 40);
    assert_eq!(ArrowDeviceType::CUDA.0, 2);
    assert_eq!(ArrowDeviceType::CUDA_HOST.0, 3);
    assert_eq!(ArrowDeviceType::CUDA_MANAGED.0, 13);
}

#[test]
fn the_schema_is_a_struct_of_the_columns() {
    let batch = DeviceBatch::from_host(&sample_batch()).unwrap();
    let (schema, array) = export_device_batch(&batch).unwrap();
    assert_eq!(schema.format(), "+s");
    let formats: Vec<&str> = schema.children().map(|c| c.format()).collect();
    assert_eq!(
        formats,
        ["i", "d:38,3", "vu", "b", "tdD", "u", "vz", "L", "n"]
    );
    let names: Vec<&str> = schema.children().map(|c| c.name().unwrap()).collect();
    assert_eq!(names[0], "ints");
    assert!(schema.child(0).nullable());
    assert!(!schema.child(4).nullable());
    assert_eq!(Schema::try_from(&schema).unwrap(), *batch.schema().as_ref());
    assert_eq!(array.array.n_children, 9);
    assert_eq!(array.device_type, ArrowDeviceType::CPU);
    assert_eq!(array.device_id, -1);
    assert!(array.sync_event.is_null());
    assert_eq!(array.reserved, [0; 3]);
}

#[test]
fn export_describes_the_device_buffers() {
    let drops = Arc::new(Drops::default());
    let event_drops = Arc::new(Drops::default());
    let batch = fake_cuda_batch(&drops, &event_drops);
    let array = export_device_array(&batch);
    assert_eq!(array.device_type, ArrowDeviceType::CUDA);
    assert_eq!(array.device_id, 0);
    // sync_event points to a cell holding the CUevent handle.
    // SAFETY: the export of a CUDA batch points `sync_event` at a cell holding the event
    // handle, owned by `array`, which is alive.
    let handle = unsafe { *array.sync_event.cast::<*mut c_void>() };
    assert_eq!(handle as usize, 0xe7e7_0000);
    let top = &array.array;
    assert_eq!((top.length, top.null_count, top.offset), (100, 0, 0));
    assert_eq!((top.n_buffers, top.n_children), (1, 3));
    // SAFETY: the struct array has one buffer (`n_buffers` asserted 1 above): `buffers` points
    // at one pointer owned by `array`.
    assert!(unsafe { *top.buffers }.is_null());
    // SAFETY: `children` holds `n_children` (3, asserted above) valid child pointers owned by
    // `array`, which outlives `child`; every call below passes i < 3.
    let child = |i: usize| unsafe { &**top.children.add(i) };
    let pointers = |a: &FFI_ArrowArray| -> Vec<usize> {
        (0..a.n_buffers as usize)
            // SAFETY: `buffers` holds `n_buffers` pointers, owned by `array`, and i <
            // n_buffers.
            .map(|i| unsafe { *a.buffers.add(i) } as usize)
            .collect()
    };
    let ints = child(0);
    assert_eq!((ints.length, ints.null_count, ints.n_buffers), (100, 7, 2));
    let columns = batch.columns();
    assert_eq!(
        pointers(ints),
        vec![
            columns[0].validity().unwrap().address() as usize,
            columns[0].buffers()[0].address() as usize
        ]
    );
    // Utf8View: validity, views, 2 data buffers, then the host sizes buffer.
    let views = child(1);
    assert_eq!((views.null_count, views.n_buffers), (-1, 5));
    let p = pointers(views);
    assert_eq!(p[2], columns[1].buffers()[1].address() as usize);
    // SAFETY: an exported Utf8View's last buffer is the host array of its data buffers' sizes,
    // two i64 here, owned by `array`, which is alive.
    let sizes = unsafe { std::slice::from_raw_parts(p[4] as *const i64, 2) };
    assert_eq!(sizes, [4096, 77]);
    // Booleans without nulls: a NULL validity pointer.
    let bools = child(2);
    assert_eq!(pointers(bools)[0], 0);
    // The export owns clones: the batch's buffers now have two owners.
    assert!(batch
        .columns()
        .iter()
        .flat_map(|c| c.all_buffers())
        .all(|b| b.owners() == 2));
    drop(batch);
    assert_eq!(drops.count(), 0, "the consumer still holds the buffers");
    assert_eq!(event_drops.count(), 0);
    drop(array); // the consumer's release
    assert_eq!(drops.count(), ALLOCATIONS);
    assert_eq!(event_drops.count(), 1);
}

#[test]
fn the_round_trip_through_the_c_structures_keeps_everything() {
    let drops = Arc::new(Drops::default());
    let event_drops = Arc::new(Drops::default());
    let batch = fake_cuda_batch(&drops, &event_drops);
    let (schema, array) = export_device_batch(&batch).unwrap();
    // SAFETY: `array` and `schema` are our own export's, which follows the C Device Data
    // Interface (valid pointers, buffers of the batch's sizes).
    let imported = unsafe { import_device_batch(&schema, array) }.unwrap();
    assert_eq!(imported.schema(), batch.schema());
    assert_eq!(imported.num_rows(), 100);
    assert_eq!(imported.location(), MemoryLocation::cuda(0));
    assert_eq!(buffer_table(&imported), buffer_table(&batch));
    for (a, b) in imported.columns().iter().zip(batch.columns()) {
        assert_eq!(a.data_type(), b.data_type());
        assert_eq!(a.offset(), b.offset());
        assert_eq!(a.len(), b.len());
        assert_eq!(a.validity().is_some(), b.validity().is_some());
    }
    let null_counts: Vec<_> = imported.columns().iter().map(|c| c.null_count()).collect();
    assert_eq!(null_counts, [Some(7), None, Some(0)]);
    assert_eq!(imported.ready().unwrap().handle() as usize, 0xe7e7_0000);

    // Exported again (an imported batch is a batch like any other).
    let again = export_device_array(&imported);
    drop((batch, imported));
    assert_eq!(drops.count(), 0);
    assert_eq!(event_drops.count(), 0);
    drop(again);
    assert_eq!(drops.count(), ALLOCATIONS, "every buffer freed, once");
    assert_eq!(event_drops.count(), 1);
    drop(schema);
}

#[test]
fn imported_buffers_release_the_producer_once_when_the_last_one_drops() {
    let drops = Arc::new(Drops::default());
    let event_drops = Arc::new(Drops::default());
    let batch = fake_cuda_batch(&drops, &event_drops);
    let (schema, array) = export_device_batch(&batch).unwrap();
    drop(batch);
    // SAFETY: `array` and `schema` are our own export's, which follows the C Device Data
    // Interface (valid pointers, buffers of the batch's sizes).
    let imported = unsafe { import_device_batch(&schema, array) }.unwrap();
    let kept = imported.columns()[1].buffers()[2].clone();
    drop(imported);
    assert_eq!(
        drops.count(),
        0,
        "one imported buffer keeps the whole array"
    );
    drop(kept);
    assert_eq!(drops.count(), ALLOCATIONS);
    assert_eq!(event_drops.count(), 1);
}

#[test]
fn moving_marks_the_source_released() {
    let drops = Arc::new(Drops::default());
    let event_drops = Arc::new(Drops::default());
    let batch = fake_cuda_batch(&drops, &event_drops);
    let mut source = export_device_array(&batch);
    drop(batch);
    // SAFETY: `&mut source` is a valid, aligned `ArrowDeviceArray` we own.
    let moved = unsafe { ArrowDeviceArray::from_raw(&mut source) };
    assert!(source.is_released());
    assert!(!moved.is_released());
    drop(source); // a released structure: nothing happens
    assert_eq!(drops.count(), 0);
    // A move into consumer memory that holds garbage: nothing read or dropped.
    let mut slot = std::mem::MaybeUninit::<ArrowDeviceArray>::uninit();
    // SAFETY: `slot` is aligned and valid for a write of one `ArrowDeviceArray`.
    unsafe { moved.write_to(slot.as_mut_ptr()) };
    // SAFETY: `write_to` has just initialised `slot`.
    let mut placed = unsafe { slot.assume_init() };
    assert_eq!(drops.count(), 0);
    // Releasing through the C callback, as a C consumer does.
    let release = placed.array.release.unwrap();
    // SAFETY: the export's own release callback, called once, on the unreleased array it was
    // set in.
    unsafe { release(&mut placed.array) };
    assert!(placed.is_released());
    assert!(placed.array.private_data.is_null());
    assert_eq!(drops.count(), ALLOCATIONS);
    assert_eq!(event_drops.count(), 1);
    drop(placed); // already released: release is not called again
    assert_eq!(drops.count(), ALLOCATIONS);
}

#[test]
fn a_child_moved_out_outlives_its_parent() {
    let drops = Arc::new(Drops::default());
    let event_drops = Arc::new(Drops::default());
    let batch = fake_cuda_batch(&drops, &event_drops);
    let array = export_device_array(&batch);
    drop(batch);
    // Move child 1 (the views: 4 allocations) out, then release the parent.
    // SAFETY: child 1 of the export's 3 children is a valid, aligned `FFI_ArrowArray` owned by
    // `array`; `from_raw` moves it out and leaves a released one for the parent's release.
    let child = unsafe { FFI_ArrowArray::from_raw(*array.array.children.add(1)) };
    drop(array);
    assert_eq!(drops.count(), 3, "the other columns' buffers are freed");
    assert_eq!(event_drops.count(), 0, "the moved child keeps the event");
    drop(child);
    assert_eq!(drops.count(), ALLOCATIONS);
    assert_eq!(event_drops.count(), 1);
}

#[test]
fn arrow_rs_reads_host_exports_through_its_c_data_importer() {
    let expected = sample_batch();
    let batch = DeviceBatch::from_host(&expected).unwrap();
    let (schema, mut array) = export_device_batch(&batch).unwrap();
    drop(batch);
    // The embedded ArrowArray is a plain C Data Interface array for CPU data.
    let plain = std::mem::replace(&mut array.array, FFI_ArrowArray::empty());
    assert!(array.is_released());
    // SAFETY: `plain` is the ArrowArray of our export of host data, a plain C Data Interface
    // array of `schema`'s type, with host buffers.
    let data = unsafe { from_ffi(plain, &schema) }.unwrap();
    let got = RecordBatch::from(StructArray::from(data));
    assert_eq!(got, expected);
}

#[test]
fn arrow_rs_reads_nested_host_exports_through_its_c_data_importer() {
    let expected = crate::decode::array::nested_batch();
    let batch = DeviceBatch::from_host(&expected).unwrap();
    let (schema, mut array) = export_device_batch(&batch).unwrap();
    drop(batch);
    let plain = std::mem::replace(&mut array.array, FFI_ArrowArray::empty());
    // SAFETY: `plain` is the ArrowArray of our export of host data, a plain C Data Interface
    // array of `schema`'s type, with host buffers.
    let data = unsafe { from_ffi(plain, &schema) }.unwrap();
    let got = RecordBatch::from(StructArray::from(data));
    assert_eq!(got, expected);
}

#[test]
fn nested_host_batches_round_trip_through_the_c_structures() {
    let expected = crate::decode::array::nested_batch();
    for batch in [expected.clone(), expected.slice(1, 3), expected.slice(5, 0)] {
        let device = DeviceBatch::from_host(&batch).unwrap();
        let (schema, array) = export_device_batch(&device).unwrap();
        drop(device);
        // SAFETY: `array` and `schema` are our own export's, which follows the C Device Data
        // Interface (valid pointers, buffers of the batch's sizes).
        let imported = unsafe { import_device_batch(&schema, array) }.unwrap();
        assert_eq!(imported.column(1).unwrap().children().len(), 2);
        assert_eq!(imported.to_host().unwrap(), batch);
    }
    // arrow-rs's own export of a sliced nested batch (parents with offsets).
    let sliced = StructArray::from(expected.slice(2, 3));
    let (array, schema) = arrow_rs_export(&sliced.to_data());
    // SAFETY: `array` and `schema` are arrow-rs's export of a host array: valid C Data
    // Interface structures whose buffers are host memory of the array's sizes.
    let imported = unsafe { import_device_batch(&schema, array) }.unwrap();
    assert_eq!(imported.to_host().unwrap(), expected.slice(2, 3));
}

/// Null columns as the GPU decoder builds them (a Null leaf of its slots,
/// no buffers): flat and REQUIRED, in a list (its offsets and validity),
/// in a struct; and arrow-rs's batch of the same values.
fn null_columns() -> (DeviceBatch, RecordBatch) {
    use arrow::array::{ListArray, NullArray};
    use arrow::buffer::{NullBuffer, OffsetBuffer};
    let item = Arc::new(Field::new("item", DataType::Null, true));
    let list = ListArray::new(
        item.clone(),
        OffsetBuffer::from_lengths([2, 0, 0, 1]),
        Arc::new(NullArray::new(3)),
        Some(NullBuffer::from(vec![true, false, true, true])),
    );
    let fields: arrow::datatypes::Fields = vec![Field::new("n", DataType::Null, true)].into();
    let strukt = StructArray::new(
        fields.clone(),
        vec![Arc::new(NullArray::new(4))],
        Some(NullBuffer::from(vec![true, false, false, true])),
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("required", DataType::Null, false),
        Field::new("list", DataType::List(item.clone()), true),
        Field::new("struct", DataType::Struct(fields.clone()), true),
    ]));
    let expected = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(NullArray::new(4)),
            Arc::new(list),
            Arc::new(strukt),
        ],
    )
    .unwrap();
    let offsets: Vec<u8> = [0i32, 2, 2, 2, 3]
        .iter()
        .flat_map(|o| o.to_le_bytes())
        .collect();
    let list = DeviceColumn::with_children(
        DataType::List(item),
        4,
        Some(1),
        Some(DeviceBytes::host(&[0b1101])),
        vec![DeviceBytes::host(&offsets)],
        vec![DeviceColumn::nulls(3)],
    )
    .unwrap();
    let strukt = DeviceColumn::with_children(
        DataType::Struct(fields),
        4,
        Some(2),
        Some(DeviceBytes::host(&[0b1001])),
        Vec::new(),
        vec![DeviceColumn::nulls(4)],
    )
    .unwrap();
    let columns = vec![DeviceColumn::nulls(4), list, strukt];
    let batch = DeviceBatch::try_new(schema, 4, columns, MemoryLocation::CPU, None).unwrap();
    (batch, expected)
}

#[test]
fn null_columns_cross_the_c_interface_without_buffers() {
    let (batch, expected) = null_columns();
    assert_eq!(batch.to_host().unwrap(), expected);
    assert_eq!(
        DeviceBatch::from_host(&expected)
            .unwrap()
            .to_host()
            .unwrap(),
        expected
    );
    let (schema, mut array) = export_device_batch(&batch).unwrap();
    // The C Data Interface's Null array: no buffers, every value null.
    let top = &array.array;
    let flat = top.child(0);
    assert_eq!(
        (flat.num_buffers(), flat.len(), flat.null_count()),
        (0, 4, 4)
    );
    let list = top.child(1);
    assert_eq!((list.num_buffers(), list.null_count()), (2, 1));
    let item = list.child(0);
    assert_eq!(
        (item.num_buffers(), item.len(), item.null_count()),
        (0, 3, 3)
    );
    let field = top.child(2).child(0);
    assert_eq!((field.num_buffers(), field.null_count()), (0, 4));
    // arrow-rs's importer reads it; and so does ours.
    let plain = std::mem::replace(&mut array.array, FFI_ArrowArray::empty());
    // SAFETY: `plain` is the ArrowArray of our export of host data, a plain C Data Interface
    // array of `schema`'s type, with host buffers (none for the Null columns).
    let data = unsafe { from_ffi(plain, &schema) }.unwrap();
    assert_eq!(RecordBatch::from(StructArray::from(data)), expected);
    let (schema, array) = export_device_batch(&batch).unwrap();
    // SAFETY: `schema` and `array` are our own export of `batch`, alive and not yet imported.
    let imported = unsafe { import_device_batch(&schema, array) }.unwrap();
    assert_eq!(imported.column(0).unwrap().null_count(), Some(4));
    assert_eq!(imported.to_host().unwrap(), expected);
}

#[test]
fn host_batches_round_trip_with_values() {
    let expected = sample_batch();
    for batch in [expected.clone(), expected.slice(2, 3), expected.slice(6, 0)] {
        let device = DeviceBatch::from_host(&batch).unwrap();
        let (schema, array) = export_device_batch(&device).unwrap();
        drop(device);
        // SAFETY: `array` and `schema` are our own export's, which follows the C Device Data
        // Interface (valid pointers, buffers of the batch's sizes).
        let imported = unsafe { import_device_batch(&schema, array) }.unwrap();
        assert_eq!(imported.location(), MemoryLocation::CPU);
        assert!(imported.ready().is_none());
        assert_eq!(imported.to_host().unwrap(), batch);
    }
}

#[test]
fn arrow_rs_exports_import_as_device_batches() {
    // A C array from another producer (arrow-rs), including a struct offset.
    let expected = sample_batch();
    let struct_array = StructArray::from(expected.clone());
    for (offset, len) in [(0, 6), (1, 4)] {
        let sliced = struct_array.slice(offset, len);
        let (array, schema) = arrow_rs_export(&sliced.to_data());
        // SAFETY: `array` and `schema` are arrow-rs's export of a host array: valid C Data
        // Interface structures whose buffers are host memory of the array's sizes.
        let imported = unsafe { import_device_batch(&schema, array) }.unwrap();
        assert_eq!(imported.num_rows(), len);
        assert_eq!(imported.to_host().unwrap(), expected.slice(offset, len));
    }
}

fn import_error(schema: &FFI_ArrowSchema, array: ArrowDeviceArray) -> String {
    // SAFETY: the callers pass structures from our export or arrow-rs's: valid pointers; what
    // the import must refuse is their content.
    match unsafe { import_device_batch(schema, array) } {
        Ok(_) => panic!("imported"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn imports_reject_what_is_not_a_flat_device_batch() {
    let batch = DeviceBatch::from_host(&sample_batch()).unwrap();
    let (schema, _) = export_device_batch(&batch).unwrap();
    assert!(matches!(
        // SAFETY: an empty (released) array: the import refuses it before reading any pointer.
        unsafe { import_device_batch(&schema, ArrowDeviceArray::empty()) },
        Err(DeviceArrayError::Released)
    ));

    // A schema of other fields.
    let other =
        FFI_ArrowSchema::try_from(&Schema::new(vec![Field::new("x", DataType::Int32, true)]))
            .unwrap();
    let array = export_device_array(&batch);
    assert!(import_error(&other, array).contains("9 children for a schema of 1 fields"));

    // A sync event on CPU memory.
    let mut array = export_device_array(&batch);
    let mut handle: *mut c_void = std::ptr::null_mut();
    array.sync_event = (&mut handle as *mut *mut c_void).cast();
    assert!(import_error(&schema, array).contains("a sync_event on CPU"));

    // A type device arrays do not hold (a dictionary).
    let keys = arrow::array::Int8Array::from(vec![0, 0]);
    let values: Arc<dyn Array> = Arc::new(Int32Array::from(vec![1]));
    let dict = arrow::array::DictionaryArray::new(keys, values);
    let nested = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new(
            "s",
            dict.data_type().clone(),
            true,
        )])),
        vec![Arc::new(dict)],
    )
    .unwrap();
    let (array, nested_schema) = arrow_rs_export(&StructArray::from(nested).to_data());
    let err = import_error(&nested_schema, array);
    assert!(
        err.contains("column \"s\"") && err.contains("not supported"),
        "{err}"
    );
}

#[test]
fn streams_export_batches_errors_and_the_end() {
    let drops = Arc::new(Drops::default());
    let event_drops = Arc::new(Drops::default());
    let first = fake_cuda_batch(&drops, &event_drops);
    let schema = first.schema().clone();
    let items: Vec<Result<DeviceBatch, DeviceArrayError>> = vec![
        Ok(first),
        Ok(fake_cuda_batch(&drops, &event_drops)),
        Err(DeviceArrayError::Import("row group 2 is corrupt".to_string()).in_column("views")),
        Ok(fake_cuda_batch(&drops, &event_drops)),
    ];
    let stream = export_device_stream(schema.clone(), ArrowDeviceType::CUDA, items);
    assert_eq!(stream.device_type, ArrowDeviceType::CUDA);
    // SAFETY: `stream` is our own export, a valid C device stream of CUDA batches made by
    // `fake_cuda_batch`.
    let mut reader = unsafe { DeviceStreamReader::try_new(stream) }.unwrap();
    assert_eq!(reader.schema(), schema);
    assert_eq!(reader.device_type(), ArrowDeviceType::CUDA);
    let one = reader.next().unwrap().unwrap();
    assert_eq!(one.num_rows(), 100);
    let two = reader.next().unwrap().unwrap();
    assert_eq!(buffer_table(&two).len(), ALLOCATIONS);
    match reader.next().unwrap() {
        Err(DeviceArrayError::Stream {
            callback,
            code,
            message,
        }) => {
            assert_eq!((callback, code), ("get_next", libc::EIO));
            assert_eq!(
                message,
                "column \"views\": C device array: row group 2 is corrupt"
            );
        }
        other => panic!("expected the stream's error, got {other:?}"),
    }
    assert!(reader.next().is_none(), "the reader stops after an error");
    drop((one, two));
    assert_eq!(drops.count(), 2 * ALLOCATIONS);
    // Releasing the stream drops the batch never taken.
    drop(reader);
    assert_eq!(drops.count(), 3 * ALLOCATIONS);
    assert_eq!(event_drops.count(), 3);
}

#[test]
fn streams_end_with_a_released_array_and_free_their_state() {
    let expected = sample_batch();
    let batches = vec![expected.clone(), expected.slice(1, 2)];
    let items: Vec<Result<DeviceBatch, DeviceArrayError>> =
        batches.iter().map(DeviceBatch::from_host).collect();
    let mut stream = export_device_stream(expected.schema(), ArrowDeviceType::CPU, items);
    // Driven through the raw callbacks, as a C consumer would.
    let get_next = stream.get_next.unwrap();
    let mut out = ArrowDeviceArray::empty();
    let mut got = Vec::new();
    loop {
        // SAFETY: `get_next` is the export's own callback, given its own live stream and a
        // released `out`.
        assert_eq!(unsafe { get_next(&mut stream, &mut out) }, 0);
        if out.is_released() {
            break;
        }
        // SAFETY: `&mut out` is a valid, aligned array that `get_next` has just filled.
        let array = unsafe { ArrowDeviceArray::from_raw(&mut out) };
        // SAFETY: the stream's arrays are our export's, of the batches of `expected.schema()`,
        // with host buffers.
        let imported =
            unsafe { import_device_batch_with_schema(expected.schema(), array) }.unwrap();
        got.push(imported.to_host().unwrap());
    }
    assert_eq!(got, batches);
    // After the end, the end again.
    // SAFETY: as in the loop: the export's callback on its own live stream.
    assert_eq!(unsafe { get_next(&mut stream, &mut out) }, 0);
    assert!(out.is_released());
    let release = stream.release.unwrap();
    // SAFETY: the export's own release callback, called once, on the unreleased stream.
    unsafe { release(&mut stream) };
    assert!(stream.is_released());
    assert!(stream.private_data.is_null());
}

#[test]
fn streams_reject_batches_that_do_not_belong() {
    let expected = sample_batch();
    let other = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("x", DataType::Int32, false)])),
        vec![Arc::new(Int32Array::from(vec![1]))],
    )
    .unwrap();
    let items: Vec<Result<DeviceBatch, DeviceArrayError>> = vec![DeviceBatch::from_host(&other)];
    let mut stream = export_device_stream(expected.schema(), ArrowDeviceType::CPU, items);
    let mut out = ArrowDeviceArray::empty();
    // SAFETY: the export's own `get_next` on its own live stream, with a released `out`.
    let code = unsafe { stream.get_next.unwrap()(&mut stream, &mut out) };
    assert_eq!(code, libc::EINVAL);
    // SAFETY: `get_last_error` right after the failed `get_next`, as the spec allows; it
    // returns a NUL-terminated string alive until the next call on the stream.
    let text = unsafe { CStr::from_ptr(stream.get_last_error.unwrap()(&mut stream)) };
    assert!(text.to_str().unwrap().contains("a batch with fields"));

    // A CPU batch in a CUDA stream.
    let items: Vec<Result<DeviceBatch, DeviceArrayError>> = vec![DeviceBatch::from_host(&expected)];
    let stream = export_device_stream(expected.schema(), ArrowDeviceType::CUDA, items);
    // SAFETY: `stream` is our own export, a valid C device stream.
    let mut reader = unsafe { DeviceStreamReader::try_new(stream) }.unwrap();
    let err = reader.next().unwrap().unwrap_err().to_string();
    assert!(err.contains("a batch on CPU in a stream on CUDA"), "{err}");
}

#[test]
fn a_panicking_iterator_ends_the_stream_with_an_error() {
    let expected = sample_batch();
    let items = (0..3).map(|i| -> Result<DeviceBatch, DeviceArrayError> {
        if i == 1 {
            panic!("decoder bug");
        }
        DeviceBatch::from_host(&sample_batch())
    });
    let stream = export_device_stream(expected.schema(), ArrowDeviceType::CPU, items);
    // SAFETY: `stream` is our own export, a valid C device stream.
    let mut reader = unsafe { DeviceStreamReader::try_new(stream) }.unwrap();
    assert!(reader.next().unwrap().is_ok());
    let err = reader.next().unwrap().unwrap_err().to_string();
    assert!(err.contains("panicked"), "{err}");
    assert!(reader.next().is_none());
}

#[test]
fn released_streams_are_refused() {
    assert!(matches!(
        // SAFETY: an empty (released) stream: the reader refuses it before calling any
        // callback.
        unsafe { DeviceStreamReader::try_new(ArrowDeviceArrayStream::empty()) },
        Err(DeviceArrayError::Released)
    ));
}
