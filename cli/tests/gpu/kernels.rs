//! GPU tests of the decode kernels on hand-built pages (a tiny encoder of
//! the RLE/bit-packed hybrid and of PLAIN values lives here). Without a GPU
//! they are listed as ignored; on the GPU machine run
//!
//! ```text
//! cargo test --release --no-default-features --test gpu_kernels -- --ignored --test-threads 1
//! ```
//!
//! NVRTC must load (libnvrtc.so.13 in ldconfig there, or LD_LIBRARY_PATH /
//! GDSCAN_NVRTC_LIBRARY). Every test first asserts that a GPU is present.

use gdscan::config::decode::{DecodeVars, KernelConfig};
use gdscan::cuda::{driver, Device, DeviceBuffer, Stream};
use gdscan::decode::kernels::task::{
    dict_tasks_as_bytes, dict_tasks_as_bytes_mut, page_tasks_as_bytes, page_tasks_as_bytes_mut,
};
use gdscan::decode::kernels::{
    launch, parse_status, Conversion, DictTask, Encoding, KernelSet, Kind, PageErrorCode, PageTask,
    RowGroupLaunch, SpreadLaunch, StringWalks, TaskStatus, FLAG_V1_LEVELS,
};

// ------------------------------------------------------------ encoder

/// Encodes `values` (each < 2^bw) as an RLE/bit-packed hybrid stream: runs
/// of 8 or more equal values as RLE runs, the rest as bit-packed groups of 8
/// (at most 63 groups a run), padding the last group with zeros.
fn hybrid(values: &[u32], bw: u32) -> Vec<u8> {
    hybrid_with(values, bw, 8)
}

/// As [`hybrid`], with RLE runs only from `min_rle` equal values (a huge
/// value forces bit-packing everywhere).
fn hybrid_with(values: &[u32], bw: u32, min_rle: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut pending: Vec<u32> = Vec::new();
    let flush = |out: &mut Vec<u8>, pending: &mut Vec<u32>| {
        while !pending.is_empty() {
            let take = pending.len().min(63 * 8);
            let mut chunk: Vec<u32> = pending.drain(..take).collect();
            let groups = chunk.len().div_ceil(8);
            chunk.resize(groups * 8, 0);
            uleb(out, ((groups as u64) << 1) | 1);
            let mut acc: u128 = 0;
            let mut nbits = 0;
            for v in chunk {
                acc |= (v as u128) << nbits;
                nbits += bw;
                while nbits >= 8 {
                    out.push(acc as u8);
                    acc >>= 8;
                    nbits -= 8;
                }
            }
            assert_eq!(nbits, 0, "8 values of bw bits are bw bytes");
        }
    };
    while i < values.len() {
        let mut j = i;
        while j < values.len() && values[j] == values[i] {
            j += 1;
        }
        // Only start an RLE run on a group boundary of the pending values.
        if j - i >= min_rle && pending.len() % 8 == 0 {
            flush(&mut out, &mut pending);
            uleb(&mut out, ((j - i) as u64) << 1);
            let bytes = bw.div_ceil(8) as usize;
            out.extend_from_slice(&values[i].to_le_bytes()[..bytes]);
            i = j;
        } else {
            pending.push(values[i]);
            i += 1;
        }
    }
    flush(&mut out, &mut pending);
    out
}

fn uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn bit_width(max: u32) -> u32 {
    32 - max.leading_zeros()
}

fn plain_byte_arrays(values: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        out.extend_from_slice(v);
    }
    out
}

fn plain_bools(values: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; values.len().div_ceil(8)];
    for (i, &b) in values.iter().enumerate() {
        if b {
            out[i / 8] |= 1 << (i % 8);
        }
    }
    out
}

/// Small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

// ------------------------------------------------------------ device

struct Gpu {
    device: Device,
    stream: Stream,
    kernels: std::sync::Arc<KernelSet>,
    buffers: Vec<DeviceBuffer>,
}

impl Gpu {
    fn new() -> Gpu {
        assert!(
            driver::is_available(),
            "no usable GPU: {:?}",
            driver::ensure().err()
        );
        let device = Device::get(0).expect("device 0");
        // The kernel values as the GDSCAN_* variables say (h200.sh runs
        // these tests under several).
        let config = DecodeVars::from_env()
            .expect("valid GDSCAN_* variables")
            .kernels(KernelConfig::DEFAULT);
        let kernels = KernelSet::get(device, config).expect("kernels compile and load");
        Gpu {
            device,
            stream: Stream::new(device).unwrap(),
            kernels,
            buffers: Vec::new(),
        }
    }

    /// A device copy of `bytes` (at least 1 byte allocated); its address.
    fn upload(&mut self, bytes: &[u8]) -> u64 {
        let mut b = DeviceBuffer::new(self.device, bytes.len().max(16)).unwrap();
        b.fill(0xAB).unwrap();
        b.copy_from_host(0, bytes).unwrap();
        let p = b.device_ptr();
        self.buffers.push(b);
        p
    }

    /// `len` bytes filled with `byte`.
    fn alloc(&mut self, len: usize, byte: u8) -> u64 {
        let mut b = DeviceBuffer::new(self.device, len.max(16)).unwrap();
        b.fill(byte).unwrap();
        let p = b.device_ptr();
        self.buffers.push(b);
        p
    }

