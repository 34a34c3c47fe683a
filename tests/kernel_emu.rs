//! The decode kernels' logic on the CPU: `tests/kernel_emu/kernels_emu.cpp`
//! includes the kernel sources as they are, under a C++ emulation of the
//! CUDA features they use (`tests/kernel_emu/emu.h`: a fiber per CUDA
//! thread, barriers for `__syncthreads` and the warp intrinsics), and checks
//! every kind of page (fixed width with conversions, dictionary, booleans,
//! byte-array views, levels, corrupt pages) against expectations computed
//! there, then runs corrupted pages (bit flips, truncations, lying lengths)
//! that must end with an error code or consistent counts. Uploads hold
//! exactly the page's bytes: with GDSCAN_KERNEL_EMU_SANITIZE=1 the harness
//! is built with AddressSanitizer and UBSan, so any read outside a page
//! fails the test. It needs a C++20 compiler (`$CXX`, else `c++`); without
//! one the test says so and passes, unless GDSCAN_REQUIRE_KERNEL_EMU=1.

#[path = "kernel_emu/compact.rs"]
mod compact;
#[path = "kernel_emu/filter_cases.rs"]
mod filter_cases;
#[path = "kernel_emu/filter_eval.rs"]
mod filter_eval;
#[path = "kernel_emu/nest.rs"]
mod nest;
#[path = "kernel_emu/random_arrays.rs"]
mod random_arrays;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use gdscan::decode::kernels::check::SnappyCheck;
use gdscan::decode::page::validate::{check_snappy, CompressedError};

/// Builds `tests/kernel_emu/{source}` with the kernel sources and puts it
/// in `dir`; `None` (the test skipped, said on stderr) when there is no C++
/// compiler and GDSCAN_REQUIRE_KERNEL_EMU is not 1. A harness is compiled
/// once per run of this test binary, however many tests use it (each gets
/// a link to it in its own `dir`).
fn build(source: &str, dir: &Path) -> Option<PathBuf> {
    type Built = Arc<OnceLock<Option<PathBuf>>>;
    static BUILT: Mutex<BTreeMap<String, Built>> = Mutex::new(BTreeMap::new());
    let cell = BUILT
        .lock()
        .unwrap()
        .entry(source.to_string())
        .or_default()
        .clone();
    let built = cell.get_or_init(|| compile(source)).as_ref()?;
    let exe = dir.join(built.file_name().unwrap());
    if std::fs::hard_link(built, &exe).is_err() {
        std::fs::copy(built, &exe).unwrap();
    }
    Some(exe)
}

/// Compiles `tests/kernel_emu/{source}` into this target's scratch folder
/// (written under a name of this process's, then renamed: another run
/// beside this one never sees half an executable).
fn compile(source: &str) -> Option<PathBuf> {
    let required = std::env::var("GDSCAN_REQUIRE_KERNEL_EMU").is_ok_and(|v| v == "1");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    if Command::new(&cxx).arg("--version").output().is_err() {
        assert!(
            !required,
            "GDSCAN_REQUIRE_KERNEL_EMU=1 but no C++ compiler ({cxx})"
        );
        eprintln!("SKIPPED {source}: no C++ compiler ({cxx}); set CXX");
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sanitize = std::env::var("GDSCAN_KERNEL_EMU_SANITIZE").is_ok_and(|v| v == "1");
    let pid = std::process::id();
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernel_emu");
    // The generated header, written once by this process.
    static INCLUDE: OnceLock<PathBuf> = OnceLock::new();
    let include = INCLUDE.get_or_init(|| {
        let include = out_dir.join("include");
        std::fs::create_dir_all(&include).unwrap();
        let header = include.join(format!("gdscan_generated.cuh.{pid}"));
        std::fs::write(
            &header,
            gdscan::decode::kernels::task::generated_header(
                gdscan::config::decode::KernelConfig::DEFAULT,
            ),
        )
        .unwrap();
        std::fs::rename(&header, include.join("gdscan_generated.cuh")).unwrap();
        include
    });
    let stem = source.trim_end_matches(".cpp");
    let exe = out_dir.join(if sanitize {
        format!("{stem}-sanitized")
    } else {
        stem.to_string()
    });
    let partial = out_dir.join(format!("{stem}.{pid}.partial"));
    let out = Command::new(&cxx)
        .args(["-std=c++20", "-O1", "-fno-strict-aliasing", "-pthread"])
        .args(if sanitize {
            &[
                "-g",
                "-fsanitize=address,undefined",
                "-fno-sanitize-recover=all",
            ][..]
        } else {
            &[][..]
        })
        .arg(format!("-I{}", root.join("tests/kernel_emu").display()))
        .arg(format!(
            "-I{}",
            root.join("src/decode/kernels/cuda").display()
        ))
        .arg(format!("-I{}", include.display()))
        .arg("-o")
        .arg(&partial)
        .arg(root.join("tests/kernel_emu").join(source))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cxx} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&partial, &exe).unwrap();
    Some(exe)
}

