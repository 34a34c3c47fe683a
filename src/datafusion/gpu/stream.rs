//! A GPU scan partition's stream: the batches the decode thread sends,
//! then the fallback files read on the host, cut at the scan's limit.

use std::sync::Arc;

use ::datafusion::arrow::datatypes::SchemaRef;
use ::datafusion::arrow::record_batch::RecordBatch;
use ::datafusion::error::Result;
use ::datafusion::execution::{SendableRecordBatchStream, TaskContext};
use ::datafusion::physical_plan::metrics::Count;
use ::datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use futures::StreamExt;
use tokio::sync::mpsc::Receiver;

use super::job::Msg;

/// Starts the host scan of the fallback units (indices), as one stream.
pub(crate) type Fallback =
    Box<dyn FnOnce(Vec<usize>, Arc<TaskContext>) -> Result<SendableRecordBatchStream> + Send>;

/// Starts the partition's decode thread, returning what it sends.
pub(crate) type Start = Box<dyn FnOnce() -> Result<Receiver<Msg>> + Send>;

struct State {
    /// The decode thread's batches, once started.
    rx: Option<Receiver<Msg>>,
    /// Starts the thread: on the first poll, not when DataFusion creates
    /// the stream (a hash join creates its probe side's streams before it
    /// builds: decodes started then would hold GPU slots, their channels
    /// full, while the build side's partitions wait for one).
    start: Option<Start>,
    host: Option<SendableRecordBatchStream>,
    fallback: Option<Fallback>,
    context: Arc<TaskContext>,
    cpu_rows: Count,
    remaining: Option<usize>,
}

impl State {
    /// The next batch of the partition, or None at its end.
    async fn next(&mut self) -> Option<Result<RecordBatch>> {
        if self.remaining == Some(0) {
            return None;
        }
        let batch = loop {
            if let Some(host) = &mut self.host {
                let batch = host.next().await?;
                if let Ok(b) = &batch {
                    self.cpu_rows.add(b.num_rows());
                }
                break batch;
            }
            if self.rx.is_none() {
                let start = self.start.take()?;
                match start() {
                    Ok(rx) => self.rx = Some(rx),
                    Err(e) => {
                        self.remaining = Some(0);
                        return Some(Err(e));
                    }
                }
            }
            match self.rx.as_mut()?.recv().await? {
                Msg::Batch(b) => break Ok(b),
                Msg::Failed(e) => {
                    self.remaining = Some(0);
                    return Some(Err(e));
                }
                Msg::Cpu(units) => {
                    let start = self.fallback.take()?;
                    match start(units, self.context.clone()) {
                        Ok(host) => self.host = Some(host),
                        Err(e) => {
                            self.remaining = Some(0);
                            return Some(Err(e));
                        }
                    }
                }
            }
        };
        Some(batch.map(|b| self.limit(b)))
    }

    /// `b` cut to the rows the limit leaves.
    fn limit(&mut self, b: RecordBatch) -> RecordBatch {
        match &mut self.remaining {
            None => b,
            Some(left) => {
                let b = b.slice(0, b.num_rows().min(*left));
                *left -= b.num_rows();
                b
            }
        }
    }
}

/// The partition's stream of `schema` over what the thread `start`
/// starts sends.
pub(crate) fn partition_stream(
    schema: SchemaRef,
    start: Start,
    fallback: Fallback,
    context: Arc<TaskContext>,
    cpu_rows: Count,
    limit: Option<usize>,
) -> SendableRecordBatchStream {
    let state = State {
        rx: None,
        start: Some(start),
        host: None,
        fallback: Some(fallback),
        context,
        cpu_rows,
        remaining: limit,
    };
    let stream = futures::stream::unfold(state, |mut state| async move {
        let batch = state.next().await?;
        Some((batch, state))
    });
    Box::pin(RecordBatchStreamAdapter::new(schema, stream))
}

/// `stream` with its rows counted in `rows` (a partition read wholly on
/// the host).
pub(crate) fn counted(stream: SendableRecordBatchStream, rows: Count) -> SendableRecordBatchStream {
    let schema = stream.schema();
    let stream = stream.map(move |batch| {
        if let Ok(b) = &batch {
            rows.add(b.num_rows());
        }
        batch
    });
    Box::pin(RecordBatchStreamAdapter::new(schema, stream))
}
