//! `gdscan sql` and `gdscan bench tpch --engine datafusion` (feature
//! `datafusion`): output formats against DataFusion's own answer, the
//! benchmark's report, and clean failures.

#![cfg(feature = "datafusion")]

mod common;

use std::process::{Command, Output};

use gdscan::datafusion::{context, format_batches, run_sql, runtime, OutputFormat};

fn gdscan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(args)
        .output()
        .expect("run gdscan")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_clean_failure(out: &Output, needle: &str) {
    assert_eq!(out.status.code(), Some(1), "stderr: {}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains(needle),
        "stderr {err:?} should contain {needle:?}"
    );
    assert!(!err.contains("panicked"), "no panics: {err}");
}

const SQL: &str = "select l_orderkey, l_discount, l_shipdate, l_comment from t \
                   where l_orderkey < 8 order by l_orderkey";

/// The same statement through DataFusion's own Parquet table, formatted.
fn datafusion_answer(file: &str, format: OutputFormat) -> String {
    runtime().unwrap().block_on(async {
        let ctx = context(None);
        ctx.register_parquet("t", file, Default::default())
            .await
            .unwrap();
        let schema = ctx.sql(SQL).await.unwrap().schema().inner().clone();
        let batches = run_sql(&ctx, SQL).await.unwrap();
        format_batches(&schema, &batches, format).unwrap()
    })
}

#[test]
fn sql_prints_datafusions_answer_as_table_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_file(dir.path());
    let file = file.to_str().unwrap();
    let table = format!("t={file}");
    for (name, format) in [
        ("table", OutputFormat::Table),
        ("csv", OutputFormat::Csv),
        ("json", OutputFormat::Json),
    ] {
        let out = gdscan(&["sql", "--table", &table, "--format", name, SQL]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), datafusion_answer(file, format), "{name}");
    }
    let csv = gdscan(&["sql", "--table", &table, "--format", "csv", SQL]);
    let csv = text(&csv.stdout);
    assert_eq!(
        csv.lines().next(),
        Some("l_orderkey,l_discount,l_shipdate,l_comment"),
        "a header line first"
    );
    let json: serde_json::Value = serde_json::from_slice(
        &gdscan(&["sql", "--table", &table, "--format", "json", SQL]).stdout,
    )
    .unwrap();
    assert_eq!(
        json.as_array().map(|a| a.len()),
        Some(csv.lines().count() - 1)
    );
}

