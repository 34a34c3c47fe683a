//! A row group staged: its device memory allocated and its uploads (the
//! row group's bytes, its kernel tasks) queued on its stream, ready for its
//! group's launch ([`super::s3_to_s5_queue_group::launch_group`]).

use std::sync::Arc;

use arrow::datatypes::{DataType, SchemaRef};
use parquet::file::metadata::ParquetMetaData;

use super::decode_error::DecodeError;
use super::gpu_resources::Gpu;
use super::s0_land::Landed;
use super::s1_plan_host_decompress::HostPages;
use super::s1_plan_row_group::{HostPlan, TaskSpec};
use super::s2_column_out::ColumnOut;
use super::s2_nested_columns::NestStage;
use crate::cuda::{PooledDeviceBuffer, PooledPinnedBuffer};
use crate::decode::array::DeviceBytes;
use crate::decode::kernels::launch::{SpreadItem, SpreadTable};
use crate::decode::kernels::nest::{
    nest_outputs_as_bytes, nest_status_bytes, nest_tasks_as_bytes, NestTask,
};
use crate::decode::kernels::{
    launch, DictTask, NestLaunch, PageTask, RowGroupLaunch, SpreadLaunch, StringWalks,
    FLAG_ROW_WINDOW, FLAG_V1_LEVELS, FLAG_V1_REP_LEVELS,
};
use crate::decode::page::nesting::GpuNesting;
use crate::decode::page::{
    BufferKind, ColumnDecode, DecodePlan, Encoding, Kind, PageVersion, Region,
};
use crate::nvcomp::Codec;
use crate::parquet::fetch::FetchedRowGroup;

/// Alignment of every section of the row group's device allocations.
const ALIGN: usize = 256;

fn align(n: usize) -> usize {
    n.next_multiple_of(ALIGN)
}

/// Where a row group's output goes: its file, the file's metadata, the
/// batches' schema and the projection's nesting plan (both made once per
/// file, before any read: `super::one_gpu::checked_output`).
pub(crate) struct Output<'a> {
    pub(crate) file: &'a str,
    pub(crate) metadata: &'a ParquetMetaData,
    pub(crate) schema: &'a SchemaRef,
    pub(crate) nesting: Option<Arc<GpuNesting>>,
}

/// Whether any page of `plan` is a BYTE_ARRAY DELTA_BYTE_ARRAY page.
fn has_dba_pages(plan: &DecodePlan) -> bool {
    plan.columns.iter().any(|c| {
        c.ty.kind == Kind::ByteArray && c.pages.iter().any(|p| p.class == Encoding::DeltaByteArray)
    })
}

/// Output bytes of one column: (values, validity).
fn output_sizes(c: &ColumnDecode, rows: u64) -> (usize, usize) {
    let values = match c.ty.kind {
        Kind::Boolean => launch::bitmap_bytes(rows),
        _ => rows * u64::from(c.ty.out_width),
    };
    let validity = if c.ty.nullable {
        launch::bitmap_bytes(rows)
    } else {
        0
    };
    (values as usize, validity as usize)
}

/// Adds `len` bytes at `at` to `ranges`, joined to the last range when
/// only alignment padding lies between them.
fn push_range(ranges: &mut Vec<(u64, usize)>, at: u64, len: usize) {
    if len == 0 {
        return;
    }
    if let Some((start, n)) = ranges.last_mut() {
        let end = *start + *n as u64;
        if at >= end && at - end < ALIGN as u64 {
            *n = (at + len as u64 - *start) as usize;
            return;
        }
    }
    ranges.push((at, len));
}

/// Where the sections of the bytes uploaded before the kernels run lie
/// (each aligned), so that they are written straight into the pinned
/// buffer: no byte vector between (a fresh one of each row group's tasks
/// cost more in page faults than in copying).
fn section_offsets<const N: usize>(lens: [usize; N]) -> ([usize; N], usize) {
    let mut end = 0usize;
    let offsets = lens.map(|len| {
        let at = align(end);
        end = at + len;
        at
    });
    (offsets, end)
}

