//! Counting every HTTP attempt a store makes: an [`HttpConnector`] that wraps
//! object_store's reqwest client. Attempts made while a logical request runs
//! inside [`attributed`] are charged to that request, so its retries (a
//! resent request after a 5xx, a timeout or a refused connection, or a
//! resumed body after a connection cut mid-way) are exactly its attempts
//! minus one.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpService, ReqwestConnector,
};
use object_store::ClientOptions;

tokio::task_local! {
    static ATTEMPTS: Arc<AtomicU64>;
}

/// A store's HTTP attempts, shared by its connector and its sources.
#[derive(Debug, Default)]
pub struct HttpCounts {
    attempts: AtomicU64,
    failed: AtomicU64,
    unattributed: AtomicU64,
}

impl HttpCounts {
    /// HTTP requests sent, retries included.
    pub fn attempts(&self) -> u64 {
        self.attempts.load(Ordering::Relaxed)
    }

    /// Attempts that failed with a transport error or a 5xx, 408 or 429 status.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// Attempts made outside `attributed` (credential requests, or calls
    /// made on the store directly, such as a benchmark's baseline).
    pub fn unattributed(&self) -> u64 {
        self.unattributed.load(Ordering::Relaxed)
    }
}

/// Runs `future` (one logical store request, body included) and returns its
/// output with the HTTP attempts it made through a [`CountingConnector`].
pub(super) async fn attributed<F: Future>(future: F) -> (F::Output, u64) {
    let counter = Arc::new(AtomicU64::new(0));
    let out = ATTEMPTS.scope(counter.clone(), future).await;
    (out, counter.load(Ordering::Relaxed))
}

/// An [`HttpConnector`] whose clients count their attempts into [`HttpCounts`].
#[derive(Debug, Default)]
pub struct CountingConnector {
    inner: ReqwestConnector,
    counts: Arc<HttpCounts>,
}

impl CountingConnector {
    /// A connector counting into `counts`.
    pub fn new(counts: Arc<HttpCounts>) -> Self {
        CountingConnector {
            inner: ReqwestConnector::default(),
            counts,
        }
    }
}

impl HttpConnector for CountingConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = self.inner.connect(options)?;
        Ok(HttpClient::new(CountingService {
            inner,
            counts: self.counts.clone(),
        }))
    }
}

#[derive(Debug)]
struct CountingService {
    inner: HttpClient,
    counts: Arc<HttpCounts>,
}

#[async_trait]
impl HttpService for CountingService {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        self.counts.attempts.fetch_add(1, Ordering::Relaxed);
        if ATTEMPTS
            .try_with(|a| a.fetch_add(1, Ordering::Relaxed))
            .is_err()
        {
            self.counts.unattributed.fetch_add(1, Ordering::Relaxed);
        }
        let response = self.inner.execute(req).await;
        let failed = match &response {
            Ok(r) => {
                let s = r.status();
                s.is_server_error() || s.as_u16() == 408 || s.as_u16() == 429
            }
            Err(_) => true,
        };
        if failed {
            self.counts.failed.fetch_add(1, Ordering::Relaxed);
        }
        response
    }
}
