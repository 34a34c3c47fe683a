//! A record batch in device memory, its copy back to the host, and uploads
//! of host batches (for tests and for consumers that want device columns of
//! data decoded elsewhere).

use std::sync::Arc;

use arrow::array::{make_array, ArrayData, ArrayDataBuilder, ArrayRef, MutableArrayData};
use arrow::buffer::{Buffer, MutableBuffer};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use super::column::{child_fields, is_flat};
use super::host_copy::{HostCopier, Target};
use super::{DeviceArrayError, DeviceBytes, DeviceColumn, MemoryLocation, ReadyEvent, Result};
use crate::cuda::{DevicePool, Event, PinnedPool, Stream};

/// A record batch whose columns live in device memory.
///
/// Cheap to clone (buffers and event are shared). The buffers may still be
/// being written when the batch is handed over: wait on [`DeviceBatch::ready`]
/// (on the host, or on a stream through the C interface's `sync_event`)
/// before reading them. A batch without a ready event is ready now.
#[derive(Clone, Debug)]
pub struct DeviceBatch {
    schema: SchemaRef,
    num_rows: usize,
    columns: Vec<DeviceColumn>,
    location: MemoryLocation,
    ready: Option<Arc<dyn ReadyEvent>>,
}

impl DeviceBatch {
    /// A batch of `num_rows` rows at `location`.
    ///
    /// Checks that the columns match the schema's fields in number and type,
    /// that each has `num_rows` values, that every buffer lives at
    /// `location`, that non-nullable fields have no nulls, and that a batch
    /// in host memory has no ready event (the C interface allows none there).
    pub fn try_new(
        schema: SchemaRef,
        num_rows: usize,
        columns: Vec<DeviceColumn>,
        location: MemoryLocation,
        ready: Option<Arc<dyn ReadyEvent>>,
    ) -> Result<DeviceBatch> {
        let fields = schema.fields();
        if fields.len() != columns.len() {
            return Err(DeviceArrayError::Batch(format!(
                "{} columns for a schema of {} fields",
                columns.len(),
                fields.len()
            )));
        }
        for (field, column) in fields.iter().zip(&columns) {
            let fail = |what: String| Err(DeviceArrayError::Batch(what).in_column(field.name()));
            if column.data_type() != field.data_type() {
                return fail(format!(
                    "type {} where the schema says {}",
                    column.data_type(),
                    field.data_type()
                ));
            }
            if column.len() != num_rows {
                return fail(format!(
                    "{} values in a batch of {num_rows} rows",
                    column.len()
                ));
            }
            // A Null column's nulls are its type's, not a bitmap's (arrow
            // counts none in a RecordBatch, as for a REQUIRED UNKNOWN leaf).
            let nulls = match column.data_type() {
                DataType::Null => None,
                _ => column.null_count(),
            };
            if !field.is_nullable() && nulls.is_some_and(|n| n > 0) {
                return fail("nulls in a non-nullable field".to_string());
            }
            if let Some(other) = column
                .all_buffers()
                .map(DeviceBytes::location)
                .find(|l| *l != location)
            {
                return fail(format!("a buffer on {other} in a batch on {location}"));
            }
        }
        if ready.is_some() && location.device_type == super::ArrowDeviceType::CPU {
            return Err(DeviceArrayError::Batch(
                "a batch in host memory cannot carry a ready event".to_string(),
            ));
        }
        Ok(DeviceBatch {
            schema,
            num_rows,
            columns,
            location,
            ready,
        })
    }

