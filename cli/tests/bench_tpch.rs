//! `gdscan bench tpch` into host memory on a tiny generated TPC-H set: the
//! JSON's shape (dfbench-style context and iterations), every table scanned,
//! the lineitem queries' bytes read within 1.1 × needed, and clean errors;
//! the load mode of `--engine datafusion --streams` (rounds of concurrent
//! query streams, their failures, row counts and memory) and its refusal
//! with another engine.

use std::process::Command;

#[test]
fn host_run_reports_every_query_with_bounded_read_amplification() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("tpch");
    let mut gen = gdscan_cli::tpch::GenOptions::new(0.01, &data);
    gen.quiet = true;
    gdscan_cli::tpch::generate(&gen).unwrap();
    let json = dir.path().join("out.json");
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args([
            "bench",
            "tpch",
            "--data",
            data.to_str().unwrap(),
            "--host",
            "--iterations",
            "2",
        ])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["context"]["destination"], "host");
    assert_eq!(v["context"]["gdscan_version"], env!("CARGO_PKG_VERSION"));
    let queries = v["queries"].as_array().unwrap();
    let names: Vec<&str> = queries
        .iter()
        .map(|q| q["query"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "scan_nation",
            "scan_region",
            "scan_part",
            "scan_supplier",
            "scan_partsupp",
            "scan_customer",
            "scan_orders",
            "scan_lineitem",
            "q1",
            "q6",
            "q14",
            "q19"
        ]
    );
    for q in queries {
        let needed = q["bytes_needed"].as_f64().unwrap();
        let read = q["bytes_read"].as_f64().unwrap();
        assert!(
            needed > 0.0 && read <= 1.1 * needed,
            "{}: {read} of {needed}",
            q["query"]
        );
        let iterations = q["iterations"].as_array().unwrap();
        assert_eq!(iterations.len(), 2);
        for it in iterations {
            assert_eq!(it["bytes_read"].as_f64().unwrap(), read);
            assert!(it["elapsed"].as_f64().unwrap() > 0.0);
        }
    }
    let nation = &queries[0]["iterations"][0];
    assert_eq!(nation["row_count"], 25);
    let lineitem_all = queries[7]["bytes_needed"].as_u64().unwrap();
    let q6 = queries[9]["bytes_needed"].as_u64().unwrap();
    assert!(
        q6 < lineitem_all / 2,
        "Q6 reads 4 of 16 columns: {q6} of {lineitem_all}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("scan_lineitem"));
}

#[test]
fn unknown_queries_and_missing_data_are_clean_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args([
            "bench",
            "tpch",
            "--data",
            dir.path().to_str().unwrap(),
            "--host",
            "--queries",
            "q99",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown query \"q99\""));
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args([
            "bench",
            "tpch",
            "--data",
            dir.path().to_str().unwrap(),
            "--host",
            "--queries",
            "q6",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("lineitem") && !err.contains("panicked"),
        "{err}"
    );
}

/// `bench tpch --engine datafusion --streams 2 --rounds 2` on SF 0.01: two
/// rounds of 2 streams × 2 queries, none failed, every row count as in
/// round 1, and (no GPU scan here) nothing held by gdscan's pools.
#[cfg(feature = "datafusion")]
#[test]
fn load_mode_runs_rounds_of_concurrent_streams_and_reports_a_clean_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("tpch");
    let json = dir.path().join("load.json");
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(["bench", "tpch", "--engine", "datafusion", "--data"])
        .arg(&data)
        .args(["--sf", "0.01", "--streams", "2", "--rounds", "2"])
        .args(["--query", "1,6", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("verdict: passed"), "{stdout}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["context"]["streams"], 2);
    assert_eq!(v["context"]["queries"], serde_json::json!([1, 6]));
    let rounds = v["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{v}");
    for (i, round) in rounds.iter().enumerate() {
        assert_eq!(round["round"], i + 1, "{round}");
        assert_eq!(round["queries"], 4, "{round}");
        assert_eq!(round["failed"], 0, "{round}");
        assert!(round["first_error"].is_null(), "{round}");
        assert!(round["seconds"].as_f64().unwrap() > 0.0, "{round}");
        assert!(round["rss_bytes"].as_u64().unwrap() > 0, "{round}");
        let memory = &round["memory"];
        assert_eq!(memory["device_in_use_bytes"], 0, "{memory}");
        assert_eq!(memory["pinned_in_use_bytes"], 0, "{memory}");
    }
    assert_eq!(v["mismatches"], serde_json::json!([]));
    let verdict = &v["verdict"];
    assert_eq!(verdict["total_queries"], 8, "{verdict}");
    assert_eq!(verdict["failures"], 0, "{verdict}");
    assert_eq!(verdict["row_mismatches"], 0, "{verdict}");
    assert_eq!(verdict["device_in_use_growth_bytes"], 0, "{verdict}");
    assert_eq!(verdict["pinned_in_use_growth_bytes"], 0, "{verdict}");
    assert_eq!(verdict["passed"], true, "{verdict}");
}

/// `--streams` runs the SQL queries: with `--engine scan` it is refused
/// before any data is generated or read.
#[test]
fn streams_with_another_engine_than_datafusion_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("tpch");
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(["bench", "tpch", "--engine", "scan", "--data"])
        .arg(&data)
        .args(["--sf", "0.01", "--host", "--streams", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--streams") && err.contains("--engine datafusion"),
        "{err}"
    );
    assert!(!data.exists(), "nothing generated before the refusal");
}