    fn download(&self, ptr: u64, len: usize) -> Vec<u8> {
        let b = self
            .buffers
            .iter()
            .find(|b| ptr >= b.device_ptr() && ptr + len as u64 <= b.device_ptr() + b.len() as u64)
            .expect("a buffer of ours");
        let mut out = vec![0u8; len];
        b.copy_to_host((ptr - b.device_ptr()) as usize, &mut out)
            .unwrap();
        out
    }

    /// Runs a row group's kernels over `tasks` and `dicts`; returns the tasks
    /// and dictionaries as the kernels left them, and the status array.
    fn run(
        &mut self,
        tasks: &[PageTask],
        dicts: &[DictTask],
    ) -> (
        Vec<PageTask>,
        Vec<DictTask>,
        Vec<TaskStatus>,
        Vec<TaskStatus>,
    ) {
        let t = self.upload(page_tasks_as_bytes(tasks));
        let d = if dicts.is_empty() {
            0
        } else {
            self.upload(dict_tasks_as_bytes(dicts))
        };
        let status_len = launch::status_bytes(tasks.len() as u32, dicts.len() as u32) as usize;
        let status = self.alloc(status_len, 0xEE);
        // The string walks as GDSCAN_STRING_WALKS says (h200.sh runs these
        // tests under each), with the spread walk's tables as the decoder
        // builds them: state and bitmaps filled with garbage.
        let walks = DecodeVars::from_env()
            .expect("valid GDSCAN_* variables")
            .string_walks
            .unwrap_or_default();
        let spread = if walks == StringWalks::Spread {
            let chunk = self.kernels.config().string_chunk;
            let items = dicts
                .iter()
                .map(|d| launch::SpreadItem::Dict {
                    data_len: d.data_len as u64,
                    count: d.count,
                })
                .chain(tasks.iter().map(|t| {
                    if t.kind == Kind::ByteArray as u32 && t.encoding == Encoding::Plain as u32 {
                        launch::SpreadItem::PlainPage {
                            data_len: t.data_len as u64,
                        }
                    } else {
                        launch::SpreadItem::Other
                    }
                }));
            let table = launch::SpreadTable::new(items, chunk);
            let first: Vec<u8> = table.first.iter().flat_map(|w| w.to_le_bytes()).collect();
            SpreadLaunch {
                first: self.upload(&first),
                n_chunks: table.n_chunks,
                state: self.alloc(table.state_bytes() as usize, 0xEE),
                bits: self.alloc(table.bitmap_bytes(chunk) as usize, 0xA5),
            }
        } else {
            SpreadLaunch::default()
        };
        let work = RowGroupLaunch {
            tasks: t,
            n_tasks: tasks.len() as u32,
            dicts: d,
            n_dicts: dicts.len() as u32,
            status,
            has_plain_byte_arrays: tasks
                .iter()
                .any(|t| t.kind == Kind::ByteArray as u32 && t.encoding == Encoding::Plain as u32),
            walks,
            spread,
            nest: Default::default(),
        };
        // SAFETY: every address in the tasks is one of our live buffers.
        unsafe { self.kernels.decode_row_group(&self.stream, &work) }.unwrap();
        self.stream.synchronize().unwrap();
        let mut out_tasks = tasks.to_vec();
        page_tasks_as_bytes_mut(&mut out_tasks)
            .copy_from_slice(&self.download(t, std::mem::size_of_val(tasks)));
        let mut out_dicts = dicts.to_vec();
        if !dicts.is_empty() {
            dict_tasks_as_bytes_mut(&mut out_dicts)
                .copy_from_slice(&self.download(d, std::mem::size_of_val(dicts)));
        }
        let (ps, ds) = parse_status(
            &self.download(status, status_len),
            tasks.len() as u32,
            dicts.len() as u32,
        )
        .unwrap();
        (out_tasks, out_dicts, ps, ds)
    }
}

/// Where a page's levels go.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    /// Required column: no levels.
    Required,
    /// DATA_PAGE v1: `[u32 len][levels][values]` in `data`.
    V1,
    /// DATA_PAGE v2: levels in their own buffer.
    V2,
}

/// Places a page (definition levels of a flat optional column, values
/// section) on the device and fills the task's input pointers and lengths.
fn place(gpu: &mut Gpu, task: &mut PageTask, layout: Layout, defined: &[bool], values: &[u8]) {
    task.num_values = defined.len() as u32;
    match layout {
        Layout::Required => {
            assert!(defined.iter().all(|&d| d));
            task.max_def = 0;
            task.data = gpu.upload(values);
            task.data_len = values.len() as u32;
        }
        Layout::V1 => {
            let levels: Vec<u32> = defined.iter().map(|&d| d as u32).collect();
            let enc = hybrid(&levels, 1);
            let mut data = (enc.len() as u32).to_le_bytes().to_vec();
            data.extend_from_slice(&enc);
            data.extend_from_slice(values);
            task.max_def = 1;
            task.flags |= FLAG_V1_LEVELS;
            task.data = gpu.upload(&data);
            task.data_len = data.len() as u32;
        }
        Layout::V2 => {
            let levels: Vec<u32> = defined.iter().map(|&d| d as u32).collect();
            let enc = hybrid_with(&levels, 1, usize::MAX);
            task.max_def = 1;
            task.def_levels = gpu.upload(&enc);
            task.def_len = enc.len() as u32;
            task.data = gpu.upload(values);
            task.data_len = values.len() as u32;
        }
    }
}

