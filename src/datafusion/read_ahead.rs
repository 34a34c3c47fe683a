//! Read-ahead of the next row group while DataFusion decodes the current
//! one.
//!
//! DataFusion's Parquet scan asks for a row group's bytes, waits for them,
//! decodes the whole row group and only then asks for the next one, so each
//! partition alternates between waiting for I/O and decoding. gdscan knows
//! from its plan ([`FileScanPlan`](super::file_plan::FileScanPlan)) which row
//! groups the file range will be asked for, in order; when one is asked for,
//! [`ReadAhead`] starts reading the next one on the engine and serves it
//! from memory when it is asked for in turn.
//!
//! At most one row group is read ahead per reader. When the scan asks for
//! something else than what was read ahead (DataFusion pruned more, by a
//! filter gdscan could not translate or a dynamic filter from a join), the
//! bytes read ahead are dropped, counted as wasted, and the reader stops
//! reading ahead.

use std::collections::VecDeque;
use std::ops::Range;

use bytes::Bytes;

use super::file_plan::PlannedRowGroup;
use crate::parquet::reader::{cut_ranges, holding_span, ReaderStats};
use crate::parquet::GdsParquetReader;
use crate::store::LocalSource;

/// A row group being read ahead.
#[derive(Debug)]
struct InFlight {
    row_group: PlannedRowGroup,
    stats: std::sync::Arc<ReaderStats>,
    task: tokio::task::JoinHandle<Result<Vec<Bytes>, crate::store::StoreError>>,
}

/// What serving a request from the read-ahead gave.
#[derive(Debug)]
pub enum Served {
    /// The request lay in the row group read ahead: its bytes, and the
    /// reads and bytes the read-ahead took.
    Hit {
        /// The requested ranges.
        result: Result<Vec<Bytes>, super::SqlError>,
        /// Coalesced reads issued for the row group.
        reads: u64,
        /// Bytes read for it.
        bytes_read: u64,
    },
    /// Nothing was read ahead for it; when something else was, that was
    /// dropped, with its size in bytes.
    Miss {
        /// Bytes read ahead and dropped.
        wasted: u64,
    },
}

/// When a reader reads ahead (`GDSCAN_READ_AHEAD`).
pub use crate::config::decode::ReadAheadPolicy;

/// The read-ahead state of one reader (one file range of one partition).
#[derive(Debug)]
pub struct ReadAhead {
    /// The row groups still to be asked for, in order.
    queue: VecDeque<PlannedRowGroup>,
    in_flight: Option<InFlight>,
    enabled: bool,
    skip_cached: bool,
}

impl ReadAhead {
    /// Read-ahead over `row_groups` (the ones the reader's file range will be
    /// asked for, in order) under `policy`.
    pub fn new(row_groups: Vec<PlannedRowGroup>, policy: ReadAheadPolicy) -> Self {
        ReadAhead {
            queue: row_groups.into(),
            in_flight: None,
            enabled: policy != ReadAheadPolicy::Off,
            skip_cached: policy == ReadAheadPolicy::Uncached,
        }
    }

    /// No read-ahead.
    pub fn disabled() -> Self {
        ReadAhead::new(Vec::new(), ReadAheadPolicy::Off)
    }

