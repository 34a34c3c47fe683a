//! Every launch checked against its kernel's C signature, without a GPU:
//! the launch families queue into a list, and each launch's arguments are
//! compared, kind by kind and name by name, with the `extern "C"`
//! declaration parsed from the kernel sources (`nvrtc::SOURCES`).

use std::collections::{HashMap, HashSet};

use super::args::{Arg, Args, Kernel, Queue};
use super::*;
use crate::cuda::module::LaunchConfig;

/// The launches queued, in order.
#[derive(Default)]
struct Recorder {
    launches: Vec<(LaunchConfig, Args)>,
}

impl Queue for Recorder {
    fn queue(&mut self, config: LaunchConfig, args: Args) -> Result<(), KernelError> {
        assert!(config.validate().is_ok(), "{config:?}");
        self.launches.push((config, args));
        Ok(())
    }

    fn config(&self) -> KernelConfig {
        KernelConfig::DEFAULT
    }
}

impl Recorder {
    fn kernels(&self) -> Vec<Kernel> {
        self.launches.iter().map(|(_, a)| a.kernel()).collect()
    }
}

/// A C parameter's kind, as the driver reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CKind {
    Ptr,
    U32,
    U64,
}

fn kind(arg: &Arg) -> CKind {
    match arg {
        Arg::Ptr(_) => CKind::Ptr,
        Arg::U32(_) => CKind::U32,
        Arg::U64(_) => CKind::U64,
    }
}

fn value(arg: &Arg) -> u64 {
    match *arg {
        Arg::Ptr(v) | Arg::U64(v) => v,
        Arg::U32(v) => u64::from(v),
    }
}

/// The parameters (kind, name) of `extern "C"` kernel `name` in the
/// sources; `None` when no source declares it.
fn c_signature(name: &str) -> Option<Vec<(CKind, String)>> {
    for source in nvrtc::SOURCES {
        for (at, _) in source.text.match_indices("extern \"C\"") {
            let decl = &source.text[at..];
            let decl = &decl[..decl.find('{')?];
            let Some(open) = decl.find(&format!(" {name}(")) else {
                continue;
            };
            let params = &decl[open + name.len() + 2..decl.rfind(')')?];
            let parsed = params.split(',').map(|p| {
                let p = p.trim().trim_start_matches("const ");
                let name = p.rsplit([' ', '*']).next().unwrap_or_default();
                let kind = if p.contains('*') {
                    CKind::Ptr
                } else if p.starts_with("u32 ") {
                    CKind::U32
                } else if p.starts_with("u64 ") {
                    CKind::U64
                } else {
                    panic!("{name}: a parameter of another type: {p:?}")
                };
                (kind, name.to_string())
            });
            return Some(parsed.collect());
        }
    }
    None
}

/// Distinct values for every field the launches pass, and each value's
/// field name.
struct Work {
    row_group: RowGroupLaunch,
    scan: SnappyScan,
    jobs: SnappyJobs,
    decode: SnappyDecode,
    filter: FilterLaunch,
    compact: CompactWork,
    names: HashMap<u64, &'static str>,
}

/// The compaction launches' values.
struct CompactWork {
    scan: CompactScan,
    mask: u64,
    rows: u64,
    out: u64,
    lengths: CompactLengths,
    expand: CompactExpand,
    k: u32,
    size: u32,
    child_rows: u64,
    gather: CompactGather,
    bits: CompactBits,
}

/// Distinct values for the compaction launches (widths are all 8, the
/// only value named `width`).
fn compact_work(n: &mut Names) -> CompactWork {
    let (width, k, size) = (n.count("width", 8), n.count("k", 23), n.count("size", 3));
    let (rows, error, first) = (n.name("rows"), n.name("error"), n.name("first"));
    let scan = CompactScan {
        values: n.name("values"),
        // 31 tiles: `n_tiles`, a count like the others.
        n: 31 * COMPACT_TILE,
        width,
        sums: n.name("sums"),
        total: n.name("total"),
    };
    let offsets = n.name("offsets");
    let lengths = CompactLengths {
        offsets,
        width,
        offsets_count: n.name("offsets_count"),
        first,
        rows,
        k,
        child_len: n.name("child_len"),
        lengths: n.name("lengths"),
        error,
    };
    let expand = CompactExpand {
        new_offsets: n.name("new_offsets"),
        width,
        k,
        offsets,
        first,
        rows,
        total: 29,
        child_rows: n.name("child_rows"),
    };
    n.map.insert(29, "total");
    n.map.insert(31 * COMPACT_TILE, "n");
    n.map.insert(31, "n_tiles");
    let gather = CompactGather {
        src: n.name("src"),
        first,
        src_count: n.name("src_count"),
        width,
        rows,
        k,
        dst: n.name("dst"),
        error,
    };
    let bits = CompactBits {
        src: gather.src,
        first,
        src_bits: n.name("src_bits"),
        rows,
        k,
        dst: gather.dst,
        unset: n.name("unset"),
        error,
    };
    CompactWork {
        scan,
        mask: n.name("mask"),
        rows,
        out: n.name("out"),
        lengths,
        expand,
        k,
        size,
        child_rows: expand.child_rows,
        gather,
        bits,
    }
}

