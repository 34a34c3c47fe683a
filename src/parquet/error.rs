//! The Parquet layer's error: a file that cannot be read as Parquet, a scan
//! that does not fit it, or a decode step that failed, each naming the file.

use super::plan_error::PlanError;
use super::predicate::PredicateError;

/// A Parquet failure for one file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// The Parquet data is invalid, truncated or unsupported.
    #[error("{path}: {source}")]
    Format {
        /// The file.
        path: String,
        /// The parquet crate's error.
        #[source]
        source: ::parquet::errors::ParquetError,
    },

    /// The scan request does not fit the file (unknown column or row
    /// group, a filter on a column it cannot compare).
    #[error("{path}: {source}")]
    Plan {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: PlanError,
    },

    /// The filter's text does not parse, or it does not fit the file.
    #[error("{path}: {source}")]
    Filter {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: PredicateError,
    },

    /// Decoded batches could not be filtered or projected.
    #[error("{path}: {source}")]
    Arrow {
        /// The file.
        path: String,
        /// arrow-rs's error.
        #[source]
        source: arrow::error::ArrowError,
    },

    /// arrow-rs (the CPU decode) refused a DELTA_BINARY_PACKED page whose
    /// deltas do not fit its 32-bit type ("'min_delta' too large"): the
    /// format lets deltas and sums wrap, and DuckDB writes such INT32 pages
    /// for columns spanning the whole range. The GPU decoder reads them.
    #[error("{path}: a DELTA_BINARY_PACKED page holds deltas wider than its 32-bit type, which the format allows (DuckDB writes them) but arrow-rs, the CPU decoder, refuses; decode the file on the GPU instead (`gdscan scan FILE --decode`, `read_parquet(device=0)`)")]
    WideDeltas {
        /// The file.
        path: String,
        /// arrow-rs's error (an `ArrowError` or a `ParquetError`).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The store could not open or read the file's bytes (boxed: a
    /// store error is large, and the crate's error holds this one inline).
    #[error(transparent)]
    Store(Box<crate::store::StoreError>),

    /// The engine could not read or write a local file.
    #[error(transparent)]
    Io(#[from] crate::engine::IoError),

    /// A CUDA call failed (device memory for fetched bytes).
    #[error(transparent)]
    Cuda(#[from] crate::cuda::CudaError),

    /// A fetch was given no allocator to land its row groups in.
    #[error("a fetch needs at least one allocator (one per GPU)")]
    NoAllocator,

    /// A setting the scan read is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
}

/// Result of the Parquet layer.
pub(crate) type Result<T, E = ScanError> = std::result::Result<T, E>;

impl From<crate::store::StoreError> for ScanError {
    fn from(e: crate::store::StoreError) -> Self {
        ScanError::Store(Box::new(e))
    }
}

impl ScanError {
    /// The CUDA failure behind this error, if a CUDA call failed (device
    /// memory for fetched bytes, a copy into it): a fetch that ran out of
    /// device memory gives `Some(CudaError::OutOfMemory { .. })`.
    pub fn cuda(&self) -> Option<&crate::cuda::CudaError> {
        match self {
            ScanError::Cuda(e) => Some(e),
            ScanError::Io(e) => e.cuda(),
            ScanError::Store(e) => e.cuda(),
            _ => None,
        }
    }

    /// `source` explained as [`ScanError::WideDeltas`] for `path` when it
    /// is arrow-rs's refusal of wide DELTA_BINARY_PACKED deltas, wherever it
    /// travelled (an `ArrowError`, a `ParquetError`, a DataFusion error
    /// around them: its sources are searched), kept as the source; else
    /// `source` back. Every door that decodes on the CPU (the host scan,
    /// DataFusion's scan, Python's `device=None`) says the same through it.
    pub fn wide_deltas<E>(path: &str, source: E) -> std::result::Result<ScanError, E>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        if refuses_wide_deltas(&source) {
            Ok(ScanError::WideDeltas {
                path: path.to_string(),
                source: Box::new(source),
            })
        } else {
            Err(source)
        }
    }

    /// A decode error of arrow-rs's for `path`: [`ScanError::WideDeltas`]
    /// where arrow-rs refused wrapping deltas, else [`ScanError::Arrow`].
    pub(crate) fn from_arrow(path: &str, source: arrow::error::ArrowError) -> Self {
        ScanError::wide_deltas(path, source).unwrap_or_else(|source| ScanError::Arrow {
            path: path.to_string(),
            source,
        })
    }

    /// Wraps a parquet crate error for `path`, unwrapping an error of ours
    /// that travelled through the parquet crate (e.g. a short read).
    pub(crate) fn from_parquet(path: &str, source: ::parquet::errors::ParquetError) -> Self {
        use ::parquet::errors::ParquetError;
        let source = match ScanError::wide_deltas(path, source) {
            Ok(explained) => return explained,
            Err(source) => source,
        };
        let inner = match source {
            ParquetError::External(inner) => inner,
            other => {
                return ScanError::Format {
                    path: path.to_string(),
                    source: other,
                }
            }
        };
        let inner = match inner.downcast::<ScanError>() {
            Ok(ours) => return *ours,
            Err(other) => other,
        };
        let inner = match inner.downcast::<crate::store::StoreError>() {
            Ok(ours) => return ScanError::Store(ours),
            Err(other) => other,
        };
        let inner = match inner.downcast::<crate::engine::IoError>() {
            Ok(ours) => return ScanError::Io(*ours),
            Err(other) => other,
        };
        match inner.downcast::<crate::cuda::CudaError>() {
            Ok(ours) => ScanError::Cuda(*ours),
            Err(other) => ScanError::Format {
                path: path.to_string(),
                source: ParquetError::External(other),
            },
        }
    }
}

/// Whether arrow-rs refused a DELTA_BINARY_PACKED page for deltas wider
/// than its type, in `error` or one of its sources (its message is the only
/// sign; arrow-rs has no variant for it).
fn refuses_wide_deltas(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.to_string().contains("'min_delta' too large") {
            return true;
        }
        next = e.source();
    }
    false
}

