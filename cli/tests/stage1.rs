//! Stage 1 on a machine without cuFile (CI): every decision and its reason,
//! compat OFF's error, and `gdscan doctor`'s output and JSON shape. On a
//! machine where libcufile loads these tests say so and check nothing else
//! (tests/gpu.rs covers that machine).

use std::process::Command;

use gdscan::engine::CuFileAvailability;
use gdscan::engine::DeviceRoute;
use gdscan::engine::IoError;
use gdscan::{CompatMode, Engine, FileHandle, OpenMode, Settings};

fn cufile_missing() -> bool {
    match gdscan::cufile::find_library() {
        Ok(lib) => {
            eprintln!("skipped: {lib} loads here; the GPU tests cover this machine");
            false
        }
        Err(_) => true,
    }
}

fn file(len: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bin");
    std::fs::write(&path, vec![7u8; len]).unwrap();
    (dir, path)
}

fn handle(path: &std::path::Path, compat: CompatMode) -> FileHandle {
    let settings = Settings::builder()
        .compat_mode(compat)
        .num_threads(2)
        .build()
        .unwrap();
    FileHandle::open_with(Engine::new(settings).unwrap(), path, OpenMode::Read).unwrap()
}

#[test]
fn auto_falls_back_to_posix_and_says_why() {
    if !cufile_missing() {
        return;
    }
    let (_d, path) = file(1 << 20);
    let h = handle(&path, CompatMode::Auto);
    match h.cufile() {
        CuFileAvailability::Unavailable(why) => {
            assert!(why.contains("libcufile not found"), "{why}")
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    let d = h.device_route(1 << 20, 0).unwrap();
    assert_eq!(d.route, DeviceRoute::Bounce);
    assert!(
        d.reason
            .starts_with("cuFile unavailable: libcufile not found"),
        "{}",
        d.reason
    );
}

#[test]
fn below_the_gds_threshold_takes_posix_in_every_mode() {
    if !cufile_missing() {
        return;
    }
    let (_d, path) = file(100_000);
    for compat in [CompatMode::Auto, CompatMode::Off] {
        let h = handle(&path, compat);
        let d = h.device_route(1000, 0).unwrap();
        assert_eq!(d.route, DeviceRoute::Bounce);
        assert!(
            d.reason
                .contains("below KVIKIO_GDS_THRESHOLD (16384 bytes)"),
            "{}",
            d.reason
        );
    }
}

#[test]
fn compat_on_never_tries_cufile() {
    let (_d, path) = file(1 << 20);
    let h = handle(&path, CompatMode::On);
    assert_eq!(h.cufile(), &CuFileAvailability::Disabled);
    let d = h.device_route(1 << 20, 0).unwrap();
    assert_eq!(d.route, DeviceRoute::Bounce);
    assert!(
        d.reason.starts_with("KVIKIO_COMPAT_MODE=ON"),
        "{}",
        d.reason
    );
}

#[test]
fn compat_off_without_cufile_is_a_clear_error_for_device_requests() {
    if !cufile_missing() {
        return;
    }
    let (_d, path) = file(1 << 20);
    let h = handle(&path, CompatMode::Off);
    let err = h.device_route(1 << 20, 0).unwrap_err();
    assert!(matches!(err, IoError::CuFileRequired { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("KVIKIO_COMPAT_MODE=OFF requires cuFile"),
        "{msg}"
    );
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("libcufile not found"), "{msg}");
    // Host memory never needs cuFile.
    let mut buf = vec![0u8; 1 << 20];
    assert_eq!(h.pread(&mut buf, 1 << 20, 0).unwrap(), 1 << 20);
    assert!(buf.iter().all(|&b| b == 7));
}

#[test]
fn doctor_works_without_gpu_or_cufile_and_says_what_is_missing() {
    if !cufile_missing() || gdscan::cuda::driver::is_available() {
        return;
    }
    let (_d, path) = file(1 << 20);
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(["doctor", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("GPU: none"), "{text}");
    assert!(text.contains("cuFile: not found"), "{text}");
    assert!(text.contains("cufile.json:"), "{text}");
    assert!(
        text.contains("stage 1: Bounce: cuFile unavailable"),
        "{text}"
    );
    assert!(text.contains("answer: No: no usable GPU"), "{text}");

    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(["doctor", path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cuda"]["available"], false);
    assert!(v["cuda"]["problem"].as_str().unwrap().contains("libcuda"));
    assert!(v["cufile"]["library"].is_null());
    assert!(v["cufile"]["problem"]
        .as_str()
        .unwrap()
        .contains("libcufile"));
    assert!(v["cufile"]["config"]["path"].is_string());
    assert_eq!(v["settings"]["compat_mode"], "AUTO");
    assert_eq!(v["file"]["size"], 1 << 20);
    assert_eq!(v["file"]["stage1"]["route"], "bounce");
    assert!(v["answer"].as_str().unwrap().starts_with("No"));
}

#[test]
fn doctor_reports_bad_settings_instead_of_failing() {
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(["doctor", "--json"])
        .env("KVIKIO_NTHREADS", "lots")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["settings"].is_null());
    assert!(v["settings_problem"]
        .as_str()
        .unwrap()
        .contains("KVIKIO_NTHREADS"));
}

#[test]
fn cufile_parameters_from_the_environment_are_checked() {
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(["doctor", "--json"])
        .env("GDSCAN_CUFILE_EXECUTION_PARALLEL_IO", "sometimes")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let problem = v["settings_problem"].as_str().unwrap();
    assert!(
        problem.contains("GDSCAN_CUFILE_EXECUTION_PARALLEL_IO"),
        "{problem}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args(["doctor", "--json", "--cufile", "execution.max_io_threads=8"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["settings"]["cufile"]["values"][0][0],
        "execution.max_io_threads"
    );
    assert_eq!(v["settings"]["cufile"]["values"][0][1], 8);
}

#[test]
fn read_stats_prints_the_path_report() {
    let (_d, path) = file(3 << 20);
    let out = Command::new(env!("CARGO_BIN_EXE_gdscan"))
        .args([
            "read",
            path.to_str().unwrap(),
            "--host",
            "--stats",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = &v["report"];
    assert_eq!(report["compat_mode"], "AUTO");
    let counters = report["counters"].as_array().unwrap();
    let host = counters.iter().find(|c| c["path"] == "posix-host").unwrap();
    assert_eq!(host["bytes"], 3 << 20);
    let cufile = counters.iter().find(|c| c["path"] == "cufile").unwrap();
    assert_eq!(cufile["bytes"], 0);
    assert_eq!(
        report["verdict"],
        format!("cuFile not used; GDS: no; bytes via {} posix-host", 3 << 20)
    );
}
