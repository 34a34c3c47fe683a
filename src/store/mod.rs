//! Object stores: the bytes of a Parquet object from a local file or from
//! any [`object_store::ObjectStore`], into host or device memory.
//!
//! The Parquet layer reads through one small trait, [`Source`]: the object's
//! location, size and version (for the metadata cache), exact ranges as host
//! [`bytes::Bytes`], and a row group's coalesced reads into one host or
//! device buffer. Two backends implement it, each in its own file:
//!
//! - [`LocalSource`]: a [`crate::FileHandle`], so local files keep the
//!   engine's POSIX fast path and cuFile, and its counters.
//! - [`RemoteSource`]: any `Arc<dyn ObjectStore>`. Ranges are split into
//!   requests of at most [`StoreOptions::request_size`] bytes, at most
//!   [`StoreOptions::concurrency`] in flight per source, each response body
//!   streamed straight into host memory, or gathered into pinned staging
//!   buffers copied to the device on their own streams (`staging`) while
//!   other requests are still on the network.
//!
//! [`open`] decides the route from a location: a plain path or a `file://`
//! URL goes to the engine;
//! `s3://`, `gs://`, `az://`/`abfs://`, `http(s)://` build a store from the
//! URL and the environment (`builder`), with bounded timeouts and retries
//! and an HTTP hook that counts every attempt (`counting`).

pub(crate) mod builder;
mod counting;
mod error;
mod get;
mod local;
mod options;
mod pending;
mod redact;
mod remote;
mod runtime;
mod source;
mod split;
mod staging;
mod url;

pub use builder::build as build_store;
pub use counting::{CountingConnector, HttpCounts};
pub use error::StoreError;
pub use local::LocalSource;
pub use options::{StoreOptions, DEFAULT_CONCURRENCY, DEFAULT_FOOTER_HINT, DEFAULT_REQUEST_SIZE};
#[cfg(feature = "datafusion")]
pub(crate) use redact::redact;
pub use remote::RemoteSource;
pub use runtime::block_on;
pub use source::{PendingReads, Source};
pub use url::{classify, open, ListedObject, Target};
#[cfg(feature = "datafusion")]
pub(crate) use url::{list_prefix, open_with};