/// Offset of the values section inside `data` for the layout (v1 only has levels before it).
fn values_offset(task: &PageTask, gpu: &Gpu) -> u64 {
    if task.flags & FLAG_V1_LEVELS != 0 && task.max_def > 0 {
        let len = gpu.download(task.data, 4);
        4 + u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as u64
    } else {
        0
    }
}

fn fixed_task(rows: u32, conversion: Conversion, type_length: u32, out_width: u32) -> PageTask {
    PageTask {
        kind: Kind::Fixed as u32,
        encoding: Encoding::Plain as u32,
        conversion: conversion as u32,
        type_length,
        out_width,
        out_rows: rows,
        ..PageTask::default()
    }
}

fn random_defined(rng: &mut Rng, n: usize, null_per_mille: u64) -> Vec<bool> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        // Mix long runs (RLE) and scattered nulls (bit-packed).
        if rng.below(10) == 0 {
            let run = (rng.below(100) + 1) as usize;
            let v = rng.below(2) == 0;
            out.extend(std::iter::repeat_n(v, run.min(n - out.len())));
        } else {
            out.push(rng.below(1000) >= null_per_mille);
        }
    }
    out
}

fn bit(bitmap: &[u8], i: usize) -> bool {
    bitmap[i / 8] >> (i % 8) & 1 == 1
}

fn assert_ok(tasks: &[PageTask], status: &[TaskStatus]) {
    for (i, (t, s)) in tasks.iter().zip(status).enumerate() {
        assert_eq!(
            t.error,
            0,
            "page {i}: {:?} at {}",
            PageErrorCode::from_code(t.error),
            t.error_index
        );
        assert_eq!(s.error, 0, "page {i} status");
        assert_eq!(s.null_count, t.null_count);
        assert_eq!(s.count, t.value_count);
    }
}

// ------------------------------------------------------------ tests

/// Required INT32 and INT64 PLAIN: a plain copy, several tiles.
#[test]
#[ignore = "needs a GPU"]
fn plain_required_int32_int64() {
    let mut gpu = Gpu::new();
    let n = 5000u32;
    let v32: Vec<i32> = (0..n as i32).map(|i| i * 7 - 1000).collect();
    let v64: Vec<i64> = (0..n as i64).map(|i| i * 1_000_000_007 - 5).collect();
    let mut t32 = fixed_task(n, Conversion::Copy, 4, 4);
    place(
        &mut gpu,
        &mut t32,
        Layout::Required,
        &vec![true; n as usize],
        &v32.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
    );
    t32.out_values = gpu.alloc(n as usize * 4, 0xCD);
    let mut t64 = fixed_task(n, Conversion::Copy, 8, 8);
    place(
        &mut gpu,
        &mut t64,
        Layout::Required,
        &vec![true; n as usize],
        &v64.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
    );
    t64.out_values = gpu.alloc(n as usize * 8, 0xCD);
    let (tasks, _, status, _) = gpu.run(&[t32, t64], &[]);
    assert_ok(&tasks, &status);
    assert_eq!(tasks[0].value_count, n);
    assert_eq!(tasks[0].null_count, 0);
    let got32 = gpu.download(t32.out_values, n as usize * 4);
    let got64 = gpu.download(t64.out_values, n as usize * 8);
    assert_eq!(
        got32,
        v32.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()
    );
    assert_eq!(
        got64,
        v64.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()
    );
}

/// Optional INT64 PLAIN, v1 (unaligned values after the levels) and v2,
/// random nulls, two pages one after the other in one output column (the
/// second at an out_row that is not a multiple of 32).
#[test]
#[ignore = "needs a GPU"]
fn plain_optional_v1_v2_with_nulls() {
    let mut gpu = Gpu::new();
    let mut rng = Rng(42);
    let sizes = [3001usize, 2500];
    let rows: usize = sizes.iter().sum();
    let out = gpu.alloc(rows * 8, 0xCD);
    let validity = gpu.alloc(launch::bitmap_bytes(rows as u64) as usize, 0);
    let mut tasks = Vec::new();
    let mut expected: Vec<Option<i64>> = Vec::new();
    for (p, (&size, layout)) in sizes.iter().zip([Layout::V1, Layout::V2]).enumerate() {
        let defined = random_defined(&mut rng, size, 300);
        let values: Vec<i64> = defined
            .iter()
            .filter(|&&d| d)
            .map(|_| rng.next() as i64)
            .collect();
        let mut it = values.iter();
        expected.extend(
            defined
                .iter()
                .map(|&d| if d { it.next().copied() } else { None }),
        );
        let mut t = fixed_task(rows as u32, Conversion::Copy, 8, 8);
        place(
            &mut gpu,
            &mut t,
            layout,
            &defined,
            &values
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<_>>(),
        );
        t.out_values = out;
        t.out_validity = validity;
        t.out_row = if p == 0 { 0 } else { sizes[0] as u32 };
        tasks.push(t);
    }
    let (done, _, status, _) = gpu.run(&tasks, &[]);
    assert_ok(&done, &status);
    let values = gpu.download(out, rows * 8);
    let bits = gpu.download(validity, launch::bitmap_bytes(rows as u64) as usize);
    for (r, e) in expected.iter().enumerate() {
        let got = i64::from_le_bytes(values[r * 8..r * 8 + 8].try_into().unwrap());
        match e {
            Some(v) => {
                assert!(bit(&bits, r), "row {r} valid");
                assert_eq!(got, *v, "row {r}");
            }
            None => {
                assert!(!bit(&bits, r), "row {r} null");
                assert_eq!(got, 0, "null row {r} zeroed");
            }
        }
    }
    // Bits past the last row stay zero.
    for r in rows..bits.len() * 8 {
        assert!(!bit(&bits, r));
    }
    let nulls = expected.iter().filter(|e| e.is_none()).count() as u32;
    assert_eq!(done[0].null_count + done[1].null_count, nulls);
}

