//! The GPU filter's evaluator on the GPU against the host evaluator:
//! random batches of every flat column type the evaluator reads
//! (`tests/kernel_emu/filter_cases.rs`), uploaded with
//! `DeviceBatch::upload`, random predicates compiled by
//! `GpuPredicate::compile` and evaluated by `FilterGpu::evaluate`; the
//! mask copied back must be `Predicate::evaluate`'s, row for row.

use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::datatypes::Schema;
use arrow::record_batch::RecordBatch;
use gdscan::config::decode::KernelConfig;
use gdscan::cuda::{Device, DevicePool, Stream};
use gdscan::decode::array::DeviceBatch;
use gdscan::decode::filter::{DeviceMask, FilterError, FilterGpu, GpuPredicate};
use gdscan::decode::kernels::KernelSet;

use super::decode::assert_gpu;
use crate::filter_cases::{columns, predicate, sliced_batch, struct_nulls, Rng};

/// The filter's mask copied back.
fn mask_bytes(mask: &DeviceMask, stream: &Stream) -> Vec<u8> {
    let mut out = vec![0u8; mask.len()];
    if !out.is_empty() {
        // SAFETY: `out` holds `mask.len()` bytes and the mask's buffer at
        // least as many; both live until the synchronisation below.
        unsafe {
            stream
                .copy_to_host(out.as_mut_ptr(), mask.bytes().address(), out.len())
                .unwrap()
        };
    }
    stream.synchronize().unwrap();
    out
}

