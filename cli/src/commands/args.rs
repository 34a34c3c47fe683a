//! Arguments shared by several commands: engine settings, store options,
//! where bytes land, sizes written as "4MiB".

use clap::Args;

use gdscan::config::{parse_size, CompatMode, DeviceReadPath, Settings};
use gdscan::store::StoreOptions;

use crate::error::Result;

/// Engine settings shared by the commands; each overrides the KVIKIO_* environment.
#[derive(Debug, Clone, Args)]
pub struct EngineArgs {
    /// Worker threads (KVIKIO_NTHREADS).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Task size, e.g. 4MiB (KVIKIO_TASK_SIZE).
    #[arg(long, value_parser = parse_size_arg)]
    pub task_size: Option<u64>,
    /// Bounce buffer size, e.g. 16MiB (KVIKIO_BOUNCE_BUFFER_SIZE).
    #[arg(long, value_parser = parse_size_arg)]
    pub bounce_buffer_size: Option<u64>,
    /// on | off | auto (KVIKIO_COMPAT_MODE).
    #[arg(long)]
    pub compat: Option<CompatMode>,
    /// Device-read route: auto | bounce | mmap (GDSCAN_DEVICE_READ_PATH).
    #[arg(long)]
    pub route: Option<DeviceReadPath>,
    /// Use O_DIRECT for reads where aligned (KVIKIO_AUTO_DIRECT_IO_READ).
    #[arg(long)]
    pub direct: bool,
    /// Requests below this size skip cuFile, e.g. 16KiB (KVIKIO_GDS_THRESHOLD).
    #[arg(long, value_parser = parse_size_arg)]
    pub gds_threshold: Option<u64>,
    /// Set a cuFile parameter before its driver opens, e.g.
    /// `--cufile execution.parallel_io=true` (repeatable; GDSCAN_CUFILE_* in the environment).
    #[arg(long = "cufile", value_name = "KEY=VALUE")]
    pub cufile_params: Vec<String>,
}

impl EngineArgs {
    /// Task size of a gdscan table's local reads: None (the engine's) when
    /// `--task-size` is given, else the tables' default (16 MiB unless
    /// `KVIKIO_TASK_SIZE` is set).
    #[cfg(feature = "datafusion")]
    pub fn table_task_size(&self) -> Result<Option<usize>> {
        let vars = gdscan::config::decode::TableVars::from_env()?;
        Ok(match self.task_size {
            Some(_) => None,
            None => {
                gdscan::datafusion::GdsTableOptions::default_task_size(vars.engine_task_size_set)
            }
        })
    }

    /// The environment's settings with these flags applied.
    pub fn settings(&self) -> Result<Settings> {
        let mut b = gdscan::config::SettingsBuilder::from_env()?;
        if let Some(t) = self.threads {
            b = b.num_threads(t);
        }
        if let Some(t) = self.task_size {
            b = b.task_size(t as usize);
        }
        if let Some(t) = self.bounce_buffer_size {
            b = b.bounce_buffer_size(t as usize);
        }
        if let Some(c) = self.compat {
            b = b.compat_mode(c);
        }
        if let Some(r) = self.route {
            b = b.device_read_path(r);
        }
        if self.direct {
            b = b.auto_direct_io_read(true);
        }
        if let Some(t) = self.gds_threshold {
            b = b.gds_threshold(t as usize);
        }
        if !self.cufile_params.is_empty() {
            let mut overrides = gdscan::config::Settings::from_env()?.cufile;
            for kv in &self.cufile_params {
                let (key, value) =
                    kv.split_once('=')
                        .ok_or_else(|| gdscan::config::ConfigError::Invalid {
                            name: "--cufile".into(),
                            value: kv.clone(),
                            reason: "expected KEY=VALUE".into(),
                        })?;
                overrides = overrides.set(key.trim(), value)?;
            }
            b = b.cufile(overrides);
        }
        Ok(b.build()?)
    }
}

/// Remote-store settings, for URLs; each overrides its `GDSCAN_STORE_*` variable.
#[derive(Debug, Clone, Default, Args)]
pub struct StoreArgs {
    /// Requests in flight at most per remote object (GDSCAN_STORE_CONCURRENCY, default 16).
    #[arg(long)]
    pub store_concurrency: Option<usize>,
    /// Bytes per request at most; longer ranges are split, e.g. 8MiB
    /// (GDSCAN_STORE_REQUEST_SIZE, default 8MiB).
    #[arg(long, value_parser = parse_size_arg)]
    pub store_request_size: Option<u64>,
    /// Seconds one HTTP request may take, body included (GDSCAN_STORE_TIMEOUT, default 60).
    #[arg(long)]
    pub store_timeout: Option<u64>,
    /// Retries of one request at most (GDSCAN_STORE_RETRIES, default 5).
    #[arg(long)]
    pub store_retries: Option<usize>,
}

impl StoreArgs {
    /// The environment's store options with these flags applied.
    pub fn options(&self) -> Result<StoreOptions> {
        let mut o = StoreOptions::from_env()?;
        let invalid = |name: &str, value: String| gdscan::config::ConfigError::Invalid {
            name: name.into(),
            value,
            reason: "must be positive".into(),
        };
        if let Some(c) = self.store_concurrency {
            if c == 0 {
                return Err(invalid("--store-concurrency", c.to_string()).into());
            }
            o.concurrency = c;
        }
        if let Some(r) = self.store_request_size {
            if r == 0 {
                return Err(invalid("--store-request-size", r.to_string()).into());
            }
            o.request_size = r;
        }
        if let Some(t) = self.store_timeout {
            if t == 0 {
                return Err(invalid("--store-timeout", t.to_string()).into());
            }
            o.timeout = std::time::Duration::from_secs(t);
        }
        if let Some(r) = self.store_retries {
            o.max_retries = r;
        }
        Ok(o)
    }
}

/// Where bytes land: a device (the default, ordinal 0) or host memory.
#[derive(Debug, Clone, Copy, Args)]
pub struct Destination {
    /// Use host memory instead of a device.
    #[arg(long, conflicts_with = "device")]
    pub host: bool,
    /// CUDA device ordinal (default 0).
    #[arg(long)]
    pub device: Option<usize>,
}

impl Destination {
    /// The device ordinal, or None for host memory.
    pub fn device(&self) -> Option<usize> {
        (!self.host).then(|| self.device.unwrap_or(0))
    }
}

/// clap adapter for human sizes ("4MiB").
pub(crate) fn parse_size_arg(s: &str) -> std::result::Result<u64, gdscan::config::SizeError> {
    parse_size(s)
}