/// One decompression job of a staged row group, with device addresses.
#[derive(Debug, Clone)]
pub(crate) struct StagedJob {
    pub(crate) codec: Codec,
    pub(crate) src: u64,
    pub(crate) src_len: usize,
    pub(crate) dst: u64,
    pub(crate) dst_len: usize,
    /// A Snappy page whose output splits into pieces nvCOMP takes as jobs
    /// of their own (found by the host's walk).
    pub(crate) pieces: Option<crate::decode::page::validate::SnappyPieces>,
    /// (column in the plan, page in the chunk) for errors.
    pub(crate) column: usize,
    pub(crate) page: usize,
}

/// What a page task decodes, for the check of its status.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskPage {
    /// The column's index in the plan.
    pub(crate) column: usize,
    /// The page's index in its column chunk.
    pub(crate) page: usize,
    /// The values a v2 page's header says it holds (levels less nulls):
    /// its definition levels must define exactly these (arrow-rs refuses a
    /// page where they do not).
    pub(crate) defined: Option<u32>,
}

/// A row group whose bytes and kernel tasks are queued for upload on its
/// stream, waiting for its group's decompression and its kernels.
pub(crate) struct Staged {
    pub(crate) file: String,
    pub(crate) plan: DecodePlan,
    pub(crate) schema: SchemaRef,
    pub(crate) column_rows: Vec<u64>,
    pub(crate) task_pages: Vec<TaskPage>,
    pub(crate) dict_columns: Vec<usize>,
    pub(crate) jobs: Vec<StagedJob>,
    /// The kernels' launch (tasks and status area in `meta`).
    pub(crate) work_launch: RowGroupLaunch,
    /// Bytes of the status copied back: the page and dictionary tasks'
    /// ([`launch::status_bytes`]), then the nest tasks'.
    pub(crate) status_len: usize,
    /// Bytes of the page and dictionary tasks' status.
    pub(crate) page_status_len: usize,
    pub(crate) columns: Vec<ColumnOut>,
    /// The nested columns' memory and plan, when the projection has any.
    pub(crate) nest: Option<NestStage>,
    /// Device ranges (address, bytes) to zero before the kernels: the
    /// output's bitmaps.
    pub(crate) zero: Vec<(u64, usize)>,
    /// Buffers the uploads, nvCOMP and the kernels use.
    pub(crate) _keep: Vec<PooledDeviceBuffer>,
    pub(crate) _up: PooledPinnedBuffer,
    /// The pages the host decompressed, as uploaded into scratch.
    pub(crate) _host_pages: Option<PooledPinnedBuffer>,
    pub(crate) _inputs: Vec<DeviceBytes>,
    pub(crate) _fetched: Box<dyn Send>,
    pub(crate) rows: usize,
    pub(crate) output_bytes: usize,
    /// Whether the row group has BYTE_ARRAY DELTA_BYTE_ARRAY pages, whose
    /// values' buffers are sized before its kernels
    /// ([`super::s5_delta_string_buffers`]).
    pub(crate) dba: bool,
    /// The host plan's walk and check times.
    pub(crate) walk: std::time::Duration,
    pub(crate) check: std::time::Duration,
}

