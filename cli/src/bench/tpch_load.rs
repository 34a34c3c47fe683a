//! `gdscan bench tpch --engine datafusion --streams N --rounds R`: a load
//! (soak) run over gdscan's provider. One session over the `gdscan tpch
//! gen` folder; in each of R rounds, N streams run at once on the
//! DataFusion runtime, each the selected queries once in its own order
//! (stream `i` starts at the `i`-th query, mod their count). After each
//! round: its time, the queries that failed, the process's RSS and what
//! gdscan's process-wide pools hold; every query's row count is checked
//! against what it gave in round 1's first stream. The report is
//! `tpch_load_report`'s.

use std::collections::HashMap;
use std::time::Instant;

use ::datafusion::physical_plan::collect;
use ::datafusion::prelude::SessionContext;

use super::process_memory::rss_bytes;
use super::tpch_load_report::{LoadBenchReport, LoadContext, LoadRound, LoadVerdict, RowMismatch};
use super::tpch_sides::{available_cpus, TpchQueryOptions};
use crate::error::Result;
use crate::tpch::register_tpch;
use gdscan::datafusion::{context, runtime};
use gdscan::decode::scan::memory_held;

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct LoadBenchOptions {
    /// The data, queries, partitions and gdscan's settings (the iterations
    /// and DataFusion's own tables are not used).
    pub common: TpchQueryOptions,
    /// Query streams run at once in each round (at least 1).
    pub streams: usize,
    /// Rounds (at least 1).
    pub rounds: usize,
}

/// What one query of a stream gave: its rows, or its error's text.
type Outcome = std::result::Result<usize, String>;

/// One stream's queries, in the order it ran them, with what each gave.
type StreamRun = Vec<(usize, Outcome)>;

/// The queries in stream `stream`'s order: rotated to start at the
/// `stream`-th, mod their count.
fn stream_order<T: Copy>(queries: &[T], stream: usize) -> Vec<T> {
    let mut order = queries.to_vec();
    if !order.is_empty() {
        order.rotate_left(stream % queries.len());
    }
    order
}

/// Plans and runs `sql` to the end; its rows.
async fn run_query(ctx: &SessionContext, sql: &str) -> Result<usize> {
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let batches = collect(plan, ctx.task_ctx()).await?;
    Ok(batches.iter().map(|b| b.num_rows()).sum())
}

