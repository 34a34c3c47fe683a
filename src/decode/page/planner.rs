//! The planner: walked pages and the scan plan in, a row group's
//! [`DecodePlan`] out (each data page's first output row and encoding,
//! where its bytes are, the decompression jobs, scratch and output sizes).

use parquet::basic::{Encoding as ParquetEncoding, Type as PhysicalType};
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};

use super::codes::{Encoding, Kind};
use super::column_type::{chunk_type, is_nested, page_codec, unsupported, ChunkCodec, ColumnType};
use super::framing::{gzip_one_member, hadoop_blocks};
use super::header::{DataPageHeader, DataPageHeaderV2, DictionaryPageHeader, PageKind};
use super::host_codec::HostCodec;
use super::plan::{
    work_bytes, BufferKind, ColumnDecode, ColumnInput, DecodePlan, DecompressJob, DictionaryDecode,
    HostJob, PageDecode, PageVersion, Region, StoredBytes, SCRATCH_ALIGN,
};
use super::plan_error::DecodePlanError;
use super::walk::{walk_chunk, PageInfo};
use crate::nvcomp::Codec;
use crate::parquet::fetch::ChunkSlice;
use crate::parquet::plan::ScanPlan;

/// Hands out aligned regions of scratch.
struct Scratch {
    len: usize,
    row_group: usize,
}

impl Scratch {
    fn take(&mut self, len: usize, column: &str) -> Result<Region, DecodePlanError> {
        let too_big = || DecodePlanError::BadChunk {
            column: column.to_string(),
            row_group: self.row_group,
            what: "scratch size overflows".into(),
        };
        let offset = self
            .len
            .checked_next_multiple_of(SCRATCH_ALIGN)
            .ok_or_else(too_big)?;
        self.len = offset.checked_add(len).ok_or_else(too_big)?;
        Ok(Region {
            buffer: BufferKind::Scratch,
            offset,
            len,
        })
    }
}

/// The decompression jobs of a row group being planned: nvCOMP's and the
/// host's.
#[derive(Default)]
struct Jobs {
    gpu: Vec<DecompressJob>,
    host: Vec<HostJob>,
}

/// A part of a page body: `src_len` stored bytes at `src_offset` of the
/// row-group buffer holding `len` bytes once decompressed (when
/// `compressed` and the chunk has a codec).
struct BodyPart {
    page: usize,
    compressed: bool,
    src_offset: usize,
    src_len: usize,
    len: usize,
}

struct ColumnPlanner<'a, 'b> {
    input: &'b ColumnInput<'a>,
    column: String,
    row_group: usize,
    index: usize,
    codec: Option<ChunkCodec>,
}

impl ColumnPlanner<'_, '_> {
    fn bad_page(&self, page: usize, what: impl Into<String>) -> DecodePlanError {
        DecodePlanError::BadPage {
            column: self.column.clone(),
            row_group: self.row_group,
            page,
            what: what.into(),
        }
    }

    fn bad_chunk(&self, what: impl Into<String>) -> DecodePlanError {
        DecodePlanError::BadChunk {
            column: self.column.clone(),
            row_group: self.row_group,
            what: what.into(),
        }
    }

    fn unsupported_page(&self, page: usize, what: impl std::fmt::Display) -> DecodePlanError {
        DecodePlanError::Unsupported {
            column: self.column.clone(),
            what: format!("page {page} of row group {}: {what}", self.row_group),
        }
    }

    /// The region holding `len` decompressed bytes of a body part that
    /// starts at `src_offset` and is stored in `src_len` bytes, and the job
    /// producing it when it is compressed.
    fn body(
        &self,
        part: BodyPart,
        scratch: &mut Scratch,
        jobs: &mut Jobs,
    ) -> Result<Region, DecodePlanError> {
        let BodyPart {
            page,
            compressed,
            src_offset,
            src_len,
            len,
        } = part;
        match self.codec.filter(|_| compressed) {
            None => {
                if src_len != len {
                    return Err(self.bad_page(
                        page,
                        format!("uncompressed page stores {src_len} bytes but says it holds {len}"),
                    ));
                }
                Ok(Region::row_group(src_offset, len))
            }
            // A page of nulls only may have no values at all.
            Some(_) if len == 0 => Ok(Region::row_group(src_offset, 0)),
            Some(codec) => {
                if src_len == 0 {
                    return Err(self.bad_page(
                        page,
                        format!("compressed body is empty but should hold {len} bytes"),
                    ));
                }
                let stored = src_offset
                    .checked_add(src_len)
                    .filter(|&end| end <= self.input.buffer.len())
                    .map(|end| src_offset..end)
                    .ok_or_else(|| {
                        self.bad_page(page, "compressed body outside the fetched bytes")
                    })?;
                let dst = scratch.take(len, &self.column)?;
                self.route(codec, stored, part_at(page, src_offset, dst), jobs)?;
                Ok(dst)
            }
        }
    }

