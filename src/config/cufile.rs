//! cuFile's parameters as settings: the cufile.json keys gdscan knows, their
//! types and cuFile's identifiers, and the overrides read from
//! `GDSCAN_CUFILE_<KEY>` or set through the builder. Applying them is
//! [`crate::cufile::params`]'s job (this layer only parses).

use cudarc::cufile::sys::{
    CUFileBoolConfigParameter_t as B, CUFileSizeTConfigParameter_t as S,
    CUFileStringConfigParameter_t as T,
};
use serde::Serialize;

use super::error::ConfigError;

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
pub(crate) fn env_name(key: &str) -> String {
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
}
