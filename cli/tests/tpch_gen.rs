//! `gdscan tpch gen` / `gdscan_cli::tpch::generate`: layout, row counts against
//! TPC-H's formulas, parts, compression, row groups and pages, the output
//! folder's rules, errors (unwritable folder, full disk), the CLI, and
//! orders_nested against the flat orders and lineitem.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow::array::{Array, AsArray, RecordBatch, StructArray};
use arrow::compute::concat_batches;
use arrow::datatypes::Int64Type;
use gdscan::engine::IoError;
use gdscan::Error;
use gdscan_cli::tpch::{generate, parse_compression, GenOptions, Table, LINEITEMS_COLUMN};
use gdscan_cli::Error::Gdscan;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};

const SF: f64 = 0.01;

fn metadata(path: &Path) -> ParquetMetaData {
    ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(&File::open(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rows_in(path: &Path) -> u64 {
    metadata(path).file_metadata().num_rows() as u64
}

/// The files in `dir`, sorted by name.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// Every path under `dir` whose name mentions "partial".
fn partial_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.file_name().unwrap().to_string_lossy().contains("partial") {
                found.push(p.clone());
            }
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    found
}

fn opts(out: &Path, tables: &[Table]) -> GenOptions {
    GenOptions {
        tables: tables.to_vec(),
        quiet: true,
        ..GenOptions::new(SF, out)
    }
}

#[test]
fn all_tables_have_the_layout_and_tpch_row_counts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tpch");
    let report = generate(&GenOptions {
        quiet: true,
        ..GenOptions::new(SF, &out)
    })
    .unwrap();

    let mut folders: Vec<String> = files_in(&out)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut expected: Vec<String> = Table::ALL.iter().map(|t| t.to_string()).collect();
    expected.sort();
    assert_eq!(folders, expected);

    // TPC-H's cardinalities: SF × the base, nation and region fixed.
    let exact = [
        (Table::Nation, 25u64),
        (Table::Region, 5),
        (Table::Supplier, (10_000.0 * SF) as u64),
        (Table::Customer, (150_000.0 * SF) as u64),
        (Table::Part, (200_000.0 * SF) as u64),
        (Table::PartSupp, (800_000.0 * SF) as u64),
        (Table::Orders, (1_500_000.0 * SF) as u64),
    ];
    for (table, rows) in exact {
        let files = files_in(&out.join(table.name()));
        assert_eq!(
            files,
            vec![out.join(table.name()).join("part-0.parquet")],
            "{table}: one file at SF {SF}"
        );
        assert_eq!(rows_in(&files[0]), rows, "{table}");
    }
    let lineitem = rows_in(&out.join("lineitem/part-0.parquet"));
    let expected = 6_000_000.0 * SF;
    assert!(
        (lineitem as f64 - expected).abs() / expected < 0.03,
        "lineitem: {lineitem} rows, expected about {expected}"
    );
    assert_eq!(
        metadata(&out.join("lineitem/part-0.parquet"))
            .file_metadata()
            .schema_descr()
            .num_columns(),
        16
    );

    // The report agrees with the files.
    assert_eq!(report.tables.len(), 8);
    for t in &report.tables {
        assert_eq!(t.files.len(), 1, "{}", t.table);
        let f = &t.files[0];
        assert_eq!(f.rows, rows_in(&f.path), "{}", t.table);
        assert_eq!(f.bytes, std::fs::metadata(&f.path).unwrap().len());
        assert_eq!((t.rows, t.bytes), (f.rows, f.bytes));
    }
    assert_eq!(report.files(), 8);
    assert!(partial_files(&out).is_empty(), "{:?}", partial_files(&out));
}

#[test]
fn parts_split_big_tables_into_files_whose_rows_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let tables = [
        Table::LineItem,
        Table::Orders,
        Table::Supplier,
        Table::Nation,
    ];
    let one = dir.path().join("one");
    generate(&opts(&one, &tables)).unwrap();
    let three = dir.path().join("three");
    let report = generate(&GenOptions {
        parts: Some(3),
        ..opts(&three, &tables)
    })
    .unwrap();

    for table in [Table::LineItem, Table::Orders, Table::Supplier] {
        let files = files_in(&three.join(table.name()));
        let names: Vec<String> = files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["part-0.parquet", "part-1.parquet", "part-2.parquet"],
            "{table}"
        );
        let counts: Vec<u64> = files.iter().map(|f| rows_in(f)).collect();
        assert!(counts.iter().all(|&c| c > 0), "{table}: {counts:?}");
        let whole = rows_in(&one.join(table.name()).join("part-0.parquet"));
        assert_eq!(counts.iter().sum::<u64>(), whole, "{table}: {counts:?}");
        let reported = report.tables.iter().find(|t| t.table == table).unwrap();
        assert_eq!(reported.rows, whole);
        assert_eq!(reported.files.len(), 3);
    }
    // nation is not partitioned.
    assert_eq!(files_in(&three.join("nation")).len(), 1);
    assert_eq!(rows_in(&three.join("nation/part-0.parquet")), 25);
    assert!(partial_files(dir.path()).is_empty());
}

