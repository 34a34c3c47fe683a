//! Remote reads from a real S3-compatible server: moto's (PyPI
//! `moto[server]`), started on 127.0.0.1 by each test and killed at its end.
//! The same chunk bytes and decoded batches as the local files (the test's
//! own lineitem-like file, and every apache/parquet-testing file when
//! PARQUET_TEST_DATA is set), `s3://` URLs through the CLI with the usual
//! AWS_* environment (a scan, and a SQL table over a prefix), and typed
//! errors for a wrong key and a missing object.
//!
//! They run when GDSCAN_S3_TESTS was set at build time (`.ci/run` installs
//! moto and sets it; see build.rs), and then fail if moto cannot start;
//! without it they are listed as ignored.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use common::moto::Moto;
use common::scan::{decode, host_crcs, ipc, local, plan_of};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::{plan, Projection, ScanRequest};
use gdscan::store::StoreError;
use gdscan::store::{open, RemoteSource, Source, StoreOptions};
use gdscan::{Error, IoPath};

const BUCKET: &str = "gdscan-test";

fn options() -> StoreOptions {
    StoreOptions {
        concurrency: 8,
        request_size: 64 << 10,
        max_retries: 2,
        init_backoff: std::time::Duration::from_millis(10),
        ..Default::default()
    }
}

/// moto started with `env`, with the test bucket created.
fn moto_with_bucket(env: &[(&str, &str)]) -> Moto {
    let moto = Moto::start(env);
    moto.create_bucket(BUCKET);
    moto
}

/// The gdscan binary with moto's `AWS_*` environment.
fn gdscan_command(moto: &Moto) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gdscan"));
    for (k, v) in moto.env() {
        cmd.env(k, v);
    }
    cmd
}

fn open_s3(moto: &Moto, key: &str) -> gdscan::Result<Arc<dyn Source>> {
    let mut options = options();
    options.object_store = moto
        .config()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    Ok(open(&format!("s3://{BUCKET}/{key}"), &options)?)
}

#[test]
#[cfg_attr(
    not(s3_server),
    ignore = "needs moto: set GDSCAN_S3_TESTS=1 with moto[server] installed (.ci/run does)"
)]
fn s3_scans_land_the_local_files_chunks_and_decode_to_its_batches() {
    let moto = moto_with_bucket(&[]);
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    moto.upload(
        BUCKET,
        "data/lineitem.parquet",
        std::fs::read(&path).unwrap(),
    );

    let remote = open_s3(&moto, "data/lineitem.parquet").unwrap();
    let local = local(&path);
    assert_eq!(remote.size(), local.size());
    assert!(
        remote.version().is_some_and(|v| v.starts_with('"')),
        "an e-tag"
    );
    for request in [
        ScanRequest::default(),
        ScanRequest {
            projection: Projection::Columns(vec!["l_shipdate".into(), "l_returnflag".into()]),
            predicate: Some("l_shipdate < DATE '1992-01-01'".parse().unwrap()),
            ..Default::default()
        },
    ] {
        let plan = plan_of(&remote, &request);
        let want = host_crcs(&local, &plan).unwrap();
        assert!(!want.is_empty());
        assert_eq!(host_crcs(&remote, &plan).unwrap(), want);
    }
    assert_eq!(decode(remote.clone()).unwrap(), decode(local).unwrap());
    let c = remote.counters().get(IoPath::RemoteStore);
    assert!(c.ops > 1 && c.bytes > 0, "{c:?}");
    assert_eq!(c.retries, 0);
    assert_eq!(
        RemoteSource::of(remote.as_ref())
            .unwrap()
            .http_counts()
            .unwrap()
            .attempts(),
        c.ops
    );
}

