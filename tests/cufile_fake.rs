//! cuFile's failures and stage 1 without a GPU: a fake `libcufile.so` and a
//! fake `libcuda.so` (cuInit alone), compiled here from C with the `cc`
//! crate (tests/cufile_fake/*.c), named with `GDSCAN_CUFILE_LIBRARY` and
//! `LD_LIBRARY_PATH`. The fake's mode (driver open fails, registration
//! fails, no nvidia-fs, nvidia-fs present, P2PDMA reported) is set per run;
//! each run is this binary again as a child (the loader reads
//! `LD_LIBRARY_PATH` at start), which prints stage 1 for AUTO and OFF. The
//! parent checks each: AUTO falls back with the reason, or declines cuFile
//! when stage 2 would be its compat path, or takes cuFile where stage 2 is
//! GDS; OFF takes cuFile or fails with a typed error naming the reason;
//! nothing panics.
//!
//! A harness-less test (`harness = false` in Cargo.toml): `main` is the
//! parent, or the child when `GDSCAN_FAKE_CUFILE_CHILD` is set.

use std::path::{Path, PathBuf};
use std::process::Command;

use gdscan::engine::IoError;
use gdscan::{CompatMode, Engine, FileHandle, OpenMode, Settings};

const CHILD: &str = "GDSCAN_FAKE_CUFILE_CHILD";

fn main() {
    if let Ok(file) = std::env::var(CHILD) {
        child(Path::new(&file));
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        println!("fake_libcufile: test");
        return;
    }
    parent();
    println!("test fake_libcufile ... ok");
}

/// `file` opened for reading by a one-thread engine in `compat` mode.
fn open(file: &Path, compat: CompatMode) -> FileHandle {
    let settings = Settings::builder()
        .compat_mode(compat)
        .num_threads(1)
        .build()
        .unwrap();
    FileHandle::open_with(Engine::new(settings).unwrap(), file, OpenMode::Read).unwrap()
}

/// Stage 1 for AUTO and OFF on `file`, one line each; first, AUTO's answer
/// before cuFile's driver has opened (it opens in the background when the
/// kernel has no nvidia-fs module).
fn child(file: &Path) {
    let h = open(file, CompatMode::Auto);
    let first = format!("{:?}", h.cufile());
    match h.device_route(1 << 20, 0) {
        Ok(d) => println!("first {first} route={:?} reason={}", d.route, d.reason),
        Err(e) => println!("first {first} error={e}"),
    }
    let waited = std::time::Instant::now();
    let opening = first.contains("still opening");
    while opening && !gdscan::cufile::driver::tried() && waited.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    for compat in [CompatMode::Auto, CompatMode::Off] {
        let h = open(file, compat);
        let availability = format!("{:?}", h.cufile());
        match h.device_route(1 << 20, 0) {
            Ok(d) => println!(
                "{compat} {availability} route={:?} reason={}",
                d.route, d.reason
            ),
            Err(e @ IoError::CuFileRequired { .. }) => {
                println!("{compat} {availability} error=CuFileRequired: {e}")
            }
            Err(other) => println!("{compat} {availability} error=other: {other:?}"),
        }
    }
}

/// Compiles `source` into the shared library `out` with the cc crate's
/// compiler.
fn build_library(source: &Path, out: &Path) {
    let target = "x86_64-unknown-linux-gnu";
    let compiler = cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(0)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler();
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-o"])
        .arg(out)
        .arg(source)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling {}", source.display());
}

