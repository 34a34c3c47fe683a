//! The report of `gdscan bench tpch --engine datafusion --streams N`: one
//! line per round (time, queries, failures, the process's RSS and what
//! gdscan's pools hold at its end), the row counts that differed from
//! round 1's, and the verdict: failures, mismatches and the growth of
//! memory from the end of round 1 to the end of the last round.

use serde::Serialize;

use gdscan::decode::scan::MemoryHeld;

/// The run's context.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LoadContext {
    /// gdscan's version.
    pub gdscan_version: &'static str,
    /// DataFusion's version.
    pub datafusion_version: &'static str,
    /// Seconds since the Unix epoch at the start.
    pub start_time: u64,
    /// CPUs available.
    pub num_cpus: usize,
    /// Target partitions of the session.
    pub partitions: usize,
    /// Query streams run at once in each round.
    pub streams: usize,
    /// Rounds run.
    pub rounds: usize,
    /// The queries each stream runs (stream `i` starts at the `i`-th, mod
    /// their count).
    pub queries: Vec<usize>,
    /// Where gdscan's provider decodes pages: cpu, gpu or auto.
    pub decode: &'static str,
    /// The data folder.
    pub data: String,
}

/// One round: every stream's queries, run at once.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LoadRound {
    /// The round, from 1.
    pub round: usize,
    /// Wall seconds from the first stream's start to the last one's end.
    pub seconds: f64,
    /// Queries run (streams × queries).
    pub queries: usize,
    /// Queries that failed.
    pub failed: usize,
    /// The first failure's error, if any.
    pub first_error: Option<String>,
    /// Queries finished per second of the round.
    pub queries_per_second: f64,
    /// The process's resident bytes at the round's end (None where
    /// `/proc/self/statm` cannot be read).
    pub rss_bytes: Option<u64>,
    /// What gdscan's process-wide pools hold at the round's end.
    pub memory: MemoryHeld,
}

/// A query whose row count differed from round 1's first stream's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RowMismatch {
    /// The round, from 1.
    pub round: usize,
    /// The stream, from 0.
    pub stream: usize,
    /// The query number.
    pub query: usize,
    /// Rows it gave.
    pub rows: usize,
    /// Rows it gave in round 1's first stream.
    pub expected: usize,
}

/// What the rounds show.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LoadVerdict {
    /// Queries run in all rounds.
    pub total_queries: usize,
    /// Queries that failed.
    pub failures: usize,
    /// Row counts that differed from round 1's.
    pub row_mismatches: usize,
    /// RSS at the last round's end less RSS at round 1's end (None when
    /// unknown).
    pub rss_growth_bytes: Option<i64>,
    /// The same of the device memory gdscan's pools hand out.
    pub device_in_use_growth_bytes: i64,
    /// The same of the pinned memory gdscan's pools hand out.
    pub pinned_in_use_growth_bytes: i64,
    /// Device memory handed out at the last round's end (0 when nothing
    /// holds a batch: more is memory a finished query kept).
    pub device_in_use_end_bytes: u64,
    /// Pinned memory handed out at the last round's end (0 likewise).
    pub pinned_in_use_end_bytes: u64,
    /// No query failed and every row count matched.
    pub passed: bool,
}

impl LoadVerdict {
    /// The verdict of `rounds` (in order) with `mismatches`.
    pub(crate) fn new(rounds: &[LoadRound], mismatches: usize) -> LoadVerdict {
        let failures = rounds.iter().map(|r| r.failed).sum();
        let (first, last) = (rounds.first(), rounds.last());
        let end = last.map(|r| r.memory).unwrap_or_default();
        let start = first.map(|r| r.memory).unwrap_or_default();
        let rss_growth_bytes = match (first, last) {
            (Some(f), Some(l)) => match (f.rss_bytes, l.rss_bytes) {
                (Some(a), Some(b)) => Some(growth(a, b)),
                _ => None,
            },
            _ => None,
        };
        LoadVerdict {
            total_queries: rounds.iter().map(|r| r.queries).sum(),
            failures,
            row_mismatches: mismatches,
            rss_growth_bytes,
            device_in_use_growth_bytes: growth(start.device_in_use_bytes, end.device_in_use_bytes),
            pinned_in_use_growth_bytes: growth(start.pinned_in_use_bytes, end.pinned_in_use_bytes),
            device_in_use_end_bytes: end.device_in_use_bytes,
            pinned_in_use_end_bytes: end.pinned_in_use_bytes,
            passed: failures == 0 && mismatches == 0,
        }
    }
}