    /// Whether reading ahead is still on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Starts reading the next row group to be asked for, unless one is in
    /// flight, reading ahead is off, no tokio runtime runs this thread, page
    /// pruning keeps only some of its rows (DataFusion then reads some
    /// pages, not whole chunks), or (policy `Uncached`) its chunks are in
    /// the page cache.
    pub fn start_next(&mut self, reader: &GdsParquetReader) {
        if !self.enabled || self.in_flight.is_some() {
            return;
        }
        let Some(next) = self.queue.front() else {
            return;
        };
        if next.some_rows || next.chunks.is_empty() {
            return;
        }
        // Already in the page cache: asking for it will be a memory copy,
        // which reading ahead would only move onto another thread of a
        // machine busy decoding.
        let local = LocalSource::of(reader.source().as_ref()).map(LocalSource::handle);
        if let Some(handle) = local.filter(|_| self.skip_cached) {
            if next
                .chunks
                .iter()
                .all(|c| handle.is_cached(c.start, c.end - c.start))
            {
                return;
            }
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let reader = reader.with_own_stats();
        let stats = reader.stats();
        let ranges = next.chunks.clone();
        self.in_flight = Some(InFlight {
            row_group: next.clone(),
            stats,
            task: runtime.spawn(async move { reader.read_ranges(ranges).await }),
        });
    }

    /// Serves `ranges` from the row group read ahead when they all lie in
    /// its chunks. A request for another planned row group drops what was
    /// read ahead and turns reading ahead off; a request outside every
    /// planned row group (not column data) leaves it be.
    pub async fn serve(&mut self, ranges: &[Range<u64>]) -> Served {
        let Some(first) = ranges.iter().find(|r| r.end > r.start) else {
            return Served::Miss { wasted: 0 };
        };
        let Some(flight) = &self.in_flight else {
            return Served::Miss { wasted: 0 };
        };
        let in_flight_span = flight.row_group.span();
        let covered = ranges
            .iter()
            .all(|r| r.end <= r.start || holding_span(&flight.row_group.chunks, r).is_some());
        if in_flight_span.contains(&first.start) && covered {
            let flight = self.in_flight.take().expect("checked above");
            let stats = flight.stats.clone();
            let result = slice(flight, ranges).await;
            return Served::Hit {
                result,
                reads: stats.reads.load(std::sync::atomic::Ordering::Relaxed),
                bytes_read: stats.bytes_read.load(std::sync::atomic::Ordering::Relaxed),
            };
        }
        let planned = self.queue.iter().any(|rg| rg.span().contains(&first.start));
        if !planned && !in_flight_span.contains(&first.start) {
            return Served::Miss { wasted: 0 };
        }
        // The task finishes on its own (the engine owns its buffers until
        // then); its bytes are dropped.
        let flight = self.in_flight.take().expect("checked above");
        self.enabled = false;
        Served::Miss {
            wasted: flight.row_group.bytes(),
        }
    }

    /// Notes that `ranges` were asked for: the planned row groups up to the
    /// one they belong to are done.
    pub fn advance(&mut self, ranges: &[Range<u64>]) {
        let Some(first) = ranges.iter().find(|r| r.end > r.start) else {
            return;
        };
        if let Some(at) = self
            .queue
            .iter()
            .position(|rg| rg.span().contains(&first.start))
        {
            self.queue.drain(..=at);
        }
    }

    /// Bytes read ahead that nobody asked for yet (dropped with the reader).
    pub fn pending_bytes(&self) -> u64 {
        self.in_flight
            .as_ref()
            .map(|f| f.row_group.bytes())
            .unwrap_or(0)
    }
}

/// The requested ranges, cut from the chunks read ahead.
async fn slice(flight: InFlight, ranges: &[Range<u64>]) -> Result<Vec<Bytes>, super::SqlError> {
    let chunks = &flight.row_group.chunks;
    let buffers = match flight.task.await {
        Ok(result) => result?,
        Err(e) => return Err(super::SqlError::ReadAhead(e)),
    };
    Ok(cut_ranges(ranges, chunks, &buffers))
}

// Lists of one byte range are what the tests mean, not ranges of elements.
#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::FileHandle;

