//! What one launch passes: which kernel ([`Kernel`], one per `extern "C"`
//! entry point of `cuda/`), and its arguments in order, each with its C
//! type ([`Args`]); and where the launches go ([`Queue`]).
//!
//! A launch names its kernel and arguments once:
//! `Args::new(Kernel::DecodePages).ptr(tasks).u32(n_tasks)` is
//! `gds_decode_pages(PageTask* tasks, u32 n_tasks)`. The driver reads each
//! argument with the size of the kernel's parameter, so the kinds must
//! match the C signature: the tests of `launch_tests.rs` check every launch
//! against the signatures parsed from the sources, without a GPU.

use std::ffi::c_void;

use crate::cuda::module::LaunchConfig;

use super::error::KernelError;

/// A kernel of the decoder's module (the order of [`Kernel::ALL`] is that
/// of `KernelSet::functions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kernel {
    DecodePages,
    DbaSizes,
    ByteArrayWalk,
    DictViews,
    StringWalks,
    SpreadSpec,
    SpreadJoin,
    SpreadEmit,
    GatherStatus,
    NestCount,
    NestScan,
    NestWrite,
    CheckSnappy,
    SnappyPieces,
    SnappySpec,
    SnappySpecLater,
    SnappySpecRest,
    SnappyChain,
    SnappyOuts,
    SnappyPrefix,
    SnappyVerify,
    SnappyFinish,
    SnappyDecode,
    FilterEval,
    CompactTileSums,
    CompactScanSums,
    CompactMaskRows,
    CompactScanWrite,
    CompactListLengths,
    CompactExpand,
    CompactFixedRows,
    CompactGather,
    CompactBits,
}

impl Kernel {
    /// Every kernel, in the order of their functions in `KernelSet`.
    pub(crate) const ALL: [Kernel; 33] = [
        Kernel::DecodePages,
        Kernel::DbaSizes,
        Kernel::ByteArrayWalk,
        Kernel::DictViews,
        Kernel::StringWalks,
        Kernel::SpreadSpec,
        Kernel::SpreadJoin,
        Kernel::SpreadEmit,
        Kernel::GatherStatus,
        Kernel::NestCount,
        Kernel::NestScan,
        Kernel::NestWrite,
        Kernel::CheckSnappy,
        Kernel::SnappyPieces,
        Kernel::SnappySpec,
        Kernel::SnappySpecLater,
        Kernel::SnappySpecRest,
        Kernel::SnappyChain,
        Kernel::SnappyOuts,
        Kernel::SnappyPrefix,
        Kernel::SnappyVerify,
        Kernel::SnappyFinish,
        Kernel::SnappyDecode,
        Kernel::FilterEval,
        Kernel::CompactTileSums,
        Kernel::CompactScanSums,
        Kernel::CompactMaskRows,
        Kernel::CompactScanWrite,
        Kernel::CompactListLengths,
        Kernel::CompactExpand,
        Kernel::CompactFixedRows,
        Kernel::CompactGather,
        Kernel::CompactBits,
    ];

    /// The entry point's name in the module.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kernel::DecodePages => "gds_decode_pages",
            Kernel::DbaSizes => "gds_dba_sizes",
            Kernel::ByteArrayWalk => "gds_byte_array_walk",
            Kernel::DictViews => "gds_dict_views",
            Kernel::StringWalks => "gds_string_walks",
            Kernel::SpreadSpec => "gds_spread_spec",
            Kernel::SpreadJoin => "gds_spread_join",
            Kernel::SpreadEmit => "gds_spread_emit",
            Kernel::GatherStatus => "gds_gather_status",
            Kernel::NestCount => "gds_nest_count",
            Kernel::NestScan => "gds_nest_scan",
            Kernel::NestWrite => "gds_nest_write",
            Kernel::CheckSnappy => "gds_check_snappy",
            Kernel::SnappyPieces => "gds_snappy_pieces",
            Kernel::SnappySpec => "gds_snappy_spec",
            Kernel::SnappySpecLater => "gds_snappy_spec_later",
            Kernel::SnappySpecRest => "gds_snappy_spec_rest",
            Kernel::SnappyChain => "gds_snappy_chain",
            Kernel::SnappyOuts => "gds_snappy_outs",
            Kernel::SnappyPrefix => "gds_snappy_prefix",
            Kernel::SnappyVerify => "gds_snappy_verify",
            Kernel::SnappyFinish => "gds_snappy_finish",
            Kernel::SnappyDecode => "gds_snappy_decode",
            Kernel::FilterEval => "gds_filter_eval",
            Kernel::CompactTileSums => "gds_compact_tile_sums",
            Kernel::CompactScanSums => "gds_compact_scan_sums",
            Kernel::CompactMaskRows => "gds_compact_mask_rows",
            Kernel::CompactScanWrite => "gds_compact_scan_write",
            Kernel::CompactListLengths => "gds_compact_list_lengths",
            Kernel::CompactExpand => "gds_compact_expand",
            Kernel::CompactFixedRows => "gds_compact_fixed_rows",
            Kernel::CompactGather => "gds_compact_gather",
            Kernel::CompactBits => "gds_compact_bits",
        }
    }
}

/// One argument, with the C type of its parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arg {
    /// A pointer parameter (`T*`, `const T*`): a device address, 8 bytes.
    Ptr(u64),
    /// A `u32` parameter.
    U32(u32),
    /// A `u64` parameter that is not a pointer.
    U64(u64),
}

impl Arg {
    /// The address of the value, as `cuLaunchKernel` takes it.
    fn as_param(&mut self) -> *mut c_void {
        match self {
            Arg::Ptr(v) | Arg::U64(v) => (v as *mut u64).cast(),
            Arg::U32(v) => (v as *mut u32).cast(),
        }
    }
}

/// A kernel and its arguments, in the order of its C parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub(crate) struct Args {
    kernel: Kernel,
    values: Vec<Arg>,
}

impl Args {
    /// `kernel`, with no argument yet.
    pub(crate) fn new(kernel: Kernel) -> Args {
        Args {
            kernel,
            values: Vec::with_capacity(16),
        }
    }

    /// Adds a pointer parameter's device address.
    pub(crate) fn ptr(mut self, address: u64) -> Args {
        self.values.push(Arg::Ptr(address));
        self
    }

    /// Adds a `u32` parameter.
    pub(crate) fn u32(mut self, value: u32) -> Args {
        self.values.push(Arg::U32(value));
        self
    }

    /// Adds a `u64` parameter (not a pointer).
    pub(crate) fn u64(mut self, value: u64) -> Args {
        self.values.push(Arg::U64(value));
        self
    }

    /// The kernel.
    pub(crate) fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The arguments, in order.
    #[cfg(test)]
    pub(crate) fn values(&self) -> &[Arg] {
        &self.values
    }

    /// One pointer per argument, to its value inside `self`: valid while
    /// `self` is neither moved nor changed.
    pub(crate) fn params(&mut self) -> Vec<*mut c_void> {
        self.values.iter_mut().map(Arg::as_param).collect()
    }
}

/// Where a family's launches go: a stream (`set::Launcher`) or, in the
/// tests, a list.
pub(crate) trait Queue {
    /// Queues `args.kernel()` with `config` and `args`.
    fn queue(&mut self, config: LaunchConfig, args: Args) -> Result<(), KernelError>;

    /// The values the kernels were compiled with.
    fn config(&self) -> super::KernelConfig;
}