/// Hands out distinct values, remembering each one's field name.
#[derive(Default)]
struct Names {
    map: HashMap<u64, &'static str>,
    next: u64,
}

impl Names {
    /// An address: above every count.
    fn name(&mut self, field: &'static str) -> u64 {
        self.next = self.next.max(0x1000) + 0x100;
        self.map.insert(self.next, field);
        self.next
    }

    /// A count: small (the grids), distinct from the others.
    fn count(&mut self, field: &'static str, n: u32) -> u32 {
        assert!(self.map.insert(u64::from(n), field).is_none());
        n
    }
}

fn work() -> Work {
    let mut n = Names::default();
    let (n_tasks, n_dicts, n_segs, n_pages, n_jobs) = (
        n.count("n_tasks", 7),
        n.count("n_dicts", 5),
        n.count("n_segs", 11),
        n.count("n_pages", 13),
        n.count("n_jobs", 17),
    );
    // `gds_snappy_finish`'s `own_decoder`: 1 when `real` is set.
    let _ = n.count("own_decoder", 1);
    let nest_tasks = n.count("n_tasks", 19);
    let row_group = RowGroupLaunch {
        tasks: n.name("tasks"),
        n_tasks,
        dicts: n.name("dicts"),
        n_dicts,
        status: n.name("status"),
        has_plain_byte_arrays: true,
        walks: StringWalks::Spread,
        spread: SpreadLaunch {
            first: n.name("first"),
            n_chunks: 9,
            state: n.name("state"),
            bits: n.name("bits"),
        },
        nest: NestLaunch {
            tasks: n.name("tasks"),
            n_tasks: nest_tasks,
            max_entries: 5000,
        },
    };
    let scan = SnappyScan {
        pages: n.name("pages"),
        n_pages,
        seg_page: n.name("seg_page"),
        n_segs,
        bitmap: n.name("bitmap"),
        exits: n.name("exits"),
        outputs: n.name("outputs"),
        rest: n.name("rest"),
        entries: n.name("entries"),
        meets: n.name("meets"),
        outs: n.name("outs"),
        before: n.name("before"),
        faults: n.name("faults"),
        starts: n.name("starts"),
        verdicts: n.name("verdicts"),
        src: n.name("src"),
        src_len: n.name("src_len"),
        dst_len: n.name("dst_len"),
        tasks: n.name("tasks"),
        n_jobs,
        dummy: n.name("dummy"),
        real: n.name("real"),
    };
    let jobs = SnappyJobs {
        src: n.name("src"),
        src_len: n.name("src_len"),
        dst_len: n.name("dst_len"),
        n_jobs,
        results: n.name("results"),
        dummy: n.name("dummy"),
        max_len: n.name("max_len"),
    };
    let decode = SnappyDecode {
        pages: n.name("pages"),
        n_pages,
        n_jobs,
        entries: n.name("entries"),
        starts: n.name("starts"),
        verdicts: n.name("verdicts"),
        real: n.name("real"),
        dst: n.name("dst"),
        actual: n.name("actual"),
        statuses: n.name("statuses"),
    };
    let filter = FilterLaunch {
        program: n.name("program"),
        n_steps: n.count("n_steps", 43),
        columns: n.name("columns"),
        n_columns: n.count("n_columns", 47),
        buffers: n.name("buffers"),
        n_buffers: n.count("n_buffers", 53),
        literals: n.name("literals"),
        literals_len: n.count("literals_len", 59),
        n_rows: n.count("n_rows", 61),
        mask: n.name("mask"),
        status: n.name("status"),
    };
    let compact = compact_work(&mut n);
    Work {
        row_group,
        scan,
        jobs,
        decode,
        filter,
        compact,
        names: n.map,
    }
}

