//! The fast walk over Snappy streams: many pages checked on one thread,
//! their walks interleaved.
//!
//! A stream's walk is one chain of dependent loads: each element's tag says
//! where the next one starts. Walks of different pages do not depend on
//! each other, so stepping [`LANES`] of them in turn gives a core that many
//! chains to overlap. Each step is lean: it checks only what keeps its own
//! reads inside the stream, and notes (without a branch) whether a copy
//! reached before the output; whether the stream ran past its end or made
//! too many bytes shows in the lane's state when it stops. The exact walk
//! (`snappy.rs`) finishes a lane's last few bytes, or, for a lane that
//! stopped on anything wrong, walks its stream again from the start and
//! finds the first fault and its position; so each page's verdict and
//! pieces are exactly the exact walk's alone (the tests compare them on
//! thousands of corrupted pages).

use super::snappy::{
    snappy_preamble, snappy_walk_exact, Element, PieceFinder, SnappyPieces, SNAPPY_TAGS,
};
use super::CompressedError;

/// Walks stepped in turn on one thread (measured: 2 and 8 are slower).
pub const LANES: usize = 4;

/// One page being walked.
struct Lane<'a> {
    page: usize,
    data: &'a [u8],
    size: usize,
    /// The next element's offset in the stream, and the output bytes the
    /// elements before it make.
    at: usize,
    produced: usize,
    /// A copy reached before the start of the output.
    fault: bool,
    finder: PieceFinder,
}

/// Checks a raw Snappy stream that must decompress to exactly `size` bytes.
///
/// The walk of [`snappy_pieces_batch`] on this one stream: a lean
/// table-driven step up to its last few bytes, the exact walk there (and
/// over the whole stream again if the lean steps passed a fault), so the
/// verdict (kind and position) is always the exact walk's.
pub fn check_snappy(data: &[u8], size: usize) -> Result<(), CompressedError> {
    snappy_pieces(data, size, 0).map(|_| ())
}

/// Checks a raw Snappy stream as [`check_snappy`] does and finds where
/// each `piece`-byte piece of its output starts in the stream, when the
/// pieces can be decompressed independently.
///
/// Returns the pieces when an element starts exactly at every multiple of
/// `piece` in the output and no copy reaches back past the start of its
/// piece: then piece `i`'s elements ([`SnappyPieces::elements`]),
/// preceded by the varint of its length, are a Snappy stream of their own
/// that decompresses to output bytes `i * piece..`. `None` when the stream
/// does not split so (a compressor that does not work in fragments of
/// `piece` or a divisor of it), or when `piece` is 0 or not less than
/// `size`. The verdict on the stream is [`check_snappy`]'s.
///
/// ```
/// use gdscan::decode::page::validate::{snappy_pieces, SNAPPY_BLOCK};
/// let raw: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8 ^ (i / 977) as u8).collect();
/// let stream = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
/// let pieces = snappy_pieces(&stream, raw.len(), SNAPPY_BLOCK).unwrap().unwrap();
/// assert_eq!(pieces.count(), raw.len().div_ceil(SNAPPY_BLOCK));
/// assert_eq!(pieces.out_len(3, raw.len()), raw.len() - 3 * SNAPPY_BLOCK);
/// ```
pub fn snappy_pieces(
    data: &[u8],
    size: usize,
    piece: usize,
) -> Result<Option<SnappyPieces>, CompressedError> {
    let mut verdicts = snappy_pieces_batch(&[(data, size)], piece);
    verdicts
        .pop()
        .unwrap_or(Err(CompressedError::Truncated { at: 0 }))
}

