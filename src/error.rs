//! The crate's error: one variant per layer, each wrapping that layer's own
//! typed error (as object_store and cudarc do), so a caller can match on
//! what went wrong and reach every cause through
//! [`std::error::Error::source`]. Messages name the file (where there is
//! one) and the cause.
//!
//! The printing rule: **an error's `Display` is self-contained.** A variant
//! that adds context (a path, an operation) prints its source's message
//! after its own (`"{path}: {source}"`); a variant that adds nothing is
//! `#[error(transparent)]`. Errors cross boundaries where only `Display`
//! survives (DataFusion's `External`, Ballista's task failures sent between
//! processes as text, logs), so a message that left its cause to the chain
//! would lose it there. A printer that walks [`source`](std::error::Error::source)
//! uses [`chain`], which skips each cause whose message is already shown:
//! every cause is printed once.

use crate::config::ConfigError;
use crate::cuda::CudaError;
use crate::cufile::CuFileError;
use crate::decode::scan::DecodeError;
use crate::engine::IoError;
use crate::parquet::ScanError;
use crate::store::StoreError;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in gdscan, by layer (bottom to top).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The GPU decoder failed (its error names file, column, row group and
    /// page where the input is at fault).
    #[error(transparent)]
    Decode(Box<DecodeError>),

    /// A setting (environment variable or builder value) is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// The CUDA driver cannot be used, or one of its calls failed.
    #[error(transparent)]
    Cuda(#[from] CudaError),

    /// cuFile cannot be used, one of its calls failed, or it refused a
    /// parameter.
    #[error(transparent)]
    CuFile(#[from] CuFileError),

    /// The engine: a file cannot be opened, or a read or write of its
    /// ranges failed.
    #[error(transparent)]
    Io(IoError),

    /// The object-store bridge: a location leads nowhere, or a store
    /// request failed.
    #[error(transparent)]
    Store(StoreError),

    /// Parquet: a file is not valid Parquet, or a scan does not fit it.
    #[error(transparent)]
    Parquet(ScanError),

    /// DataFusion: a table cannot be registered, or a query failed.
    #[cfg(feature = "datafusion")]
    #[error(transparent)]
    DataFusion(crate::datafusion::SqlError),

    /// Ballista: gdscan's codecs, a scheduler or an executor.
    #[cfg(feature = "ballista")]
    #[error(transparent)]
    Cluster(crate::ballista::ClusterError),
}

#[cfg(feature = "datafusion")]
impl From<::datafusion::error::DataFusionError> for Error {
    /// Unwraps one of gdscan's errors that travelled through DataFusion
    /// (a failed registration or read, a codec's bytes) and files it under
    /// its layer; anything else stays DataFusion's.
    fn from(e: ::datafusion::error::DataFusionError) -> Self {
        use ::datafusion::error::DataFusionError;
        let inner = match e {
            DataFusionError::External(inner) => inner,
            other => return crate::datafusion::SqlError::from(other).into(),
        };
        let inner = match inner.downcast::<Error>() {
            Ok(ours) => return *ours,
            Err(other) => other,
        };
        #[cfg(feature = "ballista")]
        let inner = match inner.downcast::<crate::ballista::ClusterError>() {
            Ok(ours) => return (*ours).into(),
            Err(other) => other,
        };
        crate::datafusion::SqlError::from(DataFusionError::External(inner)).into()
    }
}

#[cfg(feature = "datafusion")]
impl From<crate::datafusion::SqlError> for Error {
    /// Files the DataFusion layer's error under the layer it came from.
    fn from(e: crate::datafusion::SqlError) -> Self {
        use crate::datafusion::SqlError;
        match e {
            SqlError::Scan(e) => (*e).into(),
            SqlError::Store(e) => (*e).into(),
            SqlError::Io(e) => e.into(),
            SqlError::Cuda(e) => Error::Cuda(e),
            SqlError::Config(e) => Error::Config(e),
            other => Error::DataFusion(other),
        }
    }
}

#[cfg(feature = "ballista")]
impl From<crate::ballista::ClusterError> for Error {
    /// Files the Ballista layer's error under the layer it came from.
    fn from(e: crate::ballista::ClusterError) -> Self {
        use crate::ballista::ClusterError;
        match e {
            ClusterError::Sql(e) => e.into(),
            other => Error::Cluster(other),
        }
    }
}

impl From<IoError> for Error {
    /// Files the engine's error under the layer it came from: a CUDA,
    /// cuFile or setting failure the engine met is that layer's variant.
    fn from(e: IoError) -> Self {
        match e {
            IoError::Cuda(e) => Error::Cuda(e),
            IoError::CuFile(e) => Error::CuFile(e),
            IoError::Config(e) => Error::Config(e),
            other => Error::Io(other),
        }
    }
}

impl From<StoreError> for Error {
    /// Files the store's error under the layer it came from (a local
    /// file's failure is the engine's).
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Io(e) => e.into(),
            StoreError::Cuda(e) => Error::Cuda(e),
            StoreError::Config(e) => Error::Config(e),
            other => Error::Store(other),
        }
    }
}

