//! The nesting kernels under the CPU emulation (`nest_emu.cpp`), on the
//! levels of random nested files written by arrow-rs (16 nested shapes,
//! four writer settings), against the CPU reference of level assembly
//! (`decode::page::nesting::assemble`, itself checked against arrow-rs):
//! slot counts, list offsets, validity at every level, and each leaf's
//! values moved to their slots; and corrupted levels as the kernels' typed
//! errors where the reference refuses them.

use std::collections::BTreeMap;
use std::path::Path;

use gdscan::decode::kernels::nest::{
    NEST_COUNTS, NEST_COUNT_FIRST, NEST_IF_MOVED, NEST_LEVELS, NEST_STATUS_WORDS,
};
use gdscan::decode::kernels::PageErrorCode;
use gdscan::decode::page::nesting::testing::{
    fixed_lists_in_lists, random_batch, read_leaf, write, writer_settings, LeafChunk,
};
use gdscan::decode::page::nesting::{
    assemble, nest_fields_of_file, Assembly, GpuNesting, LeafLevels, LeafOutput, LeafWork,
    NestField, NestNode, NodeKind, NodeLayout,
};
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::{build, run_with_files};

/// What the reference says one node of the flattened model holds.
#[derive(Debug, Clone, Default)]
struct Expected {
    slots: usize,
    validity: Option<Vec<bool>>,
    offsets: Option<Vec<i32>>,
    value_index: Option<Vec<usize>>,
}

/// The reference's layout of every node, in the GPU plan's preorder.
fn expected_nodes(fields: &[NestField], assembly: &Assembly) -> Vec<Expected> {
    let mut out = Vec::new();
    for (field, layout) in fields.iter().zip(&assembly.fields) {
        walk(&field.node, layout, &mut out);
    }
    out
}

fn walk(node: &NestNode, layout: &NodeLayout, out: &mut Vec<Expected>) {
    let at = out.len();
    out.push(Expected::default());
    match (node, layout) {
        (NestNode::Leaf(_), NodeLayout::Leaf(l)) => {
            out[at] = Expected {
                slots: l.value_index.len(),
                validity: l.validity.clone(),
                offsets: None,
                value_index: Some(l.value_index.clone()),
            };
        }
        (NestNode::Struct(s), NodeLayout::Struct(l)) => {
            out[at].slots = l.slots;
            out[at].validity = l.validity.clone();
            for (f, fl) in s.fields.iter().zip(&l.fields) {
                walk(&f.node, fl, out);
            }
        }
        (NestNode::List(n), NodeLayout::List(l)) => {
            out[at].slots = l.offsets.len() - 1;
            out[at].validity = l.validity.clone();
            out[at].offsets = Some(l.offsets.clone());
            walk(&n.element.node, &l.element, out);
        }
        (NestNode::Map(m), NodeLayout::Map(l)) => {
            out[at].slots = l.offsets.len() - 1;
            out[at].validity = l.validity.clone();
            out[at].offsets = Some(l.offsets.clone());
            walk(&m.key.node, &l.key, out);
            walk(&m.value.node, &l.value, out);
        }
        _ => panic!("the layout does not match the model"),
    }
}

fn push_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Bytes of a bitmap of `n` bits in 4-byte words.
fn bitmap_len(n: usize) -> usize {
    n.div_ceil(32) * 4
}

/// Each entry's value index: the values (`def == max_def`) before it.
fn value_indices(chunk: &LeafChunk, max_def: u32) -> Vec<u32> {
    let mut next = 0u32;
    (0..chunk.entries)
        .map(|i| {
            let at = next;
            let def = if chunk.has_def {
                chunk.def[i] as u32
            } else {
                0
            };
            next += u32::from(def == max_def);
            at
        })
        .collect()
}

/// Whether `output` is the leaf's own (values, or validity at its
/// slots): written only when the slots are not the entries one for one.
fn if_moved(output: &LeafOutput, gpu: &GpuNesting) -> bool {
    match *output {
        LeafOutput::Values { .. } => true,
        LeafOutput::Validity { node, .. } => matches!(gpu.nodes[node].kind, NodeKind::Leaf { .. }),
        LeafOutput::Offsets { .. } => false,
    }
}

/// The records of a chunk (its entries that start one).
fn records_of(chunk: &LeafChunk) -> u64 {
    match chunk.has_rep {
        true => chunk.rep.iter().filter(|&&r| r == 0).count() as u64,
        false => chunk.entries as u64,
    }
}

