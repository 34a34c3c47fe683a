//! The `gdscan` binary: output, JSON shape, exit codes and error messages.

use std::process::{Command, Output};

fn gdscan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(args)
        .env_remove("KVIKIO_TASK_SIZE")
        .output()
        .expect("run gdscan")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn data_file(len: usize) -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    let mut data = vec![0u8; len];
    gdscan_cli::bench::data::fill_pseudo_random(&mut data, 42);
    std::fs::write(&path, &data).unwrap();
    (dir, path, data)
}

fn assert_clean_failure(out: &Output, needle: &str) {
    assert_eq!(out.status.code(), Some(1), "stderr: {}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains(needle),
        "stderr {err:?} should contain {needle:?}"
    );
    assert!(!err.contains("panicked"), "no panics: {err}");
    assert!(out.stdout.is_empty(), "nothing on stdout on failure");
}

#[test]
fn host_read_prints_rate_path_and_checksum() {
    let (_dir, path, data) = data_file(3_000_001);
    let p = path.to_str().unwrap();
    let out = gdscan(&[
        "read",
        p,
        "--host",
        "--checksum",
        "--offset",
        "1",
        "--threads",
        "3",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("read 3000000 bytes"), "{s}");
    assert!(s.contains("GB/s"), "{s}");
    assert!(s.contains("posix-host=3000000"), "{s}");
    let crc = format!("crc32: {:08x}", crc32fast::hash(&data[1..]));
    assert!(s.contains(&crc), "{s} should contain {crc}");
}

#[test]
fn json_output_has_the_documented_fields() {
    let (_dir, path, data) = data_file(100_000);
    let p = path.to_str().unwrap();
    let out = gdscan(&[
        "read",
        p,
        "--host",
        "--json",
        "--checksum",
        "--size",
        "1KiB",
        "--offset",
        "10",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["bytes"], 1024);
    assert_eq!(v["offset"], 10);
    assert_eq!(v["destination"], "host");
    assert_eq!(v["paths"][0][0], "posix-host");
    assert_eq!(v["paths"][0][1], 1024);
    assert!(v["seconds"].as_f64().unwrap() > 0.0);
    assert!(v["gbps"].as_f64().unwrap() > 0.0);
    assert_eq!(
        v["crc32"],
        format!("{:08x}", crc32fast::hash(&data[10..1034]))
    );
}

#[test]
fn bad_inputs_exit_1_with_a_message_naming_the_cause() {
    let (dir, path, _) = data_file(1000);
    let p = path.to_str().unwrap();
    assert_clean_failure(
        &gdscan(&["read", "/no/such/file", "--host"]),
        "no such file",
    );
    assert_clean_failure(
        &gdscan(&["read", dir.path().to_str().unwrap(), "--host"]),
        "it is a directory",
    );
    assert_clean_failure(
        &gdscan(&["read", p, "--host", "--offset", "1000"]),
        "at or past the end of the file",
    );
    assert_clean_failure(
        &gdscan(&["read", p, "--host", "--size", "0"]),
        "empty request",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(["read", p, "--host"])
        .env("KVIKIO_TASK_SIZE", "abc")
        .output()
        .unwrap();
    assert_clean_failure(&out, "KVIKIO_TASK_SIZE");
}

/// `gdscan read FIFO --host` blocked forever in `open` (a FIFO waits for a
/// writer); it is refused at once, as are a socket and `/dev/zero`.
#[test]
fn special_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let sock = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    for (path, kind) in [
        (fifo.to_str().unwrap(), "it is a FIFO"),
        (sock.to_str().unwrap(), "it is a socket"),
        ("/dev/zero", "it is a character device"),
        ("/proc/self/status", "procfs/sysfs pseudo-file"),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gdscan"))
            .args(["read", path, "--host"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("gdscan read {path} --host hangs");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_clean_failure(&child.wait_with_output().unwrap(), kind);
    }
}

#[test]
fn device_read_without_a_gpu_is_a_clean_error() {
    if gdscan::cuda::driver::is_available() {
        eprintln!("skipped: this machine has a GPU (the GPU tests cover device reads)");
        return;
    }
    let (_dir, path, _) = data_file(1000);
    let out = gdscan(&["read", path.to_str().unwrap()]);
    assert_clean_failure(&out, "CUDA is not available");
}

#[test]
fn usage_errors_exit_2() {
    let out = gdscan(&["read"]);
    assert_eq!(out.status.code(), Some(2));
    let out = gdscan(&["read", "x", "--compat", "sometimes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("sometimes"));
}

#[test]
fn demo_generates_reads_and_verifies() {
    let out = gdscan(&["demo", "--sf", "0.01"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("generated TPC-H lineitem at SF 0.01"), "{s}");
    assert!(s.contains("scanned "), "{s}");
    assert!(s.contains("verdict: cuFile not used"), "{s}");
    // Q6 keeps about 2% of lineitem's rows (about 60,000 at SF 0.01).
    let rows: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix("wrote ").and_then(|r| r.split(' ').next()))
        .expect("rows written line")
        .parse()
        .unwrap();
    assert!((700..1_500).contains(&rows), "Q6 rows at SF 0.01: {rows}");
    if !gdscan::cuda::driver::is_available() {
        assert!(s.contains("no GPU here"), "{s}");
    }
}

/// `--devices` is checked before any read: the file named does not exist,
/// yet the error is about the GPUs (no CUDA here; on a GPU machine, GPU 99
/// does not exist). A malformed list is refused by the parser.
#[test]
fn devices_are_checked_before_any_read() {
    for args in [
        &["scan", "/nonexistent/gdscan/x.parquet", "--devices", "0,99"][..],
        &[
            "scan",
            "/nonexistent/gdscan/x.parquet",
            "--devices",
            "0,99",
            "--decode",
        ][..],
        &[
            "bench",
            "read",
            "--dir",
            "/nonexistent/gdscan",
            "--size",
            "1MiB",
            "--devices",
            "0,99",
        ][..],
    ] {
        let out = gdscan(args);
        assert_clean_failure(&out, "CUDA");
        let err = text(&out.stderr);
        assert!(
            err.contains("is not available") || err.contains("device 99 does not exist"),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains("nonexistent"),
            "{args:?}: no read was tried: {err}"
        );
    }
    assert!(!std::path::Path::new("/nonexistent/gdscan").exists());
    let out = gdscan(&[
        "bench",
        "tpch",
        "--data",
        "/nonexistent/gdscan",
        "--host",
        "--decode",
    ]);
    assert_clean_failure(&out, "--decode decodes on the GPU");
    let out = gdscan(&["scan", "x.parquet", "--devices", "1,1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("listed twice"));
}

/// A decoder setting outside its choices is refused before anything is
/// read (the file does not exist), naming the variable and what it takes.
#[test]
fn a_mistyped_decoder_setting_is_refused_before_any_read() {
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(["scan", "/nonexistent/gdscan/x.parquet", "--decode"])
        .env("GDSCAN_DECODE_CHECK", "scna")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("\"scna\" for GDSCAN_DECODE_CHECK") && err.contains("host, gpu, scan or off"),
        "{err}"
    );
    assert!(!err.contains("nonexistent"), "no read was tried: {err}");
}

/// `bench decode --cases` takes all, the lineitem queries and nested; any
/// other name is refused before a GPU is opened or data read or written,
/// naming the choices.
#[test]
fn bench_decode_refuses_an_unknown_case_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let d = data.to_str().unwrap();
    for cases in ["all,nested,q2", "orders_nested"] {
        let out = gdscan(&[
            "bench", "decode", "--data", d, "--sf", "0.01", "--cases", cases,
        ]);
        assert_clean_failure(&out, "--cases");
        let err = text(&out.stderr);
        assert!(err.contains("nested") && !err.contains("CUDA"), "{err}");
        assert!(!data.exists(), "nothing generated for {cases}: {err}");
    }
}
