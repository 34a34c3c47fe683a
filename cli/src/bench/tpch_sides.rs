//! The setup that the TPC-H query benchmarks over DataFusion share
//! (`bench tpch --engine datafusion` and `--engine ballista`): what to run,
//! the queries' SQL, gdscan's table options, the two single-node sessions
//! over one `gdscan tpch gen` folder (DataFusion over gdscan's provider and
//! over its own `ListingTable`s) and the median of a side's timings.

use std::path::{Path, PathBuf};

use ::datafusion::prelude::SessionContext;

use super::error::BenchError;
use crate::error::Result;
use crate::tpch::{register_tpch, register_tpch_listing, tpch_query, TPCH_QUERY_COUNT};
use gdscan::config::Settings;
use gdscan::datafusion::{context, GdsTableOptions, TableDecode};
use gdscan::engine::Engine;

/// What both front-ends run.
#[derive(Debug, Clone)]
pub(crate) struct TpchQueryOptions {
    /// A `gdscan tpch gen` folder.
    pub data: PathBuf,
    /// Query numbers, 1 to 22 (empty: all).
    pub queries: Vec<usize>,
    /// Timed iterations per query and side, after one warm-up each.
    pub iterations: usize,
    /// Target partitions of every session (None: the available CPUs).
    pub partitions: Option<usize>,
    /// Settings of gdscan's engine (this process's; Ballista's executors
    /// take theirs from the environment).
    pub settings: Settings,
    /// Task size of the provider's local reads (see
    /// [`GdsTableOptions::task_size`]).
    pub task_size: Option<usize>,
    /// Where the provider decodes pages (None: `GDSCAN_DATAFUSION_DECODE`,
    /// else the CPU).
    pub decode: Option<TableDecode>,
    /// DataFusion's own tables read with its row filters on
    /// (`pushdown_filters` and `reorder_filters`), instead of its defaults:
    /// its reader at the other setting, to take the better of the two.
    pub listing_pushdown: bool,
}

impl TpchQueryOptions {
    /// The queries asked for (all 22 when none), each with its SQL; an
    /// unknown number is an error before anything runs.
    pub(crate) fn queries(&self) -> Result<Vec<(usize, &'static str)>> {
        let numbers: Vec<usize> = if self.queries.is_empty() {
            (1..=TPCH_QUERY_COUNT).collect()
        } else {
            self.queries.clone()
        };
        numbers
            .into_iter()
            .map(|q| {
                tpch_query(q)
                    .map(|sql| (q, sql))
                    .ok_or_else(|| BenchError::UnknownQuery(q).into())
            })
            .collect()
    }

    /// gdscan's table options: an engine with these settings and the task
    /// size, the rest from the environment.
    pub(crate) fn table_options(&self) -> Result<GdsTableOptions> {
        let defaults = GdsTableOptions::from_env()?;
        Ok(GdsTableOptions {
            engine: Some(Engine::new(self.settings.clone())?),
            task_size: self.task_size,
            decode: self.decode.unwrap_or(defaults.decode),
            ..defaults
        })
    }
}

/// The two single-node sessions over the same folder.
pub(crate) struct SingleNode {
    /// DataFusion over gdscan's provider.
    pub gds: SessionContext,
    /// DataFusion over its own `ListingTable`s (registered by
    /// [`SingleNode::register_listing`]).
    pub listing: SessionContext,
    /// The sessions' target partitions.
    pub partitions: usize,
}

impl SingleNode {
    /// Both sessions at `opts.partitions`, the tables of `opts.data`
    /// registered on gdscan's provider with `options`.
    pub(crate) fn new(opts: &TpchQueryOptions, options: GdsTableOptions) -> Result<Self> {
        let gds = context(opts.partitions);
        register_tpch(&gds, &opts.data, options)?;
        let listing = listing_context(opts.partitions, opts.listing_pushdown);
        let partitions = gds.state().config().target_partitions();
        Ok(Self {
            gds,
            listing,
            partitions,
        })
    }

    /// Registers the tables of `data` as DataFusion's `ListingTable`s (in
    /// the caller's runtime).
    pub(crate) async fn register_listing(&self, data: &Path) -> Result<()> {
        register_tpch_listing(&self.listing, data).await
    }
}

/// The session of DataFusion's own tables: `partitions` as [`context`];
/// with `pushdown`, its reader applies the filters as row filters
/// (`pushdown_filters`, `reorder_filters`).
fn listing_context(partitions: Option<usize>, pushdown: bool) -> SessionContext {
    let listing = context(partitions);
    if pushdown {
        let state = listing.state_ref();
        let mut state = state.write();
        let parquet = &mut state.config_mut().options_mut().execution.parquet;
        parquet.pushdown_filters = true;
        parquet.reorder_filters = true;
    }
    listing
}

/// The median of a side's timings (the mean of the middle two for an even
/// count, 0 for none).
pub(crate) fn median(times: &[f64]) -> f64 {
    let mut t = times.to_vec();
    t.sort_by(|a, b| a.total_cmp(b));
    match t.len() {
        0 => 0.0,
        n if n % 2 == 1 => t[n / 2],
        n => (t[n / 2 - 1] + t[n / 2]) / 2.0,
    }
}

/// The CPUs this process may use (1 when unknown).
pub(crate) fn available_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(queries: Vec<usize>) -> TpchQueryOptions {
        TpchQueryOptions {
            data: PathBuf::from("unused"),
            queries,
            iterations: 1,
            partitions: None,
            settings: Settings::default(),
            task_size: None,
            decode: None,
            listing_pushdown: false,
        }
    }

    #[test]
    fn the_listing_session_takes_row_filters_only_when_asked() {
        for pushdown in [false, true] {
            let ctx = listing_context(Some(3), pushdown);
            let state = ctx.state();
            let parquet = &state.config().options().execution.parquet;
            assert_eq!(
                (parquet.pushdown_filters, parquet.reorder_filters),
                (pushdown, pushdown)
            );
            assert_eq!(state.config().target_partitions(), 3);
        }
    }

    #[test]
    fn queries_default_to_all_and_refuse_unknown_numbers() {
        let all = options(Vec::new()).queries().unwrap();
        assert_eq!(
            all.iter().map(|(q, _)| *q).collect::<Vec<_>>(),
            (1..=22).collect::<Vec<_>>()
        );
        assert_eq!(all[5].1, tpch_query(6).unwrap());
        let some = options(vec![3, 1]).queries().unwrap();
        assert_eq!(some.iter().map(|(q, _)| *q).collect::<Vec<_>>(), [3, 1]);
        assert!(options(vec![1, 23]).queries().is_err());
        assert!(options(vec![0]).queries().is_err());
    }

    #[test]
    fn median_takes_the_middle_or_the_mean_of_the_middle_two() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