    /// The columns at `indices` (in that order) of this batch, with their
    /// fields: the same buffers and ready event, no copy.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow::array::{ArrayRef, Int32Array, RecordBatch};
    /// use gdscan::decode::array::DeviceBatch;
    ///
    /// let a: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    /// let b: ArrayRef = Arc::new(Int32Array::from(vec![3, 4]));
    /// let host = RecordBatch::try_from_iter([("a", a), ("b", b)])?;
    /// let batch = DeviceBatch::from_host(&host)?;
    /// let b_only = batch.project(&[1])?;
    /// assert_eq!(b_only.schema().field(0).name(), "b");
    /// assert_eq!(b_only.to_host()?, host.project(&[1])?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn project(&self, indices: &[usize]) -> Result<DeviceBatch> {
        let schema = self.schema.project(indices)?;
        let columns = indices.iter().map(|&i| self.columns[i].clone()).collect();
        DeviceBatch::try_new(
            Arc::new(schema),
            self.num_rows,
            columns,
            self.location,
            self.ready.clone(),
        )
    }

    /// The schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.num_rows
    }

    /// Number of columns.
    pub fn num_columns(&self) -> usize {
        self.columns.len()
    }

    /// The columns, in schema order.
    pub fn columns(&self) -> &[DeviceColumn] {
        &self.columns
    }

    /// Column `i`.
    pub fn column(&self, i: usize) -> Option<&DeviceColumn> {
        self.columns.get(i)
    }

    /// Where every buffer of the batch lives.
    pub fn location(&self) -> MemoryLocation {
        self.location
    }

    /// The CUDA device ordinal, for a batch in CUDA memory.
    pub fn device_ordinal(&self) -> Option<usize> {
        self.location.cuda_ordinal()
    }

    /// The event recorded when the buffers are written (`None`: ready now).
    pub fn ready(&self) -> Option<&Arc<dyn ReadyEvent>> {
        self.ready.as_ref()
    }

    /// Bytes held by all columns' buffers.
    pub fn byte_size(&self) -> usize {
        self.columns.iter().map(DeviceColumn::byte_size).sum()
    }

    /// Blocks until the buffers are written.
    pub fn wait(&self) -> Result<()> {
        match &self.ready {
            Some(event) => event.wait(),
            None => Ok(()),
        }
    }

    /// Copies the batch back into host memory as an arrow [`RecordBatch`].
    ///
    /// Waits on the ready event, copies every buffer (one stream, one
    /// synchronisation for CUDA memory), and builds each array with arrow's
    /// full validation (view and UTF-8 checks included); a declared null
    /// count must match the bitmap.
    pub fn to_host(&self) -> Result<RecordBatch> {
        self.wait()?;
        self.copy_back(|| HostCopier::new(self.location, Target::Fresh))
    }

    /// [`DeviceBatch::to_host`] into pinned host memory from `pool`, which
    /// the returned batch's buffers point into: one DMA per buffer and no
    /// host copy. The pinned buffer goes back to `pool` when the last array
    /// of the batch is dropped, so a caller that keeps such batches long
    /// keeps that memory pinned ([`PinnedPool::in_use_bytes`] tells how
    /// much is out). A batch in host-readable memory is copied as by
    /// `to_host`.
    pub fn to_host_pinned(&self, pool: &Arc<PinnedPool>) -> Result<RecordBatch> {
        self.wait()?;
        self.copy_back(|| HostCopier::new(self.location, Target::Pinned(pool.clone())))
    }

    /// Copies every buffer back with copiers from `copier` and builds the
    /// host arrays (fully validated): first all but the views' data
    /// buffers, then only the spans of those that the views reference
    /// (`view_spans`), the views rewritten to them.
    fn copy_back(&self, copier: impl Fn() -> Result<HostCopier>) -> Result<RecordBatch> {
        let mut first = copier()?;
        let mut staged = self
            .columns
            .iter()
            .map(|column| Staged::queue(column, &mut first))
            .collect::<Result<Vec<_>>>()?;
        let copied = first.finish()?;
        let mut second = copier()?;
        for ((field, column), staged) in self
            .schema
            .fields()
            .iter()
            .zip(&self.columns)
            .zip(&mut staged)
        {
            staged
                .queue_spans(column, &copied, &mut second)
                .map_err(|e| e.in_column(field.name()))?;
        }
        let spans = match second.is_empty() {
            true => Vec::new(),
            false => second.finish()?,
        };
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.columns.len());
        for ((field, column), staged) in self.schema.fields().iter().zip(&self.columns).zip(staged)
        {
            let data = build_host_array(column, &staged, &copied, &spans)
                .map_err(|e| e.in_column(field.name()))?;
            arrays.push(make_array(data));
        }
        let options = RecordBatchOptions::new().with_row_count(Some(self.num_rows));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays,
            &options,
        )?)
    }

    /// Uploads a host batch into buffers from `pool`, copied on `stream`.
    ///
    /// The batch's ready event is recorded on `stream` after the copies. The
    /// call also waits for the copies before it returns, because `batch`'s
    /// memory may be pinned (then the copies read it asynchronously) and the
    /// caller may drop it as soon as this returns. Flat types only.
    pub fn upload(
        batch: &RecordBatch,
        pool: &Arc<DevicePool>,
        stream: &Stream,
    ) -> Result<DeviceBatch> {
        let device = stream.device();
        if pool.device() != device {
            return Err(DeviceArrayError::Batch(format!(
                "pool on device {} and stream on device {}",
                pool.device().ordinal(),
                device.ordinal()
            )));
        }
        let placed = columns_from_host(batch, |bytes| {
            let buffer = pool.allocate(bytes.len())?;
            if !bytes.is_empty() {
                // SAFETY: `buffer` holds `bytes.len()` bytes; `bytes` is
                // borrowed from `batch`, alive until the synchronisation below.
                unsafe { stream.copy_to_device(buffer.device_ptr(), bytes.as_ptr(), bytes.len())? };
            }
            Ok(DeviceBytes::from_pooled(buffer))
        })
        .and_then(|columns| {
            let mut event = Event::new(device)?;
            event.record(stream)?;
            Ok((columns, event))
        });
        // Whatever happened, no copy may still read `batch` or write a buffer
        // that is going back to the pool.
        let synced = stream.synchronize();
        let (columns, event) = placed?;
        synced?;
        let ready: Arc<dyn ReadyEvent> = Arc::new(event);
        DeviceBatch::try_new(
            batch.schema(),
            batch.num_rows(),
            columns,
            MemoryLocation::cuda(device.ordinal()),
            Some(ready),
        )
    }

    /// A copy of a host batch in [`HostMemory`](super::HostMemory): the same
    /// batch as [`DeviceBatch::upload`] would make, on the CPU (exported as
    /// `ARROW_DEVICE_CPU`).
    pub fn from_host(batch: &RecordBatch) -> Result<DeviceBatch> {
        let columns = columns_from_host(batch, |bytes| Ok(DeviceBytes::host(bytes)))?;
        DeviceBatch::try_new(
            batch.schema(),
            batch.num_rows(),
            columns,
            MemoryLocation::CPU,
            None,
        )
    }
}

