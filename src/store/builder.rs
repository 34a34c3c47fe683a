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
use super::error::Result;
use super::error::StoreError;
use super::options::StoreOptions;

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

/// The URL's origin without `user:password@`: what the HTTP client (and
/// its logs, and object_store's errors) see.
fn origin_without_credentials(url: &Url) -> String {
    let mut origin = url.clone();
    let _ = origin.set_username("");
    let _ = origin.set_password(None);
    origin[..url::Position::BeforePath].to_string()
}

/// The URL's `user:password`, if any, as a default `Authorization: Basic`
/// header marked sensitive (never logged by the HTTP client).
fn credentials(url: &Url) -> object_store::ClientOptions {
    let options = object_store::ClientOptions::new();
    if url.username().is_empty() && url.password().is_none() {
        return options;
    }
    let pair = format!(
        "{}:{}",
        percent_decode(url.username()),
        percent_decode(url.password().unwrap_or(""))
    );
    let Ok(mut value) =
        object_store::HeaderValue::from_str(&format!("Basic {}", base64(pair.as_bytes())))
    else {
        return options;
    };
    value.set_sensitive(true);
    let mut headers = object_store::HeaderMap::new();
    headers.insert("authorization", value);
    options.with_default_headers(headers)
}

/// `%XX` sequences decoded (as a URL's user and password are written).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|&c| hex(c)),
            b.get(i + 2).and_then(|&c| hex(c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |acc, &b| acc << 8 | b as u32) << (8 * (3 - chunk.len()));
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(T[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Parses `key` as one of a scheme's configuration keys.
fn key<K: std::str::FromStr>(url: &Url, key: &str) -> Result<K> {
    key.to_ascii_lowercase()
        .parse()
        .map_err(|_| StoreError::Location {
            location: redact(url.as_str()),
            reason: format!("unknown store option {key:?}"),
        })
}

/// Builds the store for `url` (of a remote `scheme`): S3, GCS and Azure from
/// their environment variables plus the URL, HTTP(S) from the URL's origin
/// (plain HTTP allowed); then `config`, object_store's option names (e.g.
/// `aws_endpoint`, `aws_allow_http`, `google_service_account`), over them.
/// Returns the store and its HTTP attempt counts.
pub fn build(
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
                .with_client_options(credentials(url))
                .with_url(origin_without_credentials(url))
                .with_config(ClientConfigKey::AllowHttp, "true"),
            std::convert::identity
        ),
        other => {
            return Err(StoreError::Location {
                location: redact(url.as_str()),
                reason: format!("{other:?} is not a remote store"),
            })
        }
    };
    Ok((store, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_encoded_and_the_origin_loses_them() {
        assert_eq!(
            base64(b"Aladdin:open sesame"),
            "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b""), "");
        assert_eq!(percent_decode("p%40ss%3Aw"), "p@ss:w");
        let url = Url::parse("http://alice:p%40ss@h:81/a/b").unwrap();
        assert_eq!(origin_without_credentials(&url), "http://h:81");
    }
}
