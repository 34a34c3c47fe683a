//! Executing a plan: each kept row group lands in one allocation (device or
//! host) with a table mapping every chunk (and page range) to its place,
//! streamed row group after row group with a bound on bytes in flight.
//!
//! A producer thread reads the next row groups (all requests of a row group
//! submitted at once to the source: the engine for a local file, the store
//! runtime for a remote object) while the consumer works on the current
//! one; the bound on bytes in flight, released as the consumer drops row
//! groups, keeps memory bounded.

mod alloc;
mod budget;
mod layout;
mod options;
mod produce;
mod shares;
mod stream;

pub use alloc::{Allocator, DeviceAllocator, HostAllocator, PinnedAllocator, ReadBack};
pub use budget::Permit;
pub use layout::{layout, ChunkSlice, Piece, RowGroupLayout};
pub use options::{FetchOptions, SourceScan};
pub use stream::{FetchedRowGroup, RowGroupStream};

use crate::parquet::error::ScanError;

/// Starts fetching the plans of `scans` (local files, remote objects, or
/// both) into buffers from `allocs`, as one stream of row groups.
///
/// With one allocator (`[DeviceAllocator::new(dev)]`, or a host one) the
/// row groups come in scan order, then plan order, under one read-ahead and
/// one byte budget, so the reads of the next object overlap the end of the
/// current one (a table split into many files streams like one file).
/// With several (normally one [`DeviceAllocator`] per GPU), the row groups
/// are divided among them by bytes ([`spread`](super::spread::spread)), each
/// share fetched at once by its own producer through the same engine, and
/// the stream interleaves the shares as they land. [`FetchedRowGroup::file`]
/// tells which scan a row group came from, [`FetchedRowGroup::share`] which
/// allocator holds it. The first error of any share stops every share.
pub fn fetch<A: Allocator>(
    scans: impl IntoIterator<Item = SourceScan>,
    allocs: impl IntoIterator<Item = A>,
    opts: FetchOptions,
) -> RowGroupStream<A::Buffer> {
    let files: Vec<SourceScan> = scans.into_iter().collect();
    let mut allocs: Vec<A> = allocs.into_iter().collect();
    match allocs.len() {
        0 => RowGroupStream::failed(ScanError::NoAllocator),
        1 => produce::fetch_share(files, allocs.remove(0), opts),
        _ => shares::fetch_shares(files, allocs, opts),
    }
}
