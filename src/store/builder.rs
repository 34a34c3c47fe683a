//! Stores from URLs: each scheme's builder, configured from the environment
//! (`AWS_*`, `GOOGLE_*`, `AZURE_*`, as object_store's `from_env` reads them),
//! with bounded timeouts and retries and an HTTP client that counts its
//! attempts.

use super::redact::redact;
use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::{ClientConfigKey, ObjectStore, ObjectStoreScheme};
use url::Url;

use super::counting::{CountingConnector, HttpCounts};
use super::error::StoreError;
use super::options::StoreOptions;
use crate::error::Result;

fn duration(d: Duration) -> String {
    format!("{}ms", d.as_millis().max(1))
}

/// The client settings every store gets: timeouts (connection, whole request).
fn client_settings(options: &StoreOptions) -> [(ClientConfigKey, String); 2] {
    [
        (
            ClientConfigKey::ConnectTimeout,
            duration(options.connect_timeout),
        ),
        (ClientConfigKey::Timeout, duration(options.timeout)),
    ]
}

/// Parses `key` as one of a scheme's configuration keys.
fn key<K: std::str::FromStr>(url: &Url, key: &str) -> Result<K> {
    key.to_ascii_lowercase().parse().map_err(|_| {
        StoreError::Location {
            location: redact(url.as_str()),
            reason: format!("unknown store option {key:?}"),
        }
        .into()
    })
}

/// Builds the store for `url` (of a remote `scheme`): S3, GCS and Azure from
/// their environment variables plus the URL, HTTP(S) from the URL's origin
/// (plain HTTP allowed); then `config`, object_store's option names (e.g.
/// `aws_endpoint`, `aws_allow_http`, `google_service_account`), over them.
/// Returns the store and its HTTP attempt counts.
pub(crate) fn build(
    url: &Url,
    scheme: ObjectStoreScheme,
    options: &StoreOptions,
    config: &[(&str, &str)],
) -> Result<(Arc<dyn ObjectStore>, Arc<HttpCounts>)> {
    let counts = Arc::new(HttpCounts::default());
    let connector = CountingConnector::new(counts.clone());
    let retry = options.retry_config();
    let failed = |e: object_store::Error| StoreError::Configure {
        location: redact(url.as_str()),
        source: e,
    };
    // The four builders share no trait but take the same steps after their
    // start (the environment and the URL, or the origin): the client
    // settings (wrapped in the builder's key type), `config` over them,
    // then retries and the counting connector.
    macro_rules! configured {
        ($start:expr, $client_key:expr) => {{
            let mut b = $start;
            for (k, v) in client_settings(options) {
                b = b.with_config($client_key(k), v);
            }
            for (k, v) in config {
                b = b.with_config(key(url, k)?, *v);
            }
            Arc::new(
                b.with_retry(retry)
                    .with_http_connector(connector)
                    .build()
                    .map_err(failed)?,
            )
        }};
    }
    let store: Arc<dyn ObjectStore> = match scheme {
        ObjectStoreScheme::AmazonS3 => configured!(
            AmazonS3Builder::from_env().with_url(url.as_str()),
            AmazonS3ConfigKey::Client
        ),
        ObjectStoreScheme::GoogleCloudStorage => configured!(
            GoogleCloudStorageBuilder::from_env().with_url(url.as_str()),
            GoogleConfigKey::Client
        ),
        ObjectStoreScheme::MicrosoftAzure => configured!(
            MicrosoftAzureBuilder::from_env().with_url(url.as_str()),
            AzureConfigKey::Client
        ),
        ObjectStoreScheme::Http => configured!(
            HttpBuilder::new()
                .with_url(&url[..url::Position::BeforePath])
                .with_config(ClientConfigKey::AllowHttp, "true"),
            std::convert::identity
        ),
        other => {
            return Err(StoreError::Location {
                location: redact(url.as_str()),
                reason: format!("{other:?} is not a remote store"),
            }
            .into())
        }
    };
    Ok((store, counts))
}