/// Allocates a planned row group's device memory and queues its uploads
/// (the row group's bytes, its kernel tasks) on `stream`.
///
/// The stages, in order: the row group's bytes up and its memory allocated
/// ([`Memory::allocate`]), its dictionary and page tasks written
/// ([`dict_tasks`], [`page_tasks`]), its decompression jobs listed
/// ([`staged_jobs`]), its tasks up ([`upload_tasks`]) and its columns'
/// places in the output ([`column_outs`]).
pub(crate) fn stage(
    gpu: &Gpu,
    output: Output<'_>,
    planned: HostPlan,
    fetched: FetchedRowGroup<Landed>,
    stream: &crate::cuda::Stream,
) -> Result<Staged, DecodeError> {
    let HostPlan {
        plan,
        specs,
        column_rows,
        selected_rows,
        walk,
        check,
        pieces,
        host_pages,
    } = planned;
    let Output {
        file,
        metadata,
        schema,
        nesting,
    } = output;
    let schema = schema.clone();
    let dba = has_dba_pages(&plan);
    let mut memory = Memory::allocate(gpu, &fetched.buffer, &plan, &specs, &column_rows, stream)?;
    let records = selected_rows
        .unwrap_or_else(|| metadata.row_group(plan.row_group).num_rows().max(0) as u64);
    let nest = match nesting {
        Some(nesting) => {
            let (output, out_layout) = (memory.output.address(), &memory.out_layout);
            let nest =
                NestStage::allocate(gpu, file, &plan, nesting, &column_rows, records, |ci| {
                    output + out_layout[ci].0 as u64
                })?;
            memory.zero.extend(nest.zero_ranges());
            Some(nest)
        }
        None => None,
    };
    let host_pages = upload_host_pages(gpu, stream, &host_pages, memory.scratch_ptr)?;
    let (dicts, dict_views_at) = dict_tasks(&plan, &memory);
    let (tasks, has_plain_byte_arrays) = page_tasks(
        &plan,
        &specs,
        &column_rows,
        &memory,
        &dict_views_at,
        nest.as_ref(),
    );
    let jobs = staged_jobs(&plan, pieces, &memory);
    let up = upload_tasks(
        gpu,
        stream,
        UploadParts {
            tasks: &tasks,
            dicts: &dicts,
            work: &memory.work,
            has_plain_byte_arrays,
            nest: nest.as_ref(),
        },
    )?;
    if let Some(range) = up.nest_status {
        memory.zero.push(range);
    }

    // Columns: views keep the row-group bytes and the scratch alive.
    let Memory {
        rg,
        scratch,
        output,
        out_layout,
        out_len,
        zero,
        work,
        ..
    } = memory;
    let scratch = DeviceBytes::from_pooled(scratch);
    let columns = column_outs(&plan, &out_layout, &output, &rg, &scratch)?;
    let rows = match &nest {
        Some(_) => records as usize,
        None => column_rows.first().copied().unwrap_or(0) as usize,
    };
    Ok(Staged {
        file: file.to_string(),
        plan,
        schema,
        column_rows,
        task_pages: work.task_pages,
        dict_columns: work.dict_columns,
        jobs,
        work_launch: up.launch,
        status_len: up.status_len,
        page_status_len: up.page_status_len,
        columns,
        nest,
        zero,
        _keep: vec![work.buffer, up.meta],
        _up: up.host,
        _host_pages: host_pages,
        _inputs: vec![rg, scratch, output],
        _fetched: Box::new(fetched),
        rows,
        output_bytes: out_len,
        dba,
        walk,
        check,
    })
}

/// A row group's device memory, allocated by [`Memory::allocate`]: its
/// bytes as stored (their upload queued), the decompressed pages'
/// scratch, one output allocation for every column, and the kernels' work
/// areas.
struct Memory {
    /// The row group's bytes on the device: where they landed, or the
    /// copy of the pinned ones.
    rg: DeviceBytes,
    scratch: PooledDeviceBuffer,
    rg_ptr: u64,
    scratch_ptr: u64,
    output: DeviceBytes,
    /// Each column's (values at, values bytes, validity at, validity
    /// bytes) in `output`, and `output`'s length.
    out_layout: Vec<(usize, usize, usize, usize)>,
    out_len: usize,
    /// Device ranges (address, bytes) to zero before the kernels.
    zero: Vec<(u64, usize)>,
    work: WorkAreas,
}

/// The kernels' work areas: page scratch, then byte-array dictionary
/// views, then the spread walk's tables.
struct WorkAreas {
    /// What each page task decodes.
    task_pages: Vec<TaskPage>,
    /// The byte-array columns with a dictionary.
    dict_columns: Vec<usize>,
    spread: Option<SpreadTable>,
    /// Each area's offset in `buffer`.
    offsets: Vec<u64>,
    buffer: PooledDeviceBuffer,
    ptr: u64,
}