/// `to - from` as a signed count (saturating).
fn growth(from: u64, to: u64) -> i64 {
    if to >= from {
        i64::try_from(to - from).unwrap_or(i64::MAX)
    } else {
        i64::try_from(from - to).map_or(i64::MIN, |d| -d)
    }
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LoadBenchReport {
    /// Context.
    pub context: LoadContext,
    /// Per round, in order.
    pub rounds: Vec<LoadRound>,
    /// Row counts that differed from round 1's first stream's.
    pub mismatches: Vec<RowMismatch>,
    /// What the rounds show.
    pub verdict: LoadVerdict,
}

/// Bytes as MiB.
fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

/// Signed bytes as MiB.
fn signed_mib(bytes: i64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

/// The report as a table and the verdict.
pub(crate) fn render(r: &LoadBenchReport) -> String {
    let c = &r.context;
    let mut out = format!(
        "gdscan bench tpch --engine datafusion --streams {} --rounds {}: {} ({} partitions, decode {}, queries {:?})\n\
         memory = the process's RSS and gdscan's pools (device, pinned: in use / cached) at each round's end\n\
         {:<6} {:>9} {:>8} {:>7} {:>10} {:>10} {:>14} {:>14} {:>14} {:>14}\n",
        c.streams,
        c.rounds,
        c.data,
        c.partitions,
        c.decode,
        c.queries,
        "round",
        "seconds",
        "queries",
        "failed",
        "queries/s",
        "RSS MiB",
        "dev used MiB",
        "dev cached MiB",
        "pin used MiB",
        "pin cached MiB"
    );
    for round in &r.rounds {
        let m = &round.memory;
        out += &format!(
            "{:<6} {:>9.3} {:>8} {:>7} {:>10.2} {:>10} {:>14.1} {:>14.1} {:>14.1} {:>14.1}\n",
            round.round,
            round.seconds,
            round.queries,
            round.failed,
            round.queries_per_second,
            round
                .rss_bytes
                .map(|b| format!("{:.1}", mib(b)))
                .unwrap_or_else(|| "?".into()),
            mib(m.device_in_use_bytes),
            mib(m.device_cached_bytes),
            mib(m.pinned_in_use_bytes),
            mib(m.pinned_cached_bytes),
        );
        if let Some(e) = &round.first_error {
            out += &format!("       first failure: {e}\n");
        }
    }
    for m in &r.mismatches {
        out += &format!(
            "row count differs: round {} stream {} q{}: {} rows, round 1 gave {}\n",
            m.round, m.stream, m.query, m.rows, m.expected
        );
    }
    out + &render_verdict(&r.verdict)
}

/// The verdict section.
fn render_verdict(v: &LoadVerdict) -> String {
    format!(
        "verdict: {} — {} queries, {} failed, {} row counts differed from round 1's\n\
         growth from the end of round 1 to the end of the last round: RSS {}, device in use {:+.1} MiB, pinned in use {:+.1} MiB\n\
         in use at the last round's end (0 when no query runs): device {:.1} MiB, pinned {:.1} MiB\n",
        if v.passed { "passed" } else { "FAILED" },
        v.total_queries,
        v.failures,
        v.row_mismatches,
        v.rss_growth_bytes
            .map(|b| format!("{:+.1} MiB", signed_mib(b)))
            .unwrap_or_else(|| "unknown".into()),
        signed_mib(v.device_in_use_growth_bytes),
        signed_mib(v.pinned_in_use_growth_bytes),
        mib(v.device_in_use_end_bytes),
        mib(v.pinned_in_use_end_bytes),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(round: usize, failed: usize, rss: Option<u64>, device_in_use: u64) -> LoadRound {
        LoadRound {
            round,
            seconds: 1.0,
            queries: 4,
            failed,
            first_error: (failed > 0).then(|| "boom".to_string()),
            queries_per_second: 4.0,
            rss_bytes: rss,
            memory: MemoryHeld {
                device_in_use_bytes: device_in_use,
                ..MemoryHeld::default()
            },
        }
    }

    #[test]
    fn growth_is_signed_and_saturates() {
        assert_eq!(growth(10, 25), 15);
        assert_eq!(growth(25, 10), -15);
        assert_eq!(growth(0, u64::MAX), i64::MAX);
        assert_eq!(growth(u64::MAX, 0), i64::MIN);
    }

    #[test]
    fn the_verdict_sums_the_rounds_and_measures_from_the_end_of_round_one() {
        let rounds = [
            round(1, 0, Some(100 << 20), 0),
            round(2, 0, Some(90 << 20), 0),
            round(3, 0, Some(130 << 20), 2 << 20),
        ];
        let v = LoadVerdict::new(&rounds, 0);
        assert_eq!((v.total_queries, v.failures, v.row_mismatches), (12, 0, 0));
        assert_eq!(v.rss_growth_bytes, Some(30 << 20));
        assert_eq!(v.device_in_use_growth_bytes, 2 << 20);
        assert_eq!(v.device_in_use_end_bytes, 2 << 20);
        assert_eq!(v.pinned_in_use_growth_bytes, 0);
        assert!(v.passed, "memory growth alone does not fail the run");
    }

    #[test]
    fn a_failure_or_a_mismatch_fails_the_verdict() {
        let failed = LoadVerdict::new(&[round(1, 0, None, 0), round(2, 1, None, 0)], 0);
        assert_eq!(failed.failures, 1);
        assert_eq!(failed.rss_growth_bytes, None);
        assert!(!failed.passed);
        let mismatched = LoadVerdict::new(&[round(1, 0, None, 0)], 1);
        assert!(!mismatched.passed);
        let rendered = render_verdict(&mismatched);
        assert!(rendered.starts_with("verdict: FAILED"), "{rendered}");
        assert!(rendered.contains("RSS unknown"), "{rendered}");
    }
}
