//! The compaction kernels under the CPU emulation, against arrow's filter:
//! random arrays of every type (`random_arrays.rs`), some with an array
//! offset, are written with their masks to a case file in the layout of
//! `compact_emu.cpp`, which runs the kernels in the order of
//! `src/decode/filter/compact.rs`; the buffers it makes are built back
//! into arrow arrays (fully validated) and compared with
//! `arrow::compute::filter` of the same input.

use std::path::Path;

use arrow::array::{make_array, Array, ArrayData, ArrayDataBuilder, BooleanArray};
use arrow::buffer::Buffer;
use arrow::datatypes::DataType;

use super::random_arrays::{every_field, random_array, random_mask, Rng};

/// The harness's type code and parameter of `data_type`.
fn code(data_type: &DataType) -> (u64, u64) {
    match data_type {
        DataType::Null => (0, 0),
        DataType::Boolean => (2, 0),
        DataType::Utf8View | DataType::BinaryView => (3, 0),
        DataType::Utf8 | DataType::Binary => (4, 4),
        DataType::LargeUtf8 | DataType::LargeBinary => (4, 8),
        DataType::List(_) | DataType::Map(_, _) => (5, 4),
        DataType::LargeList(_) => (5, 8),
        DataType::FixedSizeList(_, size) => (6, *size as u64),
        DataType::Struct(_) => (7, 0),
        DataType::FixedSizeBinary(w) => (1, *w as u64),
        other => (1, other.primitive_width().unwrap() as u64),
    }
}

fn put(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// `data` in the harness's layout (its validity's offset is its values').
fn encode(data: &ArrayData, out: &mut Vec<u8>) {
    let (code, param) = code(data.data_type());
    put(out, code);
    put(out, param);
    put(out, data.offset() as u64);
    put(out, data.len() as u64);
    match data.nulls() {
        Some(nulls) if *data.data_type() != DataType::Null => {
            assert_eq!(nulls.offset(), data.offset(), "validity and values apart");
            put(out, 1);
            put_bytes(out, nulls.buffer().as_slice());
        }
        _ => put(out, 0),
    }
    put(out, data.buffers().len() as u64);
    for b in data.buffers() {
        put_bytes(out, b.as_slice());
    }
    put(out, data.child_data().len() as u64);
    for child in data.child_data() {
        encode(child, out);
    }
}

/// Reads what the harness wrote.
struct Made<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Made<'_> {
    fn word(&mut self) -> u64 {
        let v = u64::from_le_bytes(self.bytes[self.at..self.at + 8].try_into().unwrap());
        self.at += 8;
        v
    }

    fn buffer(&mut self) -> Buffer {
        let n = self.word() as usize;
        let b = Buffer::from(&self.bytes[self.at..self.at + n]);
        self.at += n;
        b
    }

    /// The compacted column of `input`'s type, validated by arrow; checks
    /// the null count the kernels counted.
    fn column(&mut self, input: &ArrayData) -> ArrayData {
        let len = self.word() as usize;
        let has_validity = self.word() != 0;
        let null_count = self.word() as usize;
        let validity = has_validity.then(|| self.buffer());
        let mut buffers: Vec<Buffer> = (0..self.word()).map(|_| self.buffer()).collect();
        if matches!(input.data_type(), DataType::Utf8View | DataType::BinaryView) {
            // The data buffers are shared as they are.
            buffers.extend(input.buffers()[1..].iter().cloned());
        }
        let n_children = self.word() as usize;
        let children: Vec<ArrayData> = (0..n_children)
            .map(|i| self.column(&input.child_data()[i]))
            .collect();
        let data = ArrayDataBuilder::new(input.data_type().clone())
            .len(len)
            .null_bit_buffer(validity)
            .buffers(buffers)
            .child_data(children)
            .build()
            .unwrap_or_else(|e| panic!("{}: {e}", input.data_type()));
        if has_validity {
            assert_eq!(data.null_count(), null_count, "{}", input.data_type());
        }
        data
    }
}

/// `data` seen `offset` rows in, `len` rows (its buffers, validity and
/// children as they are: an Arrow array offset).
fn with_offset(data: &ArrayData, offset: usize, len: usize) -> ArrayData {
    ArrayDataBuilder::new(data.data_type().clone())
        .offset(offset)
        .len(len)
        .buffers(data.buffers().to_vec())
        .child_data(data.child_data().to_vec())
        .null_bit_buffer(data.nulls().map(|n| n.buffer().clone()))
        .build()
        .unwrap()
}

