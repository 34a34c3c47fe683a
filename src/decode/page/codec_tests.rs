//! Tests of the host codecs and of the planner's routing of BROTLI, legacy
//! LZ4 and GZIP pages between nvCOMP and the host, on pages compressed by
//! the codecs' own crates and files written by arrow-rs.

use std::io::Write;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, StringArray};
use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use parquet::basic::{Compression, GzipLevel};
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::properties::WriterProperties;

use super::framing::{gzip_one_member, hadoop_blocks};
use super::host_codec::{decompress_into, HostCodec, HostCodecError};
use super::plan::{ColumnInput, DecodePlan, StoredBytes};
use super::planner::plan_row_group;
use super::walk::{walk_pieces, PageInfo};
use crate::nvcomp::Codec;
use crate::parquet::fetch::Piece;

fn text(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| format!("row {i} of {} ", i % 97).into_bytes())
        .take(n)
        .collect()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        w.write_all(data).unwrap();
    }
    out
}

fn lz4_frame(data: &[u8]) -> Vec<u8> {
    let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A Hadoop-framed LZ4 body of `data` cut into blocks of `block` bytes.
fn hadoop(data: &[u8], block: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for part in data.chunks(block) {
        let c = lz4_flex::block::compress(part);
        out.extend_from_slice(&(part.len() as u32).to_be_bytes());
        out.extend_from_slice(&(c.len() as u32).to_be_bytes());
        out.extend_from_slice(&c);
    }
    out
}

fn host(codec: HostCodec, src: &[u8], len: usize) -> Result<Vec<u8>, HostCodecError> {
    let mut out = vec![0u8; len];
    decompress_into(codec, src, &mut out).map(|()| out)
}

#[test]
fn host_codecs_give_exactly_the_pages_bytes() {
    let data = text(100_000);
    let n = data.len();
    let two_members = [gzip(&data[..n / 3]), gzip(&data[n / 3..])].concat();
    let cases = [
        (HostCodec::Brotli, brotli(&data)),
        (HostCodec::GzipMembers, gzip(&data)),
        (HostCodec::GzipMembers, two_members),
        (HostCodec::Lz4Legacy, lz4_frame(&data)),
        (HostCodec::Lz4Legacy, lz4_flex::block::compress(&data)),
        (HostCodec::Zstd, zstd::bulk::compress(&data, 3).unwrap()),
        (
            HostCodec::Zstd,
            [
                zstd::bulk::compress(&data[..n / 2], 1).unwrap(),
                zstd::bulk::compress(&data[n / 2..], 19).unwrap(),
            ]
            .concat(),
        ),
    ];
    for (codec, src) in &cases {
        assert_eq!(host(*codec, src, n).unwrap(), data, "{codec}");
        // The page header's size is the law: one byte more or less is a
        // typed error.
        assert!(
            matches!(host(*codec, src, n + 1), Err(HostCodecError::Short { .. }))
                || *codec == HostCodec::Lz4Legacy,
            "{codec}"
        );
        assert!(host(*codec, src, n + 1).is_err(), "{codec}");
        assert!(host(*codec, src, n - 1).is_err(), "{codec}");
        // Truncated streams: an error (lz4_flex's frame decoder takes a
        // frame whose end mark is cut, its data whole: then the page's
        // bytes), never other bytes. Flipped bytes: an error or (a flip
        // in a literal) other bytes, never a panic.
        for cut in [0, 1, src.len() / 2, src.len() - 1] {
            match host(*codec, &src[..cut], n) {
                Err(_) => {}
                Ok(out) => assert!(out == data && cut + 4 >= src.len(), "{codec} cut at {cut}"),
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut bad = src.clone();
            bad[(x as usize) % src.len()] ^= 1 << (x >> 60 & 7);
            let _ = host(*codec, &bad, n);
        }
    }
    assert!(matches!(
        host(HostCodec::Brotli, &gzip(&data), n),
        Err(HostCodecError::Stream(_))
    ));
    assert!(matches!(
        host(HostCodec::Lz4Legacy, &[0xff; 64], n),
        Err(HostCodecError::Lz4 { .. })
    ));
}

#[test]
fn hadoop_framing_fits_exactly_or_not_at_all() {
    let data = text(70_000);
    let body = hadoop(&data, 30_000);
    let blocks = hadoop_blocks(&body, data.len()).unwrap();
    assert_eq!(blocks.len(), 3);
    let mut out = Vec::new();
    for b in &blocks {
        let src = &body[b.src_offset..b.src_offset + b.src_len];
        assert_eq!(b.dst_offset, out.len());
        out.extend(lz4_flex::block::decompress(src, b.dst_len).unwrap());
    }
    assert_eq!(out, data);
    // Sizes that do not add up, trailing bytes, a cut body, an LZ4 frame
    // or raw block: not Hadoop-framed.
    assert_eq!(hadoop_blocks(&body, data.len() + 1), None);
    assert_eq!(hadoop_blocks(&[&body[..], &[0]].concat(), data.len()), None);
    assert_eq!(hadoop_blocks(&body[..body.len() - 1], data.len()), None);
    assert_eq!(hadoop_blocks(&lz4_frame(&data), data.len()), None);
    let raw = lz4_flex::block::compress(&data);
    assert_eq!(hadoop_blocks(&raw, data.len()), None);
    assert_eq!(hadoop_blocks(&[], 0), None);
}

#[test]
fn a_gzip_member_says_its_size_at_its_end() {
    let data = text(5_000);
    assert!(gzip_one_member(&gzip(&data), data.len()));
    let two = [gzip(&data[..100]), gzip(&data[100..])].concat();
    assert!(!gzip_one_member(&two, data.len()));
    assert!(!gzip_one_member(&[0x1f, 0x8b], 0));
}

/// A file of one row group (an INT64 and a string column, several pages
/// each, no dictionary) written by arrow-rs with `codec`: its bytes, the
/// whole file as the "row-group buffer", and each column's walked pages.
fn file(codec: Compression) -> (Bytes, Vec<Vec<PageInfo>>) {
    let n = 20_000i64;
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef,
        ),
        (
            "s",
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("value {}", i % 1000)),
            )) as ArrayRef,
        ),
    ])
    .unwrap();
    let props = WriterProperties::builder()
        .set_compression(codec)
        .set_dictionary_enabled(false)
        .set_data_page_row_count_limit(5_000)
        .set_write_batch_size(1_000)
        .build();
    let bytes = super::plan_tests::write(&batch, props);
    let md = ParquetMetaDataReader::new()
        .parse_and_finish(&bytes)
        .unwrap();
    let pages = (0..2)
        .map(|c| {
            let (start, len) = md.row_group(0).column(c).byte_range();
            let piece = Piece {
                file_offset: start,
                buffer_offset: start as usize,
                len: len as usize,
            };
            walk_pieces(&bytes, &[piece]).unwrap()
        })
        .collect();
    (bytes, pages)
}

