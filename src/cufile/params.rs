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

use cudarc::cufile::sys::{
    CUFileBoolConfigParameter_t as B, CUFileSizeTConfigParameter_t as S,
    CUFileStringConfigParameter_t as T,
};
use serde::Serialize;

use super::library::Api;
use super::status::check;
use crate::config::ConfigError;
use crate::error::{Error, Result};

/// A parameter's type and cuFile's identifier for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// `cuFileGetParameterBool`.
    Bool(u32),
    /// `cuFileGetParameterSizeT`.
    Size(u32),
    /// `cuFileGetParameterString`.
    Text(u32),
}

/// One cufile.json key.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// The key as cufile.json spells it, e.g. "execution.parallel_io".
    pub key: &'static str,
    /// Its type and identifier.
    pub kind: ParamKind,
}

/// The keys gdscan reports and can set.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "properties.allow_compat_mode",
        kind: ParamKind::Bool(B::CUFILE_PARAM_PROPERTIES_ALLOW_COMPAT_MODE as u32),
    },
    ParamSpec {
        key: "properties.force_compat_mode",
        kind: ParamKind::Bool(B::CUFILE_PARAM_FORCE_COMPAT_MODE as u32),
    },
    ParamSpec {
        key: "properties.use_poll_mode",
        kind: ParamKind::Bool(B::CUFILE_PARAM_PROPERTIES_USE_POLL_MODE as u32),
    },
    ParamSpec {
        key: "properties.max_direct_io_size_kb",
        kind: ParamKind::Size(S::CUFILE_PARAM_PROPERTIES_MAX_DIRECT_IO_SIZE_KB as u32),
    },
    ParamSpec {
        key: "properties.max_device_cache_size_kb",
        kind: ParamKind::Size(S::CUFILE_PARAM_PROPERTIES_MAX_DEVICE_CACHE_SIZE_KB as u32),
    },
    ParamSpec {
        key: "properties.per_buffer_cache_size_kb",
        kind: ParamKind::Size(S::CUFILE_PARAM_PROPERTIES_PER_BUFFER_CACHE_SIZE_KB as u32),
    },
    ParamSpec {
        key: "properties.max_device_pinned_mem_size_kb",
        kind: ParamKind::Size(S::CUFILE_PARAM_PROPERTIES_MAX_DEVICE_PINNED_MEM_SIZE_KB as u32),
    },
    ParamSpec {
        key: "properties.poll_mode_max_size_kb",
        kind: ParamKind::Size(S::CUFILE_PARAM_POLLTHRESHOLD_SIZE_KB as u32),
    },
    ParamSpec {
        key: "execution.parallel_io",
        kind: ParamKind::Bool(B::CUFILE_PARAM_EXECUTION_PARALLEL_IO as u32),
    },
    ParamSpec {
        key: "execution.min_io_threshold_size_kb",
        kind: ParamKind::Size(S::CUFILE_PARAM_EXECUTION_MIN_IO_THRESHOLD_SIZE_KB as u32),
    },
    ParamSpec {
        key: "execution.max_io_threads",
        kind: ParamKind::Size(S::CUFILE_PARAM_EXECUTION_MAX_IO_THREADS as u32),
    },
    ParamSpec {
        key: "execution.max_request_parallelism",
        kind: ParamKind::Size(S::CUFILE_PARAM_EXECUTION_MAX_REQUEST_PARALLELISM as u32),
    },
    ParamSpec {
        key: "execution.max_io_queue_depth",
        kind: ParamKind::Size(S::CUFILE_PARAM_EXECUTION_MAX_IO_QUEUE_DEPTH as u32),
    },
    ParamSpec {
        key: "profile.cufile_stats",
        kind: ParamKind::Size(S::CUFILE_PARAM_PROFILE_STATS as u32),
    },
    ParamSpec {
        key: "logging.level",
        kind: ParamKind::Text(T::CUFILE_PARAM_LOGGING_LEVEL as u32),
    },
];

/// A parameter's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// A boolean key.
    Bool(bool),
    /// A size or count key.
    Size(usize),
    /// A string key.
    Text(String),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Size(n) => write!(f, "{n}"),
            ParamValue::Text(s) => f.write_str(s),
        }
    }
}

/// The spec of `key`, if gdscan knows it.
pub fn spec(key: &str) -> Option<&'static ParamSpec> {
    PARAMS.iter().find(|p| p.key == key)
}

/// The environment variable that overrides `key`.
pub fn env_name(key: &str) -> String {
    format!(
        "GDSCAN_CUFILE_{}",
        key.to_ascii_uppercase().replace('.', "_")
    )
}

fn parse_value(
    spec: &ParamSpec,
    name: &str,
    text: &str,
) -> std::result::Result<ParamValue, ConfigError> {
    let bad = |reason: &str| ConfigError::Invalid {
        name: name.to_string(),
        value: text.to_string(),
        reason: reason.to_string(),
    };
    let t = text.trim();
    match spec.kind {
        ParamKind::Bool(_) => match t.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Ok(ParamValue::Bool(true)),
            "false" | "no" | "off" | "0" => Ok(ParamValue::Bool(false)),
            _ => Err(bad("expected true or false")),
        },
        ParamKind::Size(_) => t
            .parse::<usize>()
            .map(ParamValue::Size)
            .map_err(|_| bad("expected a non-negative integer")),
        ParamKind::Text(_) if t.is_empty() => Err(bad("expected a non-empty value")),
        ParamKind::Text(_) => Ok(ParamValue::Text(t.to_string())),
    }
}

/// cuFile parameters that gdscan sets before the driver opens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CuFileOverrides {
    values: Vec<(String, ParamValue)>,
}

