//! The GPU decode choice (`GdsTableOptions::decode`, `--decode gpu|auto`):
//! the 22 queries give the CPU path's answers. Without a usable GPU (CI)
//! every file falls back to the CPU and the metrics say so, with the
//! reason; with one, files are decoded on the GPU.

use gdscan::datafusion::TableDecode;

use super::*;

fn check_choice(n: usize) {
    let sql = tpch_query(n).unwrap();
    let gpu = gdscan::cuda::driver::is_available();
    runtime().block_on(async {
        let cpu = context();
        register_tpch(&cpu, data(), GdsTableOptions::default()).unwrap();
        let (want, plan) = run(&cpu, sql).await;
        assert!(scan_totals(plan.as_ref()).decode.files.is_empty());
        for decode in [TableDecode::Gpu, TableDecode::Auto] {
            let ctx = context();
            let options = GdsTableOptions {
                decode,
                ..GdsTableOptions::default()
            };
            register_tpch(&ctx, data(), options).unwrap();
            let (got, plan) = run(&ctx, sql).await;
            let choice = decode.name();
            assert_eq!(got, want, "Q{n} --decode {choice}: answers differ");
            let d = scan_totals(plan.as_ref()).decode;
            assert!(!d.files.is_empty(), "Q{n} --decode {choice}: {d:?}");
            if gpu {
                assert!(d.gpu_files > 0, "Q{n} --decode {choice}: {d:?}");
                continue;
            }
            assert_eq!((d.gpu_files, d.gpu_rows), (0, 0), "Q{n}: {d:?}");
            assert!(d.fallback_files > 0 && d.cpu_rows > 0, "Q{n}: {d:?}");
            for f in &d.files {
                assert_eq!(f.path, "cpu", "Q{n} --decode {choice}: {f:?}");
                assert!(!f.reason.is_empty(), "Q{n} --decode {choice}: {f:?}");
            }
            if decode == TableDecode::Auto {
                assert!(
                    d.files
                        .iter()
                        .all(|f| f.reason.starts_with("no usable GPU")),
                    "Q{n}: {d:?}"
                );
            }
        }
    });
}

macro_rules! gpu_choice_tests {
    ($($name:ident => $n:expr),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_choice($n);
            }
        )*
    };
}

gpu_choice_tests!(
    gpu_q01 => 1, gpu_q02 => 2, gpu_q03 => 3, gpu_q04 => 4, gpu_q05 => 5, gpu_q06 => 6,
    gpu_q07 => 7, gpu_q08 => 8, gpu_q09 => 9, gpu_q10 => 10, gpu_q11 => 11, gpu_q12 => 12,
    gpu_q13 => 13, gpu_q14 => 14, gpu_q15 => 15, gpu_q16 => 16, gpu_q17 => 17, gpu_q18 => 18,
    gpu_q19 => 19, gpu_q20 => 20, gpu_q21 => 21, gpu_q22 => 22,
);

#[test]
fn filters_stay_inexact_with_the_gpu_choice() {
    use datafusion::catalog::TableProvider;
    use datafusion::logical_expr::{col, lit, TableProviderFilterPushDown};

    let dir = tempfile::tempdir().unwrap();
    let file = sorted_file(dir.path());
    let ctx = context();
    let options = GdsTableOptions {
        decode: TableDecode::Gpu,
        ..GdsTableOptions::default()
    };
    let parquet = ctx.state().table_options().parquet.clone();
    let table =
        gdscan::datafusion::GdsTable::try_new(file.to_str().unwrap(), options, &parquet).unwrap();
    let filter = col("l_orderkey").lt(lit(8i64));
    let pushed = table.supports_filters_pushdown(&[&filter]).unwrap();
    assert_eq!(pushed, vec![TableProviderFilterPushDown::Inexact]);
}