    /// Appends the jobs decompressing the page body of `codec` stored at
    /// `stored` into `at.dst`: nvCOMP's when it takes the page as it is
    /// framed, else the host's. Telling which reads the framing of Gzip and
    /// legacy LZ4 pages, so those (and Brotli, the host's) need the bytes
    /// in host memory.
    fn route(
        &self,
        codec: ChunkCodec,
        stored: std::ops::Range<usize>,
        at: PartAt,
        jobs: &mut Jobs,
    ) -> Result<(), DecodePlanError> {
        let job = DecompressJob {
            codec: (),
            column: self.index,
            page: at.page,
            src_offset: at.src_offset,
            src_len: stored.len(),
            dst_offset: at.dst.offset,
            dst_len: at.dst.len,
        };
        let gpu = |codec: Codec| job.with_codec(codec);
        let on_host = || match self.input.buffer {
            StoredBytes::Host(buffer) => Ok(&buffer[stored.clone()]),
            StoredBytes::Device { .. } => Err(DecodePlanError::NotOnHost {
                column: self.column.clone(),
                row_group: self.row_group,
                page: at.page,
                codec: codec.name(),
            }),
        };
        let host = match codec {
            ChunkCodec::Gpu(c) => {
                jobs.gpu.push(gpu(c));
                return Ok(());
            }
            ChunkCodec::Gzip if gzip_one_member(on_host()?, at.dst.len) => {
                jobs.gpu.push(gpu(Codec::Gzip));
                return Ok(());
            }
            ChunkCodec::Gzip => HostCodec::GzipMembers,
            ChunkCodec::Lz4Legacy => match hadoop_blocks(on_host()?, at.dst.len) {
                Some(blocks) => {
                    let whole = gpu(Codec::Lz4);
                    jobs.gpu.extend(blocks.into_iter().map(|b| DecompressJob {
                        src_offset: whole.src_offset + b.src_offset,
                        src_len: b.src_len,
                        dst_offset: whole.dst_offset + b.dst_offset,
                        dst_len: b.dst_len,
                        ..whole
                    }));
                    return Ok(());
                }
                None => HostCodec::Lz4Legacy,
            },
            ChunkCodec::Brotli => {
                on_host()?;
                HostCodec::Brotli
            }
        };
        jobs.host.push(job.with_codec(host));
        Ok(())
    }
}

/// Where a compressed body part goes: its page, its stored bytes' offset
/// in the row-group buffer, its region of scratch.
#[derive(Clone, Copy)]
struct PartAt {
    page: usize,
    src_offset: usize,
    dst: Region,
}

fn part_at(page: usize, src_offset: usize, dst: Region) -> PartAt {
    PartAt {
        page,
        src_offset,
        dst,
    }
}

/// Whether the column's values are INT32 or INT64 (DELTA_BINARY_PACKED's).
fn is_int(ty: &ColumnType) -> bool {
    matches!(ty.physical, PhysicalType::INT32 | PhysicalType::INT64)
}

/// Whether the column's values are BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY
/// (DELTA_BYTE_ARRAY's).
fn is_byte_array(ty: &ColumnType) -> bool {
    matches!(
        ty.physical,
        PhysicalType::BYTE_ARRAY | PhysicalType::FIXED_LEN_BYTE_ARRAY
    )
}

