//! The open file: modes, the buffered and O_DIRECT descriptors, and what
//! the workers share about it.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::OnceLock;

use super::counters::PathCounters;
use super::error::{IoError, Result};
use super::posix::Descriptors;
use crate::cufile::CuFileHandle;

/// How a file is opened, with the same letters as `fopen` and KvikIO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// "r": read only; the file must exist.
    Read,
    /// "w": write only; created or truncated.
    Write,
    /// "r+": read and write; the file must exist.
    ReadWrite,
    /// "w+": read and write; created or truncated.
    ReadWriteCreate,
}

impl OpenMode {
    /// The mode's letters.
    pub fn as_str(self) -> &'static str {
        match self {
            OpenMode::Read => "r",
            OpenMode::Write => "w",
            OpenMode::ReadWrite => "r+",
            OpenMode::ReadWriteCreate => "w+",
        }
    }

    pub(crate) fn can_read(self) -> bool {
        !matches!(self, OpenMode::Write)
    }

    pub(crate) fn can_write(self) -> bool {
        !matches!(self, OpenMode::Read)
    }

    pub(crate) fn options(self) -> OpenOptions {
        let mut o = OpenOptions::new();
        match self {
            OpenMode::Read => o.read(true),
            OpenMode::Write => o.write(true).create(true).truncate(true),
            OpenMode::ReadWrite => o.read(true).write(true),
            OpenMode::ReadWriteCreate => o.read(true).write(true).create(true).truncate(true),
        };
        o
    }
}

impl std::str::FromStr for OpenMode {
    type Err = IoError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "r" => Ok(OpenMode::Read),
            "w" => Ok(OpenMode::Write),
            "r+" => Ok(OpenMode::ReadWrite),
            "w+" => Ok(OpenMode::ReadWriteCreate),
            other => Err(IoError::InvalidMode(other.to_string())),
        }
    }
}

/// What the workers share about an open file.
#[derive(Debug)]
pub(crate) struct FileShared {
    pub path: String,
    pub fds: Descriptors,
    pub counters: PathCounters,
    /// The cuFile registration, once a device request made one.
    pub cufile: OnceLock<CuFileHandle>,
}

/// Opens `path` again with O_DIRECT, in `mode`'s access (never creating or
/// truncating: the buffered descriptor did that).
pub(crate) fn open_direct(path: &std::path::Path, mode: OpenMode) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(mode.can_read())
        .write(mode.can_write())
        .custom_flags(libc::O_DIRECT);
    o.open(path)
}

/// What `meta` describes when it is something the engine refuses (not a
/// regular file, a block device or a directory, which has its own error).
pub(crate) fn refused_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        Some("FIFO")
    } else if t.is_socket() {
        Some("socket")
    } else if t.is_char_device() {
        Some("character device")
    } else if t.is_file() || t.is_block_device() || t.is_dir() {
        None
    } else {
        Some("special file")
    }
}

/// Whether `file` lives on procfs or sysfs, whose files report a size that
/// is not their content's (0, or 4096) and change between reads.
pub(crate) fn is_pseudo_file(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    const PROC_SUPER_MAGIC: i64 = 0x9fa0;
    const SYSFS_MAGIC: i64 = 0x6265_6572;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: a valid descriptor and a zeroed out structure to fill.
    if unsafe { libc::fstatfs(file.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: fstatfs succeeded and filled the structure.
    // f_type's integer type differs between platforms.
    #[allow(clippy::unnecessary_cast)]
    let magic = unsafe { st.assume_init() }.f_type as i64;
    magic == PROC_SUPER_MAGIC || magic == SYSFS_MAGIC
}

/// Opens `path` in `mode` without ever blocking in `open` (a FIFO without a
/// writer would wait forever): the path is examined first and refused when
/// it is not a regular file or a block device, then opened with
/// `O_NONBLOCK` (against a swap between the check and the open), examined
/// again through the descriptor, and `O_NONBLOCK` cleared.
pub(crate) fn open_checked(path: &std::path::Path, mode: OpenMode) -> Result<File> {
    use std::os::fd::AsRawFd;
    let path_str = path.display().to_string();
    let refuse = |kind| -> IoError {
        IoError::NotAFile {
            path: path_str.clone(),
            kind,
        }
    };
    if let Ok(meta) = std::fs::metadata(path) {
        if let Some(kind) = refused_kind(&meta) {
            return Err(refuse(kind));
        }
    }
    let mut options = mode.options();
    options.custom_flags(libc::O_NONBLOCK);
    let file = options
        .open(path)
        .map_err(|e| IoError::from_open(&path_str, e))?;
    let meta = file
        .metadata()
        .map_err(|e| IoError::os(&path_str, "fstat", e))?;
    if meta.is_dir() {
        return Err(IoError::IsDirectory { path: path_str });
    }
    if let Some(kind) = refused_kind(&meta) {
        return Err(refuse(kind));
    }
    if meta.is_file() && is_pseudo_file(&file) {
        return Err(refuse("procfs/sysfs pseudo-file"));
    }
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above; clearing O_NONBLOCK only.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(IoError::os(
            &path_str,
            "fcntl",
            std::io::Error::last_os_error(),
        ));
    }
    Ok(file)
}
