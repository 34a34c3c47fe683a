//! The Ballista layer's error: bytes of a codec that do not decode, a table
//! that changed between the client and the scheduler, a cluster process
//! that cannot start.

use ::datafusion::error::DataFusionError;

/// A failure of gdscan's codecs or of a cluster process.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// A codec's bytes are not what gdscan wrote.
    #[error("<ballista codec>: bad bytes: {0}")]
    Wire(String),

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

impl From<ClusterError> for DataFusionError {
    fn from(e: ClusterError) -> Self {
        DataFusionError::External(Box::new(e))
    }
}