/// Where one column's copies are among the copiers' buffers: its validity,
/// its buffers (for views, the views only), its children's; for views, the
/// views as the host array holds them and the spans of data copied.
struct Staged {
    validity: Option<usize>,
    buffers: Vec<usize>,
    children: Vec<Staged>,
    views: Option<StagedViews>,
}

/// A view column's views (rewritten to the spans where they had to be)
/// and the second copier's indices of its spans of data.
struct StagedViews {
    views: Buffer,
    spans: Vec<usize>,
}

/// Whether `column` holds views (its data buffers copied by spans).
fn is_view(column: &DeviceColumn) -> bool {
    matches!(
        column.data_type(),
        DataType::Utf8View | DataType::BinaryView
    )
}

impl Staged {
    /// Queues the copies of `column` and of its children, but not the
    /// views' data buffers (`Staged::queue_spans` copies their spans).
    fn queue(column: &DeviceColumn, copier: &mut HostCopier) -> Result<Staged> {
        let buffers = match is_view(column) {
            true => &column.buffers()[..1.min(column.buffers().len())],
            false => column.buffers(),
        };
        Ok(Staged {
            validity: column.validity().map(|v| copier.queue(v)).transpose()?,
            buffers: buffers
                .iter()
                .map(|b| copier.queue(b))
                .collect::<Result<Vec<_>>>()?,
            children: column
                .children()
                .iter()
                .map(|child| Staged::queue(child, copier))
                .collect::<Result<Vec<_>>>()?,
            views: None,
        })
    }

    /// For each view column (this one or a child), with its views copied
    /// (`copied`): queues on `copier` the spans of its data buffers that
    /// its views reference, and keeps the views rewritten to those spans.
    fn queue_spans(
        &mut self,
        column: &DeviceColumn,
        copied: &[Buffer],
        copier: &mut HostCopier,
    ) -> Result<()> {
        for (child, staged) in column.children().iter().zip(&mut self.children) {
            staged.queue_spans(child, copied, copier)?;
        }
        if !is_view(column) {
            return Ok(());
        }
        let Some(&at) = self.buffers.first() else {
            return Ok(()); // no views buffer: the array's validation says so
        };
        let all = &copied[at];
        let rows = column.offset()..column.offset() + column.len();
        let Some(views) = all.get(rows.start * 16..rows.end * 16) else {
            return Ok(()); // too short: the array's validation says so
        };
        let data = column.variadic_buffers();
        let lens: Vec<usize> = data.iter().map(DeviceBytes::len).collect();
        let spans = super::view_spans::referenced(views, &lens)
            .map_err(|problem| DeviceArrayError::layout(column.data_type(), problem))?;
        let host_views = if super::view_spans::views_unchanged(&spans, lens.len()) {
            all.clone()
        } else {
            // The rows before the column's offset keep empty views; arrow
            // wants the views 16-byte aligned (MutableBuffer: 64).
            let mut rewritten = MutableBuffer::with_capacity(rows.end * 16);
            rewritten.extend_zeros(rows.start * 16);
            rewritten.extend_from_slice(views);
            super::view_spans::rewrite(&mut rewritten.as_slice_mut()[rows.start * 16..], &spans);
            rewritten.into()
        };
        // Buffers no view references come back empty (their indices kept).
        let queued = spans
            .iter()
            .map(|s| {
                let bytes = data[s.buffer].slice(s.bytes.start, s.bytes.len())?;
                copier.queue(&bytes)
            })
            .collect::<Result<Vec<_>>>()?;
        self.views = Some(StagedViews {
            views: host_views,
            spans: queued,
        });
        Ok(())
    }