impl Memory {
    /// Allocates the row group's memory and, where its bytes `landed` in
    /// pinned host memory, queues their upload on `stream` (bytes that
    /// landed on the device are used where they are).
    fn allocate(
        gpu: &Gpu,
        landed: &Landed,
        plan: &DecodePlan,
        specs: &[TaskSpec],
        column_rows: &[u64],
        stream: &crate::cuda::Stream,
    ) -> Result<Memory, DecodeError> {
        let pool = &gpu.pool;
        // The row group's bytes, as stored.
        let rg = match landed {
            Landed::Device(buffer) => DeviceBytes::new(buffer.clone()),
            Landed::Pinned(host) => {
                let rg = pool.allocate(host.len().max(1))?;
                // SAFETY: the pinned host buffer is kept (in `fetched`) and
                // the device buffer (in `inputs`) until the row group's event.
                unsafe { stream.copy_to_device(rg.device_ptr(), host.as_ptr(), host.len())? };
                DeviceBytes::from_pooled(rg)
            }
        };
        let scratch = pool.allocate(plan.scratch_bytes.max(1))?;
        let (rg_ptr, scratch_ptr) = (rg.address(), scratch.device_ptr());

        // Output: one allocation for every column's values and validity.
        let mut out_layout = Vec::with_capacity(plan.columns.len());
        let mut out_len = 0usize;
        for (c, &rows) in plan.columns.iter().zip(column_rows) {
            let (values, validity) = output_sizes(c, rows);
            let v_at = align(out_len);
            let n_at = align(v_at + values);
            out_len = n_at + validity;
            out_layout.push((v_at, values, n_at, validity));
        }
        let output = DeviceBytes::from_pooled(pool.allocate(out_len.max(1))?);
        // What the kernels do not write whole: the bitmaps they set bits in
        // (validity, BOOLEAN values), zeroed on the row group's kernel stream
        // before its kernels (`launch_group`). Every other output byte a kernel
        // writes (null rows included), so the rest is not zeroed: zeroing all
        // of it (11 GB for all of SF 10 lineitem's columns) on the upload
        // stream made the next group's copies wait behind a memset that waited
        // for the SMs.
        let mut zero: Vec<(u64, usize)> = Vec::new();
        for (c, &(v_at, values, n_at, validity)) in plan.columns.iter().zip(&out_layout) {
            if c.ty.kind == Kind::Boolean {
                push_range(&mut zero, output.address() + v_at as u64, values);
            }
            push_range(&mut zero, output.address() + n_at as u64, validity);
        }
        let work = WorkAreas::allocate(gpu, plan, specs)?;
        Ok(Memory {
            rg,
            scratch,
            rg_ptr,
            scratch_ptr,
            output,
            out_layout,
            out_len,
            zero,
            work,
        })
    }

    /// The device address of a region of the row group's bytes or scratch.
    fn address(&self, r: &Region) -> u64 {
        match r.buffer {
            BufferKind::RowGroup => self.rg_ptr + r.offset as u64,
            BufferKind::Scratch => self.scratch_ptr + r.offset as u64,
        }
    }

    /// The view buffer (index, base address) a region lies in.
    fn view_index(&self, r: &Region) -> (u32, u64) {
        match r.buffer {
            BufferKind::RowGroup => (0, self.rg_ptr),
            BufferKind::Scratch => (1, self.scratch_ptr),
        }
    }
}

