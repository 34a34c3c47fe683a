//! `gdscan tpch gen`: the eight TPC-H tables as Parquet (and, when named,
//! orders_nested: each order with its lineitems as a list of structs).

use std::path::PathBuf;

use ::parquet::basic::Compression;
use clap::{Args, Subcommand};

use crate::error::Result;
use crate::tpch::{
    generate, parse_compression, GenEncoding, GenOptions, GenReport, Table, ROW_GROUP_ROWS,
};

/// TPC-H commands.
#[derive(Debug, Subcommand)]
pub enum TpchCommand {
    /// Write TPC-H tables as Parquet, one folder per table (OUT/<table>/part-<i>.parquet);
    /// `--tables orders_nested` adds orders with their lineitems nested.
    Gen(TpchGenArgs),
}

/// Arguments of `gdscan tpch gen`.
#[derive(Debug, Args)]
pub struct TpchGenArgs {
    /// TPC-H scale factor (1: lineitem has 6 M rows, about 0.3 GB as Snappy Parquet).
    #[arg(long, default_value = "1")]
    pub sf: f64,
    /// Output folder; must be empty or absent unless --force.
    #[arg(long)]
    pub out: PathBuf,
    /// Tables to write, e.g. lineitem,orders (default: all eight).
    /// `orders_nested` (written only when named) is orders with each
    /// order's lineitems as `o_lineitems: list<struct<...>>` (lineitem's
    /// columns but l_orderkey), in lineitem's files and settings, its row
    /// groups a quarter of --row-group-rows orders (about as many
    /// lineitems); the table of `bench decode --cases nested`.
    #[arg(long, value_delimiter = ',')]
    pub tables: Vec<Table>,
    /// none | snappy | zstd | zstd:LEVEL (1-22).
    #[arg(long, default_value = "snappy", value_parser = parse_compression)]
    pub compression: Compression,
    /// Column encodings: `dictionary` (arrow-rs's defaults) or `delta`
    /// (DELTA_BINARY_PACKED integers and dates, DELTA_BYTE_ARRAY strings,
    /// decimals as BYTE_STREAM_SPLIT doubles; no dictionaries).
    #[arg(long, value_enum, default_value_t = GenEncoding::Dictionary)]
    pub encoding: GenEncoding,
    /// Rows per row group (1 Mi by default: megabyte column chunks for GPU scans).
    #[arg(long, default_value_t = ROW_GROUP_ROWS)]
    pub row_group_rows: usize,
    /// Rows per data page (default: the writer's, 20 000 rows or 1 MiB).
    #[arg(long)]
    pub page_rows: Option<usize>,
    /// Files per table except nation and region (default: about 4 row groups per file).
    #[arg(long)]
    pub parts: Option<usize>,
    /// Write into a non-empty folder, replacing the folders of the tables written.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `gdscan tpch ...`.
pub(super) fn run(cmd: TpchCommand) -> Result<String> {
    match cmd {
        TpchCommand::Gen(args) => run_gen(&args),
    }
}

fn run_gen(args: &TpchGenArgs) -> Result<String> {
    let opts = GenOptions {
        tables: if args.tables.is_empty() {
            Table::ALL.to_vec()
        } else {
            args.tables.clone()
        },
        compression: args.compression,
        encoding: args.encoding,
        row_group_rows: args.row_group_rows,
        page_rows: args.page_rows,
        parts: args.parts,
        force: args.force,
        quiet: args.quiet,
        ..GenOptions::new(args.sf, &args.out)
    };
    let report = generate(&opts)?;
    if args.json {
        return Ok(serde_json::to_string_pretty(&report).expect("report serialises") + "\n");
    }
    Ok(render(&report))
}

/// The summary table.
pub(super) fn render(report: &GenReport) -> String {
    let mut out = format!(
        "TPC-H SF {} in {} ({}, {} encodings, {} rows per row group)\n",
        report.scale_factor,
        report.out.display(),
        report.compression,
        report.encoding,
        report.row_group_rows
    );
    out += &format!(
        "{:<13} {:>6} {:>14} {:>16} {:>9}\n",
        "table", "files", "rows", "bytes", "seconds"
    );
    for t in &report.tables {
        out += &format!(
            "{:<13} {:>6} {:>14} {:>16} {:>9.2}\n",
            t.table.name(),
            t.files.len(),
            t.rows,
            t.bytes,
            t.seconds
        );
    }
    out += &format!(
        "{:<13} {:>6} {:>14} {:>16} {:>9.2}\n",
        "total",
        report.files(),
        report.rows(),
        report.bytes(),
        report.seconds
    );
    out
}
