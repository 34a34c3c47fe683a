//! How remote objects are read: concurrency, request size, footer hint,
//! timeouts and retries. Defaults, `GDSCAN_STORE_*` variables and the CLI's
//! flags; a bad value is an error naming its variable.

use std::time::Duration;

use object_store::{BackoffConfig, RetryConfig};

use crate::config::{parse_size, ConfigError};

/// Default requests in flight per remote source.
pub const DEFAULT_CONCURRENCY: usize = 16;
/// Default largest request, in bytes.
pub const DEFAULT_REQUEST_SIZE: u64 = 8 << 20;

/// Default bytes read from the end of an object in its first request (the
/// footer and, for most files, the page index); the Parquet layer's
/// metadata reader starts with as many.
pub const DEFAULT_FOOTER_HINT: u64 = 512 << 10;

/// Settings of remote reads.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreOptions {
    /// Requests in flight at most, per source (`GDSCAN_STORE_CONCURRENCY`).
    pub concurrency: usize,
    /// Bytes per request at most: longer ranges are split
    /// (`GDSCAN_STORE_REQUEST_SIZE`).
    pub request_size: u64,
    /// Bytes asked for from the end of the object when it is opened (one
    /// suffix request carries the size, the version and usually the whole
    /// footer and page index).
    pub footer_hint: u64,
    /// Connection timeout.
    pub connect_timeout: Duration,
    /// Timeout of one HTTP request, body included (`GDSCAN_STORE_TIMEOUT`, seconds).
    pub timeout: Duration,
    /// Retries of one request at most (`GDSCAN_STORE_RETRIES`).
    pub max_retries: usize,
    /// No retry starts later than this after a request's first attempt.
    pub retry_timeout: Duration,
    /// First wait before a retry (doubling up to `max_backoff`).
    pub init_backoff: Duration,
    /// Longest wait before a retry.
    pub max_backoff: Duration,
    /// object_store options applied over the environment's when a remote
    /// store is built, e.g. `("aws_endpoint", "http://127.0.0.1:9000")`,
    /// `("aws_allow_http", "true")` (none by default).
    pub object_store: Vec<(String, String)>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            concurrency: DEFAULT_CONCURRENCY,
            request_size: DEFAULT_REQUEST_SIZE,
            footer_hint: DEFAULT_FOOTER_HINT,
            connect_timeout: Duration::from_secs(5),
            timeout: Duration::from_secs(60),
            max_retries: 5,
            retry_timeout: Duration::from_secs(60),
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            object_store: Vec::new(),
        }
    }
}

fn invalid(name: &str, value: &str, reason: &str) -> ConfigError {
    ConfigError::Invalid {
        name: name.to_string(),
        value: value.to_string(),
        reason: reason.to_string(),
    }
}

fn positive(name: &str, value: &str) -> Result<u64, ConfigError> {
    match value.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(invalid(name, value, "expected a positive integer")),
    }
}

impl StoreOptions {
    /// The defaults with `GDSCAN_STORE_CONCURRENCY`, `GDSCAN_STORE_REQUEST_SIZE`,
    /// `GDSCAN_STORE_TIMEOUT` (seconds) and `GDSCAN_STORE_RETRIES` applied.
    pub fn from_env() -> Result<StoreOptions, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// As [`StoreOptions::from_env`], reading variables through `get`.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<StoreOptions, ConfigError> {
        let mut o = StoreOptions::default();
        if let Some(v) = get("GDSCAN_STORE_CONCURRENCY") {
            o.concurrency = positive("GDSCAN_STORE_CONCURRENCY", &v)? as usize;
        }
        if let Some(v) = get("GDSCAN_STORE_REQUEST_SIZE") {
            o.request_size = match parse_size(&v) {
                Ok(n) if n > 0 => n,
                Ok(_) => return Err(invalid("GDSCAN_STORE_REQUEST_SIZE", &v, "must be positive")),
                Err(source) => {
                    return Err(ConfigError::Size {
                        name: "GDSCAN_STORE_REQUEST_SIZE".into(),
                        source,
                    })
                }
            };
        }
        if let Some(v) = get("GDSCAN_STORE_TIMEOUT") {
            o.timeout = Duration::from_secs(positive("GDSCAN_STORE_TIMEOUT", &v)?);
        }
        if let Some(v) = get("GDSCAN_STORE_RETRIES") {
            o.max_retries = v.trim().parse().map_err(|_| {
                invalid(
                    "GDSCAN_STORE_RETRIES",
                    &v,
                    "expected a non-negative integer",
                )
            })?;
        }
        Ok(o)
    }

    /// object_store's retry settings from these options.
    pub fn retry_config(&self) -> RetryConfig {
        RetryConfig {
            backoff: BackoffConfig {
                init_backoff: self.init_backoff,
                max_backoff: self.max_backoff,
                base: 2.0,
            },
            max_retries: self.max_retries,
            retry_timeout: self.retry_timeout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn variables_override_defaults() {
        let o = StoreOptions::from_lookup(lookup(&[
            ("GDSCAN_STORE_CONCURRENCY", "64"),
            ("GDSCAN_STORE_REQUEST_SIZE", "4MiB"),
            ("GDSCAN_STORE_TIMEOUT", "7"),
            ("GDSCAN_STORE_RETRIES", "0"),
        ]))
        .unwrap();
        assert_eq!(o.concurrency, 64);
        assert_eq!(o.request_size, 4 << 20);
        assert_eq!(o.timeout, Duration::from_secs(7));
        assert_eq!(o.max_retries, 0);
        assert_eq!(o.retry_config().max_retries, 0);
        assert_eq!(
            StoreOptions::from_lookup(lookup(&[])).unwrap(),
            StoreOptions::default()
        );
    }

    #[test]
    fn bad_values_name_their_variable() {
        for (name, value) in [
            ("GDSCAN_STORE_CONCURRENCY", "0"),
            ("GDSCAN_STORE_CONCURRENCY", "many"),
            ("GDSCAN_STORE_REQUEST_SIZE", "0"),
            ("GDSCAN_STORE_REQUEST_SIZE", "1.5MiB"),
            ("GDSCAN_STORE_TIMEOUT", "-1"),
            ("GDSCAN_STORE_RETRIES", "x"),
        ] {
            let err = StoreOptions::from_lookup(lookup(&[(name, value)])).unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
        }
    }
}
