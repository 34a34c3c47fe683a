//! cuFile's own parameters (the keys of cufile.json): reading the effective
//! values, knowing where each came from, and setting them from gdscan.
//!
//! gdscan can override a key through [`CuFileOverrides`] (the settings
//! builder) or an environment variable named after the key:
//! `GDSCAN_CUFILE_` + the key in capitals with dots as underscores, e.g.
//! `GDSCAN_CUFILE_EXECUTION_PARALLEL_IO=true`. Overrides are applied with
//! `cuFileSetParameter*` before the driver opens; a value outside cuFile's
//! own bounds (`cuFileGetParameterMinMaxValue`) is an error.

use std::ffi::{c_char, CString};
use std::sync::Arc;

use serde::Serialize;

use super::error::{ConfigFileError, CuFileError, ParamRefusal};
use super::library::Api;
use super::status::check;

use crate::config::{spec, CuFileOverrides, ParamKind, ParamSpec, ParamValue, PARAMS};

/// Where cuFile reads its configuration from.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigSource {
    /// The file: `CUFILE_ENV_PATH_JSON`, else /etc/cufile.json.
    pub path: String,
    /// Whether the path came from `CUFILE_ENV_PATH_JSON`.
    pub from_env: bool,
    /// Whether the file exists and parses (after removing `//` comments).
    pub readable: bool,
    /// Why not, when it does not.
    pub problem: Option<ConfigFileError>,
    #[serde(skip)]
    json: Option<serde_json::Value>,
}

impl ConfigSource {
    /// Locates and parses the file cuFile will read.
    pub fn locate() -> ConfigSource {
        let (path, from_env) = match std::env::var("CUFILE_ENV_PATH_JSON") {
            Ok(p) if !p.is_empty() => (p, true),
            _ => ("/etc/cufile.json".to_string(), false),
        };
        ConfigSource::read(path, from_env)
    }

    /// Reads and parses the file at `path`.
    fn read(path: String, from_env: bool) -> ConfigSource {
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| ConfigFileError::Read(Arc::new(e)))
            .and_then(|text| {
                serde_json::from_str(&strip_comments(&text))
                    .map_err(|e| ConfigFileError::Parse(Arc::new(e)))
            });
        let (json, problem) = match parsed {
            Ok(v) => (Some(v), None),
            Err(e) => (None, Some(e)),
        };
        ConfigSource {
            path,
            from_env,
            readable: json.is_some(),
            problem,
            json,
        }
    }

    /// The boolean the file gives `key` (dotted path); None where it sets
    /// none (or not a boolean).
    pub fn bool_value(&self, key: &str) -> Option<bool> {
        let mut node = self.json.as_ref()?;
        for part in key.split('.') {
            node = node.get(part)?;
        }
        node.as_bool()
    }

    /// Whether the file sets `key` (dotted path).
    pub fn sets(&self, key: &str) -> bool {
        let mut node = match &self.json {
            Some(v) => v,
            None => return false,
        };
        for part in key.split('.') {
            match node.get(part) {
                Some(next) => node = next,
                None => return false,
            }
        }
        true
    }
}

/// Removes `//` comments (outside strings), which cufile.json allows.
pub(crate) fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut escaped = false;
        let mut cut = line.len();
        let bytes = line.as_bytes();
        for i in 0..bytes.len() {
            let c = bytes[i];
            if in_string {
                if escaped {
                    escaped = false;
                } else if c == b'\\' {
                    escaped = true;
                } else if c == b'"' {
                    in_string = false;
                }
            } else if c == b'"' {
                in_string = true;
            } else if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
                cut = i;
                break;
            }
        }
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    out
}

/// Where an effective value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParamSource {
    /// Set by gdscan (builder or `GDSCAN_CUFILE_*`).
    Gdscan,
    /// Present in the configuration file.
    CufileJson,
    /// Neither: cuFile's built-in default.
    Default,
}

/// One parameter as cuFile reports it.
#[derive(Debug, Clone, Serialize)]
pub struct ParamReport {
    /// The key.
    pub key: &'static str,
    /// The effective value (None when cuFile would not say).
    pub value: Option<ParamValue>,
    /// Where it came from.
    pub source: ParamSource,
    /// cuFile's bounds, for size keys.
    pub bounds: Option<(usize, usize)>,
    /// Why the value could not be read, if so (serialized as its message).
    #[serde(serialize_with = "serialize_message")]
    pub error: Option<CuFileError>,
}

fn get(api: &Api, spec: &ParamSpec) -> Result<ParamValue, CuFileError> {
    // SAFETY: each call gets a valid identifier of its type and a valid out pointer.
    unsafe {
        match spec.kind {
            ParamKind::Bool(id) => {
                let mut v = false;
                check("cuFileGetParameterBool", (api.get_bool)(id, &mut v))?;
                Ok(ParamValue::Bool(v))
            }
            ParamKind::Size(id) => {
                let mut v = 0usize;
                check("cuFileGetParameterSizeT", (api.get_size_t)(id, &mut v))?;
                Ok(ParamValue::Size(v))
            }
            ParamKind::Text(id) => {
                let mut buf = [0 as c_char; 256];
                check(
                    "cuFileGetParameterString",
                    (api.get_string)(id, buf.as_mut_ptr(), buf.len() as i32),
                )?;
                buf[255] = 0;
                let s = std::ffi::CStr::from_ptr(buf.as_ptr());
                Ok(ParamValue::Text(s.to_string_lossy().into_owned()))
            }
        }
    }
}

