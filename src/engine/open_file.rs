//! The open file: modes, the buffered and O_DIRECT descriptors, and what
//! the workers share about it.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::OnceLock;

use super::counters::PathCounters;
use super::error::IoError;
use super::posix::Descriptors;
use crate::cufile::CuFileHandle;
use crate::error::{Error, Result};

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
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "r" => Ok(OpenMode::Read),
            "w" => Ok(OpenMode::Write),
            "r+" => Ok(OpenMode::ReadWrite),
            "w+" => Ok(OpenMode::ReadWriteCreate),
            other => Err(IoError::InvalidMode(other.to_string()).into()),
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
