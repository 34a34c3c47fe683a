//! Bad input: every failure is the exact error variant, and its message
//! names the file and the cause.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use gdscan::cuda::CudaError;
use gdscan::engine::IoError;
use gdscan::{CompatMode, Engine, Error, FileHandle, OpenMode, Settings};

fn engine() -> Arc<Engine> {
    let settings = Settings::builder()
        .num_threads(2)
        .task_size(4096)
        .auto_direct_io_read(false)
        .auto_direct_io_write(false)
        .build()
        .unwrap();
    Engine::new(settings).unwrap()
}

/// Deterministic pseudo-random bytes (xorshift64).
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

fn path_str(path: &Path) -> String {
    path.display().to_string()
}

/// Asserts that `message` contains every one of `parts`.
fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "message {message:?} does not mention {part:?}"
        );
    }
}

#[test]
fn missing_file_is_not_found_in_every_mode_that_needs_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("does-not-exist.parquet");
    for mode in [OpenMode::Read, OpenMode::ReadWrite] {
        let err = FileHandle::open_with(engine(), &path, mode).unwrap_err();
        assert!(
            matches!(&err, IoError::NotFound { path: p } if *p == path_str(&path)),
            "{mode:?}: {err:?}"
        );
        assert_mentions(&err.to_string(), &[&path_str(&path), "no such file"]);
    }
    // "w" creates files, but not missing directories.
    let nested = dir.path().join("no-such-dir").join("out.bin");
    let err = FileHandle::open_with(engine(), &nested, OpenMode::Write).unwrap_err();
    assert!(matches!(&err, IoError::NotFound { .. }), "{err:?}");
    assert_mentions(&err.to_string(), &[&path_str(&nested), "no such file"]);
    assert!(!path.exists() && !nested.exists());
}

#[test]
fn directory_is_is_directory_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let p = path_str(dir.path());
    for mode in [
        OpenMode::Read,
        OpenMode::Write,
        OpenMode::ReadWrite,
        OpenMode::ReadWriteCreate,
    ] {
        let err = FileHandle::open_with(engine(), dir.path(), mode).unwrap_err();
        assert!(
            matches!(&err, IoError::IsDirectory { path } if *path == p),
            "{mode:?}: {err:?}"
        );
        assert_mentions(&err.to_string(), &[&p, "directory"]);
    }
    assert!(dir.path().is_dir(), "the directory must be left alone");
}

/// Opens `path` read-only and checks that it is refused with
/// `PermissionDenied` (for a process whose permissions are enforced).
fn check_permission_denied(path: &Path) {
    let err = FileHandle::open_with(engine(), path, OpenMode::Read).unwrap_err();
    assert!(
        matches!(&err, IoError::PermissionDenied { path: p } if *p == path_str(path)),
        "{err:?}"
    );
    assert_mentions(&err.to_string(), &[&path_str(path), "permission denied"]);
    let err = FileHandle::open_with(engine(), path, OpenMode::ReadWrite).unwrap_err();
    assert!(matches!(&err, IoError::PermissionDenied { .. }), "{err:?}");
}

const PERM_ENV: &str = "GDSCAN_TEST_UNREADABLE_PATH";
const NOBODY: u32 = 65534;

#[test]
fn unreadable_file_is_permission_denied() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret.bin");
    std::fs::write(&path, b"secret bytes").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();

    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        check_permission_denied(&path);
        return;
    }

    // Root bypasses file permissions: opening succeeds and reads the bytes.
    eprintln!(
        "running as root, which ignores file permissions: checking that the open succeeds, \
         and checking PermissionDenied in a child process running as uid {NOBODY}"
    );
    let handle = FileHandle::open_with(engine(), &path, OpenMode::Read).unwrap();
    let mut buf = vec![0u8; 12];
    assert_eq!(handle.pread(&mut buf, 12, 0).unwrap(), 12);
    assert_eq!(&buf, b"secret bytes");

    // The unprivileged child must be able to reach the file's directory.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = std::env::current_exe().unwrap();
    let output = {
        use std::os::unix::process::CommandExt;
        std::process::Command::new(exe)
            .args([
                "--exact",
                "permission_denied_in_unprivileged_child",
                "--ignored",
                "--test-threads=1",
            ])
            .env(PERM_ENV, &path)
            .uid(NOBODY)
            .gid(NOBODY)
            .output()
    };
    match output {
        Err(e) => eprintln!("cannot start a child as uid {NOBODY} ({e}); child check skipped"),
        Ok(out) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && stdout.contains("1 passed"),
                "child as uid {NOBODY} failed: {:?}\n{stdout}\n{stderr}",
                out.status
            );
        }
    }
}

