//! Special files: what is not a regular file or a block device is refused
//! before anything could block on it (a typed error naming the path and
//! what it is), and a file that grows or shrinks while it is read gives
//! correct bytes or a typed error, never a hang or bytes that were not in
//! the file. And a special Parquet file: the committed fixture
//! `testdata/nested_v1_split_records.parquet`, whose v1 data pages split
//! records (a page that begins with a repetition level > 0), is checked to
//! hold such pages and the values its generator wrote.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gdscan::engine::IoError;
use gdscan::{Engine, Error, FileHandle, OpenMode, Settings};

fn engine() -> Arc<Engine> {
    let settings = Settings::builder()
        .num_threads(4)
        .task_size(4096)
        .build()
        .unwrap();
    Engine::new(settings).unwrap()
}

/// Opens `path` on another thread and fails the test if it takes longer
/// than 10 s (the FIFO used to block in `open` forever).
fn open_within_time(path: &Path, mode: OpenMode) -> gdscan::Result<FileHandle> {
    let (tx, rx) = std::sync::mpsc::channel();
    let p = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(FileHandle::open_with(engine(), &p, mode).map_err(Into::into));
    });
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("opening {} hangs", path.display()))
}

fn assert_refused(path: &Path, mode: OpenMode, kind: &str) {
    let err = open_within_time(path, mode).expect_err("refused");
    match &err {
        Error::Io(IoError::NotAFile { path: p, kind: k }) => {
            assert_eq!(p, &path.display().to_string());
            assert_eq!(*k, kind);
        }
        other => panic!(
            "{}: expected NotAFile({kind}), got {other:?}",
            path.display()
        ),
    }
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains(kind), "{msg}");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_fifo_is_refused_in_every_mode_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    for mode in [
        OpenMode::Read,
        OpenMode::Write,
        OpenMode::ReadWrite,
        OpenMode::ReadWriteCreate,
    ] {
        assert_refused(&fifo, mode, "FIFO");
    }
    // Through a symbolic link too.
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    assert_refused(&link, OpenMode::Read, "FIFO");
}

#[test]
fn a_socket_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    assert_refused(&sock, OpenMode::Read, "socket");
}

#[test]
fn character_devices_are_refused() {
    for dev in ["/dev/zero", "/dev/null", "/dev/urandom"] {
        assert_refused(Path::new(dev), OpenMode::Read, "character device");
    }
}

#[test]
fn proc_and_sys_files_are_refused() {
    // Their size (0 or 4096) is not their content's.
    assert_refused(
        Path::new("/proc/self/status"),
        OpenMode::Read,
        "procfs/sysfs pseudo-file",
    );
    let sys = Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
    if sys.exists() {
        assert_refused(sys, OpenMode::Read, "procfs/sysfs pseudo-file");
    }
}

#[test]
fn regular_files_still_open_and_read_after_the_checks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bin");
    let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let h = open_within_time(&path, OpenMode::Read).unwrap();
    let mut buf = vec![0u8; data.len()];
    assert_eq!(h.pread(&mut buf, data.len(), 0).unwrap(), data.len());
    assert_eq!(buf, data);
    // Writes too: O_NONBLOCK was cleared after the checks.
    let out = dir.path().join("out.bin");
    let w = open_within_time(&out, OpenMode::Write).unwrap();
    assert_eq!(w.pwrite(&data, data.len(), 0).unwrap(), data.len());
    drop(w);
    assert_eq!(std::fs::read(&out).unwrap(), data);
}

