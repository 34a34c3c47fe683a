//! One row group through the GPU: queued (upload, decompression, kernels,
//! status copy-back, one event), then finished (the event waited for, every
//! page's status checked, the device batch built).
//!
//! Nothing here synchronises the device: the only wait is
//! [`InFlight::finish`]'s on the row group's own event, after the next row
//! group has been queued behind it.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::ParquetMetaData;

use super::context::Gpu;
use super::error::DecodeError;
use super::report::RowGroupTimes;
use crate::cuda::{Event, PooledDeviceBuffer, PooledPinnedBuffer};
use crate::decode::array::{DeviceBatch, DeviceBytes, DeviceColumn, MemoryLocation, ReadyEvent};
use crate::decode::kernels::{
    launch, parse_status, Conversion as KConversion, DictTask, Encoding as KEncoding, Kind,
    PageTask, RowGroupLaunch, FLAG_ROW_WINDOW, FLAG_V1_LEVELS,
};
use crate::decode::page::{
    plan_fetched, BufferKind, ColumnDecode, Conversion, DecodePlan, EncodingClass, PageCodec,
    PageVersion, Region,
};
use crate::nvcomp::{BatchArgs, Codec};
use crate::parquet::fetch::FetchedRowGroup;
use crate::parquet::ScanPlan;

/// Alignment of every section of the row group's device allocations.
const ALIGN: usize = 256;

fn align(n: usize) -> usize {
    n.next_multiple_of(ALIGN)
}

/// A row group whose GPU work is queued.
pub(crate) struct InFlight {
    event: Event,
    file: String,
    plan: DecodePlan,
    schema: SchemaRef,
    n_tasks: u32,
    n_dicts: u32,
    /// For each page task: (column index in the plan, page index in the chunk).
    task_pages: Vec<(usize, usize)>,
    /// For each dictionary task: its column.
    dict_columns: Vec<usize>,
    /// For each decompression job: (column, page, expected bytes).
    jobs: Vec<(usize, usize, usize)>,
    down: PooledPinnedBuffer,
    status_len: usize,
    columns: Vec<ColumnOut>,
    column_rows: Vec<u64>,
    /// Kept alive until the event: inputs and work areas of the kernels.
    _keep: Vec<PooledDeviceBuffer>,
    _up: PooledPinnedBuffer,
    /// The events that order this row group's work across streams.
    _ordering: Vec<Event>,
    /// The row group's bytes, its scratch and its output, held until the
    /// event even when no column keeps them (a buffer back in the pool while
    /// this row group's copies and kernels still run would be handed to the
    /// next row group, on another stream).
    _inputs: Vec<DeviceBytes>,
    _fetched: Box<dyn Send>,
    pub(crate) times: RowGroupTimes,
    pub(crate) rows: usize,
    /// Bytes of the decoded columns' own buffers (values and validity).
    pub(crate) output_bytes: usize,
}

/// Where one column's output lies.
struct ColumnOut {
    values: DeviceBytes,
    validity: Option<DeviceBytes>,
    /// Views' data buffers (row-group bytes, decompressed scratch).
    variadic: Vec<DeviceBytes>,
}

/// The Arrow schema of a decode plan's columns (field names are the leaves'
/// names, as arrow-rs names flat columns).
pub(crate) fn schema_of(metadata: &ParquetMetaData, plan: &DecodePlan) -> SchemaRef {
    let descr = metadata.file_metadata().schema_descr();
    let fields: Vec<Field> = plan
        .columns
        .iter()
        .map(|c| {
            Field::new(
                descr.column(c.leaf).name(),
                c.ty.data_type.clone(),
                c.ty.nullable,
            )
        })
        .collect();
    Arc::new(Schema::new(fields))
}

fn kind_of(c: &ColumnDecode) -> Kind {
    match c.ty.physical {
        PhysicalType::BOOLEAN => Kind::Boolean,
        PhysicalType::BYTE_ARRAY => Kind::ByteArray,
        _ => Kind::Fixed,
    }
}