/// [`snappy_pieces`] of every `(stream, size)` of `pages`, in order, with
/// [`LANES`] walks interleaved on the calling thread.
///
/// ```
/// use gdscan::decode::page::validate::{snappy_pieces, snappy_pieces_batch, SNAPPY_BLOCK};
/// let pages: Vec<(Vec<u8>, usize)> = (1..7u32)
///     .map(|n| {
///         let raw: Vec<u8> = (0..n * 50_000).map(|i| (i % 251) as u8 ^ (i / 977) as u8).collect();
///         (snap::raw::Encoder::new().compress_vec(&raw).unwrap(), raw.len())
///     })
///     .collect();
/// let borrowed: Vec<(&[u8], usize)> = pages.iter().map(|(s, n)| (&s[..], *n)).collect();
/// let batch = snappy_pieces_batch(&borrowed, SNAPPY_BLOCK);
/// for ((stream, size), verdict) in borrowed.iter().zip(&batch) {
///     assert_eq!(verdict, &snappy_pieces(stream, *size, SNAPPY_BLOCK));
/// }
/// ```
pub fn snappy_pieces_batch(
    pages: &[(&[u8], usize)],
    piece: usize,
) -> Vec<Result<Option<SnappyPieces>, CompressedError>> {
    // Every page gets its verdict below; one that did not would be
    // refused, never passed.
    let mut verdicts: Vec<Result<Option<SnappyPieces>, CompressedError>> =
        vec![Err(CompressedError::Truncated { at: 0 }); pages.len()];
    let mut queued = 0..pages.len();
    let mut lanes: Vec<Lane> = Vec::with_capacity(LANES);
    while lanes.len() < LANES {
        let Some(lane) = next_lane(pages, &mut queued, piece, &mut verdicts) else {
            break;
        };
        lanes.push(lane);
    }
    while !lanes.is_empty() {
        // Step every lane in turn until one stops.
        let stopped = match <&mut [Lane; LANES]>::try_from(&mut lanes[..]) {
            // All lanes busy: a loop of fixed length, unrolled.
            Ok(all) => 'all: loop {
                for (i, lane) in all.iter_mut().enumerate() {
                    if !step(lane) {
                        break 'all i;
                    }
                }
            },
            Err(_) => 'some: loop {
                for (i, lane) in lanes.iter_mut().enumerate() {
                    if !step(lane) {
                        break 'some i;
                    }
                }
            },
        };
        let verdict = finish(&mut lanes[stopped], piece);
        let done = match next_lane(pages, &mut queued, piece, &mut verdicts) {
            Some(next) => std::mem::replace(&mut lanes[stopped], next),
            None => lanes.swap_remove(stopped),
        };
        verdicts[done.page] = verdict.map(|()| done.finder.finish());
    }
    verdicts
}

/// One step of `lane`'s walk: false (the lane unchanged) where fewer than
/// five bytes of the stream are left at its next element (or it ran past
/// the end). The step reads the tag and the four bytes after it, and
/// nothing else.
#[inline(always)]
fn step(lane: &mut Lane) -> bool {
    let Some(next) = lane.data.get(lane.at..).and_then(<[u8]>::first_chunk::<5>) else {
        return false;
    };
    let tag = SNAPPY_TAGS[next[0] as usize];
    let word = u32::from_le_bytes([next[1], next[2], next[3], next[4]]);
    // A literal's length beyond what its tag says.
    let extra = (word & tag.literal_mask) as usize;
    let offset = tag.offset_high as usize + (word & tag.offset_mask) as usize;
    let length = tag.length as usize + extra;
    // Offset 0, or one past what is produced (literals have offset 0).
    lane.fault |= tag.copy & (offset.wrapping_sub(1) >= lane.produced);
    let after = lane.at + tag.advance as usize + extra;
    lane.finder.visit(Element {
        produced: lane.produced,
        length,
        offset,
        next: after,
    });
    lane.at = after;
    lane.produced += length;
    true
}

/// The verdict on a lane that stopped: the exact walk over its last bytes
/// when all it stepped over was sound, else the exact walk over the whole
/// stream again (with a fresh finder), which reports the first fault.
fn finish(lane: &mut Lane, piece: usize) -> Result<(), CompressedError> {
    let finder = &mut lane.finder;
    if !lane.fault && lane.produced <= lane.size && lane.at <= lane.data.len() {
        return snappy_walk_exact(lane.data, lane.at, lane.produced, lane.size, &mut |e| {
            finder.visit(e)
        });
    }
    *finder = PieceFinder::new(lane.data, lane.size, piece);
    let at = snappy_preamble(lane.data, lane.size)?;
    snappy_walk_exact(lane.data, at, 0, lane.size, &mut |e| finder.visit(e))
}