impl PlanError {
    /// This failure as the Parquet layer's error, naming the file planned.
    pub fn in_file(self, location: &str) -> ScanError {
        ScanError::Plan {
            path: location.to_string(),
            source: self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// arrow-rs's own error for DuckDB's file (testdata/README.md), from
    /// its synchronous reader: the `wide` column's deltas do not fit 32 bits.
    fn arrow_rs_refusal() -> arrow::error::ArrowError {
        use ::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/duckdb_wide_deltas.parquet"
        );
        let file = std::fs::File::open(path).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        let mut batches = reader.into_iter();
        batches
            .find_map(|b| b.err())
            .expect("arrow-rs refuses the file")
    }

    /// Another layer around an error whose message does not repeat it.
    #[derive(Debug, thiserror::Error)]
    #[error("the query failed")]
    struct Around(#[source] arrow::error::ArrowError);

    #[test]
    fn arrow_rs_refusing_wide_deltas_is_explained_with_its_error_kept() {
        let refusal = arrow_rs_refusal();
        let text = refusal.to_string();
        assert!(text.contains("'min_delta' too large"), "{text}");
        let explained = ScanError::from_arrow("f.parquet", refusal);
        assert!(matches!(explained, ScanError::WideDeltas { .. }));
        let shown = explained.to_string();
        assert!(shown.starts_with("f.parquet: "), "{shown}");
        assert!(
            shown.contains("deltas wider than its 32-bit type"),
            "{shown}"
        );
        let source = std::error::Error::source(&explained).unwrap();
        assert_eq!(source.to_string(), text);

        // Under another layer (DataFusion's scan): found among the sources.
        let around = ScanError::wide_deltas("t", Around(arrow_rs_refusal()));
        let around = around.map_err(|_| ()).expect("explained");
        let source = std::error::Error::source(&around).unwrap();
        assert_eq!(source.to_string(), "the query failed");
    }

    #[test]
    fn other_errors_are_given_back_unchanged() {
        let other = arrow::error::ArrowError::ComputeError("overflow".into());
        match ScanError::wide_deltas("f.parquet", other) {
            Err(arrow::error::ArrowError::ComputeError(m)) => assert_eq!(m, "overflow"),
            other => panic!("{other:?}"),
        }
        let plain = ScanError::from_arrow(
            "f.parquet",
            arrow::error::ArrowError::ComputeError("overflow".into()),
        );
        assert!(matches!(plain, ScanError::Arrow { .. }));
    }
}
