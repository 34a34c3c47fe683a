//! Declares `cfg(s3_server)` when GDSCAN_S3_TESTS is set (`.ci/run` sets it
//! after installing moto), so the S3 tests (tests/store_s3.rs) run against a
//! real S3-compatible server there, fail if it cannot start, and show as
//! ignored elsewhere; and `cfg(parquet_test_data)` when PARQUET_TEST_DATA is
//! set, so the tests that need apache/parquet-testing show as ignored
//! without it.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(parquet_test_data)");
    println!("cargo::rustc-check-cfg=cfg(s3_server)");
    println!("cargo::rerun-if-env-changed=PARQUET_TEST_DATA");
    println!("cargo::rerun-if-env-changed=GDSCAN_S3_TESTS");
    if std::env::var_os("PARQUET_TEST_DATA").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=parquet_test_data");
    }
    if std::env::var_os("GDSCAN_S3_TESTS").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=s3_server");
    }
}