impl WorkAreas {
    /// Sizes the kernels' work areas of `plan`'s page tasks (`specs`) and
    /// dictionaries, and allocates them in one buffer.
    fn allocate(
        gpu: &Gpu,
        plan: &DecodePlan,
        specs: &[TaskSpec],
    ) -> Result<WorkAreas, DecodeError> {
        let mut needs = Vec::new();
        let mut task_pages = Vec::new();
        for spec in specs {
            let c = &plan.columns[spec.column];
            let p = &c.pages[spec.page];
            needs.push(launch::scratch_bytes(
                c.ty.kind,
                p.class,
                p.num_values,
                c.ty.type_length,
            ));
            task_pages.push(TaskPage {
                column: spec.column,
                page: p.page,
                defined: p.num_nulls.map(|nulls| p.num_values.saturating_sub(nulls)),
            });
        }
        let mut dict_columns = Vec::new();
        for (ci, c) in plan.columns.iter().enumerate() {
            if let (Kind::ByteArray, Some(d)) = (c.ty.kind, &c.dictionary) {
                needs.push(launch::dict_view_bytes(d.num_values, c.ty.out_width));
                dict_columns.push(ci);
            }
        }
        // The spread walk's tables: its items are the dictionaries, then the
        // page tasks, in the order the kernels see them.
        let chunk = gpu.kernels.config().string_chunk;
        let spread = (gpu.string_walks == StringWalks::Spread).then(|| {
            let dict_items = dict_columns.iter().map(|&ci| {
                let d = plan.columns[ci]
                    .dictionary
                    .as_ref()
                    .expect("listed with a dictionary");
                SpreadItem::Dict {
                    data_len: d.data.len as u64,
                    count: d.num_values,
                }
            });
            let page_items = specs.iter().map(|spec| {
                let c = &plan.columns[spec.column];
                let p = &c.pages[spec.page];
                if c.ty.kind == Kind::ByteArray && p.class == Encoding::Plain {
                    SpreadItem::PlainPage {
                        data_len: p.data.len as u64,
                    }
                } else {
                    SpreadItem::Other
                }
            });
            SpreadTable::new(dict_items.chain(page_items), chunk)
        });
        if let Some(t) = &spread {
            needs.push(t.state_bytes());
            needs.push(t.bitmap_bytes(chunk));
        }
        let (offsets, work_len) = launch::scratch_layout(needs);
        let buffer = gpu.pool.allocate((work_len as usize).max(1))?;
        let ptr = buffer.device_ptr();
        Ok(WorkAreas {
            task_pages,
            dict_columns,
            spread,
            offsets,
            buffer,
            ptr,
        })
    }
}

/// The dictionary tasks (byte-array dictionaries, whose views the kernels
/// build in the work areas), and each column's dictionary views' address.
fn dict_tasks(plan: &DecodePlan, memory: &Memory) -> (Vec<DictTask>, Vec<Option<u64>>) {
    let work = &memory.work;
    let mut dicts = Vec::with_capacity(work.dict_columns.len());
    let mut dict_views_at = vec![None; plan.columns.len()];
    for (k, &ci) in work.dict_columns.iter().enumerate() {
        let d = plan.columns[ci]
            .dictionary
            .as_ref()
            .expect("listed with a dictionary");
        let views = work.ptr + work.offsets[work.task_pages.len() + k];
        let (index, base) = memory.view_index(&d.data);
        dicts.push(DictTask {
            data: memory.address(&d.data),
            out_views: views,
            view_buffer_base: base,
            data_len: d.data.len as u32,
            count: d.num_values,
            view_buffer_index: index,
            conversion: plan.columns[ci].ty.conversion as u32,
            ..DictTask::default()
        });
        dict_views_at[ci] = Some(views);
    }
    (dicts, dict_views_at)
}

