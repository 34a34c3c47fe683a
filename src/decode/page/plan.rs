//! The decode plan of one row group (the model; [`planner`](super::planner)
//! fills it): from the walked pages of each
//! projected column chunk to the arithmetic the GPU launches need: the
//! output Arrow type and value conversion of each column, each data page's
//! first output row and encoding class, where each page's bytes are (in the
//! fetched row-group buffer, or decompressed into a per-row-group scratch
//! buffer), the decompression jobs, and the sizes of scratch and output.
//!
//! Pure: no I/O, no GPU. Anything outside the decoder's coverage
//! (INTERVAL of another length than 12, LZO, an UNKNOWN leaf, ...) is a
//! typed [`DecodePlanError::Unsupported`](super::DecodePlanError::Unsupported)
//! before any kernel runs.

use parquet::basic::{Encoding as ParquetEncoding, Type as PhysicalType};
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::schema::types::ColumnDescriptor;

use super::codes::Encoding;
use super::column_type::{ChunkCodec, ColumnType};
use super::host_codec::HostCodec;
use super::walk::PageInfo;
use crate::nvcomp::Codec;
use crate::parquet::plan::PageRange;

/// Alignment of every region of the scratch buffer (decompressed pages,
/// dictionary offsets, per-page work areas).
pub const SCRATCH_ALIGN: usize = 16;

/// Which buffer a region lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferKind {
    /// The fetched row-group buffer (bytes as stored in the file).
    RowGroup,
    /// The per-row-group scratch buffer (decompressed pages, work areas).
    Scratch,
}

/// Bytes in one of the buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Which buffer.
    pub buffer: BufferKind,
    /// Offset in it.
    pub offset: usize,
    /// Length.
    pub len: usize,
}

impl Region {
    pub(super) fn row_group(offset: usize, len: usize) -> Self {
        Region {
            buffer: BufferKind::RowGroup,
            offset,
            len,
        }
    }
}

/// Data page format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageVersion {
    /// DATA_PAGE: levels and values compressed together; decompressed,
    /// `[u32 def length][def levels][values]` when nullable.
    V1,
    /// DATA_PAGE_V2: levels first and never compressed, then the values.
    V2,
}

/// One data page to decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageDecode {
    /// Index in the chunk's walked pages (the dictionary page is 0).
    pub page: usize,
    /// Format version.
    pub version: PageVersion,
    /// The values' encoding as written.
    pub encoding: ParquetEncoding,
    /// The encoding the kernels dispatch on.
    pub class: Encoding,
    /// Values, nulls included (level entries: for a nested leaf, empty
    /// and null lists included).
    pub num_values: u32,
    /// Rows (flat columns: equal to `num_values`; a nested leaf's v1 page:
    /// `num_values` too, its records are not in its header).
    pub num_rows: u32,
    /// Nulls, when the header says (v2).
    pub num_nulls: Option<u32>,
    /// First output row: the rows of the column's earlier kept pages (a
    /// nested leaf: the level entries before the page).
    pub out_row: u64,
    /// First row within the row group, from the offset index when the scan
    /// plan carries it (with page pruning it differs from `out_row`).
    pub first_row: Option<u64>,
    /// The decompressed body: v1 the whole page (levels and values), v2 the
    /// values only.
    pub data: Region,
    /// v2 definition levels (in the row-group buffer, never compressed);
    /// None for v1 pages and required columns.
    pub def_levels: Option<Region>,
    /// v2 repetition levels of a nested leaf (in the row-group buffer,
    /// never compressed); None for v1 pages and flat columns.
    pub rep_levels: Option<Region>,
    /// Work area in scratch for the kernels, see [`work_bytes`]; None when
    /// the page needs none.
    pub work: Option<Region>,
}

/// A chunk's dictionary page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictionaryDecode {
    /// Index in the chunk's walked pages (always 0).
    pub page: usize,
    /// Entries.
    pub num_values: u32,
    /// The decompressed entries (PLAIN).
    pub data: Region,
    /// For BYTE_ARRAY: `u32 × (num_values + 1)` in scratch, each entry's
    /// offset in `data`, filled by a prep kernel.
    pub offsets: Option<Region>,
}

/// One decompression job: `src` of the row-group buffer decompressed into
/// `dst` of scratch, by nvCOMP's `codec` (or, as [`HostJob`], a host codec).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecompressJob<C = Codec> {
    /// Codec.
    pub codec: C,
    /// Index into [`DecodePlan::columns`].
    pub column: usize,
    /// Page index in the chunk's walked pages.
    pub page: usize,
    /// Offset of the compressed bytes in the row-group buffer.
    pub src_offset: usize,
    /// Compressed bytes.
    pub src_len: usize,
    /// Offset of the output in scratch ([`SCRATCH_ALIGN`]-aligned).
    pub dst_offset: usize,
    /// Exact decompressed bytes.
    pub dst_len: usize,
}

impl<C> DecompressJob<C> {
    /// The same job with another codec.
    pub fn with_codec<D>(self, codec: D) -> DecompressJob<D> {
        let DecompressJob {
            column,
            page,
            src_offset,
            src_len,
            dst_offset,
            dst_len,
            ..
        } = self;
        DecompressJob {
            codec,
            column,
            page,
            src_offset,
            src_len,
            dst_offset,
            dst_len,
        }
    }
}

/// One decompression job run on the host before the row group's upload
/// (a codec or a page framing nvCOMP cannot take): `src` of the row-group
/// buffer decompressed into `dst` of scratch, uploaded there with the row
/// group, where the kernels read the page's decompressed bytes.
pub type HostJob = DecompressJob<HostCodec>;