fn page_class(
    planner: &ColumnPlanner<'_, '_>,
    ty: &ColumnType,
    page: usize,
    encoding: ParquetEncoding,
    has_dictionary: bool,
) -> Result<Encoding, DecodePlanError> {
    match encoding {
        ParquetEncoding::PLAIN => Ok(Encoding::Plain),
        ParquetEncoding::PLAIN_DICTIONARY | ParquetEncoding::RLE_DICTIONARY => {
            if ty.physical == PhysicalType::BOOLEAN {
                Err(planner.unsupported_page(page, "dictionary-encoded BOOLEAN"))
            } else if !has_dictionary {
                Err(planner.bad_page(page, "dictionary-encoded page without a dictionary page"))
            } else {
                Ok(Encoding::Dictionary)
            }
        }
        ParquetEncoding::RLE if ty.physical == PhysicalType::BOOLEAN => Ok(Encoding::Rle),
        ParquetEncoding::BYTE_STREAM_SPLIT if ty.kind == Kind::Fixed => {
            Ok(Encoding::ByteStreamSplit)
        }
        ParquetEncoding::DELTA_BINARY_PACKED if is_int(ty) => Ok(Encoding::DeltaBinaryPacked),
        ParquetEncoding::DELTA_LENGTH_BYTE_ARRAY if ty.physical == PhysicalType::BYTE_ARRAY => {
            Ok(Encoding::DeltaLengthByteArray)
        }
        ParquetEncoding::DELTA_BYTE_ARRAY if is_byte_array(ty) => Ok(Encoding::DeltaByteArray),
        other => Err(planner.unsupported_page(page, format!("{other} encoding"))),
    }
}

/// Checks that `present` PLAIN values can fit in `len` bytes (a lying
/// value count would otherwise size scratch and launches): fixed-width
/// values take their width, booleans a bit, byte arrays at least their
/// 4-byte length.
fn check_values_fit(
    planner: &ColumnPlanner<'_, '_>,
    ty: &ColumnType,
    page: usize,
    class: Encoding,
    present: u32,
    len: usize,
) -> Result<(), DecodePlanError> {
    if class != Encoding::Plain && class != Encoding::ByteStreamSplit {
        return Ok(());
    }
    let n = u64::from(present);
    let min = match ty.physical {
        PhysicalType::BOOLEAN => n.div_ceil(8),
        PhysicalType::BYTE_ARRAY => n * 4,
        _ => n * u64::from(ty.type_length),
    };
    if min > len as u64 {
        return Err(planner.bad_page(
            page,
            format!(
                "{present} {} values need at least {min} bytes but the page holds {len}",
                if class == Encoding::Plain {
                    "PLAIN"
                } else {
                    "BYTE_STREAM_SPLIT"
                }
            ),
        ));
    }
    Ok(())
}

/// Checks what the chunk's metadata says before any byte is read: the
/// column's type and codec, and the encodings the chunk lists
/// (BYTE_STREAM_SPLIT for fixed-width columns, DELTA_BINARY_PACKED for
/// INT32 and INT64, DELTA_LENGTH_BYTE_ARRAY for BYTE_ARRAY,
/// DELTA_BYTE_ARRAY for BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY). Pages are checked again when planned: the list may be
/// incomplete.
pub fn check_chunk(meta: &ColumnChunkMetaData) -> Result<ColumnType, DecodePlanError> {
    let descr = meta.column_descr();
    let ty = chunk_type(descr)?;
    page_codec(descr, meta.compression())?;
    for e in meta.encodings() {
        match e {
            ParquetEncoding::PLAIN
            | ParquetEncoding::PLAIN_DICTIONARY
            | ParquetEncoding::RLE_DICTIONARY
            | ParquetEncoding::RLE => {}
            ParquetEncoding::BYTE_STREAM_SPLIT if ty.kind == Kind::Fixed => {}
            ParquetEncoding::DELTA_BINARY_PACKED if is_int(&ty) => {}
            ParquetEncoding::DELTA_LENGTH_BYTE_ARRAY if ty.physical == PhysicalType::BYTE_ARRAY => {
            }
            ParquetEncoding::DELTA_BYTE_ARRAY if is_byte_array(&ty) => {}
            // Legacy levels: only a problem if a page of an optional column
            // uses them, checked per page.
            #[allow(deprecated)]
            ParquetEncoding::BIT_PACKED => {}
            other => return Err(unsupported(descr, format!("{other} encoding"))),
        }
    }
    Ok(ty)
}