/// Whether `data_type` is a struct with a struct child.
fn struct_of_struct(data_type: &DataType) -> bool {
    match data_type {
        DataType::Struct(fields) => fields
            .iter()
            .any(|f| matches!(f.data_type(), DataType::Struct(_))),
        _ => false,
    }
}

/// One case: columns and a mask.
struct Case {
    columns: Vec<ArrayData>,
    mask: Vec<u8>,
}

fn cases(rng: &mut Rng) -> Vec<Case> {
    let fields = every_field();
    let mut cases = Vec::new();
    for (len, kind) in [
        (1, 1),
        (40, 0),
        (40, 1),
        (1, 2),
        (300, 2),
        (300, 3),
        (2000, 4),
        (5000, 3),
    ] {
        let offset = if rng.chance(50) {
            rng.below(20) as usize
        } else {
            0
        };
        let columns = fields
            .iter()
            .map(|f| {
                let a = random_array(rng, f.data_type(), len + offset + 3, f.is_nullable());
                // arrow-rs slices a struct's struct child twice when the
                // outer one has an offset: those start at 0.
                let offset = if struct_of_struct(f.data_type()) {
                    0
                } else {
                    offset
                };
                with_offset(&a.to_data(), offset, len)
            })
            .collect();
        cases.push(Case {
            columns,
            mask: random_mask(rng, len, kind),
        });
    }
    cases
}

/// Runs the harness over the cases and compares every column with arrow's
/// filter.
pub fn compare_with_arrow_filter(exe: &Path, dir: &Path) {
    let mut rng = Rng(0x5eed_0058);
    let cases = cases(&mut rng);
    let mut input = Vec::new();
    put(&mut input, cases.len() as u64);
    for case in &cases {
        put(&mut input, case.mask.len() as u64);
        put_bytes(&mut input, &case.mask);
        put(&mut input, case.columns.len() as u64);
        for c in &case.columns {
            encode(c, &mut input);
        }
    }
    let made = super::run_with_files(exe, dir, &input);
    let mut m = Made {
        bytes: &made,
        at: 0,
    };
    let fields = every_field();
    for (i, case) in cases.iter().enumerate() {
        assert_eq!(m.word(), 0, "case {i}: the error word");
        let keep = BooleanArray::from(case.mask.iter().map(|&b| b != 0).collect::<Vec<_>>());
        let k = keep.true_count();
        assert_eq!(m.word() as usize, k, "case {i}: kept rows");
        if k == 0 || k == case.mask.len() {
            continue;
        }
        for (field, column) in fields.iter().zip(&case.columns) {
            let got = make_array(m.column(column));
            let expected = arrow::compute::filter(&make_array(column.clone()), &keep).unwrap();
            assert_eq!(
                &got,
                &expected,
                "case {i} ({} rows, offset {}): column {}",
                case.mask.len(),
                column.offset(),
                field.name()
            );
            assert_eq!(got.null_count(), expected.null_count(), "{}", field.name());
        }
    }
    assert_eq!(m.at, made.len(), "the harness wrote more than read");
}

/// A list column (offsets `offsets`, an Int32 child of `child_len`
/// values), every row but the first kept: the harness's error word.
pub fn error_word_of_list(exe: &Path, dir: &Path, offsets: &[i32], child_len: usize) -> u64 {
    let rows = offsets.len() - 1;
    let mut input = Vec::new();
    put(&mut input, 1);
    put(&mut input, rows as u64);
    let mask: Vec<u8> = (0..rows).map(|i| u8::from(i > 0)).collect();
    put_bytes(&mut input, &mask);
    put(&mut input, 1);
    for v in [5, 4, 0, rows as u64, 0, 1] {
        put(&mut input, v);
    }
    let bytes: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    put_bytes(&mut input, &bytes);
    put(&mut input, 1);
    for v in [1, 4, 0, child_len as u64, 0, 1] {
        put(&mut input, v);
    }
    put_bytes(&mut input, &vec![7u8; 4 * child_len]);
    put(&mut input, 0);
    let made = super::run_with_files(exe, dir, &input);
    u64::from_le_bytes(made[..8].try_into().unwrap())
}