/// The decode of one column chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDecode {
    /// Leaf index in the schema.
    pub leaf: usize,
    /// Column path.
    pub column: String,
    /// Input and output types (a nested leaf: of its values over its level
    /// entries, [`chunk_type`](super::column_type::chunk_type)).
    pub ty: ColumnType,
    /// The leaf's max definition level.
    pub max_def: u32,
    /// The leaf's max repetition level (0: not under a list).
    pub max_rep: u32,
    /// Whether the leaf is nested (inside a group or under a list): its
    /// output is over its level entries, `rows` counts those.
    pub nested: bool,
    /// The chunk's codec, None when uncompressed.
    pub codec: Option<ChunkCodec>,
    /// The dictionary page, if the chunk has one.
    pub dictionary: Option<DictionaryDecode>,
    /// The kept data pages in order.
    pub pages: Vec<PageDecode>,
    /// Output rows (sum over the kept pages; a nested leaf's level
    /// entries).
    pub rows: u64,
    /// Output bytes of fixed-width values (BOOLEAN: the bitmap); 0 for
    /// views.
    pub value_bytes: u64,
    /// Output bytes of the validity bitmap (0 when required).
    pub validity_bytes: u64,
    /// Output bytes of BYTE_ARRAY columns: 16-byte views or Decimal128
    /// values, or 32-byte Decimal256 values.
    pub view_bytes: u64,
}

/// The decode plan of one row group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodePlan {
    /// Row group index in the file.
    pub row_group: usize,
    /// The projected columns, in order.
    pub columns: Vec<ColumnDecode>,
    /// Every decompression job nvCOMP runs (a Hadoop-framed legacy LZ4
    /// page: one per block, their outputs side by side in the page's
    /// region).
    pub jobs: Vec<DecompressJob>,
    /// Every decompression job the host runs, before the upload.
    pub host_jobs: Vec<HostJob>,
    /// Bytes of the scratch buffer.
    pub scratch_bytes: usize,
}

/// Counts of one codec's jobs: what nvCOMP's scratch sizing needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobStats {
    /// Jobs.
    pub count: usize,
    /// Largest decompressed size.
    pub max_dst: usize,
    /// Total decompressed bytes.
    pub total_dst: usize,
    /// Total compressed bytes.
    pub total_src: usize,
}

impl DecodePlan {
    /// The statistics of one codec's jobs.
    pub fn job_stats(&self, codec: Codec) -> JobStats {
        self.jobs
            .iter()
            .filter(|j| j.codec == codec)
            .fold(JobStats::default(), |s, j| JobStats {
                count: s.count + 1,
                max_dst: s.max_dst.max(j.dst_len),
                total_dst: s.total_dst + j.dst_len,
                total_src: s.total_src + j.src_len,
            })
    }

    /// Output rows, when every column has the same (always, unless page
    /// pruning kept different pages in different columns).
    pub fn rows(&self) -> Option<u64> {
        let first = self.columns.first()?.rows;
        self.columns
            .iter()
            .all(|c| c.rows == first)
            .then_some(first)
    }

    /// Output bytes of all columns (values, validity, views).
    pub fn output_bytes(&self) -> u64 {
        self.columns
            .iter()
            .map(|c| c.value_bytes + c.validity_bytes + c.view_bytes)
            .sum()
    }
}

/// Bytes of a data page's work area in scratch: a `u32` row index per
/// value when the column is nullable (value → row map), then a `u32` byte
/// offset per value for PLAIN BYTE_ARRAY pages (value starts).
pub fn work_bytes(ty: &ColumnType, class: Encoding, num_values: u32) -> usize {
    let per_value = usize::from(ty.nullable)
        + usize::from(ty.physical == PhysicalType::BYTE_ARRAY && class == Encoding::Plain);
    per_value * 4 * num_values as usize
}

/// Where a fetched row group's bytes are, as the planner sees them.
#[derive(Debug, Clone, Copy)]
pub enum StoredBytes<'a> {
    /// In host memory: the row-group buffer.
    Host(&'a [u8]),
    /// Landing in device memory, `len` bytes: pages whose routing or
    /// decompression needs their bytes on the host (Gzip, legacy LZ4,
    /// Brotli) cannot be planned ([`DecodePlanError::NotOnHost`](super::DecodePlanError::NotOnHost)).
    Device {
        /// The row-group buffer's length.
        len: usize,
    },
}

impl StoredBytes<'_> {
    /// The row-group buffer's length.
    pub fn len(&self) -> usize {
        match self {
            StoredBytes::Host(bytes) => bytes.len(),
            StoredBytes::Device { len } => *len,
        }
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One column chunk's input to the plan.
#[derive(Debug, Clone, Copy)]
pub struct ColumnInput<'a> {
    /// Leaf index in the schema.
    pub leaf: usize,
    /// The leaf's descriptor.
    pub descr: &'a ColumnDescriptor,
    /// The chunk's metadata.
    pub meta: &'a ColumnChunkMetaData,
    /// Its pages as walked from the fetched buffer.
    pub pages: &'a [PageInfo],
    /// Where the fetched row group's bytes are (the planner reads a Gzip
    /// or legacy LZ4 page's framing to route it to nvCOMP or the host).
    pub buffer: StoredBytes<'a>,
    /// Its kept data pages from the offset index (the scan plan's
    /// [`ChunkPlan::pages`](crate::parquet::plan::ChunkPlan::pages)), when known.
    pub page_ranges: Option<&'a [PageRange]>,
}