    /// The host buffers of the column, from the two copies.
    fn host_buffers(&self, copied: &[Buffer], spans: &[Buffer]) -> Vec<Buffer> {
        match &self.views {
            Some(v) => std::iter::once(v.views.clone())
                .chain(v.spans.iter().map(|&i| spans[i].clone()))
                .collect(),
            None => self.buffers.iter().map(|&i| copied[i].clone()).collect(),
        }
    }
}

/// Builds and fully validates one host array (and its children) from
/// copied buffers (`copied`; `spans`: the views' data).
fn build_host_array(
    column: &DeviceColumn,
    staged: &Staged,
    copied: &[Buffer],
    spans: &[Buffer],
) -> Result<ArrayData> {
    let children = column
        .children()
        .iter()
        .zip(&staged.children)
        .map(|(child, staged)| build_host_array(child, staged, copied, spans))
        .collect::<Result<Vec<_>>>()?;
    let data = ArrayDataBuilder::new(column.data_type().clone())
        .len(column.len())
        .offset(column.offset())
        .null_bit_buffer(staged.validity.map(|i| copied[i].clone()))
        .buffers(staged.host_buffers(copied, spans))
        .child_data(children)
        .build()?;
    if let Some(declared) = column.null_count() {
        if *column.data_type() != DataType::Null && declared != data.null_count() {
            return Err(DeviceArrayError::layout(
                column.data_type(),
                format!(
                    "null count says {declared}, the validity bitmap has {}",
                    data.null_count()
                ),
            ));
        }
    }
    Ok(data)
}

/// Device columns of a host batch, each buffer placed by `place`.
fn columns_from_host(
    batch: &RecordBatch,
    mut place: impl FnMut(&[u8]) -> std::result::Result<DeviceBytes, crate::cuda::CudaError>,
) -> Result<Vec<DeviceColumn>> {
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
        let column = unsliced(array.to_data())
            .and_then(|data| column_from_host(&data, &mut place))
            .map_err(|e| e.in_column(field.name()))?;
        columns.push(column);
    }
    Ok(columns)
}

/// The device column of one unsliced host array (and of its children).
fn column_from_host(
    data: &ArrayData,
    place: &mut impl FnMut(&[u8]) -> std::result::Result<DeviceBytes, crate::cuda::CudaError>,
) -> Result<DeviceColumn> {
    if !is_flat(data.data_type()) && child_fields(data.data_type()).is_none() {
        return Err(DeviceArrayError::Unsupported {
            data_type: data.data_type().clone(),
        });
    }
    let len = data.len();
    let validity = match data.nulls() {
        Some(nulls) => {
            let bytes = nulls.buffer().as_slice();
            Some(place(&bytes[..len.div_ceil(8).min(bytes.len())])?)
        }
        None => None,
    };
    let buffers = data
        .buffers()
        .iter()
        .map(|b| place(b.as_slice()))
        .collect::<std::result::Result<Vec<_>, crate::cuda::CudaError>>()?;
    let null_count = match data.data_type() {
        DataType::Null => None,
        _ => Some(data.null_count()),
    };
    let ty = data.data_type().clone();
    if is_flat(&ty) {
        return DeviceColumn::new(ty, len, null_count, validity, buffers);
    }
    let children = data
        .child_data()
        .iter()
        .map(|child| unsliced(child.clone()).and_then(|child| column_from_host(&child, place)))
        .collect::<Result<Vec<_>>>()?;
    DeviceColumn::with_children(ty, len, null_count, validity, buffers, children)
}

/// `data` with offset 0 in its values and its validity bitmap (a copy when
/// the array is a slice), so that buffers can be uploaded as they are.
fn unsliced(data: ArrayData) -> Result<ArrayData> {
    let sliced = data.offset() != 0 || data.nulls().is_some_and(|n| n.offset() != 0);
    if !sliced {
        return Ok(data);
    }
    let mut copy = MutableArrayData::new(vec![&data], false, data.len());
    copy.try_extend(0, 0, data.len())?;
    Ok(copy.freeze())
}

