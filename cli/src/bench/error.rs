//! The benchmarks' error: queries and data they do not have.

/// A benchmark that cannot run as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// `bench tpch` with a query case it does not know.
    #[error("<bench tpch>: unknown query {0:?}: expected scan, q1, q6, q14 or q19")]
    UnknownCase(String),

    /// `bench tpch --engine datafusion` with a query number out of range.
    #[error("<bench tpch>: unknown TPC-H query {0}: expected 1 to {max}", max = crate::tpch::TPCH_QUERY_COUNT)]
    UnknownQuery(usize),

    /// `bench tpch --decode` into host memory.
    #[error("<bench tpch>: --decode decodes on the GPU: give --device or --devices, not --host")]
    DecodeNeedsGpu,
    /// `bench tpch --engine ballista`: the local cluster failed to start.
    #[error("<bench tpch --engine ballista>: {0}")]
    Cluster(String),

    /// A table folder without Parquet files.
    #[error("{0}: no .parquet files (generate them with `gdscan tpch gen`)")]
    NoData(String),
}