#[test]
fn kernels_under_cpu_emulation() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("kernels_emu.cpp", dir.path()) else {
        return;
    };
    // The string walks one after the other, in one launch (the default:
    // `gds_string_walks`), and spread over chunks (`gds_spread_*`, which
    // also runs every walk case of the harness against the serial walk).
    // The three at once (a harness runs on one core).
    let runs: Vec<_> = ["apart", "together", "spread"]
        .into_iter()
        .map(|walks| {
            let child = Command::new(&exe)
                .env("ASAN_OPTIONS", "detect_leaks=0")
                .env("GDSCAN_STRING_WALKS", walks)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (walks, child)
        })
        .collect();
    for (walks, child) in runs {
        let run = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout);
        eprintln!("string walks {walks}: {stdout}");
        assert!(
            run.status.success(),
            "string walks {walks}: {stdout}\n{}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(stdout.contains("ALL OK"), "string walks {walks}");
    }
}

/// The scan's element reader from one register in 32-bit arithmetic
/// (`gds_snappy_hop`) gives what the byte-at-a-time reader
/// (`gds_snappy_element`) gives, for every tag, random and extreme bytes
/// after it, positions up to just under 2 GiB and every stream end from
/// inside the element's header to far past it.
#[test]
fn snappy_element_from_a_register_is_the_bytewise_element() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("snappy_element_emu.cpp", dir.path()) else {
        return;
    };
    let run = Command::new(&exe)
        .env("ASAN_OPTIONS", "detect_leaks=0")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    assert!(stdout.contains("ALL OK"), "{stdout}");
}

/// One element of a hand-made Snappy stream.
enum SnappyElement {
    /// Literal bytes (a tag and a 3-byte length, whatever their count).
    Literal(Vec<u8>),
    /// A copy of 1 to 64 bytes from an offset back (a 2-byte offset).
    Copy(usize, u16),
    /// A copy of 4 to 11 bytes from an offset under 2048 back (a tag and
    /// one byte).
    ShortCopy(usize, u16),
}

/// A Snappy stream of `elements`.
fn hand_made_snappy(elements: &[SnappyElement]) -> Vec<u8> {
    let mut size: usize = elements
        .iter()
        .map(|e| match e {
            SnappyElement::Literal(bytes) => bytes.len(),
            SnappyElement::Copy(len, _) | SnappyElement::ShortCopy(len, _) => *len,
        })
        .sum();
    let mut out = Vec::new();
    while size >= 0x80 {
        out.push((size as u8) | 0x80);
        size >>= 7;
    }
    out.push(size as u8);
    for e in elements {
        match e {
            SnappyElement::Literal(bytes) => {
                out.push(62 << 2);
                out.extend_from_slice(&((bytes.len() - 1) as u32).to_le_bytes()[..3]);
                out.extend_from_slice(bytes);
            }
            SnappyElement::Copy(len, offset) => {
                out.push((((len - 1) as u8) << 2) | 2);
                out.extend_from_slice(&offset.to_le_bytes());
            }
            SnappyElement::ShortCopy(len, offset) => {
                out.push(((((offset >> 8) as u8) << 5) | (((len - 4) as u8) << 2)) | 1);
                out.push(*offset as u8);
            }
        }
    }
    out
}