/// The flat columns of the test batch (all but the struct).
fn flat(batch: &RecordBatch) -> RecordBatch {
    let keep = batch.num_columns() - 1;
    let fields: Vec<_> = batch.schema().fields()[..keep].to_vec();
    let arrays: Vec<ArrayRef> = batch.columns()[..keep].to_vec();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

/// On GPU 0 (the test fails without it): a pool of `pool_bytes`, a stream
/// and a filter on them.
fn filter_on_gpu0(pool_bytes: usize) -> (Arc<DevicePool>, Stream, FilterGpu) {
    assert_gpu();
    let device = Device::get(0).unwrap();
    let pool = DevicePool::new(device, pool_bytes);
    let stream = Stream::new(device).unwrap();
    let kernels = KernelSet::get(device, KernelConfig::DEFAULT).unwrap();
    let filter = FilterGpu::new(kernels, pool.clone()).unwrap();
    (pool, stream, filter)
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn gpu_filter_masks_are_the_host_evaluators() {
    let (pool, stream, filter) = filter_on_gpu0(1 << 30);
    let mut rng = Rng(0x9e_f11e);
    let (mut compared, mut kept, mut rows_seen) = (0usize, 0usize, 0usize);
    for case in 0..60 {
        let rows = rng.pick(&[0usize, 1, 255, 257, 4096, 70_000]) + case % 3;
        let offset = rng.pick(&[0usize, 3]);
        let cols = columns(&mut rng, rows + offset);
        let nulls = struct_nulls(&mut rng, rows);
        let full = sliced_batch(&cols, offset, rows, nulls);
        // With the struct `s` where the upload takes structs, else flat.
        let (batch, device_batch) = match DeviceBatch::upload(&full, &pool, &stream) {
            Ok(uploaded) => (full, uploaded),
            Err(_) => {
                let batch = flat(&full);
                let uploaded = DeviceBatch::upload(&batch, &pool, &stream).unwrap();
                (batch, uploaded)
            }
        };
        for _ in 0..8 {
            let p = predicate(&mut rng, 4);
            let (host, compiled) = (
                p.evaluate(&batch),
                GpuPredicate::compile(&p, &batch.schema()),
            );
            let (host, g) = match (host, compiled) {
                (Err(_), Err(FilterError::Predicate(_))) => continue,
                (Ok(host), Ok(g)) => (host, g),
                (h, c) => panic!("{p}: host {h:?}, compile {c:?}"),
            };
            let want: Vec<u8> = (0..rows).map(|i| u8::from(host.value(i))).collect();
            let mask = filter.evaluate(&g, &device_batch).unwrap();
            assert_eq!(mask.len(), rows);
            let got = mask_bytes(&mask, &stream);
            assert_eq!(got, want, "{p} over {rows} rows");
            compared += 1;
            rows_seen += rows;
            kept += want.iter().filter(|b| **b == 1).count();
        }
    }
    eprintln!("GPU filter: {compared} predicates, {kept} of {rows_seen} rows kept");
    assert!(compared > 200, "{compared}");
    assert!(kept > 10_000 && rows_seen - kept > 10_000);
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn gpu_filter_refuses_another_schema_and_masks_no_rows() {
    let (pool, stream, filter) = filter_on_gpu0(1 << 28);
    let mut rng = Rng(7);
    let cols = columns(&mut rng, 10);
    let batch = flat(&sliced_batch(&cols, 0, 10, None));
    let p = gdscan::parquet::Predicate::cmp(
        "c2",
        gdscan::parquet::predicate::Op::Gt,
        gdscan::parquet::predicate::Literal::Int(0),
    );
    let g = GpuPredicate::compile(&p, &batch.schema()).unwrap();
    let other = batch.project(&[2, 0]).unwrap();
    let other = DeviceBatch::upload(&other, &pool, &stream).unwrap();
    let e = filter.evaluate(&g, &other).unwrap_err();
    assert!(matches!(e, FilterError::Batch(_)), "{e}");
    let empty = DeviceBatch::upload(&batch.slice(0, 0), &pool, &stream).unwrap();
    let mask = filter.evaluate(&g, &empty).unwrap();
    assert!(mask.is_empty());
    let host = DeviceBatch::from_host(&batch).unwrap();
    let e = filter.evaluate(&g, &host).unwrap_err();
    assert!(matches!(e, FilterError::Batch(_)), "{e}");
}

/// Several batches filtered in one pass (`select_many`, as the decoder
/// filters a decoded group's row groups) give each batch's rows of
/// `evaluate` then `compact` on its own, and the host evaluator's count.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn select_many_filters_each_batch_as_evaluate_then_compact() {
    let (pool, stream, filter) = filter_on_gpu0(1 << 30);
    let mut rng = Rng(0x005e_1ec7);
    let mut compared = 0;
    for _ in 0..20 {
        let batches: Vec<RecordBatch> = (0..1 + rng.below(6))
            .map(|_| {
                let rows = rng.pick(&[0usize, 1, 300, 5_000, 40_000]);
                let cols = columns(&mut rng, rows);
                flat(&sliced_batch(&cols, 0, rows, None))
            })
            .collect();
        let uploaded: Vec<DeviceBatch> = batches
            .iter()
            .map(|b| DeviceBatch::upload(b, &pool, &stream).unwrap())
            .collect();
        let p = predicate(&mut rng, 3);
        let Ok(g) = GpuPredicate::compile(&p, &batches[0].schema()) else {
            continue;
        };
        if batches.iter().any(|b| p.evaluate(b).is_err()) {
            continue;
        }
        let work: Vec<(&DeviceBatch, &DeviceBatch)> = uploaded.iter().map(|b| (b, b)).collect();
        let many = filter.select_many(&g, &work).unwrap();
        assert_eq!(many.len(), batches.len());
        for ((batch, device_batch), got) in batches.iter().zip(&uploaded).zip(many) {
            let mask = filter.evaluate(&g, device_batch).unwrap();
            let one = filter.compact(device_batch, &mask).unwrap();
            let want = p.evaluate(batch).unwrap().true_count();
            match (one, got) {
                (None, None) => assert_eq!(want, 0, "{p}"),
                (Some(a), Some(b)) => {
                    let (a, b) = (a.to_host().unwrap(), b.to_host().unwrap());
                    assert_eq!(a, b, "{p}");
                    assert_eq!(b.num_rows(), want, "{p}");
                }
                (a, b) => panic!(
                    "{p}: one by one {:?} rows, together {:?}",
                    a.map(|x| x.num_rows()),
                    b.map(|x| x.num_rows())
                ),
            }
            compared += 1;
        }
    }
    assert!(compared > 20, "{compared}");
}
