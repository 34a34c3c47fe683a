//! The benchmarks' error: queries and data they do not have, and the local
//! cluster they start.

/// A benchmark that cannot run as asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// `bench tpch` with a query case it does not know.
    #[error("<bench tpch>: unknown query {0:?}: expected scan, q1, q6, q14 or q19")]
    UnknownCase(String),

    /// `bench tpch --engine datafusion` with a query number out of range.
    #[error("<bench tpch>: unknown TPC-H query {0}: expected 1 to {max}", max = crate::tpch::TPCH_QUERY_COUNT)]
    UnknownQuery(usize),

    /// `bench tpch --engine datafusion --streams`: queries failed or gave
    /// other row counts than in round 1 (the report says which).
    #[error("<bench tpch --streams>: {failed} queries failed and {mismatches} row counts differed from round 1's{}", first_error.as_deref().map(|e| format!("; first failure: {e}")).unwrap_or_default())]
    LoadFailed {
        /// Queries that failed, over every round.
        failed: usize,
        /// Row counts that differed from round 1's first stream's.
        mismatches: usize,
        /// The first failure's error, if any.
        first_error: Option<String>,
    },

    /// `bench tpch --decode` into host memory.
    #[error("<bench tpch>: --decode decodes on the GPU: give --device or --devices, not --host")]
    DecodeNeedsGpu,

    /// `bench tpch --engine ballista`: the local cluster failed to start.
    #[error("<bench tpch --engine ballista>: the local cluster failed to start: {0}")]
    Cluster(#[source] LocalClusterError),

    /// `bench decode`: a case's columns are outside the GPU decoder's
    /// coverage (the nested case's LIST and STRUCT columns, until the
    /// decoder decodes them); found before any read of the decode.
    #[error("<bench decode>: case {case}: the GPU decoder cannot decode this case's columns yet")]
    DecodeUnsupported {
        /// The case (`nested`, ...).
        case: String,
        /// The decoder's refusal, naming the file and the column.
        #[source]
        source: Box<gdscan::decode::scan::DecodeError>,
    },

    /// A table folder without Parquet files.
    #[error("{0}: no .parquet files (generate them with `gdscan tpch gen`)")]
    NoData(String),
}

/// Why the scheduler and executors of `bench tpch --engine ballista` did
/// not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalClusterError {
    /// No free loopback port could be found.
    #[error("no free loopback port: {0}")]
    Port(#[source] std::io::Error),

    /// The running binary's path (the cluster runs `gdscan ballista`).
    #[error("cannot find the gdscan binary: {0}")]
    Binary(#[source] std::io::Error),

    /// A scheduler or executor process could not be started.
    #[error("cannot start a cluster process: {0}")]
    Spawn(#[source] std::io::Error),

    /// A scheduler or executor exited before it listened.
    #[error("a cluster process exited ({0})")]
    Exited(std::process::ExitStatus),

    /// Nothing listened on a cluster port within the deadline.
    #[error("nothing listens on port {port} after {seconds} s")]
    NotListening {
        /// The loopback port.
        port: u16,
        /// How long the benchmark waited.
        seconds: u64,
    },

    /// The tokio runtime of the cluster's client could not start.
    #[error("cannot start the tokio runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

impl From<LocalClusterError> for crate::Error {
    fn from(e: LocalClusterError) -> Self {
        BenchError::Cluster(e).into()
    }
}