/// Dictionary INT32 (bit-packed and RLE index runs, several bit widths),
/// optional v1, with narrowing and decimal conversions from the same pages.
#[test]
#[ignore = "needs a GPU"]
fn dictionary_fixed_with_conversions() {
    let mut gpu = Gpu::new();
    let mut rng = Rng(7);
    let dict_vals: Vec<i32> = (0..300i32).map(|i| i * 7919 - 150_000).collect();
    let dict_bytes: Vec<u8> = dict_vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let dict = gpu.upload(&dict_bytes);
    let n = 4100usize;
    let defined = random_defined(&mut rng, n, 200);
    let indices: Vec<u32> = defined
        .iter()
        .filter(|&&d| d)
        .map(|_| {
            if rng.below(4) == 0 {
                5
            } else {
                rng.below(dict_vals.len() as u64) as u32
            }
        })
        .collect();
    let bw = bit_width(dict_vals.len() as u32 - 1);
    let mut values = vec![bw as u8];
    values.extend(hybrid(&indices, bw));
    let expected: Vec<Option<i32>> = {
        let mut it = indices.iter();
        defined
            .iter()
            .map(|&d| {
                if d {
                    it.next().map(|&i| dict_vals[i as usize])
                } else {
                    None
                }
            })
            .collect()
    };
    let mut tasks = Vec::new();
    let convs = [
        (Conversion::Copy, 4u32),
        (Conversion::I32To8, 1),
        (Conversion::I32To16, 2),
        (Conversion::I32ToDecimal128, 16),
    ];
    for (conv, width) in convs {
        let mut t = fixed_task(n as u32, conv, 4, width);
        t.encoding = Encoding::Dictionary as u32;
        place(&mut gpu, &mut t, Layout::V1, &defined, &values);
        t.dict = dict;
        t.dict_count = dict_vals.len() as u32;
        t.dict_len = dict_bytes.len() as u32;
        t.out_values = gpu.alloc(n * width as usize, 0xCD);
        tasks.push(t);
    }
    let (done, _, status, _) = gpu.run(&tasks, &[]);
    assert_ok(&done, &status);
    for (t, (conv, width)) in tasks.iter().zip(convs) {
        let w = width as usize;
        let got = gpu.download(t.out_values, n * w);
        for (r, e) in expected.iter().enumerate() {
            let slot = &got[r * w..r * w + w];
            let want: Vec<u8> = match (e, conv) {
                (None, _) => vec![0; w],
                (Some(v), Conversion::Copy) => v.to_le_bytes().to_vec(),
                (Some(v), Conversion::I32To8) => vec![*v as u8],
                (Some(v), Conversion::I32To16) => (*v as i16).to_le_bytes().to_vec(),
                (Some(v), Conversion::I32ToDecimal128) => (*v as i128).to_le_bytes().to_vec(),
                _ => unreachable!(),
            };
            assert_eq!(slot, &want[..], "{conv:?} row {r}");
        }
    }
}

/// INT64 → Decimal128, FLBA big-endian → Decimal128 (lengths 1..16), FLBA
/// copy of 3 bytes: PLAIN, required.
#[test]
#[ignore = "needs a GPU"]
fn decimals_and_flba() {
    let mut gpu = Gpu::new();
    let mut rng = Rng(99);
    let n = 1500usize;
    // INT64 decimals.
    let v64: Vec<i64> = (0..n).map(|_| rng.next() as i64 >> rng.below(60)).collect();
    let mut t64 = fixed_task(n as u32, Conversion::I64ToDecimal128, 8, 16);
    place(
        &mut gpu,
        &mut t64,
        Layout::Required,
        &vec![true; n],
        &v64.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
    );
    t64.out_values = gpu.alloc(n * 16, 0xCD);
    let mut tasks = vec![t64];
    let mut expected: Vec<Vec<u8>> = vec![v64
        .iter()
        .flat_map(|v| (*v as i128).to_le_bytes())
        .collect()];
    // FLBA decimals of every length, signs mixed.
    for len in 1..=16usize {
        let vals: Vec<i128> = (0..n)
            .map(|_| {
                let raw = ((rng.next() as u128) << 64 | rng.next() as u128) as i128;
                raw >> (128 - 8 * len as u32) // a value that fits `len` bytes, sign-extended
            })
            .collect();
        let bytes: Vec<u8> = vals
            .iter()
            .flat_map(|v| v.to_be_bytes()[16 - len..].to_vec())
            .collect();
        let mut t = fixed_task(n as u32, Conversion::BeToDecimal128, len as u32, 16);
        place(&mut gpu, &mut t, Layout::Required, &vec![true; n], &bytes);
        t.out_values = gpu.alloc(n * 16, 0xCD);
        tasks.push(t);
        expected.push(vals.iter().flat_map(|v| v.to_le_bytes()).collect());
    }
    // FLBA(3) copy, optional v2.
    let defined: Vec<bool> = (0..n).map(|i| i % 5 != 0).collect();
    let raw: Vec<[u8; 3]> = defined
        .iter()
        .filter(|&&d| d)
        .map(|_| {
            let x = rng.next();
            [x as u8, (x >> 8) as u8, (x >> 16) as u8]
        })
        .collect();
    let mut t = fixed_task(n as u32, Conversion::Copy, 3, 3);
    place(&mut gpu, &mut t, Layout::V2, &defined, &raw.concat());
    t.out_values = gpu.alloc(n * 3 + 16, 0xCD);
    tasks.push(t);
    let mut it = raw.iter();
    expected.push(
        defined
            .iter()
            .flat_map(|&d| {
                if d {
                    it.next().unwrap().to_vec()
                } else {
                    vec![0; 3]
                }
            })
            .collect(),
    );

    let (done, _, status, _) = gpu.run(&tasks, &[]);
    assert_ok(&done, &status);
    for (i, (t, e)) in tasks.iter().zip(&expected).enumerate() {
        assert_eq!(&gpu.download(t.out_values, e.len()), e, "task {i}");
    }
}