#[test]
fn zstd_is_readable_and_smaller_than_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut sizes = Vec::new();
    let mut rows = Vec::new();
    for (name, compression) in [("none", "none"), ("zstd", "zstd:3")] {
        let out = dir.path().join(name);
        let compression = parse_compression(compression).unwrap();
        let report = generate(&GenOptions {
            compression,
            ..opts(&out, &[Table::Orders])
        })
        .unwrap();
        let path = out.join("orders/part-0.parquet");
        let meta = metadata(&path);
        for rg in meta.row_groups() {
            for c in rg.columns() {
                // The footer records the codec, not the zstd level.
                assert_eq!(
                    std::mem::discriminant(&c.compression()),
                    std::mem::discriminant(&compression)
                );
            }
        }
        // Decode every batch.
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let decoded: usize = reader.map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(decoded as u64, report.rows());
        rows.push(decoded);
        sizes.push(std::fs::metadata(&path).unwrap().len());
    }
    assert_eq!(rows[0], rows[1]);
    assert_eq!(rows[0], 15_000);
    assert!(
        sizes[1] < sizes[0],
        "zstd {} bytes vs none {} bytes",
        sizes[1],
        sizes[0]
    );
}

#[test]
fn row_group_and_page_rows_are_respected() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    generate(&GenOptions {
        row_group_rows: 4_000,
        page_rows: Some(500),
        ..opts(&out, &[Table::Orders])
    })
    .unwrap();
    let meta = metadata(&out.join("orders/part-0.parquet"));
    let sizes: Vec<i64> = meta.row_groups().iter().map(|rg| rg.num_rows()).collect();
    // 15 000 orders: 4 000 × 3 + 3 000.
    assert_eq!(sizes, [4_000, 4_000, 4_000, 3_000]);
    let offsets = meta.offset_index().expect("page index written");
    for (rg, columns) in offsets.iter().enumerate() {
        for (c, column) in columns.iter().enumerate() {
            let firsts: Vec<i64> = column
                .page_locations()
                .iter()
                .map(|p| p.first_row_index)
                .chain([sizes[rg]])
                .collect();
            let pages: Vec<i64> = firsts.windows(2).map(|w| w[1] - w[0]).collect();
            assert!(
                pages.iter().all(|&n| n <= 500),
                "row group {rg} column {c}: pages of {pages:?} rows"
            );
        }
    }
    // Page statistics (column index) are written too.
    assert!(meta.column_index().is_some());
}

#[test]
fn a_non_empty_folder_needs_force_and_force_replaces_only_the_tables_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("nation")).unwrap();
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    std::fs::write(out.join("nation/stale.parquet"), "old").unwrap();
    std::fs::create_dir_all(out.join("region")).unwrap();
    std::fs::write(out.join("region/part-0.parquet"), "old region").unwrap();

    let err = generate(&opts(&out, &[Table::Nation])).unwrap_err();
    match &err {
        Gdscan(Error::Io(IoError::Os { path, source, .. })) => {
            assert_eq!(Path::new(path), out);
            assert_eq!(source.kind(), std::io::ErrorKind::DirectoryNotEmpty);
        }
        other => panic!("expected Error::Io(IoError::Os), got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("not empty") && msg.contains("--force"),
        "{msg}"
    );
    // Nothing was touched.
    assert_eq!(
        std::fs::read(out.join("nation/stale.parquet")).unwrap(),
        b"old"
    );

    generate(&GenOptions {
        force: true,
        ..opts(&out, &[Table::Nation])
    })
    .unwrap();
    assert_eq!(
        files_in(&out.join("nation")),
        vec![out.join("nation/part-0.parquet")],
        "the nation folder was replaced"
    );
    assert_eq!(rows_in(&out.join("nation/part-0.parquet")), 25);
    assert_eq!(std::fs::read(out.join("keep.txt")).unwrap(), b"mine");
    assert_eq!(
        std::fs::read(out.join("region/part-0.parquet")).unwrap(),
        b"old region",
        "tables not asked for are left alone"
    );
}