/// Every launch of every family, with `w`'s values.
fn every_launch(w: &Work) -> Recorder {
    let mut q = Recorder::default();
    for walks in [
        StringWalks::Together,
        StringWalks::Spread,
        StringWalks::Apart,
    ] {
        let work = RowGroupLaunch {
            walks,
            ..w.row_group
        };
        launch_row_group::row_group(&mut q, &work, |_| Ok(())).unwrap();
    }
    let rg = &w.row_group;
    launch_pages::dba_sizes(&mut q, rg.tasks, rg.n_tasks).unwrap();
    launch_scan::scan(&mut q, &w.scan, |_| Ok(())).unwrap();
    launch_snappy::check_snappy(&mut q, &w.jobs).unwrap();
    launch_snappy::snappy_decode(&mut q, &w.decode).unwrap();
    launch_filter_eval::filter_eval(&mut q, &w.filter).unwrap();
    let c = &w.compact;
    launch_compact::scan(&mut q, &c.scan).unwrap();
    launch_compact::mask_rows(&mut q, c.mask, c.scan.n, c.scan.sums, c.rows).unwrap();
    launch_compact::scan_write(&mut q, &c.scan, c.scan.width, c.out).unwrap();
    launch_compact::list_lengths(&mut q, &c.lengths).unwrap();
    launch_compact::expand(&mut q, &c.expand).unwrap();
    launch_compact::fixed_rows(&mut q, c.rows, c.k, c.lengths.first, c.size, c.child_rows).unwrap();
    launch_compact::gather(&mut q, &c.gather).unwrap();
    launch_compact::bits(&mut q, &c.bits).unwrap();
    q
}

#[test]
fn kernels_are_numbered_in_order_and_are_the_modules_entry_points() {
    for (i, k) in Kernel::ALL.iter().enumerate() {
        assert_eq!(*k as usize, i);
    }
    let ours: HashSet<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
    let sources: HashSet<&str> = nvrtc::entry_points().collect();
    assert_eq!(ours, sources);
    assert_eq!(ours.len(), Kernel::ALL.len());
}

#[test]
fn every_launch_matches_its_kernels_c_signature() {
    let w = work();
    let q = every_launch(&w);
    // The names the Rust side gives a C parameter otherwise named.
    let aliases = [
        (Kernel::GatherStatus, "out", "status"),
        (Kernel::SnappyPieces, "n_tasks", "n_jobs"),
    ];
    for (_, args) in &q.launches {
        let name = args.kernel().name();
        let c = c_signature(name).unwrap_or_else(|| panic!("no declaration of {name}"));
        let ours: Vec<CKind> = args.values().iter().map(kind).collect();
        let theirs: Vec<CKind> = c.iter().map(|(k, _)| *k).collect();
        assert_eq!(ours, theirs, "{name}: argument kinds");
        for (i, (arg, (_, c_name))) in args.values().iter().zip(&c).enumerate() {
            let field = w.names[&value(arg)];
            let alias = aliases
                .iter()
                .find(|(k, c, _)| *k == args.kernel() && c == c_name)
                .map(|(_, _, rust)| *rust);
            assert_eq!(
                field,
                alias.unwrap_or(c_name),
                "{name}: argument {i} is {field}, the C parameter {c_name}"
            );
        }
    }
    let covered: HashSet<Kernel> = q.kernels().into_iter().collect();
    assert_eq!(covered, Kernel::ALL.into_iter().collect::<HashSet<_>>());
}

#[test]
fn the_scan_skips_the_segment_launches_without_segments() {
    let w = work();
    let mut marks = Vec::new();
    let mut q = Recorder::default();
    let a = SnappyScan {
        n_segs: 0,
        ..w.scan
    };
    launch_scan::scan(&mut q, &a, |m| {
        marks.push(m);
        Ok(())
    })
    .unwrap();
    assert_eq!(
        q.kernels(),
        [
            Kernel::SnappyChain,
            Kernel::SnappyPrefix,
            Kernel::SnappyFinish,
            Kernel::SnappyPieces
        ]
    );
    let every = [
        "scan_spec",
        "scan_chain",
        "scan_outs",
        "scan_prefix",
        "scan_verify",
        "scan_finish",
        "scan_pieces",
    ];
    assert_eq!(marks, every);
    let mut q = Recorder::default();
    launch_scan::scan(&mut q, &w.scan, |_| Ok(())).unwrap();
    assert_eq!(
        q.kernels(),
        [
            Kernel::SnappySpec,
            Kernel::SnappySpecLater,
            Kernel::SnappySpecRest,
            Kernel::SnappyChain,
            Kernel::SnappyOuts,
            Kernel::SnappyPrefix,
            Kernel::SnappyVerify,
            Kernel::SnappyFinish,
            Kernel::SnappyPieces
        ]
    );
    // A thread per segment, later walk or page (one block each here), a
    // block per job for the pieces.
    let grids: Vec<u32> = q.launches.iter().map(|(c, _)| c.grid.0).collect();
    assert_eq!(grids, [1, 1, 1, 1, 1, 1, 1, 1, w.scan.n_jobs]);
    let mut q = Recorder::default();
    let none = SnappyScan {
        n_pages: 0,
        ..w.scan
    };
    launch_scan::scan(&mut q, &none, |_| panic!("no mark without pages")).unwrap();
    assert!(q.launches.is_empty());
}

