//! The Ballista layer's error: bytes of a codec that do not decode, a table
//! that changed between the client and the scheduler, a cluster process
//! that cannot start.

use ::datafusion::error::DataFusionError;

use crate::datafusion::SqlError;

/// A failure of gdscan's codecs or of a cluster process.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// A codec's bytes are not what gdscan wrote.
    #[error("<ballista codec>: bad bytes: {0}")]
    Wire(#[from] WireError),

    /// A gdscan table could not be opened or read (where the plan was
    /// decoded, or by an executor).
    #[error(transparent)]
    Sql(#[from] SqlError),

    /// The table's files, opened where the plan was decoded, have another
    /// schema than the client planned with.
    #[error("{location}: the table's schema here differs from the client's: {here} vs {client}")]
    SchemaChanged {
        /// The table's location.
        location: String,
        /// The schema where it was decoded.
        here: String,
        /// The schema the client sent.
        client: String,
    },

    /// A scheduler or executor address that is not `HOST:PORT`.
    #[error("{address:?}: not HOST:PORT ({reason})")]
    Address {
        /// The address as given.
        address: String,
        /// Why.
        reason: String,
    },

    /// Ballista failed (a scheduler or an executor could not start or
    /// stopped with an error).
    #[error("ballista {what}: {source}")]
    Ballista {
        /// What was being done.
        what: &'static str,
        /// Ballista's error.
        #[source]
        source: Box<ballista_core::error::BallistaError>,
    },

    /// DataFusion failed while gdscan's codecs were at work.
    #[error("ballista codec: {0}")]
    DataFusion(#[source] Box<DataFusionError>),
}

/// Why a codec's bytes are not what gdscan wrote.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// gdscan's header cannot be written as JSON.
    #[error("gdscan's header cannot be written: {0}")]
    Encode(#[source] serde_json::Error),
    /// gdscan's header is not the JSON gdscan writes.
    #[error("gdscan's header does not parse: {0}")]
    Decode(#[source] serde_json::Error),
    /// Fewer bytes than the header's length says.
    #[error("{len} bytes: too short")]
    Short {
        /// How many bytes there are.
        len: usize,
    },
    /// A read-ahead policy gdscan does not know.
    #[error("unknown read-ahead policy {0:?}")]
    ReadAhead(String),
    /// A decode choice gdscan does not know (not `cpu`, `gpu`, `auto`).
    #[error("unknown decode choice {0:?}")]
    DecodeChoice(String),
    /// A device list that does not parse (not `all` nor ordinals such as
    /// `0,1`).
    #[error("device list {given:?}: {source}")]
    Devices {
        /// The list as sent.
        given: String,
        /// Why it does not parse.
        source: crate::cuda::DevicesParseError,
    },
    /// The plan around a gdscan scan is not what gdscan wrote, e.g. "a
    /// gdscan scan without a Parquet source".
    #[error("{0}")]
    Plan(&'static str),
    /// The plan and gdscan's header count different things.
    #[error("{plan} {what}, {header} in gdscan's header")]
    Count {
        /// What is counted, e.g. "file groups".
        what: &'static str,
        /// How many the plan has.
        plan: usize,
        /// How many gdscan's header has.
        header: usize,
    },
}

impl From<ClusterError> for DataFusionError {
    fn from(e: ClusterError) -> Self {
        DataFusionError::External(Box::new(e))
    }
}
