//! Corrupt levels of nested columns: random nested files (the nested
//! property test's generator) written uncompressed with data pages v1 and
//! v2, the bytes of their repetition and definition levels mutated, then
//! decoded on the GPU. In v2 pages the levels are stored raw before the
//! values; in v1 pages the body opens with the length-prefixed repetition
//! levels (when the column repeats), then the definition levels. Each case
//! must end in a typed error, or in the values arrow-rs decodes from the
//! same bytes: no panic, no failed CUDA call, no value arrow-rs does not
//! give.
//!
//! `GDSCAN_NESTED_CORRUPT_CASES` (400 by default) and
//! `GDSCAN_NESTED_CORRUPT_SEED` (1 by default) choose the cases; a failing
//! case is printed with its base file's seed and its mutation.

use std::ops::Range;
use std::panic::AssertUnwindSafe;

use arrow::array::RecordBatch;
use bytes::Bytes;
use parquet::basic::Compression;

use super::campaign::{gpu_decode, pages_of, PageSpan, Refusal};
use super::decode::assert_gpu;
use super::property_nested::{random_nested_batch, random_page_settings, write_in_slices};
use super::reference::{arrow_rs_try_decode, pyarrow_try_decode, same_values};
use super::seeded::Rng;
use gdscan::decode::page::PageKind;

/// Base files of each page version.
const BASES_PER_VERSION: usize = 6;

/// A run of level bytes of one page.
#[derive(Debug, Clone)]
struct LevelSection {
    /// Which levels, of which page version.
    what: &'static str,
    range: Range<usize>,
}

/// A clean base file: what it is (its seed included), its bytes and its
/// level sections.
struct Base {
    what: String,
    bytes: Vec<u8>,
    sections: Vec<LevelSection>,
}

/// The level sections of every data page of an uncompressed file: v2
/// pages' repetition and definition levels; v1 pages' length-prefixed
/// repetition levels (when the column repeats) and definition levels
/// (when it has any), the length prefix included (a lying length is a
/// corruption too). Pages are found with the campaign's page walk.
fn level_sections(bytes: &[u8]) -> Vec<LevelSection> {
    let mut out = Vec::new();
    for page in pages_of(bytes) {
        match &page.kind {
            PageKind::DataV2(h) => {
                let rep_end = page.body.start + h.rep_levels_len as usize;
                let def_end = rep_end + h.def_levels_len as usize;
                push_section(&mut out, "v2 repetition levels", page.body.start..rep_end);
                push_section(&mut out, "v2 definition levels", rep_end..def_end);
            }
            PageKind::Data(_) => v1_sections(bytes, &page, &mut out),
            _ => {}
        }
    }
    out
}

/// A v1 page's level sections (the file uncompressed): `[u32 length]
/// [RLE levels]` for the repetition levels when the column repeats, then
/// the same for the definition levels when it has any.
fn v1_sections(bytes: &[u8], page: &PageSpan, out: &mut Vec<LevelSection>) {
    let mut at = page.body.start;
    for (present, what) in [
        (page.max_rep > 0, "v1 repetition levels"),
        (page.max_def > 0, "v1 definition levels"),
    ] {
        if !present {
            continue;
        }
        if at + 4 > page.body.end {
            return;
        }
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let end = (at + 4 + len).min(page.body.end);
        push_section(out, what, at..end);
        at = end;
    }
}

fn push_section(out: &mut Vec<LevelSection>, what: &'static str, range: Range<usize>) {
    if !range.is_empty() {
        out.push(LevelSection { what, range });
    }
}

/// The base file of `seed` with pages v1 or v2 (`v2`), uncompressed; None
/// when it has no rows or no page with repetition levels.
fn base_file(seed: u64, v2: bool) -> Option<Base> {
    let mut rng = Rng(seed);
    let (schema, batch) = random_nested_batch(&mut rng);
    if batch.num_rows() == 0 {
        return None;
    }
    let (settings, builder) = random_page_settings(&mut rng, v2);
    let props = builder.set_compression(Compression::UNCOMPRESSED).build();
    let bytes = write_in_slices(&mut rng, &batch, props);
    let sections = level_sections(&bytes);
    let repeated = sections.iter().any(|s| s.what.contains("repetition"));
    repeated.then(|| Base {
        what: format!("seed {seed:#x}: {schema}, none {settings}"),
        bytes,
        sections,
    })
}