/// Plans one column chunk: `index` is its place in the row group's plan,
/// jobs and scratch regions are appended.
fn plan_column(
    row_group: usize,
    index: usize,
    input: &ColumnInput<'_>,
    scratch: &mut Scratch,
    jobs: &mut Jobs,
) -> Result<ColumnDecode, DecodePlanError> {
    let ty = chunk_type(input.descr)?;
    let codec = page_codec(input.descr, input.meta.compression())?;
    let nested = is_nested(input.descr);
    let planner = ColumnPlanner {
        input,
        column: input.descr.path().string(),
        row_group,
        index,
        codec,
    };
    let mut pages = PagePlanner {
        planner: &planner,
        ty: &ty,
        scratch,
        jobs,
    };
    let mut dictionary = None;
    let mut decoded = Vec::with_capacity(input.pages.len());
    let mut rows = 0u64;
    let mut values_total = 0u64;
    for (i, p) in input.pages.iter().enumerate() {
        match p.header.kind {
            PageKind::Index => {}
            PageKind::Dictionary(d) => dictionary = Some(pages.dictionary_page(i, p, d)?),
            PageKind::Data(d) => {
                decoded.push(pages.data_page_v1(i, p, d, dictionary.is_some(), rows)?);
                rows += u64::from(d.num_values);
                values_total += u64::from(d.num_values);
            }
            PageKind::DataV2(d) => {
                decoded.push(pages.data_page_v2(i, p, d, dictionary.is_some(), rows)?);
                // A nested leaf's output is over its level entries.
                rows += u64::from(if nested { d.num_values } else { d.num_rows });
                values_total += u64::from(d.num_values);
            }
        }
    }
    if nested && rows > i32::MAX as u64 {
        return Err(planner.bad_chunk(format!(
            "{rows} level entries do not fit 32-bit list offsets"
        )));
    }
    if rows > u64::from(u32::MAX) {
        return Err(planner.bad_chunk(format!("{rows} rows do not fit 32-bit row indices")));
    }
    check_page_ranges(&planner, &mut decoded, nested)?;
    check_whole_chunk(&planner, values_total)?;
    let bitmap = rows.div_ceil(8);
    let (value_bytes, view_bytes) = match ty.kind {
        Kind::Boolean => (bitmap, 0),
        Kind::ByteArray => (0, rows * u64::from(ty.out_width)),
        _ => (rows * u64::from(ty.out_width), 0),
    };
    Ok(ColumnDecode {
        leaf: input.leaf,
        column: planner.column.clone(),
        max_def: input.descr.max_def_level() as u32,
        max_rep: input.descr.max_rep_level() as u32,
        nested,
        validity_bytes: if ty.nullable { bitmap } else { 0 },
        ty,
        codec,
        dictionary,
        pages: decoded,
        rows,
        value_bytes,
        view_bytes,
    })
}

/// A column chunk's pages being planned ([`plan_column`]): the chunk, its
/// type, and the scratch and decompression jobs its pages' bodies are
/// appended to. Each method plans one kind of page and hands back its
/// decode.
struct PagePlanner<'p, 'a, 'b> {
    planner: &'p ColumnPlanner<'a, 'b>,
    ty: &'p ColumnType,
    scratch: &'p mut Scratch,
    jobs: &'p mut Jobs,
}

