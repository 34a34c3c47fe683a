//! The cluster's processes with gdscan's codecs: Ballista's own scheduler
//! and executor, started in this process.

use std::net::SocketAddr;
use std::sync::Arc;

use ::datafusion::prelude::SessionConfig;
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;

use super::error::ClusterError;
use super::logical::GdsLogicalCodec;
use super::physical::GdsPhysicalCodec;
use super::session::{config, scheduler_state};

/// `HOST:PORT` split (the host may be a name; an IPv6 address goes in
/// brackets).
pub fn host_port(address: &str) -> Result<(String, u16), ClusterError> {
    let bad = |reason: &str| ClusterError::Address {
        address: address.to_string(),
        reason: reason.to_string(),
    };
    let (host, port) = address.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let port = port.parse::<u16>().map_err(|e| bad(&e.to_string()))?;
    Ok((host.to_string(), port))
}

fn ballista(
    what: &'static str,
) -> impl FnOnce(ballista_core::error::BallistaError) -> ClusterError {
    move |e| ClusterError::Ballista {
        what,
        source: Box::new(e),
    }
}

/// Runs a Ballista scheduler on `bind` until it stops: its sessions plan
/// with gdscan's codecs and mark gdscan's scans for the executors. An
/// executor not heard from for `executor_timeout_s` seconds is taken as
/// lost (its tasks run again elsewhere).
pub async fn run_scheduler(bind: SocketAddr, executor_timeout_s: u64) -> Result<(), ClusterError> {
    let config = SchedulerConfig {
        executor_timeout_seconds: executor_timeout_s,
        bind_host: bind.ip().to_string(),
        bind_port: bind.port(),
        external_host: bind.ip().to_string(),
        override_config_producer: Some(Arc::new(|| config(None))),
        override_session_builder: Some(Arc::new(|c: SessionConfig| scheduler_state(c))),
        override_logical_codec: Some(Arc::new(GdsLogicalCodec::default())),
        override_physical_codec: Some(Arc::new(GdsPhysicalCodec::default())),
        ..SchedulerConfig::default()
    };
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(ballista("scheduler"))?;
    start_server(cluster, bind, Arc::new(config))
        .await
        .map_err(ballista("scheduler"))
}

/// What an executor is started with.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The scheduler, `HOST:PORT`.
    pub scheduler: String,
    /// Where the executor's Arrow Flight service listens (other executors
    /// and the client fetch shuffle and result partitions there); the host
    /// is also the address the executor advertises.
    pub bind: SocketAddr,
    /// The port of its gRPC service.
    pub grpc_port: u16,
    /// Tasks it runs at once (0: the available CPUs).
    pub concurrent_tasks: usize,
    /// Where it keeps shuffle files (None: a temporary folder).
    pub work_dir: Option<String>,
    /// Seconds between its heartbeats to the scheduler.
    pub heartbeat_interval_s: u64,
}

/// Runs a Ballista executor until it stops: it decodes gdscan's scans
/// with gdscan's reader factory.
pub async fn run_executor(options: ExecutorOptions) -> Result<(), ClusterError> {
    let (scheduler_host, scheduler_port) = host_port(&options.scheduler)?;
    let config = ExecutorProcessConfig {
        bind_host: options.bind.ip().to_string(),
        external_host: Some(options.bind.ip().to_string()),
        port: options.bind.port(),
        grpc_port: options.grpc_port,
        scheduler_host,
        scheduler_port,
        scheduler_connect_timeout_seconds: 30,
        vcores: options.concurrent_tasks,
        work_dir: options.work_dir,
        executor_heartbeat_interval_seconds: options.heartbeat_interval_s,
        override_config_producer: Some(Arc::new(|| config(None))),
        override_logical_codec: Some(Arc::new(GdsLogicalCodec::default())),
        override_physical_codec: Some(Arc::new(GdsPhysicalCodec::default())),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(ballista("executor"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_split_into_host_and_port_or_fail() {
        assert_eq!(
            host_port("127.0.0.1:50050").unwrap(),
            ("127.0.0.1".into(), 50050)
        );
        assert_eq!(host_port("[::1]:7").unwrap(), ("::1".into(), 7));
        assert!(matches!(
            host_port("127.0.0.1"),
            Err(ClusterError::Address { .. })
        ));
        assert!(matches!(
            host_port(":80"),
            Err(ClusterError::Address { .. })
        ));
        assert!(matches!(
            host_port("h:99999"),
            Err(ClusterError::Address { .. })
        ));
    }
}
