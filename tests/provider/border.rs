//! The fuzzing findings that make arrow-rs's decoders panic
//! (`fuzz/findings/reader`) through gdscan's DataFusion provider: each
//! `select *` ends with its rows or a typed error, never with a panic out
//! of the query (feature `datafusion`).

use std::path::PathBuf;

use gdscan::datafusion::{context, register_parquet, run_sql, runtime, GdsTableOptions};

fn findings() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/findings/reader");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fuzz/findings/reader")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    assert!(files.len() >= 60, "the findings are there: {}", files.len());
    files
}

/// Registers `file` and runs `select *` (on two partitions, so that
/// DataFusion's own tasks poll the scan too): the query's error, if any.
fn select_all(file: &str) -> Result<(), String> {
    let rt = runtime().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let ctx = context(Some(2));
        register_parquet(&ctx, "t", file, GdsTableOptions::default())
            .map_err(|e| format!("register: {e}"))?;
        run_sql(&ctx, "select * from t")
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
}

#[test]
fn reader_findings_end_in_rows_or_typed_errors_never_a_panic() {
    let mut caught = 0;
    for file in findings() {
        let name = file.to_str().unwrap().to_string();
        let shown = name.clone();
        let outcome = std::thread::spawn(move || select_all(&name)).join();
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(_) => panic!("{shown}: a panic escaped the query"),
        };
        if let Err(e) = outcome {
            if e.contains("stopped by an internal check") {
                caught += 1;
                assert!(e.contains(&shown), "{shown}: the error names the file: {e}");
            }
        }
    }
    assert!(caught > 0, "some findings reach arrow-rs's panics");
}