fn plan(bytes: &[u8], pages: &[Vec<PageInfo>], buffer: &[u8]) -> DecodePlan {
    let md = ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::copy_from_slice(bytes))
        .unwrap();
    let rg = md.row_group(0);
    let inputs: Vec<ColumnInput<'_>> = (0..2)
        .map(|c| ColumnInput {
            leaf: c,
            descr: rg.column(c).column_descr(),
            meta: rg.column(c),
            pages: &pages[c],
            buffer: StoredBytes::Host(buffer),
            page_ranges: None,
        })
        .collect();
    plan_row_group(0, &inputs).unwrap()
}

/// Replaces the body of page `p` by `body` appended to the buffer (the
/// header's compressed size follows it).
fn rebody(buffer: &mut Vec<u8>, p: &mut PageInfo, body: &[u8]) {
    p.body_offset = buffer.len();
    p.body_len = body.len();
    p.header.compressed_size = body.len() as u32;
    buffer.extend_from_slice(body);
}

#[test]
fn legacy_lz4_goes_to_nvcomp_by_block_when_hadoop_framed_else_to_the_host() {
    let (bytes, mut pages) = file(Compression::LZ4);
    let mut buffer = bytes.to_vec();
    let planned = plan(&bytes, &pages, &buffer);
    assert!(planned.host_jobs.is_empty(), "{:?}", planned.host_jobs);
    assert!(planned.jobs.iter().all(|j| j.codec == Codec::Lz4));
    let data_pages = pages
        .iter()
        .flatten()
        .filter(|p| p.header.is_data())
        .count();
    assert!(planned.jobs.len() >= data_pages, "a job per block");
    // Page 1 of the string column as an LZ4 frame, page 2 as one raw
    // block: both the host's, and they decompress to the page's bytes.
    let mut page_bytes = Vec::new();
    for (k, frame) in [(1, true), (2, false)] {
        let j = planned
            .jobs
            .iter()
            .find(|j| j.column == 1 && j.page == k)
            .unwrap();
        // The page's decompressed bytes: its blocks' outputs.
        let mut data = Vec::new();
        for b in planned.jobs.iter().filter(|b| b.column == 1 && b.page == k) {
            let src = &buffer[b.src_offset..b.src_offset + b.src_len];
            data.extend(lz4_flex::block::decompress(src, b.dst_len).unwrap());
        }
        assert_eq!(j.dst_offset % super::plan::SCRATCH_ALIGN, 0);
        let body = if frame {
            lz4_frame(&data)
        } else {
            lz4_flex::block::compress(&data)
        };
        rebody(&mut buffer, &mut pages[1][k], &body);
        page_bytes.push((k, data));
    }
    let replanned = plan(&bytes, &pages, &buffer);
    assert_eq!(replanned.host_jobs.len(), 2);
    for ((k, data), j) in page_bytes.iter().zip(&replanned.host_jobs) {
        assert_eq!((j.codec, j.column, j.page), (HostCodec::Lz4Legacy, 1, *k));
        assert_eq!(j.dst_len, data.len());
        let src = &buffer[j.src_offset..j.src_offset + j.src_len];
        assert_eq!(&host(j.codec, src, j.dst_len).unwrap(), data);
        assert!(!replanned.jobs.iter().any(|g| g.column == 1 && g.page == *k));
    }
    // Scratch regions never overlap.
    let mut regions: Vec<(usize, usize)> = replanned
        .jobs
        .iter()
        .map(|j| (j.dst_offset, j.dst_len))
        .chain(
            replanned
                .host_jobs
                .iter()
                .map(|j| (j.dst_offset, j.dst_len)),
        )
        .collect();
    regions.sort();
    assert!(regions.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0));
}