/// Runs a harness that reads `input` from the file named by its first
/// argument and writes what it made to the second; returns that.
fn run_with_files(exe: &Path, dir: &Path, input: &[u8]) -> Vec<u8> {
    let (input_file, made) = (dir.join("input.bin"), dir.join("made.bin"));
    std::fs::write(&input_file, input).unwrap();
    let run = Command::new(exe)
        .arg(&input_file)
        .arg(&made)
        .env("ASAN_OPTIONS", "detect_leaks=0")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::read(&made).unwrap()
}

/// A xorshift generator for the tests' pages.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `len` bytes of random bytes (incompressible: long literal runs), or
    /// of words (text-like: short literals and copies).
    fn page(&mut self, len: usize, random: bool) -> Vec<u8> {
        const WORDS: [&str; 7] = [
            "lineitem ",
            "quickly ",
            "final ",
            "deposits ",
            "the ",
            "furiously ",
            "x",
        ];
        if random {
            return (0..len).map(|_| self.next() as u8).collect();
        }
        let mut t = Vec::with_capacity(len + 10);
        while t.len() < len {
            t.extend_from_slice(WORDS[(self.next() % WORDS.len() as u64) as usize].as_bytes());
        }
        t.truncate(len);
        t
    }
}

/// The words `gds_check_snappy` must write for the host check's verdict.
fn expected_words(verdict: &Result<(), CompressedError>) -> [u32; 4] {
    let code = |c: SnappyCheck| c as u32;
    match verdict {
        Ok(()) => [code(SnappyCheck::Ok), 0, 0, 0],
        Err(CompressedError::Truncated { at }) => [code(SnappyCheck::Truncated), *at as u32, 0, 0],
        Err(CompressedError::LengthMismatch { stream, .. }) => [
            code(SnappyCheck::LengthMismatch),
            0,
            *stream as u32,
            (*stream >> 32) as u32,
        ],
        Err(CompressedError::BadOffset {
            at,
            offset,
            produced,
        }) => [
            code(SnappyCheck::BadOffset),
            *at as u32,
            *offset as u32,
            *produced as u32,
        ],
        Err(CompressedError::Overrun { at, size }) => {
            [code(SnappyCheck::Overrun), *at as u32, *size as u32, 0]
        }
        Err(CompressedError::Short { produced, size }) => {
            [code(SnappyCheck::Short), 0, *produced as u32, *size as u32]
        }
        Err(e) => panic!("a verdict the GPU check has no code for: {e}"),
    }
}

/// The GPU's Snappy check (run under emulation) gives the host check's
/// verdict, position and figures on every stream: sound pages from the
/// snap crate's encoder (text-like and random, from empty to 70 000 bytes:
/// literal runs longer than the warp's 32-byte window, with one- to
/// three-byte length extensions, and elements across windows), and the same
/// pages bit-flipped, truncated, extended and declared with another size.
/// Refused pages are pointed at the empty stream, sound ones never.
#[test]
fn snappy_check_under_cpu_emulation() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("snappy_check_emu.cpp", dir.path()) else {
        return;
    };
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15u64);
    let mut jobs: Vec<(Vec<u8>, usize)> = Vec::new();
    for i in 0..40 {
        let len = [0usize, 1, 7, 100, 5_000, 8_191, 8_192, 20_000, 70_000][i % 9];
        let raw = rng.page(len, i % 3 == 0);
        let packed = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
        jobs.push((packed.clone(), raw.len()));
        if packed.len() > 1 {
            for _ in 0..4 {
                let mut flipped = packed.clone();
                let at = (rng.next() % packed.len() as u64) as usize;
                flipped[at] ^= 1 << (rng.next() % 8);
                jobs.push((flipped, raw.len()));
            }
            let cut = (rng.next() % packed.len() as u64) as usize;
            jobs.push((packed[..cut].to_vec(), raw.len()));
        }
        let mut longer = packed.clone();
        longer.extend_from_slice(&[0x00, 0x05, 0x01]);
        jobs.push((longer, raw.len()));
        jobs.push((packed.clone(), raw.len() + 1));
        jobs.push((packed, raw.len().saturating_sub(1)));
    }
    let mut input = Vec::new();
    for (bytes, size) in &jobs {
        input.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        input.extend_from_slice(&(*size as u32).to_le_bytes());
        input.extend_from_slice(bytes);
    }
    let path = dir.path().join("jobs.bin");
    std::fs::write(&path, input).unwrap();
    let run = Command::new(&exe)
        .arg(&path)
        .env("ASAN_OPTIONS", "detect_leaks=0")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), jobs.len());
    let mut refused = 0;
    for (k, ((bytes, size), line)) in jobs.iter().zip(&lines).enumerate() {
        let verdict = check_snappy(bytes, *size);
        let expected = expected_words(&verdict);
        let got: Vec<u32> = line.split(' ').map(|w| w.parse().unwrap()).collect();
        assert_eq!(
            &got[..4],
            &expected[..],
            "job {k} ({} bytes, size {size}): host says {verdict:?}",
            bytes.len()
        );
        assert_eq!(got[4], u32::from(verdict.is_err()), "job {k}: rewritten");
        refused += usize::from(verdict.is_err());
    }
    // The corruptions must actually exercise the refusal paths.
    assert!(
        refused > jobs.len() / 3,
        "{refused} of {} refused",
        jobs.len()
    );
    assert!(refused < jobs.len(), "sound pages must pass");
}