/// The page tasks of `specs`, and whether any is a plain byte-array page.
fn page_tasks(
    plan: &DecodePlan,
    specs: &[TaskSpec],
    column_rows: &[u64],
    memory: &Memory,
    dict_views_at: &[Option<u64>],
    nest: Option<&NestStage>,
) -> (Vec<PageTask>, bool) {
    let (output, work) = (&memory.output, &memory.work);
    let mut tasks = Vec::with_capacity(work.task_pages.len());
    let mut has_plain_byte_arrays = false;
    for (t, spec) in specs.iter().enumerate() {
        let ci = spec.column;
        let c = &plan.columns[ci];
        let kind = c.ty.kind;
        let (v_at, _, n_at, validity_len) = memory.out_layout[ci];
        let max_def = if c.ty.nullable { c.max_def } else { 0 };
        let p = &c.pages[spec.page];
        let (out_rep, out_def) = nest.and_then(|n| n.page_levels(ci)).unwrap_or((0, 0));
        let encoding = p.class;
        has_plain_byte_arrays |= kind == Kind::ByteArray && encoding == Encoding::Plain;
        let (view_buffer_index, view_buffer_base) = memory.view_index(&p.data);
        let (dict, dict_count, dict_len) = match (&c.dictionary, kind) {
            (Some(d), Kind::ByteArray) => (
                dict_views_at[ci].unwrap_or(0),
                d.num_values,
                launch::dict_view_bytes(d.num_values, c.ty.out_width) as u32,
            ),
            (Some(d), _) => (memory.address(&d.data), d.num_values, d.data.len as u32),
            (None, _) => (0, 0, 0),
        };
        let scratch_len =
            launch::scratch_bytes(kind, encoding, p.num_values, c.ty.type_length) as u32;
        let v1_levels = match (p.version, max_def > 0, c.max_rep > 0) {
            (PageVersion::V1, true, true) => FLAG_V1_LEVELS | FLAG_V1_REP_LEVELS,
            (PageVersion::V1, true, false) => FLAG_V1_LEVELS,
            _ => 0,
        };
        let windowed = if spec.window.is_some() {
            FLAG_ROW_WINDOW
        } else {
            0
        };
        tasks.push(PageTask {
            data: memory.address(&p.data),
            def_levels: p
                .def_levels
                .as_ref()
                .map(|r| memory.address(r))
                .unwrap_or(0),
            dict,
            out_values: output.address() + v_at as u64,
            out_validity: if validity_len > 0 {
                output.address() + n_at as u64
            } else {
                0
            },
            scratch: if scratch_len > 0 {
                work.ptr + work.offsets[t]
            } else {
                0
            },
            view_buffer_base,
            rep_levels: p
                .rep_levels
                .as_ref()
                .map(|r| memory.address(r))
                .unwrap_or(0),
            out_rep,
            out_def,
            rep_len: p.rep_levels.as_ref().map(|r| r.len as u32).unwrap_or(0),
            max_rep: c.max_rep,
            data_len: p.data.len as u32,
            def_len: p.def_levels.as_ref().map(|r| r.len as u32).unwrap_or(0),
            num_values: p.num_values,
            dict_count,
            dict_len,
            out_row: spec.out_row as u32,
            out_rows: column_rows[ci] as u32,
            kind: kind as u32,
            encoding: encoding as u32,
            flags: v1_levels | windowed,
            row_skip: spec.window.map(|w| w.0).unwrap_or(0),
            row_take: spec.window.map(|w| w.1).unwrap_or(0),
            max_def,
            conversion: c.ty.conversion as u32,
            type_length: c.ty.type_length,
            out_width: c.ty.out_width,
            view_buffer_index,
            scratch_len,
            ..PageTask::default()
        });
    }
    (tasks, has_plain_byte_arrays)
}

/// The decompression jobs (run by the group, one nvCOMP call per codec),
/// with device addresses: from the row group's bytes to the scratch.
fn staged_jobs(
    plan: &DecodePlan,
    pieces: Vec<Option<crate::decode::page::validate::SnappyPieces>>,
    memory: &Memory,
) -> Vec<StagedJob> {
    plan.jobs
        .iter()
        .zip(pieces)
        .map(|(j, pieces)| StagedJob {
            codec: j.codec,
            src: memory.rg_ptr + j.src_offset as u64,
            src_len: j.src_len,
            dst: memory.scratch_ptr + j.dst_offset as u64,
            dst_len: j.dst_len,
            pieces,
            column: j.column,
            page: j.page,
        })
        .collect()
}