impl From<ScanError> for Error {
    /// Files the Parquet layer's error under the layer it came from.
    fn from(e: ScanError) -> Self {
        match e {
            ScanError::Store(e) => (*e).into(),
            ScanError::Io(e) => e.into(),
            ScanError::Cuda(e) => Error::Cuda(e),
            ScanError::Config(e) => Error::Config(e),
            other => Error::Parquet(other),
        }
    }
}

impl From<DecodeError> for Error {
    /// Files the decoder's error under the layer it came from: a store,
    /// Parquet, engine or CUDA failure the decoder met is that layer's
    /// variant; the decoder's own failures are [`Error::Decode`].
    fn from(e: DecodeError) -> Self {
        match e {
            DecodeError::Store(e) => e.into(),
            DecodeError::Scan(e) => e.into(),
            DecodeError::Io(e) => e.into(),
            DecodeError::Cuda(e) => Error::Cuda(e),
            other => Error::Decode(Box::new(other)),
        }
    }
}

/// `e` and the causes its message does not already show, joined by ": ":
/// each cause printed once (see the [module docs](self)).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let message = c.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        cause = c.source();
    }
    text
}

impl Error {
    /// Wraps a GPU decoder error (the same as [`From`]).
    pub fn decode(e: DecodeError) -> Self {
        e.into()
    }

    /// Builds an [`IoError::Os`] for `op` on `path`.
    pub fn io(path: &str, op: &'static str, source: std::io::Error) -> Self {
        IoError::os(path, op, source).into()
    }

    /// Wraps a parquet crate error for `path`, unwrapping one of ours that
    /// travelled through the parquet crate (e.g. a short read).
    pub fn from_parquet(path: &str, source: ::parquet::errors::ParquetError) -> Self {
        match source {
            ::parquet::errors::ParquetError::External(inner) => match inner.downcast::<Error>() {
                Ok(ours) => *ours,
                Err(other) => {
                    ScanError::from_parquet(path, ::parquet::errors::ParquetError::External(other))
                        .into()
                }
            },
            other => ScanError::from_parquet(path, other).into(),
        }
    }