#[test]
fn sql_fails_cleanly() {
    let out = gdscan(&["sql", "--table", "t=/no/such/file.parquet", "select 1"]);
    assert_clean_failure(&out, "/no/such/file.parquet");
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_file(dir.path());
    let table = format!("t={}", file.display());
    let out = gdscan(&["sql", "--table", &table, "select nope from t"]);
    assert_clean_failure(&out, "nope");
    let out = gdscan(&["sql", "--table", "nameonly", "select 1"]);
    assert_clean_failure(&out, "NAME=PATH");
    let out = gdscan(&["sql", "--format", "xml", "select 1"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    // A statement that does not finish within its time limit is an error
    // naming it (0 s: none does, however quickly it runs).
    let out = gdscan(&["sql", "--table", &table, "--timeout", "0", SQL]);
    assert_clean_failure(&out, "did not finish within 0 s");
    assert!(out.stdout.is_empty(), "no partial answer");
}

#[test]
fn bench_tpch_datafusion_reports_both_sides_and_the_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("tpch");
    let mut gen = gdscan_cli::tpch::GenOptions::new(0.01, &data);
    gen.quiet = true;
    gdscan_cli::tpch::generate(&gen).unwrap();
    let json = dir.path().join("out.json");
    let out = gdscan(&[
        "bench",
        "tpch",
        "--engine",
        "datafusion",
        "--data",
        data.to_str().unwrap(),
        "--query",
        "1,6",
        "--query",
        "15",
        "--iterations",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("ratio"), "{shown}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let queries = v["queries"].as_array().unwrap();
    let numbers: Vec<u64> = queries
        .iter()
        .map(|q| q["query"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, vec![1, 6, 15]);
    for q in queries {
        assert_eq!(q["rows_match"], true, "{q}");
        assert!(q["gdscan_median"].as_f64().unwrap() > 0.0);
        assert!(q["datafusion_median"].as_f64().unwrap() > 0.0);
        assert!(q["ratio"].as_f64().unwrap() > 0.0);
        assert!(q["scan"]["bytes_read"].as_u64().unwrap() > 0, "{q}");
        // Host CPU seconds per run: one per timed iteration on each side,
        // each a real measurement (a query costs some CPU, never a
        // negative or missing figure).
        for side in ["gdscan_cpu", "datafusion_cpu"] {
            let runs = q[side].as_array().unwrap();
            assert_eq!(runs.len(), q["gdscan"].as_array().unwrap().len(), "{q}");
            assert!(runs.iter().all(|c| c.as_f64().unwrap() >= 0.0), "{q}");
        }
        assert!(q["gdscan_cpu_median"].as_f64().unwrap() > 0.0, "{q}");
    }
    assert!(shown.contains("gdscan cpu s"), "{shown}");
    let out = gdscan(&[
        "bench",
        "tpch",
        "--engine",
        "datafusion",
        "--data",
        data.to_str().unwrap(),
        "--query",
        "23",
    ]);
    assert_clean_failure(&out, "unknown TPC-H query 23");
    // --decode gpu: the same rows, and where the provider decoded.
    let out = gdscan(&[
        "bench",
        "tpch",
        "--engine",
        "datafusion",
        "--data",
        data.to_str().unwrap(),
        "--query",
        "6",
        "--iterations",
        "1",
        "--decode",
        "gpu",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("decode (gdscan provider"), "{shown}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let q = &v["queries"][0];
    assert_eq!(q["rows_match"], true, "{q}");
    let decode = &q["scan"]["decode"];
    let files = decode["gpu_files"].as_u64().unwrap() + decode["fallback_files"].as_u64().unwrap();
    assert!(files > 0, "{decode}");
    if !gdscan::cuda::driver::is_available() {
        assert!(shown.contains("on the CPU because: "), "{shown}");
    }
}

/// The files fuzzing found to make arrow-rs abort on an allocation
/// (`fuzz/findings/reader-abort`): `gdscan sql ... "select * from t"`
/// refuses each with a typed error (exit code 1), never an abort.
#[test]
fn reader_abort_findings_are_typed_errors() {
    let files = common::findings("reader-abort");
    assert_eq!(files.len(), 7, "the findings are there");
    for file in &files {
        let table = format!("t={}", file.display());
        let o = gdscan(&["sql", "--table", &table, "select * from t"]);
        let stderr = text(&o.stderr);
        let name = file.display();
        assert_eq!(o.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains("prefix stream counts"), "{name}: {stderr}");
        assert!(!stderr.contains("backtrace"), "{name}: {stderr}");
    }
}

/// The files fuzzing found to make arrow-rs's decoders panic
/// (`fuzz/findings/reader`): `gdscan sql ... "select * from t"` over each
/// prints its rows or ends with a typed error (exit code 1), never a crash
/// (exit code 101), and prints no panic message or backtrace (the scan's
/// streams stop panics at gdscan's border).
#[test]
fn reader_findings_end_in_typed_errors_without_panic_output() {
    let files = common::findings("reader");
    assert!(files.len() >= 60, "the findings are there: {}", files.len());
    let mut failed = 0;
    for file in &files {
        let table = format!("t={}", file.display());
        let o = gdscan(&["sql", "--table", &table, "select * from t"]);
        let stderr = text(&o.stderr);
        let name = file.display();
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{name} ended with {:?}: {stderr}",
            o.status
        );
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

/// `gdscan sql --decode gpu --stats` gives the CPU path's answer and says
/// where each file was decoded: on this machine's GPU, or (without one)
/// on the CPU, with the reason. A bad choice is a usage error.
#[test]
fn sql_decode_gpu_answers_as_the_cpu_and_says_where_each_file_went() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_file(dir.path());
    let table = format!("t={}", file.display());
    let cpu = gdscan(&["sql", "--table", &table, "--decode", "cpu", SQL]);
    assert!(cpu.status.success(), "{}", text(&cpu.stderr));
    for choice in ["gpu", "auto"] {
        let out = gdscan(&["sql", "--table", &table, "--decode", choice, "--stats", SQL]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), text(&cpu.stdout), "--decode {choice}");
        let err = text(&out.stderr);
        assert!(err.contains("gdscan: decode: "), "{err}");
        if !gdscan::cuda::driver::is_available() {
            assert!(err.contains(": cpu ("), "--decode {choice}: {err}");
            assert!(err.contains("0 files on the GPU"), "{err}");
        }
    }
    let out = gdscan(&["sql", "--table", &table, "--decode", "tpu", SQL]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
}

/// A process that falls back from the GPU exits cleanly, every time: the
/// libraries a decode opens on threads of its own (NVRTC, nvCOMP: C++ with
/// exit handlers) have opened or failed before the command ends. Where
/// NVRTC is installed and no GPU is (as in CI), an exit during NVRTC's
/// opening crashes (`double free or corruption`, a segfault) or hangs.
/// 24 processes, 8 at a time; a hang fails.
#[test]
fn sql_decode_gpu_exits_cleanly_while_libraries_open() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_file(dir.path());
    let table = format!("t={}", file.display());
    let args = ["sql", "--table", &table, "--decode", "gpu", SQL];
    for round in 0..3 {
        let children: Vec<_> = (0..8)
            .map(|_| {
                Command::new(env!("CARGO_BIN_EXE_gdscan"))
                    .args(args)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("run gdscan")
            })
            .collect();
        for mut child in children {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            let status = loop {
                if let Some(status) = child.try_wait().expect("wait for gdscan") {
                    break status;
                }
                if std::time::Instant::now() > deadline {
                    let _ = child.kill();
                    panic!("round {round}: gdscan hung at exit");
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            };
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            assert!(status.success(), "round {round}: {status:?}: {err}");
        }
    }
}