/// `gds_snappy_pieces` (under emulation) turns each piece of split Snappy
/// pages into a stream of its own that the snap crate decompresses alone to
/// that piece of the page: text-like and random pages of one to sixteen
/// 64 KiB pieces, the last piece short or whole.
#[test]
fn snappy_pieces_under_cpu_emulation() {
    use gdscan::decode::kernels::check::piece_streams;
    use gdscan::decode::page::validate::{snappy_pieces, SNAPPY_BLOCK};
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("snappy_pieces_emu.cpp", dir.path()) else {
        return;
    };
    let mut rng = Xorshift(0x2545_f491_4f6c_dd1du64);
    let mut expected: Vec<Vec<u8>> = Vec::new();
    let mut input = Vec::new();
    for (i, size) in [65_537usize, 131_072, 200_000, 1 << 20, 300_001]
        .into_iter()
        .enumerate()
    {
        let raw = rng.page(size, i == 4);
        let stream = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
        let pieces = snappy_pieces(&stream, size, SNAPPY_BLOCK)
            .unwrap()
            .expect("the snap crate compresses in 64 KiB fragments");
        let mut used = 0;
        for p in piece_streams(&pieces, stream.len(), size, &mut used) {
            input.extend_from_slice(&(p.elements.len() as u32).to_le_bytes());
            input.extend_from_slice(&(p.out_len as u32).to_le_bytes());
            input.extend_from_slice(&stream[p.elements.clone()]);
            expected.push(raw[p.out_at..p.out_at + p.out_len].to_vec());
        }
    }
    let made = run_with_files(&exe, dir.path(), &input);
    let mut at = 0;
    for (k, want) in expected.iter().enumerate() {
        let len = u32::from_le_bytes(made[at..at + 4].try_into().unwrap()) as usize;
        let piece = &made[at + 4..at + 4 + len];
        at += 4 + len;
        let got = snap::raw::Decoder::new()
            .decompress_vec(piece)
            .unwrap_or_else(|e| panic!("piece {k}: {e}"));
        assert!(got == *want, "piece {k} decompresses to other bytes");
    }
    assert_eq!(at, made.len());
    assert!(expected.len() > 20, "{} pieces", expected.len());
}

