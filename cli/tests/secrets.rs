//! Secrets stay out of everything gdscan prints: a URL's `user:password`,
//! and AWS, Azure and GCS credentials in the environment. The binary runs
//! with tracing at trace level (`RUST_LOG=trace`) through plans, scans
//! (`--json`, the path report of `--stats`), failures of each store kind,
//! and, with DataFusion, `EXPLAIN ANALYZE`; every byte it writes to stdout
//! and stderr is searched for every secret.

mod common;

use std::process::Command;

use common::range_server::RangeServer;

const PASSWORD: &str = "pw-Hunter2-8c1f";
const AWS_KEY_ID: &str = "AKIAFAKE8C1F0000XYZ";
const AWS_SECRET: &str = "aws-secret-8c1f-abcdefghijklmnop";
const AWS_TOKEN: &str = "aws-session-token-8c1f";
const AZURE_KEY: &str = "YXp1cmUta2V5LThjMWYtc2VjcmV0LXZhbHVl";
const GCS_PRIVATE: &str = "gcs-private-key-8c1f";

fn secrets() -> [&'static str; 6] {
    [
        PASSWORD,
        AWS_KEY_ID,
        AWS_SECRET,
        AWS_TOKEN,
        AZURE_KEY,
        GCS_PRIVATE,
    ]
}

/// Runs gdscan with every credential in its environment and trace logs on;
/// returns stdout and stderr together.
fn run(args: &[&str], endpoint: &str) -> String {
    let gcs_key = format!(
        "{{\"type\":\"service_account\",\"private_key\":\"{GCS_PRIVATE}\",\"client_email\":\"x@y.iam\",\"private_key_id\":\"{GCS_PRIVATE}\"}}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(args)
        .env("RUST_LOG", "trace")
        .env("AWS_ACCESS_KEY_ID", AWS_KEY_ID)
        .env("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
        .env("AWS_SESSION_TOKEN", AWS_TOKEN)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT", endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AZURE_STORAGE_ACCOUNT_NAME", "devaccount")
        .env("AZURE_STORAGE_ACCOUNT_KEY", AZURE_KEY)
        .env("AZURE_STORAGE_ACCESS_KEY", AZURE_KEY)
        .env("AZURE_ENDPOINT", endpoint)
        .env("AZURE_ALLOW_HTTP", "true")
        .env("GOOGLE_SERVICE_ACCOUNT_KEY", &gcs_key)
        .env("GOOGLE_STORAGE_ENDPOINT", endpoint)
        .output()
        .expect("run gdscan");
    let mut all = String::from_utf8_lossy(&out.stdout).into_owned();
    all.push_str(&String::from_utf8_lossy(&out.stderr));
    all
}

fn assert_clean(what: &str, output: &str) {
    assert!(!output.contains("panicked"), "{what} panicked: {output}");
    for s in secrets() {
        assert!(
            !output.contains(s),
            "{what} printed the secret {s:?}:\n{output}"
        );
    }
}

#[test]
fn no_secret_in_errors_logs_json_reports_or_explain_analyze() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let server = RangeServer::start();
    server.put("t/lineitem.parquet", std::fs::read(&path).unwrap());
    let plain = server.url("t/lineitem.parquet");
    let endpoint = plain.split("/t/").next().unwrap().to_string();
    let with_password = plain.replacen("http://", &format!("http://alice:{PASSWORD}@"), 1);
    let missing = with_password.replace("lineitem", "missing");
    let fast = ["--store-timeout", "5", "--store-retries", "1"];
    let mut runs: Vec<(String, Vec<String>)> = Vec::new();
    let mut add = |args: &[&str]| {
        let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        if matches!(args[0], "scan") {
            v.extend(fast.iter().map(|s| s.to_string()));
        }
        runs.push((args.join(" "), v));
    };
    add(&["plan", &with_password, "--json"]);
    add(&["plan", &with_password]);
    add(&[
        "scan",
        &with_password,
        "--host",
        "--json",
        "--stats",
        "--checksum",
    ]);
    add(&["scan", &with_password, "--host", "--stats"]);
    add(&["scan", &missing, "--host", "--stats"]);
    add(&["scan", "s3://bucket/key.parquet", "--host", "--stats"]);
    add(&["scan", "az://container/key.parquet", "--host", "--stats"]);
    add(&["scan", "gs://bucket/key.parquet", "--host", "--stats"]);
    add(&[
        "scan",
        &format!("http://alice:{PASSWORD}@127.0.0.1:1/x.parquet"),
        "--host",
    ]);
    let mut scanned = false;
    for (what, args) in &runs {
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let output = run(&args, &endpoint);
        assert_clean(what, &output);
        // The runs did what they claim: trace logs on, the good scan read.
        assert!(!output.is_empty(), "{what} printed nothing");
        if what.starts_with("scan") && what.contains("--json") {
            assert!(output.contains("\"checksums\""), "{what}: {output}");
            scanned = true;
        }
    }
    assert!(scanned);
}

/// `EXPLAIN ANALYZE` and a failing query through DataFusion over a URL with
/// a password.
#[cfg(feature = "datafusion")]
#[test]
fn no_secret_in_explain_analyze() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let server = RangeServer::start();
    server.put("t/lineitem.parquet", std::fs::read(&path).unwrap());
    let plain = server.url("t/lineitem.parquet");
    let endpoint = plain.split("/t/").next().unwrap().to_string();
    let with_password = plain.replacen("http://", &format!("http://alice:{PASSWORD}@"), 1);
    let table = format!("t={with_password}");
    let output = run(
        &[
            "sql",
            "--table",
            &table,
            "EXPLAIN ANALYZE SELECT count(*) FROM t WHERE l_orderkey < 9000",
        ],
        &endpoint,
    );
    assert_clean("EXPLAIN ANALYZE", &output);
    assert!(output.contains("DataSourceExec"), "{output}");
    let bad = format!("t={}", with_password.replace("lineitem", "missing"));
    let output = run(
        &["sql", "--table", &bad, "SELECT count(*) FROM t"],
        &endpoint,
    );
    assert_clean("a failing query", &output);
}
