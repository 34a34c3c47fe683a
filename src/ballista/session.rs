//! Sessions that run gdscan's tables on Ballista: the configuration with
//! gdscan's codecs, the session state the scheduler plans with (gdscan's
//! scans marked last), and the client contexts (remote or standalone).

use std::sync::Arc;

use ::datafusion::error::Result;
use ::datafusion::execution::{SessionState, SessionStateBuilder};
use ::datafusion::prelude::{SessionConfig, SessionContext};
use ballista::extension::{SessionConfigExt, SessionContextExt};

use super::logical::GdsLogicalCodec;
use super::physical::GdsPhysicalCodec;
use super::scan_exec::MarkGdsScans;

/// A Ballista session configuration with gdscan's codecs, without
/// DataFusion's work stealing between file-scan partitions, and Ballista's
/// static planner (the adaptive one plans with its own rules, without the
/// session's last rule that marks gdscan's scans); `partitions` sets the
/// target partitions (None: DataFusion's default).
pub fn config(partitions: Option<usize>) -> SessionConfig {
    let mut config = SessionConfig::new_with_ballista()
        .with_ballista_logical_extension_codec(Arc::new(GdsLogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(GdsPhysicalCodec::default()))
        .with_ballista_adaptive_query_planner(false);
    if let Some(n) = partitions {
        config = config.with_target_partitions(n.max(1));
    }
    // A Ballista task runs its partitions of the stage on its own copy of
    // the plan, which the scheduler cuts to those partitions' file groups;
    // DataFusion's work stealing would share a queue of only those files
    // among them. Left off all the same: each task reads exactly the files
    // the scheduler gave its partitions, as the metrics say.
    config
        .options_mut()
        .execution
        .enable_file_stream_work_stealing = false;
    config
}

/// The session state a scheduler plans with: Ballista's default one for
/// `config`, with [`MarkGdsScans`] as the last physical optimizer rule.
pub fn scheduler_state(config: SessionConfig) -> Result<SessionState> {
    let state = ballista_core::utils::default_session_builder(config)?;
    Ok(SessionStateBuilder::new_from_existing(state)
        .with_physical_optimizer_rule(Arc::new(MarkGdsScans))
        .build())
}

/// A multi-threaded tokio runtime with timers and I/O, as Ballista's
/// clients, scheduler and executor need.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name("gdscan-ballista")
        .enable_all()
        .build()
}

/// A context whose queries run on the Ballista scheduler at `scheduler`
/// (`HOST:PORT`), with gdscan's codecs.
pub async fn remote(scheduler: &str, partitions: Option<usize>) -> Result<SessionContext> {
    let state = scheduler_state(config(partitions))?;
    SessionContext::remote_with_state(&format!("df://{scheduler}"), state).await
}

/// A context with an in-process Ballista scheduler and executor (Ballista's
/// standalone mode, on loopback), with gdscan's codecs.
pub async fn standalone(partitions: Option<usize>) -> Result<SessionContext> {
    let state = scheduler_state(config(partitions))?;
    SessionContext::standalone_with_state(state).await
}