/// Run by `unreadable_file_is_permission_denied` in a child process as an
/// unprivileged user (the path comes in `GDSCAN_TEST_UNREADABLE_PATH`).
/// Run directly, it checks a file of its own when permissions are enforced.
#[test]
#[ignore = "helper: started as an unprivileged child by unreadable_file_is_permission_denied"]
fn permission_denied_in_unprivileged_child() {
    if let Some(path) = std::env::var_os(PERM_ENV) {
        // SAFETY: geteuid has no preconditions.
        assert_ne!(unsafe { libc::geteuid() }, 0, "the child must not be root");
        check_permission_denied(Path::new(&path));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret.bin");
    std::fs::write(&path, b"x").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("running as root: permissions are not enforced, nothing to check");
        assert!(FileHandle::open_with(engine(), &path, OpenMode::Read).is_ok());
    } else {
        check_permission_denied(&path);
    }
}

#[test]
fn offset_at_or_past_eof_is_offset_past_eof() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.bin");
    std::fs::write(&path, pattern(1000, 1)).unwrap();
    let p = path_str(&path);
    let handle = FileHandle::open_with(engine(), &path, OpenMode::Read).unwrap();
    for offset in [1000u64, 1001, 1 << 40, u64::MAX] {
        let mut buf = vec![0x11u8; 16];
        let err = handle.pread(&mut buf, 16, offset).unwrap_err();
        assert!(
            matches!(&err, IoError::OffsetPastEof { path, offset: o, file_size: 1000 }
                if *path == p && *o == offset),
            "{offset}: {err:?}"
        );
        assert_mentions(
            &err.to_string(),
            &[&p, &offset.to_string(), "1000 bytes", "past the end"],
        );
        assert!(buf.iter().all(|&b| b == 0x11), "buffer must stay untouched");
        let err = handle
            .pread_async(vec![0u8; 16], 16, offset)
            .expect_err("async read past EOF must fail at once");
        assert!(matches!(&err, IoError::OffsetPastEof { .. }), "{err:?}");
    }
    // The last byte is still readable.
    let mut one = [0u8; 1];
    assert_eq!(handle.pread(&mut one[..], 1, 999).unwrap(), 1);
    assert_eq!(one[0], std::fs::read(&path).unwrap()[999]);

    // An empty file has no readable offset at all.
    let empty = dir.path().join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let handle = FileHandle::open_with(engine(), &empty, OpenMode::Read).unwrap();
    let err = handle.pread(&mut [0u8; 4][..], 4, 0).unwrap_err();
    assert!(
        matches!(
            &err,
            IoError::OffsetPastEof {
                offset: 0,
                file_size: 0,
                ..
            }
        ),
        "{err:?}"
    );
    assert_mentions(&err.to_string(), &[&path_str(&empty), "0 bytes"]);
}

#[test]
fn zero_size_request_is_empty_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    std::fs::write(&path, pattern(100, 2)).unwrap();
    let p = path_str(&path);
    let handle = FileHandle::open_with(engine(), &path, OpenMode::ReadWrite).unwrap();
    let mut buf = vec![0u8; 10];
    let read = handle.pread(&mut buf, 0, 0).unwrap_err();
    let write = handle.pwrite(&buf, 0, 0).unwrap_err();
    let read_async = handle.pread_async(vec![0u8; 10], 0, 5).err().unwrap();
    let write_async = handle.pwrite_async(vec![0u8; 10], 0, 5).err().unwrap();
    for err in [read, write, read_async, write_async] {
        assert!(
            matches!(&err, IoError::EmptyRequest { path } if *path == p),
            "{err:?}"
        );
        assert_mentions(&err.to_string(), &[&p, "empty request", "size 0"]);
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        pattern(100, 2),
        "file unchanged"
    );
}