/// A writer shrinks the file and grows it back with the same bytes while
/// readers read it whole: every read gives the file's bytes or a typed
/// error (`ShortRead` when it shrank under the read, `OffsetPastEof` at
/// size 0), in bounded time, and never leaves a byte of the buffer
/// unwritten (it is filled with 0xFF, which the pattern never holds). The
/// file's bytes are the pattern's or zeros: reads are not atomic against
/// writes, for any reader, so a read may copy a page while the writer is
/// filling it again after a truncation zeroed it. Page-aligned cuts used to
/// keep that out of the test (a cut removed whole pages), but with large
/// folios (ext4 since Linux 6.16) a truncation may zero the tail of a folio
/// it keeps, which the writer then refills in place: on the 6.18 VM one
/// run in six read a page whose first 1648 bytes were refilled and the rest
/// still zero.
#[test]
fn a_file_that_shrinks_and_grows_while_read_gives_right_bytes_or_typed_errors() {
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("moving.bin");
    let full = 1usize << 20;
    let data: Vec<u8> = (0..full)
        .map(|i| (i.wrapping_mul(131) % 253) as u8)
        .collect();
    std::fs::write(&path, &data).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (path, data, stop) = (path.clone(), data.clone(), stop.clone());
        std::thread::spawn(move || {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let mut cuts = 0u64;
            let mut cut = 7919usize;
            while !stop.load(Ordering::Relaxed) {
                cut = (cut * 31 + 17) % full / 4096 * 4096;
                f.set_len(cut as u64).unwrap();
                f.write_all_at(&data[cut..], cut as u64).unwrap();
                cuts += 1;
            }
            cuts
        })
    };
    let h = Arc::new(FileHandle::open_with(engine(), &path, OpenMode::Read).unwrap());
    let deadline = Instant::now() + Duration::from_secs(3);
    let (mut ok, mut short, mut past, mut torn) = (0u64, 0u64, 0u64, 0u64);
    let mut buf = vec![0u8; full];
    while Instant::now() < deadline {
        buf.fill(0xFF);
        match h.pread(&mut buf, full, 0) {
            Ok(n) => {
                assert!(n <= full);
                let wrong = (0..n).find(|&i| buf[i] != data[i] && buf[i] != 0);
                assert!(
                    wrong.is_none(),
                    "byte {} of {n} is {:#04x}: neither the file's ({:#04x}) nor a zeroed page's",
                    wrong.unwrap_or(0),
                    buf[wrong.unwrap_or(0)],
                    data[wrong.unwrap_or(0)]
                );
                if buf[..n] != data[..n] {
                    torn += 1;
                }
                ok += 1;
            }
            Err(IoError::ShortRead { path: p, .. }) => {
                assert_eq!(p, path.display().to_string());
                short += 1;
            }
            Err(IoError::OffsetPastEof { .. }) => past += 1,
            Err(other) => panic!("unexpected error: {other:?}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let cuts = writer.join().unwrap();
    eprintln!("{cuts} cuts; reads: {ok} whole ({torn} with a page being refilled), {short} short, {past} at size 0");
    assert!(ok > 0, "some reads completed");
    assert!(cuts > 0);
    // The handle still serves the file once it is stable.
    assert_eq!(h.pread(&mut buf, full, 0).unwrap(), full);
    assert_eq!(buf, data);
}

/// The committed fixture whose v1 pages split records, written by
/// `testdata/gen_split_records.py` (described in testdata/README.md).
fn split_records_fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/nested_v1_split_records.parquet")
}

/// The rows and row groups `gen_split_records.py` wrote.
const SPLIT_ROWS: usize = 600;
const SPLIT_ROW_GROUP_ROWS: usize = 300;

/// The first level of an RLE/bit-packed hybrid stream of `bit_width`-bit
/// levels: a ULEB128 run header, then an RLE run's value
/// (`ceil(bit_width / 8)` bytes, little-endian) or a bit-packed run whose
/// first value is the low `bit_width` bits of the next bytes.
fn first_hybrid_level(stream: &[u8], bit_width: u32) -> u32 {
    let (mut header, mut shift, mut at) = (0u64, 0u32, 0usize);
    loop {
        let b = stream[at];
        at += 1;
        header |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    let width_bytes = bit_width.div_ceil(8) as usize;
    let value = stream[at..at + width_bytes]
        .iter()
        .rev()
        .fold(0u32, |v, &b| (v << 8) | u32::from(b));
    if header & 1 == 0 {
        assert!(header >> 1 > 0, "an RLE run of no level");
        value
    } else {
        assert!(header >> 1 > 0, "a bit-packed run of no group");
        value & ((1u32 << bit_width) - 1)
    }
}

/// Every data page of the fixture is a v1 DATA_PAGE, each chunk's first
/// starts a record (repetition level 0), and every nested column has, in
/// every row group, pages after the first that begin with a repetition
/// level > 0: records split across pages, decoded from the pages' own
/// bytes (the repetition levels' 4-byte length, then the hybrid stream).
#[test]
fn the_split_records_fixture_has_v1_pages_that_start_mid_record() {
    use parquet::basic::{Encoding, PageType};
    use parquet::column::page::Page;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    let file = std::fs::File::open(split_records_fixture()).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let metadata = reader.metadata();
    assert_eq!(metadata.num_row_groups(), SPLIT_ROWS / SPLIT_ROW_GROUP_ROWS);
    let schema = metadata.file_metadata().schema_descr_ptr();
    let mut nested = 0;
    for c in 0..schema.num_columns() {
        let column = schema.column(c);
        let max_rep = column.max_rep_level() as u32;
        let bit_width = 32 - max_rep.leading_zeros();
        // Pages that start mid-record, by their first repetition level.
        let mut mid_record = std::collections::BTreeMap::<u32, usize>::new();
        let mut data_pages = 0;
        for rg in 0..reader.num_row_groups() {
            // long_list's repetition levels as the generator's formulas
            // give them: a check of the levels decoded here.
            let long_list_rep: Vec<u32> = (rg * SPLIT_ROW_GROUP_ROWS
                ..(rg + 1) * SPLIT_ROW_GROUP_ROWS)
                .flat_map(|i| {
                    let n = split_long_list(i).map_or(0, |r| r.len()).max(1);
                    (0..n).map(|j| u32::from(j > 0))
                })
                .collect();
            let mut level_at = 0;
            let mut pages = reader
                .get_row_group(rg)
                .unwrap()
                .get_column_page_reader(c)
                .unwrap();
            let (mut index, mut split_here) = (0, 0);
            while let Some(page) = pages.get_next_page().unwrap() {
                if page.page_type() == PageType::DICTIONARY_PAGE {
                    continue;
                }
                let Page::DataPage {
                    buf,
                    rep_level_encoding,
                    num_values,
                    ..
                } = &page
                else {
                    panic!(
                        "{}: a {:?}, not a v1 data page",
                        column.path(),
                        page.page_type()
                    );
                };
                assert!(*num_values > 0);
                if max_rep > 0 {
                    assert_eq!(*rep_level_encoding, Encoding::RLE);
                    let len = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
                    let first = first_hybrid_level(&buf[4..4 + len], bit_width);
                    assert!(first <= max_rep, "{}: level {first}", column.path());
                    if column.path().string() == "long_list.list.element" {
                        assert_eq!(
                            first, long_list_rep[level_at],
                            "long_list, entry {level_at}"
                        );
                    }
                    if index == 0 {
                        assert_eq!(first, 0, "{}: the chunk's first page", column.path());
                    } else if first > 0 {
                        *mid_record.entry(first).or_default() += 1;
                        split_here += 1;
                    }
                }
                index += 1;
                data_pages += 1;
                level_at += *num_values as usize;
            }
            if column.path().string() == "long_list.list.element" {
                assert_eq!(level_at, long_list_rep.len(), "long_list's level entries");
            }
            if max_rep > 0 {
                assert!(
                    split_here > 0,
                    "{}, row group {rg}: no page starts mid-record",
                    column.path()
                );
            }
        }
        if max_rep > 0 {
            nested += 1;
            eprintln!(
                "{}: {data_pages} v1 data pages, starting mid-record (by first repetition level): {mid_record:?}",
                column.path()
            );
        }
        if max_rep == 2 {
            // list<list<int32>>: pages start in the middle of an inner list
            // and at a new inner list of the same record.
            assert!(mid_record.contains_key(&1) && mid_record.contains_key(&2));
        }
    }
    assert_eq!(
        nested, 4,
        "long_list, list_of_structs (a, b), list_of_lists"
    );
}

// The generator's formulas (testdata/gen_split_records.py), row `i`.

fn split_long_list(i: usize) -> Option<Vec<Option<i64>>> {
    if i % 11 == 4 {
        return None;
    }
    if i % 13 == 6 {
        return Some(Vec::new());
    }
    let n = if i % 97 == 10 {
        1000 + (i % 5) * 250
    } else {
        (i * 7) % 23
    };
    Some(
        (0..n)
            .map(|j| ((i + j) % 16 != 5).then_some((i * 10 + j % 16) as i64))
            .collect(),
    )
}

type SplitStruct = Option<(Option<i32>, Option<String>)>;

fn split_list_of_structs(i: usize) -> Option<Vec<SplitStruct>> {
    if i % 9 == 2 {
        return None;
    }
    if i % 14 == 0 {
        return Some(Vec::new());
    }
    let n = if i % 89 == 20 {
        800 + (i % 3) * 200
    } else {
        (i * 5) % 11
    };
    Some(
        (0..n)
            .map(|j| {
                ((i + j) % 23 != 7).then(|| {
                    (
                        ((i + j) % 7 != 3).then_some((i + 2 * j) as i32),
                        ((i * j) % 10 != 1).then(|| format!("s{}-{}", i % 5, j % 40)),
                    )
                })
            })
            .collect(),
    )
}

type SplitInner = Option<Vec<Option<i32>>>;

fn split_list_of_lists(i: usize) -> Option<Vec<SplitInner>> {
    if i % 10 == 3 {
        return None;
    }
    if i % 15 == 8 {
        return Some(Vec::new());
    }
    let long = i % 83 == 30;
    let n = if long {
        300 + (i % 4) * 50
    } else {
        (i * 3) % 7
    };
    Some(
        (0..n)
            .map(|k| {
                if (i + k) % 13 == 4 {
                    return None;
                }
                if (i + k) % 11 == 2 {
                    return Some(Vec::new());
                }
                let m = (i + k) % 9 + if long { 3 } else { 0 };
                Some(
                    (0..m)
                        .map(|x| {
                            ((i + k + x) % 17 != 0).then_some(((3 * i + 5 * k + x) % 1000) as i32)
                        })
                        .collect(),
                )
            })
            .collect(),
    )
}

/// A list array's row `i`, its elements read by `element`.
fn split_list_row<T>(
    list: &arrow::array::ListArray,
    i: usize,
    element: impl Fn(&arrow::array::ArrayRef, usize) -> T,
) -> Option<Vec<T>> {
    use arrow::array::Array;
    if list.is_null(i) {
        return None;
    }
    let offsets = list.value_offsets();
    let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
    Some((start..end).map(|e| element(list.values(), e)).collect())
}

/// arrow-rs reads the fixture's 600 rows in two row groups, and every value
/// is the generator's formula's: the file holds what was written, not only
/// what a reader makes of it.
#[test]
fn the_split_records_fixture_holds_what_its_generator_wrote() {
    use arrow::array::{Array, ArrayRef, AsArray};
    use arrow::datatypes::{Int32Type, Int64Type};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let file = std::fs::File::open(split_records_fixture()).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    assert_eq!(builder.metadata().num_row_groups(), 2);
    for rg in builder.metadata().row_groups() {
        assert_eq!(rg.num_rows() as usize, SPLIT_ROW_GROUP_ROWS);
    }
    // Batches smaller than a long list's pages, across row groups.
    let reader = builder.with_batch_size(77).build().unwrap();
    let schema = arrow::record_batch::RecordBatchReader::schema(&reader);
    let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
    let batch = arrow::compute::concat_batches(&schema, &batches).unwrap();
    assert_eq!(batch.num_rows(), SPLIT_ROWS);

    let ids = batch
        .column_by_name("id")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert_eq!(ids.null_count(), 0);
    assert!(ids.values().iter().enumerate().all(|(i, &v)| v == i as i64));

    let int64 = |a: &ArrayRef, e: usize| {
        let a = a.as_primitive::<Int64Type>();
        a.is_valid(e).then(|| a.value(e))
    };
    let int32 = |a: &ArrayRef, e: usize| {
        let a = a.as_primitive::<Int32Type>();
        a.is_valid(e).then(|| a.value(e))
    };
    let long_list = batch.column_by_name("long_list").unwrap().as_list::<i32>();
    let structs = batch
        .column_by_name("list_of_structs")
        .unwrap()
        .as_list::<i32>();
    let lists = batch
        .column_by_name("list_of_lists")
        .unwrap()
        .as_list::<i32>();
    // Totals, which the generator's own Python gives too: a check of the
    // formulas' transcription here.
    let (mut sum, mut elements, mut longest) = (0i64, 0usize, 0usize);
    let (mut struct_elements, mut a_sum) = (0usize, 0i64);
    let (mut inner_lists, mut inner_values) = (0usize, 0usize);
    for i in 0..SPLIT_ROWS {
        let want = split_long_list(i);
        assert_eq!(
            split_list_row(long_list, i, int64),
            want,
            "long_list, row {i}"
        );
        if let Some(row) = &want {
            elements += row.len();
            longest = longest.max(row.len());
            sum += row.iter().flatten().sum::<i64>();
        }
        let want = split_list_of_structs(i);
        let got = split_list_row(structs, i, |a, e| {
            let s = a.as_struct();
            s.is_valid(e).then(|| {
                let b = s.column(1).as_string::<i32>();
                (
                    int32(s.column(0), e),
                    b.is_valid(e).then(|| b.value(e).to_string()),
                )
            })
        });
        assert_eq!(got, want, "list_of_structs, row {i}");
        if let Some(row) = &want {
            struct_elements += row.len();
            a_sum += row
                .iter()
                .flatten()
                .filter_map(|s| s.0)
                .map(i64::from)
                .sum::<i64>();
        }
        let want = split_list_of_lists(i);
        let got = split_list_row(lists, i, |a, e| {
            split_list_row(a.as_list::<i32>(), e, int32)
        });
        assert_eq!(got, want, "list_of_lists, row {i}");
        if let Some(row) = &want {
            inner_lists += row.len();
            inner_values += row.iter().flatten().map(Vec::len).sum::<usize>();
        }
    }
    assert_eq!(
        long_list.null_count(),
        (0..SPLIT_ROWS).filter(|i| i % 11 == 4).count()
    );
    assert_eq!(long_list.values().len(), elements);
    assert_eq!((elements, sum, longest), (14_244, 40_523_153, 2_000));
    assert_eq!(split_long_list(204).map(|r| r.len()), Some(2_000));
    assert_eq!((struct_elements, a_sum), (8_436, 7_308_781));
    assert_eq!((inner_lists, inner_values), (3_743, 18_141));
}
