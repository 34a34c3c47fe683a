//! `gdscan plan` and `gdscan scan` on a file the test writes: JSON shapes,
//! per-chunk checksums against the file's own bytes, the decoded output, and
//! clean failures on files that are not Parquet.

mod common;

use std::process::{Command, Output};

fn gdscan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(args)
        .output()
        .expect("run gdscan")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn plan_json_lists_chunks_requests_and_totals() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let p = path.to_str().unwrap();
    let v = json(&gdscan(&[
        "plan",
        p,
        "--columns",
        "l_orderkey,l_discount",
        "--json",
    ]));
    let chunks = v["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 10, "2 columns x 5 row groups");
    assert!(chunks
        .iter()
        .all(|c| c["row_group"].is_u64() && c["offset"].is_u64() && c["len"].is_u64()));
    assert_eq!(chunks[0]["column"], "l_orderkey");
    assert_eq!(chunks[1]["column"], "l_discount");
    assert!(!v["requests"].as_array().unwrap().is_empty());
    let t = &v["totals"];
    assert!(t["bytes_read"].as_u64().unwrap() >= t["bytes_needed"].as_u64().unwrap());
    assert_eq!(t["row_groups_kept"], 5);

    let filtered = json(&gdscan(&[
        "plan",
        p,
        "--filter",
        "l_orderkey < 3000",
        "--json",
    ]));
    assert_eq!(filtered["totals"]["row_groups_kept"], 1);
    assert_eq!(filtered["totals"]["row_groups_pruned_by_statistics"], 4);
    let text = gdscan(&["plan", p, "--row-groups", "0,2"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("row groups kept 2 of 2"), "{text}");
}

#[test]
fn scan_checksums_are_the_file_bytes_and_output_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let file = std::fs::read(&path).unwrap();
    let p = path.to_str().unwrap();
    let out_path = dir.path().join("out.arrow");
    let v = json(&gdscan(&[
        "scan",
        p,
        "--host",
        "--columns",
        "l_orderkey,l_comment",
        "--filter",
        "l_orderkey >= 100 AND l_orderkey < 250",
        "--checksum",
        "--stats",
        "--json",
        "--output",
        out_path.to_str().unwrap(),
    ]));
    let plan = json(&gdscan(&[
        "plan",
        p,
        "--columns",
        "l_orderkey,l_comment",
        "--filter",
        "l_orderkey >= 100 AND l_orderkey < 250",
        "--json",
    ]));
    let sums = v["checksums"].as_array().unwrap();
    let chunks = plan["chunks"].as_array().unwrap();
    assert_eq!(sums.len(), chunks.len());
    for (sum, chunk) in sums.iter().zip(chunks) {
        let mut hasher = crc32fast::Hasher::new();
        for r in chunk["ranges"].as_array().unwrap() {
            let (o, l) = (
                r[0].as_u64().unwrap() as usize,
                r[1].as_u64().unwrap() as usize,
            );
            hasher.update(&file[o..o + l]);
        }
        assert_eq!(
            sum["crc32"],
            format!("{:08x}", hasher.finalize()),
            "{}",
            chunk["column"]
        );
    }
    assert_eq!(v["bytes_read"], v["totals"]["bytes_read"]);
    assert_eq!(v["rows_written"], 150, "the filter applies row-exactly");
    assert!(v["report"]["verdict"]
        .as_str()
        .unwrap()
        .contains("posix-host"));
    let batches: Vec<_> =
        arrow::ipc::reader::FileReader::try_new(std::fs::File::open(&out_path).unwrap(), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 150);
    assert_eq!(batches[0].schema().field(0).name(), "l_orderkey");
    assert_eq!(batches[0].num_columns(), 2);
}

#[test]
fn not_parquet_truncated_and_bad_requests_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let text = dir.path().join("text.parquet");
    std::fs::write(&text, b"this is not parquet at all").unwrap();
    let p = path.to_str().unwrap();
    for (args, needle) in [
        (vec!["scan", cut.to_str().unwrap(), "--host"], "cut.parquet"),
        (
            vec!["scan", text.to_str().unwrap(), "--host"],
            "text.parquet",
        ),
        (
            vec!["plan", p, "--columns", "nope"],
            "column \"nope\" is not in the file",
        ),
        (
            vec!["plan", p, "--row-groups", "9"],
            "row group 9 does not exist",
        ),
        (
            vec!["plan", p, "--filter", "l_orderkey >> 3"],
            "cannot parse filter",
        ),
        (vec!["scan", "/no/such.parquet", "--host"], "no such file"),
    ] {
        let out = gdscan(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// The files fuzzing found to make arrow-rs abort on an allocation
/// (`fuzz/findings/reader-abort`: a DELTA_BYTE_ARRAY length count near
/// 10^15): `scan --host --output` refuses each with a typed error before
/// arrow-rs sizes anything from it (`parquet::delta_guard`).
#[test]
fn reader_abort_findings_are_typed_errors() {
    let files = common::findings("reader-abort");
    assert_eq!(files.len(), 7, "the findings are there");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.arrow");
    for file in &files {
        let o = gdscan(&[
            "scan",
            file.to_str().unwrap(),
            "--host",
            "--output",
            out.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let name = file.display();
        assert_eq!(o.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains("corrupt DELTA_BYTE_ARRAY page")
                && stderr.contains("prefix stream counts"),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("backtrace"), "{name}: {stderr}");
    }
}

/// The files fuzzing found to make arrow-rs's decoders panic
/// (`fuzz/findings/reader`): `scan --host --output` ends each one with a
/// typed error or a complete file, never a crash (exit 101), and prints no
/// panic message or backtrace (the panic is caught at gdscan's border).
#[test]
fn reader_findings_end_in_typed_errors_without_panic_output() {
    let files = common::findings("reader");
    assert!(files.len() >= 60, "the findings are there: {}", files.len());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.arrow");
    let mut failed = 0;
    for file in &files {
        let o = gdscan(&[
            "scan",
            file.to_str().unwrap(),
            "--host",
            "--output",
            out.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let name = file.display();
        assert_ne!(o.status.code(), Some(101), "{name} crashed: {stderr}");
        assert!(o.status.code().is_some(), "{name} was killed: {stderr}");
        assert!(
            !stderr.contains("panicked at"),
            "{name} printed a panic: {stderr}"
        );
        assert!(
            !stderr.contains("backtrace"),
            "{name} printed a backtrace: {stderr}"
        );
        if !o.status.success() {
            failed += 1;
            assert!(stderr.starts_with("gdscan: error: "), "{name}: {stderr}");
        }
    }
    assert!(failed > 0, "corrupt files are refused");
}

/// A file DuckDB wrote with `PARQUET_VERSION V2` (testdata/README.md):
/// INT32 columns spanning the whole range, whose DELTA_BINARY_PACKED deltas
/// do not fit 32 bits. arrow-rs refuses it ("'min_delta' too large"): the
/// CPU path says why, and where the file does decode.
#[test]
fn wide_int32_deltas_on_the_cpu_say_why_and_point_to_the_gpu() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/duckdb_wide_deltas.parquet");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.arrow");
    let o = gdscan(&[
        "scan",
        file.to_str().unwrap(),
        "--host",
        "--output",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("deltas wider than its 32-bit type"),
        "{stderr}"
    );
    assert!(stderr.contains("--decode"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