impl CuFileOverrides {
    /// Reads `GDSCAN_CUFILE_*` variables through `lookup`.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> std::result::Result<Self, ConfigError> {
        let mut out = CuFileOverrides::default();
        for spec in PARAMS {
            let name = env_name(spec.key);
            if let Some(text) = lookup(&name) {
                let value = parse_value(spec, &name, &text)?;
                out.values.push((spec.key.to_string(), value));
            }
        }
        Ok(out)
    }

    /// Sets `key` (a cufile.json key gdscan knows) to `value` given as text.
    pub fn set(mut self, key: &str, value: &str) -> std::result::Result<Self, ConfigError> {
        let spec = spec(key).ok_or_else(|| ConfigError::Invalid {
            name: key.to_string(),
            value: value.to_string(),
            reason: format!(
                "not a cuFile parameter gdscan knows (known: {})",
                PARAMS.iter().map(|p| p.key).collect::<Vec<_>>().join(", ")
            ),
        })?;
        let parsed = parse_value(spec, key, value)?;
        self.values.retain(|(k, _)| k != key);
        self.values.push((key.to_string(), parsed));
        Ok(self)
    }

    /// The override of `key`, if any.
    pub fn get(&self, key: &str) -> Option<&ParamValue> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether there are no overrides.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// All overrides in the order given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }
}

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
    pub problem: Option<String>,
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
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                serde_json::from_str(&strip_comments(&text)).map_err(|e| e.to_string())
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
pub fn strip_comments(text: &str) -> String {
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
    /// Why the value could not be read, if so.
    pub error: Option<String>,
}

fn get(api: &Api, spec: &ParamSpec) -> Result<ParamValue> {
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
/// bounds, or one cuFile refuses, is [`Error::CuFileParam`].
pub fn apply(api: &Api, overrides: &CuFileOverrides) -> Result<()> {
    for (key, value) in overrides.iter() {
        let spec = spec(key).expect("overrides only hold known keys");
        let refused = |reason: String| Error::CuFileParam {
            key: key.to_string(),
            value: value.to_string(),
            reason,
        };
        if let (Some((lo, hi)), ParamValue::Size(v)) = (bounds(api, spec), value) {
            if *v < lo || *v > hi {
                return Err(refused(format!("cuFile accepts {lo}..={hi}")));
            }
        }
        // SAFETY: identifiers match their setter's type.
        let status = unsafe {
            match (spec.kind, value) {
                (ParamKind::Bool(id), ParamValue::Bool(b)) => (api.set_bool)(id, *b),
                (ParamKind::Size(id), ParamValue::Size(n)) => (api.set_size_t)(id, *n),
                (ParamKind::Text(id), ParamValue::Text(s)) => {
                    let c = CString::new(s.as_str()).map_err(|e| refused(e.to_string()))?;
                    (api.set_string)(id, c.as_ptr())
                }
                _ => unreachable!("values are parsed by their spec's kind"),
            }
        };
        check("cuFileSetParameter", status).map_err(|e| refused(e.to_string()))?;
    }
    Ok(())
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
                Err(e) => (None, Some(e.to_string())),
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
    use std::collections::HashMap;

    #[test]
    fn env_names_follow_the_keys() {
        assert_eq!(
            env_name("execution.parallel_io"),
            "GDSCAN_CUFILE_EXECUTION_PARALLEL_IO"
        );
        assert_eq!(
            env_name("properties.max_direct_io_size_kb"),
            "GDSCAN_CUFILE_PROPERTIES_MAX_DIRECT_IO_SIZE_KB"
        );
    }

    #[test]
    fn overrides_parse_from_the_environment() {
        let env: HashMap<&str, &str> = [
            ("GDSCAN_CUFILE_EXECUTION_PARALLEL_IO", "false"),
            ("GDSCAN_CUFILE_EXECUTION_MAX_IO_THREADS", " 8 "),
            ("GDSCAN_CUFILE_LOGGING_LEVEL", "INFO"),
        ]
        .into();
        let o = CuFileOverrides::from_lookup(|k| env.get(k).map(|v| v.to_string())).unwrap();
        assert_eq!(
            o.get("execution.parallel_io"),
            Some(&ParamValue::Bool(false))
        );
        assert_eq!(
            o.get("execution.max_io_threads"),
            Some(&ParamValue::Size(8))
        );
        assert_eq!(
            o.get("logging.level"),
            Some(&ParamValue::Text("INFO".into()))
        );
        assert_eq!(o.get("properties.allow_compat_mode"), None);
    }

    #[test]
    fn bad_override_values_name_the_variable() {
        let e = CuFileOverrides::from_lookup(|k| {
            (k == "GDSCAN_CUFILE_EXECUTION_MAX_IO_THREADS").then(|| "-3".to_string())
        })
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("GDSCAN_CUFILE_EXECUTION_MAX_IO_THREADS"),
            "{e}"
        );
        let e = CuFileOverrides::default()
            .set("execution.parallel_io", "maybe")
            .unwrap_err();
        assert!(e.to_string().contains("execution.parallel_io"));
        let e = CuFileOverrides::default()
            .set("no.such_key", "1")
            .unwrap_err();
        assert!(e.to_string().contains("not a cuFile parameter"));
    }

    #[test]
    fn builder_set_replaces_earlier_values() {
        let o = CuFileOverrides::default()
            .set("execution.max_io_threads", "4")
            .unwrap()
            .set("execution.max_io_threads", "16")
            .unwrap();
        assert_eq!(o.iter().count(), 1);
        assert_eq!(
            o.get("execution.max_io_threads"),
            Some(&ParamValue::Size(16))
        );
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
