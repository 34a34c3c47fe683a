//! The shared pipeline's hand-over between its driver and a decode's
//! reader, on the CPU: the tests play the driver (host-memory batches).

use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Int32Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use super::shared_handover::{Outbox, Wake};
use super::shared_pipeline::SharedStream;
use super::{DecodeError, DecodeReport};
use crate::decode::array::DeviceBatch;

pub(super) fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("x", DataType::Int32, false)]))
}

/// A host-memory batch of `values`.
pub(super) fn batch(values: &[i32]) -> DeviceBatch {
    let host =
        RecordBatch::try_new(schema(), vec![Arc::new(Int32Array::from(values.to_vec()))]).unwrap();
    DeviceBatch::from_host(&host).unwrap()
}

/// The values of what the reader hands out, or the error that ended it.
pub(super) fn read_all(reader: SharedStream) -> (Vec<i32>, Option<DecodeError>) {
    let mut values = Vec::new();
    for b in reader {
        match b {
            Ok(b) => {
                let host = b.to_host().unwrap();
                let col = host
                    .column(0)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap();
                values.extend(col.values().iter().copied());
            }
            Err(e) => return (values, Some(e)),
        }
    }
    (values, None)
}

#[test]
fn groups_come_out_in_order_and_the_reader_waits_for_the_driver() {
    let (outbox, wake) = (Arc::new(Outbox::default()), Arc::new(Wake::default()));
    let reader = SharedStream::for_test(outbox.clone(), wake.clone(), schema());
    let seen = wake.seen();
    let driver = std::thread::spawn(move || {
        let report = DecodeReport::default();
        outbox.put(Ok(vec![batch(&[1, 2]), batch(&[3])]), &report);
        std::thread::sleep(Duration::from_millis(30));
        // A group that kept no row: counted as taken, never handed out.
        outbox.put(Ok(Vec::new()), &report);
        outbox.put(Ok(vec![batch(&[4])]), &report);
        std::thread::sleep(Duration::from_millis(30));
        outbox.end(None);
        outbox
    });
    let (values, error) = read_all(reader);
    assert_eq!(values, vec![1, 2, 3, 4]);
    assert!(error.is_none());
    let outbox = driver.join().unwrap();
    let st = outbox.state.lock().unwrap();
    assert_eq!(st.taken, 3, "two groups read, one empty");
    // read_all dropped the reader at the end.
    assert!(st.ended && st.reader_gone);
    // Each group taken woke the driver.
    assert!(wake.seen() >= seen + 2);
}

#[test]
fn a_failure_ends_the_reader_after_the_groups_before_it() {
    let (outbox, wake) = (Arc::new(Outbox::default()), Arc::new(Wake::default()));
    let reader = SharedStream::for_test(outbox.clone(), wake, schema());
    let report = DecodeReport::default();
    outbox.put(Ok(vec![batch(&[7])]), &report);
    outbox.end(Some(DecodeError::PipelineEnded {
        why: "a test".into(),
    }));
    // Nothing after the failure is handed out.
    outbox.put(Ok(vec![batch(&[8])]), &report);
    let (values, error) = read_all(reader);
    assert_eq!(values, vec![7]);
    assert!(matches!(error, Some(DecodeError::PipelineEnded { .. })));
}

#[test]
fn a_dropped_reader_says_so_and_what_comes_after_is_counted_not_kept() {
    let (outbox, wake) = (Arc::new(Outbox::default()), Arc::new(Wake::default()));
    let mut reader = SharedStream::for_test(outbox.clone(), wake.clone(), schema());
    let report = DecodeReport {
        rows: 3,
        ..DecodeReport::default()
    };
    outbox.put(Ok(vec![batch(&[1]), batch(&[2])]), &report);
    outbox.put(Ok(vec![batch(&[3])]), &report);
    assert!(reader.next().unwrap().is_ok());
    assert_eq!(reader.report().rows, 3);
    assert!(reader.report().shared_pipeline);
    let seen = wake.seen();
    drop(reader);
    assert!(wake.seen() > seen, "the driver is woken");
    outbox.put(Ok(vec![batch(&[4])]), &report);
    let st = outbox.state.lock().unwrap();
    assert!(st.reader_gone);
    assert!(st.groups.is_empty(), "nothing kept for a reader gone");
    assert_eq!(st.taken, 2, "one read, one after the reader went");
}

#[test]
fn the_driver_sleeps_until_woken_or_its_look() {
    let wake = Arc::new(Wake::default());
    let seen = wake.seen();
    let waker = {
        let wake = wake.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            wake.bump();
        })
    };
    let started = std::time::Instant::now();
    wake.wait_past(seen, Duration::from_secs(10));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "woken, not timed out"
    );
    waker.join().unwrap();
    // Already past: no wait at all; never past: the look's limit.
    wake.wait_past(seen, Duration::from_secs(10));
    let started = std::time::Instant::now();
    wake.wait_past(wake.seen(), Duration::from_millis(20));
    assert!(started.elapsed() >= Duration::from_millis(20));
}