fn conversion_of(c: Conversion) -> KConversion {
    match c {
        Conversion::Int32ToInt8 | Conversion::Int32ToUInt8 => KConversion::I32To8,
        Conversion::Int32ToInt16 | Conversion::Int32ToUInt16 => KConversion::I32To16,
        Conversion::Int32ToDecimal128 => KConversion::I32ToDecimal128,
        Conversion::Int64ToDecimal128 => KConversion::I64ToDecimal128,
        Conversion::FlbaToDecimal128 => KConversion::BeToDecimal128,
        _ => KConversion::Copy,
    }
}

fn encoding_of(class: EncodingClass) -> KEncoding {
    match class {
        EncodingClass::Plain => KEncoding::Plain,
        EncodingClass::Dictionary => KEncoding::Dictionary,
        EncodingClass::Rle => KEncoding::Rle,
    }
}

fn codec_of(c: PageCodec) -> Codec {
    match c {
        PageCodec::Snappy => Codec::Snappy,
        PageCodec::Zstd => Codec::Zstd,
        PageCodec::Lz4Raw => Codec::Lz4,
        PageCodec::Gzip => Codec::Gzip,
    }
}

/// Output bytes of one column: (values, validity).
fn output_sizes(c: &ColumnDecode, rows: u64) -> (usize, usize) {
    let values = match kind_of(c) {
        Kind::Boolean => launch::bitmap_bytes(rows),
        Kind::ByteArray => rows * launch::VIEW_BYTES,
        _ => rows * u64::from(c.ty.out_width),
    };
    let validity = if c.ty.nullable {
        launch::bitmap_bytes(rows)
    } else {
        0
    };
    (values as usize, validity as usize)
}

/// A little builder of the bytes uploaded before the kernels run.
#[derive(Default)]
struct Upload {
    bytes: Vec<u8>,
}

impl Upload {
    fn section(&mut self, data: &[u8]) -> usize {
        let at = align(self.bytes.len());
        self.bytes.resize(at, 0);
        self.bytes.extend_from_slice(data);
        at
    }
    fn words(&mut self, words: &[u64]) -> usize {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.section(&bytes)
    }
}