    /// A 1 MB file of known bytes and a reader over it.
    fn file() -> (tempfile::TempDir, Vec<u8>, GdsParquetReader) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let content: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let handle = Arc::new(FileHandle::open(&path, "r").unwrap());
        let source = Arc::new(LocalSource::new(handle).unwrap());
        (dir, content, GdsParquetReader::new(source))
    }

    fn group(index: usize, chunks: Vec<Range<u64>>) -> PlannedRowGroup {
        PlannedRowGroup {
            index,
            first_page: chunks[0].start,
            chunks,
            some_rows: false,
        }
    }

    /// Row groups 0, 1 and 2: two chunks, then one, then one.
    fn groups() -> Vec<PlannedRowGroup> {
        vec![
            group(0, vec![0..100_000, 100_000..200_000]),
            group(1, vec![300_000..400_000]),
            group(2, vec![500_000..600_000]),
        ]
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap()
    }

    #[test]
    fn the_next_planned_row_group_is_served_from_memory() {
        let (_dir, content, reader) = file();
        runtime().block_on(async {
            let mut ahead = ReadAhead::new(groups(), ReadAheadPolicy::Always);
            // Row group 0: nothing in flight yet.
            let first = [0..100_000, 100_000..200_000];
            assert!(matches!(
                ahead.serve(&first).await,
                Served::Miss { wasted: 0 }
            ));
            ahead.advance(&first);
            ahead.start_next(&reader);
            assert_eq!(ahead.pending_bytes(), 100_000);
            // Row group 1, asked for in two pieces of its one chunk.
            let second = [300_000..350_000, 350_000..400_000];
            let Served::Hit {
                result,
                reads,
                bytes_read,
            } = ahead.serve(&second).await
            else {
                panic!("row group 1 was read ahead");
            };
            let bytes = result.unwrap();
            assert_eq!(&bytes[0][..], &content[300_000..350_000]);
            assert_eq!(&bytes[1][..], &content[350_000..400_000]);
            assert_eq!((reads, bytes_read), (1, 100_000));
            assert!(ahead.enabled());
        });
    }

    #[test]
    fn a_request_for_another_row_group_wastes_the_read_ahead_and_stops_it() {
        let (_dir, _content, reader) = file();
        runtime().block_on(async {
            let mut ahead = ReadAhead::new(groups(), ReadAheadPolicy::Always);
            ahead.advance(&[0..100_000]);
            ahead.start_next(&reader);
            // Bytes outside every planned row group (a bloom filter, say)
            // leave row group 1 in flight.
            assert!(matches!(
                ahead.serve(&[900_000..900_100]).await,
                Served::Miss { wasted: 0 }
            ));
            assert_eq!(ahead.pending_bytes(), 100_000);
            // DataFusion skipped row group 1: its bytes are wasted.
            let third = [500_000..600_000];
            assert!(matches!(
                ahead.serve(&third).await,
                Served::Miss { wasted: 100_000 }
            ));
            assert!(!ahead.enabled());
            ahead.advance(&third);
            ahead.start_next(&reader);
            assert_eq!(ahead.pending_bytes(), 0);
        });
    }

    #[test]
    fn page_selected_and_cached_row_groups_are_not_read_ahead() {
        let (_dir, _content, reader) = file();
        runtime().block_on(async {
            let mut partial = groups();
            partial[1].some_rows = true;
            let mut ahead = ReadAhead::new(partial, ReadAheadPolicy::Always);
            ahead.advance(&[0..100_000]);
            ahead.start_next(&reader);
            assert_eq!(ahead.pending_bytes(), 0);
            // The file was just written: in the page cache.
            let handle = LocalSource::of(reader.source().as_ref()).unwrap().handle();
            assert!(handle.is_cached(300_000, 100_000));
            let mut ahead = ReadAhead::new(groups(), ReadAheadPolicy::Uncached);
            ahead.advance(&[0..100_000]);
            ahead.start_next(&reader);
            assert_eq!(ahead.pending_bytes(), 0);
            // Off: nothing, ever.
            let mut off = ReadAhead::new(groups(), ReadAheadPolicy::Off);
            off.advance(&[0..100_000]);
            off.start_next(&reader);
            assert_eq!(off.pending_bytes(), 0);
        });
    }

    #[test]
    fn without_a_tokio_runtime_nothing_is_read_ahead() {
        let (_dir, _content, reader) = file();
        let mut ahead = ReadAhead::new(groups(), ReadAheadPolicy::Always);
        ahead.advance(&[0..100_000]);
        ahead.start_next(&reader);
        assert_eq!(ahead.pending_bytes(), 0);
    }
}
