//! The command line's error: argument values that clap cannot check.

/// A usage error of a command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// `gdscan sql --table` without `NAME=PATH`.
    #[error("{0}: --table expects NAME=PATH")]
    BadTable(String),

    /// `gdscan bench tpch --engine datafusion` from a build without it.
    #[error("<bench tpch>: --engine datafusion needs gdscan built with the `datafusion` feature")]
    NoDataFusion,

    /// `gdscan bench store --case` with a case it does not know.
    #[error("{url}: unknown case {name:?}: expected all, q1, q6, q14 or q19")]
    UnknownCase {
        /// The store URL of the benchmark.
        url: String,
        /// The case asked for.
        name: String,
    },
}