    /// Maps an `open(2)` failure to the most specific variant.
    pub fn from_open(path: &str, source: std::io::Error) -> Self {
        IoError::from_open(path, source).into()
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;
    use crate::parquet::plan::PlanError;

    #[test]
    fn layers_keep_their_typed_causes_as_sources() {
        let e = Error::from(PlanError::UnknownColumn("x".into()).in_file("f.parquet"));
        assert_eq!(e.to_string(), "f.parquet: column \"x\" is not in the file");
        assert!(matches!(
            &e,
            Error::Parquet(ScanError::Plan {
                source: PlanError::UnknownColumn(_),
                ..
            })
        ));
        let cause = e.source().expect("the plan error is the source");
        assert_eq!(
            cause.downcast_ref::<PlanError>(),
            Some(&PlanError::UnknownColumn("x".into()))
        );

        let e = Error::io("f", "pread", std::io::Error::from_raw_os_error(libc::EIO));
        assert!(e
            .source()
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .is_some());

        let e = Error::from(IoError::DeviceCopy {
            path: "f".into(),
            source: CudaError::Unavailable("none".into()),
        });
        assert!(e
            .source()
            .and_then(|s| s.downcast_ref::<CudaError>())
            .is_some());
    }

    /// Every message of `e`'s chain, outermost first.
    fn messages(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
        let mut out = vec![e.to_string()];
        let mut cur = e.source();
        while let Some(c) = cur {
            out.push(c.to_string());
            cur = c.source();
        }
        out
    }

    /// The printed chain shows every cause's message exactly once.
    fn assert_each_cause_once(e: &(dyn std::error::Error + 'static)) {
        let printed = chain(e);
        for message in messages(e) {
            assert_eq!(
                printed.matches(&message).count(),
                1,
                "{message:?} is not printed once in {printed:?}"
            );
        }
    }

    #[test]
    fn deep_errors_reach_their_typed_cause_and_print_it_once() {
        use crate::cuda::module::ModuleError;
        use crate::decode::kernels::KernelError;

        let oom = CudaError::OutOfMemory {
            device: 0,
            requested: 1 << 30,
            free: 1 << 20,
        };
        // A kernel's CUDA failure, through the decoder, into the crate's error.
        let kernel = DecodeError::from(KernelError::Cuda(oom.clone()));
        assert_eq!(kernel.cuda(), Some(&oom));
        let e = Error::from(kernel);
        assert!(matches!(
            &e,
            Error::Decode(d) if matches!(d.as_ref(), DecodeError::Kernel(k)
                if matches!(k.as_ref(), KernelError::Cuda(CudaError::OutOfMemory { .. })))
        ));
        assert_each_cause_once(&e);

        // A module's driver failure is the CUDA error itself, once.
        let module = DecodeError::from(KernelError::Module(ModuleError::Driver(oom.clone())));
        assert_eq!(module.cuda(), Some(&oom));
        assert_each_cause_once(&Error::from(module));

        // A CUDA failure the decoder met directly is the crate's CUDA error.
        let direct = Error::from(DecodeError::from(oom.clone()));
        assert!(matches!(direct, Error::Cuda(CudaError::OutOfMemory { .. })));

        // A local file's failure inside the store inside a scan inside the
        // decoder is the engine's error at the top.
        let missing = ScanError::from(StoreError::from(IoError::NotFound {
            path: "f.parquet".into(),
        }));
        assert!(matches!(
            &missing,
            ScanError::Store(s) if matches!(s.as_ref(), StoreError::Io(IoError::NotFound { .. }))
        ));
        assert_each_cause_once(&missing);
        let e = Error::from(DecodeError::from(missing));
        assert!(matches!(&e, Error::Io(IoError::NotFound { path }) if path == "f.parquet"));
        assert_each_cause_once(&e);

        // An OS error inside the engine keeps it as the typed source.
        let e = Error::from(ScanError::from(IoError::os(
            "f",
            "pread",
            std::io::Error::from_raw_os_error(libc::EIO),
        )));
        assert!(matches!(&e, Error::Io(IoError::Os { op: "pread", .. })));

        // A store error that travelled through the parquet crate comes back typed.
        let through = ScanError::from_parquet(
            "f.parquet",
            ::parquet::errors::ParquetError::External(Box::new(StoreError::TaskLost)),
        );
        assert!(matches!(through, ScanError::Store(s) if matches!(*s, StoreError::TaskLost)));
    }

    #[test]
    fn the_chain_printer_shows_each_cause_once() {
        use crate::config::{parse_size, ConfigError};
        use crate::parquet::predicate::{PredicateError, TermError};

        let disk = || std::io::Error::other("disk gone");
        // An OS error inside the engine, inside the store, that travelled
        // through the parquet crate into a scan.
        let through =
            ScanError::from_parquet(
                "f.parquet",
                ::parquet::errors::ParquetError::External(Box::new(
                    ::parquet::errors::ParquetError::External(Box::new(StoreError::from(
                        IoError::os("f.parquet", "pread", disk()),
                    ))),
                )),
            );
        assert_each_cause_once(&through);
        assert_eq!(chain(&through).matches("disk gone").count(), 1);

        // A filter whose literal does not fit its column, inside a plan,
        // inside the scan of a file.
        let plan = PlanError::from(PredicateError::Type {
            column: "x".into(),
            source: TermError::Unsupported {
                column_type: "INT96".into(),
            },
        });
        let e = Error::from(plan.in_file("f.parquet"));
        assert_each_cause_once(&e);
        assert!(chain(&e).contains("INT96"), "{}", chain(&e));

        // A size setting that does not parse.
        let e = Error::from(ConfigError::Size {
            name: "GDSCAN_STORE_REQUEST_SIZE".into(),
            source: parse_size("4X").unwrap_err(),
        });
        assert_each_cause_once(&e);

        // A cause that its parent does not show is still printed.
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] std::io::Error);
        assert_eq!(chain(&Outer(disk())), "outer: disk gone");
    }

    #[cfg(feature = "datafusion")]
    #[test]
    fn errors_through_datafusion_come_back_typed_and_print_once() {
        use ::datafusion::error::DataFusionError;

        use crate::datafusion::{to_datafusion, SqlError};

        // A store error a table met, sent through DataFusion, is the
        // store's error again (a local file's failure: the engine's).
        let missing = StoreError::from(IoError::NotFound {
            path: "t/a.parquet".into(),
        });
        let e = Error::from(to_datafusion(missing));
        assert!(matches!(&e, Error::Io(IoError::NotFound { path }) if path == "t/a.parquet"));

        // A Parquet error boxed by DataFusion directly.
        let scan = PlanError::UnknownColumn("x".into()).in_file("f.parquet");
        let e = Error::from(DataFusionError::External(Box::new(scan)));
        assert!(matches!(&e, Error::Parquet(ScanError::Plan { .. })));

        // DataFusion's own failure, with one of ours below it.
        let query = SqlError::from(DataFusionError::Context(
            "reading".into(),
            Box::new(to_datafusion(IoError::os(
                "f.parquet",
                "pread",
                std::io::Error::other("disk gone"),
            ))),
        ));
        assert!(matches!(query, SqlError::Query(_)));
        let e = Error::from(query);
        assert_each_cause_once(&e);
        assert_eq!(chain(&e).matches("disk gone").count(), 1, "{}", chain(&e));
    }

    #[cfg(feature = "ballista")]
    #[test]
    fn cluster_errors_come_back_typed_and_print_once() {
        use ::datafusion::error::DataFusionError;

        use crate::ballista::{ClusterError, WireError};

        let json = serde_json::from_slice::<u32>(b"{").unwrap_err();
        let wire = ClusterError::from(WireError::Decode(json));
        let e = Error::from(DataFusionError::from(wire));
        assert!(matches!(
            &e,
            Error::Cluster(ClusterError::Wire(WireError::Decode(_)))
        ));
        assert_each_cause_once(&e);
    }
}