/// The GPU's Snappy scan (segments walked by a thread each, under
/// emulation) gives the host check's verdict, position and figures on
/// every page, as `gds_check_snappy` does; a sound page over 64 KiB is
/// split exactly when the host's walk splits it, and each of its jobs is a
/// stream the snap crate decompresses to that piece of the page; any other
/// sound page is one job, the whole page; a refused page's jobs are all the
/// empty stream. Pages: text-like and random (long literal runs, where the
/// speculative walks miss the real chain), empty to 300 000 bytes, and the
/// same pages bit-flipped, truncated, extended and declared with another
/// size. On the scan's findings `gds_snappy_decode` then decodes every
/// sound page, split or whole, to exactly the snap crate's output (pages
/// of sorted keys and of short repeated patterns too, whose copies read
/// what the copies just before them wrote), into buffers of exactly the
/// page's size.
#[test]
fn snappy_scan_under_cpu_emulation() {
    use gdscan::decode::kernels::snappy_scan::{
        self, ScanInput, ScanLayout, SCAN_STARTS, SNAPPY_PIECE,
    };
    use gdscan::decode::page::validate::snappy_pieces;
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("snappy_scan_emu.cpp", dir.path()) else {
        return;
    };
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15u64);
    let mut pages: Vec<(Vec<u8>, usize, Option<Vec<u8>>)> = Vec::new();
    for i in 0..36 {
        let len = [
            0usize, 1, 100, 5_000, 65_536, 70_000, 131_072, 200_001, 300_000,
        ][i % 9];
        let raw = rng.page(len, i % 4 == 3);
        let packed = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
        pages.push((packed.clone(), raw.len(), Some(raw.clone())));
        if i % 2 == 0 && packed.len() > 1 {
            // Bit flips anywhere: in tags, lengths and copy offsets (which
            // the verify kernel proves from the walks' records).
            for _ in 0..3 {
                let mut flipped = packed.clone();
                let at = (rng.next() % packed.len() as u64) as usize;
                flipped[at] ^= 1 << (rng.next() % 8);
                pages.push((flipped, raw.len(), None));
            }
            let cut = (rng.next() % packed.len() as u64) as usize;
            pages.push((packed[..cut].to_vec(), raw.len(), None));
        }
        if i % 3 == 0 {
            let mut longer = packed.clone();
            longer.extend_from_slice(&[0x00, 0x05, 0x01]);
            pages.push((longer, raw.len(), None));
            pages.push((packed.clone(), raw.len() + 1, None));
        }
    }
    // Sound streams no Snappy compressor writes, which must stay whole,
    // with the offending copy where a segment (2 KiB of stream) starts on
    // an element, so that the verify kernel's proof from the speculative
    // walks' records (not its element-by-element walk) is what judges it:
    // a copy reaching back before its 64 KiB piece from inside the piece
    // (stream offset 67,584 = 33 segments, output 67,573), and copies
    // running over a piece's end (from stream offset 61,440).
    use SnappyElement::{Copy, Literal, ShortCopy};
    let reach_back = vec![
        Literal(rng.page(65_536, true)),
        Literal(rng.page(2_037, true)),
        Copy(8, 2_100),
        Literal(vec![7u8; 100]),
    ];
    let mut over_the_end = vec![
        Literal(rng.page(60_000, true)),
        Literal(rng.page(1_429, true)),
    ];
    over_the_end.extend((0..66).map(|_| Copy(64, 64)));
    over_the_end.push(Literal(vec![7u8; 100]));
    // Two-byte copies whose offset byte (5) reads as a two-byte copy's tag
    // too, every element starting at an odd offset: walk 0 of each
    // segment (from an even offset, an offset byte) runs out of step
    // through the whole segment, the real chain is walk 1's, which is
    // left to the last launch (gds_snappy_spec_rest).
    let mut out_of_step = vec![Literal(rng.page(64, true))];
    out_of_step.extend((0..40_000).map(|_| ShortCopy(4, 5)));
    // A literal of 300 bytes, then a two-byte copy (4 bytes from 33 back)
    // whose offset byte (0x21) reads as another two-byte copy's tag (4
    // bytes from 257 back, its offset byte the next copy's tag, 0x01): with
    // the first copy's start moved onto its offset byte (the bitmap test
    // below), the page still decodes to 308 bytes, two chains' elements
    // overlapping, with four of them wrong.
    let moved_start = vec![
        Literal(rng.page(300, true)),
        ShortCopy(4, 33),
        ShortCopy(4, 5),
    ];
    // gds_snappy_decode's ring of recent output: a batch too large for it
    // (a 5000-byte literal, written to the output directly), then a batch
    // in the ring whose copies read a source that starts before the ring
    // and runs into it and over the copy's own output (15 back, 20 long),
    // and one from well before the ring (the output).
    let around_the_ring = vec![
        Literal(rng.page(5_000, true)),
        Literal(rng.page(10, true)),
        Copy(20, 15),
        Copy(30, 4_990),
        Literal(rng.page(100, true)),
    ];
    for elements in [
        reach_back,
        over_the_end,
        out_of_step,
        moved_start,
        around_the_ring,
    ] {
        let stream = hand_made_snappy(&elements);
        let raw = snap::raw::Decoder::new().decompress_vec(&stream).unwrap();
        let pieces = snappy_pieces(&stream, raw.len(), SNAPPY_PIECE).unwrap();
        assert!(pieces.is_none(), "the host keeps it whole");
        pages.push((stream, raw.len(), Some(raw)));
    }
    // Pages whose copies read what copies a few elements before wrote
    // (gds_snappy_decode's rounds): sorted keys, as l_orderkey's (each
    // value's high bytes copied from the one before), and runs of short
    // repeated patterns (copies overlapping their own output, offsets 1 to
    // 9).
    let sorted: Vec<u8> = (0..40_000u64)
        .flat_map(|i| (1_000_000_000 + 3 * i + i % 7).to_le_bytes())
        .collect();
    let patterns: Vec<u8> = (1..=9usize)
        .flat_map(|period| (0..9_000usize).map(move |i| b"gdscan-pq"[i % period]))
        .collect();
    for raw in [sorted, patterns] {
        let packed = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
        pages.push((packed, raw.len(), Some(raw)));
    }
    let inputs: Vec<ScanInput> = pages
        .iter()
        .map(|(b, size, _)| ScanInput {
            src: 0,
            len: b.len(),
            size: *size,
            dst: 0,
        })
        .collect();
    let layout = ScanLayout::new(&inputs, true, 0);
    let mut input = Vec::new();
    for n in [
        layout.n_pages(),
        layout.n_segs(),
        layout.bitmap_words,
        layout.starts,
        layout.region_bytes,
        layout.n_jobs(),
    ] {
        input.extend_from_slice(&(n as u32).to_le_bytes());
    }
    for w in layout.page_table(0) {
        input.extend_from_slice(&w.to_le_bytes());
    }
    for s in &layout.seg_page {
        input.extend_from_slice(&s.to_le_bytes());
    }
    for (bytes, ..) in &pages {
        input.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        input.extend_from_slice(bytes);
    }
    let made = run_with_files(&exe, dir.path(), &input);
    let word = |i: usize| u32::from_le_bytes(made[4 * i..4 * i + 4].try_into().unwrap());
    let mut at = 4 * 8 * pages.len();
    let mut jobs = Vec::new();
    for _ in 0..layout.n_jobs() {
        let dummy = made[at] == 1;
        let src_len = u64::from_le_bytes(made[at + 1..at + 9].try_into().unwrap()) as usize;
        let dst_len = u64::from_le_bytes(made[at + 9..at + 17].try_into().unwrap()) as usize;
        at += 17;
        let stream = if dummy {
            Vec::new()
        } else {
            at += src_len;
            made[at - src_len..at].to_vec()
        };
        jobs.push((dummy, src_len, dst_len, stream));
    }
    let proved = u64::from_le_bytes(made[at..at + 8].try_into().unwrap());
    let merged = u64::from_le_bytes(made[at + 8..at + 16].try_into().unwrap());
    let left = u64::from_le_bytes(made[at + 16..at + 24].try_into().unwrap());
    at += 24;
    // gds_snappy_decode's results: per job (status, output bytes), then
    // per page its output.
    let mut decoder_run = || {
        let mut jobs = Vec::new();
        for _ in 0..layout.n_jobs() {
            let status = u32::from_le_bytes(made[at..at + 4].try_into().unwrap());
            let actual = u64::from_le_bytes(made[at + 4..at + 12].try_into().unwrap()) as usize;
            jobs.push((status, actual));
            at += 12;
        }
        let mut outputs = Vec::new();
        for (_, size, _) in &pages {
            outputs.push(made[at..at + size].to_vec());
            at += size;
        }
        (jobs, outputs)
    };
    let (decoded_jobs, decoded) = decoder_run();
    // With every verdict forced sound, the decoder alone between the
    // corrupt pages and the outputs (AddressSanitizer: nothing written or
    // read outside them): a page the host refuses must come out refused
    // (a job's status, or a job's size not the expected one), or as the
    // reference decodes it.
    let (forced_jobs, forced) = decoder_run();
    // As scanned, one element start of each sound page's bitmap moved a
    // byte on: the decoder's chain check refuses every such page (the
    // page `moved_start` below decodes to its own size with the start
    // moved, with other values: only the chain check catches it).
    let (moved_jobs, _) = decoder_run();
    let moved: Vec<bool> = made[at..at + pages.len()].iter().map(|&b| b == 1).collect();
    at += pages.len();
    assert_eq!(at, made.len());
    for (p, (_, size, _)) in pages.iter().enumerate() {
        if !moved[p] {
            continue;
        }
        let split = word(8 * p + 5) == 1;
        let jobs = &moved_jobs[layout.page_jobs[p].clone()];
        assert!(
            jobs.iter().enumerate().any(|(k, &(status, actual))| {
                status != 0 || actual != snappy_scan::job_output(k, *size, split)
            }),
            "page {p}: an element start moved a byte on in its bitmap went unnoticed by gds_snappy_decode"
        );
    }
    let n_moved = moved.iter().filter(|&&f| f).count();
    eprintln!(
        "gds_snappy_decode refused all {n_moved} pages with an element start moved in their bitmap"
    );
    assert!(n_moved > 10, "only {n_moved} pages had a start to move");
    let mut refused_by_the_decoder = 0;
    for (p, (bytes, size, _)) in pages.iter().enumerate() {
        if check_snappy(bytes, *size).is_ok() {
            continue;
        }
        let split = word(8 * p + 5) == 1;
        let jobs = &forced_jobs[layout.page_jobs[p].clone()];
        let refused = jobs.iter().enumerate().any(|(k, &(status, actual))| {
            status != 0 || actual != snappy_scan::job_output(k, *size, split)
        });
        if refused {
            refused_by_the_decoder += 1;
            continue;
        }
        let reference = snap::raw::Decoder::new().decompress_vec(bytes);
        assert!(
            reference.is_ok_and(|r| r == forced[p]),
            "page {p}: refused by the host, decoded by gds_snappy_decode unlike snap"
        );
    }
    let refused_by_the_host = pages
        .iter()
        .filter(|(bytes, size, _)| check_snappy(bytes, *size).is_err())
        .count();
    eprintln!(
        "verdicts forced sound: gds_snappy_decode refused {refused_by_the_decoder} of the {refused_by_the_host} pages the host refuses, decoded the rest as snap does"
    );
    assert!(
        refused_by_the_decoder > 0,
        "the decoder's own checks refused nothing"
    );
    eprintln!(
        "{proved} of {} segments proved from the walks' records; {merged} of {} later walks stopped on walk 0's path, {left} left to the last launch",
        layout.n_segs(),
        layout.n_segs() * (SCAN_STARTS - 1)
    );
    // Random pages (long literal runs read as elements) leave some later
    // walks out of step: the last launch walks them whole.
    assert!(left > 0, "no later walk was left to gds_snappy_spec_rest");
    // Most later walks land on walk 0's path and stop (the point of
    // walking them after it); the verdicts below say nothing was lost.
    assert!(
        merged as usize > layout.n_segs() * (SCAN_STARTS - 1) / 2,
        "{merged} of {} later walks stopped on walk 0's path",
        layout.n_segs() * (SCAN_STARTS - 1)
    );
    assert!(
        proved as usize > layout.n_segs() / 4,
        "{proved} of {} segments proved from the walks' records",
        layout.n_segs()
    );
    let (mut refused, mut split) = (0, 0);
    for (p, (bytes, size, raw)) in pages.iter().enumerate() {
        let verdict = check_snappy(bytes, *size);
        let got: Vec<u32> = (0..8).map(|w| word(8 * p + w)).collect();
        assert_eq!(
            &got[..4],
            &expected_words(&verdict)[..],
            "page {p} ({} bytes, size {size}): host says {verdict:?}",
            bytes.len()
        );
        let host_pieces = snappy_pieces(bytes, *size, SNAPPY_PIECE).ok().flatten();
        assert_eq!(got[5] == 1, host_pieces.is_some(), "page {p}: split");
        let mine = &jobs[layout.page_jobs[p].clone()];
        let decoder = &decoded_jobs[layout.page_jobs[p].clone()];
        if verdict.is_ok() {
            // gds_snappy_decode: every job sound, making its piece (or the
            // whole page in the first job), the page as snap decodes it.
            let whole = match raw {
                Some(raw) => raw.clone(),
                None => snap::raw::Decoder::new().decompress_vec(bytes).unwrap(),
            };
            for (k, &(status, actual)) in decoder.iter().enumerate() {
                assert_eq!(status, 0, "page {p} job {k}: decoder's status");
                let expected = snappy_scan::job_output(k, *size, got[5] == 1);
                assert_eq!(actual, expected, "page {p} job {k}: decoder's output bytes");
            }
            assert!(decoded[p] == whole, "page {p}: gds_snappy_decode's output");
        }
        if verdict.is_err() {
            refused += 1;
            assert!(
                mine.iter().all(|j| j.0 && j.1 == 1),
                "page {p}: refused jobs"
            );
            continue;
        }
        if got[5] == 1 {
            split += 1;
            let mut out = Vec::new();
            for (k, (_, _, dst_len, stream)) in mine.iter().enumerate() {
                let piece = snap::raw::Decoder::new()
                    .decompress_vec(stream)
                    .unwrap_or_else(|e| panic!("page {p} piece {k}: {e}"));
                assert_eq!(piece.len(), *dst_len, "page {p} piece {k}");
                out.extend_from_slice(&piece);
            }
            // A corrupted page that passes decodes as the reference decodes it.
            let whole = match raw {
                Some(raw) => raw.clone(),
                None => snap::raw::Decoder::new().decompress_vec(bytes).unwrap(),
            };
            assert!(out == whole, "page {p}: pieces != page");
        } else {
            assert_eq!(mine[0].3, *bytes, "page {p}: whole job");
            assert_eq!(mine[0].2, *size, "page {p}: whole job's size");
            assert!(mine[1..].iter().all(|j| j.0), "page {p}: other jobs empty");
        }
    }
    assert!(
        refused > pages.len() / 4,
        "{refused} of {} refused",
        pages.len()
    );
    assert!(split >= 10, "{split} split");
}

