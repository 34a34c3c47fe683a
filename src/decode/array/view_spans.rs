//! The parts of a view column's data buffers that its views reference, and
//! the views rewritten to point into copies of just those parts.
//!
//! The decoder's string views point into whole buffers shared by every
//! column of a row group (its fetched bytes and its decompression scratch),
//! and a filtered batch keeps those buffers whole for the few rows it
//! selects. Copying them back as they are copies every column's bytes once
//! per view column. The copy back reads the views first (16 bytes a row),
//! finds the byte spans they reference here, copies only those spans, and
//! rewrites each view's buffer index and offset to its span.

use std::ops::Range;

/// Spans closer than this are copied as one (a copy's fixed cost is worth
/// about this many bytes at the link's speed).
const JOIN_GAP: usize = 64 << 10;

/// At most this many spans per column: beyond, nearby spans are joined
/// with a wider gap (fewer, larger copies and data buffers).
const MAX_SPANS: usize = 256;

/// Open spans of one buffer kept while reading the views; beyond this
/// they are joined, and beyond twice this the buffer becomes one span from
/// the lowest to the highest byte referenced.
const MAX_OPEN: usize = 4096;

/// A buffer's head is copied whole (the views keep their offsets) where it
/// is at most twice the bytes referenced plus this.
const HEAD_SLACK: usize = 1 << 20;

/// Bytes of one view.
const VIEW: usize = 16;

/// A referenced part of data buffer `buffer`: `bytes` of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) buffer: usize,
    pub(super) bytes: Range<usize>,
}

/// A long view's (length, buffer index, offset); None for an inline view
/// (12 bytes or fewer, which references no buffer).
fn long_view(view: &[u8]) -> Option<(usize, usize, usize)> {
    let word = |at: usize| u32::from_le_bytes(view[at..at + 4].try_into().expect("4 bytes"));
    let len = word(0) as usize;
    (len > 12).then(|| (len, word(8) as usize, word(12) as usize))
}

/// The spans of one buffer, gathered in view order.
#[derive(Debug, Default, Clone)]
struct Open {
    spans: Vec<Range<usize>>,
    /// Too many scattered spans: one from the lowest to the highest byte.
    whole: Option<Range<usize>>,
}

impl Open {
    fn add(&mut self, bytes: Range<usize>) {
        if let Some(w) = &mut self.whole {
            *w = w.start.min(bytes.start)..w.end.max(bytes.end);
            return;
        }
        match self.spans.last_mut() {
            Some(last)
                if bytes.start >= last.start
                    && bytes.start <= last.end.saturating_add(JOIN_GAP) =>
            {
                last.end = last.end.max(bytes.end);
            }
            _ => self.spans.push(bytes),
        }
        if self.spans.len() > MAX_OPEN {
            self.spans = joined(std::mem::take(&mut self.spans), JOIN_GAP);
            if self.spans.len() > MAX_OPEN / 2 {
                let (lo, hi) = bounds(&self.spans);
                self.whole = Some(lo..hi);
                self.spans.clear();
            }
        }
    }

    fn finish(self, gap: usize) -> Vec<Range<usize>> {
        match self.whole {
            Some(w) => vec![w],
            None => joined(self.spans, gap),
        }
    }
}

fn bounds(spans: &[Range<usize>]) -> (usize, usize) {
    let lo = spans.iter().map(|s| s.start).min().unwrap_or(0);
    let hi = spans.iter().map(|s| s.end).max().unwrap_or(0);
    (lo, hi)
}

