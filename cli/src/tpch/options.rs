//! What `tpch gen` writes and how: compression, files per table, options.

use std::path::PathBuf;

use ::parquet::basic::{Compression, ZstdLevel};
use ::parquet::file::properties::{EnabledStatistics, WriterProperties};

use super::encoding::GenEncoding;
use super::nested::LINES_PER_ORDER;
use super::table::Table;
use super::{DEFAULT_PART_ROWS, MAX_PARTS, ROW_GROUP_ROWS};
use crate::error::{Error, Result};
use gdscan::config::ConfigError;

/// Parses a compression name: `none` (or `uncompressed`), `snappy`, `zstd`
/// (level 1, the parquet crate's default) or `zstd:LEVEL` (1 to 22).
pub fn parse_compression(s: &str) -> std::result::Result<Compression, String> {
    let lower = s.trim().to_ascii_lowercase();
    let (name, level) = match lower.split_once(':') {
        Some((name, level)) => (name, Some(level)),
        None => (lower.as_str(), None),
    };
    let expected = "expected none, snappy, zstd or zstd:LEVEL";
    match (name, level) {
        ("none" | "uncompressed", None) => Ok(Compression::UNCOMPRESSED),
        ("snappy", None) => Ok(Compression::SNAPPY),
        ("zstd", None) => Ok(Compression::ZSTD(ZstdLevel::default())),
        ("zstd", Some(level)) => {
            let n: i32 = level
                .parse()
                .map_err(|_| format!("invalid zstd level {level:?} in {s:?}: expected 1 to 22"))?;
            if !(1..=22).contains(&n) {
                return Err(format!("invalid zstd level {n} in {s:?}: expected 1 to 22"));
            }
            ZstdLevel::try_new(n)
                .map(Compression::ZSTD)
                .map_err(|e| format!("invalid zstd level {n}: {e}"))
        }
        _ => Err(format!("unknown compression {s:?}: {expected}")),
    }
}

/// The name [`parse_compression`] reads back: `none`, `snappy`, `zstd:3`, ...
pub fn compression_name(c: Compression) -> String {
    match c {
        Compression::UNCOMPRESSED => "none".into(),
        Compression::SNAPPY => "snappy".into(),
        Compression::ZSTD(level) => format!("zstd:{}", level.compression_level()),
        other => other.to_string().to_ascii_lowercase(),
    }
}

/// Files for `table` at `scale_factor` when `--parts` is not given: 1 for
/// nation and region, else `ceil(rows / DEFAULT_PART_ROWS)` (at least 1),
/// about four row groups of [`ROW_GROUP_ROWS`] per file (orders_nested:
/// lineitem's count, see [`Table::sizing_rows`]).
pub fn default_parts(table: Table, scale_factor: f64) -> usize {
    if !table.is_partitioned() {
        return 1;
    }
    table
        .sizing_rows(scale_factor)
        .div_ceil(DEFAULT_PART_ROWS)
        .max(1) as usize
}

/// How each file is written: the writer's properties and the encoding
/// choice that also sets the stored column types.
pub(super) struct FileFormat {
    /// The Parquet writer's properties.
    pub props: WriterProperties,
    /// The same for orders_nested, whose row groups hold a quarter of the
    /// rows (see [`GenOptions::nested_writer_properties`]).
    pub nested_props: WriterProperties,
    /// The encodings (and, for [`GenEncoding::Delta`], decimals as doubles).
    pub encoding: GenEncoding,
}

impl FileFormat {
    /// The writer's properties for `table`'s files.
    pub(super) fn props_for(&self, table: Table) -> &WriterProperties {
        match table {
            Table::OrdersNested => &self.nested_props,
            _ => &self.props,
        }
    }
}