/// Each level's capacity, as the decoder sizes it.
fn capacity_of(work: &LeafWork, chunk: &LeafChunk) -> [u32; NEST_LEVELS] {
    work.capacity(chunk.entries as u64, records_of(chunk))
        .expect("the test's chunks fit")
}

/// The emulator's input for `works`, with each chunk's levels.
fn emu_input(
    works: &[&LeafWork],
    chunks: &BTreeMap<usize, LeafChunk>,
    gpu: &GpuNesting,
) -> Vec<u8> {
    let mut input = Vec::new();
    push_u32(&mut input, works.len() as u32);
    for work in works {
        let chunk = &chunks[&work.column];
        let n = chunk.entries;
        push_u32(&mut input, n as u32);
        push_u32(&mut input, work.max_rep);
        push_u32(&mut input, work.max_def);
        for j in 0..NEST_LEVELS {
            push_u32(&mut input, work.level_def.get(j).copied().unwrap_or(0));
        }
        for j in 0..NEST_LEVELS {
            push_u32(&mut input, work.level_fixed.get(j).copied().unwrap_or(0));
        }
        let capacity = capacity_of(work, chunk);
        for c in capacity {
            push_u32(&mut input, c);
        }
        push_u32(&mut input, work.outputs.len() as u32);
        let bytes = |has: bool, levels: &[i16]| -> Vec<u8> {
            (0..n)
                .map(|i| if has { levels[i] as u8 } else { 0 })
                .collect()
        };
        input.extend(bytes(chunk.has_rep, &chunk.rep));
        input.extend(bytes(chunk.has_def, &chunk.def));
        for output in &work.outputs {
            let (kind, level, threshold, width, src) = match *output {
                LeafOutput::Offsets { level, .. } => (1, level, 0, 0, Vec::new()),
                LeafOutput::Validity {
                    level, threshold, ..
                } => (2, level, threshold, 0, Vec::new()),
                LeafOutput::Values { level, .. } => {
                    let src: Vec<u8> = value_indices(chunk, work.max_def)
                        .iter()
                        .flat_map(|v| v.to_le_bytes())
                        .collect();
                    (3, level, 0, 4, src)
                }
            };
            let dst_len = output_len(output, &capacity);
            let kind = kind
                | if if_moved(output, gpu) {
                    NEST_IF_MOVED
                } else {
                    0
                };
            for v in [kind, level as u32, threshold, width, src.len() as u32] {
                push_u32(&mut input, v);
            }
            input.extend(src);
            push_u32(&mut input, dst_len as u32);
        }
    }
    input
}

/// One task's results, as the emulator wrote them.
struct Made {
    status: Vec<u32>,
    outputs: Vec<Vec<u8>>,
}

fn parse_made(made: &[u8], works: &[&LeafWork], chunks: &BTreeMap<usize, LeafChunk>) -> Vec<Made> {
    let mut at = 0;
    let mut take = |n: usize| {
        let s = made[at..at + n].to_vec();
        at += n;
        s
    };
    works
        .iter()
        .map(|work| {
            let capacity = capacity_of(work, &chunks[&work.column]);
            let status = take(NEST_STATUS_WORDS * 4)
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect();
            let outputs = work
                .outputs
                .iter()
                .map(|o| take(output_len(o, &capacity)))
                .collect();
            Made { status, outputs }
        })
        .collect()
}

/// Bytes of an output, sized by its level's capacity as the decoder does
/// (values: 4-byte value indices).
fn output_len(output: &LeafOutput, capacity: &[u32; NEST_LEVELS]) -> usize {
    match *output {
        LeafOutput::Offsets { level, .. } => (capacity[level - 1] as usize + 1) * 4,
        LeafOutput::Validity { level, .. } => bitmap_len(capacity[level] as usize),
        LeafOutput::Values { level, .. } => capacity[level] as usize * 4,
    }
}

fn bit(bytes: &[u8], i: usize) -> bool {
    (bytes[i / 8] >> (i % 8)) & 1 == 1
}

fn word(bytes: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([
        bytes[4 * i],
        bytes[4 * i + 1],
        bytes[4 * i + 2],
        bytes[4 * i + 3],
    ])
}