/// `spans` sorted, with those that overlap or lie within `gap` of each
/// other joined.
fn joined(mut spans: Vec<Range<usize>>, gap: usize) -> Vec<Range<usize>> {
    spans.sort_unstable_by_key(|s| s.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.start <= last.end.saturating_add(gap) => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

/// What to copy of data buffers (of `buffer_lens` bytes) for `views`
/// (whole 16-byte views): per buffer, ordered by buffer then offset,
/// - nothing (an empty span at 0) where no view references it,
/// - its head up to the last referenced byte (a span from 0) where the
///   referenced bytes are most of that (the views keep their offsets),
/// - else the spans the views reference, nearby ones joined (at most
///   [`MAX_SPANS`] in all unless there are more buffers than that).
///
/// A view naming a buffer that does not exist or bytes past its end is an
/// error naming it.
pub(super) fn referenced(views: &[u8], buffer_lens: &[usize]) -> Result<Vec<Span>, String> {
    let mut open = vec![Open::default(); buffer_lens.len()];
    for (i, view) in views.chunks_exact(VIEW).enumerate() {
        let Some((len, buffer, offset)) = long_view(view) else {
            continue;
        };
        let Some(&available) = buffer_lens.get(buffer) else {
            return Err(format!(
                "view {i} names data buffer {buffer} of {}",
                buffer_lens.len()
            ));
        };
        let end = offset
            .checked_add(len)
            .filter(|&end| end <= available)
            .ok_or_else(|| {
                format!(
                    "view {i} reaches byte {} of data buffer {buffer}, which has {available}",
                    offset as u64 + len as u64
                )
            })?;
        open[buffer].add(offset..end);
    }
    let mut gap = JOIN_GAP;
    loop {
        let mut spans = Vec::new();
        for (buffer, o) in open.iter().enumerate() {
            let parts = o.clone().finish(gap);
            let referenced: usize = parts.iter().map(|p| p.len()).sum();
            let last = parts.iter().map(|p| p.end).max().unwrap_or(0);
            if parts.is_empty() || last <= referenced.saturating_mul(2).saturating_add(HEAD_SLACK) {
                spans.push(Span {
                    buffer,
                    bytes: 0..last,
                });
            } else {
                spans.extend(parts.into_iter().map(|bytes| Span { buffer, bytes }));
            }
        }
        if spans.len() <= MAX_SPANS.max(buffer_lens.len()) || gap == usize::MAX {
            return Ok(spans);
        }
        gap = gap.saturating_mul(16);
    }
}

/// Whether the views keep their buffer indices and offsets with `spans`:
/// one span per buffer, in order, each from the buffer's first byte.
pub(super) fn views_unchanged(spans: &[Span], buffers: usize) -> bool {
    spans.len() == buffers
        && spans
            .iter()
            .enumerate()
            .all(|(i, s)| s.buffer == i && s.bytes.start == 0)
}

/// Moves each long view of `views` to the span of `spans` (from
/// [`referenced`] over the same views) that holds it: the new buffer index
/// is the span's position, the offset counts from the span's start.
pub(super) fn rewrite(views: &mut [u8], spans: &[Span]) {
    for view in views.chunks_exact_mut(VIEW) {
        let Some((len, buffer, offset)) = long_view(view) else {
            continue;
        };
        // The last span at or before the view's start in its buffer:
        // `referenced` put every long view inside one.
        let at = spans.partition_point(|s| (s.buffer, s.bytes.start) <= (buffer, offset)) - 1;
        let span = &spans[at];
        debug_assert!(span.buffer == buffer && offset + len <= span.bytes.end);
        view[8..12].copy_from_slice(&(at as u32).to_le_bytes());
        view[12..16].copy_from_slice(&((offset - span.bytes.start) as u32).to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(len: u32, buffer: u32, offset: u32) -> [u8; 16] {
        let mut v = [0u8; 16];
        v[0..4].copy_from_slice(&len.to_le_bytes());
        v[4..8].copy_from_slice(b"pref");
        v[8..12].copy_from_slice(&buffer.to_le_bytes());
        v[12..16].copy_from_slice(&offset.to_le_bytes());
        v
    }

    fn inline(text: &[u8]) -> [u8; 16] {
        let mut v = [0u8; 16];
        v[0..4].copy_from_slice(&(text.len() as u32).to_le_bytes());
        v[4..4 + text.len()].copy_from_slice(text);
        v
    }

    fn views(list: &[[u8; 16]]) -> Vec<u8> {
        list.concat()
    }

    #[test]
    fn inline_views_reference_nothing() {
        let v = views(&[inline(b"short"), inline(b""), inline(b"twelve bytes")]);
        let spans = referenced(&v, &[1 << 20, 1 << 20]).unwrap();
        let nothing = |buffer| Span {
            buffer,
            bytes: 0..0,
        };
        assert_eq!(spans, vec![nothing(0), nothing(1)]);
        assert!(views_unchanged(&spans, 2));
    }

    #[test]
    fn distant_views_are_cut_out_and_a_mostly_referenced_head_is_kept() {
        let far = 10 << 20;
        let v = views(&[
            long(20, 1, 100),
            long(30, 1, 200),
            long(20, 1, far),
            long(15, 0, 5),
        ]);
        let spans = referenced(&v, &[1000, 20 << 20]).unwrap();
        assert_eq!(
            spans,
            vec![
                // Buffer 0: its head, to the last byte referenced.
                Span {
                    buffer: 0,
                    bytes: 0..20
                },
                // Buffer 1: two spans far apart.
                Span {
                    buffer: 1,
                    bytes: 100..230
                },
                Span {
                    buffer: 1,
                    bytes: far as usize..far as usize + 20
                },
            ]
        );
        assert!(!views_unchanged(&spans, 2));
        let mut out = v.clone();
        rewrite(&mut out, &spans);
        let moved: Vec<_> = out.chunks_exact(16).map(long_view).collect();
        assert_eq!(
            moved,
            vec![
                Some((20, 1, 0)),
                Some((30, 1, 100)),
                Some((20, 2, 0)),
                Some((15, 0, 5))
            ]
        );
        assert_eq!(&out[4..8], b"pref", "the prefix is kept");
    }

    #[test]
    fn a_view_past_its_buffer_or_naming_none_is_an_error() {
        let past = referenced(&views(&[long(20, 0, 90)]), &[100]).unwrap_err();
        assert!(past.contains("view 0 reaches byte 110"), "{past}");
        let none = referenced(&views(&[inline(b"a"), long(13, 3, 0)]), &[100]).unwrap_err();
        assert!(none.contains("view 1 names data buffer 3 of 1"), "{none}");
        let wraps = referenced(&views(&[long(20, 0, u32::MAX)]), &[100]).unwrap_err();
        assert!(wraps.contains("reaches byte"), "{wraps}");
    }

    #[test]
    fn scattered_views_are_bounded_in_spans_and_still_point_right() {
        // 20,000 views in a shuffled order, 64 KiB apart from a 4 MiB
        // start: far more places than spans allowed.
        let n = 20_000u32;
        let start = 4u32 << 20;
        let list: Vec<[u8; 16]> = (0..n)
            .map(|i| long(16, 0, start + (i * 7919 % n) * (64 << 10)))
            .collect();
        let v = views(&list);
        let len = start as usize + (n as usize) * (64 << 10);
        let spans = referenced(&v, &[len]).unwrap();
        assert!(spans.len() <= MAX_SPANS, "{} spans", spans.len());
        let mut out = v.clone();
        rewrite(&mut out, &spans);
        for (old, new) in v.chunks_exact(16).zip(out.chunks_exact(16)) {
            let (len, _, offset) = long_view(old).unwrap();
            let (_, span, moved) = long_view(new).unwrap();
            let s = &spans[span];
            assert_eq!(s.bytes.start + moved, offset);
            assert!(s.bytes.start + moved + len <= s.bytes.end);
        }
    }

    #[test]
    fn buffers_referenced_whole_keep_their_views() {
        let v = views(&[long(50, 0, 0), long(40, 1, 10)]);
        let spans = referenced(&v, &[50, 60]).unwrap();
        assert_eq!(spans[1].bytes, 0..50, "the head to the last byte");
        assert!(views_unchanged(&spans, 2));
    }
}
