//! gdscan's tables on Apache Ballista (cargo feature `ballista`): a
//! scheduler plans, executors run the stages, and every executor reads
//! through gdscan.
//!
//! Ballista ships plans as DataFusion's protobuf plus its extension codecs.
//! `logical` ([`GdsLogicalCodec`]) carries a [`GdsTable`](crate::datafusion::GdsTable)
//! from the client to the scheduler as its location and options (`wire`;
//! store options carry no secrets, the engine stays per process). The
//! scheduler plans it as any DataFusion session would; its last physical
//! rule (`scan_exec`: [`MarkGdsScans`]) wraps each gdscan scan in a
//! [`GdsScanExec`], because DataFusion's protobuf writes a plain
//! `DataSourceExec` itself and drops gdscan's reader factory. `physical`
//! ([`GdsPhysicalCodec`]) writes the wrapped scan as DataFusion's protobuf
//! plus what it drops (reader options; per file, gdscan's location,
//! access plan and read-ahead plan) and, on the executor, rebuilds the
//! scan with [`GdsReaderFactory`](crate::datafusion::GdsReaderFactory).
//! `report` sums what each executor's scans read; `session` has the
//! client contexts (remote or standalone) and `process` the scheduler and
//! executor processes.

mod error;
mod logical;
mod physical;
mod process;
mod report;
mod scan_exec;
mod session;
mod wire;

pub use error::{ClusterError, WireError};
pub use logical::GdsLogicalCodec;
pub use physical::GdsPhysicalCodec;
pub use process::{host_port, run_executor, run_scheduler, ExecutorOptions};
pub use report::{process_totals, set_scan_reporter, ProcessTotals, ScanReport};
pub use scan_exec::{is_gds_scan, GdsScanExec, MarkGdsScans};
pub use session::{config, remote, runtime, scheduler_state, standalone};
