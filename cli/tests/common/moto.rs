//! moto's S3 server (PyPI `moto[server]`) on a free port of 127.0.0.1,
//! started by the test and killed when dropped. It also exits by itself when
//! the test process ends (it watches its standard input), so none outlives
//! a crashed test run. A server that cannot start fails the test.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

/// Credentials the tests sign with (moto accepts any unless told otherwise).
pub const KEY_ID: &str = "gdscan-test";
/// The matching secret.
pub const SECRET: &str = "gdscan-test-secret";

/// Runs moto's server module, exiting when standard input closes.
const LAUNCHER: &str = "import os, sys, threading\n\
from moto.server import main\n\
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()\n\
main(sys.argv[1:])\n";

/// A running moto server.
pub struct Moto {
    child: Child,
    log: tempfile::NamedTempFile,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    port: u16,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Moto {
    /// Starts a server; `env` is added to its environment (e.g.
    /// `INITIAL_NO_AUTH_ACTION_COUNT` to turn authentication on).
    pub fn start(env: &[(&str, &str)]) -> Moto {
        let python = std::env::var("GDSCAN_PYTHON").unwrap_or_else(|_| "python3".into());
        let port = free_port();
        // Its request log goes to a file: a pipe nobody reads would fill
        // and stall the server.
        let log = tempfile::NamedTempFile::new().unwrap();
        let mut cmd = Command::new(&python);
        cmd.args(["-c", LAUNCHER, "-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log.reopen().unwrap()));
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start moto with {python}: {e}"));
        let mut moto = Moto {
            child,
            log,
            endpoint: format!("http://127.0.0.1:{port}"),
            port,
        };
        moto.wait_ready();
        moto
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let err = std::fs::read_to_string(self.log.path()).unwrap_or_default();
                panic!("moto exited ({status}) before serving: {err}");
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "moto did not start within 60 s on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Creates `bucket` (an unsigned `PUT /bucket`).
    pub fn create_bucket(&self, bucket: &str) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            s,
            "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )
        .unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        assert!(
            answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"),
            "create bucket {bucket}: {answer}"
        );
    }

    /// object_store options for this server (endpoint, test credentials,
    /// plain HTTP), as `StoreOptions::object_store` takes them.
    pub fn config(&self) -> Vec<(&'static str, String)> {
        vec![
            ("aws_endpoint", self.endpoint.clone()),
            ("aws_access_key_id", KEY_ID.into()),
            ("aws_secret_access_key", SECRET.into()),
            ("aws_region", "us-east-1".into()),
            ("aws_allow_http", "true".into()),
        ]
    }

    /// The environment a `gdscan` process needs to reach this server.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ACCESS_KEY_ID", KEY_ID.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }

    /// Uploads `data` to `bucket/key`.
    pub fn upload(&self, bucket: &str, key: &str, data: Vec<u8>) {
        let store: Arc<dyn ObjectStore> = Arc::new(
            AmazonS3Builder::new()
                .with_endpoint(&self.endpoint)
                .with_bucket_name(bucket)
                .with_access_key_id(KEY_ID)
                .with_secret_access_key(SECRET)
                .with_region("us-east-1")
                .with_allow_http(true)
                .build()
                .unwrap(),
        );
        let path = Path::from(key);
        gdscan::store::block_on(async move { store.put(&path, data.into()).await })
            .unwrap()
            .unwrap_or_else(|e| panic!("upload {bucket}/{key}: {e}"));
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
