//! cuFile's driver opens on a handle's first device request (or `cufile()`,
//! or a stats window that asks for cuFile's counters), never for a handle
//! that only reads into host memory. Alone in its test binary: the driver's
//! state is process-wide.

use std::sync::Arc;

use gdscan::config::{CompatMode, Settings};
use gdscan::store::LocalSource;
use gdscan::{Engine, FileHandle, OpenMode};

#[test]
fn host_reads_never_open_cufiles_driver_and_a_stats_window_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    let content: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &content).unwrap();
    let settings = Settings::builder()
        .compat_mode(CompatMode::Auto)
        .build()
        .unwrap();
    let handle = Arc::new(
        FileHandle::open_with(Engine::new(settings).unwrap(), &path, OpenMode::Read).unwrap(),
    );
    let source = LocalSource::new(handle.clone()).unwrap();
    let mut buf = vec![0u8; content.len()];
    assert_eq!(
        handle.pread(&mut buf, content.len(), 0).unwrap(),
        content.len()
    );
    assert!(buf == content);
    assert!(
        !gdscan::cufile::driver::tried(),
        "a host-only handle tried to open cuFile's driver"
    );
    // A window that wants cuFile's counters settles the handle's cuFile
    // state first (opens the driver, or finds it missing, as on a machine
    // without cuFile: tried either way), so the counters cover the I/O;
    // except where AUTO leaves cuFile unopened because it could only run
    // its compat path (no nvidia-fs, no P2PDMA configured).
    let window = gdscan::report::StatsWindow::open(true, &source).unwrap();
    let unopened = matches!(
        handle.cufile(),
        gdscan::engine::CuFileAvailability::CompatPathOnly(why) if why.contains("not opened")
    );
    assert!(
        gdscan::cufile::driver::tried() != unopened,
        "{:?}",
        handle.cufile()
    );
    assert_eq!(handle.pread(&mut buf, 4096, 0).unwrap(), 4096);
    let report = window.close(&source).unwrap();
    assert_eq!(
        report.cufile_stats.is_some(),
        gdscan::cufile::driver::opened().is_some(),
        "cuFile's counters are read exactly when its driver is open"
    );
}
