//! The decode kernels' logic on the CPU: `tests/kernel_emu/kernels_emu.cpp`
//! includes the kernel sources as they are, under a C++ emulation of the
//! CUDA features they use (`tests/kernel_emu/emu.h`: a thread per CUDA
//! thread, barriers for `__syncthreads` and the warp intrinsics), and checks
//! every kind of page (fixed width with conversions, dictionary, booleans,
//! byte-array views, levels, corrupt pages) against expectations computed
//! there, then runs corrupted pages (bit flips, truncations, lying lengths)
//! that must end with an error code or consistent counts. Uploads hold
//! exactly the page's bytes: with GDSCAN_KERNEL_EMU_SANITIZE=1 the harness
//! is built with AddressSanitizer and UBSan, so any read outside a page
//! fails the test. It needs a C++20 compiler (`$CXX`, else `c++`); without
//! one the test says so and passes, unless GDSCAN_REQUIRE_KERNEL_EMU=1.

use std::path::Path;
use std::process::Command;

#[test]
fn kernels_under_cpu_emulation() {
    let required = std::env::var("GDSCAN_REQUIRE_KERNEL_EMU").is_ok_and(|v| v == "1");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    if Command::new(&cxx).arg("--version").output().is_err() {
        assert!(
            !required,
            "GDSCAN_REQUIRE_KERNEL_EMU=1 but no C++ compiler ({cxx})"
        );
        eprintln!("SKIPPED kernels_under_cpu_emulation: no C++ compiler ({cxx}); set CXX");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gdscan_generated.cuh"),
        gdscan::decode::kernels::task::generated_header(),
    )
    .unwrap();
    let exe = dir.path().join("kernels_emu");
    let sanitize = std::env::var("GDSCAN_KERNEL_EMU_SANITIZE").is_ok_and(|v| v == "1");
    let out = Command::new(&cxx)
        .args(["-std=c++20", "-O1", "-fno-strict-aliasing", "-pthread"])
        .args(if sanitize {
            &[
                "-g",
                "-fsanitize=address,undefined",
                "-fno-sanitize-recover=all",
            ][..]
        } else {
            &[][..]
        })
        .arg(format!("-I{}", root.join("tests/kernel_emu").display()))
        .arg(format!(
            "-I{}",
            root.join("src/decode/kernels/cuda").display()
        ))
        .arg(format!("-I{}", dir.path().display()))
        .arg("-o")
        .arg(&exe)
        .arg(root.join("tests/kernel_emu/kernels_emu.cpp"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cxx} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .env("ASAN_OPTIONS", "detect_leaks=0")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    eprintln!("{stdout}");
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("ALL OK"));
}