#[test]
#[cfg_attr(
    not(all(s3_server, parquet_test_data)),
    ignore = "needs moto (GDSCAN_S3_TESTS=1) and PARQUET_TEST_DATA (.ci/run sets both)"
)]
fn every_parquet_testing_file_decodes_the_same_from_s3() {
    let dir = PathBuf::from(std::env::var("PARQUET_TEST_DATA").expect("PARQUET_TEST_DATA"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    assert!(
        files.len() > 10,
        "parquet-testing files in {}",
        dir.display()
    );
    let moto = moto_with_bucket(&[]);
    let (mut crcs, mut decoded) = (0, 0);
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        let data = std::fs::read(file).unwrap();
        if data.is_empty() {
            continue;
        }
        moto.upload(BUCKET, name, data);
        let local = local(file);
        let remote = open_s3(&moto, name);
        let Ok(meta) = load(&local, MetadataOptions::default()) else {
            assert!(
                remote
                    .and_then(|r| Ok(load(&r, MetadataOptions::default())?))
                    .is_err(),
                "{name}: bad metadata locally, not from S3"
            );
            continue;
        };
        let remote = remote.unwrap();
        // Every chunk's bytes, as planned for all columns.
        if let Ok(plan) = plan(&meta, &ScanRequest::default()) {
            let plan = Arc::new(plan);
            match (host_crcs(&local, &plan), host_crcs(&remote, &plan)) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{name}");
                    crcs += 1;
                }
                (a, b) => panic!("{name}: local {:?}, S3 {:?}", a.err(), b.err()),
            }
        }
        // Decoded batches, for files that decode to a sane size (one
        // decodes to 2 GiB of strings: its chunk bytes are compared above).
        let uncompressed: i64 = meta.row_groups().iter().map(|g| g.total_byte_size()).sum();
        if uncompressed > 256 << 20 {
            continue;
        }
        let want = catch_unwind(AssertUnwindSafe(|| decode(local.clone())))
            .unwrap_or_else(|_| Err("arrow-rs panicked".into()));
        match (&want, &decode(remote)) {
            (Ok(a), Ok(b)) => {
                assert!(ipc(a) == ipc(b), "{name}: different batches");
                decoded += 1;
            }
            (Err(_), Err(_)) => {}
            (a, b) => panic!(
                "{name}: local {:?} but S3 {:?}",
                a.as_ref().map(|v| v.len()),
                b.as_ref().map(|v| v.len())
            ),
        }
    }
    assert!(
        crcs > 10 && decoded > 10,
        "{crcs} files' chunks, {decoded} files decoded"
    );
}