#[test]
fn an_empty_existing_folder_is_used_without_force() {
    let dir = tempfile::tempdir().unwrap();
    generate(&opts(dir.path(), &[Table::Region])).unwrap();
    assert_eq!(rows_in(&dir.path().join("region/part-0.parquet")), 5);
}

#[test]
fn an_unwritable_folder_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file.txt");
    std::fs::write(&file, "not a folder").unwrap();
    let out = file.join("out");
    let err = generate(&opts(&out, &[Table::Nation])).unwrap_err();
    match &err {
        Gdscan(Error::Io(IoError::Os { path, op, .. })) => {
            assert_eq!(Path::new(path), out);
            assert_eq!(*op, "create folder");
        }
        other => panic!("expected Error::Io(IoError::Os), got {other:?}"),
    }
    assert!(err.to_string().contains("file.txt/out"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"not a folder");
    assert!(partial_files(dir.path()).is_empty());

    // The output folder is a file.
    let err = generate(&opts(&file, &[Table::Nation])).unwrap_err();
    assert!(err.to_string().contains("file.txt"), "{err}");
}

#[test]
fn bad_options_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (o, flag) in [
        (
            GenOptions {
                scale_factor: 0.0,
                ..opts(&out, &[Table::Nation])
            },
            "--sf",
        ),
        (
            GenOptions {
                scale_factor: f64::NAN,
                ..opts(&out, &[Table::Nation])
            },
            "--sf",
        ),
        (
            GenOptions {
                row_group_rows: 0,
                ..opts(&out, &[Table::Nation])
            },
            "--row-group-rows",
        ),
        (
            GenOptions {
                page_rows: Some(0),
                ..opts(&out, &[Table::Nation])
            },
            "--page-rows",
        ),
        (
            GenOptions {
                parts: Some(0),
                ..opts(&out, &[Table::Nation])
            },
            "--parts",
        ),
        (
            GenOptions {
                parts: Some(1_000_000),
                ..opts(&out, &[Table::Nation])
            },
            "--parts",
        ),
        (opts(&out, &[]), "--tables"),
    ] {
        let err = generate(&o).unwrap_err();
        assert!(matches!(err, Gdscan(Error::Config(_))), "{err:?}");
        assert!(err.to_string().contains(flag), "{err}");
    }
    assert!(!out.exists(), "nothing created for bad options");
}

/// A tmpfs of 512 KiB mounted for the test and unmounted on drop.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path) -> Option<SmallDisk> {
        let path = dir.join("small");
        std::fs::create_dir(&path).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=512k", "tmpfs"])
            .arg(&path)
            .stderr(std::process::Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        ok.then_some(SmallDisk(path))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_is_a_clear_error_and_leaves_no_partial_or_incomplete_table() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = SmallDisk::mount(dir.path()) else {
        // Needs root (or CAP_SYS_ADMIN); the unit test in src/tpch.rs covers
        // the error path with a writer that fails like a full disk.
        eprintln!("skipped: cannot mount a small tmpfs here");
        return;
    };
    let out = disk.0.join("out");
    let err = generate(&GenOptions {
        compression: Compression::UNCOMPRESSED,
        ..opts(&out, &[Table::Nation, Table::LineItem])
    })
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("No space left on device"), "{msg}");
    assert!(msg.contains("lineitem/part-0.parquet"), "{msg}");
    match &err {
        Gdscan(Error::Io(IoError::Os { source, .. })) => {
            assert_eq!(source.raw_os_error(), Some(libc::ENOSPC))
        }
        other => panic!("expected Error::Io(IoError::Os), got {other:?}"),
    }
    assert!(partial_files(&out).is_empty(), "{:?}", partial_files(&out));
    assert!(
        !out.join("lineitem").exists(),
        "the incomplete table's folder is removed"
    );
    // The complete table stays.
    assert_eq!(rows_in(&out.join("nation/part-0.parquet")), 25);
}

fn gdscan(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(args)
        .output()
        .expect("run gdscan")
}

