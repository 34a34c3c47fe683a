//! A small HTTP/1.1 server with Range support on 127.0.0.1, for the store
//! tests: keep-alive connections, one thread each; GET and HEAD with
//! `bytes=a-b`, `bytes=a-` and `bytes=-n`; `If-Match`; and faults injected
//! one per GET, in order (a status, a body cut mid-way, a body shorter than
//! its range), or a stop after a number of GETs.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the next GET gets instead of its normal answer.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// This status, with a short body.
    Status(u16),
    /// The full headers, then this many body bytes, then the connection closes.
    CutBody(usize),
    /// Headers claiming the full range, but a body (and Content-Length) of
    /// this many bytes.
    ShortBody(usize),
    /// Waits this long, then answers normally.
    Stall(Duration),
    /// Closes the connection without answering.
    Reset,
}

struct Object {
    data: Arc<Vec<u8>>,
    etag: Option<String>,
}

#[derive(Default)]
struct State {
    objects: Mutex<HashMap<String, Object>>,
    faults: Mutex<VecDeque<Fault>>,
    stop_after: Mutex<Option<usize>>,
    stopped: AtomicBool,
    gets: AtomicUsize,
    conns: Mutex<Vec<TcpStream>>,
}

/// The server; stopped on drop.
pub struct RangeServer {
    addr: SocketAddr,
    state: Arc<State>,
    accept: Option<JoinHandle<()>>,
}

