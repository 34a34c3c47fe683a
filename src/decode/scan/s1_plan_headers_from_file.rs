//! The page headers of a row group landing in device memory, read from its
//! file: each chunk's walk ([`HeaderWalk`]) names the bytes of its next
//! header, read here on the planning thread (a few hundred bytes each, from
//! the page cache the fetch fills), and no page body is read but those of
//! pages that carry a CRC-32. The plan is the one the host would make from
//! the whole row group ([`plan_landed`], the same walk and checks).

use parquet::file::metadata::ParquetMetaData;

use super::decode_error::DecodeError;
use crate::decode::page::{
    check_page_crc, plan_landed, DecodePlan, DecodePlanError, HeaderWalk, PageInfo, StoredBytes,
    WalkError,
};
use crate::engine::{FileHandle, IoError};
use crate::parquet::fetch::ChunkSlice;
use crate::parquet::ScanPlan;

/// What can stop a plan made from the file's headers.
enum FileWalkError {
    Plan(DecodePlanError),
    Read(IoError),
}

impl From<DecodePlanError> for FileWalkError {
    fn from(e: DecodePlanError) -> Self {
        FileWalkError::Plan(e)
    }
}

impl From<IoError> for FileWalkError {
    fn from(e: IoError) -> Self {
        FileWalkError::Read(e)
    }
}

/// Plans row group `row_group` of `file` (open as `handle`), whose `len`
/// fetched bytes (laid out as `chunks` says) are landing in device memory.
pub(crate) fn plan_from_file(
    handle: &FileHandle,
    file: &str,
    metadata: &ParquetMetaData,
    scan: &ScanPlan,
    row_group: usize,
    len: usize,
    chunks: &[ChunkSlice],
) -> Result<DecodePlan, DecodeError> {
    let mut bytes = Vec::new();
    let stored = StoredBytes::Device { len };
    let planned = plan_landed(
        metadata,
        scan,
        row_group,
        stored,
        chunks,
        |slice, column| {
            let walk_error = |source| DecodePlanError::walk(column, row_group, source);
            let pages = walk_from_file(handle, slice, len, &mut bytes, walk_error)?;
            for (i, p) in pages.iter().enumerate() {
                if p.header.crc.is_some() {
                    let at = p.file_offset + p.header_len as u64;
                    let body = read_exact(handle, at, p.body_len, &mut bytes)?;
                    check_page_crc(column, row_group, i, p, body)?;
                }
            }
            Ok::<_, FileWalkError>(pages)
        },
    );
    planned.map_err(|e| match e {
        FileWalkError::Plan(source) => DecodeError::Plan {
            file: file.to_string(),
            source,
        },
        FileWalkError::Read(e) => DecodeError::Io(e),
    })
}

/// Walks one chunk's pages by reading its headers from the file (a walk
/// error becomes the plan's through `walk_error`, which names the column).
fn walk_from_file(
    handle: &FileHandle,
    slice: &ChunkSlice,
    len: usize,
    bytes: &mut Vec<u8>,
    walk_error: impl Fn(WalkError) -> DecodePlanError,
) -> Result<Vec<PageInfo>, FileWalkError> {
    let mut walk = HeaderWalk::new(&slice.pieces, len);
    while let Some(want) = walk.wants().map_err(&walk_error)? {
        let read = read_exact(handle, want.file_offset, want.len, bytes)?;
        walk.push(read).map_err(&walk_error)?;
    }
    Ok(walk.finish())
}