/// Compares one task's outputs with the reference's nodes; returns the
/// validity outputs whose counted valid slots it compared.
fn compare(
    label: &str,
    work: &LeafWork,
    made: &Made,
    gpu: &GpuNesting,
    expected: &[Expected],
    records: usize,
    chunk: &LeafChunk,
) -> usize {
    let entries = chunk.entries;
    assert_eq!(
        made.status[0], 0,
        "{label}: error {} at {}",
        made.status[0], made.status[1]
    );
    assert_eq!(made.status[2] as usize, records, "{label}: records");
    let leaf_level = gpu.nodes[work.node].level;
    assert_eq!(
        made.status[2 + leaf_level] as usize,
        expected[work.node].slots,
        "{label}: the leaf's slots"
    );
    // Slots that are the entries one for one: the leaf's own outputs are
    // left to the page kernel's, which the reference must then equal.
    let identity =
        made.status[2 + work.max_rep as usize] as usize == entries && !work.fixed_under_variable();
    // The validity outputs' valid slots are counted in status words
    // NEST_COUNT_FIRST + k, k in output order (the decoder's assignment).
    let (mut validities, mut counts_checked) = (0usize, 0usize);
    for (output, bytes) in work.outputs.iter().zip(&made.outputs) {
        let counted = matches!(output, LeafOutput::Validity { .. }).then(|| {
            validities += 1;
            validities - 1
        });
        let count = |k: usize| made.status.get(NEST_COUNT_FIRST + k).copied();
        if identity && if_moved(output, gpu) {
            if let Some(k) = counted.filter(|&k| k < NEST_COUNTS) {
                assert_eq!(count(k), Some(0), "{label}: a skipped validity counted");
            }
            let e = &expected[work.node];
            let values = value_indices(chunk, work.max_def);
            for slot in 0..e.slots {
                let def = if chunk.has_def {
                    chunk.def[slot] as u32
                } else {
                    0
                };
                let valid = def == work.max_def;
                assert_eq!(
                    e.validity.as_ref().is_none_or(|v| v[slot]),
                    valid,
                    "{label}: identity validity {slot}"
                );
                if valid {
                    assert_eq!(
                        e.value_index.as_ref().unwrap()[slot],
                        values[slot] as usize,
                        "{label}: identity value {slot}"
                    );
                }
            }
            continue;
        }
        match *output {
            LeafOutput::Offsets { node, .. } => {
                let want = expected[node].offsets.as_ref().expect("a list's offsets");
                let got: Vec<i32> = (0..want.len()).map(|i| word(bytes, i) as i32).collect();
                assert_eq!(&got, want, "{label}: offsets of node {node}");
            }
            LeafOutput::Validity { node, .. } => {
                let e = &expected[node];
                let mut valid = 0u32;
                for slot in 0..e.slots {
                    let want = e.validity.as_ref().is_none_or(|v| v[slot]);
                    valid += u32::from(want);
                    assert_eq!(
                        bit(bytes, slot),
                        want,
                        "{label}: validity of node {node} at {slot}"
                    );
                }
                if let Some(k) = counted.filter(|&k| k < NEST_COUNTS) {
                    assert_eq!(count(k), Some(valid), "{label}: valid slots of node {node}");
                    counts_checked += 1;
                }
            }
            LeafOutput::Values { node, .. } => {
                let e = &expected[node];
                let index = e.value_index.as_ref().expect("a leaf's value index");
                for (slot, &want) in index.iter().enumerate() {
                    if e.validity.as_ref().is_none_or(|v| v[slot]) {
                        assert_eq!(
                            word(bytes, slot) as usize,
                            want,
                            "{label}: value of node {node} at {slot}"
                        );
                    }
                }
            }
        }
    }
    counts_checked
}

/// Every leaf's chunk of row group `rg`.
fn read_chunks(
    reader: &SerializedFileReader<bytes::Bytes>,
    fields: &[NestField],
    rg: usize,
) -> BTreeMap<usize, LeafChunk> {
    let row_group = reader.get_row_group(rg).unwrap();
    let rows = row_group.metadata().num_rows() as usize;
    fields
        .iter()
        .flat_map(|f| f.leaves())
        .map(|leaf| (leaf.column, read_leaf(&*row_group, leaf, rows)))
        .collect()
}

fn levels_of(chunks: &BTreeMap<usize, LeafChunk>) -> BTreeMap<usize, LeafLevels<'_>> {
    chunks
        .iter()
        .map(|(&c, chunk)| (c, chunk.levels()))
        .collect()
}

fn run(
    exe: &Path,
    dir: &Path,
    works: &[&LeafWork],
    chunks: &BTreeMap<usize, LeafChunk>,
    gpu: &GpuNesting,
) -> Vec<Made> {
    let made = run_with_files(exe, dir, &emu_input(works, chunks, gpu));
    parse_made(&made, works, chunks)
}