#[test]
fn a_row_groups_launches_follow_its_walks() {
    let w = work();
    let order = |walks, plain| {
        let mut q = Recorder::default();
        let mut marks = Vec::new();
        let work = RowGroupLaunch {
            walks,
            has_plain_byte_arrays: plain,
            ..w.row_group
        };
        launch_row_group::row_group(&mut q, &work, |m| {
            marks.push(m);
            Ok(())
        })
        .unwrap();
        (q, marks)
    };
    let (q, marks) = order(StringWalks::Apart, false);
    assert_eq!(
        q.kernels(),
        [
            Kernel::DictViews,
            Kernel::DecodePages,
            Kernel::NestCount,
            Kernel::NestScan,
            Kernel::NestWrite,
            Kernel::GatherStatus
        ]
    );
    assert_eq!(
        marks,
        ["dict_views", "decode_pages", "nest", "gather_status"]
    );
    let (q, _) = order(StringWalks::Together, false);
    assert_eq!(q.kernels()[0], Kernel::StringWalks);
    // Without PLAIN pages the combined walk takes the dictionaries only.
    assert_eq!(q.launches[0].0.grid.0, w.row_group.n_dicts);
    let (q, _) = order(StringWalks::Spread, true);
    assert_eq!(
        q.kernels()[..3],
        [Kernel::SpreadSpec, Kernel::SpreadJoin, Kernel::SpreadEmit]
    );
}

#[test]
fn the_filter_strides_over_rows_past_its_grid() {
    let w = work();
    let mut q = Recorder::default();
    let none = FilterLaunch {
        n_rows: 0,
        ..w.filter
    };
    launch_filter_eval::filter_eval(&mut q, &none).unwrap();
    assert!(q.launches.is_empty());
    for (rows, blocks) in [(1, 1), (256, 1), (257, 2), (u32::MAX, 65_535)] {
        let mut q = Recorder::default();
        let work = FilterLaunch {
            n_rows: rows,
            ..w.filter
        };
        launch_filter_eval::filter_eval(&mut q, &work).unwrap();
        assert_eq!(q.launches[0].0.grid.0, blocks, "{rows} rows");
        assert_eq!(q.launches[0].0.block.0, FILTER_BLOCK);
    }
}

#[test]
fn the_compaction_constants_are_the_kernels() {
    let text = nvrtc::SOURCES
        .iter()
        .find(|s| s.name == "compact.cu")
        .expect("compact.cu")
        .text;
    let items = COMPACT_TILE / u64::from(COMPACT_BLOCK);
    for line in [
        format!("#define GDS_COMPACT_BLOCK {COMPACT_BLOCK}u"),
        format!("#define GDS_COMPACT_ITEMS {items}u"),
        format!("#define GDS_COMPACT_BAD_OFFSETS {COMPACT_BAD_OFFSETS}u"),
        format!("#define GDS_COMPACT_OUT_OF_RANGE {COMPACT_OUT_OF_RANGE}u"),
    ] {
        assert!(text.contains(&line), "compact.cu lacks {line:?}");
    }
}

#[test]
fn compaction_grids_are_capped_and_empty_work_launches_only_the_total() {
    let w = work();
    let mut q = Recorder::default();
    let huge = CompactGather {
        k: u32::MAX,
        ..w.compact.gather
    };
    launch_compact::gather(&mut q, &huge).unwrap();
    assert_eq!(q.launches[0].0.grid.0, 8192);
    let mut q = Recorder::default();
    let empty = CompactScan {
        n: 0,
        ..w.compact.scan
    };
    launch_compact::scan(&mut q, &empty).unwrap();
    launch_compact::mask_rows(&mut q, 1, 0, 2, 3).unwrap();
    launch_compact::scan_write(&mut q, &empty, 4, 5).unwrap();
    let none = CompactGather {
        k: 0,
        ..w.compact.gather
    };
    launch_compact::gather(&mut q, &none).unwrap();
    assert_eq!(q.kernels(), [Kernel::CompactScanSums]);
    let too_many = CompactScan {
        n: u64::MAX,
        ..w.compact.scan
    };
    assert!(launch_compact::scan(&mut Recorder::default(), &too_many).is_err());
}