#[test]
fn buffer_smaller_than_request_is_buffer_too_small() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    let content = pattern(100, 3);
    std::fs::write(&path, &content).unwrap();
    let handle = FileHandle::open_with(engine(), &path, OpenMode::ReadWrite).unwrap();

    let mut small = vec![0x22u8; 10];
    let err = handle.pread(&mut small, 50, 0).unwrap_err();
    assert!(
        matches!(
            err,
            IoError::BufferTooSmall {
                buffer: 10,
                requested: 50,
                ..
            }
        ),
        "{err:?}"
    );
    assert_mentions(&err.to_string(), &["10 bytes", "too small", "50 bytes"]);
    assert!(
        small.iter().all(|&b| b == 0x22),
        "buffer must stay untouched"
    );

    let err = handle.pwrite(&small, 50, 0).unwrap_err();
    assert!(
        matches!(
            err,
            IoError::BufferTooSmall {
                buffer: 10,
                requested: 50,
                ..
            }
        ),
        "{err:?}"
    );
    assert_mentions(&err.to_string(), &["10 bytes", "too small", "50 bytes"]);
    let err = handle.pwrite_async(vec![0u8; 3], 4, 0).err().unwrap();
    assert!(
        matches!(
            err,
            IoError::BufferTooSmall {
                buffer: 3,
                requested: 4,
                ..
            }
        ),
        "{err:?}"
    );
    let err = handle.pread_async(vec![0u8; 3], 4, 0).err().unwrap();
    assert!(
        matches!(
            err,
            IoError::BufferTooSmall {
                buffer: 3,
                requested: 4,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), content, "file unchanged");

    // A read is clipped at end of file first: a buffer holding what is left
    // of the file is big enough even when `size` is larger.
    let mut tail = vec![0u8; 40];
    assert_eq!(handle.pread(&mut tail, 1000, 60).unwrap(), 40);
    assert_eq!(tail, content[60..]);
}

/// Messages name the file where there is one.
#[test]
fn buffer_too_small_message_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    std::fs::write(&path, pattern(100, 3)).unwrap();
    let handle = FileHandle::open_with(engine(), &path, OpenMode::Read).unwrap();
    let err = handle.pread(&mut vec![0u8; 10], 50, 0).unwrap_err();
    assert_mentions(&err.to_string(), &[&path_str(&path), "too small"]);
}

#[test]
fn operation_not_allowed_by_mode_is_mode_not_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    std::fs::write(&path, pattern(100, 4)).unwrap();
    let p = path_str(&path);

    let reader = FileHandle::open_with(engine(), &path, OpenMode::Read).unwrap();
    let data = pattern(10, 5);
    let sync = reader.pwrite(&data, 10, 0).unwrap_err();
    let async_ = reader.pwrite_async(data.clone(), 10, 0).err().unwrap();
    for err in [sync, async_] {
        assert!(
            matches!(&err, IoError::ModeNotAllowed { path, mode: "r", op: "writing" } if *path == p),
            "{err:?}"
        );
        assert_mentions(&err.to_string(), &[&p, "mode r", "writing"]);
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        pattern(100, 4),
        "file unchanged"
    );

    // "w" truncates; write something so that a read would have bytes to return.
    let writer = FileHandle::open_with(engine(), &path, OpenMode::Write).unwrap();
    assert_eq!(writer.pwrite(&data, 10, 0).unwrap(), 10);
    let mut buf = vec![0u8; 10];
    let sync = writer.pread(&mut buf, 10, 0).unwrap_err();
    let async_ = writer.pread_async(vec![0u8; 10], 10, 0).err().unwrap();
    for err in [sync, async_] {
        assert!(
            matches!(&err, IoError::ModeNotAllowed { path, mode: "w", op: "reading" } if *path == p),
            "{err:?}"
        );
        assert_mentions(&err.to_string(), &[&p, "mode w", "reading"]);
    }
    assert_eq!(std::fs::read(&path).unwrap(), data);
}

#[test]
fn unknown_mode_string_is_invalid_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    std::fs::write(&path, b"abc").unwrap();
    for mode in ["x", "", "rw", "R", "a", "r+b", " r"] {
        let err = FileHandle::open(&path, mode).unwrap_err();
        assert!(
            matches!(&err, IoError::InvalidMode(m) if m == mode),
            "{mode:?}: {err:?}"
        );
        assert_mentions(&err.to_string(), &[&format!("{mode:?}"), "r, w, r+ or w+"]);
        assert!(matches!(
            mode.parse::<OpenMode>(),
            Err(IoError::InvalidMode(_))
        ));
    }
    assert_eq!(std::fs::read(&path).unwrap(), b"abc", "file unchanged");
    // Valid letters parse to the matching mode.
    for mode in [
        OpenMode::Read,
        OpenMode::Write,
        OpenMode::ReadWrite,
        OpenMode::ReadWriteCreate,
    ] {
        assert_eq!(mode.as_str().parse::<OpenMode>().unwrap(), mode);
    }
}