#[test]
fn nest_kernels_under_cpu_emulation() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("nest_emu.cpp", dir.path()) else {
        return;
    };
    let mut compared = 0;
    for seed in [3u64, 11] {
        let batch = random_batch(seed, 300);
        for (name, props) in writer_settings() {
            let reader = SerializedFileReader::new(write(&batch, props)).unwrap();
            compared +=
                compare_every_row_group(&exe, dir.path(), &reader, &format!("seed {seed}, {name}"));
        }
    }
    assert!(compared > 100, "{compared} tasks compared");
    let counts = COUNTS_CHECKED.load(std::sync::atomic::Ordering::Relaxed);
    assert!(counts > 100, "{counts} validity counts compared");
    eprintln!("nesting kernels: {compared} leaf tasks equal to the reference");
}

/// Validity outputs whose counted valid slots were compared, over every
/// test of this file.
static COUNTS_CHECKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Runs every leaf task of every row group of `reader` under the emulation
/// and compares it with the reference; the tasks compared (and adds the
/// valid-slot counts compared to `COUNTS_CHECKED`).
fn compare_every_row_group(
    exe: &Path,
    dir: &Path,
    reader: &SerializedFileReader<bytes::Bytes>,
    file: &str,
) -> usize {
    // The file's embedded Arrow schema as the decoder takes it
    // (FixedSizeLists).
    let fields = nest_fields_of_file(reader.metadata().file_metadata(), None).unwrap();
    let gpu = GpuNesting::new(fields.clone());
    let mut compared = 0;
    for rg in 0..reader.num_row_groups() {
        let chunks = read_chunks(reader, &fields, rg);
        let assembly = assemble(&fields, &levels_of(&chunks)).unwrap();
        let expected = expected_nodes(&fields, &assembly);
        let works: Vec<&LeafWork> = gpu.leaves.iter().collect();
        let made = run(exe, dir, &works, &chunks, &gpu);
        for (work, made) in works.iter().zip(&made) {
            let label = format!("{file}, row group {rg}, leaf {}", work.column);
            let chunk = &chunks[&work.column];
            let counts = compare(&label, work, made, &gpu, &expected, assembly.records, chunk);
            COUNTS_CHECKED.fetch_add(counts, std::sync::atomic::Ordering::Relaxed);
            compared += 1;
        }
    }
    compared
}

/// The same comparison on the committed fixture whose v1 data pages split
/// records (`testdata/nested_v1_split_records.parquet`, written by pyarrow,
/// described in testdata/README.md): pages of every nested column begin
/// with a repetition level > 0, continuing the record of the page before.
/// The kernels work over the whole chunk's level entries, so a record
/// split across pages must come out as if it were not.
#[test]
fn nest_kernels_on_records_split_across_v1_pages() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("nest_emu.cpp", dir.path()) else {
        return;
    };
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/nested_v1_split_records.parquet");
    let reader =
        SerializedFileReader::new(bytes::Bytes::from(std::fs::read(&path).unwrap())).unwrap();
    assert_eq!(reader.num_row_groups(), 2);
    let compared = compare_every_row_group(&exe, dir.path(), &reader, "split records");
    // The nested leaves (long_list, list_of_structs' a and b,
    // list_of_lists; `id` is flat, no task) of two row groups.
    assert_eq!(compared, 8, "{compared} tasks compared");
    eprintln!("nesting kernels: {compared} leaf tasks of split records equal to the reference");
}

/// Corrupts entry `i` of a leaf's levels with `edit`; the kernels' error
/// must be `code`, and the reference must refuse the same levels.
fn corrupt_case(
    exe: &Path,
    dir: &Path,
    fields: &[NestField],
    work: &LeafWork,
    chunks: &BTreeMap<usize, LeafChunk>,
    edit: impl Fn(&mut LeafChunk) -> usize,
    code: PageErrorCode,
) {
    let mut chunks: BTreeMap<usize, LeafChunk> =
        chunks.iter().map(|(&c, ch)| (c, ch.clone())).collect();
    let at = edit(chunks.get_mut(&work.column).unwrap());
    assert!(
        assemble(fields, &levels_of(&chunks)).is_err(),
        "the reference takes the corrupted levels ({code:?})"
    );
    let made = run(
        exe,
        dir,
        &[work],
        &chunks,
        &GpuNesting::new(fields.to_vec()),
    );
    assert_eq!(
        made[0].status[0],
        code as u32,
        "{code:?}: status {:?}",
        &made[0].status[..2]
    );
    // Found at one entry of several (each later list is off too).
    if code != PageErrorCode::BadContinuation && code != PageErrorCode::FixedSize {
        assert_eq!(made[0].status[1] as usize, at, "{code:?}: entry");
    }
}

