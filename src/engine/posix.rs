//! POSIX transfers on file descriptors: full-length pread/pwrite loops and the
//! opportunistic O_DIRECT split.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::direct::{split_for_direct, Segment, DIRECT_ALIGN};
use crate::error::{Error, Result};

/// The descriptors of one open file: the buffered one, and an O_DIRECT one
/// when the file system accepted it.
#[derive(Debug)]
pub(crate) struct Descriptors {
    pub buffered: File,
    pub direct: Option<File>,
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn pread_full(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Writes all of `buf`.
fn pwrite_full(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match file.write_at(&buf[done..], offset + done as u64) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "pwrite wrote 0 bytes",
                ))
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
            (true, Some(file)) => match pread_full(file, piece, at) {
                // Some file systems refuse a particular alignment: fall back.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    pread_full(&fds.buffered, piece, at)
                }
                other => other,
            },
            _ => pread_full(&fds.buffered, piece, at),
        }
        .map_err(|e| Error::io(path, "pread", e))?;
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
            (true, Some(file)) => match pwrite_full(file, piece, at) {
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    pwrite_full(&fds.buffered, piece, at)
                }
                other => other,
            },
            _ => pwrite_full(&fds.buffered, piece, at),
        }
        .map_err(|e| Error::io(path, "pwrite", e))?;
    }
    Ok(())
}