/// The compaction kernels' scans (`compact.cu`) against plain loops: kept
/// rows of masks and offsets from lengths, at every edge of the GPU's
/// tiles, then millions of rows in a build of fewer, larger tiles.
#[test]
fn compact_scans_under_cpu_emulation() {
    let dir = tempfile::tempdir().unwrap();
    for source in ["compact_emu.cpp", "compact_big_emu.cpp"] {
        let Some(exe) = build(source, dir.path()) else {
            return;
        };
        let run = Command::new(&exe)
            .arg("scan")
            .env("ASAN_OPTIONS", "detect_leaks=0")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "{source}: {stdout}");
        assert!(stdout.contains("ALL OK"), "{source}: {stdout}");
    }
}

/// Batches of every column type compacted by the kernels in the host's
/// order equal arrow's filter; a list's bad offsets are the kernels'
/// error, not a read outside the child.
#[test]
fn compact_batches_under_cpu_emulation() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build("compact_emu.cpp", dir.path()) else {
        return;
    };
    compact::compare_with_arrow_filter(&exe, dir.path());
    let bad_offsets = gdscan::decode::kernels::COMPACT_BAD_OFFSETS as u64;
    // Decreasing, past the child, negative; then well-formed.
    assert_eq!(
        compact::error_word_of_list(&exe, dir.path(), &[0, 1, 3, 2, 4], 4),
        bad_offsets
    );
    assert_eq!(
        compact::error_word_of_list(&exe, dir.path(), &[0, 1, 2, 9], 4),
        bad_offsets
    );
    assert_eq!(
        compact::error_word_of_list(&exe, dir.path(), &[0, 1, -2, 3], 4),
        bad_offsets
    );
    assert_eq!(
        compact::error_word_of_list(&exe, dir.path(), &[0, 1, 2, 4], 4),
        0
    );
}
