//! Merging nearby byte ranges into fewer, larger requests (pure, no I/O).
//!
//! object_store's rule: two ranges merge when the gap between them is at
//! most `max_gap` (1 MiB by default), here with two caps: on the merged
//! size, so that one request never grows without bound, and on the bytes
//! read but not needed, as a fraction of the bytes needed in the request
//! (10% by default), so that bridging small unprojected columns never makes
//! a scan read much more than it needs.

use std::ops::Range;

use serde::Serialize;

/// How ranges are merged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CoalesceOptions {
    /// Largest gap (bytes read but not needed) bridged between two ranges.
    pub max_gap: u64,
    /// Largest merged request; a single range larger than this stays whole.
    pub max_request: u64,
    /// Largest fraction of bridged (unneeded) bytes in a merged request,
    /// relative to its needed bytes.
    pub max_overread: f64,
}

impl Default for CoalesceOptions {
    fn default() -> Self {
        CoalesceOptions {
            max_gap: 1 << 20,
            max_request: 64 << 20,
            max_overread: 0.1,
        }
    }
}

/// Merges `ranges` (any order, overlaps allowed) into sorted, disjoint requests.
pub fn coalesce(ranges: &[Range<u64>], opts: CoalesceOptions) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| r.end > r.start).cloned().collect();
    sorted.sort_by_key(|r| (r.start, r.end));
    // Each merged request with the bytes it needs (for the overread cap).
    let mut out: Vec<(Range<u64>, u64)> = Vec::with_capacity(sorted.len());
    for r in sorted {
        if let Some((last, needed)) = out.last_mut() {
            if r.start < last.end {
                // Overlap: only the part past the current end is new.
                if r.end > last.end {
                    *needed += r.end - last.end;
                    last.end = r.end;
                }
                continue;
            }
            let gap = r.start - last.end;
            let merged_len = r.end - last.start;
            let merged_needed = *needed + (r.end - r.start);
            let overread = (merged_len - merged_needed) as f64;
            if gap <= opts.max_gap
                && merged_len <= opts.max_request
                && overread <= opts.max_overread * merged_needed as f64
            {
                last.end = r.end;
                *needed = merged_needed;
                continue;
            }
        }
        let len = r.end - r.start;
        out.push((r, len));
    }
    out.into_iter().map(|(r, _)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(gap: u64, cap: u64) -> CoalesceOptions {
        CoalesceOptions {
            max_gap: gap,
            max_request: cap,
            max_overread: f64::INFINITY,
        }
    }

    #[test]
    fn overread_cap_keeps_read_amplification_bounded() {
        let capped = CoalesceOptions {
            max_gap: 1000,
            max_request: u64::MAX,
            max_overread: 0.1,
        };
        // 100 needed + 50 gap + 100 needed: 25% overread, not merged.
        assert_eq!(
            coalesce(&[0..100, 150..250], capped),
            vec![0..100, 150..250]
        );
        // 100 + 10 gap + 100: 5%, merged.
        assert_eq!(coalesce(&[0..100, 110..210], capped), vec![0..210]);
        // Many small gaps: merged while the total stays within 10%.
        let many: Vec<Range<u64>> = (0..20u64).map(|i| i * 105..i * 105 + 100).collect();
        let out = coalesce(&many, capped);
        let read: u64 = out.iter().map(|r| r.end - r.start).sum();
        assert!(read as f64 <= 2000.0 * 1.1, "read {read} for 2000 needed");
        assert_eq!(out.len(), 1, "5% gaps merge into one request");
    }

    #[test]
    fn merges_within_the_gap_only() {
        let r = coalesce(&[0..10, 15..20, 100..110], opts(5, 1000));
        assert_eq!(r, vec![0..20, 100..110]);
        let r = coalesce(&[0..10, 16..20], opts(5, 1000));
        assert_eq!(r, vec![0..10, 16..20]);
    }

    #[test]
    fn sorts_and_absorbs_overlaps_and_drops_empty() {
        let r = coalesce(&[50..60, 0..10, 5..8, 55..70, 30..30], opts(0, 1000));
        assert_eq!(r, vec![0..10, 50..70]);
    }

    #[test]
    fn respects_the_size_cap_but_keeps_big_ranges_whole() {
        let r = coalesce(&[0..60, 61..120, 121..130], opts(10, 100));
        assert_eq!(r, vec![0..60, 61..130]);
        let big: Vec<Range<u64>> = std::iter::once(0..500).collect();
        let r = coalesce(&big, opts(10, 100));
        assert_eq!(r, big);
    }

    #[test]
    fn every_input_byte_is_covered() {
        let input: Vec<Range<u64>> = (0..50u64)
            .map(|i| (i * 37 % 1000)..(i * 37 % 1000 + 1 + i % 7))
            .collect();
        for gap in [0, 3, 50] {
            for cap in [10, 100, 10_000] {
                let out = coalesce(&input, opts(gap, cap));
                for w in out.windows(2) {
                    assert!(w[0].end <= w[1].start, "disjoint and sorted");
                    assert!(w[0].start < w[1].start);
                }
                for r in &input {
                    assert!(
                        out.iter().any(|o| o.start <= r.start && r.end <= o.end),
                        "{r:?} covered"
                    );
                }
            }
        }
    }
}
