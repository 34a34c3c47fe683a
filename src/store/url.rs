//! From a location (a path or a URL) to a [`Source`]: the route decision.
//!
//! A plain path or a `file://` URL is a local file and goes to the engine.
//! `s3://`,
//! `s3a://`, `gs://`, `az://`, `abfs(s)://`, `adl://`, `azure://` and
//! `http(s)://` (recognising S3 and Azure hosts as object_store does) go to a
//! store built by [`super::builder`].

use std::path::PathBuf;
use std::sync::Arc;

use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreScheme};
use url::Url;

use super::error::{Result, StoreError};
use super::local::LocalSource;
use super::options::StoreOptions;
use super::redact::redact;
use super::remote::RemoteSource;
use super::source::Source;
use crate::engine::Engine;

/// Where a location leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A local file, read by the engine.
    Local(PathBuf),
    /// An object in a remote store.
    Remote {
        /// The URL as given.
        url: Url,
        /// The kind of store.
        scheme: ObjectStoreScheme,
        /// The object's path in the store.
        path: Path,
    },
}

fn bad(location: &str, reason: impl Into<String>) -> StoreError {
    StoreError::Location {
        location: redact(location),
        reason: reason.into(),
    }
}

/// Decides where `location` leads (pure: no I/O). A location is a URL when
/// it contains `://` or starts with `file:`; anything else is a path.
pub fn classify(location: &str) -> Result<Target> {
    if !location.contains("://") && !location.starts_with("file:") {
        return Ok(Target::Local(PathBuf::from(location)));
    }
    let url = Url::parse(location).map_err(|e| bad(location, format!("not a URL: {e}")))?;
    if url.scheme() == "file" {
        return url
            .to_file_path()
            .map(Target::Local)
            .map_err(|_| bad(location, "a file:// URL must name a local absolute path"));
    }
    let (scheme, path) = ObjectStoreScheme::parse(&url).map_err(|_| {
        bad(
            location,
            "unsupported scheme: expected a path, file://, s3://, gs://, az://, abfs://, http:// or https://",
        )
    })?;
    match scheme {
        ObjectStoreScheme::Local | ObjectStoreScheme::Memory => {
            Err(bad(location, format!("{scheme:?} URLs are not supported")))
        }
        _ if path.as_ref().is_empty() => Err(bad(location, "the URL names no object")),
        _ => Ok(Target::Remote { url, scheme, path }),
    }
}

/// Opens `location` (a path or a URL): local files read through the
/// process-wide engine, remote objects through a store configured from the
/// environment and `options` (its `object_store` pairs over the
/// environment's).
pub fn open(location: &str, options: &StoreOptions) -> Result<Arc<dyn Source>> {
    open_with(location, Engine::global()?, options)
}

/// Opens `location`; local files use `engine`.
pub(crate) fn open_with(
    location: &str,
    engine: Arc<Engine>,
    options: &StoreOptions,
) -> Result<Arc<dyn Source>> {
    match classify(location)? {
        Target::Local(path) => Ok(Arc::new(LocalSource::open(engine, path)?)),
        remote => {
            let config: Vec<(&str, &str)> = options
                .object_store
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            open_remote(location, remote, options, &config)
        }
    }
}

fn open_remote(
    location: &str,
    target: Target,
    options: &StoreOptions,
    config: &[(&str, &str)],
) -> Result<Arc<dyn Source>> {
    let Target::Remote { url, scheme, path } = target else {
        return Err(bad(location, "not a remote location"));
    };
    let (store, counts) = super::builder::build(&url, scheme, options, config)?;
    Ok(Arc::new(RemoteSource::open(
        store,
        path,
        redact(location),
        options.clone(),
        Some(counts),
    )?))
}

/// One object found under a prefix: its URL and size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedObject {
    /// The object's URL: the prefix URL followed by the rest of its name.
    pub location: String,
    /// Bytes.
    pub size: u64,
}