#[test]
fn gzip_pages_of_one_member_go_to_nvcomp_and_of_several_to_the_host() {
    let (bytes, mut pages) = file(Compression::GZIP(GzipLevel::default()));
    let mut buffer = bytes.to_vec();
    let planned = plan(&bytes, &pages, &buffer);
    assert!(planned.host_jobs.is_empty());
    assert!(planned.jobs.iter().all(|j| j.codec == Codec::Gzip));
    let j = *planned.jobs.iter().find(|j| j.column == 0).unwrap();
    let mut data = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&buffer[j.src_offset..j.src_offset + j.src_len]),
        &mut data,
    )
    .unwrap();
    let two = [gzip(&data[..1000]), gzip(&data[1000..])].concat();
    rebody(&mut buffer, &mut pages[0][j.page], &two);
    let replanned = plan(&bytes, &pages, &buffer);
    assert_eq!(replanned.host_jobs.len(), 1);
    let h = replanned.host_jobs[0];
    assert_eq!(
        (h.codec, h.column, h.page),
        (HostCodec::GzipMembers, 0, j.page)
    );
    assert_eq!(h.dst_offset, j.dst_offset, "the same place in scratch");
    let src = &buffer[h.src_offset..h.src_offset + h.src_len];
    assert_eq!(host(h.codec, src, h.dst_len).unwrap(), data);
    assert_eq!(replanned.jobs.len(), planned.jobs.len() - 1);
    // The page truncated: still the host's, and a typed error there.
    rebody(&mut buffer, &mut pages[0][j.page], &two[..two.len() - 9]);
    let cut = plan(&bytes, &pages, &buffer).host_jobs[0];
    let src = &buffer[cut.src_offset..cut.src_offset + cut.src_len];
    assert!(host(cut.codec, src, cut.dst_len).is_err());
}

#[test]
fn brotli_pages_go_to_the_host() {
    let (bytes, pages) = file(Compression::BROTLI(Default::default()));
    let planned = plan(&bytes, &pages, &bytes);
    assert!(planned.jobs.is_empty());
    let data_pages = pages
        .iter()
        .flatten()
        .filter(|p| p.header.is_data())
        .count();
    assert_eq!(planned.host_jobs.len(), data_pages);
    for j in &planned.host_jobs {
        assert_eq!(j.codec, HostCodec::Brotli);
        let src = &bytes[j.src_offset..j.src_offset + j.src_len];
        assert_eq!(host(j.codec, src, j.dst_len).unwrap().len(), j.dst_len);
        // A size that lies: a typed error.
        assert!(host(j.codec, src, j.dst_len + 7).is_err());
    }
}
