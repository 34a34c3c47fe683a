//! `gdscan sql`: one SQL statement over tables read through gdscan.

use std::path::PathBuf;

use ::datafusion::prelude::SessionContext;
use clap::Args;

use super::args::EngineArgs;
use super::error::CliError;
use super::sql_stats::render_stats;
use crate::error::Result;
use crate::tpch::{register_tpch, register_tpch_listing};
use ::datafusion::physical_plan::collect;
use gdscan::datafusion::{
    context, format_batches, register_parquet, runtime, scan_totals, GdsTableOptions, OutputFormat,
    TableDecode,
};
use gdscan::engine::Engine;

/// Arguments of `gdscan sql`.
#[derive(Debug, Args)]
pub struct SqlArgs {
    /// A `gdscan tpch gen` folder: its eight tables are registered by name.
    #[arg(long)]
    pub tpch: Option<PathBuf>,
    /// A table, NAME=PATH (a Parquet file, or a folder of them); repeatable.
    #[arg(long = "table", value_name = "NAME=PATH")]
    pub tables: Vec<String>,
    /// Output: table, csv (with a header line) or json (an array of objects).
    #[arg(long, default_value = "table")]
    pub format: OutputFormat,
    /// Who reads the files: gdscan (its table provider) or datafusion
    /// (DataFusion's own `ListingTable`, for comparison).
    #[arg(long, value_enum, default_value = "gdscan")]
    pub reader: Reader,
    /// Run on a Ballista cluster: its scheduler, HOST:PORT, or `standalone`
    /// (a scheduler and an executor in this process); the tables are read
    /// through gdscan on the executors (`--reader gdscan` only).
    #[cfg(feature = "ballista")]
    #[arg(long, value_name = "HOST:PORT")]
    pub ballista: Option<String>,
    /// DataFusion's target partitions (default: the available CPUs).
    #[arg(long)]
    pub partitions: Option<usize>,
    /// Fail with an error when the statement has not finished after this
    /// many seconds (a Ballista cluster that lost an executor mid-query
    /// may not answer at all).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Where gdscan's provider decodes pages: cpu (arrow-rs), gpu
    /// (gdscan's GPU decoder; a file it cannot take, or no usable GPU,
    /// falls back to the CPU and says why) or auto (the GPU when usable).
    /// Default: GDSCAN_DATAFUSION_DECODE, else cpu.
    #[arg(long, value_name = "cpu|gpu|auto")]
    pub decode: Option<TableDecode>,
    /// Print what gdscan's scans did on standard error: bytes, reads and,
    /// with --decode gpu or auto, where each file was decoded and why.
    #[arg(long)]
    pub stats: bool,
    /// Engine settings.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// The statement, e.g. "SELECT count(*) FROM lineitem".
    pub sql: String,
}

/// Who reads the tables' files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Reader {
    /// gdscan's table provider (the engine's reads, gdscan's metrics).
    Gdscan,
    /// DataFusion's own Parquet tables (`ListingTable`), the baseline.
    Datafusion,
}

/// Splits `NAME=PATH`.
fn table_arg(arg: &str) -> Result<(&str, &str)> {
    match arg.split_once('=') {
        Some((name, path)) if !name.trim().is_empty() && !path.is_empty() => {
            Ok((name.trim(), path))
        }
        _ => Err(CliError::BadTable(arg.to_string()).into()),
    }
}

/// The session: single node, or a Ballista cluster's client.
fn session(args: &SqlArgs, rt: &tokio::runtime::Runtime) -> Result<SessionContext> {
    #[cfg(feature = "ballista")]
    if let Some(scheduler) = &args.ballista {
        if args.reader != Reader::Gdscan {
            return Err(CliError::BallistaReader.into());
        }
        let ctx = rt.block_on(async {
            match scheduler.as_str() {
                "standalone" => gdscan::ballista::standalone(args.partitions).await,
                _ => gdscan::ballista::remote(scheduler, args.partitions).await,
            }
        })?;
        return Ok(ctx);
    }
    let _ = rt;
    Ok(context(args.partitions))
}

/// Registers the tables, runs the statement, returns its result as text.
pub(super) fn run(args: &SqlArgs) -> Result<String> {
    let defaults = GdsTableOptions::from_env()?;
    let options = GdsTableOptions {
        engine: Some(Engine::new(args.engine.settings()?)?),
        task_size: args.engine.table_task_size()?,
        decode: args.decode.unwrap_or(defaults.decode),
        ..defaults
    };
    #[cfg(feature = "ballista")]
    let rt = match &args.ballista {
        Some(_) => gdscan::ballista::runtime()
            .map_err(|e| crate::Error::io("<tokio runtime>", "start", e))?,
        None => runtime()?,
    };
    #[cfg(not(feature = "ballista"))]
    let rt = runtime()?;
    let ctx = session(args, &rt)?;
    let tables = args
        .tables
        .iter()
        .map(|a| table_arg(a))
        .collect::<Result<Vec<_>>>()?;
    if args.reader == Reader::Gdscan {
        if let Some(dir) = &args.tpch {
            register_tpch(&ctx, dir, options.clone())?;
        }
        for (name, path) in &tables {
            register_parquet(&ctx, name, path, options.clone())?;
        }
    }
    rt.block_on(async {
        if args.reader == Reader::Datafusion {
            if let Some(dir) = &args.tpch {
                register_tpch_listing(&ctx, dir).await?;
            }
            for (name, path) in &tables {
                ctx.register_parquet(*name, *path, Default::default())
                    .await?;
            }
        }
        let query = async {
            let df = ctx.sql(&args.sql).await?;
            let schema = df.schema().inner().clone();
            let plan = df.create_physical_plan().await?;
            let batches = collect(plan.clone(), ctx.task_ctx()).await?;
            if args.stats {
                eprint!("{}", render_stats(&scan_totals(plan.as_ref())));
            }
            format_batches(&schema, &batches, args.format)
        };
        match args.timeout {
            None => Ok(query.await?),
            Some(seconds) => {
                let limit = std::time::Duration::from_secs(seconds);
                let start = std::time::Instant::now();
                let answer = tokio::time::timeout(limit, query)
                    .await
                    .map_err(|_| CliError::Timeout(seconds))??;
                // The timer lets a statement that finishes on its first
                // poll through, however long that took; one that ended at
                // or past the limit did not finish within it (with 0 s,
                // none does).
                if start.elapsed() >= limit {
                    return Err(CliError::Timeout(seconds).into());
                }
                Ok(answer)
            }
        }
    })
}