/// The next queued page that gets past its preamble; those that do not
/// get their verdict here.
fn next_lane<'a>(
    pages: &[(&'a [u8], usize)],
    queued: &mut std::ops::Range<usize>,
    piece: usize,
    verdicts: &mut [Result<Option<SnappyPieces>, CompressedError>],
) -> Option<Lane<'a>> {
    for page in queued.by_ref() {
        let (data, size) = pages[page];
        match snappy_preamble(data, size) {
            Ok(at) => {
                return Some(Lane {
                    page,
                    data,
                    size,
                    at,
                    produced: 0,
                    fault: false,
                    finder: PieceFinder::new(data, size, piece),
                })
            }
            Err(e) => verdicts[page] = Err(e),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample;
    use super::super::SNAPPY_BLOCK;
    use super::*;

    /// The exact walk alone, from the preamble.
    fn exact_only(data: &[u8], size: usize) -> Result<(), CompressedError> {
        let at = snappy_preamble(data, size)?;
        snappy_walk_exact(data, at, 0, size, &mut |_| {})
    }

    /// A random generator for the corruptions (xorshift).
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// `sound` (a stream of `n` bytes) corrupted the `case`-th way of five:
    /// a bit flipped, a byte replaced, the stream cut, or a declared size
    /// too large or too small. Returns the stream and the size to check.
    fn corrupted(
        sound: &[u8],
        n: usize,
        case: usize,
        next: &mut impl FnMut() -> u64,
    ) -> (Vec<u8>, usize) {
        let mut bad = sound.to_vec();
        let at = (next() as usize) % bad.len();
        let size = match case % 5 {
            0 => {
                bad[at] ^= 1 << (next() % 8);
                n
            }
            1 => {
                bad[at] = next() as u8;
                n
            }
            2 => {
                bad.truncate(at);
                n
            }
            3 => n + 1 + (next() % 3) as usize,
            _ => n.saturating_sub(1),
        };
        (bad, size)
    }

    /// The fast walk changes nothing but speed: on sound streams and on
    /// thousands of corrupted ones (flips, random bytes, cuts, wrong
    /// sizes) the verdict and its position equal the exact walk's.
    #[test]
    fn the_fast_walk_gives_the_exact_verdicts() {
        let mut next = rng(0x9e37_79b9_7f4a_7c15);
        let (mut errors, mut cases) = (0, 0);
        for n in [0usize, 3, 64, 5_000, 70_000] {
            let raw = sample(n, n as u64 + 5);
            let snappy = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            for case in 0..600 {
                let (bad, size) = corrupted(&snappy, n, case, &mut next);
                let fast = check_snappy(&bad, size);
                assert_eq!(fast, exact_only(&bad, size), "n {n} case {case}");
                errors += usize::from(fast.is_err());
                cases += 1;
            }
        }
        assert!(errors > cases / 2, "{errors} errors in {cases} cases");
    }

    /// A stream whose copies run across a 64 KiB boundary of the output
    /// is sound but does not split; its verdict is still the check's.
    #[test]
    fn streams_not_in_fragments_stay_whole() {
        let size = 131_072usize;
        let mut stream = vec![0x80, 0x80, 0x08]; // varint 131072
        stream.extend([60 << 2, 99]); // a literal of 100 bytes
        stream.extend((0..100u8).map(|i| i.wrapping_mul(7)));
        let mut produced = 100;
        while produced < size {
            let len = (size - produced).min(64);
            stream.extend([(((len - 1) << 2) | 2) as u8, 100, 0]); // copy 100 back
            produced += len;
        }
        assert_eq!(check_snappy(&stream, size), Ok(()));
        assert_eq!(snappy_pieces(&stream, size, SNAPPY_BLOCK), Ok(None));
        // Whole when the piece is not shorter than the page.
        assert_eq!(snappy_pieces(&stream, size, size), Ok(None));
        assert_eq!(snappy_pieces(&stream, size, 0), Ok(None));
    }

    /// The pieces' walk gives the check's verdict on corrupted streams.
    #[test]
    fn pieces_keep_the_checks_verdicts() {
        let raw = sample(200_000, 9);
        let stream = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
        let pieces = snappy_pieces(&stream, raw.len(), SNAPPY_BLOCK)
            .unwrap()
            .unwrap();
        assert_eq!(pieces.count(), 4);
        assert_eq!(pieces.starts[0], 3);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for case in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut bad = stream.clone();
            let at = (x as usize) % bad.len();
            if case % 2 == 0 {
                bad[at] ^= 1 << ((x >> 32) % 8);
            } else {
                bad.truncate(at);
            }
            let verdict = check_snappy(&bad, raw.len());
            let split = snappy_pieces(&bad, raw.len(), SNAPPY_BLOCK);
            assert_eq!(split.as_ref().err(), verdict.as_ref().err(), "case {case}");
            if let Ok(Some(p)) = split {
                // Pieces of a stream that still passes must still cover it.
                assert_eq!(p.count(), 4, "case {case}");
            }
        }
    }

    /// The reference: the exact walk alone over the whole stream, with the
    /// same piece finder (no lean step, no lanes).
    fn exact_pieces(
        data: &[u8],
        size: usize,
        piece: usize,
    ) -> Result<Option<SnappyPieces>, CompressedError> {
        let mut finder = PieceFinder::new(data, size, piece);
        let at = snappy_preamble(data, size)?;
        snappy_walk_exact(data, at, 0, size, &mut |e| finder.visit(e))?;
        Ok(finder.finish())
    }

    /// Pages of every length class (empty, short, one piece, several),
    /// sound and corrupted in every way the exact walk's tests use, in
    /// batches of every length up to several lanes' worth: each verdict
    /// and its pieces equal the exact walk's on the same page alone.
    #[test]
    fn every_verdict_is_the_exact_walks() {
        let mut next = rng(0x2545_f491_4f6c_dd1d);
        let mut pages: Vec<(Vec<u8>, usize)> = Vec::new();
        for (i, n) in [0usize, 1, 3, 64, 5_000, 70_000, 200_000, 300_001]
            .into_iter()
            .enumerate()
        {
            let raw = sample(n, i as u64 + 17);
            let sound = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            pages.push((sound.clone(), n));
            for case in 0..24 {
                let (bad, size) = corrupted(&sound, n, case, &mut next);
                pages.push((bad, size));
            }
        }
        let borrowed: Vec<(&[u8], usize)> = pages.iter().map(|(s, n)| (&s[..], *n)).collect();
        let single: Vec<_> = borrowed
            .iter()
            .map(|(s, n)| exact_pieces(s, *n, SNAPPY_BLOCK))
            .collect();
        let (sound, faulty) = single.iter().fold((0, 0), |(s, f), v| match v {
            Ok(_) => (s + 1, f),
            Err(_) => (s, f + 1),
        });
        assert!(sound > 10 && faulty > 50, "{sound} sound, {faulty} faulty");
        let mut start = 0;
        for len in (0..=2 * LANES + 1).cycle() {
            if start >= borrowed.len() {
                break;
            }
            let end = (start + len).min(borrowed.len());
            let batch = snappy_pieces_batch(&borrowed[start..end], SNAPPY_BLOCK);
            assert_eq!(batch, single[start..end], "pages {start}..{end}");
            start = end;
        }
        // Without pieces, the verdicts are the check's.
        let unsplit = snappy_pieces_batch(&borrowed, 0);
        for (i, verdict) in unsplit.iter().enumerate() {
            let (s, n) = borrowed[i];
            assert_eq!(verdict, &exact_pieces(s, n, 0));
        }
    }
}
