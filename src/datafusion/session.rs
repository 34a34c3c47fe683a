//! A session to run SQL in: the tokio runtime DataFusion needs, a context
//! with the wanted partitions, and one statement run to its batches.

use ::datafusion::arrow::record_batch::RecordBatch;
use ::datafusion::prelude::{SessionConfig, SessionContext};

use super::error::Result;
use crate::engine::IoError;

/// A multi-threaded tokio runtime for DataFusion (as many workers as
/// DataFusion's default target partitions: the available CPUs).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name("gdscan-sql")
        .enable_time()
        .build()
        .map_err(|e| IoError::os("<tokio runtime>", "start", e).into())
}

/// A session context; `partitions` sets its target partitions (None:
/// DataFusion's default, the available CPUs).
pub fn context(partitions: Option<usize>) -> SessionContext {
    let mut config = SessionConfig::new();
    if let Some(n) = partitions {
        config = config.with_target_partitions(n.max(1));
    }
    SessionContext::new_with_config(config)
}

/// Plans and runs one SQL statement.
pub async fn run_sql(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>> {
    Ok(ctx.sql(sql).await?.collect().await?)
}
