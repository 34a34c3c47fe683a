//! The command line's error: the library's [`gdscan::Error`], a benchmark
//! that cannot run as asked ([`BenchError`]) or a usage error
//! ([`CliError`]), each kept whole as the source of the one above it.

use gdscan::engine::IoError;
use gdscan::parquet::ScanError;

pub use crate::bench::BenchError;
pub use crate::commands::CliError;

/// Result alias used across the command line.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can stop a command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The library: a setting, the driver, a read, a store, a file, the
    /// decoder, a query.
    #[error(transparent)]
    Gdscan(#[from] gdscan::Error),

    /// The benchmarks: a query, the data they need, or the cluster they
    /// start.
    #[error(transparent)]
    Bench(#[from] BenchError),

    /// The command line: an argument value that names nothing.
    #[error(transparent)]
    Cli(#[from] CliError),
}

/// The library's layer errors reach a command through [`gdscan::Error`].
macro_rules! through_library_error {
    ($($(#[$attr:meta])* $source:ty),* $(,)?) => {
        $(
            $(#[$attr])*
            impl From<$source> for Error {
                fn from(e: $source) -> Self {
                    Error::Gdscan(e.into())
                }
            }
        )*
    };
}

through_library_error!(
    gdscan::config::ConfigError,
    gdscan::cuda::CudaError,
    gdscan::cufile::CuFileError,
    IoError,
    gdscan::store::StoreError,
    ScanError,
    #[cfg(feature = "datafusion")]
    gdscan::datafusion::SqlError,
    #[cfg(feature = "datafusion")]
    ::datafusion::error::DataFusionError,
    #[cfg(feature = "ballista")]
    gdscan::ballista::ClusterError,
);

impl Error {
    /// An [`IoError::Os`] for `op` on `path`.
    pub fn io(path: &str, op: &'static str, source: std::io::Error) -> Self {
        gdscan::Error::from(IoError::Os {
            path: path.to_string(),
            op,
            source,
        })
        .into()
    }

    /// An `open(2)` failure of `path`, as the most specific [`IoError`].
    pub fn from_open(path: &str, source: std::io::Error) -> Self {
        let path = path.to_string();
        let e = match source.kind() {
            std::io::ErrorKind::NotFound => IoError::NotFound { path },
            std::io::ErrorKind::PermissionDenied => IoError::PermissionDenied { path },
            _ if source.raw_os_error() == Some(libc::EISDIR) => IoError::IsDirectory { path },
            _ => IoError::Os {
                path,
                op: "open",
                source,
            },
        };
        gdscan::Error::from(e).into()
    }

    /// A parquet crate error for `path`, unwrapping one of gdscan's that
    /// travelled through the parquet crate (a failed write, a short read).
    pub fn from_parquet(path: &str, source: ::parquet::errors::ParquetError) -> Self {
        use ::parquet::errors::ParquetError;
        let format = |source| ScanError::Format {
            path: path.to_string(),
            source,
        };
        match source {
            ParquetError::External(inner) => match inner.downcast::<gdscan::Error>() {
                Ok(ours) => Error::Gdscan(*ours),
                Err(other) => format(ParquetError::External(other)).into(),
            },
            other => format(other).into(),
        }
    }

    /// A GPU decoder error.
    pub fn decode(e: gdscan::decode::scan::DecodeError) -> Self {
        Error::Gdscan(gdscan::Error::decode(e))
    }
}

/// `e` and its causes, joined by ": ", each cause once: a cause whose text
/// is already shown is not repeated (the library's printer).
pub use gdscan::error::chain;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_shows_each_cause_once() {
        let e = Error::io("f", "pread", std::io::Error::other("disk gone"));
        assert_eq!(chain(&e).matches("disk gone").count(), 1, "{}", chain(&e));

        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] std::io::Error);
        let e = Outer(std::io::Error::other("inner"));
        assert_eq!(chain(&e), "outer: inner");
    }
}