#[test]
#[cfg_attr(
    not(s3_server),
    ignore = "needs moto: set GDSCAN_S3_TESTS=1 with moto[server] installed (.ci/run does)"
)]
fn s3_urls_scan_through_the_cli_with_the_aws_environment() {
    let moto = moto_with_bucket(&[]);
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    moto.upload(
        BUCKET,
        "cli/lineitem.parquet",
        std::fs::read(&path).unwrap(),
    );
    let url = format!("s3://{BUCKET}/cli/lineitem.parquet");
    let run = |target: &str, extra: &[&str]| {
        let mut cmd = gdscan_command(&moto);
        cmd.arg("scan")
            .arg(target)
            .args([
                "--host",
                "--checksum",
                "--json",
                "--columns",
                "l_orderkey,l_comment",
            ])
            .args(extra);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let remote = run(
        &url,
        &[
            "--store-concurrency",
            "3",
            "--store-request-size",
            "8KiB",
            "--stats",
        ],
    );
    let local = run(path.to_str().unwrap(), &[]);
    assert_eq!(remote["checksums"], local["checksums"]);
    assert!(!remote["checksums"].as_array().unwrap().is_empty());
    assert!(remote["store_requests"].as_u64().unwrap() > 1);
    assert_eq!(remote["report"]["store"]["concurrency"], 3);
    assert_eq!(remote["report"]["store"]["request_size"], 8192);
    assert_eq!(local["store_requests"], 0);
}

#[test]
#[cfg_attr(
    not(s3_server),
    ignore = "needs moto: set GDSCAN_S3_TESTS=1 with moto[server] installed (.ci/run does)"
)]
fn a_wrong_key_is_an_access_error_naming_the_object() {
    // Authentication on after two unauthenticated actions: the bucket and the upload.
    let moto = moto_with_bucket(&[("INITIAL_NO_AUTH_ACTION_COUNT", "2")]);
    moto.upload(BUCKET, "secret.parquet", b"PAR1 not really PAR1".to_vec());
    match open_s3(&moto, "secret.parquet") {
        Err(Error::Store(StoreError::AccessDenied { object, .. })) => {
            assert_eq!(object, format!("s3://{BUCKET}/secret.parquet"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
#[cfg_attr(
    not(s3_server),
    ignore = "needs moto: set GDSCAN_S3_TESTS=1 with moto[server] installed (.ci/run does)"
)]
fn a_missing_s3_object_is_not_found_naming_it() {
    let moto = moto_with_bucket(&[]);
    match open_s3(&moto, "nothing/here.parquet") {
        Err(e @ Error::Store(StoreError::NotFound { .. })) => {
            assert!(
                e.to_string()
                    .contains("s3://gdscan-test/nothing/here.parquet"),
                "{e}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
#[cfg_attr(
    not(s3_server),
    ignore = "needs moto: set GDSCAN_S3_TESTS=1 with moto[server] installed (.ci/run does)"
)]
fn bench_store_measures_every_concurrency_against_get_ranges() {
    let moto = moto_with_bucket(&[]);
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let out_json = dir.path().join("store.json");
    let mut cmd = gdscan_command(&moto);
    cmd.args([
        "bench",
        "store",
        "--url",
        &format!("s3://{BUCKET}/bench/lineitem.parquet"),
    ])
    .arg("--upload")
    .arg(&path)
    .args([
        "--host",
        "--concurrency",
        "1,4",
        "--cases",
        "all",
        "--iterations",
        "1",
    ])
    .args(["--store-request-size", "32KiB", "--json"])
    .arg(&out_json);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("get_ranges + copy"), "{text}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out_json).unwrap()).unwrap();
    let case = &report["cases"][0];
    assert_eq!(case["bytes_ok"], true);
    let points = case["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        assert!(p["mbps"].as_f64().unwrap() > 0.0);
        assert!(p["requests"].as_f64().unwrap() >= 1.0);
    }
    assert!(case["get_ranges_requests"].as_f64().unwrap() >= 1.0);
    let local_plan = plan_of(&local(&path), &ScanRequest::default());
    assert_eq!(case["bytes_needed"], local_plan.totals.bytes_needed);
    assert_eq!(case["bytes_read"], local_plan.totals.bytes_read);
}

#[cfg(feature = "datafusion")]
#[test]
#[cfg_attr(
    not(s3_server),
    ignore = "needs moto: set GDSCAN_S3_TESTS=1 with moto[server] installed (.ci/run does)"
)]
fn a_table_over_an_s3_prefix_reads_every_parquet_object_under_it() {
    let moto = moto_with_bucket(&[]);
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(common::write_file(dir.path())).unwrap();
    // Two tables' worth under the prefix (one a level deeper), a stray
    // object that is not Parquet, and one outside the prefix.
    moto.upload(BUCKET, "tables/t/part-0.parquet", bytes.clone());
    moto.upload(BUCKET, "tables/t/more/part-1.parquet", bytes.clone());
    moto.upload(BUCKET, "tables/t/_SUCCESS", b"done".to_vec());
    moto.upload(BUCKET, "tables/other.parquet", bytes);
    let sql = |table: &str| {
        let mut cmd = gdscan_command(&moto);
        cmd.args(["sql", "--format", "csv", "--table"])
            .arg(format!("t={table}"))
            .arg("select count(*) as n, sum(l_orderkey) as k from t");
        cmd.output().unwrap()
    };
    let out = sql(&format!("s3://{BUCKET}/tables/t/"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = common::ROWS as u64;
    let keys: u64 = (0..rows).sum();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("n,k\n{},{}", 2 * rows, 2 * keys)
    );
    // A prefix with no Parquet object is an error naming it.
    let empty = sql(&format!("s3://{BUCKET}/nothing/"));
    assert!(!empty.status.success());
    let err = String::from_utf8_lossy(&empty.stderr);
    assert!(
        err.contains("nothing/") && err.contains("no objects ending with"),
        "{err}"
    );
}