/// Queues the upload of the pages the host decompressed into their places
/// in scratch (at `scratch_ptr`) on `stream`, through a pinned buffer kept
/// until the row group's event; the group's `uploaded` event, recorded
/// after every row group's uploads, so orders them before nvCOMP and the
/// kernels.
fn upload_host_pages(
    gpu: &Gpu,
    stream: &crate::cuda::Stream,
    pages: &HostPages,
    scratch_ptr: u64,
) -> Result<Option<PooledPinnedBuffer>, DecodeError> {
    if pages.places.is_empty() {
        return Ok(None);
    }
    let mut pinned = gpu.pinned.allocate(pages.bytes.len().max(1))?;
    pinned[..pages.bytes.len()].copy_from_slice(&pages.bytes);
    for &(at, dst_offset, len) in &pages.places {
        // SAFETY: `pinned` is kept in the staged row group and scratch in
        // its inputs until the row group's event; `dst_offset + len` lies
        // in scratch (the plan's region).
        unsafe {
            stream.copy_to_device(
                scratch_ptr + dst_offset as u64,
                pinned.as_ptr().add(at),
                len,
            )?
        };
    }
    Ok(Some(pinned))
}

/// The row group's tasks on the device, and its kernels' launch.
struct TaskUpload {
    /// The kernels' launch (tasks and status area in `meta`).
    launch: RowGroupLaunch,
    status_len: usize,
    page_status_len: usize,
    /// The nest tasks' status (to zero before the kernels).
    nest_status: Option<(u64, usize)>,
    meta: PooledDeviceBuffer,
    /// The pinned bytes uploaded.
    host: PooledPinnedBuffer,
}

/// What [`upload_tasks`] uploads.
struct UploadParts<'a> {
    tasks: &'a [PageTask],
    dicts: &'a [DictTask],
    work: &'a WorkAreas,
    has_plain_byte_arrays: bool,
    /// The nested columns' stage.
    nest: Option<&'a NestStage>,
}

/// Queues the tasks' upload on `stream`, then leaves the kernels' status
/// area after them (copied back after the kernels: the pages' and
/// dictionaries', then the nest tasks'); hands on the launch.
fn upload_tasks(
    gpu: &Gpu,
    stream: &crate::cuda::Stream,
    parts: UploadParts<'_>,
) -> Result<TaskUpload, DecodeError> {
    let UploadParts {
        tasks,
        dicts,
        work,
        has_plain_byte_arrays,
        nest,
    } = parts;
    let task_bytes = crate::decode::kernels::task::page_tasks_as_bytes(tasks);
    let dict_bytes = crate::decode::kernels::task::dict_tasks_as_bytes(dicts);
    let spread = &work.spread;
    let first = spread.as_ref().map_or(&[][..], |t| &t.first[..]);
    let n_nest = nest.map_or(0, NestStage::n_tasks);
    let nest_outputs = nest.map_or(&[][..], |n| &n.outputs[..]);
    let output_bytes = nest_outputs_as_bytes(nest_outputs);
    let nest_task_len = n_nest as usize * std::mem::size_of::<NestTask>();
    let ([tasks_at, dicts_at, first_at, outputs_at, nest_at], up_bytes) = section_offsets([
        task_bytes.len(),
        dict_bytes.len(),
        4 * first.len(),
        output_bytes.len(),
        nest_task_len,
    ]);
    let page_status_len = launch::status_bytes(tasks.len() as u32, dicts.len() as u32) as usize;
    let status_len = page_status_len + nest_status_bytes(n_nest) as usize;
    let up_len = align(up_bytes).max(1);
    let meta = gpu.pool.allocate(up_len + status_len.max(1))?;
    let meta_ptr = meta.device_ptr();
    let mut up_host = gpu.pinned.allocate(up_bytes.max(1))?;
    up_host[tasks_at..tasks_at + task_bytes.len()].copy_from_slice(task_bytes);
    up_host[dicts_at..dicts_at + dict_bytes.len()].copy_from_slice(dict_bytes);
    for (bytes, w) in up_host[first_at..first_at + 4 * first.len()]
        .chunks_exact_mut(4)
        .zip(first)
    {
        bytes.copy_from_slice(&w.to_le_bytes());
    }
    up_host[outputs_at..outputs_at + output_bytes.len()].copy_from_slice(output_bytes);
    let status = meta_ptr + up_len as u64;
    let nest_status_at = status + page_status_len as u64;
    let nest_launch = match nest {
        Some(n) if n_nest > 0 => {
            let nest_tasks = n.tasks(meta_ptr + outputs_at as u64, nest_status_at);
            let bytes = nest_tasks_as_bytes(&nest_tasks);
            up_host[nest_at..nest_at + bytes.len()].copy_from_slice(bytes);
            NestLaunch {
                tasks: meta_ptr + nest_at as u64,
                n_tasks: n_nest,
                max_entries: n.max_entries(),
            }
        }
        _ => NestLaunch::default(),
    };
    let first_at = spread.as_ref().map(|_| first_at);
    // SAFETY: `up_host` and `meta` are kept until the row group's event.
    unsafe { stream.copy_to_device(meta_ptr, up_host.as_ptr(), up_bytes.max(1))? };
    let launch = RowGroupLaunch {
        tasks: meta_ptr + tasks_at as u64,
        n_tasks: tasks.len() as u32,
        dicts: if dicts.is_empty() {
            0
        } else {
            meta_ptr + dicts_at as u64
        },
        n_dicts: dicts.len() as u32,
        status,
        has_plain_byte_arrays,
        walks: gpu.string_walks,
        spread: match (spread, first_at) {
            (Some(t), Some(at)) => {
                let n = work.offsets.len();
                SpreadLaunch {
                    first: meta_ptr + at as u64,
                    n_chunks: t.n_chunks,
                    state: work.ptr + work.offsets[n - 2],
                    bits: work.ptr + work.offsets[n - 1],
                }
            }
            _ => SpreadLaunch::default(),
        },
        nest: nest_launch,
    };
    Ok(TaskUpload {
        launch,
        status_len,
        page_status_len,
        nest_status: (n_nest > 0).then(|| (nest_status_at, nest_status_bytes(n_nest) as usize)),
        meta,
        host: up_host,
    })
}