fn parent() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // O_DIRECT (for the registration) needs a real file system, not tmpfs.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let libs = dir.path().join("lib");
    std::fs::create_dir(&libs).unwrap();
    let cufile = libs.join("libcufile.so.0");
    build_library(&manifest.join("tests/cufile_fake/fake_cufile.c"), &cufile);
    build_library(
        &manifest.join("tests/cufile_fake/fake_cuda.c"),
        &libs.join("libcuda.so"),
    );
    let file = dir.path().join("data.bin");
    std::fs::write(&file, vec![5u8; 2 << 20]).unwrap();
    let file_str = file.display().to_string();

    // cuFile's configuration: with PCI P2PDMA on, AUTO opens the driver
    // (the fake reports nvidia-fs or P2PDMA as each mode says); without
    // it and without nvidia-fs, AUTO never opens it.
    let p2pdma = dir.path().join("cufile-p2pdma.json");
    std::fs::write(
        &p2pdma,
        "{\n  // PCI P2PDMA on\n  \"properties\": { \"use_pci_p2pdma\": true }\n}\n",
    )
    .unwrap();
    let plain = dir.path().join("cufile-plain.json");
    std::fs::write(
        &plain,
        "{ \"properties\": { \"use_pci_p2pdma\": false } }\n",
    )
    .unwrap();
    let run_with = |mode: &str, config: &Path| -> (String, String, String) {
        let out = Command::new(std::env::current_exe().unwrap())
            .env(CHILD, &file)
            .env("FAKE_CUFILE_MODE", mode)
            .env("GDSCAN_CUFILE_LIBRARY", &cufile)
            .env("LD_LIBRARY_PATH", &libs)
            .env("CUFILE_ENV_PATH_JSON", config)
            .env_remove("KVIKIO_COMPAT_MODE")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success() && !stderr.contains("panicked"),
            "{mode}: {stdout}{stderr}"
        );
        let mut lines = stdout.lines();
        let first = lines.next().unwrap_or("");
        let (auto, off) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
        eprintln!("{mode}:\n  {first}\n  {auto}\n  {off}");
        // Before the driver's outcome is known AUTO reads by the bounce
        // route (the kernel here lists no nvidia-fs module), or the outcome
        // came first and the answer is the settled one.
        let settled = auto.trim_start_matches("AUTO ");
        assert!(
            first.trim_start_matches("first ") == settled
                || first.contains("route=Bounce reason=cuFile would run its POSIX compat path: cuFile's driver is still opening"),
            "{mode}: {first}"
        );
        (first.to_string(), auto.to_string(), off.to_string())
    };
    let run = |mode: &str| run_with(mode, &p2pdma);
    let nvfs_here = Path::new("/proc/driver/nvidia-fs").exists()
        || std::fs::read_to_string("/proc/modules").is_ok_and(|m| m.contains("nvidia_fs "));

    // No nvidia-fs module and no P2PDMA configured: AUTO does not open
    // cuFile's driver at all (a slow one would delay nothing), takes the
    // bounce route with the reason; OFF still opens and forces cuFile.
    if !nvfs_here {
        let started = std::time::Instant::now();
        let (first, auto, off) = run_with("compat,slow", &plain);
        assert!(
            first.contains("CompatPathOnly(") && first.contains("so it is not opened"),
            "{first}"
        );
        assert!(
            auto.starts_with("AUTO CompatPathOnly(") && auto.contains("route=Bounce"),
            "{auto}"
        );
        assert!(off.starts_with("OFF Ready route=CuFile"), "{off}");
        eprintln!("unopened run: {:?}", started.elapsed());
    }

    // A slow driver opening (about a second for the real one without
    // nvidia-fs): AUTO's first request does not wait for it, then settles.
    let started = std::time::Instant::now();
    let (first, auto, _) = run("compat,slow");
    if !nvfs_here {
        assert!(first.contains("still opening"), "{first}");
    }
    assert!(auto.starts_with("AUTO CompatPathOnly("), "{auto}");
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));

    // The driver does not open: AUTO falls back with the reason, OFF fails
    // with it.
    let (_, auto, off) = run("open_fail");
    assert!(auto.starts_with("AUTO Unavailable("), "{auto}");
    assert!(
        auto.contains("route=Bounce reason=cuFile unavailable: cuFileDriverOpen failed"),
        "{auto}"
    );
    assert!(auto.contains("5011"), "{auto}");
    assert!(off.contains("error=CuFileRequired"), "{off}");
    assert!(
        off.contains("cuFileDriverOpen failed") && off.contains(&file_str),
        "{off}"
    );

    // The driver opens, no nvidia-fs, the file does not register: AUTO
    // never tries to register (stage 2 would be the compat path); OFF
    // fails with the registration's 5027.
    let (_, auto, off) = run("register_fail");
    assert!(auto.starts_with("AUTO CompatPathOnly("), "{auto}");
    assert!(
        off.contains("error=CuFileRequired") && off.contains("5027"),
        "{off}"
    );
    assert!(off.contains("cuFileHandleRegister failed"), "{off}");

    // No nvidia-fs, no P2PDMA: AUTO declines cuFile (its compat path) and
    // takes the bounce route with the reason; OFF forces cuFile.
    let (_, auto, off) = run("compat");
    assert!(auto.starts_with("AUTO CompatPathOnly("), "{auto}");
    assert!(
        auto.contains("route=Bounce reason=cuFile would run its POSIX compat path: no nvidia-fs"),
        "{auto}"
    );
    assert!(off.starts_with("OFF Ready route=CuFile"), "{off}");

    // nvidia-fs loaded: AUTO takes cuFile.
    let (_, auto, off) = run("nvfs");
    assert!(auto.starts_with("AUTO Ready route=CuFile"), "{auto}");
    assert!(off.starts_with("OFF Ready route=CuFile"), "{off}");

    // nvidia-fs loaded but the file does not register: AUTO falls back with
    // the registration's reason.
    let (_, auto, _) = run("nvfs,register_fail");
    assert!(auto.starts_with("AUTO Unavailable("), "{auto}");
    assert!(
        auto.contains("route=Bounce reason=cuFile unavailable: cuFileHandleRegister failed"),
        "{auto}"
    );

    // P2PDMA reported without nvidia-fs: AUTO takes cuFile.
    let (_, auto, _) = run("p2p");
    assert!(auto.starts_with("AUTO Ready route=CuFile"), "{auto}");
}
