//! What `tpch gen` wrote.

use std::path::PathBuf;

use serde::Serialize;

use super::table::Table;

/// One file written by [`generate`](super::generate).
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// Its path.
    pub path: PathBuf,
    /// Rows in it.
    pub rows: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

/// One table written by [`generate`](super::generate).
#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    /// The table.
    pub table: Table,
    /// Its files, in order (`part-0.parquet`, `part-1.parquet`, ...).
    pub files: Vec<FileReport>,
    /// Rows in all its files.
    pub rows: u64,
    /// Bytes of all its files.
    pub bytes: u64,
    /// Seconds from its first file's start to its last file's end.
    pub seconds: f64,
}

/// What [`generate`](super::generate) wrote.
#[derive(Debug, Clone, Serialize)]
pub struct GenReport {
    /// The scale factor.
    pub scale_factor: f64,
    /// The output folder.
    pub out: PathBuf,
    /// The compression, as [`compression_name`](super::compression_name) writes it.
    pub compression: String,
    /// The encodings (`--encoding`: `dictionary` or `delta`).
    pub encoding: String,
    /// Rows per row group.
    pub row_group_rows: usize,
    /// The tables, in the order asked for.
    pub tables: Vec<TableReport>,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
}

impl GenReport {
    /// Rows of all tables.
    pub fn rows(&self) -> u64 {
        self.tables.iter().map(|t| t.rows).sum()
    }

    /// Bytes of all files.
    pub fn bytes(&self) -> u64 {
        self.tables.iter().map(|t| t.bytes).sum()
    }

    /// Files written.
    pub fn files(&self) -> usize {
        self.tables.iter().map(|t| t.files.len()).sum()
    }
}