/// Booleans PLAIN and RLE, optional, into one bitmap from two pages at an
/// unaligned boundary.
#[test]
#[ignore = "needs a GPU"]
fn booleans_plain_and_rle() {
    let mut gpu = Gpu::new();
    let mut rng = Rng(5);
    let sizes = [2077usize, 3000];
    let rows: usize = sizes.iter().sum();
    let out = gpu.alloc(launch::bitmap_bytes(rows as u64) as usize, 0);
    let validity = gpu.alloc(launch::bitmap_bytes(rows as u64) as usize, 0);
    let mut tasks = Vec::new();
    let mut expected: Vec<Option<bool>> = Vec::new();
    for (p, &size) in sizes.iter().enumerate() {
        let defined = random_defined(&mut rng, size, 250);
        let vals: Vec<bool> = defined
            .iter()
            .filter(|&&d| d)
            .enumerate()
            .map(|(i, _)| {
                if (i / 40) % 2 == 0 {
                    true
                } else {
                    rng.below(2) == 0
                }
            })
            .collect();
        let mut it = vals.iter();
        expected.extend(
            defined
                .iter()
                .map(|&d| if d { it.next().copied() } else { None }),
        );
        let (encoding, section) = if p == 0 {
            (Encoding::Plain, plain_bools(&vals))
        } else {
            let enc = hybrid(&vals.iter().map(|&b| b as u32).collect::<Vec<_>>(), 1);
            let mut s = (enc.len() as u32).to_le_bytes().to_vec();
            s.extend(enc);
            (Encoding::Rle, s)
        };
        let mut t = PageTask {
            kind: Kind::Boolean as u32,
            encoding: encoding as u32,
            out_rows: rows as u32,
            out_row: if p == 0 { 0 } else { sizes[0] as u32 },
            out_values: out,
            out_validity: validity,
            ..PageTask::default()
        };
        place(
            &mut gpu,
            &mut t,
            if p == 0 { Layout::V1 } else { Layout::V2 },
            &defined,
            &section,
        );
        tasks.push(t);
    }
    let (done, _, status, _) = gpu.run(&tasks, &[]);
    assert_ok(&done, &status);
    let vb = gpu.download(out, launch::bitmap_bytes(rows as u64) as usize);
    let nb = gpu.download(validity, launch::bitmap_bytes(rows as u64) as usize);
    for (r, e) in expected.iter().enumerate() {
        assert_eq!(bit(&nb, r), e.is_some(), "validity row {r}");
        assert_eq!(bit(&vb, r), e.unwrap_or(false), "value row {r}");
    }
}

fn view_of(bytes: &[u8], buffer_index: u32, offset: u64) -> [u8; 16] {
    let mut v = [0u8; 16];
    v[..4].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
    if bytes.len() <= 12 {
        v[4..4 + bytes.len()].copy_from_slice(bytes);
    } else {
        v[4..8].copy_from_slice(&bytes[..4]);
        v[8..12].copy_from_slice(&buffer_index.to_le_bytes());
        v[12..16].copy_from_slice(&(offset as u32).to_le_bytes());
    }
    v
}

fn random_string(rng: &mut Rng) -> Vec<u8> {
    let len = match rng.below(4) {
        0 => 0,
        1 => rng.below(13),
        2 => 13 + rng.below(20),
        _ => rng.below(200),
    } as usize;
    (0..len).map(|_| b'a' + rng.below(26) as u8).collect()
}

