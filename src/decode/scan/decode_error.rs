//! What can go wrong between a fetched row group and its device batch.

use crate::cuda::CudaError;
use crate::decode::array::DeviceArrayError;
use crate::decode::kernels::KernelError;
use crate::decode::page::DecodePlanError;
use crate::engine::IoError;
use crate::nvcomp::NvcompError;
use crate::parquet::ScanError;
use crate::store::StoreError;

/// A GPU decode failure. Each variant keeps its source; the corrupt-input
/// ones name the file, column, row group and page.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The store could not open or read a file.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file is not valid Parquet, or its bytes could not be fetched.
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// The engine could not open or read a local file, or start a thread.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A CUDA call failed (a device, memory, a stream).
    #[error(transparent)]
    Cuda(#[from] CudaError),
    /// The scan request does not fit the file (unknown column, filter).
    #[error("{file}: {source}")]
    Request {
        /// The file.
        file: String,
        /// The planner's error.
        #[source]
        source: crate::parquet::plan::PlanError,
    },
    /// The row group's pages do not plan (bad headers, unsupported columns).
    #[error("{file}: {source}")]
    Plan {
        /// The file.
        file: String,
        /// What the planner found.
        #[source]
        source: DecodePlanError,
    },
    /// A column the decoder does not cover; found before any I/O.
    #[error("{file}: column {column}: {what} is not supported by the GPU decoder")]
    Unsupported {
        /// The file.
        file: String,
        /// The column.
        column: String,
        /// What is not covered.
        what: String,
    },
    /// The kernels could not be compiled, loaded or launched.
    #[error(transparent)]
    Kernel(Box<KernelError>),
    /// nvCOMP could not be loaded or refused a batch.
    #[error(transparent)]
    Nvcomp(#[from] NvcompError),
    /// nvCOMP failed on one page (corrupt compressed data).
    #[error(
        "{file}: column {column}, row group {row_group}, page {page}: decompression failed: {what}"
    )]
    Decompress {
        /// The file.
        file: String,
        /// The column.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// Page index in the chunk (the dictionary page is 0 when present).
        page: usize,
        /// nvCOMP's status, or the size mismatch.
        what: String,
    },
    /// A Snappy or LZ4 page whose stream does not fit its page (checked on
    /// the host before nvCOMP sees it).
    #[error("{file}: column {column}, row group {row_group}, page {page}: {source}")]
    CorruptCompressed {
        /// The file.
        file: String,
        /// The column.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// Page index in the chunk.
        page: usize,
        /// What the stream check found.
        #[source]
        source: crate::decode::page::validate::CompressedError,
    },
    /// A page the host decompresses (BROTLI, legacy LZ4 without the
    /// Hadoop framing, GZIP of several members) is corrupt or truncated,
    /// or does not decompress to its header's size.
    #[error("{file}: column {column}, row group {row_group}, page {page}: {codec} page: {source}")]
    HostDecompress {
        /// The file.
        file: String,
        /// The column.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// Page index in the chunk.
        page: usize,
        /// The host codec.
        codec: crate::decode::page::HostCodec,
        /// The codec's error.
        #[source]
        source: crate::decode::page::HostCodecError,
    },
    /// A kernel found a corrupt page.
    #[error(
        "{file}: column {column}, row group {row_group}, page {page}: {what} (at level {index})"
    )]
    CorruptPage {
        /// The file.
        file: String,
        /// The column.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// Page index in the chunk.
        page: usize,
        /// What the kernel found.
        what: String,
        /// The level (row) index where it found it.
        index: u32,
    },
    /// A nested column's levels do not describe a nesting: a level out of
    /// range, a chunk that starts mid-record, a continuation of a list that
    /// has no element there (found by the nesting kernels at a level
    /// entry), or leaves of one field that disagree on its records or
    /// elements (found when the batch is built).
    #[error("{file}: column {column}, row group {row_group}: {what}")]
    CorruptLevels {
        /// The file.
        file: String,
        /// The leaf column.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// What was found, and where.
        what: String,
    },
    /// The GPU did not finish a row group's work (its copies, nvCOMP's
    /// calls and the kernels of its page group) within
    /// `DecodeOptions::device_timeout`. The scan stops there; the memory
    /// that work uses is left to it (never handed to another scan), so the
    /// process stays usable, but if a kernel never ends the GPU stays busy
    /// until the process exits.
    #[error(
        "{file}: row group {row_group} (page group {group}: {pages} pages of {columns} column(s) from {first_column}): the GPU did not finish within {limit:?}; the scan stopped, its device memory is left to the unfinished work (if the GPU stays busy, restart the process)"
    )]
    DeviceTimeout {
        /// The file.
        file: String,
        /// Row group index in the file.
        row_group: usize,
        /// The group of row groups launched together (the scan's count).
        group: usize,
        /// The row group's first column.
        first_column: String,
        /// Columns decoded.
        columns: usize,
        /// Pages decoded.
        pages: usize,
        /// The limit.
        limit: std::time::Duration,
    },
    /// The status copied back from the device has the wrong size (a bug).
    #[error("the kernels' status array came back with the wrong size")]
    StatusSize,
    /// The thread decoding one GPU's share of a scan over several GPUs
    /// ended before handing over all of its row groups (it panicked); the
    /// scan stops there, never with a row group missing.
    #[error("the decode of GPU {device}'s share ended early: {row_groups} row group(s) missing")]
    ShareEnded {
        /// The GPU.
        device: usize,
        /// Row groups of its share not handed over.
        row_groups: usize,
    },
    /// Planning a row group on the host panicked (a bug); the scan stops
    /// there.
    #[error("{file}: row group {row_group}: planning panicked: {message}")]
    PlanPanicked {
        /// The file.
        file: String,
        /// The row group.
        row_group: usize,
        /// The panic's message.
        message: String,
    },
    /// The thread that plans row groups ahead of the GPU ended before the
    /// fetch did; the scan stops there, never with row groups missing.
    #[error("the row-group planner ended early: {why}")]
    PlannerEnded {
        /// What ended it.
        why: String,
    },
    /// The device's shared pipeline (`GDSCAN_DECODE_PIPELINE=shared`) ended
    /// before this decode did: another decode on it met a device timeout,
    /// or its thread could not start or panicked. The decode stops there,
    /// never with row groups missing; the next decode starts a new pipeline.
    #[error("the device's shared decode pipeline ended: {why}")]
    PipelineEnded {
        /// What ended it.
        why: String,
    },
    /// Late materialization's two phases do not agree (a phase handed out
    /// more or fewer batches than its plan holds, a row group's columns
    /// missing): the scan stops, never with rows dropped or misplaced.
    #[error("late materialization: {why}")]
    Late {
        /// What disagreed.
        why: String,
    },
    /// Device arrays could not be built or copied.
    #[error(transparent)]
    Array(#[from] DeviceArrayError),
    /// The exact filter on the GPU: a predicate it does not evaluate
    /// (found before any read), or a failure evaluating or compacting.
    #[error(transparent)]
    Filter(Box<crate::decode::filter::FilterError>),
    /// The files of one decode do not decode to the same columns.
    #[error("{file}: its columns differ from {first}'s: every file of one decode must have the same schema")]
    SchemaMismatch {
        /// The file that differs.
        file: String,
        /// The first file.
        first: String,
    },
}