/// Queues row group `fetched` of `file` on the GPU.
pub(crate) fn launch<B>(
    gpu: &Gpu,
    file: &str,
    metadata: &ParquetMetaData,
    scan: &ScanPlan,
    fetched: FetchedRowGroup<B>,
    stream: &crate::cuda::Stream,
) -> Result<InFlight, DecodeError>
where
    B: std::ops::Deref<Target = [u8]> + Send + 'static,
{
    let started = std::time::Instant::now();
    let host: &[u8] = &fetched.buffer;
    let plan =
        plan_fetched(metadata, scan, fetched.index, host, &fetched.chunks).map_err(|source| {
            DecodeError::Plan {
                file: file.to_string(),
                source,
            }
        })?;
    let schema = schema_of(metadata, &plan);
    let selection = scan
        .row_groups
        .iter()
        .find(|r| r.index == fetched.index)
        .and_then(|r| r.rows.clone());
    let (specs, column_rows) = task_specs(&plan, selection.as_deref());
    let pool = &gpu.pool;

    // The row group's bytes, as stored.
    let rg = pool.allocate(host.len().max(1))?;
    // SAFETY: the pinned host buffer is kept (in `_fetched`) and the device
    // buffer (in `_keep` or a column) until the event recorded below.
    unsafe { stream.copy_to_device(rg.device_ptr(), host.as_ptr(), host.len())? };
    let scratch = pool.allocate(plan.scratch_bytes.max(1))?;
    let (rg_ptr, scratch_ptr) = (rg.device_ptr(), scratch.device_ptr());
    let address = |r: &Region| -> u64 {
        match r.buffer {
            BufferKind::RowGroup => rg_ptr + r.offset as u64,
            BufferKind::Scratch => scratch_ptr + r.offset as u64,
        }
    };
    let view_index = |r: &Region| -> (u32, u64) {
        match r.buffer {
            BufferKind::RowGroup => (0, rg_ptr),
            BufferKind::Scratch => (1, scratch_ptr),
        }
    };

    // Output: one allocation for every column's values and validity.
    let mut out_layout = Vec::with_capacity(plan.columns.len());
    let mut out_len = 0usize;
    for (c, &rows) in plan.columns.iter().zip(&column_rows) {
        let (values, validity) = output_sizes(c, rows);
        let v_at = align(out_len);
        let n_at = align(v_at + values);
        out_len = n_at + validity;
        out_layout.push((v_at, values, n_at, validity));
    }
    let output = DeviceBytes::from_pooled(pool.allocate(out_len.max(1))?);
    // SAFETY: the allocation is ours, alive in `output`.
    unsafe { stream.memset_async(output.address(), 0, out_len.max(1))? };

    // Kernel work areas: page scratch, then byte-array dictionary views.
    let mut needs = Vec::new();
    let mut task_pages = Vec::new();
    for spec in &specs {
        let c = &plan.columns[spec.column];
        let p = &c.pages[spec.page];
        needs.push(launch::scratch_bytes(
            kind_of(c),
            encoding_of(p.class),
            p.num_values,
        ));
        task_pages.push((spec.column, p.page));
    }
    let mut dict_columns = Vec::new();
    for (ci, c) in plan.columns.iter().enumerate() {
        if let (Kind::ByteArray, Some(d)) = (kind_of(c), &c.dictionary) {
            needs.push(launch::dict_view_bytes(d.num_values));
            dict_columns.push(ci);
        }
    }
    let (work_offsets, work_len) = launch::scratch_layout(needs);
    let work = pool.allocate((work_len as usize).max(1))?;
    let work_ptr = work.device_ptr();

    // Dictionary tasks.
    let mut dicts = Vec::with_capacity(dict_columns.len());
    let mut dict_views_at = vec![None; plan.columns.len()];
    for (k, &ci) in dict_columns.iter().enumerate() {
        let d = plan.columns[ci]
            .dictionary
            .as_ref()
            .expect("listed with a dictionary");
        let views = work_ptr + work_offsets[task_pages.len() + k];
        let (index, base) = view_index(&d.data);
        dicts.push(DictTask {
            data: address(&d.data),
            out_views: views,
            view_buffer_base: base,
            data_len: d.data.len as u32,
            count: d.num_values,
            view_buffer_index: index,
            ..DictTask::default()
        });
        dict_views_at[ci] = Some(views);
    }

    // Page tasks.
    let mut tasks = Vec::with_capacity(task_pages.len());
    let mut has_plain_byte_arrays = false;
    for (t, spec) in specs.iter().enumerate() {
        let ci = spec.column;
        let c = &plan.columns[ci];
        let kind = kind_of(c);
        let (v_at, _, n_at, validity_len) = out_layout[ci];
        let max_def = c.ty.nullable as u32;
        {
            let p = &c.pages[spec.page];
            let encoding = encoding_of(p.class);
            has_plain_byte_arrays |= kind == Kind::ByteArray && encoding == KEncoding::Plain;
            let (view_buffer_index, view_buffer_base) = view_index(&p.data);
            let (dict, dict_count, dict_len) = match (&c.dictionary, kind) {
                (Some(d), Kind::ByteArray) => (
                    dict_views_at[ci].unwrap_or(0),
                    d.num_values,
                    launch::dict_view_bytes(d.num_values) as u32,
                ),
                (Some(d), _) => (address(&d.data), d.num_values, d.data.len as u32),
                (None, _) => (0, 0, 0),
            };
            let scratch_len = launch::scratch_bytes(kind, encoding, p.num_values) as u32;
            tasks.push(PageTask {
                data: address(&p.data),
                def_levels: p.def_levels.as_ref().map(&address).unwrap_or(0),
                dict,
                out_values: output.address() + v_at as u64,
                out_validity: if validity_len > 0 {
                    output.address() + n_at as u64
                } else {
                    0
                },
                scratch: if scratch_len > 0 {
                    work_ptr + work_offsets[t]
                } else {
                    0
                },
                view_buffer_base,
                data_len: p.data.len as u32,
                def_len: p.def_levels.as_ref().map(|r| r.len as u32).unwrap_or(0),
                num_values: p.num_values,
                dict_count,
                dict_len,
                out_row: spec.out_row as u32,
                out_rows: column_rows[ci] as u32,
                kind: kind as u32,
                encoding: encoding as u32,
                flags: if p.version == PageVersion::V1 && max_def > 0 {
                    FLAG_V1_LEVELS
                } else {
                    0
                } | if spec.window.is_some() {
                    FLAG_ROW_WINDOW
                } else {
                    0
                },
                row_skip: spec.window.map(|w| w.0).unwrap_or(0),
                row_take: spec.window.map(|w| w.1).unwrap_or(0),
                max_def,
                conversion: conversion_of(c.ty.conversion) as u32,
                type_length: c.ty.type_length,
                out_width: c.ty.out_width,
                view_buffer_index,
                scratch_len,
                ..PageTask::default()
            });
        }
    }

    // nvCOMP reads out of bounds on corrupt Snappy / LZ4 (undefined
    // behaviour by its documentation, a poisoned context in practice):
    // every such page's structure is checked on the host first.
    if gpu.check_compressed {
        check_compressed(file, &plan, host)?;
    }

    // Decompression batches, one per codec.
    let mut up = Upload::default();
    let tasks_at = up.section(crate::decode::kernels::task::page_tasks_as_bytes(&tasks));
    let dicts_at = up.section(crate::decode::kernels::task::dict_tasks_as_bytes(&dicts));
    let n_jobs = plan.jobs.len();
    let status_len = launch::status_bytes(tasks.len() as u32, dicts.len() as u32) as usize;
    // Download area: kernel status, then nvCOMP's actual sizes and statuses.
    let actual_at = align(status_len);
    let nv_status_at = align(actual_at + 8 * n_jobs);
    let down_len = nv_status_at + 4 * n_jobs;
    let mut batches = Vec::new();
    let mut jobs = Vec::with_capacity(n_jobs);
    let mut order = Vec::with_capacity(n_jobs);
    for codec in [
        PageCodec::Snappy,
        PageCodec::Zstd,
        PageCodec::Lz4Raw,
        PageCodec::Gzip,
    ] {
        let selected: Vec<_> = plan.jobs.iter().filter(|j| j.codec == codec).collect();
        if selected.is_empty() {
            continue;
        }
        let first = order.len();
        let src: Vec<u64> = selected
            .iter()
            .map(|j| rg_ptr + j.src_offset as u64)
            .collect();
        let src_len: Vec<u64> = selected.iter().map(|j| j.src_len as u64).collect();
        let dst_len: Vec<u64> = selected.iter().map(|j| j.dst_len as u64).collect();
        let dst: Vec<u64> = selected
            .iter()
            .map(|j| scratch_ptr + j.dst_offset as u64)
            .collect();
        for j in &selected {
            jobs.push((j.column, j.page, j.dst_len));
            order.push(());
        }
        let at = [
            up.words(&src),
            up.words(&src_len),
            up.words(&dst_len),
            up.words(&dst),
        ];
        let max_dst = selected.iter().map(|j| j.dst_len).max().unwrap_or(0);
        let total: usize = selected.iter().map(|j| j.dst_len).sum();
        batches.push((codec_of(codec), first, selected.len(), at, max_dst, total));
    }
    let meta = pool.allocate(align(up.bytes.len()).max(1) + down_len)?;
    let meta_ptr = meta.device_ptr();
    let down_dev = meta_ptr + align(up.bytes.len()).max(1) as u64;
    let mut up_host = gpu.pinned.allocate(up.bytes.len().max(1))?;
    up_host[..up.bytes.len()].copy_from_slice(&up.bytes);
    // SAFETY: `up_host` and `meta` are kept until the event.
    unsafe { stream.copy_to_device(meta_ptr, up_host.as_ptr(), up.bytes.len().max(1))? };
    let mut keep = Vec::new();
    let mut times = RowGroupTimes::default();
    // nvCOMP runs on the scan's nvCOMP stream, after this row group's
    // uploads and before its kernels.
    let mut ordering = Vec::new();
    let nv_stream = &gpu.nvcomp_stream;
    if !batches.is_empty() {
        let mut uploaded = Event::new(gpu.device)?;
        uploaded.record(stream)?;
        nv_stream.wait_event(&uploaded)?;
        ordering.push(uploaded);
    }
    let decompressing = !batches.is_empty();
    for (codec, first, n, at, max_dst, total) in batches {
        let nvcomp = gpu.nvcomp(codec)?;
        let temp_bytes = nvcomp.temp_bytes(codec, n, max_dst, total)?;
        let temp = pool.allocate(temp_bytes.max(1))?;
        let args = BatchArgs {
            compressed_ptrs: meta_ptr + at[0] as u64,
            compressed_bytes: meta_ptr + at[1] as u64,
            uncompressed_capacity: meta_ptr + at[2] as u64,
            actual_uncompressed: down_dev + (actual_at + 8 * first) as u64,
            num_chunks: n,
            temp_ptr: temp.device_ptr(),
            temp_bytes: temp.len(),
            uncompressed_ptrs: meta_ptr + at[3] as u64,
            statuses: down_dev + (nv_status_at + 4 * first) as u64,
        };
        // SAFETY: every array and buffer named lives until the event.
        unsafe { nvcomp.decompress_async(codec, &args, nv_stream)? };
        times.compressed_pages += n;
        keep.push(temp);
    }

    if decompressing {
        let mut decompressed = Event::new(gpu.device)?;
        decompressed.record(nv_stream)?;
        stream.wait_event(&decompressed)?;
        ordering.push(decompressed);
    }
    let work_launch = RowGroupLaunch {
        tasks: meta_ptr + tasks_at as u64,
        n_tasks: tasks.len() as u32,
        dicts: if dicts.is_empty() {
            0
        } else {
            meta_ptr + dicts_at as u64
        },
        n_dicts: dicts.len() as u32,
        status: down_dev,
        has_plain_byte_arrays,
    };
    // SAFETY: the tasks describe the allocations above, all kept until the event.
    unsafe { gpu.kernels.decode_row_group(stream, &work_launch)? };
    let mut down = gpu.pinned.allocate(down_len.max(1))?;
    // SAFETY: `down` is kept until the event; `meta` likewise.
    unsafe { stream.copy_to_host(down.as_mut_ptr(), down_dev, down_len.max(1))? };
    let mut event = Event::new(gpu.device)?;
    event.record(stream)?;

    // Columns: views keep the row-group bytes and the scratch alive.
    let rg = DeviceBytes::from_pooled(rg);
    let scratch = DeviceBytes::from_pooled(scratch);
    let mut columns = Vec::with_capacity(plan.columns.len());
    for (ci, c) in plan.columns.iter().enumerate() {
        let (v_at, values_len, n_at, validity_len) = out_layout[ci];
        let values = output.slice(v_at, values_len)?;
        let validity = if validity_len > 0 {
            Some(output.slice(n_at, validity_len)?)
        } else {
            None
        };
        let variadic = if kind_of(c) == Kind::ByteArray {
            vec![rg.clone(), scratch.clone()]
        } else {
            Vec::new()
        };
        columns.push(ColumnOut {
            values,
            validity,
            variadic,
        });
    }
    keep.push(work);
    keep.push(meta);
    times.host_plan = started.elapsed();
    times.pages = tasks.len();
    let rows = column_rows.first().copied().unwrap_or(0) as usize;
    Ok(InFlight {
        event,
        file: file.to_string(),
        n_tasks: tasks.len() as u32,
        n_dicts: dicts.len() as u32,
        plan,
        schema,
        task_pages,
        dict_columns,
        jobs,
        down,
        status_len,
        columns,
        column_rows,
        _keep: keep,
        _up: up_host,
        _ordering: ordering,
        _inputs: vec![rg, scratch, output],
        _fetched: Box::new(fetched),
        times,
        rows,
        output_bytes: out_len,
    })
}