/// Runs `queries` one after the other; a failure is kept and the stream
/// goes on.
async fn run_stream(ctx: SessionContext, queries: Vec<(usize, &'static str)>) -> StreamRun {
    let mut outcomes = Vec::with_capacity(queries.len());
    for (query, sql) in queries {
        let outcome = run_query(&ctx, sql)
            .await
            .map_err(|e| crate::error::chain(&e));
        outcomes.push((query, outcome));
    }
    outcomes
}

/// One round: `streams` streams of `queries` at once, each a task of the
/// current runtime; per stream, what its queries gave. A stream whose task
/// panicked counts every one of its queries as failed.
async fn run_round(
    ctx: &SessionContext,
    queries: &[(usize, &'static str)],
    streams: usize,
) -> Vec<StreamRun> {
    let tasks: Vec<_> = (0..streams)
        .map(|i| {
            let order = stream_order(queries, i);
            tokio::spawn(run_stream(ctx.clone(), order))
        })
        .collect();
    let mut runs = Vec::with_capacity(streams);
    for (i, task) in tasks.into_iter().enumerate() {
        runs.push(task.await.unwrap_or_else(|e| {
            let error = format!("stream {i} stopped: {e}");
            stream_order(queries, i)
                .into_iter()
                .map(|(q, _)| (q, Err(error.clone())))
                .collect()
        }));
    }
    runs
}

/// The rows each query gave in `stream` (the queries that succeeded).
fn reference_rows(stream: &StreamRun) -> HashMap<usize, usize> {
    stream
        .iter()
        .filter_map(|(q, outcome)| outcome.as_ref().ok().map(|&rows| (*q, rows)))
        .collect()
}

/// The queries of `runs` (round `round`) whose rows differ from
/// `expected`'s; a query without an expected count is not checked.
fn row_mismatches(
    round: usize,
    runs: &[StreamRun],
    expected: &HashMap<usize, usize>,
) -> Vec<RowMismatch> {
    let mut out = Vec::new();
    for (stream, run) in runs.iter().enumerate() {
        for (query, outcome) in run {
            if let (Ok(rows), Some(&want)) = (outcome, expected.get(query)) {
                if *rows != want {
                    out.push(RowMismatch {
                        round,
                        stream,
                        query: *query,
                        rows: *rows,
                        expected: want,
                    });
                }
            }
        }
    }
    out
}

/// Round `round`'s line, from its streams' outcomes and its wall seconds;
/// the memory figures are read now, at its end.
fn round_line(round: usize, seconds: f64, runs: &[StreamRun]) -> LoadRound {
    let outcomes = runs.iter().flatten();
    let queries = outcomes.clone().count();
    let mut errors = outcomes.filter_map(|(q, o)| o.as_ref().err().map(|e| (q, e)));
    let first_error = errors.next().map(|(q, e)| format!("q{q}: {e}"));
    let failed = errors.count() + usize::from(first_error.is_some());
    LoadRound {
        round,
        seconds,
        queries,
        failed,
        first_error,
        queries_per_second: queries as f64 / seconds.max(f64::MIN_POSITIVE),
        rss_bytes: rss_bytes(),
        memory: memory_held(),
    }
}

/// Runs the load.
pub(crate) fn run(opts: &LoadBenchOptions) -> Result<LoadBenchReport> {
    let common = &opts.common;
    let queries = common.queries()?;
    let (streams, rounds) = (opts.streams.max(1), opts.rounds.max(1));
    let start_time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let options = common.table_options()?;
    let decode = options.decode.name();
    let ctx = context(common.partitions);
    register_tpch(&ctx, &common.data, options)?;
    let partitions = ctx.state().config().target_partitions();
    let (lines, mismatches) = runtime()?.block_on(async {
        let (mut lines, mut mismatches) = (Vec::new(), Vec::new());
        let mut expected: Option<HashMap<usize, usize>> = None;
        for round in 1..=rounds {
            let start = Instant::now();
            let runs = run_round(&ctx, &queries, streams).await;
            let seconds = start.elapsed().as_secs_f64();
            let expected = expected
                .get_or_insert_with(|| runs.first().map(reference_rows).unwrap_or_default());
            mismatches.extend(row_mismatches(round, &runs, expected));
            lines.push(round_line(round, seconds, &runs));
        }
        (lines, mismatches)
    });
    let verdict = LoadVerdict::new(&lines, mismatches.len());
    Ok(LoadBenchReport {
        context: LoadContext {
            gdscan_version: env!("CARGO_PKG_VERSION"),
            datafusion_version: ::datafusion::DATAFUSION_VERSION,
            start_time,
            num_cpus: available_cpus(),
            partitions,
            streams,
            rounds,
            queries: queries.iter().map(|(q, _)| *q).collect(),
            decode,
            data: common.data.display().to_string(),
        },
        rounds: lines,
        mismatches,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stream_starts_one_query_further() {
        let queries = [1, 6, 14];
        assert_eq!(stream_order(&queries, 0), [1, 6, 14]);
        assert_eq!(stream_order(&queries, 1), [6, 14, 1]);
        assert_eq!(stream_order(&queries, 2), [14, 1, 6]);
        assert_eq!(stream_order(&queries, 4), [6, 14, 1]);
        assert_eq!(stream_order::<usize>(&[], 3), Vec::<usize>::new());
    }

    #[test]
    fn row_counts_are_checked_against_the_reference_stream() {
        let reference: StreamRun = vec![(1, Ok(4)), (6, Ok(1)), (14, Err("x".into()))];
        let expected = reference_rows(&reference);
        assert_eq!(expected, HashMap::from([(1, 4), (6, 1)]));
        let runs = vec![
            reference,
            vec![(6, Ok(2)), (14, Ok(9)), (1, Ok(4))],
            vec![(14, Ok(9)), (1, Err("y".into())), (6, Ok(1))],
        ];
        assert_eq!(
            row_mismatches(2, &runs, &expected),
            [RowMismatch {
                round: 2,
                stream: 1,
                query: 6,
                rows: 2,
                expected: 1
            }]
        );
    }

    #[test]
    fn a_round_counts_its_queries_and_keeps_the_first_failure() {
        let runs = vec![
            vec![(1, Ok(4)), (6, Err("disk gone".into()))],
            vec![(6, Err("again".into())), (1, Ok(4))],
        ];
        let line = round_line(3, 2.0, &runs);
        assert_eq!((line.round, line.queries, line.failed), (3, 4, 2));
        assert_eq!(line.first_error.as_deref(), Some("q6: disk gone"));
        assert_eq!(line.queries_per_second, 2.0);
        let clean = round_line(1, 1.0, &runs[..0]);
        assert_eq!(
            (clean.queries, clean.failed, clean.first_error),
            (0, 0, None)
        );
    }
}