fn bounds(api: &Api, spec: &ParamSpec) -> Option<(usize, usize)> {
    match spec.kind {
        ParamKind::Size(id) => {
            let (mut lo, mut hi) = (0usize, 0usize);
            // SAFETY: valid identifier and out pointers.
            let status = unsafe { (api.get_min_max)(id, &mut lo, &mut hi) };
            (status.err == 0).then_some((lo, hi))
        }
        _ => None,
    }
}

/// Applies `overrides` (before the driver opens). A value outside cuFile's
/// bounds, or one cuFile refuses, is [`CuFileError::ParamRefused`].
pub fn apply(api: &Api, overrides: &CuFileOverrides) -> Result<(), CuFileError> {
    for (key, value) in overrides.iter() {
        let spec = spec(key).expect("overrides only hold known keys");
        let refused = |reason: ParamRefusal| CuFileError::ParamRefused {
            key: key.to_string(),
            value: value.to_string(),
            reason,
        };
        if let (Some((min, max)), ParamValue::Size(v)) = (bounds(api, spec), value) {
            if *v < min || *v > max {
                return Err(refused(ParamRefusal::OutOfBounds { min, max }));
            }
        }
        // SAFETY: identifiers match their setter's type.
        let status = unsafe {
            match (spec.kind, value) {
                (ParamKind::Bool(id), ParamValue::Bool(b)) => (api.set_bool)(id, *b),
                (ParamKind::Size(id), ParamValue::Size(n)) => (api.set_size_t)(id, *n),
                (ParamKind::Text(id), ParamValue::Text(s)) => {
                    let c = CString::new(s.as_str()).map_err(|e| refused(e.into()))?;
                    (api.set_string)(id, c.as_ptr())
                }
                _ => unreachable!("values are parsed by their spec's kind"),
            }
        };
        check("cuFileSetParameter", status)
            .map_err(|e| refused(ParamRefusal::Call(Box::new(e))))?;
    }
    Ok(())
}

/// Writes an error as its message (or null), as reports show it.
fn serialize_message<S: serde::Serializer>(
    error: &Option<CuFileError>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match error {
        Some(e) => serializer.serialize_some(&e.to_string()),
        None => serializer.serialize_none(),
    }
}

/// Every known parameter's effective value and source. Call it after the
/// driver opened: before that, cuFile 1.15 reports its built-in defaults
/// rather than the values of cufile.json (seen on the H200:
/// allow_compat_mode read false before `cuFileDriverOpen`, true after).
pub fn report(api: &Api, overrides: &CuFileOverrides, config: &ConfigSource) -> Vec<ParamReport> {
    PARAMS
        .iter()
        .map(|spec| {
            let (value, error) = match get(api, spec) {
                Ok(v) => (Some(v), None),
                Err(e) => (None, Some(e)),
            };
            let source = if overrides.get(spec.key).is_some() {
                ParamSource::Gdscan
            } else if config.sets(spec.key) {
                ParamSource::CufileJson
            } else {
                ParamSource::Default
            };
            ParamReport {
                key: spec.key,
                value,
                source,
                bounds: bounds(api, spec),
                error,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_or_invalid_config_file_keeps_its_error_as_the_source() {
        use std::error::Error as _;
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let src = ConfigSource::read(missing.display().to_string(), true);
        assert!(!src.readable);
        let problem = src.problem.as_ref().unwrap();
        let io = problem.source().unwrap().downcast_ref::<std::io::Error>();
        assert_eq!(io.unwrap().kind(), std::io::ErrorKind::NotFound);

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{ \"execution\": ").unwrap();
        let src = ConfigSource::read(bad.display().to_string(), false);
        let problem = src.problem.as_ref().unwrap();
        let json = problem.source().unwrap();
        assert!(json.downcast_ref::<serde_json::Error>().unwrap().is_eof());
        // Reports show the message, as they did when it was a string.
        let shown = serde_json::to_value(&src).unwrap();
        assert_eq!(shown["problem"], serde_json::json!(json.to_string()));
    }

    #[test]
    fn config_file_with_comments_parses_and_reports_keys() {
        let text = r#"{
            // a comment
            "execution": { "parallel_io": true, // trailing
                           "max_io_threads": 4 },
            "logging": { "dir": "/var//log" }
        }"#;
        let json: serde_json::Value = serde_json::from_str(&strip_comments(text)).unwrap();
        let src = ConfigSource {
            path: "x".into(),
            from_env: false,
            readable: true,
            problem: None,
            json: Some(json),
        };
        assert!(src.sets("execution.parallel_io"));
        assert!(src.sets("execution.max_io_threads"));
        assert!(!src.sets("execution.min_io_threshold_size_kb"));
        assert!(
            src.sets("logging.dir"),
            "// inside a string is not a comment"
        );
    }
}