impl From<crate::decode::filter::FilterError> for DecodeError {
    fn from(e: crate::decode::filter::FilterError) -> Self {
        DecodeError::Filter(Box::new(e))
    }
}

impl From<KernelError> for DecodeError {
    fn from(e: KernelError) -> Self {
        DecodeError::Kernel(Box::new(e))
    }
}

impl DecodeError {
    /// The CUDA failure behind this error, wherever the decoder met it
    /// (its own calls, a fetch, a kernel, nvCOMP, a device array).
    pub fn cuda(&self) -> Option<&CudaError> {
        match self {
            DecodeError::Cuda(e) => Some(e),
            DecodeError::Io(e) => e.cuda(),
            DecodeError::Store(e) => e.cuda(),
            DecodeError::Scan(e) => e.cuda(),
            DecodeError::Kernel(k) => match k.as_ref() {
                KernelError::Cuda(e) => Some(e),
                KernelError::Module(crate::cuda::module::ModuleError::Driver(e)) => Some(e),
                _ => None,
            },
            DecodeError::Nvcomp(NvcompError::Cuda { source, .. }) => Some(source),
            DecodeError::Array(DeviceArrayError::Cuda(e)) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oom() -> CudaError {
        CudaError::OutOfMemory {
            device: 0,
            requested: 18 << 20,
            free: 10 << 20,
        }
    }

    fn is_oom(e: Option<&CudaError>) -> bool {
        matches!(e, Some(CudaError::OutOfMemory { requested, .. }) if *requested == 18 << 20)
    }

    #[test]
    fn the_cuda_failure_is_found_through_every_layer_that_carries_it() {
        let scan_io = ScanError::Io(IoError::Cuda(oom()));
        assert!(is_oom(scan_io.cuda()));
        let scan_store = ScanError::Store(Box::new(StoreError::Io(IoError::Cuda(oom()))));
        assert!(is_oom(scan_store.cuda()));
        assert!(is_oom(ScanError::Cuda(oom()).cuda()));
        assert!(is_oom(DecodeError::Scan(scan_store).cuda()));
        assert!(is_oom(DecodeError::Store(StoreError::Cuda(oom())).cuda()));
        assert!(is_oom(DecodeError::Io(IoError::Cuda(oom())).cuda()));
        let kernel = DecodeError::Kernel(Box::new(KernelError::Cuda(oom())));
        assert!(is_oom(kernel.cuda()));
        let not_cuda = ScanError::Io(IoError::os("f", "read", std::io::Error::other("x")));
        assert!(not_cuda.cuda().is_none());
    }
}
