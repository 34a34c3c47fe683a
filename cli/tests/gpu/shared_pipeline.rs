//! The device's shared pipeline (`DecodeOptions::pipeline`,
//! `GDSCAN_DECODE_PIPELINE=shared`): decodes running at once on one GPU,
//! each against arrow-rs, with a reader that stops early and one that
//! filters.

use std::sync::{Arc, Barrier};

use arrow::array::RecordBatch;
use bytes::Bytes;

use super::decode::assert_gpu;
use super::multi::{concat, lineitem_with_small_row_groups};
use super::reference::{arrow_rs_decode, assert_same_values, filter_on_host, in_file_order};
use gdscan::decode::scan::{decode, DecodeOptions, PipelineMode};
use gdscan::parquet::{Predicate, Projection, ScanRequest};

/// What one decode asks for.
#[derive(Clone)]
struct Ask {
    columns: Option<Vec<String>>,
    predicate: Option<&'static str>,
    /// Batches read before the reader is dropped (None: all).
    stop_after: Option<usize>,
}

/// The shared pipeline's options.
fn shared() -> DecodeOptions {
    DecodeOptions {
        pipeline: PipelineMode::Shared,
        ..DecodeOptions::from_env().unwrap()
    }
}

/// Decodes `location` as `ask` says on the shared pipeline; the batches
/// read, on the host, and whether the report says shared.
fn run(location: &str, ask: &Ask) -> (Vec<RecordBatch>, arrow::datatypes::SchemaRef, bool) {
    let request = ScanRequest {
        projection: ask
            .columns
            .clone()
            .map_or(Projection::All, Projection::Columns),
        predicate: ask.predicate.map(|p| p.parse::<Predicate>().unwrap()),
        ..ScanRequest::default()
    };
    let mut stream = decode(location, request, shared()).unwrap();
    let schema = stream.schema().clone();
    let mut host = Vec::new();
    for batch in stream.by_ref() {
        let batch = batch.unwrap();
        assert_eq!(batch.device_ordinal(), Some(0));
        host.push(batch.to_host().unwrap());
        if ask.stop_after.is_some_and(|n| host.len() >= n) {
            break;
        }
    }
    let report = stream.report();
    (host, schema, report.shared_pipeline)
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn decodes_at_once_on_the_shared_pipeline_each_equal_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let path = lineitem_with_small_row_groups(dir.path());
    let bytes = Bytes::from(std::fs::read(&path).unwrap());
    let expected_all = arrow_rs_decode(&bytes, None, None, None);
    let location = path.to_str().unwrap().to_string();
    let cols = |c: &[&str]| Some(c.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let asks = [
        Ask {
            columns: None,
            predicate: None,
            stop_after: None,
        },
        Ask {
            columns: cols(&["l_orderkey", "l_comment", "l_shipdate"]),
            predicate: None,
            stop_after: None,
        },
        Ask {
            columns: cols(&["l_quantity", "l_extendedprice", "l_shipmode"]),
            predicate: Some("l_quantity < 10 AND l_shipmode IN ('AIR', 'MAIL')"),
            stop_after: None,
        },
        // A reader that stops after two batches: the others go on.
        Ask {
            columns: None,
            predicate: None,
            stop_after: Some(2),
        },
        Ask {
            columns: cols(&["l_partkey"]),
            predicate: Some("l_partkey > 1000000000"),
            stop_after: None,
        },
        Ask {
            columns: cols(&["l_returnflag", "l_linestatus", "l_discount"]),
            predicate: Some("l_discount BETWEEN 0.05 AND 0.07"),
            stop_after: None,
        },
    ];
    // Every decode starts at once (twice over: the second round reuses
    // the pipeline the first started).
    for round in 0..2 {
        let start = Arc::new(Barrier::new(asks.len()));
        let threads: Vec<_> = asks
            .iter()
            .cloned()
            .map(|ask| {
                let (location, start) = (location.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    run(&location, &ask)
                })
            })
            .collect();
        for (k, (ask, thread)) in asks.iter().zip(threads).enumerate() {
            let (host, schema, on_shared) = thread.join().unwrap();
            let what = format!("round {round}, decode {k}");
            assert!(on_shared, "{what}: the report says the shared pipeline");
            let mut expected = expected_all.clone();
            if let Some(p) = ask.predicate {
                expected = filter_on_host(&expected, &p.parse().unwrap()).unwrap();
            }
            let expected = in_file_order(&expected, ask.columns.as_deref());
            let got = concat(&schema, &host);
            match ask.stop_after {
                None => assert_same_values(&what, &expected, &got),
                Some(n) => {
                    assert_eq!(host.len(), n, "{what}");
                    let head = expected.slice(0, got.num_rows());
                    assert_same_values(&what, &head, &got);
                }
            }
            if ask.predicate == Some("l_partkey > 1000000000") {
                assert_eq!(got.num_rows(), 0, "{what}: no row selected");
                assert!(host.is_empty(), "{what}: no empty batch handed out");
            }
        }
    }
}
