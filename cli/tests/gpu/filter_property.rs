//! A property test of the exact GPU filter through the decoder: random
//! files holding every column type the evaluator reads (nulls, NaN, -0.0,
//! integer extremes, inline and long strings, a struct with nulls; the
//! columns of `tests/kernel_emu/filter_cases.rs`), written by arrow-rs
//! with random writer settings (every codec, dictionary or not, the
//! encodings each type allows, data page v1 and v2, small pages and row
//! groups, statistics none, per chunk or per page), and random predicate
//! trees over them (comparisons, BETWEEN, IN, IS NULL, LIKE patterns,
//! column-to-column comparisons, AND, OR, NOT), each decoded in one pass
//! (`FilterMode::Exact`) and late materialized (`FilterMode::Late`) with a
//! random projection.
//!
//! The reference is arrow-rs: the whole file decoded on the host, the
//! predicate evaluated by `Predicate::evaluate` with SQL's null semantics
//! and the rows kept by `filter_record_batch`. For each predicate the
//! decoder must hand out exactly those rows in file order, or refuse
//! with a typed error where the host refuses too (a literal of the wrong
//! type) or where the GPU evaluator names the part it does not take;
//! never a superset, never a value of its own.
//!
//! Cases run for `GDSCAN_PROPERTY_SECONDS` (60 by default, at least
//! `seeded::MIN_CASES`); `GDSCAN_PROPERTY_SEED=S` replays one.

use std::path::Path;

use bytes::Bytes;
use parquet::arrow::ArrowWriter;

use super::decode::assert_gpu;
use super::filter_exact::try_gpu_filtered;
use super::property::writer_settings;
use super::reference::{arrow_rs_decode, filter_on_host, in_file_order, same_values};
use super::seeded::{run_seeded_cases, Rng as SettingsRng};
use crate::filter_cases::{columns, predicate, schema, sliced_batch, struct_nulls, Rng};
use gdscan::decode::filter::FilterError;
use gdscan::decode::scan::{DecodeError, FilterMode};
use gdscan::parquet::{Projection, ScanRequest};

/// Predicates tried on each random file.
const PREDICATES_PER_FILE: usize = 6;

/// The GPU evaluator's own refusal of a part it does not take.
fn is_unsupported(e: &DecodeError) -> bool {
    matches!(e, DecodeError::Filter(f) if matches!(**f, FilterError::Unsupported { .. }))
}

/// One case from `seed`: a random file under `dir` and
/// [`PREDICATES_PER_FILE`] random predicates, each in both modes.
fn run_case(seed: u64, dir: &Path, totals: &mut [usize; 3]) -> String {
    let mut rng = Rng(seed);
    let mut settings_rng = SettingsRng(seed ^ 0x5eed_f11e);
    let rows = rng.pick(&[0usize, 1, 999, 4096, 25_000, 60_000]);
    let cols = columns(&mut rng, rows);
    let nulls = struct_nulls(&mut rng, rows);
    let batch = sliced_batch(&cols, 0, rows, nulls);
    let (settings, props) = writer_settings(&mut settings_rng, schema().fields());
    let path = dir.join(format!("filter-{seed:x}.parquet"));
    let mut writer = ArrowWriter::try_new(
        std::fs::File::create(&path).expect("create"),
        batch.schema(),
        Some(props),
    )
    .expect("writer");
    // Written in random slices, so pages and row groups end at odd rows.
    let mut at = 0;
    while at < rows {
        let take = (1 + rng.below(rows)).min(rows - at);
        writer.write(&batch.slice(at, take)).expect("write");
        at += take;
    }
    writer.close().expect("close");
    let bytes = Bytes::from(std::fs::read(&path).expect("read back"));
    let file = arrow_rs_decode(&bytes, None, None, None);
    let names: Vec<String> = file
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();

    let mut failures = Vec::new();
    let (mut compared, mut refused, mut unsupported) = (0, 0, 0);
    for _ in 0..PREDICATES_PER_FILE {
        let p = predicate(&mut rng, 3);
        let projection = if rng.pct(25) {
            Projection::All
        } else {
            let n = 1 + rng.below(4);
            let mut chosen: Vec<String> = (0..n).map(|_| rng.pick(&names)).collect();
            chosen.sort();
            chosen.dedup();
            Projection::Columns(chosen)
        };
        let names = match &projection {
            Projection::Columns(names) => Some(names.as_slice()),
            _ => None,
        };
        let host = filter_on_host(&file, &p).map(|kept| in_file_order(&kept, names));
        for mode in [FilterMode::Exact, FilterMode::Late] {
            let what = format!("{p} [{projection:?}] ({mode:?})");
            let request = ScanRequest {
                projection: projection.clone(),
                predicate: Some(p.clone()),
                ..ScanRequest::default()
            };
            match (&host, try_gpu_filtered(&path, request, mode)) {
                (Ok(expected), Ok((got, report, _))) => {
                    let rows_out = report.filter.rows_out;
                    if let Err(diff) = same_values(expected, &got) {
                        failures.push(format!("{what}: {diff}"));
                    } else if rows_out != expected.num_rows() as u64 {
                        failures.push(format!(
                            "{what}: the report says {rows_out} rows, {} handed out",
                            expected.num_rows()
                        ));
                    }
                    compared += 1;
                }
                (Ok(_), Err(e)) if is_unsupported(&e) => unsupported += 1,
                (Ok(_), Err(e)) => {
                    failures.push(format!("{what}: refused ({e}), the host evaluates it"))
                }
                (Err(_), Err(_)) => refused += 1,
                (Err(h), Ok((got, _, _))) => failures.push(format!(
                    "{what}: the host refuses ({h}), the GPU handed out {} rows",
                    got.num_rows()
                )),
            }
        }
    }
    std::fs::remove_file(&path).ok();
    for (total, n) in totals.iter_mut().zip([compared, refused, unsupported]) {
        *total += n;
    }
    let what = format!(
        "seed {seed:#x}: {rows} rows, {settings}: {compared} equal, {refused} refused by both, {unsupported} not taken by the GPU"
    );
    assert!(failures.is_empty(), "{what}:\n{}", failures.join("\n"));
    what
}

/// Random files and predicates: the decoder's rows are arrow-rs's, in both
/// filter modes.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn random_predicates_over_random_files_filter_like_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut totals = [0usize; 3];
    run_seeded_cases("filter property test", |seed| {
        run_case(seed, dir.path(), &mut totals)
    });
    let [compared, refused, unsupported] = totals;
    eprintln!("filter property test: {compared} decodes equal to arrow-rs, {refused} refused by both, {unsupported} not taken by the GPU");
    // Most random predicates are valid ones the GPU takes: the test
    // compares rows, it does not pass on refusals.
    assert!(compared > 4 * (refused + unsupported), "{totals:?}");
}
