//! Many Snappy pages checked on one thread, their walks interleaved.
//!
//! A stream's walk is one chain of dependent loads: each element's tag says
//! where the next one starts, so a core waits out the latency of a load and
//! a table lookup per element whatever its width. Walks of different pages
//! do not depend on each other: stepping [`LANES`] of them in turn gives
//! the core that many chains to overlap. Each page's verdict and pieces are
//! exactly those of [`snappy_pieces`] alone: the same fast step and the
//! same exact walk, per page.

use super::snappy::{
    snappy_fast_step, snappy_preamble, snappy_walk_exact, Element, PieceFinder, SnappyPieces,
};
use super::CompressedError;

#[cfg(doc)]
use super::snappy::snappy_pieces;

/// Walks stepped in turn on one thread.
pub const LANES: usize = 4;

/// One page being walked.
struct Lane<'a> {
    page: usize,
    data: &'a [u8],
    size: usize,
    at: usize,
    produced: usize,
    finder: PieceFinder,
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
        let stopped = if let [a, b, c, d] = &mut lanes[..] {
            loop {
                if !step(a) {
                    break 0;
                }
                if !step(b) {
                    break 1;
                }
                if !step(c) {
                    break 2;
                }
                if !step(d) {
                    break 3;
                }
            }
        } else {
            'run: loop {
                for (i, lane) in lanes.iter_mut().enumerate() {
                    if !step(lane) {
                        break 'run i;
                    }
                }
            }
        };
        // The stream's last bytes, or a fault: the exact walk finishes it,
        // and the lane takes the next page.
        let done = &mut lanes[stopped];
        let finder = &mut done.finder;
        let verdict = snappy_walk_exact(done.data, done.at, done.produced, done.size, &mut |e| {
            finder.visit(e)
        });
        match next_lane(pages, &mut queued, piece, &mut verdicts) {
            Some(next) => {
                let done = std::mem::replace(&mut lanes[stopped], next);
                verdicts[done.page] = verdict.map(|()| done.finder.finish());
            }
            None => {
                let done = lanes.swap_remove(stopped);
                verdicts[done.page] = verdict.map(|()| done.finder.finish());
            }
        }
    }
    verdicts
}

/// One fast step of `lane`'s walk: false (the lane unchanged) where the
/// fast step hands over to the exact walk.
#[inline(always)]
fn step(lane: &mut Lane) -> bool {
    let Some((next, made, offset)) = snappy_fast_step(lane.data, lane.at, lane.produced, lane.size)
    else {
        return false;
    };
    lane.finder.visit(Element {
        produced: lane.produced,
        length: made - lane.produced,
        offset,
        next,
    });
    (lane.at, lane.produced) = (next, made);
    true
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
    use super::super::snappy::snappy_pieces;
    use super::super::tests::sample;
    use super::super::SNAPPY_BLOCK;
    use super::*;

    /// Pages of every length class (empty, short, one piece, several),
    /// sound and corrupted in every way the single walk's tests use, in
    /// batches of every length up to several lanes' worth: each verdict
    /// and its pieces equal the single walk's on the same page.
    #[test]
    fn every_verdict_is_the_single_walks() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut pages: Vec<(Vec<u8>, usize)> = Vec::new();
        for (i, n) in [0usize, 1, 3, 64, 5_000, 70_000, 200_000, 300_001]
            .into_iter()
            .enumerate()
        {
            let raw = sample(n, i as u64 + 17);
            let sound = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            pages.push((sound.clone(), n));
            for case in 0..24 {
                let mut bad = sound.clone();
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
                pages.push((bad, size));
            }
        }
        let borrowed: Vec<(&[u8], usize)> = pages.iter().map(|(s, n)| (&s[..], *n)).collect();
        let single: Vec<_> = borrowed
            .iter()
            .map(|(s, n)| snappy_pieces(s, *n, SNAPPY_BLOCK))
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
            assert_eq!(verdict, &super::super::check_snappy(s, n).map(|()| None));
        }
    }
}
