//! The NVRTC checks of the kernel sources (CI runs them with
//! GDSCAN_REQUIRE_NVRTC=1): every kernel compiles, the layout asserts
//! bite, the page kernel spills little; and the ptxas report's reader.

use super::*;

#[test]
fn a_ptxas_report_gives_each_functions_spills_and_registers() {
    let report = "ptxas info    : Compiling entry function 'gds_a' for 'sm_90'\n\
        ptxas info    : Function properties for gds_a\n\
        ptxas         .     256 bytes stack frame, 96 bytes spill stores, 36 bytes spill loads\n\
        ptxas info    : Used 64 registers, used 1 barriers, 256 bytes cumulative stack size\n\
        ptxas info    : Function properties for helper\n\
        ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
    assert_eq!(
        nvrtc::FunctionResources::find(report, "gds_a"),
        Some(nvrtc::FunctionResources {
            spill_stores: 96,
            spill_loads: 36,
            registers: 64
        })
    );
    // A device function has no "Used" line; an absent one no line at all.
    assert_eq!(nvrtc::FunctionResources::find(report, "helper"), None);
    assert_eq!(nvrtc::FunctionResources::find(report, "gds_b"), None);
}

/// The page kernel keeps its tile loop's state in registers at every
/// cap `GDSCAN_DECODE_MIN_BLOCKS` sets (64 a thread by default): spill
/// loads are local-memory reads on every tile, which an inlined wide
/// conversion or the values' places held in registers bring back. Read
/// from NVRTC's cubin for sm_90 (the H200), no GPU needed; skips as
/// `every_kernel_compiles_with_nvrtc`. `gds_snappy_decode` spills
/// nothing, nor do the nesting kernels at `GDSCAN_NEST_MIN_BLOCKS=4`.
#[test]
fn the_page_kernel_spills_little_at_its_register_cap() {
    let required = std::env::var("GDSCAN_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    for min_blocks in [4, 3, 2] {
        let config = KernelConfig {
            decode_min_blocks: min_blocks,
            nest_min_blocks: 4,
            ..KernelConfig::DEFAULT
        };
        let report = match nvrtc::ptxas_report(90, config) {
            Ok(report) => report,
            Err(e) if !required => {
                eprintln!("SKIPPED the_page_kernel_spills_little_at_its_register_cap: {e} (GDSCAN_REQUIRE_NVRTC=1 makes this a failure)");
                return;
            }
            Err(e) => panic!("GDSCAN_REQUIRE_NVRTC=1 but {e}"),
        };
        let pages = nvrtc::FunctionResources::find(&report, "gds_decode_pages")
            .unwrap_or_else(|| panic!("no gds_decode_pages in ptxas's report:\n{report}"));
        eprintln!("gds_decode_pages for sm_90, {min_blocks} blocks an SM: {pages:?}");
        // An SM has 64 K registers; ptxas allocates them in eights.
        let cap = (65536 / (launch::DECODE_BLOCK * min_blocks)) & !7;
        assert!(pages.registers <= cap, "{min_blocks} blocks: {pages:?}");
        assert!(pages.spill_loads <= 64, "{min_blocks} blocks: {pages:?}");
        if min_blocks == 4 {
            // The Snappy decoder too (its warps wait on loads; local
            // memory would add to every element).
            let unsnap = nvrtc::FunctionResources::find(&report, "gds_snappy_decode")
                .unwrap_or_else(|| panic!("no gds_snappy_decode in ptxas's report:\n{report}"));
            eprintln!("gds_snappy_decode for sm_90: {unsnap:?}");
            assert_eq!(
                (unsnap.spill_stores, unsnap.spill_loads),
                (0, 0),
                "{unsnap:?}"
            );
            // The nesting kernels at GDSCAN_NEST_MIN_BLOCKS=4.
            for nest in ["gds_nest_count", "gds_nest_scan", "gds_nest_write"] {
                let r = nvrtc::FunctionResources::find(&report, nest)
                    .unwrap_or_else(|| panic!("no {nest} in ptxas's report"));
                eprintln!("{nest} for sm_90, 4 blocks an SM: {r:?}");
                assert_eq!((r.spill_stores, r.spill_loads), (0, 0), "{nest}: {r:?}");
            }
        }
    }
}

/// CI's NVRTC check: every kernel source compiles to PTX (the layout
/// asserts of the generated header included) and the PTX declares every
/// entry point. Skips, saying why, when NVRTC is absent, unless
/// GDSCAN_REQUIRE_NVRTC=1 (set by .ci/run), which makes absence a failure.
#[test]
fn every_kernel_compiles_with_nvrtc() {
    let required = std::env::var("GDSCAN_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    let info = match nvrtc::nvrtc_info() {
        Ok(info) => info,
        Err(e) if !required => {
            eprintln!("SKIPPED every_kernel_compiles_with_nvrtc: {e} (GDSCAN_REQUIRE_NVRTC=1 makes this a failure)");
            return;
        }
        Err(e) => panic!("GDSCAN_REQUIRE_NVRTC=1 but {e}"),
    };
    let target = nvrtc::host_target(&info.archs).expect("NVRTC lists no architecture");
    let compiled = match nvrtc::compile_uncached(target, KernelConfig::DEFAULT) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let ptx = compiled.ptx().expect("PTX text");
    // For reading the machine code without a GPU (registers, spills):
    // `ptxas -v --gpu-name sm_90` on the file (docs/gpu-decode.md).
    if let Some(path) = std::env::var_os("GDSCAN_PTX_OUT") {
        std::fs::write(&path, ptx).expect("GDSCAN_PTX_OUT is writable");
    }
    for entry in nvrtc::entry_points() {
        assert!(nvrtc::ptx_has_entry(ptx, entry), "PTX lacks {entry}");
    }
    let isa = nvrtc::ptx_isa_version(ptx).expect(".version line");
    assert!(
        compiled.log.is_empty(),
        "NVRTC warnings for {target}:\n{}",
        compiled.log
    );
    eprintln!(
        "NVRTC {}.{} compiled {} kernels for {target}: {} bytes of PTX, ISA {}.{}",
        info.version.0,
        info.version.1,
        nvrtc::entry_points().count(),
        ptx.len(),
        isa.0,
        isa.1
    );
}

/// The layout asserts really bite: a header claiming another offset
/// makes the compile fail (so a drift between the Rust and C structs
/// cannot pass CI). Skips like the test above.
#[test]
fn a_layout_drift_fails_the_compile() {
    let required = std::env::var("GDSCAN_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    let info = match nvrtc::nvrtc_info() {
        Ok(info) => info,
        Err(e) if !required => {
            eprintln!("SKIPPED a_layout_drift_fails_the_compile: {e}");
            return;
        }
        Err(e) => panic!("GDSCAN_REQUIRE_NVRTC=1 but {e}"),
    };
    let target = nvrtc::host_target(&info.archs).expect("NVRTC lists no architecture");
    let header = task::generated_header(KernelConfig::DEFAULT).replace(
        "GDS_OFFSETOF(PageTask, error) == 144",
        "GDS_OFFSETOF(PageTask, error) == 148",
    );
    let err = nvrtc::compile_with_header(target, &header).unwrap_err();
    match err {
        KernelError::Compile { log, .. } => {
            assert!(
                log.contains("static assertion failed")
                    && log.contains("PageTask.error is not at the Rust offset"),
                "{log}"
            )
        }
        other => panic!("expected a compile error, got {other}"),
    }
}
