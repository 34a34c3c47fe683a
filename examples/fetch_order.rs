//! When a fetch delivers its first row groups, against its whole time: a
//! probe of how the read-ahead shares the I/O workers (host memory, no GPU).
//!
//! ```sh
//! cargo run --release --example fetch_order -- DIR COLUMNS [READ_AHEAD_BYTES]
//! ```
//!
//! `DIR` holds Parquet files (a `gdscan tpch gen` table folder), `COLUMNS`
//! is `all` or column names joined by `+`; each of three rounds fetches
//! every file's planned row groups into host memory and prints the total
//! time and when the first, second and fourth row groups came out.

use std::error::Error;
use std::sync::Arc;
use std::time::Instant;

use gdscan::engine::{Engine, FileHandle, OpenMode};
use gdscan::parquet::fetch::{fetch, FetchOptions, HostAllocator, SourceScan};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::plan::{plan, Projection, ScanRequest};
use gdscan::store::{LocalSource, Source};

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(columns)) = (args.get(1), args.get(2)) else {
        return Err("usage: fetch_order DIR all|COLUMN+COLUMN... [READ_AHEAD_BYTES]".into());
    };
    let read_ahead_bytes = match args.get(3) {
        Some(n) => n.parse()?,
        None => FetchOptions::default().read_ahead_bytes,
    };
    let projection = match columns.as_str() {
        "all" => Projection::All,
        names => Projection::Columns(names.split('+').map(str::to_string).collect()),
    };
    let request = ScanRequest {
        projection,
        ..ScanRequest::default()
    };
    let engine = Engine::new(gdscan::config::Settings::from_env()?)?;
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.sort();
    let mut scans = Vec::new();
    for path in paths {
        let handle = Arc::new(FileHandle::open_with(
            engine.clone(),
            &path,
            OpenMode::Read,
        )?);
        let source: Arc<dyn Source> = Arc::new(LocalSource::new(handle)?);
        let metadata = load(&source, MetadataOptions::default())?;
        let plan = Arc::new(plan(&metadata, &request)?);
        scans.push(SourceScan { source, plan });
    }
    let options = FetchOptions {
        read_ahead_bytes,
        ..FetchOptions::default()
    };
    for round in 0..3 {
        let start = Instant::now();
        let mut out_at = Vec::new();
        for row_group in fetch(scans.clone(), [HostAllocator], options) {
            row_group?;
            out_at.push(start.elapsed().as_secs_f64() * 1e3);
        }
        let total = start.elapsed().as_secs_f64() * 1e3;
        let at = |i: usize| out_at.get(i).copied().unwrap_or(f64::NAN);
        println!(
            "round {round}: {} row groups in {total:.1} ms; 1st at {:.1} ms ({:.0} %), 2nd {:.1}, 4th {:.1}",
            out_at.len(),
            at(0),
            at(0) * 100.0 / total,
            at(1),
            at(3),
        );
    }
    Ok(())
}