#[test]
fn corrupt_levels_are_the_nesting_kernels_errors() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("nest_emu.cpp", dir.path()) else {
        return;
    };
    let batch = random_batch(5, 200);
    let (_, props) = writer_settings().remove(0);
    let reader = SerializedFileReader::new(write(&batch, props)).unwrap();
    let fields = nest_fields_of_file(reader.metadata().file_metadata(), None).unwrap();
    let gpu = GpuNesting::new(fields.clone());
    let chunks = read_chunks(&reader, &fields, 0);
    let mut cases = 0;
    for work in gpu.leaves.iter().filter(|w| w.max_rep > 0) {
        let (max_def, max_rep) = (work.max_def as i16, work.max_rep as i16);
        // Each edit returns the entry it corrupted.
        type Edit<'a> = Box<dyn Fn(&mut LeafChunk) -> usize + 'a>;
        let edits: [(Edit<'_>, PageErrorCode); 4] = [
            (
                Box::new(|c| {
                    c.rep[0] = 1;
                    0
                }),
                PageErrorCode::FirstNotRecord,
            ),
            (
                Box::new(|c| {
                    let i = c.entries / 2;
                    c.def[i] = max_def + 1;
                    i
                }),
                PageErrorCode::BadLevel,
            ),
            (
                Box::new(|c| {
                    let i = c.entries / 3;
                    c.rep[i] = max_rep + 1;
                    i
                }),
                PageErrorCode::RepLevel,
            ),
            // A continuation of an absent list: the entry before it
            // defines nothing, and this one continues the outer list.
            (
                Box::new(|c| {
                    let i = c.entries / 2;
                    c.def[i - 1] = 0;
                    c.rep[i] = 1;
                    i
                }),
                PageErrorCode::BadContinuation,
            ),
        ];
        for (edit, code) in edits {
            corrupt_case(&exe, dir.path(), &fields, work, &chunks, edit, code);
            cases += 1;
        }
        // A FixedSizeList's element that starts a record instead: the
        // lists around it hold fewer than the size.
        if work.max_rep == 1 && work.level_fixed[1] != 0 {
            let split: Edit<'_> = Box::new(|c| {
                let i = (1..c.entries / 3)
                    .find(|&i| c.rep[i] == 1)
                    .expect("a list element");
                c.rep[i] = 0;
                i
            });
            corrupt_case(
                &exe,
                dir.path(),
                &fields,
                work,
                &chunks,
                split,
                PageErrorCode::FixedSize,
            );
            cases += 1;
        }
    }
    assert!(cases >= 18, "{cases} cases");
}

/// `list<fixed_size_list<int64, 8>>` (3,000 rows of two): with one in five
/// null, the kernels equal the reference within the allowance; with all
/// null, each stands for eight padded slots, past the allowance
/// (`PADDING_FACTOR` slots an entry and `PADDING_SLACK`): `gds_nest_scan`
/// reports `SlotCapacity` at level 2 and the write kernel writes nothing
/// (the buffers are sized by the capacity: a write past it would be a heap
/// overflow here).
#[test]
fn fixed_size_list_padding_past_the_allowance_is_the_kernels_error() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("nest_emu.cpp", dir.path()) else {
        return;
    };
    let rows = 3_000;
    for (null_every, refused) in [(5, false), (1, true)] {
        let instances = 2 * rows;
        let batch = fixed_lists_in_lists(rows, null_every);
        let (_, props) = writer_settings().remove(3);
        let reader = SerializedFileReader::new(write(&batch, props)).unwrap();
        if !refused {
            let compared = compare_every_row_group(&exe, dir.path(), &reader, "one in five null");
            assert_eq!(compared, 1);
            continue;
        }
        let fields = nest_fields_of_file(reader.metadata().file_metadata(), None).unwrap();
        let gpu = GpuNesting::new(fields.clone());
        let chunks = read_chunks(&reader, &fields, 0);
        let work = &gpu.leaves[0];
        assert!(work.is_allowance(2));
        let made = run(&exe, dir.path(), &[work], &chunks, &gpu);
        assert_eq!(
            made[0].status[0],
            PageErrorCode::SlotCapacity as u32,
            "status {:?}",
            &made[0].status[..4]
        );
        assert_eq!(made[0].status[1], 2, "the level");
        assert_eq!(
            made[0].status[2 + 2] as usize,
            instances * 8,
            "the padded slots"
        );
        // Nothing written: the values are the emulator's marker still.
        assert!(made[0]
            .outputs
            .iter()
            .all(|o| o.iter().all(|&b| b == 0 || b == 0xCD)));
    }
}
