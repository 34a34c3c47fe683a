//! The filter evaluator (`filter_eval.cu`) under CPU emulation against the
//! host evaluator: random batches of every column type the GPU filter
//! reads (`filter_cases.rs`), with offsets into their buffers, and random
//! predicates compiled by `GpuPredicate::compile`; the kernel's mask must
//! be `Predicate::evaluate`'s, row for row. A predicate the host rejects
//! must be rejected by `compile` too, and none the host takes may be
//! refused. Corrupted programs must end with the kernel's error bit and
//! keep no row they fail on.

use std::collections::HashMap;

use arrow::array::ArrayRef;
use gdscan::decode::array::{DeviceBatch, DeviceBytes, DeviceColumn, MemoryLocation};
use gdscan::decode::filter::column_table::ColumnTable;
use gdscan::decode::filter::{FilterError, GpuPredicate};

use super::filter_cases::{columns, predicate, schema, sliced_batch, struct_fields, Columns, Rng};
use super::{build, run_with_files};

/// One flat device column over `array`'s whole buffers, starting at
/// `offset`, `rows` long.
fn flat(array: &ArrayRef, offset: usize, rows: usize) -> DeviceColumn {
    let data = array.to_data();
    assert_eq!(data.offset(), 0);
    if *data.data_type() == arrow::datatypes::DataType::Null {
        return DeviceColumn::nulls(rows);
    }
    let validity = data.nulls().map(|n| {
        assert_eq!(n.offset(), 0);
        DeviceBytes::host(n.buffer().as_slice())
    });
    let buffers = data
        .buffers()
        .iter()
        .map(|b| DeviceBytes::host(b.as_slice()))
        .collect();
    DeviceColumn::with_offset(
        data.data_type().clone(),
        offset,
        rows,
        None,
        validity,
        buffers,
    )
    .unwrap()
}

/// The device batch (host memory) of rows `offset..offset + rows` of `c`,
/// each column starting `offset` values into its buffers.
fn device_batch(
    c: &Columns,
    offset: usize,
    rows: usize,
    nulls: Option<&arrow::buffer::NullBuffer>,
) -> DeviceBatch {
    let mut cols: Vec<DeviceColumn> = c.arrays[..20]
        .iter()
        .map(|a| flat(a, offset, rows))
        .collect();
    let children = c.arrays[20..]
        .iter()
        .map(|a| flat(a, offset, rows))
        .collect();
    let validity = nulls.map(|n| DeviceBytes::host(n.buffer().as_slice()));
    cols.push(
        DeviceColumn::with_children(
            arrow::datatypes::DataType::Struct(struct_fields()),
            rows,
            None,
            validity,
            vec![],
            children,
        )
        .unwrap(),
    );
    DeviceBatch::try_new(schema(), rows, cols, MemoryLocation::CPU, None).unwrap()
}

/// The bytes of every buffer of `batch`, each at a 16-byte boundary of one
/// blob, and where each host range went.
struct Blob {
    bytes: Vec<u8>,
    ranges: Vec<(u64, u64, u64)>,
}

impl Blob {
    fn new(batch: &DeviceBatch) -> Blob {
        let mut blob = Blob {
            bytes: Vec::new(),
            ranges: Vec::new(),
        };
        for column in batch.columns() {
            for b in column.all_buffers() {
                blob.bytes.resize(blob.bytes.len().next_multiple_of(16), 0);
                let at = blob.bytes.len() as u64;
                // SAFETY: the batch is in host memory (`DeviceBytes::host`):
                // `address()..address() + len()` is a live, unchanging
                // allocation while `batch` lives.
                let bytes =
                    unsafe { std::slice::from_raw_parts(b.address() as *const u8, b.len()) };
                blob.bytes.extend_from_slice(bytes);
                blob.ranges.push((b.address(), b.len() as u64, at));
            }
        }
        blob
    }

    /// `address` as 1 + its offset in the blob (0 stays 0).
    fn place(&self, address: u64) -> u64 {
        if address == 0 {
            return 0;
        }
        let (start, _, at) = self
            .ranges
            .iter()
            .find(|(s, l, _)| *s <= address && address <= s + l)
            .unwrap_or_else(|| panic!("address {address:#x} in no buffer"));
        1 + at + (address - start)
    }

    fn remap(&self, table: &mut ColumnTable) {
        for c in &mut table.columns {
            c.values = self.place(c.values);
            for v in &mut c.validity {
                v.address = self.place(v.address);
            }
        }
        for (a, _) in &mut table.buffers {
            *a = self.place(*a);
        }
    }
}

fn push_u32(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&u32::try_from(v).unwrap().to_le_bytes());
}

/// One case of the harness's input.
fn write_case(
    out: &mut Vec<u8>,
    rows: usize,
    program: &[u8],
    table: &ColumnTable,
    literals: &[u8],
    blob: &[u8],
) {
    push_u32(out, rows);
    push_u32(out, program.len() / 16);
    out.extend_from_slice(program);
    push_u32(out, table.columns.len());
    out.extend_from_slice(&table.column_bytes());
    push_u32(out, table.buffers.len());
    out.extend_from_slice(&table.buffer_bytes());
    push_u32(out, literals.len());
    out.extend_from_slice(literals);
    out.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    out.extend_from_slice(blob);
}

/// What a case expects: the host's mask, or (corrupt programs) a mask of
/// 0s and 1s, and, for `structural` ones (that never leave one value), the
/// error bit and no row kept.
enum Expect {
    Mask(Vec<bool>, String),
    Corrupt { rows: usize, structural: bool },
}