/// PLAIN byte arrays → views (walk + decode), optional v1 (the values start
/// after the levels) and required, short and long values.
#[test]
#[ignore = "needs a GPU"]
fn byte_arrays_plain_views() {
    let mut gpu = Gpu::new();
    let mut rng = Rng(11);
    let mut tasks = Vec::new();
    let mut expected = Vec::new();
    for (p, layout) in [Layout::V1, Layout::Required].into_iter().enumerate() {
        let n = 2600usize;
        let defined = if layout == Layout::Required {
            vec![true; n]
        } else {
            random_defined(&mut rng, n, 200)
        };
        let strings: Vec<Vec<u8>> = defined
            .iter()
            .filter(|&&d| d)
            .map(|_| random_string(&mut rng))
            .collect();
        let refs: Vec<&[u8]> = strings.iter().map(|s| s.as_slice()).collect();
        let section = plain_byte_arrays(&refs);
        let mut t = PageTask {
            kind: Kind::ByteArray as u32,
            encoding: Encoding::Plain as u32,
            out_rows: n as u32,
            view_buffer_index: 3 + p as u32,
            ..PageTask::default()
        };
        place(&mut gpu, &mut t, layout, &defined, &section);
        t.view_buffer_base = t.data;
        let scratch = launch::scratch_bytes(Kind::ByteArray, Encoding::Plain, n as u32, 0);
        t.scratch = gpu.alloc(scratch as usize, 0xFF);
        t.scratch_len = scratch as u32;
        t.out_values = gpu.alloc(n * 16, 0xCD);
        if layout == Layout::V1 {
            t.out_validity = gpu.alloc(launch::bitmap_bytes(n as u64) as usize, 0);
        }
        let start = values_offset(&t, &gpu);
        let mut pos = start;
        let mut it = strings.iter();
        let views: Vec<[u8; 16]> = defined
            .iter()
            .map(|&d| {
                if !d {
                    return [0u8; 16];
                }
                let s = it.next().unwrap();
                let v = view_of(s, t.view_buffer_index, pos + 4);
                pos += 4 + s.len() as u64;
                v
            })
            .collect();
        expected.push(views);
        tasks.push(t);
    }
    let (done, _, status, _) = gpu.run(&tasks, &[]);
    assert_ok(&done, &status);
    for (t, views) in tasks.iter().zip(&expected) {
        let got = gpu.download(t.out_values, views.len() * 16);
        for (r, v) in views.iter().enumerate() {
            assert_eq!(&got[r * 16..r * 16 + 16], v, "row {r}");
        }
    }
    assert!(done.iter().all(|t| t.plain_count == t.value_count));
}

/// Dictionary byte arrays: the dictionary's views (gds_dict_views), then
/// pages gathering them.
#[test]
#[ignore = "needs a GPU"]
fn byte_arrays_dictionary_views() {
    let mut gpu = Gpu::new();
    let mut rng = Rng(13);
    let entries: Vec<Vec<u8>> = (0..500).map(|_| random_string(&mut rng)).collect();
    let refs: Vec<&[u8]> = entries.iter().map(|s| s.as_slice()).collect();
    let dict_page = plain_byte_arrays(&refs);
    let dict_data = gpu.upload(&dict_page);
    let views = gpu.alloc(
        launch::dict_view_bytes(entries.len() as u32, launch::VIEW_BYTES as u32) as usize,
        0xCD,
    );
    let dtask = DictTask {
        data: dict_data,
        data_len: dict_page.len() as u32,
        count: entries.len() as u32,
        out_views: views,
        view_buffer_base: dict_data,
        view_buffer_index: 1,
        ..DictTask::default()
    };
    let mut offsets = Vec::new();
    let mut pos = 0u64;
    for e in &entries {
        offsets.push(pos + 4);
        pos += 4 + e.len() as u64;
    }
    let n = 3333usize;
    let defined = random_defined(&mut rng, n, 100);
    let indices: Vec<u32> = defined
        .iter()
        .filter(|&&d| d)
        .map(|_| rng.below(entries.len() as u64) as u32)
        .collect();
    let bw = bit_width(entries.len() as u32 - 1);
    let mut section = vec![bw as u8];
    section.extend(hybrid(&indices, bw));
    let mut t = PageTask {
        kind: Kind::ByteArray as u32,
        encoding: Encoding::Dictionary as u32,
        out_rows: n as u32,
        dict: views,
        dict_count: entries.len() as u32,
        dict_len: launch::dict_view_bytes(entries.len() as u32, launch::VIEW_BYTES as u32) as u32,
        ..PageTask::default()
    };
    place(&mut gpu, &mut t, Layout::V2, &defined, &section);
    t.out_values = gpu.alloc(n * 16, 0xCD);
    t.out_validity = gpu.alloc(launch::bitmap_bytes(n as u64) as usize, 0);
    let (done, ddone, status, dstatus) = gpu.run(&[t], &[dtask]);
    assert_ok(&done, &status);
    assert_eq!(ddone[0].error, 0);
    assert_eq!(ddone[0].found, entries.len() as u32);
    assert_eq!(dstatus[0].count, entries.len() as u32);
    let dict_views = gpu.download(views, entries.len() * 16);
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(
            &dict_views[i * 16..i * 16 + 16],
            &view_of(e, 1, offsets[i]),
            "entry {i}"
        );
    }
    let got = gpu.download(t.out_values, n * 16);
    let mut it = indices.iter();
    for (r, &d) in defined.iter().enumerate() {
        let want = if d {
            let i = *it.next().unwrap() as usize;
            view_of(&entries[i], 1, offsets[i])
        } else {
            [0u8; 16]
        };
        assert_eq!(&got[r * 16..r * 16 + 16], &want, "row {r}");
    }
}