/// `len` bytes of the file at `offset`, read into `buffer`; fewer (the
/// file ended) is an error.
fn read_exact<'b>(
    handle: &FileHandle,
    offset: u64,
    len: usize,
    buffer: &'b mut Vec<u8>,
) -> Result<&'b [u8], IoError> {
    buffer.resize(len, 0);
    let got = handle.pread_here(&mut buffer[..len], offset)?;
    if got < len {
        return Err(IoError::ShortRead {
            path: handle.path().to_string(),
            offset,
            expected: len,
            got,
        });
    }
    Ok(&buffer[..len])
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::record_batch::RecordBatch;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::metadata::ParquetMetaDataReader;
    use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};

    use super::*;
    use crate::decode::page::{plan_fetched, DecodePlanError};
    use crate::parquet::fetch::layout;
    use crate::parquet::plan::{plan as scan_plan, ScanRequest};

    /// A file of two columns over several row groups, written as `props` say.
    fn file_bytes(props: WriterProperties) -> Vec<u8> {
        let n = 20_000i64;
        let text: Vec<String> = (0..n)
            .map(|i| format!("row {i} {}", "xy".repeat((i % 9) as usize)))
            .collect();
        let batch = RecordBatch::try_from_iter([
            (
                "id",
                Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef,
            ),
            ("text", Arc::new(StringArray::from(text)) as ArrayRef),
        ])
        .unwrap();
        let mut bytes = Vec::new();
        let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        bytes
    }

    /// Every row group of `bytes` (the file at `path`) planned from its
    /// fetched bytes and from the file's headers: each side's result.
    fn both_ways(
        path: &std::path::Path,
        bytes: &[u8],
    ) -> Vec<(
        Result<DecodePlan, DecodePlanError>,
        Result<DecodePlan, DecodePlanError>,
    )> {
        let md = ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::copy_from_slice(bytes))
            .unwrap();
        let scan = scan_plan(&md, &ScanRequest::default()).unwrap();
        let handle = FileHandle::open(path, "r").unwrap();
        let mut out = Vec::new();
        for rg in &scan.row_groups {
            let lay = layout(&scan, rg);
            let mut buffer = vec![0u8; lay.len];
            for r in &lay.reads {
                let at = r.file_offset as usize;
                buffer[r.buffer_offset..r.buffer_offset + r.len]
                    .copy_from_slice(&bytes[at..at + r.len]);
            }
            let host = plan_fetched(&md, &scan, rg.index, &buffer, &lay.chunks);
            let file = plan_from_file(&handle, "f", &md, &scan, rg.index, lay.len, &lay.chunks);
            out.push((
                host,
                file.map_err(|e| match e {
                    DecodeError::Plan { source, .. } => source,
                    other => panic!("not a plan error: {other}"),
                }),
            ));
        }
        out
    }

    fn write_temp(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// The page headers read from the file plan every row group exactly as
    /// the fetched bytes do: v1 and v2 pages, dictionaries, page statistics
    /// in the headers, Snappy and uncompressed.
    #[test]
    fn headers_read_from_the_file_plan_as_the_fetched_bytes_do() {
        let dir = tempfile::tempdir().unwrap();
        let settings = [
            (WriterVersion::PARQUET_1_0, Compression::SNAPPY, true),
            (WriterVersion::PARQUET_2_0, Compression::UNCOMPRESSED, false),
            (WriterVersion::PARQUET_2_0, Compression::SNAPPY, true),
        ];
        let mut row_groups = 0;
        for (i, (version, codec, dictionary)) in settings.into_iter().enumerate() {
            let props = WriterProperties::builder()
                .set_writer_version(version)
                .set_compression(codec)
                .set_dictionary_enabled(dictionary)
                .set_statistics_enabled(EnabledStatistics::Page)
                .set_write_page_header_statistics(true)
                .set_data_page_row_count_limit(700)
                .set_write_batch_size(100)
                .set_max_row_group_row_count(Some(6_000))
                .build();
            let bytes = file_bytes(props);
            let path = write_temp(&dir, &format!("f{i}.parquet"), &bytes);
            for (host, file) in both_ways(&path, &bytes) {
                let host = host.unwrap();
                assert!(host.columns.iter().all(|c| c.pages.len() > 1));
                assert_eq!(file.unwrap(), host, "setting {i}");
                row_groups += 1;
            }
        }
        assert!(row_groups >= 9, "{row_groups} row groups");
    }

    /// A file cut short inside its last row group: the header reads end in
    /// the engine's typed short read, never a plan of missing bytes.
    #[test]
    fn a_file_shorter_than_its_metadata_is_a_short_read() {
        let dir = tempfile::tempdir().unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_data_page_row_count_limit(700)
            .set_write_batch_size(100)
            .build();
        let bytes = file_bytes(props);
        let md = ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::copy_from_slice(&bytes))
            .unwrap();
        let scan = scan_plan(&md, &ScanRequest::default()).unwrap();
        let lay = layout(&scan, &scan.row_groups[0]);
        // Cut the file in the middle of the last chunk.
        let last = lay.reads.last().unwrap();
        let cut = last.file_offset as usize + last.len / 2;
        let path = write_temp(&dir, "short.parquet", &bytes[..cut]);
        let handle = FileHandle::open(&path, "r").unwrap();
        match plan_from_file(&handle, "short", &md, &scan, 0, lay.len, &lay.chunks) {
            Err(DecodeError::Io(IoError::ShortRead {
                offset,
                expected,
                got,
                ..
            })) => {
                // The read reached past the cut and got what lay before it.
                let (at, end) = (offset as usize, offset as usize + expected);
                let before_cut = cut.saturating_sub(at);
                assert!(
                    end > cut && got == before_cut,
                    "{at}+{expected}: {got}, cut {cut}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    /// Gzip and Brotli pages need their bytes on the host (the framing is
    /// read there, Brotli is the host's): planned from the file's headers
    /// alone they are a typed `NotOnHost`, never a plan (the landing sends
    /// such files to pinned memory; this holds it to that).
    #[test]
    fn pages_the_host_must_read_are_refused_from_headers_alone() {
        use parquet::basic::{BrotliLevel, GzipLevel};
        let dir = tempfile::tempdir().unwrap();
        for (i, (codec, name)) in [
            (Compression::GZIP(GzipLevel::default()), "GZIP"),
            (Compression::BROTLI(BrotliLevel::default()), "BROTLI"),
        ]
        .into_iter()
        .enumerate()
        {
            let props = WriterProperties::builder()
                .set_compression(codec)
                .set_data_page_row_count_limit(700)
                .set_write_batch_size(100)
                .build();
            let bytes = file_bytes(props);
            let path = write_temp(&dir, &format!("host{i}.parquet"), &bytes);
            let (host, file) = both_ways(&path, &bytes).remove(0);
            assert!(host.is_ok(), "{name}: the host plans it");
            let err = file.unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("a {name} page needs its bytes on the host")),
                "{name}: {err}"
            );
        }
    }

    /// parquet-testing's pages with CRC-32s: the file route reads the
    /// bodies of those pages and checks them, as the host route does
    /// (a corrupt one is the same error, the sound ones the same plan).
    #[test]
    fn page_crcs_are_checked_from_the_file() {
        let Ok(dir) = std::env::var("PARQUET_TEST_DATA") else {
            eprintln!("PARQUET_TEST_DATA unset: skipping the parquet-testing CRC files");
            return;
        };
        let (mut sound, mut corrupt) = (0, 0);
        for name in [
            "datapage_v1-corrupt-checksum.parquet",
            "datapage_v1-snappy-compressed-checksum.parquet",
            "datapage_v1-uncompressed-checksum.parquet",
        ] {
            let path = std::path::Path::new(&dir).join(name);
            let bytes = std::fs::read(&path).unwrap();
            for (host, file) in both_ways(&path, &bytes) {
                assert_eq!(file, host, "{name}");
                match host {
                    Ok(_) => sound += 1,
                    Err(e) => {
                        assert!(e.to_string().contains("CRC-32"), "{name}: {e}");
                        corrupt += 1;
                    }
                }
            }
        }
        assert!(sound > 0 && corrupt > 0, "sound {sound}, corrupt {corrupt}");
    }
}
