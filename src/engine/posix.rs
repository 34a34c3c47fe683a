//! POSIX transfers on file descriptors: full-length pread/pwrite loops and the
//! opportunistic O_DIRECT split.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, OnceLock};

use super::direct::{split_for_direct, Segment, DIRECT_ALIGN};
use super::error::IoError;
use super::error::Result;
use super::faults::{Fault, FaultInjector};

/// The descriptors of one open file: the buffered one, and an O_DIRECT one
/// when the file system accepted it; and the test seam's injector, if set.
#[derive(Debug)]
pub(crate) struct Descriptors {
    pub buffered: File,
    pub direct: Option<File>,
    pub faults: OnceLock<Arc<dyn FaultInjector>>,
}

/// How many `EAGAIN`s in a row a transfer retries before failing (a regular
/// file never gives one; a descriptor left non-blocking might).
const EAGAIN_RETRIES: u32 = 16;

/// Whether to retry after `e`: always on `EINTR`, on `EAGAIN` up to
/// [`EAGAIN_RETRIES`] times in a row (with a short sleep).
fn retry(e: &io::Error, eagain: &mut u32) -> bool {
    match e.kind() {
        io::ErrorKind::Interrupted => true,
        io::ErrorKind::WouldBlock if *eagain < EAGAIN_RETRIES => {
            *eagain += 1;
            std::thread::sleep(std::time::Duration::from_micros(50 << (*eagain).min(6)));
            true
        }
        _ => false,
    }
}

/// One `pread`, or the injector's fault in its place.
fn read_once(fds: &Descriptors, file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    match fds.faults.get().and_then(|f| f.on_read(offset, buf.len())) {
        None => file.read_at(buf, offset),
        Some(Fault::Errno(errno)) => Err(io::Error::from_raw_os_error(errno)),
        Some(Fault::Short(n)) => {
            let n = n.min(buf.len());
            file.read_at(&mut buf[..n], offset)
        }
    }
}

/// One `pwrite`, or the injector's fault in its place.
fn write_once(fds: &Descriptors, file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    match fds.faults.get().and_then(|f| f.on_write(offset, buf.len())) {
        None => file.write_at(buf, offset),
        Some(Fault::Errno(errno)) => Err(io::Error::from_raw_os_error(errno)),
        Some(Fault::Short(n)) => {
            let n = n.min(buf.len());
            file.write_at(&buf[..n], offset)
        }
    }
}

/// Reads until `buf` is full or the file ends; returns the bytes read, or
/// the error with the offset of the failing call.
fn pread_full(
    fds: &Descriptors,
    file: &File,
    buf: &mut [u8],
    offset: u64,
) -> std::result::Result<usize, (u64, io::Error)> {
    let mut done = 0;
    let mut eagain = 0;
    while done < buf.len() {
        let at = offset + done as u64;
        match read_once(fds, file, &mut buf[done..], at) {
            Ok(0) => break,
            Ok(n) => {
                done += n;
                eagain = 0;
            }
            Err(e) if retry(&e, &mut eagain) => continue,
            Err(e) => return Err((at, e)),
        }
    }
    Ok(done)
}

/// Writes all of `buf`, or returns the error with the offset of the
/// failing call.
fn pwrite_full(
    fds: &Descriptors,
    file: &File,
    buf: &[u8],
    offset: u64,
) -> std::result::Result<(), (u64, io::Error)> {
    let mut done = 0;
    let mut eagain = 0;
    while done < buf.len() {
        let at = offset + done as u64;
        match write_once(fds, file, &buf[done..], at) {
            Ok(0) => {
                return Err((
                    at,
                    io::Error::new(io::ErrorKind::WriteZero, "pwrite wrote 0 bytes"),
                ))
            }
            Ok(n) => {
                done += n;
                eagain = 0;
            }
            Err(e) if retry(&e, &mut eagain) => continue,
            Err(e) => return Err((at, e)),
        }
    }
    Ok(())
}

/// The typed error of a failed transfer call.
fn failed(path: &str, op: &'static str, (offset, source): (u64, io::Error), len: usize) -> IoError {
    IoError::Transfer {
        path: path.to_string(),
        op,
        offset,
        len,
        source,
    }
}

/// The O_DIRECT descriptor to use (if any) and the segments of a transfer
/// of `len` bytes at `offset` to or from memory at `addr`.
fn plan(
    fds: &Descriptors,
    use_direct: bool,
    offset: u64,
    addr: usize,
    len: usize,
) -> (Option<&File>, Vec<Segment>) {
    match fds.direct.as_ref().filter(|_| use_direct) {
        Some(file) => (
            Some(file),
            split_for_direct(offset, addr, len, DIRECT_ALIGN),
        ),
        None => (
            None,
            vec![Segment {
                start: 0,
                len,
                direct: false,
            }],
        ),
    }
}

/// Reads `dst.len()` bytes at `offset` into host memory, through O_DIRECT for
/// the aligned middle when `use_direct` and a direct descriptor exist.
/// Returns the bytes read (less than asked only at end of file).
pub(crate) fn read_into(
    fds: &Descriptors,
    path: &str,
    offset: u64,
    dst: &mut [u8],
    use_direct: bool,
) -> Result<usize> {
    let (direct, segments) = plan(fds, use_direct, offset, dst.as_ptr() as usize, dst.len());
    let mut total = 0;
    for seg in segments {
        let piece = &mut dst[seg.start..seg.start + seg.len];
        let at = offset + seg.start as u64;
        let got = match (seg.direct, direct) {
            (true, Some(file)) => match pread_full(fds, file, piece, at) {
                // Some file systems refuse a particular alignment: fall back.
                Err((_, e)) if e.raw_os_error() == Some(libc::EINVAL) => {
                    pread_full(fds, &fds.buffered, piece, at)
                }
                other => other,
            },
            _ => pread_full(fds, &fds.buffered, piece, at),
        }
        .map_err(|e| failed(path, "pread", e, seg.len))?;
        total += got;
        if got < seg.len {
            break;
        }
    }
    Ok(total)
}

/// Writes all of `src` at `offset`, through O_DIRECT for the aligned middle
/// when `use_direct` and a direct descriptor exist.
pub(crate) fn write_from(
    fds: &Descriptors,
    path: &str,
    offset: u64,
    src: &[u8],
    use_direct: bool,
) -> Result<()> {
    let (direct, segments) = plan(fds, use_direct, offset, src.as_ptr() as usize, src.len());
    for seg in segments {
        let piece = &src[seg.start..seg.start + seg.len];
        let at = offset + seg.start as u64;
        match (seg.direct, direct) {
            (true, Some(file)) => match pwrite_full(fds, file, piece, at) {
                Err((_, e)) if e.raw_os_error() == Some(libc::EINVAL) => {
                    pwrite_full(fds, &fds.buffered, piece, at)
                }
                other => other,
            },
            _ => pwrite_full(fds, &fds.buffered, piece, at),
        }
        .map_err(|e| failed(path, "pwrite", e, seg.len))?;
    }
    Ok(())
}
