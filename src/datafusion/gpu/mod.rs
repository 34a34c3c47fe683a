//! The GPU path of a gdscan scan (`GdsTableOptions::decode` `Gpu` or
//! `Auto`): each partition's files decode through gdscan's GPU decoder
//! and come back as host record batches of DataFusion's batch size.
//!
//! Flow: `partition` (called by [`BorderExec`](super::BorderExec) for each
//! partition of a gdscan scan) decides whether the partition can take the
//! GPU at all (`probe` for `Auto`), takes the partition's files from the
//! scan (`work`) and starts a `job` on a thread of its own: it waits for a
//! slot of its device (`slots`: a process-wide limit on decodes at once),
//! plans each file, decodes them in one pipeline, copies each batch back
//! and puts it in the scan's shape (`shape`), sending it to the
//! partition's `stream`. Files the GPU path refuses go to the host path
//! (the same scan over those files), said once per reason (`fallback`)
//! and counted in `metrics`. `exact` says which filters the scan takes
//! exactly (DataFusion then keeps no filter for them) and how the host
//! path applies them too.

mod exact;
mod fallback;
mod job;
mod metrics;
mod partition;
mod probe;
mod shape;
mod slots;
mod stream;
mod work;

pub(crate) use exact::pushdown_of;
pub(crate) use partition::execute;
pub use work::PushedPredicate;