/// `bytes` with one mutation inside a level section of `base`: a bit
/// flipped, a byte set, a byte moved up or down (a lying run length or
/// count), or a run of bytes set to 0x00 or 0xff. Returns what was done.
fn mutate_levels(base: &Base, rng: &mut Rng) -> (String, Vec<u8>) {
    let mut bytes = base.bytes.clone();
    let section = rng.pick(&base.sections);
    let range = section.range.clone();
    let at = range.start + rng.below(range.len() as u64) as usize;
    let what = match rng.below(4) {
        0 => {
            let bit = rng.below(8);
            bytes[at] ^= 1 << bit;
            format!("bit {bit} flipped at {at}")
        }
        1 => {
            let value = rng.next_u64() as u8;
            bytes[at] = value;
            format!("byte at {at} set to {value:#04x}")
        }
        2 => {
            let step = 1 + rng.below(32) as u8;
            bytes[at] = if rng.chance(0.5) {
                bytes[at].wrapping_add(step)
            } else {
                bytes[at].wrapping_sub(step)
            };
            format!("byte at {at} moved by {step}")
        }
        _ => {
            let end = (at + 2 + rng.below(8) as usize).min(range.end);
            let value = rng.pick(&[0u8, 0xff]);
            bytes[at..end].iter_mut().for_each(|b| *b = value);
            format!("{} bytes at {at} set to {value:#04x}", end - at)
        }
    };
    (format!("{}: {what}", section.what), bytes)
}

/// How a corrupted file ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A typed error from the GPU decoder, and arrow-rs refuses too.
    BothRefuse,
    /// A typed error from the GPU decoder where arrow-rs reads values.
    GpuRefuses,
    /// The values arrow-rs decodes.
    Equal,
    /// Values from the GPU decoder where arrow-rs panics: no reference to
    /// compare with (counted and printed; arrow-rs's own fault).
    ArrowRsPanics,
    /// arrow-rs refuses the file, pyarrow reads it, and the GPU decoder's
    /// values are pyarrow's (e.g. a page of nulls whose empty value
    /// section arrow-rs will not open).
    PyarrowEqual,
    /// arrow-rs refuses the file, pyarrow refuses or is absent, and the
    /// GPU decoder's values are those of the uncorrupted base file (the
    /// mutation changed no value: a level stream's length grown over the
    /// value section's bit-width byte of an all-null page, which arrow-rs
    /// will not open empty; the GPU machine's pyarrow, older than 26,
    /// refuses arrow-rs files with a null FixedSizeList).
    CleanEqual,
}

/// The verdict on one case (the file at `path`, a mutation of a base
/// whose values are `clean`): arrow-rs's decode (`reference`) against the
/// GPU decoder's (`got`, a panic caught); where arrow-rs refuses and the
/// GPU returns values, they must be pyarrow's decode of the same bytes,
/// or the base file's values. Err says what went wrong.
fn judge(
    path: &std::path::Path,
    clean: &RecordBatch,
    reference: &Result<RecordBatch, String>,
    got: std::thread::Result<Result<RecordBatch, Refusal>>,
) -> Result<Outcome, String> {
    match got {
        Err(panic) => Err(format!("the GPU decode panicked: {}", panic_text(&*panic))),
        Ok(Err(refusal)) if refusal.cuda => Err(format!("a CUDA call failed: {}", refusal.text)),
        Ok(Err(_)) if reference.is_ok() => Ok(Outcome::GpuRefuses),
        Ok(Err(_)) => Ok(Outcome::BothRefuse),
        Ok(Ok(got)) => match reference {
            Ok(expected) => same_values(expected, &got).map(|()| Outcome::Equal),
            Err(why) if why == "arrow-rs panicked" => Ok(Outcome::ArrowRsPanics),
            Err(why) => match pyarrow_try_decode(path, &got) {
                Some(Ok(theirs)) => same_values(&theirs, &got)
                    .map(|()| Outcome::PyarrowEqual)
                    .map_err(|d| format!("arrow-rs refuses ({why}); against pyarrow: {d}")),
                theirs => {
                    let theirs = match theirs {
                        Some(Err(e)) => format!("pyarrow refuses: {e}"),
                        _ => "no pyarrow here".to_string(),
                    };
                    same_values(clean, &got).map(|()| Outcome::CleanEqual).map_err(|d| {
                        format!(
                            "arrow-rs refuses ({why}), {theirs}; the GPU decoder's values are not the clean file's: {d}"
                        )
                    })
                }
            },
        },
    }
}

/// A caught panic's message.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".to_string())
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The base files: [`BASES_PER_VERSION`] of each page version, drawn from
/// `seed`, each decoded clean on the GPU equal to arrow-rs first (a
/// campaign over files the decoder refuses whole would prove nothing).
fn clean_bases(seed: u64, dir: &std::path::Path) -> Vec<Base> {
    let mut seeds = Rng(seed);
    let mut bases = Vec::new();
    for v2 in [false, true] {
        let mut found = 0;
        while found < BASES_PER_VERSION {
            let Some(base) = base_file(seeds.next_u64(), v2) else {
                continue;
            };
            let path = dir.join("clean.parquet");
            std::fs::write(&path, &base.bytes).unwrap();
            let expected = arrow_rs_try_decode(&Bytes::from(base.bytes.clone()))
                .unwrap_or_else(|e| panic!("{}: arrow-rs: {e}", base.what));
            let got = gpu_decode(&path)
                .unwrap_or_else(|e| panic!("{}: the clean file: {}", base.what, e.text));
            same_values(&expected, &got)
                .unwrap_or_else(|d| panic!("{}: the clean file: {d}", base.what));
            bases.push(base);
            found += 1;
        }
    }
    bases
}