/// Levels only: validity and the row of every value.
#[test]
#[ignore = "needs a GPU"]
fn levels_row_map() {
    let mut gpu = Gpu::new();
    let mut rng = Rng(17);
    let n = 7000usize;
    let defined = random_defined(&mut rng, n, 400);
    let mut t = PageTask {
        kind: Kind::Levels as u32,
        out_rows: n as u32 + 10,
        out_row: 10,
        ..PageTask::default()
    };
    place(&mut gpu, &mut t, Layout::V2, &defined, &[]);
    let scratch = launch::scratch_bytes(Kind::Levels, Encoding::Plain, n as u32, 0);
    t.scratch = gpu.alloc(scratch as usize, 0xFF);
    t.scratch_len = scratch as u32;
    t.out_validity = gpu.alloc(launch::bitmap_bytes(n as u64 + 10) as usize, 0);
    let (done, _, status, _) = gpu.run(&[t], &[]);
    assert_ok(&done, &status);
    let rows: Vec<u32> = defined
        .iter()
        .enumerate()
        .filter(|(_, &d)| d)
        .map(|(i, _)| i as u32 + 10)
        .collect();
    assert_eq!(done[0].value_count as usize, rows.len());
    let map = gpu.download(t.scratch, rows.len() * 4);
    let got: Vec<u32> = map
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, rows);
    let bits = gpu.download(t.out_validity, launch::bitmap_bytes(n as u64 + 10) as usize);
    for r in 0..n + 10 {
        assert_eq!(bit(&bits, r), r >= 10 && defined[r - 10], "row {r}");
    }
}

/// Corrupt pages give their typed error code, the others still decode.
#[test]
#[ignore = "needs a GPU"]
fn corrupt_pages_report_errors() {
    let mut gpu = Gpu::new();
    let n = 100usize;
    let dict_bytes: Vec<u8> = (0..10i32).flat_map(|v| v.to_le_bytes()).collect();
    let dict = gpu.upload(&dict_bytes);
    let dict_page = |indices: &[u32], bw: u32| {
        let mut s = vec![bw as u8];
        s.extend(hybrid(indices, bw));
        s
    };
    let mut cases: Vec<(PageTask, Option<PageErrorCode>)> = Vec::new();
    let base =
        |gpu: &mut Gpu, layout: Layout, defined: &[bool], values: &[u8], encoding: Encoding| {
            let mut t = fixed_task(n as u32, Conversion::Copy, 4, 4);
            t.encoding = encoding as u32;
            place(gpu, &mut t, layout, defined, values);
            t.out_values = gpu.alloc(n * 4, 0);
            t.dict = dict;
            t.dict_count = 10;
            t.dict_len = dict_bytes.len() as u32;
            t
        };
    let all = vec![true; n];
    // A good page.
    let good = base(
        &mut gpu,
        Layout::Required,
        &all,
        &dict_page(&vec![3; n], 4),
        Encoding::Dictionary,
    );
    cases.push((good, None));
    // An index past the dictionary.
    let mut idx = vec![1u32; n];
    idx[57] = 12;
    cases.push((
        base(
            &mut gpu,
            Layout::Required,
            &all,
            &dict_page(&idx, 4),
            Encoding::Dictionary,
        ),
        Some(PageErrorCode::DictIndex),
    ));
    // Bit width 33.
    cases.push((
        base(
            &mut gpu,
            Layout::Required,
            &all,
            &[33, 0, 0, 0],
            Encoding::Dictionary,
        ),
        Some(PageErrorCode::BitWidth),
    ));
    // Too few index values (stream cut).
    let cut = dict_page(&(0..n as u32).map(|i| i % 10).collect::<Vec<_>>(), 4);
    cases.push((
        base(
            &mut gpu,
            Layout::Required,
            &all,
            &cut[..cut.len() / 2],
            Encoding::Dictionary,
        ),
        Some(PageErrorCode::ValuesOverrun),
    ));
    // PLAIN too short.
    cases.push((
        base(
            &mut gpu,
            Layout::Required,
            &all,
            &[0u8; 4 * 99],
            Encoding::Plain,
        ),
        Some(PageErrorCode::ValuesOverrun),
    ));
    // v1 level length past the page.
    let mut t = base(&mut gpu, Layout::V1, &all, &[0u8; 400], Encoding::Plain);
    let mut data = gpu.download(t.data, t.data_len as usize);
    data[..4].copy_from_slice(&10_000u32.to_le_bytes());
    t.data = gpu.upload(&data);
    cases.push((t, Some(PageErrorCode::LevelsLength)));
    // Levels ending early (v2 levels cut).
    let mut t = base(&mut gpu, Layout::V2, &all, &[0u8; 400], Encoding::Plain);
    t.def_len = 1;
    cases.push((t, Some(PageErrorCode::LevelsOverrun)));
    // A level above max_def (bit width 1 cannot say 2; max_def 1 levels from a 2-bit stream read as bw 1 stay ≤ 1,
    // so use max_def 2 → bw 2 with a level of 3).
    let mut t = base(&mut gpu, Layout::V2, &all, &[0u8; 400], Encoding::Plain);
    let lv = hybrid(&vec![3u32; n], 2);
    t.def_levels = gpu.upload(&lv);
    t.def_len = lv.len() as u32;
    t.max_def = 2;
    cases.push((t, Some(PageErrorCode::BadLevel)));
    // Output range.
    let mut t = base(
        &mut gpu,
        Layout::Required,
        &all,
        &[0u8; 400],
        Encoding::Plain,
    );
    t.out_row = 1;
    cases.push((t, Some(PageErrorCode::OutputRange)));
    // Bad conversion.
    let mut t = base(
        &mut gpu,
        Layout::Required,
        &all,
        &[0u8; 400],
        Encoding::Plain,
    );
    t.out_width = 8;
    cases.push((t, Some(PageErrorCode::BadConversion)));
    // Byte-array PLAIN with a lying length: fewer values than defined levels.
    let mut section = plain_byte_arrays(&[&b"abc"[..]; 99]);
    section.extend_from_slice(&1000u32.to_le_bytes());
    let mut t = PageTask {
        kind: Kind::ByteArray as u32,
        encoding: Encoding::Plain as u32,
        out_rows: n as u32,
        ..PageTask::default()
    };
    place(&mut gpu, &mut t, Layout::Required, &all, &section);
    t.view_buffer_base = t.data;
    let scratch = launch::scratch_bytes(Kind::ByteArray, Encoding::Plain, n as u32, 0);
    t.scratch = gpu.alloc(scratch as usize, 0);
    t.scratch_len = scratch as u32;
    t.out_values = gpu.alloc(n * 16, 0);
    cases.push((t, Some(PageErrorCode::ValuesOverrun)));

    let tasks: Vec<PageTask> = cases.iter().map(|c| c.0).collect();
    // A dictionary that announces more entries than it holds.
    let short_dict = plain_byte_arrays(&[&b"x"[..], &b"y"[..]]);
    let dtask = DictTask {
        data: gpu.upload(&short_dict),
        data_len: short_dict.len() as u32,
        count: 3,
        out_views: gpu.alloc(48, 0),
        ..DictTask::default()
    };
    let (done, ddone, status, dstatus) = gpu.run(&tasks, &[dtask]);
    for (i, ((t, s), (_, want))) in done.iter().zip(&status).zip(&cases).enumerate() {
        assert_eq!(PageErrorCode::from_code(t.error), *want, "case {i}");
        assert_eq!(s.error, t.error, "case {i} status");
    }
    assert_eq!(done[1].error_index, 57);
    assert_eq!(
        PageErrorCode::from_code(ddone[0].error),
        Some(PageErrorCode::DictOverrun)
    );
    assert_eq!(ddone[0].found, 2);
    assert_eq!(dstatus[0].error, PageErrorCode::DictOverrun as u32);
    let good = gpu.download(done[0].out_values, n * 4);
    assert!(good.chunks_exact(4).all(|c| c == 3i32.to_le_bytes()));
}