/// A case's program with one word changed.
fn corrupt(rng: &mut Rng, program: &[u8]) -> Vec<u8> {
    let mut p = program.to_vec();
    let words = p.len() / 4;
    let w = rng.below(words);
    let v: u32 = match rng.below(4) {
        0 => rng.next() as u32,
        1 => rng.below(12) as u32,
        2 => u32::MAX,
        _ => (rng.below(12) as u32) | (rng.below(8) as u32) << 8,
    };
    p[4 * w..4 * w + 4].copy_from_slice(&v.to_le_bytes());
    p
}

#[test]
fn filter_eval_under_cpu_emulation_is_the_host_evaluator() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("filter_eval_emu.cpp", dir.path()) else {
        return;
    };
    let mut rng = Rng(0x5eed_f11e);
    let mut input = Vec::new();
    let mut expects = Vec::new();
    let (mut rejected, mut true_rows, mut all_rows) = (0, 0, 0);
    let mut kinds: HashMap<&'static str, usize> = HashMap::new();
    while expects.len() < 700 {
        let rows = rng.pick(&[0usize, 1, 7, 33, 64, 65, 130, 200]);
        let offset = rng.pick(&[0usize, 0, 1, 3, 8, 13]);
        let cols = columns(&mut rng, rows + offset);
        let nulls = super::filter_cases::struct_nulls(&mut rng, rows);
        let batch = sliced_batch(&cols, offset, rows, nulls.clone());
        let device = device_batch(&cols, offset, rows, nulls.as_ref());
        let blob = Blob::new(&device);
        for _ in 0..4 {
            let p = predicate(&mut rng, 4);
            let host = p.evaluate(&batch);
            let compiled = GpuPredicate::compile(&p, &schema());
            let g = match (host, compiled) {
                (Err(_), Err(FilterError::Predicate(_))) => {
                    rejected += 1;
                    continue;
                }
                (Ok(mask), Ok(g)) => {
                    let mask: Vec<bool> = (0..rows).map(|i| mask.value(i)).collect();
                    true_rows += mask.iter().filter(|b| **b).count();
                    all_rows += rows;
                    expects.push(Expect::Mask(mask, p.to_string()));
                    g
                }
                (h, c) => panic!("{p}: host {h:?}, compile {c:?}"),
            };
            *kinds
                .entry(if g.stack_depth() > 2 {
                    "deep"
                } else {
                    "shallow"
                })
                .or_default() += 1;
            let mut table = g.column_table(&device).unwrap();
            blob.remap(&mut table);
            write_case(
                &mut input,
                rows,
                &g.program_bytes(),
                &table,
                g.literal_bytes(),
                &blob.bytes,
            );
            if rows > 0 && rng.pct(10) {
                let bad = corrupt(&mut rng, &g.program_bytes());
                write_case(
                    &mut input,
                    rows,
                    &bad,
                    &table,
                    g.literal_bytes(),
                    &blob.bytes,
                );
                expects.push(Expect::Corrupt {
                    rows,
                    structural: false,
                });
            }
        }
    }
    // Programs that end with other than one value: always the error bit.
    let schema_ = schema();
    let g = GpuPredicate::compile(&gdscan::parquet::Predicate::all(), &schema_).unwrap();
    let empty = ColumnTable::default();
    let and = 8u32
        .to_le_bytes()
        .iter()
        .chain(&[0u8; 12])
        .copied()
        .collect::<Vec<u8>>();
    for program in [
        Vec::new(),
        and.clone(),
        [g.program_bytes(), g.program_bytes()].concat(),
        [g.program_bytes(), and].concat(),
    ] {
        write_case(&mut input, 5, &program, &empty, &[], &[]);
        expects.push(Expect::Corrupt {
            rows: 5,
            structural: true,
        });
    }
    let n_cases = expects.len();
    let mut file = Vec::new();
    push_u32(&mut file, n_cases);
    file.extend_from_slice(&input);
    let made = run_with_files(&exe, dir.path(), &file);
    let mut at = 0;
    let mut corrupt_flagged = 0;
    for e in &expects {
        let status = u32::from_le_bytes(made[at..at + 4].try_into().unwrap());
        at += 4;
        match e {
            Expect::Mask(mask, p) => {
                let got = &made[at..at + mask.len()];
                at += mask.len();
                assert_eq!(status, 0, "{p}: status");
                let want: Vec<u8> = mask.iter().map(|b| u8::from(*b)).collect();
                assert_eq!(got, want.as_slice(), "{p}");
            }
            Expect::Corrupt { rows, structural } => {
                let got = &made[at..at + rows];
                at += rows;
                assert!(got.iter().all(|b| *b <= 1), "mask bytes {got:?}");
                if *structural {
                    assert_eq!(status, 1);
                    assert!(got.iter().all(|b| *b == 0));
                }
                corrupt_flagged += usize::from(status != 0);
            }
        }
    }
    assert_eq!(at, made.len());
    eprintln!(
        "filter_eval: {n_cases} cases, {rejected} predicates rejected by both, {true_rows} of {all_rows} rows kept, {corrupt_flagged} corrupt programs flagged, {kinds:?}"
    );
    assert!(true_rows > 1000 && all_rows - true_rows > 1000);
    assert!(kinds.get("deep").copied().unwrap_or(0) > 20);
}
