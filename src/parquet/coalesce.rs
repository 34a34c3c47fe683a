//! Merging nearby byte ranges into fewer, larger requests (pure, no I/O).
//!
//! object_store's rule: two ranges merge when the gap between them is at
//! most `max_gap` (1 MiB by default), here with a cap on the merged size so
//! that one request never grows without bound.

use std::ops::Range;

use serde::Serialize;

/// How ranges are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CoalesceOptions {
    /// Largest gap (bytes read but not needed) bridged between two ranges.
    pub max_gap: u64,
    /// Largest merged request; a single range larger than this stays whole.
    pub max_request: u64,
}

impl Default for CoalesceOptions {
    fn default() -> Self {
        CoalesceOptions {
            max_gap: 1 << 20,
            max_request: 64 << 20,
        }
    }
}

/// Merges `ranges` (any order, overlaps allowed) into sorted, disjoint requests.
pub fn coalesce(ranges: &[Range<u64>], opts: CoalesceOptions) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| r.end > r.start).cloned().collect();
    sorted.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for r in sorted {
        if let Some(last) = out.last_mut() {
            let end = last.end.max(r.end);
            let bridges = r.start <= last.end.saturating_add(opts.max_gap);
            let overlaps = r.start < last.end;
            if overlaps || (bridges && end - last.start <= opts.max_request) {
                last.end = end;
                continue;
            }
        }
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(gap: u64, cap: u64) -> CoalesceOptions {
        CoalesceOptions {
            max_gap: gap,
            max_request: cap,
        }
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