#[test]
fn cli_generates_quietly_and_prints_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let run = gdscan(&[
        "tpch",
        "gen",
        "--sf",
        "0.01",
        "--out",
        o,
        "--tables",
        "nation,region,supplier",
        "--parts",
        "2",
        "--compression",
        "zstd",
        "--quiet",
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "stderr: {stderr}");
    assert!(
        stderr.is_empty(),
        "quiet: nothing on stderr, got {stderr:?}"
    );
    assert!(stdout.contains("zstd:1"), "{stdout}");
    let header = stdout.lines().nth(1).unwrap();
    for col in ["table", "files", "rows", "bytes", "seconds"] {
        assert!(header.contains(col), "{header}");
    }
    let row = |name: &str| -> Vec<String> {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} line in {stdout}"))
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    assert_eq!(row("nation")[1..3], ["1", "25"]);
    assert_eq!(row("region")[1..3], ["1", "5"]);
    assert_eq!(row("supplier")[1..3], ["2", "100"]);
    assert_eq!(row("total")[1..3], ["4", "130"]);
    assert_eq!(files_in(&out.join("supplier")).len(), 2);

    // Again without --force: refused, exit code 1, nothing on stdout.
    let again = gdscan(&["tpch", "gen", "--sf", "0.01", "--out", o, "--quiet"]);
    assert_eq!(again.status.code(), Some(1));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains("--force") && !err.contains("panicked"),
        "{err}"
    );
    assert!(again.stdout.is_empty());

    // A bad table name is a usage error.
    let bad = gdscan(&["tpch", "gen", "--out", o, "--tables", "lineitems"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("lineitems"));
}

/// Every file of the table folder `dir`, each read whole with arrow-rs.
fn read_files(dir: &Path) -> Vec<RecordBatch> {
    files_in(dir)
        .iter()
        .map(|path| {
            let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
                .unwrap()
                .build()
                .unwrap();
            let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
            concat_batches(&batches[0].schema(), &batches).unwrap()
        })
        .collect()
}

/// The table folder `dir` read whole with arrow-rs, as one batch.
fn read_table(dir: &Path) -> RecordBatch {
    let files = read_files(dir);
    concat_batches(&files[0].schema(), &files).unwrap()
}

/// `batch`'s Int64 column `name`.
fn int64s(batch: &RecordBatch, name: &str) -> Vec<i64> {
    batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_primitive::<Int64Type>()
        .values()
        .to_vec()
}

/// The lineitems of orders_nested's `o_lineitems`, flattened (the items
/// the lists' offsets cover), and the offsets, rebased to start at 0.
fn nested_items(nested: &RecordBatch) -> (StructArray, Vec<usize>) {
    let list = nested
        .column_by_name(LINEITEMS_COLUMN)
        .expect("o_lineitems")
        .as_list::<i32>();
    assert_eq!(list.null_count(), 0, "no null list");
    let offsets = list.value_offsets();
    let first = offsets[0] as usize;
    let last = offsets[offsets.len() - 1] as usize;
    let items = list.values().slice(first, last - first);
    assert_eq!(items.null_count(), 0, "no null item");
    let rebased = offsets.iter().map(|&o| o as usize - first).collect();
    (items.as_struct().clone(), rebased)
}

/// orders_nested against the flat orders and lineitem of the same run: one
/// row per order with the order's columns, and each order's list holding
/// exactly its lineitems (all columns but l_orderkey), in lineitem order.
#[test]
fn orders_nested_holds_the_orders_and_each_orders_lineitems() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let tables = [Table::Orders, Table::LineItem, Table::OrdersNested];
    let report = generate(&opts(&out, &tables)).unwrap();
    let orders = read_table(&out.join("orders"));
    let lineitem = read_table(&out.join("lineitem"));
    let nested = read_table(&out.join("orders_nested"));

    assert_eq!(nested.num_rows(), orders.num_rows());
    let reported = report
        .tables
        .iter()
        .find(|t| t.table == Table::OrdersNested);
    assert_eq!(reported.unwrap().rows, orders.num_rows() as u64);
    // The order columns: orders', in order, with the same values.
    let order_fields = orders.schema().fields().len();
    assert_eq!(nested.num_columns(), order_fields + 1);
    for (i, field) in orders.schema().fields().iter().enumerate() {
        assert_eq!(nested.schema().field(i), field.as_ref());
        assert!(
            nested.column(i).as_ref() == orders.column(i).as_ref(),
            "{} differs from orders'",
            field.name()
        );
    }

    // The items: lineitem's columns but l_orderkey, and, flattened, its rows.
    let (items, offsets) = nested_items(&nested);
    let item_names: Vec<&str> = items.fields().iter().map(|f| f.name().as_str()).collect();
    let line_schema = lineitem.schema();
    let flat_names: Vec<&str> = line_schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .filter(|n| *n != "l_orderkey")
        .collect();
    assert_eq!(item_names, flat_names);
    assert_eq!(items.len(), lineitem.num_rows());
    for name in &flat_names {
        let flat = lineitem.column_by_name(name).unwrap();
        let inner = items.column_by_name(name).unwrap();
        assert_eq!(inner.data_type(), flat.data_type(), "{name}");
        assert!(
            inner.as_ref() == flat.as_ref(),
            "{name} differs from lineitem's"
        );
    }

    // Each list holds exactly the lineitems of its order: the lineitem rows
    // it covers carry its key, and the keys are those of distinct orders.
    let order_keys = int64s(&orders, "o_orderkey");
    let line_keys = int64s(&lineitem, "l_orderkey");
    let distinct: std::collections::HashSet<i64> = order_keys.iter().copied().collect();
    assert_eq!(distinct.len(), order_keys.len(), "order keys are unique");
    assert_eq!(offsets.len(), order_keys.len() + 1);
    assert_eq!(offsets[order_keys.len()], line_keys.len());
    for (i, key) in order_keys.iter().enumerate() {
        let lines = &line_keys[offsets[i]..offsets[i + 1]];
        assert!(
            (1..=7).contains(&lines.len()),
            "order {key}: {} lineitems",
            lines.len()
        );
        assert!(lines.iter().all(|k| k == key), "order {key}: {lines:?}");
    }
}