/// The objects under `location`, a remote URL ending with `/` (a folder of a
/// bucket or container, or its root), whose names end with `suffix`, sorted
/// by URL; listed through the store built for the URL (the environment's
/// credentials and endpoints, as for [`open`]). Objects in deeper folders
/// count too. A URL that does not end with `/`, a local path, or a store
/// that cannot list is an error.
#[cfg_attr(not(feature = "datafusion"), allow(dead_code))]
pub(crate) fn list_prefix(
    location: &str,
    options: &StoreOptions,
    suffix: &str,
) -> Result<Vec<ListedObject>> {
    if !location.ends_with('/') || !location.contains("://") {
        return Err(bad(location, "a prefix to list is a URL ending with '/'"));
    }
    let url = Url::parse(location).map_err(|e| bad(location, format!("not a URL: {e}")))?;
    let (scheme, prefix) = ObjectStoreScheme::parse(&url)
        .map_err(|_| bad(location, "unsupported scheme for listing"))?;
    if matches!(
        scheme,
        ObjectStoreScheme::Local | ObjectStoreScheme::Memory | ObjectStoreScheme::Http
    ) {
        return Err(bad(
            location,
            format!("{scheme:?} stores are not listed: name the objects one by one"),
        ));
    }
    // The URL up to the prefix; each object's URL is that plus its name.
    let tail = if prefix.as_ref().is_empty() {
        "/".to_string()
    } else {
        format!("{}/", prefix.as_ref())
    };
    let Some(base) = location.strip_suffix(tail.trim_start_matches('/')) else {
        return Err(bad(
            location,
            "the URL's prefix is written differently from the store's (percent-encoding?)",
        ));
    };
    let base = base.to_string();
    let (store, _counts) = super::builder::build(&url, scheme, options, &[])?;
    let shown = redact(location);
    let listed = super::runtime::block_on(async move {
        use futures::TryStreamExt;
        let prefix = (!prefix.as_ref().is_empty()).then_some(prefix);
        store
            .list(prefix.as_ref())
            .try_collect::<Vec<object_store::ObjectMeta>>()
            .await
    })?
    .map_err(|e| StoreError::from_store(&shown, "list", e))?;
    let mut out: Vec<ListedObject> = listed
        .into_iter()
        .filter(|m| m.location.as_ref().ends_with(suffix))
        .map(|m| ListedObject {
            location: format!("{base}{}", m.location),
            size: m.size,
        })
        .collect();
    out.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(location: &str) -> (ObjectStoreScheme, String) {
        match classify(location).unwrap() {
            Target::Remote { scheme, path, .. } => (scheme, path.to_string()),
            other => panic!("{location}: {other:?}"),
        }
    }

    #[test]
    fn paths_and_file_urls_are_local() {
        for (location, path) in [
            ("data/x.parquet", "data/x.parquet"),
            ("/tmp/x.parquet", "/tmp/x.parquet"),
            ("x:y.parquet", "x:y.parquet"),
            ("file:///tmp/a%20b.parquet", "/tmp/a b.parquet"),
            ("file:/tmp/x.parquet", "/tmp/x.parquet"),
        ] {
            assert_eq!(
                classify(location).unwrap(),
                Target::Local(PathBuf::from(path)),
                "{location}"
            );
        }
    }

    #[test]
    fn store_urls_are_remote_with_their_object_path() {
        assert_eq!(
            remote("s3://bucket/dir/lineitem.parquet"),
            (ObjectStoreScheme::AmazonS3, "dir/lineitem.parquet".into())
        );
        assert_eq!(remote("s3a://b/k").0, ObjectStoreScheme::AmazonS3);
        assert_eq!(
            remote("gs://bucket/k.parquet").0,
            ObjectStoreScheme::GoogleCloudStorage
        );
        assert_eq!(
            remote("az://container/k").0,
            ObjectStoreScheme::MicrosoftAzure
        );
        assert_eq!(
            remote("abfss://c@account.dfs.core.windows.net/k").0,
            ObjectStoreScheme::MicrosoftAzure
        );
        assert_eq!(
            remote("http://127.0.0.1:8080/data/x.parquet"),
            (ObjectStoreScheme::Http, "data/x.parquet".into())
        );
        assert_eq!(
            remote("https://s3.us-east-1.amazonaws.com/bucket/k").0,
            ObjectStoreScheme::AmazonS3
        );
    }

    #[test]
    fn unsupported_locations_are_typed_errors_naming_them() {
        for location in [
            "memory:///x",
            "ftp://host/x.parquet",
            "file://otherhost/x",
            "s3://bucket",
            "http://[bad",
        ] {
            match classify(location) {
                Err(StoreError::Location { location: l, .. }) => {
                    assert_eq!(l, location)
                }
                other => panic!("{location}: {other:?}"),
            }
        }
    }

    #[test]
    fn only_remote_urls_ending_with_a_slash_are_listed() {
        let options = StoreOptions::default();
        for (location, why) in [
            ("s3://bucket/table.parquet", "ending with '/'"),
            ("/data/tables/", "ending with '/'"),
            ("https://example.com/tables/", "not listed"),
        ] {
            match list_prefix(location, &options, ".parquet") {
                Err(StoreError::Location {
                    location: l,
                    reason,
                }) => {
                    assert_eq!(l, location);
                    assert!(reason.contains(why), "{location}: {reason}");
                }
                other => panic!("{location}: {other:?}"),
            }
        }
    }
}