/// Many pages in one launch, mixed kinds, random sizes (tiles, partial
/// tiles, empty pages): everything matches a CPU decode.
#[test]
#[ignore = "needs a GPU"]
fn many_mixed_pages() {
    let mut gpu = Gpu::new();
    let mut rng = Rng(2024);
    let mut tasks = Vec::new();
    let mut expected: Vec<(u64, Vec<u8>)> = Vec::new();
    for p in 0..200 {
        let n = match p % 4 {
            0 => 0,
            1 => rng.below(50) as usize + 1,
            _ => rng.below(25_000) as usize + 1,
        };
        let layout = [Layout::Required, Layout::V1, Layout::V2][p % 3];
        let null_per_mille = rng.below(1000);
        let defined = if layout == Layout::Required {
            vec![true; n]
        } else {
            random_defined(&mut rng, n, null_per_mille)
        };
        let values: Vec<u32> = defined
            .iter()
            .filter(|&&d| d)
            .map(|_| rng.next() as u32)
            .collect();
        let mut t = fixed_task(n as u32, Conversion::Copy, 4, 4);
        place(
            &mut gpu,
            &mut t,
            layout,
            &defined,
            &values
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<_>>(),
        );
        t.out_values = gpu.alloc(n * 4, 0xCD);
        let mut it = values.iter();
        let want: Vec<u8> = defined
            .iter()
            .flat_map(|&d| {
                if d {
                    it.next().unwrap().to_le_bytes()
                } else {
                    [0; 4]
                }
            })
            .collect();
        expected.push((t.out_values, want));
        tasks.push(t);
    }
    let (done, _, status, _) = gpu.run(&tasks, &[]);
    assert_ok(&done, &status);
    for (i, (ptr, want)) in expected.iter().enumerate() {
        assert_eq!(&gpu.download(*ptr, want.len()), want, "page {i}");
    }
}

/// The kernels' resources on this device, for the record (registers, spills).
#[test]
#[ignore = "needs a GPU"]
fn report_kernel_resources() {
    let gpu = Gpu::new();
    eprintln!("target {}", gpu.kernels.target());
    for (name, f) in gpu.kernels.functions() {
        eprintln!(
            "{name}: {} registers, {} B static shared, {} B local",
            f.registers().unwrap(),
            f.static_shared_bytes().unwrap(),
            f.local_bytes().unwrap()
        );
        assert!(f.registers().unwrap() > 0, "{name}: no registers reported");
    }
}

/// The encoder itself, checked on the CPU against arrow-rs-free hand values
/// (runs here too, not only on the GPU).
#[test]
fn tiny_encoder_round_trips() {
    // 8 equal values: one RLE run.
    assert_eq!(hybrid(&[1; 8], 1), vec![16, 1]);
    // 8 alternating: one bit-packed group.
    assert_eq!(hybrid(&[1, 0, 1, 0, 1, 0, 1, 0], 1), vec![3, 0b0101_0101]);
    assert_eq!(hybrid_with(&[1; 8], 1, usize::MAX), vec![3, 0xFF]);
    assert_eq!(bit_width(0), 0);
    assert_eq!(bit_width(1), 1);
    assert_eq!(bit_width(299), 9);
    let mut b = Vec::new();
    uleb(&mut b, 300);
    assert_eq!(b, vec![0xAC, 0x02]);
    assert_eq!(plain_bools(&[true, false, true]), vec![0b101]);
}
