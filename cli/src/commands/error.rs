//! The command line's error: argument values that clap cannot check.

/// A usage error of a command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// `gdscan sql --timeout`: the statement did not finish in time.
    #[error("<sql>: the statement did not finish within {0} s (--timeout); on a Ballista cluster an executor may have been lost")]
    Timeout(u64),

    /// `gdscan sql --table` without `NAME=PATH`.
    #[error("{0}: --table expects NAME=PATH")]
    BadTable(String),

    /// `gdscan bench tpch --engine datafusion` from a build without it.
    #[error("<bench tpch>: --engine datafusion needs gdscan built with the `datafusion` feature")]
    NoDataFusion,

    /// `gdscan bench tpch --streams` with an engine other than DataFusion
    /// (the load runs the SQL queries).
    #[error("<bench tpch>: --streams runs the TPC-H queries through DataFusion: give --engine datafusion, not --engine {0}")]
    StreamsNeedDataFusion(&'static str),

    /// `gdscan sql --ballista` with `--reader datafusion` (the cluster's
    /// executors read through gdscan).
    #[error("<sql>: --ballista reads through gdscan only (leave out --reader datafusion)")]
    BallistaReader,

    /// `gdscan bench tpch --engine ballista` from a build without it.
    #[error("<bench tpch>: --engine ballista needs gdscan built with the `ballista` feature")]
    NoBallista,

    /// `gdscan bench store --case` with a case it does not know.
    #[error("{url}: unknown case {name:?}: expected all, q1, q6, q14 or q19")]
    UnknownCase {
        /// The store URL of the benchmark.
        url: String,
        /// The case asked for.
        name: String,
    },
}