impl PagePlanner<'_, '_, '_> {
    /// Whether the chunk's leaf is under a list (its pages carry
    /// repetition levels).
    fn repeated(&self) -> bool {
        self.planner.input.descr.max_rep_level() > 0
    }

    /// Plans dictionary page `i`: its body (decompressed when the chunk
    /// is), and the scratch of a byte-array dictionary's offsets.
    fn dictionary_page(
        &mut self,
        i: usize,
        p: &PageInfo,
        d: DictionaryPageHeader,
    ) -> Result<DictionaryDecode, DecodePlanError> {
        // The walk puts a dictionary page first only.
        if !matches!(
            d.encoding,
            ParquetEncoding::PLAIN | ParquetEncoding::PLAIN_DICTIONARY
        ) {
            return Err(self
                .planner
                .unsupported_page(i, format!("{} dictionary page", d.encoding)));
        }
        if self.ty.physical == PhysicalType::BOOLEAN {
            return Err(self
                .planner
                .unsupported_page(i, "dictionary page of a BOOLEAN column"));
        }
        let data = self.planner.body(
            BodyPart {
                page: i,
                compressed: true,
                src_offset: p.body_offset,
                src_len: p.body_len,
                len: p.header.uncompressed_size as usize,
            },
            self.scratch,
            self.jobs,
        )?;
        check_values_fit(
            self.planner,
            self.ty,
            i,
            Encoding::Plain,
            d.num_values,
            data.len,
        )?;
        let offsets = if self.ty.physical == PhysicalType::BYTE_ARRAY {
            let n = (d.num_values as usize + 1) * 4;
            Some(self.scratch.take(n, &self.planner.column)?)
        } else {
            None
        };
        Ok(DictionaryDecode {
            page: i,
            num_values: d.num_values,
            data,
            offsets,
        })
    }

    /// Plans data page `i` (v1, levels inside the body), whose first row
    /// is `out_row`.
    fn data_page_v1(
        &mut self,
        i: usize,
        p: &PageInfo,
        d: DataPageHeader,
        has_dictionary: bool,
        out_row: u64,
    ) -> Result<PageDecode, DecodePlanError> {
        let class = page_class(self.planner, self.ty, i, d.encoding, has_dictionary)?;
        if self.ty.nullable && d.def_level_encoding != ParquetEncoding::RLE {
            return Err(self
                .planner
                .unsupported_page(i, format!("{} definition levels", d.def_level_encoding)));
        }
        if self.repeated() && d.rep_level_encoding != ParquetEncoding::RLE {
            return Err(self
                .planner
                .unsupported_page(i, format!("{} repetition levels", d.rep_level_encoding)));
        }
        let data = self.planner.body(
            BodyPart {
                page: i,
                compressed: true,
                src_offset: p.body_offset,
                src_len: p.body_len,
                len: p.header.uncompressed_size as usize,
            },
            self.scratch,
            self.jobs,
        )?;
        // Without nulls every value is in the page.
        let present = if self.ty.nullable { 0 } else { d.num_values };
        check_values_fit(self.planner, self.ty, i, class, present, data.len)?;
        let need = work_bytes(self.ty, class, d.num_values);
        let work = if need > 0 {
            Some(self.scratch.take(need, &self.planner.column)?)
        } else {
            None
        };
        Ok(PageDecode {
            page: i,
            version: PageVersion::V1,
            encoding: d.encoding,
            class,
            num_values: d.num_values,
            num_rows: d.num_values,
            num_nulls: None,
            out_row,
            first_row: None,
            data,
            def_levels: None,
            rep_levels: None,
            work,
        })
    }

    /// Plans data page `i` (v2, levels before the body and never
    /// compressed), whose first row is `out_row`.
    fn data_page_v2(
        &mut self,
        i: usize,
        p: &PageInfo,
        d: DataPageHeaderV2,
        has_dictionary: bool,
        out_row: u64,
    ) -> Result<PageDecode, DecodePlanError> {
        let class = page_class(self.planner, self.ty, i, d.encoding, has_dictionary)?;
        // A flat column's repetition levels are all 0 whatever a
        // writer stored: they are skipped (arrow-rs does the same).
        if !self.ty.nullable && d.def_levels_len != 0 {
            return Err(self.planner.bad_page(
                i,
                format!(
                    "required column page has {} bytes of definition levels",
                    d.def_levels_len
                ),
            ));
        }
        if !self.repeated() && d.num_values != d.num_rows {
            return Err(self.planner.bad_page(
                i,
                format!(
                    "flat column page has {} values but {} rows",
                    d.num_values, d.num_rows
                ),
            ));
        }
        if d.num_nulls > d.num_values || (!self.ty.nullable && d.num_nulls != 0) {
            return Err(self.planner.bad_page(
                i,
                format!("{} nulls in a page of {} values", d.num_nulls, d.num_values),
            ));
        }
        let levels = d.levels_len() as usize;
        let (Some(src_len), Some(len)) = (
            p.body_len.checked_sub(levels),
            (p.header.uncompressed_size as usize).checked_sub(levels),
        ) else {
            return Err(self
                .planner
                .bad_page(i, format!("{levels} bytes of levels do not fit the page")));
        };
        let rep_levels = self
            .repeated()
            .then(|| Region::row_group(p.body_offset, d.rep_levels_len as usize));
        let def_levels = self.ty.nullable.then(|| {
            Region::row_group(
                p.body_offset + d.rep_levels_len as usize,
                d.def_levels_len as usize,
            )
        });
        let data = self.planner.body(
            BodyPart {
                page: i,
                compressed: d.is_compressed,
                src_offset: p.body_offset + levels,
                src_len,
                len,
            },
            self.scratch,
            self.jobs,
        )?;
        check_values_fit(
            self.planner,
            self.ty,
            i,
            class,
            d.num_values - d.num_nulls,
            data.len,
        )?;
        let need = work_bytes(self.ty, class, d.num_values);
        let work = if need > 0 {
            Some(self.scratch.take(need, &self.planner.column)?)
        } else {
            None
        };
        Ok(PageDecode {
            page: i,
            version: PageVersion::V2,
            encoding: d.encoding,
            class,
            num_values: d.num_values,
            num_rows: d.num_rows,
            num_nulls: Some(d.num_nulls),
            out_row,
            first_row: None,
            data,
            def_levels,
            rep_levels,
            work,
        })
    }
}