/// Corrupt level bytes of nested columns give a typed error or arrow-rs's
/// values, never a panic or other values.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn corrupt_nested_levels_are_typed_errors() {
    assert_gpu();
    let cases = env_u64("GDSCAN_NESTED_CORRUPT_CASES", 400) as usize;
    let seed = env_u64("GDSCAN_NESTED_CORRUPT_SEED", 1);
    let dir = tempfile::tempdir().unwrap();
    let bases = clean_bases(seed, dir.path());
    let cleans: Vec<RecordBatch> = bases
        .iter()
        .map(|b| arrow_rs_try_decode(&Bytes::from(b.bytes.clone())).expect("a clean base"))
        .collect();

    // arrow-rs's decoder panics on some corrupt pages (caught as a
    // refusal), and a GPU panic is caught to name its case: keep both off
    // the log.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    let mut failures = Vec::new();
    for case in 0..cases {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ case as u64);
        let base = &bases[case % bases.len()];
        let (what, bytes) = mutate_levels(base, &mut rng);
        let path = dir.path().join("case.parquet");
        std::fs::write(&path, &bytes).unwrap();
        let reference = arrow_rs_try_decode(&Bytes::from(bytes));
        let got = std::panic::catch_unwind(AssertUnwindSafe(|| gpu_decode(&path)));
        let clean = &cleans[case % bases.len()];
        match judge(&path, clean, &reference, got) {
            Ok(outcome) => *counts.entry(format!("{outcome:?}")).or_default() += 1,
            Err(why) => failures.push(format!("case {case} ({}; {what}): {why}", base.what)),
        }
    }
    std::panic::set_hook(hook);

    // The GPU is still usable: a clean file decodes equal to arrow-rs.
    let path = dir.path().join("after.parquet");
    std::fs::write(&path, &bases[0].bytes).unwrap();
    let expected = arrow_rs_try_decode(&Bytes::from(bases[0].bytes.clone())).unwrap();
    let after = gpu_decode(&path).unwrap_or_else(|e| panic!("after the cases: {}", e.text));
    same_values(&expected, &after).unwrap_or_else(|d| panic!("after the cases: {d}"));

    eprintln!(
        "corrupt nested levels: seed {seed}, {cases} cases over {} base files: {counts:?}, {} wrong",
        bases.len(),
        failures.len()
    );
    for f in failures.iter().take(40) {
        eprintln!("  {f}");
    }
    assert!(
        failures.is_empty(),
        "{} cases panicked or gave values arrow-rs does not",
        failures.len()
    );
    let refused = counts.get("BothRefuse").unwrap_or(&0) + counts.get("GpuRefuses").unwrap_or(&0);
    assert!(
        refused > 0,
        "no corrupted level was ever refused: {counts:?}"
    );
}

/// The level sections are where the format puts them, checked on the CPU
/// (no GPU needed): in uncompressed v1 and v2 files of nested columns,
/// every section lies in a data page's body; a v1 page's repetition levels
/// open its body, with a length prefix that covers exactly its runs; and
/// every data page of a repeated column has its repetition levels found.
#[test]
fn level_sections_of_nested_files_are_found() {
    let mut seeds = Rng(0x1e7e1);
    for v2 in [false, true] {
        let mut found = 0;
        while found < 5 {
            let Some(base) = base_file(seeds.next_u64(), v2) else {
                continue;
            };
            let pages = pages_of(&base.bytes);
            for s in &base.sections {
                let page = pages
                    .iter()
                    .find(|p| p.body.start <= s.range.start && s.range.end <= p.body.end)
                    .unwrap_or_else(|| panic!("{}: {s:?} outside every page body", base.what));
                let expected_version = if v2 { "v2" } else { "v1" };
                assert!(s.what.starts_with(expected_version), "{}: {s:?}", base.what);
                if !v2 && s.what.contains("repetition") {
                    assert_eq!(s.range.start, page.body.start, "{}", base.what);
                    let len = u32::from_le_bytes(
                        base.bytes[s.range.start..s.range.start + 4]
                            .try_into()
                            .unwrap(),
                    ) as usize;
                    assert_eq!(s.range.len(), 4 + len, "{}: {s:?}", base.what);
                }
            }
            for page in pages.iter().filter(|p| {
                p.max_rep > 0 && matches!(p.kind, PageKind::Data(_) | PageKind::DataV2(_))
            }) {
                assert!(
                    base.sections.iter().any(|s| s.what.contains("repetition")
                        && page.body.start <= s.range.start
                        && s.range.end <= page.body.end),
                    "{}: a page of a repeated column without repetition levels",
                    base.what
                );
            }
            found += 1;
        }
    }
}