impl RangeServer {
    /// Starts on a free port of 127.0.0.1.
    pub fn start() -> RangeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State::default());
        let s = state.clone();
        let accept = std::thread::spawn(move || {
            while !s.stopped.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                        if let Ok(clone) = stream.try_clone() {
                            s.conns.lock().unwrap().push(clone);
                        }
                        let s = s.clone();
                        std::thread::spawn(move || serve(&s, stream));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        RangeServer {
            addr,
            state,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:PORT/<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{}", self.addr, path)
    }

    /// Serves `data` at `path` with an e-tag derived from its bytes.
    pub fn put(&self, path: &str, data: Vec<u8>) {
        let etag = format!("\"{:08x}-{}\"", crc32fast::hash(&data), data.len());
        self.insert(path, data, Some(etag));
    }

    /// Serves `data` at `path` without an e-tag (so a cut body cannot be resumed).
    pub fn put_without_etag(&self, path: &str, data: Vec<u8>) {
        self.insert(path, data, None);
    }

    fn insert(&self, path: &str, data: Vec<u8>, etag: Option<String>) {
        self.state.objects.lock().unwrap().insert(
            path.to_string(),
            Object {
                data: Arc::new(data),
                etag,
            },
        );
    }

    /// Drops the faults not yet served.
    pub fn clear_faults(&self) {
        self.state.faults.lock().unwrap().clear();
    }

    /// The next `n` GETs get `fault`.
    pub fn fail_next(&self, fault: Fault, n: usize) {
        let mut f = self.state.faults.lock().unwrap();
        f.extend(std::iter::repeat_n(fault, n));
    }

    /// After `n` more GETs are answered, the server stops: the connection
    /// of the next is closed without an answer and new ones are refused.
    pub fn stop_after(&self, n: usize) {
        *self.state.stop_after.lock().unwrap() = Some(self.gets() + n);
    }

    /// GET requests received so far.
    pub fn gets(&self) -> usize {
        self.state.gets.load(Ordering::SeqCst)
    }

    /// Stops accepting and closes every connection.
    pub fn stop(&mut self) {
        stop(&self.state);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RangeServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn stop(state: &State) {
    state.stopped.store(true, Ordering::SeqCst);
    for c in state.conns.lock().unwrap().drain(..) {
        let _ = c.shutdown(Shutdown::Both);
    }
}

struct Request {
    method: String,
    path: String,
    range: Option<String>,
    if_match: Option<String>,
    close: bool,
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut req = Request {
        method,
        path: target.trim_start_matches('/').to_string(),
        range: None,
        if_match: None,
        close: false,
    };
    let mut content_length = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (name, value) = h.split_once(':')?;
        let value = value.trim().to_string();
        match name.to_ascii_lowercase().as_str() {
            "range" => req.range = Some(value),
            "if-match" => req.if_match = Some(value),
            "connection" => req.close = value.eq_ignore_ascii_case("close"),
            "content-length" => content_length = value.parse().unwrap_or(0),
            _ => {}
        }
    }
    let mut body = vec![0u8; content_length];
    reader.read_exact(&mut body).ok()?;
    Some(req)
}

/// `bytes=a-b`, `bytes=a-`, `bytes=-n` against an object of `len` bytes.
fn parse_range(spec: &str, len: usize) -> Option<(usize, usize)> {
    let spec = spec.strip_prefix("bytes=")?;
    let (a, b) = spec.split_once('-')?;
    let (start, end) = match (a.trim(), b.trim()) {
        ("", n) => {
            let n: usize = n.parse().ok()?;
            (len.saturating_sub(n), len)
        }
        (a, "") => (a.parse().ok()?, len),
        (a, b) => (a.parse().ok()?, (b.parse::<usize>().ok()? + 1).min(len)),
    };
    (start < end).then_some((start, end))
}

fn respond(out: &mut TcpStream, status: u16, headers: &[(&str, String)], body: &[u8]) -> bool {
    let mut head = format!("HTTP/1.1 {status} X\r\n");
    for (k, v) in headers {
        head += &format!("{k}: {v}\r\n");
    }
    head += "\r\n";
    out.write_all(head.as_bytes()).is_ok() && out.write_all(body).is_ok()
}

fn serve(state: &State, stream: TcpStream) {
    let mut out = match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    };
    let mut reader = BufReader::new(stream);
    while let Some(req) = read_request(&mut reader) {
        if state.stopped.load(Ordering::SeqCst) {
            break;
        }
        let head = req.method == "HEAD";
        if !head {
            let n = state.gets.fetch_add(1, Ordering::SeqCst) + 1;
            if state
                .stop_after
                .lock()
                .unwrap()
                .is_some_and(|limit| n > limit)
            {
                stop(state);
                break;
            }
        }
        let fault = if head {
            None
        } else {
            state.faults.lock().unwrap().pop_front()
        };
        if let Some(Fault::Stall(d)) = fault {
            std::thread::sleep(d);
        }
        if let Some(Fault::Reset) = fault {
            let _ = out.shutdown(Shutdown::Both);
            break;
        }
        if let Some(Fault::Status(code)) = fault {
            let body = b"injected failure";
            if !respond(
                &mut out,
                code,
                &[("Content-Length", body.len().to_string())],
                body,
            ) {
                break;
            }
            continue;
        }
        let found = state
            .objects
            .lock()
            .unwrap()
            .get(&req.path)
            .map(|o| (o.data.clone(), o.etag.clone()));
        let Some((data, etag)) = found else {
            if !respond(&mut out, 404, &[("Content-Length", "0".into())], b"") {
                break;
            }
            continue;
        };
        if let (Some(want), Some(have)) = (&req.if_match, &etag) {
            if want != have && want != "*" {
                if !respond(&mut out, 412, &[("Content-Length", "0".into())], b"") {
                    break;
                }
                continue;
            }
        }
        let len = data.len();
        let (status, start, end) = match &req.range {
            None => (200, 0, len),
            Some(spec) => match parse_range(spec, len) {
                Some((s, e)) => (206, s, e),
                None => {
                    let h = [
                        ("Content-Length", "0".to_string()),
                        ("Content-Range", format!("bytes */{len}")),
                    ];
                    if !respond(&mut out, 416, &h, b"") {
                        break;
                    }
                    continue;
                }
            },
        };
        let body = &data[start..end];
        let sent_len = match fault {
            Some(Fault::ShortBody(n)) => n.min(body.len()),
            _ => body.len(),
        };
        let mut headers = vec![
            ("Content-Length", sent_len.to_string()),
            ("Accept-Ranges", "bytes".to_string()),
            ("Last-Modified", "Sun, 29 Nov 2026 00:00:00 GMT".to_string()),
        ];
        if status == 206 {
            headers.push(("Content-Range", format!("bytes {start}-{}/{len}", end - 1)));
        }
        if let Some(tag) = &etag {
            headers.push(("ETag", tag.clone()));
        }
        let payload: &[u8] = if head { b"" } else { &body[..sent_len] };
        match fault {
            Some(Fault::CutBody(n)) if !head => {
                headers[0].1 = body.len().to_string();
                let _ = respond(&mut out, status, &headers, &body[..n.min(body.len())]);
                let _ = out.flush();
                let _ = out.shutdown(Shutdown::Both);
                break;
            }
            _ => {
                if !respond(&mut out, status, &headers, payload) {
                    break;
                }
            }
        }
        if req.close {
            break;
        }
    }
}