#[test]
fn bad_settings_are_errors_naming_the_setting() {
    let err = Settings::builder().task_size(0).build().unwrap_err();
    assert_mentions(&err.to_string(), &["task_size", "\"0\""]);
    assert!(Settings::builder().num_threads(0).build().is_err());
    assert!(Settings::builder().bounce_buffer_size(0).build().is_err());

    let err = gdscan::config::Settings::from_lookup(|k| {
        (k == "KVIKIO_TASK_SIZE").then(|| "abc".to_string())
    })
    .unwrap_err();
    let message = err.to_string();
    assert_mentions(&message, &["KVIKIO_TASK_SIZE", "\"abc\""]);
    // Wrapped in the crate error, the message stays the same.
    let wrapped = Error::from(err);
    assert!(matches!(wrapped, Error::Config(_)), "{wrapped:?}");
    assert_eq!(wrapped.to_string(), message);

    // A good value through the same lookup is accepted.
    let ok = gdscan::config::Settings::from_lookup(|k| {
        (k == "KVIKIO_TASK_SIZE").then(|| "8192".to_string())
    })
    .unwrap();
    assert_eq!(ok.task_size, 8192);
}

#[test]
fn device_without_cuda_is_cuda_unavailable() {
    if gdscan::cuda::driver::is_available() {
        eprintln!("a CUDA driver and GPU are present: the no-CUDA check does not apply here");
    } else {
        let err = gdscan::cuda::Device::get(0).unwrap_err();
        assert!(matches!(&err, CudaError::Unavailable(_)), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains("libcuda") || message.contains("GPU"),
            "{message}"
        );
        assert!(message.contains("CUDA is not available"), "{message}");
    }
    // An absurd ordinal is an error on any machine, never a panic.
    let result = std::panic::catch_unwind(|| gdscan::cuda::Device::get(9999));
    let err = result.expect("Device::get must not panic").unwrap_err();
    assert!(
        matches!(
            &err,
            CudaError::NoSuchDevice { device: 9999, .. } | CudaError::Unavailable(_)
        ),
        "{err:?}"
    );
}

#[test]
fn compat_mode_off_still_reads_and_writes_host_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    let content = pattern(50_001, 6);
    std::fs::write(&path, &content).unwrap();
    let settings = Settings::builder()
        .compat_mode(CompatMode::Off)
        .num_threads(2)
        .task_size(4096)
        .build()
        .unwrap();
    assert_eq!(settings.compat_mode, CompatMode::Off);
    let engine = Engine::new(settings).unwrap();
    let handle = FileHandle::open_with(engine, &path, OpenMode::ReadWrite).unwrap();
    let mut buf = vec![0u8; content.len()];
    assert_eq!(
        handle.pread(&mut buf, content.len(), 0).unwrap(),
        content.len()
    );
    assert_eq!(buf, content);
    let data = pattern(9000, 7);
    assert_eq!(handle.pwrite(&data, data.len(), 777).unwrap(), 9000);
    let mut expected = content.clone();
    expected[777..777 + 9000].copy_from_slice(&data);
    assert_eq!(std::fs::read(&path).unwrap(), expected);
}

#[test]
fn file_truncated_after_open_never_yields_more_than_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrinks.bin");
    let original = pattern(200_000, 8);
    std::fs::write(&path, &original).unwrap();
    let handle = FileHandle::open_with(engine(), &path, OpenMode::Read).unwrap();

    let new_len = 70_001u64;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(new_len)
        .unwrap();
    let now = std::fs::read(&path).unwrap();
    assert_eq!(now.len() as u64, new_len);

    const SENTINEL: u8 = 0x3C;
    let mut buf = vec![SENTINEL; original.len()];
    match handle.pread(&mut buf, original.len(), 0) {
        Ok(n) => {
            assert_eq!(
                n as u64, new_len,
                "the request is clipped to the file's size"
            );
            assert_eq!(buf[..n], now[..]);
            assert!(buf[n..].iter().all(|&b| b == SENTINEL));
        }
        Err(err) => {
            eprintln!("read of a truncated file failed: {err}");
            assert_mentions(&err.to_string(), &[&path_str(&path)]);
        }
    }
    // Past the new end is past EOF.
    let err = handle.pread(&mut buf, 10, new_len).unwrap_err();
    assert!(
        matches!(err, IoError::OffsetPastEof { file_size, .. } if file_size == new_len),
        "{err:?}"
    );
}

#[test]
fn write_whose_end_overflows_the_offset_range_fails_and_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    let content = pattern(10_000, 9);
    std::fs::write(&path, &content).unwrap();
    let data = pattern(3 * 4096, 10);
    for offset in [u64::MAX - 10, u64::MAX - 4096, i64::MAX as u64 + 1] {
        let result = FileHandle::open_with(engine(), &path, OpenMode::ReadWrite)
            .unwrap()
            .pwrite(&data, data.len(), offset);
        assert!(
            matches!(result, Err(IoError::RangeOverflow { .. })),
            "offset {offset}: {result:?}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            content,
            "offset {offset}: a write past the largest file offset changed the file"
        );
    }
}