/// Copies `len` bytes at `address` in `location` to the host (the importer
/// reads the last offset of Utf8/Binary columns this way).
pub(crate) fn read_bytes(location: MemoryLocation, address: u64, len: usize) -> Result<Vec<u8>> {
    struct Raw {
        address: u64,
        len: usize,
        location: MemoryLocation,
    }
    impl std::fmt::Debug for Raw {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{:#x}+{} on {}", self.address, self.len, self.location)
        }
    }
    // SAFETY: the caller vouches for the range (it comes from a C array the
    // producer keeps alive until release, which has not happened yet).
    unsafe impl super::DeviceMemory for Raw {
        fn address(&self) -> u64 {
            self.address
        }
        fn len(&self) -> usize {
            self.len
        }
        fn location(&self) -> MemoryLocation {
            self.location
        }
    }
    let bytes = DeviceBytes::new(Arc::new(Raw {
        address,
        len,
        location,
    }));
    let mut copier = HostCopier::new(location, Target::Fresh)?;
    copier.queue(&bytes)?;
    Ok(copier
        .finish()?
        .pop()
        .map(|b| b.as_slice().to_vec())
        .unwrap_or_default())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use arrow::array::{
        Array, BinaryViewArray, BooleanArray, Date32Array, Decimal128Array, Int32Array, NullArray,
        StringArray, StringViewBuilder, UInt64Array,
    };
    use arrow::datatypes::{Field, Schema};

    /// Int32 with nulls, Decimal128, Utf8View (inline and long strings over
    /// several data buffers, nulls), Boolean with nulls, Date32, plus Utf8,
    /// BinaryView without data buffers, UInt64 and Null.
    pub(crate) fn sample_batch() -> RecordBatch {
        let ints = Int32Array::from(vec![Some(1), None, Some(-3), Some(i32::MAX), None, Some(6)]);
        let decimals = Decimal128Array::from(vec![
            Some(12345),
            Some(-1),
            None,
            Some(i128::from(i64::MAX) * 1000),
            Some(0),
            Some(7),
        ])
        .with_precision_and_scale(38, 3)
        .unwrap();
        let mut views = StringViewBuilder::new().with_fixed_block_size(64);
        for s in [
            Some("short"),
            Some("a string longer than twelve bytes"),
            None,
            Some("another long string, to fill a second block"),
            Some(""),
            Some("exactly12byt"),
        ] {
            views.append_option(s);
        }
        let views = views.finish();
        assert!(views.data_buffers().len() >= 2, "several variadic buffers");
        let bools = BooleanArray::from(vec![
            Some(true),
            None,
            Some(false),
            Some(true),
            Some(true),
            None,
        ]);
        let dates = Date32Array::from(vec![0, 1, -1, 19_000, 20_000, 365]);
        let strings =
            StringArray::from(vec![Some("x"), None, Some("yz"), Some(""), Some("ü"), None]);
        let binary_views = BinaryViewArray::from(vec![b"a".as_ref(), b"bb", b"", b"c", b"d", b"e"]);
        let unsigned = UInt64Array::from(vec![0, 1, 2, u64::MAX, 4, 5]);
        let schema = Schema::new(vec![
            Field::new("ints", DataType::Int32, true),
            Field::new("decimals", decimals.data_type().clone(), true),
            Field::new("views", DataType::Utf8View, true),
            Field::new("bools", DataType::Boolean, true),
            Field::new("dates", DataType::Date32, false),
            Field::new("strings", DataType::Utf8, true),
            Field::new("binary_views", DataType::BinaryView, false),
            Field::new("unsigned", DataType::UInt64, false),
            Field::new("nothing", DataType::Null, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(ints),
                Arc::new(decimals),
                Arc::new(views),
                Arc::new(bools),
                Arc::new(dates),
                Arc::new(strings),
                Arc::new(binary_views),
                Arc::new(unsigned),
                Arc::new(NullArray::new(6)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn host_batches_round_trip_through_to_host() {
        let batch = sample_batch();
        let device = DeviceBatch::from_host(&batch).unwrap();
        assert_eq!(device.location(), MemoryLocation::CPU);
        assert_eq!(device.num_rows(), 6);
        assert_eq!(device.device_ordinal(), None);
        let ints = device.column(0).unwrap();
        assert_eq!(ints.null_count(), Some(2));
        assert!(ints.validity().is_some());
        assert_eq!(device.column(2).unwrap().variadic_buffers().len(), 2);
        assert_eq!(device.column(8).unwrap().null_count(), Some(6));
        assert!(device.byte_size() > 0);
        assert_eq!(device.to_host().unwrap(), batch);
    }

    /// Nested columns: List<Int32> (null and empty lists, null items),
    /// Struct<Int64, Utf8View>, Map<Utf8, Int32>, List<List<Utf8View>>,
    /// FixedSizeList<Int16, 2> and LargeList<Boolean>.
    pub(crate) fn nested_batch() -> RecordBatch {
        use arrow::array::{
            BooleanBuilder, FixedSizeListBuilder, Int16Builder, Int32Builder, Int64Array,
            LargeListBuilder, ListBuilder, MapBuilder, StringBuilder, StructArray,
        };
        let mut lists = ListBuilder::new(Int32Builder::new());
        for row in [
            Some(vec![Some(1), None, Some(3)]),
            None,
            Some(vec![]),
            Some(vec![Some(-4)]),
            Some(vec![None, None]),
        ] {
            lists.append_option(row);
        }
        let lists = lists.finish();
        let structs = StructArray::try_new(
            vec![
                Field::new("a", DataType::Int64, true),
                Field::new("b", DataType::Utf8View, true),
            ]
            .into(),
            vec![
                Arc::new(Int64Array::from(vec![
                    Some(1),
                    None,
                    Some(3),
                    Some(4),
                    Some(5),
                ])),
                Arc::new(arrow::array::StringViewArray::from(vec![
                    Some("x"),
                    Some("a value longer than twelve bytes"),
                    None,
                    Some(""),
                    Some("z"),
                ])),
            ],
            Some(vec![true, true, false, true, true].into()),
        )
        .unwrap();
        let mut maps = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
        for row in [
            vec![("k", Some(1)), ("l", None)],
            vec![],
            vec![("m", Some(3))],
        ] {
            for (k, v) in row {
                maps.keys().append_value(k);
                maps.values().append_option(v);
            }
            maps.append(true).unwrap();
        }
        maps.append(false).unwrap();
        maps.keys().append_value("n");
        maps.values().append_value(5);
        maps.append(true).unwrap();
        let maps = maps.finish();
        let mut deep = ListBuilder::new(ListBuilder::new(arrow::array::StringViewBuilder::new()));
        for row in [
            vec![vec![Some("a"), None], vec![]],
            vec![],
            vec![vec![Some("a string of more than twelve bytes")]],
            vec![vec![Some("b")], vec![Some("c"), Some("d")]],
            vec![],
        ] {
            for inner in row {
                for v in inner {
                    deep.values().values().append_option(v);
                }
                deep.values().append(true);
            }
            deep.append(true);
        }
        let deep = deep.finish();
        let mut fixed = FixedSizeListBuilder::new(Int16Builder::new(), 2);
        for row in [Some([1, 2]), None, Some([3, 4]), Some([5, 6]), Some([7, 8])] {
            match row {
                Some(v) => {
                    fixed.values().append_slice(&v);
                    fixed.append(true);
                }
                None => {
                    fixed.values().append_nulls(2);
                    fixed.append(false);
                }
            }
        }
        let fixed = fixed.finish();
        let mut large = LargeListBuilder::new(BooleanBuilder::new());
        for row in [
            vec![Some(true)],
            vec![],
            vec![None, Some(false)],
            vec![],
            vec![Some(true)],
        ] {
            for v in row {
                large.values().append_option(v);
            }
            large.append(true);
        }
        let large = large.finish();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(lists),
            Arc::new(structs),
            Arc::new(maps),
            Arc::new(deep),
            Arc::new(fixed),
            Arc::new(large),
        ];
        let names = ["lists", "structs", "maps", "deep", "fixed", "large"];
        RecordBatch::try_from_iter(names.into_iter().zip(columns)).unwrap()
    }

    #[test]
    fn nested_host_batches_round_trip_through_to_host() {
        let batch = nested_batch();
        for batch in [batch.clone(), batch.slice(1, 3), batch.slice(5, 0)] {
            let device = DeviceBatch::from_host(&batch).unwrap();
            let lists = device.column(0).unwrap();
            assert_eq!(lists.children().len(), 1);
            assert_eq!(device.column(1).unwrap().children().len(), 2);
            assert_eq!(device.to_host().unwrap(), batch);
        }
    }

    #[test]
    fn to_host_refuses_list_offsets_past_the_child() {
        let item = Arc::new(Field::new("item", DataType::Int32, true));
        let values = DeviceColumn::new(
            DataType::Int32,
            2,
            Some(0),
            None,
            vec![DeviceBytes::host(&[0u8; 8])],
        )
        .unwrap();
        let offsets: Vec<u8> = [0i32, 1, 5].iter().flat_map(|o| o.to_le_bytes()).collect();
        let list = DeviceColumn::with_children(
            DataType::List(item.clone()),
            2,
            Some(0),
            None,
            vec![DeviceBytes::host(&offsets)],
            vec![values],
        )
        .unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new(
            "l",
            DataType::List(item),
            false,
        )]));
        let batch = DeviceBatch::try_new(schema, 2, vec![list], MemoryLocation::CPU, None).unwrap();
        let err = batch.to_host().unwrap_err().to_string();
        assert!(
            err.contains("column \"l\"") && err.contains("offset"),
            "{err}"
        );
    }

    #[test]
    fn sliced_batches_are_uploaded_unsliced() {
        let batch = sample_batch().slice(1, 4);
        let device = DeviceBatch::from_host(&batch).unwrap();
        assert!(device.columns().iter().all(|c| c.offset() == 0));
        assert_eq!(device.to_host().unwrap(), batch);
        let empty = sample_batch().slice(6, 0);
        assert_eq!(
            DeviceBatch::from_host(&empty).unwrap().to_host().unwrap(),
            empty
        );
    }

    #[test]
    fn columns_with_an_offset_copy_back_with_it() {
        let ints = Int32Array::from(vec![Some(1), None, Some(3), Some(4), None]);
        let data = ints.to_data();
        let values = DeviceBytes::host(data.buffers()[0].as_slice());
        let validity = DeviceBytes::host(data.nulls().unwrap().buffer().as_slice());
        let column =
            DeviceColumn::with_offset(DataType::Int32, 1, 3, Some(1), Some(validity), vec![values])
                .unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new("i", DataType::Int32, true)]));
        let batch =
            DeviceBatch::try_new(schema.clone(), 3, vec![column], MemoryLocation::CPU, None)
                .unwrap();
        let expected = RecordBatch::try_new(schema, vec![Arc::new(ints.slice(1, 3))]).unwrap();
        assert_eq!(batch.to_host().unwrap(), expected);
    }

    /// A 16-byte view of `text` at `offset` of data buffer `buffer`.
    fn view_of(text: &[u8], buffer: u32, offset: u32) -> [u8; 16] {
        let mut v = [0u8; 16];
        v[0..4].copy_from_slice(&(text.len() as u32).to_le_bytes());
        if text.len() <= 12 {
            v[4..4 + text.len()].copy_from_slice(text);
        } else {
            v[4..8].copy_from_slice(&text[..4]);
            v[8..12].copy_from_slice(&buffer.to_le_bytes());
            v[12..16].copy_from_slice(&offset.to_le_bytes());
        }
        v
    }

    #[test]
    fn view_columns_copy_back_only_the_bytes_their_views_reference() {
        // Two view columns over the same two 32 MiB data buffers (as the
        // decoder's columns share a row group's buffers), each row's long
        // string far from the others; one column with an offset and nulls.
        let size = 32 << 20;
        let mut shared = [vec![b'.'; size], vec![b','; size]];
        let texts: Vec<Vec<u8>> = (0..6)
            .map(|i| format!("a long string number {i} of the column").into_bytes())
            .collect();
        let mut views_a = Vec::new();
        let mut views_b = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            let (buffer, at) = (i % 2, 4_000_000 * i + 17);
            shared[buffer][at..at + t.len()].copy_from_slice(t);
            views_a.push(view_of(t, buffer as u32, at as u32));
            // Column b: the same strings reversed in order, plus inline ones.
            let j = texts.len() - 1 - i;
            let (b_buffer, b_at) = (j % 2, 4_000_000 * j + 17);
            views_b.push(match i {
                2 => view_of(b"tiny", 0, 0),
                _ => view_of(&texts[j], b_buffer as u32, b_at as u32),
            });
        }
        let data = [DeviceBytes::host(&shared[0]), DeviceBytes::host(&shared[1])];
        let column = |views: &[[u8; 16]], offset: usize, len: usize, nulls: Option<DeviceBytes>| {
            let mut buffers = vec![DeviceBytes::host(&views.concat())];
            buffers.extend(data.iter().cloned());
            let null_count = nulls.as_ref().map(|_| 1);
            DeviceColumn::with_offset(DataType::Utf8View, offset, len, null_count, nulls, buffers)
                .unwrap()
        };
        // Column b's rows 1..6, row 3 of them (index 4) null.
        let validity = DeviceBytes::host(&[0b1110_1111]);
        let a = column(&views_a, 0, 5, None);
        let b = column(&views_b, 1, 5, Some(validity));
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Utf8View, false),
            Field::new("b", DataType::Utf8View, true),
        ]));
        let batch = DeviceBatch::try_new(schema, 5, vec![a, b], MemoryLocation::CPU, None).unwrap();
        let host = batch.to_host().unwrap();

        let text = |t: &[u8]| String::from_utf8(t.to_vec()).unwrap();
        let expected_a: Vec<Option<String>> = texts[..5].iter().map(|t| Some(text(t))).collect();
        let mut expected_b: Vec<Option<String>> = (1..6)
            .map(|i| match i {
                2 => Some("tiny".to_string()),
                _ => Some(text(&texts[texts.len() - 1 - i])),
            })
            .collect();
        expected_b[3] = None;
        for (name, expected) in [("a", expected_a), ("b", expected_b)] {
            let got = host.column_by_name(name).unwrap();
            let got = got
                .as_any()
                .downcast_ref::<arrow::array::StringViewArray>()
                .unwrap();
            let got: Vec<Option<String>> = got.iter().map(|v| v.map(str::to_string)).collect();
            assert_eq!(got, expected, "column {name}");
            // Only the referenced strings came back, not the 64 MiB.
            let data = host.column_by_name(name).unwrap().to_data();
            let copied: usize = data.buffers()[1..].iter().map(|b| b.len()).sum();
            assert!(
                copied < 64 << 10,
                "column {name}: {copied} data bytes copied"
            );
        }
    }

    #[test]
    fn batches_without_columns_keep_their_row_count() {
        let batch = RecordBatch::try_new_with_options(
            Arc::new(Schema::empty()),
            vec![],
            &RecordBatchOptions::new().with_row_count(Some(9)),
        )
        .unwrap();
        let device = DeviceBatch::from_host(&batch).unwrap();
        assert_eq!(device.to_host().unwrap().num_rows(), 9);
    }

    fn int_column(values: &[i32], nulls: Option<usize>) -> DeviceColumn {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let validity = nulls.map(|_| DeviceBytes::host(&[0b1111_1110]));
        DeviceColumn::new(
            DataType::Int32,
            values.len(),
            nulls,
            validity,
            vec![DeviceBytes::host(&bytes)],
        )
        .unwrap()
    }

    fn batch_error(result: Result<DeviceBatch>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn batches_check_their_columns() {
        let schema = Arc::new(Schema::new(vec![Field::new("i", DataType::Int32, false)]));
        let cpu = MemoryLocation::CPU;
        let one = || vec![int_column(&[1, 2], None)];
        assert!(
            batch_error(DeviceBatch::try_new(schema.clone(), 2, vec![], cpu, None))
                .contains("0 columns for a schema of 1 fields")
        );
        assert!(
            batch_error(DeviceBatch::try_new(schema.clone(), 3, one(), cpu, None))
                .contains("2 values in a batch of 3 rows")
        );
        assert!(batch_error(DeviceBatch::try_new(
            schema.clone(),
            2,
            vec![int_column(&[1, 2], Some(1))],
            cpu,
            None
        ))
        .contains("non-nullable"));
        assert!(batch_error(DeviceBatch::try_new(
            schema.clone(),
            2,
            one(),
            MemoryLocation::cuda(0),
            None
        ))
        .contains("a buffer on CPU in a batch on CUDA device 0"));
        let other = Arc::new(Schema::new(vec![Field::new("i", DataType::Int64, false)]));
        let err = DeviceBatch::try_new(other, 2, one(), cpu, None).unwrap_err();
        assert!(matches!(&err, DeviceArrayError::InColumn { column, .. } if column == "i"));
        assert!(err
            .to_string()
            .contains("type Int32 where the schema says Int64"));
        let event: Arc<dyn ReadyEvent> =
            Arc::new(crate::decode::array::test_fakes::FakeEvent::new());
        assert!(
            batch_error(DeviceBatch::try_new(schema, 2, one(), cpu, Some(event)))
                .contains("cannot carry a ready event")
        );
    }

    #[test]
    fn to_host_validates_what_it_copies() {
        let schema = Arc::new(Schema::new(vec![Field::new("i", DataType::Int32, true)]));
        // The column says no value is null; its bitmap (0b1111_1110) says the
        // first one is.
        let column = int_column(&[1, 2], Some(0));
        let batch =
            DeviceBatch::try_new(schema.clone(), 2, vec![column], MemoryLocation::CPU, None)
                .unwrap();
        let err = batch.to_host().unwrap_err().to_string();
        assert!(
            err.contains("null count says 0, the validity bitmap has 1"),
            "{err}"
        );

        // A view whose buffer index points past the variadic buffers.
        let mut view = [0u8; 16];
        view[..4].copy_from_slice(&20u32.to_le_bytes());
        view[8..12].copy_from_slice(&3u32.to_le_bytes());
        let views = DeviceColumn::new(
            DataType::Utf8View,
            1,
            Some(0),
            None,
            vec![DeviceBytes::host(&view), DeviceBytes::host(&[b'x'; 32])],
        )
        .unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Utf8View, true)]));
        let batch =
            DeviceBatch::try_new(schema, 1, vec![views], MemoryLocation::CPU, None).unwrap();
        let err = batch.to_host().unwrap_err();
        assert!(matches!(&err, DeviceArrayError::InColumn { column, .. } if column == "v"));
        assert!(
            err.to_string().contains("view 0 names data buffer 3 of 1"),
            "{err}"
        );
    }

    #[test]
    fn read_bytes_reads_host_memory() {
        let bytes = DeviceBytes::host(&[1, 2, 3, 4]);
        let read = read_bytes(MemoryLocation::CPU, bytes.address() + 1, 2).unwrap();
        assert_eq!(read, vec![2, 3]);
        assert!(matches!(
            read_bytes(
                MemoryLocation {
                    device_type: crate::decode::array::ArrowDeviceType(7),
                    device_id: 0
                },
                0,
                1
            ),
            Err(DeviceArrayError::Unreachable(_))
        ));
    }
}
