//! Remote reads over HTTP from a real server on 127.0.0.1 (the test's own
//! HTTP/1.1 server with Range support, tests/common/range_server.rs): the
//! same chunk bytes and decoded batches as the local file, the footer in one
//! suffix request, the metadata cache keyed by e-tag, and every fault either
//! retried to success (and counted) or a typed error naming the object, in
//! bounded time, never partial data.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::range_server::{Fault, RangeServer};
use common::scan::{decode, host_crcs, local, plan_of};
use gdscan::engine::IoError;
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::{Projection, ScanRequest};
use gdscan::store::StoreError;
use gdscan::store::{LocalSource, RemoteSource, Source, StoreOptions};
use gdscan::{Error, IoPath};

/// Opens `location` as the library's top hands it out (the crate's error).
fn open(location: &str, options: &StoreOptions) -> gdscan::Result<Arc<dyn Source>> {
    Ok(gdscan::store::open(location, options)?)
}

/// Small requests, a little concurrency, fast bounded retries.
fn options() -> StoreOptions {
    StoreOptions {
        concurrency: 4,
        request_size: 16 << 10,
        connect_timeout: Duration::from_secs(2),
        timeout: Duration::from_secs(10),
        max_retries: 3,
        retry_timeout: Duration::from_secs(20),
        init_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(50),
        ..Default::default()
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    server: RangeServer,
    path: std::path::PathBuf,
    url: String,
}

fn fixture(name: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let server = RangeServer::start();
    server.put(name, std::fs::read(&path).unwrap());
    let url = server.url(name);
    Fixture {
        _dir: dir,
        server,
        path,
        url,
    }
}

fn all_columns() -> ScanRequest {
    ScanRequest::default()
}

fn some_columns_filtered() -> ScanRequest {
    ScanRequest {
        projection: Projection::Columns(vec!["l_orderkey".into(), "l_comment".into()]),
        predicate: Some("l_orderkey >= 5000".parse().unwrap()),
        ..Default::default()
    }
}

#[test]
fn http_scans_land_the_local_files_chunks_and_decode_to_its_batches() {
    let f = fixture("data/lineitem.parquet");
    let remote = open(&f.url, &options()).unwrap();
    let local = local(&f.path);
    assert_eq!(
        RemoteSource::of(remote.as_ref())
            .unwrap()
            .options()
            .concurrency,
        4
    );
    assert!(LocalSource::of(local.as_ref()).is_some());
    assert_eq!(remote.size(), local.size());
    for request in [all_columns(), some_columns_filtered()] {
        let plan = plan_of(&remote, &request);
        assert_eq!(plan.requests, plan_of(&local, &request).requests);
        let want = host_crcs(&local, &plan).unwrap();
        assert!(!want.is_empty());
        assert_eq!(host_crcs(&remote, &plan).unwrap(), want);
    }
    assert_eq!(
        decode(remote.clone()).unwrap(),
        decode(local.clone()).unwrap()
    );

    let c = remote.counters().get(IoPath::RemoteStore);
    assert!(c.ops > 1 && c.bytes > 0 && c.nanos > 0, "{c:?}");
    assert_eq!(c.retries, 0);
    assert_eq!(remote.counters().get(IoPath::PosixHost).bytes, 0);
    let attempts = RemoteSource::of(remote.as_ref())
        .unwrap()
        .http_counts()
        .unwrap()
        .attempts();
    assert_eq!(attempts, c.ops, "one HTTP attempt per request");
    assert_eq!(attempts as usize, f.server.gets());
    assert!(local.counters().get(IoPath::PosixHost).bytes > 0);
    assert_eq!(local.counters().get(IoPath::RemoteStore).ops, 0);
}

#[test]
fn requests_are_split_to_the_request_size() {
    let f = fixture("split.parquet");
    let mut opts = options();
    opts.request_size = 4 << 10;
    let remote = open(&f.url, &opts).unwrap();
    let plan = plan_of(&remote, &all_columns());
    let before = f.server.gets();
    host_crcs(&remote, &plan).unwrap();
    let pieces: u64 = plan
        .requests
        .iter()
        .map(|r| r.len().div_ceil(opts.request_size))
        .sum();
    assert_eq!((f.server.gets() - before) as u64, pieces);
    assert!(pieces > plan.requests.len() as u64);
}

#[test]
fn the_footer_arrives_with_the_opening_request_and_the_cache_follows_the_etag() {
    let f = fixture("cache.parquet");
    let a = open(&f.url, &options()).unwrap();
    let meta = load(&a, MetadataOptions::default()).unwrap();
    assert_eq!(
        f.server.gets(),
        1,
        "size, version, footer and page index in one request"
    );
    assert!(meta.column_index().is_some(), "page index read too");

    let b = open(&f.url, &options()).unwrap();
    assert_eq!(b.version(), a.version());
    let again = load(&b, MetadataOptions::default()).unwrap();
    assert!(
        Arc::ptr_eq(&meta, &again),
        "same location, size and e-tag: cached"
    );

    // The same bytes served without an e-tag: the version becomes the
    // modification time, another cache key.
    f.server
        .put_without_etag("cache.parquet", std::fs::read(&f.path).unwrap());
    let c = open(&f.url, &options()).unwrap();
    assert_ne!(c.version(), a.version(), "no e-tag: the modification time");
    let fresh = load(&c, MetadataOptions::default()).unwrap();
    assert!(!Arc::ptr_eq(&meta, &fresh), "another version: read again");
}

#[test]
fn a_small_footer_hint_costs_one_more_request() {
    let f = fixture("hint.parquet");
    let mut opts = options();
    opts.footer_hint = 64;
    let s = open(&f.url, &opts).unwrap();
    load(&s, MetadataOptions::default()).unwrap();
    assert!(f.server.gets() >= 2, "64 bytes cannot hold the footer");
    assert_eq!(
        decode(s).unwrap(),
        decode(local(&f.path)).unwrap(),
        "the metadata read in pieces is the same"
    );
}

#[test]
fn server_errors_are_retried_counted_and_end_in_the_right_bytes() {
    let f = fixture("retry.parquet");
    f.server.fail_next(Fault::Status(503), 3);
    let remote = open(&f.url, &options()).unwrap();
    let plan = plan_of(&remote, &all_columns());
    assert_eq!(
        host_crcs(&remote, &plan).unwrap(),
        host_crcs(&local(&f.path), &plan).unwrap()
    );
    assert_eq!(remote.counters().get(IoPath::RemoteStore).retries, 3);
    let http = RemoteSource::of(remote.as_ref())
        .unwrap()
        .http_counts()
        .unwrap();
    assert_eq!(http.failed(), 3);
    assert_eq!(
        http.attempts(),
        remote.counters().get(IoPath::RemoteStore).ops + 3
    );
}

#[test]
fn too_many_server_errors_fail_with_the_object_named() {
    let f = fixture("down.parquet");
    f.server.fail_next(Fault::Status(503), 100);
    let start = Instant::now();
    match open(&f.url, &options()) {
        Err(Error::Store(StoreError::Request { object, .. })) => assert_eq!(object, f.url),
        other => panic!("{other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(
        f.server.gets(),
        4,
        "one attempt and max_retries = 3 retries"
    );
}

#[test]
fn a_body_cut_mid_way_is_resumed_and_counted() {
    let f = fixture("cut.parquet");
    let remote = open(&f.url, &options()).unwrap();
    let plan = plan_of(&remote, &all_columns());
    f.server.fail_next(Fault::CutBody(1000), 2);
    assert_eq!(
        host_crcs(&remote, &plan).unwrap(),
        host_crcs(&local(&f.path), &plan).unwrap()
    );
    assert_eq!(remote.counters().get(IoPath::RemoteStore).retries, 2);
}

#[test]
fn a_cut_body_without_etag_is_an_error_never_partial_data() {
    let f = fixture("cut-no-etag.parquet");
    let data = std::fs::read(&f.path).unwrap();
    f.server.put_without_etag("cut-no-etag.parquet", data);
    let remote = open(&f.url, &options()).unwrap();
    let plan = plan_of(&remote, &all_columns());
    f.server.fail_next(Fault::CutBody(1000), 1);
    match host_crcs(&remote, &plan) {
        Err(Error::Store(StoreError::Request { object, .. })) => assert_eq!(object, f.url),
        other => panic!("a cut body must fail: {other:?}"),
    }
    let got = remote.read_blocking(0..20_000);
    assert!(got.is_ok(), "later reads work again: {got:?}");
}

#[test]
fn a_body_shorter_than_its_range_is_a_truncated_response() {
    let f = fixture("short.parquet");
    let remote = open(&f.url, &options()).unwrap();
    f.server.fail_next(Fault::ShortBody(7), 1);
    match remote.read_blocking(100..5000) {
        Err(StoreError::Truncated {
            object,
            offset: 100,
            expected: 4900,
            got: 7,
        }) => assert_eq!(object, f.url),
        other => panic!("{other:?}"),
    }
    let plan = plan_of(&remote, &all_columns());
    f.server.fail_next(Fault::ShortBody(100), 1);
    match host_crcs(&remote, &plan) {
        Err(Error::Store(StoreError::Truncated {
            object,
            expected,
            got,
            ..
        })) => {
            assert_eq!(object, f.url);
            assert_eq!(got, 100);
            assert!(expected > got);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_server_stopped_during_a_scan_fails_in_bounded_time() {
    let mut f = fixture("stop.parquet");
    let mut opts = options();
    opts.concurrency = 1;
    opts.request_size = 4 << 10;
    let remote = open(&f.url, &opts).unwrap();
    let plan = plan_of(&remote, &all_columns());
    f.server.stop_after(3);
    let start = Instant::now();
    match host_crcs(&remote, &plan) {
        Err(Error::Store(StoreError::Request { object, .. })) => assert_eq!(object, f.url),
        other => panic!("{other:?}"),
    }
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    f.server.stop();
    match open(&f.url, &opts) {
        Err(Error::Store(StoreError::Request { object, .. })) => assert_eq!(object, f.url),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_missing_object_is_not_found_naming_it() {
    let f = fixture("present.parquet");
    let url = f.server.url("absent.parquet");
    match open(&url, &options()) {
        Err(e @ Error::Store(StoreError::NotFound { .. })) => {
            assert!(e.to_string().contains(&url), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_object_changed_during_a_scan_is_an_error() {
    let f = fixture("moving.parquet");
    let remote = open(&f.url, &options()).unwrap();
    let plan = plan_of(&remote, &all_columns());
    let mut other = std::fs::read(&f.path).unwrap();
    other.push(0);
    f.server.put("moving.parquet", other);
    match host_crcs(&remote, &plan) {
        Err(Error::Store(StoreError::Changed { object, .. })) => assert_eq!(object, f.url),
        other => panic!("{other:?}"),
    }
}

#[test]
fn reads_past_the_end_are_refused_before_any_request() {
    let f = fixture("end.parquet");
    let remote = open(&f.url, &options()).unwrap();
    let before = f.server.gets();
    let size = remote.size();
    match futures::executor::block_on(remote.read_ranges(&[0..1, size - 10..size + 1])) {
        Err(StoreError::Io(IoError::ShortRead { got: 10, .. })) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(f.server.gets(), before);
}

fn gdscan(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(args)
        .output()
        .unwrap()
}

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_cli_plans_and_scans_http_urls_like_paths() {
    let f = fixture("cli/lineitem.parquet");
    let p = f.path.to_str().unwrap();
    let filter = [
        "--filter",
        "l_orderkey < 9000",
        "--columns",
        "l_quantity,l_shipdate",
    ];
    let plan = |target: &str| {
        json(&gdscan(
            &[&["plan", target, "--json"][..], &filter].concat(),
        ))
    };
    assert_eq!(plan(&f.url), plan(p));
    let scan = |target: &str| {
        json(&gdscan(
            &[
                &[
                    "scan",
                    target,
                    "--host",
                    "--checksum",
                    "--json",
                    "--store-concurrency",
                    "2",
                ][..],
                &filter,
            ]
            .concat(),
        ))
    };
    let (remote, local) = (scan(&f.url), scan(p));
    assert_eq!(remote["checksums"], local["checksums"]);
    assert_eq!(remote["bytes_read"], local["bytes_read"]);
    assert!(remote["store_requests"].as_u64().unwrap() >= 2);
    assert_eq!(remote["paths"][0][0], "remote-store");
    assert_eq!(local["paths"][0][0], "posix-host");

    let text = gdscan(&["scan", &f.url, "--host", "--stats"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("store: ") && text.contains("retries"),
        "{text}"
    );
    assert!(text.contains("remote-store"), "{text}");
}

#[test]
fn the_cli_names_a_missing_url_and_exits_1() {
    let f = fixture("here.parquet");
    let url = f.server.url("gone.parquet");
    let out = gdscan(&["scan", &url, "--host"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&url) && err.contains("no such object"),
        "{err}"
    );
    let out = gdscan(&["plan", "ftp://example.invalid/x.parquet"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsupported scheme"));
}

/// A seeded storm: each scan meets a random mix of 503s, bodies cut
/// mid-way, short bodies, stalls (some beyond the request timeout) and
/// connection resets. Every scan ends, within its timeout × retries bound,
/// with the local file's chunk bytes (CRC-32 per chunk) or a typed store
/// error; never partial data, never a hang. The figures are printed for
/// docs/reliability.md.
#[test]
fn a_seeded_storm_of_stalls_resets_and_short_bodies_ends_right_or_typed() {
    let f = fixture("storm.parquet");
    let want = host_crcs(&local(&f.path), &plan_of(&local(&f.path), &all_columns())).unwrap();
    let opts = StoreOptions {
        timeout: Duration::from_millis(800),
        max_retries: 2,
        retry_timeout: Duration::from_secs(5),
        ..options()
    };
    let mut s = 0xC0FFEEu64;
    let mut next = move |n: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % n
    };
    let (mut right, mut typed, mut faults) = (0, 0, 0);
    let mut slowest = Duration::ZERO;
    for _ in 0..12 {
        f.server.clear_faults();
        for _ in 0..12 {
            let fault = match next(7) {
                0 => Fault::Status(503),
                1 => Fault::CutBody(next(3000) as usize),
                2 => Fault::ShortBody(next(3000) as usize),
                3 => Fault::Stall(Duration::from_millis(next(300))),
                4 => Fault::Stall(Duration::from_millis(900 + next(300))),
                5 => Fault::Reset,
                _ => Fault::Stall(Duration::ZERO),
            };
            f.server.fail_next(fault, 1);
            faults += 1;
        }
        let started = Instant::now();
        let outcome = open(&f.url, &opts).and_then(|remote| {
            let meta = load(&remote, MetadataOptions::default())?;
            let plan = Arc::new(
                gdscan::parquet::plan(&meta, &all_columns())
                    .map_err(|e| e.in_file(remote.location()))?,
            );
            host_crcs(&remote, &plan)
        });
        let took = started.elapsed();
        slowest = slowest.max(took);
        assert!(took < Duration::from_secs(30), "a scan took {took:?}");
        match outcome {
            Ok(crcs) => {
                assert_eq!(crcs, want, "a completed scan has the file's bytes");
                right += 1;
            }
            // A store error, or the metadata's read failing with one.
            Err(e @ (Error::Store(_) | Error::Parquet(_))) => {
                assert!(e.to_string().contains("storm.parquet"), "{e}");
                typed += 1;
            }
            Err(other) => panic!("untyped failure: {other:?}"),
        }
    }
    eprintln!(
        "HTTP storm: {faults} faults queued over 12 scans: {right} right, {typed} typed errors, slowest {slowest:?}"
    );
    f.server.clear_faults();
    let remote = open(&f.url, &opts).unwrap();
    assert_eq!(
        host_crcs(&remote, &plan_of(&remote, &all_columns())).unwrap(),
        want
    );
}