/// What [`generate`](super::generate) writes, and how.
#[derive(Debug, Clone)]
pub struct GenOptions {
    /// TPC-H scale factor (1 = lineitem's 6 M rows); positive.
    pub scale_factor: f64,
    /// The output folder; one folder per table is written inside it.
    pub out: PathBuf,
    /// The tables to write (duplicates are written once); orders_nested
    /// only when listed here.
    pub tables: Vec<Table>,
    /// Compression of every column (default Snappy).
    pub compression: Compression,
    /// The columns' encodings (default: arrow-rs's, with dictionaries).
    pub encoding: GenEncoding,
    /// Rows per row group (default [`ROW_GROUP_ROWS`]).
    pub row_group_rows: usize,
    /// Rows per data page, when set (else the writer's default: 20 000 rows or 1 MiB).
    pub page_rows: Option<usize>,
    /// Files per partitioned table (nation and region are always one file);
    /// `None` for [`default_parts`].
    pub parts: Option<usize>,
    /// Write into a non-empty `out`, replacing the folders of the tables written.
    pub force: bool,
    /// No progress bar (it is also hidden when stderr is not a terminal).
    pub quiet: bool,
}

impl GenOptions {
    /// All eight tables (not orders_nested) at `scale_factor` into `out`,
    /// with the defaults.
    pub fn new(scale_factor: f64, out: impl Into<PathBuf>) -> Self {
        GenOptions {
            scale_factor,
            out: out.into(),
            tables: Table::ALL.to_vec(),
            compression: Compression::SNAPPY,
            encoding: GenEncoding::Dictionary,
            row_group_rows: ROW_GROUP_ROWS,
            page_rows: None,
            parts: None,
            force: false,
            quiet: false,
        }
    }

    /// The writer properties these options give.
    pub fn writer_properties(&self) -> WriterProperties {
        let mut b = WriterProperties::builder()
            .set_compression(self.compression)
            .set_max_row_group_row_count(Some(self.row_group_rows.max(1)))
            .set_statistics_enabled(EnabledStatistics::Page);
        if let Some(rows) = self.page_rows {
            // The page row limit is checked between write batches (1024 rows by default).
            b = b
                .set_data_page_row_count_limit(rows)
                .set_write_batch_size(rows.clamp(1, 1024));
        }
        self.encoding.configure(b, &self.tables).build()
    }

    /// The writer properties of orders_nested: [`Self::writer_properties`]
    /// (the same compression, dictionaries, encodings, pages and
    /// statistics as lineitem) with row groups of `row_group_rows / 4`
    /// orders (TPC-H's mean lineitems per order), about `row_group_rows`
    /// lineitems, as in a lineitem row group (the writer's row limit counts
    /// top-level rows, here orders). `page_rows` still counts orders.
    pub fn nested_writer_properties(&self) -> WriterProperties {
        let orders = (self.row_group_rows / LINES_PER_ORDER).max(1);
        self.writer_properties()
            .into_builder()
            .set_max_row_group_row_count(Some(orders))
            .build()
    }

    /// The writer properties and the stored types, as the writers take them.
    pub(super) fn file_format(&self) -> FileFormat {
        FileFormat {
            props: self.writer_properties(),
            nested_props: self.nested_writer_properties(),
            encoding: self.encoding,
        }
    }

    pub(super) fn validate(&self) -> Result<()> {
        let invalid = |name: &str, value: String, reason: &str| {
            Err(Error::from(ConfigError::Invalid {
                name: name.into(),
                value,
                reason: reason.into(),
            }))
        };
        if !(self.scale_factor.is_finite() && self.scale_factor > 0.0) {
            return invalid(
                "--sf",
                self.scale_factor.to_string(),
                "expected a positive scale factor",
            );
        }
        if self.tables.is_empty() {
            return invalid("--tables", String::new(), "expected at least one table");
        }
        if self.row_group_rows == 0 {
            return invalid(
                "--row-group-rows",
                "0".into(),
                "expected a positive number of rows",
            );
        }
        if self.page_rows == Some(0) {
            return invalid(
                "--page-rows",
                "0".into(),
                "expected a positive number of rows",
            );
        }
        if let Some(parts) = self.parts {
            if !(1..=MAX_PARTS).contains(&parts) {
                return invalid(
                    "--parts",
                    parts.to_string(),
                    "expected 1 to 100000 files per table",
                );
            }
        }
        Ok(())
    }
}