/// Matches the data pages with the offset index's kept pages: same file
/// offsets and lengths, in order; records each page's first row in the row
/// group; and where two kept pages are neighbours in the file, checks the
/// first one's rows against the offset index.
fn check_page_ranges(
    planner: &ColumnPlanner<'_, '_>,
    decoded: &mut [PageDecode],
    nested: bool,
) -> Result<(), DecodePlanError> {
    let Some(ranges) = planner.input.page_ranges else {
        return Ok(());
    };
    let pages = planner.input.pages;
    if ranges.len() != decoded.len() {
        return Err(planner.bad_chunk(format!(
            "{} data pages walked but the offset index keeps {}",
            decoded.len(),
            ranges.len()
        )));
    }
    for (k, (d, r)) in decoded.iter_mut().zip(ranges).enumerate() {
        let p = &pages[d.page];
        if p.file_offset != r.range.start || p.len() as u64 != r.range.end - r.range.start {
            return Err(planner.bad_page(
                d.page,
                format!(
                    "page at file offset {} of {} bytes, but the offset index says offset {} and {} bytes",
                    p.file_offset,
                    p.len(),
                    r.range.start,
                    r.range.end - r.range.start
                ),
            ));
        }
        let first = u64::try_from(r.first_row).map_err(|_| {
            planner.bad_page(d.page, format!("offset index first row {}", r.first_row))
        })?;
        d.first_row = Some(first);
        if let Some(next) = ranges.get(k + 1) {
            let next_first = u64::try_from(next.first_row).unwrap_or(0);
            // A nested leaf's page counts level entries, not the records
            // the offset index counts.
            if !nested
                && p.file_end() == next.range.start
                && next_first.checked_sub(first) != Some(u64::from(d.num_rows))
            {
                return Err(planner.bad_page(
                    d.page,
                    format!(
                        "page holds {} rows but the offset index puts the next page {} rows later",
                        d.num_rows,
                        next_first as i128 - first as i128
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// When the pages tile the whole chunk (no page pruning), their values
/// must add up to the chunk's.
fn check_whole_chunk(planner: &ColumnPlanner<'_, '_>, values: u64) -> Result<(), DecodePlanError> {
    let pages = planner.input.pages;
    let Some((start, len)) = crate::parquet::plan::chunk_byte_range(planner.input.meta) else {
        return Err(planner.bad_chunk("the chunk's offset or length is negative".to_string()));
    };
    let whole = match (pages.first(), pages.last()) {
        (Some(first), Some(last)) => {
            first.file_offset == start
                && Some(last.file_end()) == start.checked_add(len)
                && pages
                    .windows(2)
                    .all(|w| w[0].file_end() == w[1].file_offset)
        }
        _ => false,
    };
    let expected = planner.input.meta.num_values();
    if whole && i64::try_from(values).ok() != Some(expected) {
        return Err(planner.bad_chunk(format!(
            "pages hold {values} values but the chunk's metadata says {expected}"
        )));
    }
    Ok(())
}

/// Plans a row group from each projected chunk's walked pages.
pub fn plan_row_group(
    row_group: usize,
    columns: &[ColumnInput<'_>],
) -> Result<DecodePlan, DecodePlanError> {
    let mut scratch = Scratch { len: 0, row_group };
    let mut jobs = Jobs::default();
    let mut out = Vec::with_capacity(columns.len());
    for (index, input) in columns.iter().enumerate() {
        out.push(plan_column(
            row_group,
            index,
            input,
            &mut scratch,
            &mut jobs,
        )?);
    }
    Ok(DecodePlan {
        row_group,
        columns: out,
        jobs: jobs.gpu,
        host_jobs: jobs.host,
        scratch_bytes: scratch.len,
    })
}

/// Plans a fetched row group: walks every chunk of `chunks` (its chunk
/// table) in `buffer` (its bytes, on the host) and plans them, with the
/// scan plan's kept pages as the offset index.
pub fn plan_fetched(
    metadata: &ParquetMetaData,
    scan: &ScanPlan,
    row_group: usize,
    buffer: &[u8],
    chunks: &[ChunkSlice],
) -> Result<DecodePlan, DecodePlanError> {
    let stored = StoredBytes::Host(buffer);
    plan_landed(
        metadata,
        scan,
        row_group,
        stored,
        chunks,
        |slice, column| {
            let pages = walk_chunk(buffer, slice)
                .map_err(|source| DecodePlanError::walk(column, row_group, source))?;
            for (i, p) in pages.iter().enumerate() {
                if p.header.crc.is_some() {
                    let body = &buffer[p.body_offset..p.body_offset + p.body_len];
                    check_page_crc(column, row_group, i, p, body)?;
                }
            }
            Ok(pages)
        },
    )
}

/// Plans a row group whose bytes are `stored` (in host memory, or landing
/// in device memory: then only `Gpu` codecs' pages can be planned), with
/// the scan plan's kept pages as the offset index. `pages` gives each
/// chunk's walked pages (named by its column), their CRC-32s checked,
/// from wherever it reads them ([`plan_fetched`]: the host buffer; the GPU
/// decoder, the file's page headers while the bytes land on the device);
/// its errors are the caller's own type, which the plan's errors convert
/// into.
pub fn plan_landed<E: From<DecodePlanError>>(
    metadata: &ParquetMetaData,
    scan: &ScanPlan,
    row_group: usize,
    stored: StoredBytes<'_>,
    chunks: &[ChunkSlice],
    mut pages: impl FnMut(&ChunkSlice, &str) -> Result<Vec<PageInfo>, E>,
) -> Result<DecodePlan, E> {
    let bad = |what: String| DecodePlanError::BadRowGroup { row_group, what };
    if row_group >= metadata.num_row_groups() {
        return Err(bad(format!(
            "not in the file ({} row groups)",
            metadata.num_row_groups()
        ))
        .into());
    }
    let rg = metadata.row_group(row_group);
    let schema = metadata.file_metadata().schema_descr();
    let mut walked = Vec::with_capacity(chunks.len());
    for slice in chunks {
        let plan = scan
            .chunks
            .get(slice.chunk)
            .ok_or_else(|| bad(format!("chunk {} is not in the scan plan", slice.chunk)))?;
        if plan.row_group != row_group
            || plan.leaf >= schema.num_columns()
            || plan.leaf >= rg.num_columns()
        {
            return Err(bad(format!(
                "chunk {} is leaf {} of row group {}",
                slice.chunk, plan.leaf, plan.row_group
            ))
            .into());
        }
        walked.push((plan, pages(slice, &plan.column)?));
    }
    let inputs: Vec<ColumnInput<'_>> = walked
        .iter()
        .map(|(plan, pages)| ColumnInput {
            leaf: plan.leaf,
            descr: rg.column(plan.leaf).column_descr(),
            meta: rg.column(plan.leaf),
            pages,
            buffer: stored,
            page_ranges: plan.pages.as_deref(),
        })
        .collect();
    Ok(plan_row_group(row_group, &inputs)?)
}

/// Checks page `page` of a chunk against the CRC-32 its header carries
/// (of the page as stored, after its header): corruption of such a page
/// is an error, never a value. `body` is the page's stored body.
pub fn check_page_crc(
    column: &str,
    row_group: usize,
    page: usize,
    info: &PageInfo,
    body: &[u8],
) -> Result<(), DecodePlanError> {
    let Some(crc) = info.header.crc else {
        return Ok(());
    };
    let got = crc32fast::hash(body);
    if got != crc {
        return Err(DecodePlanError::BadPage {
            column: column.to_string(),
            row_group,
            page,
            what: format!("page CRC-32 {got:08x}, the header says {crc:08x}"),
        });
    }
    Ok(())
}