/// Where each column's output lies in `output` (byte-array views keep the
/// row group's bytes and scratch alive as their data buffers).
fn column_outs(
    plan: &DecodePlan,
    out_layout: &[(usize, usize, usize, usize)],
    output: &DeviceBytes,
    rg: &DeviceBytes,
    scratch: &DeviceBytes,
) -> Result<Vec<ColumnOut>, DecodeError> {
    let mut columns = Vec::with_capacity(plan.columns.len());
    for (ci, c) in plan.columns.iter().enumerate() {
        let (v_at, values_len, n_at, validity_len) = out_layout[ci];
        let values = output.slice(v_at, values_len)?;
        let validity = if validity_len > 0 {
            Some(output.slice(n_at, validity_len)?)
        } else {
            None
        };
        // Views' data buffers (not decimals'); DELTA_BYTE_ARRAY pages add
        // theirs before the kernels (`super::s5_delta_string_buffers`).
        let views = matches!(c.ty.data_type, DataType::Utf8View | DataType::BinaryView);
        let variadic = if views {
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
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_ranges_join_across_alignment_padding_only() {
        let mut r = Vec::new();
        push_range(&mut r, 1000, 0);
        assert!(r.is_empty(), "an empty range is none");
        push_range(&mut r, 1024, 100);
        // 1124..1280 is padding to the next 256-byte section: joined.
        push_range(&mut r, 1280, 64);
        assert_eq!(r, [(1024, 320)]);
        // A whole section (a column's values) lies between: kept apart.
        push_range(&mut r, 1344 + ALIGN as u64, 8);
        assert_eq!(r, [(1024, 320), (1344 + ALIGN as u64, 8)]);
    }

    #[test]
    fn upload_sections_are_aligned_disjoint_and_in_order() {
        let lens = [152 * 3, 0, 4 * 7, 1];
        let (at, end) = section_offsets(lens);
        assert_eq!(at[0], 0);
        for (i, (&a, &len)) in at.iter().zip(&lens).enumerate() {
            assert_eq!(a % ALIGN, 0, "section {i} at {a}");
            if let Some(&next) = at.get(i + 1) {
                assert!(a + len <= next, "section {i} overlaps the next");
            }
        }
        assert_eq!(end, at[3] + 1, "the end is the last section's end");
        assert_eq!(section_offsets([0usize; 0]), ([], 0));
    }
}