impl InFlight {
    /// Waits for the row group's event, checks every page and builds the
    /// batch.
    pub(crate) fn finish(
        mut self,
        device: usize,
    ) -> Result<(DeviceBatch, RowGroupTimes), DecodeError> {
        let waited = std::time::Instant::now();
        self.event.synchronize()?;
        self.times.wait = waited.elapsed();
        let down: &[u8] = &self.down;
        let n_jobs = self.jobs.len();
        let actual_at = align(self.status_len);
        let nv_status_at = align(actual_at + 8 * n_jobs);
        let plan = &self.plan;
        let rg = plan.row_group;
        for (k, &(ci, page, expected)) in self.jobs.iter().enumerate() {
            let s = &down[nv_status_at + 4 * k..nv_status_at + 4 * k + 4];
            let status = i32::from_le_bytes([s[0], s[1], s[2], s[3]]);
            let a = &down[actual_at + 8 * k..actual_at + 8 * k + 8];
            let actual = u64::from_le_bytes(a.try_into().expect("8 bytes")) as usize;
            let what = if status != 0 {
                Some(format!(
                    "{}",
                    crate::nvcomp::NvcompStatus::from_code(status)
                ))
            } else if actual != expected {
                Some(format!(
                    "{actual} bytes decompressed, the page header says {expected}"
                ))
            } else {
                None
            };
            if let Some(what) = what {
                return Err(DecodeError::Decompress {
                    file: self.file.clone(),
                    column: plan.columns[ci].column.clone(),
                    row_group: rg,
                    page,
                    what,
                });
            }
        }
        let (pages, dicts) = parse_status(&down[..self.status_len], self.n_tasks, self.n_dicts)
            .ok_or(DecodeError::StatusSize)?;
        for (k, s) in dicts.iter().enumerate() {
            if let Some(code) = s.error() {
                let ci = self.dict_columns[k];
                return Err(corrupt(&self.file, plan, ci, 0, rg, code, s.error_index));
            }
        }
        let mut nulls = vec![0usize; plan.columns.len()];
        for (k, s) in pages.iter().enumerate() {
            let (ci, page) = self.task_pages[k];
            if let Some(code) = s.error() {
                return Err(corrupt(&self.file, plan, ci, page, rg, code, s.error_index));
            }
            nulls[ci] += s.null_count as usize;
        }
        let rows = self.rows;
        let mut columns = Vec::with_capacity(plan.columns.len());
        for (ci, (c, out)) in plan.columns.iter().zip(self.columns.drain(..)).enumerate() {
            let mut buffers = vec![out.values];
            buffers.extend(out.variadic);
            let data_type: DataType = c.ty.data_type.clone();
            columns.push(DeviceColumn::new(
                data_type,
                self.column_rows[ci] as usize,
                Some(nulls[ci]),
                out.validity,
                buffers,
            )?);
        }
        let ready: Arc<dyn ReadyEvent> = Arc::new(self.event);
        let batch = DeviceBatch::try_new(
            self.schema.clone(),
            rows,
            columns,
            MemoryLocation::cuda(device),
            Some(ready),
        )?;
        Ok((batch, self.times))
    }
}