/// orders_nested is written as lineitem is: the same codec, dictionaries
/// and page index; the same files (file `i` holds the orders of lineitem's
/// file `i`); row groups of a quarter of the row limit in orders.
#[test]
fn orders_nested_follows_lineitems_files_and_settings() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    generate(&GenOptions {
        parts: Some(3),
        row_group_rows: 4_000,
        compression: parse_compression("zstd:3").unwrap(),
        ..opts(&out, &[Table::LineItem, Table::OrdersNested])
    })
    .unwrap();
    let flat_files = files_in(&out.join("lineitem"));
    let nested_files = files_in(&out.join("orders_nested"));
    assert_eq!(flat_files.len(), 3);
    assert_eq!(nested_files.len(), 3);
    let flat = read_files(&out.join("lineitem"));
    let nested = read_files(&out.join("orders_nested"));
    for i in 0..3 {
        // The same orders as lineitem's file of the same number.
        let mut keys = int64s(&flat[i], "l_orderkey");
        keys.dedup();
        assert_eq!(int64s(&nested[i], "o_orderkey"), keys, "file {i}");
        assert_eq!(nested_items(&nested[i]).0.len(), flat[i].num_rows());

        // 1 000 orders per row group (4 000 / 4), the last one shorter.
        let meta = metadata(&nested_files[i]);
        let sizes: Vec<i64> = meta.row_groups().iter().map(|rg| rg.num_rows()).collect();
        let (last, full) = sizes.split_last().unwrap();
        assert!(full.iter().all(|&n| n == 1_000), "{sizes:?}");
        assert!((1..=1_000).contains(last), "{sizes:?}");
        assert!(meta.column_index().is_some() && meta.offset_index().is_some());

        // The nested lineitem leaves are stored as the flat columns are.
        let flat_meta = metadata(&flat_files[i]);
        let flat_chunks = flat_meta.row_group(0).columns();
        for chunk in meta.row_group(0).columns() {
            let path = chunk.column_path().string();
            let Some(leaf) = path.strip_prefix("o_lineitems.list.item.") else {
                continue;
            };
            let twin = flat_chunks
                .iter()
                .find(|c| c.column_path().string() == leaf)
                .unwrap_or_else(|| panic!("no lineitem column {leaf}"));
            assert_eq!(chunk.compression(), twin.compression(), "{path}");
            assert_eq!(
                chunk.dictionary_page_offset().is_some(),
                twin.dictionary_page_offset().is_some(),
                "{path}"
            );
            assert_eq!(
                chunk.column_descr().physical_type(),
                twin.column_descr().physical_type()
            );
        }
    }
}

#[test]
fn cli_writes_orders_nested_only_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let run = gdscan(&[
        "tpch",
        "gen",
        "--sf",
        "0.01",
        "--out",
        o,
        "--tables",
        "orders_nested",
        "--quiet",
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let row: Vec<&str> = stdout
        .lines()
        .find(|l| l.starts_with("orders_nested "))
        .unwrap_or_else(|| panic!("no orders_nested line in {stdout}"))
        .split_whitespace()
        .collect();
    assert_eq!(row[1..3], ["1", "15000"]);
    assert_eq!(files_in(&out), vec![out.join("orders_nested")]);
}