fn corrupt(
    file: &str,
    plan: &DecodePlan,
    ci: usize,
    page: usize,
    row_group: usize,
    code: Result<crate::decode::kernels::PageErrorCode, u32>,
    index: u32,
) -> DecodeError {
    DecodeError::CorruptPage {
        file: file.to_string(),
        column: plan.columns[ci].column.clone(),
        row_group,
        page,
        what: match code {
            Ok(c) => c.describe().to_string(),
            Err(n) => format!("unknown kernel error {n}"),
        },
        index,
    }
}

/// One kernel task: a page of a column, whole or a window of its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskSpec {
    /// Column index in the plan.
    pub(crate) column: usize,
    /// Index in the column's `pages`.
    pub(crate) page: usize,
    /// First output row.
    pub(crate) out_row: u64,
    /// (rows skipped, rows taken) when only part of the page is written.
    pub(crate) window: Option<(u32, u32)>,
}

/// The kernel tasks of a plan and each column's output rows. Without a
/// row selection every kept page is written whole at its `out_row`. With
/// one (page pruning: each column keeps the pages that overlap the
/// selected rows, and columns' pages end at different rows), every page is
/// cut to the selected rows it holds, so all columns hold exactly the same
/// rows, in order.
pub(crate) fn task_specs(
    plan: &DecodePlan,
    selection: Option<&[std::ops::Range<i64>]>,
) -> (Vec<TaskSpec>, Vec<u64>) {
    let mut specs = Vec::new();
    let mut rows = Vec::with_capacity(plan.columns.len());
    for (ci, c) in plan.columns.iter().enumerate() {
        let Some(selection) = selection else {
            specs.extend(c.pages.iter().enumerate().map(|(pi, p)| TaskSpec {
                column: ci,
                page: pi,
                out_row: p.out_row,
                window: None,
            }));
            rows.push(c.rows);
            continue;
        };
        let selected_before = |row: i64| -> u64 {
            selection
                .iter()
                .map(|r| (row.min(r.end) - r.start).max(0) as u64)
                .sum()
        };
        for (pi, p) in c.pages.iter().enumerate() {
            let first = p.first_row.unwrap_or(p.out_row) as i64;
            let end = first + i64::from(p.num_rows);
            for r in selection {
                let (lo, hi) = (r.start.max(first), r.end.min(end));
                if lo >= hi {
                    continue;
                }
                specs.push(TaskSpec {
                    column: ci,
                    page: pi,
                    out_row: selected_before(lo),
                    window: Some(((lo - first) as u32, (hi - lo) as u32)),
                });
            }
        }
        rows.push(
            selection
                .iter()
                .map(|r| (r.end - r.start).max(0) as u64)
                .sum(),
        );
    }
    (specs, rows)
}

/// Walks every Snappy and LZ4 page of the plan (in parallel) and refuses
/// the row group at the first one whose elements would reach outside the
/// page or produce another size than its header says.
fn check_compressed(file: &str, plan: &DecodePlan, host: &[u8]) -> Result<(), DecodeError> {
    use crate::decode::page::validate::{check_lz4_block, check_snappy};
    use rayon::prelude::*;
    let failed = plan
        .jobs
        .par_iter()
        .filter(|j| matches!(j.codec, PageCodec::Snappy | PageCodec::Lz4Raw))
        .find_map_first(|j| {
            let src = host.get(j.src_offset..j.src_offset + j.src_len)?;
            let checked = match j.codec {
                PageCodec::Snappy => check_snappy(src, j.dst_len),
                _ => check_lz4_block(src, j.dst_len),
            };
            checked.err().map(|e| (j, e))
        });
    match failed {
        None => Ok(()),
        Some((j, source)) => Err(DecodeError::CorruptCompressed {
            file: file.to_string(),
            column: plan.columns[j.column].column.clone(),
            row_group: plan.row_group,
            page: j.page,
            source,
        }),
    }
}
