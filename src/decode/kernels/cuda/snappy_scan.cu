// gdscan GPU decoder: the check of Snappy pages and the search for their
// 64 KiB pieces, spread over the whole GPU.
//
// nvCOMP's behaviour on corrupt Snappy is undefined, so every page is
// walked before it sees it (check.cu says why and what the walk proves).
// A walk is a chain: where an element starts depends on the one before, so
// one warp per page (this decoder's first GPU check) lasted as long as the
// longest page (l_comment's 1 MiB pages outlasted nvCOMP's call), and the
// host's walk (src/decode/page/validate/) costs CPU time per byte.
// Here each page's stream is cut into GDS_SCAN_SEGMENT-byte segments, and
// one thread per segment walks it:
//
// 1. gds_snappy_spec: each segment is walked from each of its first
//    GDS_SCAN_STARTS bytes as if an element started there, each walk
//    marking the offsets it visits in a bitmap of its own and recording
//    where it leaves the segment, the output bytes of its elements and
//    their copy margins (offset less the output before). A chain started
//    at a wrong offset soon lands on a real element start (elements are a
//    few bytes long), and from there it is the real chain; but a wrong
//    chain can also run out of step beside the real one through a whole
//    segment (runs of two- and three-byte copies), which one walk per
//    segment often did (snappy_scan.rs, SCAN_STARTS, says how often):
//    three walks from three neighbouring bytes (the default) almost never
//    all do. Walk 0 of every segment runs first; the others, in a second
//    launch, stop where they land on walk 0's path (most do within a few
//    elements); the few still out of step after some elements are walked
//    whole by a third launch, in full warps.
// 2. gds_snappy_chain (a thread per page): the real chain's entry into each
//    segment, in order: the preamble's end for the first; for the next, the
//    real chain walked from the entry until it meets an offset one of the
//    speculative walks visited (a few elements in), then that walk's
//    exit; only where it meets none is the whole segment walked.
//    (Walking the whole segment whenever the entry itself had not been
//    visited, which is most segments, takes 0.94 s instead of 0.25 s for
//    SF 10 lineitem on the H200.) A page's preamble is checked
//    here. On the way, where the real chain met a walk, and the output
//    bytes of its own elements before that.
// 3. gds_snappy_outs: each segment's output bytes along the real chain:
//    the real chain's own elements up to the meeting offset, then the
//    walk's output less what its elements before that offset made, which
//    the walk recorded for its first elements.
// 4. gds_snappy_prefix (a thread per page): the output bytes before each
//    segment.
// 5. gds_snappy_verify: each segment's elements checked as the host checks
//    them (truncation, then a copy's offset against the bytes produced,
//    then the declared size), the first fault recorded; the element that
//    starts each 64 KiB piece of the output found, and whether any element
//    crosses a piece's end or copies from before its piece. The real
//    chain's own elements up to where it met a speculative walk are
//    walked; from there on the chain is that walk's, whose record (its
//    elements' copy margins, step 1) proves the rest sound without reading
//    the stream again wherever the rest stays inside one piece (most
//    segments); elsewhere the rest is walked too.
// 6. gds_snappy_finish (a thread per page): the page's verdict, the first
//    fault in stream order (or a short output), as the host reports it; then the page's nvCOMP jobs: a refused page's point at
//    `dummy`, an empty stream, so nvCOMP never reads it; a page that splits
//    gets one job per piece and a task for gds_snappy_pieces (check.cu),
//    which writes each piece as a stream of its own; any other keeps one
//    job, the whole page, and its other jobs are empty.
//
// Every walk is bounded: each step moves at least one byte forward, and
// no read leaves [src, src + len).
#include "common.cuh"

#define GDS_NO_POS 0xffffffffu

// Called where gds_snappy_verify proves a segment without walking it, and
// where a later speculative walk stops on walk 0's path (the CPU emulation
// counts them; nothing on the GPU).
#ifndef GDS_SCAN_PROVED_HOOK
#define GDS_SCAN_PROVED_HOOK()
#endif
#ifndef GDS_SCAN_MERGED_HOOK
#define GDS_SCAN_MERGED_HOOK()
#endif
// Elements a later speculative walk takes, past its record's first
// GDS_SCAN_WALK_WORDS, before it leaves the rest of its segment to
// gds_snappy_spec_rest (72 in all: benches/probe/snappy_walks.py).
#define GDS_SCAN_LATER_STEPS 40u
// Bitmap words gds_walk_index counts in (a walk's first
// GDS_SCAN_WALK_WORDS elements lie in them but in long literal runs).
#define GDS_SCAN_INDEX_WORDS 8u
// A later walk's exit when it stopped on walk 0's path: this bit and the
// offset where it stopped (offsets are under 2^31, so never GDS_NO_POS).
#define GDS_SCAN_MERGED 0x80000000u

// A Snappy page's entry of the page table: GDS_SCAN_PAGE_WORDS words.
struct ScanPage {
  u64 src;           // the stream (device address)
  u64 len;           // its bytes
  u64 size;          // the page header's uncompressed size
  u64 seg_first;     // its first segment in the segment arrays
  u64 n_segs;        // ceil(len / GDS_SCAN_SEGMENT)
  u64 bitmap_first;  // its first word in the bitmap
  u64 job_first;     // its first job in the Snappy call's arrays
  u64 n_pieces;      // its jobs: ceil(size / GDS_SNAPPY_PIECE) when it may split, else 1
  u64 region;        // where its pieces' streams go (device address; 0 when n_pieces is 1)
  u64 starts_first;  // its first entry in the starts array
};

__device__ __forceinline__ ScanPage gds_scan_page(const u64* pages, u64 i) {
  const u64* w = pages + (u64)GDS_SCAN_PAGE_WORDS * i;
  ScanPage p;
  p.src = w[0]; p.len = w[1]; p.size = w[2]; p.seg_first = w[3]; p.n_segs = w[4];
  p.bitmap_first = w[5]; p.job_first = w[6]; p.n_pieces = w[7]; p.region = w[8]; p.starts_first = w[9];
  return p;
}

// A thread's view of a stream through a 24-byte window: the aligned 16
// bytes around the last offset read and the 8 after them, loaded at once,
// so that the 8 bytes from any offset in the first 16 (an element's tag
// and the up to 4 bytes after it) are two words and a shift. A walk's
// elements are a few bytes long, so most steps hit the window, and a step
// costs a load latency per 16 bytes, not one per element. A byte at a
// time view (a lookup per tag and length byte) makes gds_snappy_spec
// issue-bound (2.5 instructions a cycle, 846 million a
// group under Nsight Compute). A window that would reach outside the
// stream (its first and last bytes) is loaded byte by byte, only the
// stream's own bytes, the rest zero: no read leaves [d, d + len).
// Offsets are 32-bit, from `base` (the stream's first byte rounded down
// to 16): a stream is under 2 GiB.
struct GdsWindow {
  const u8* base;
  u32 lo, hi;  // the stream is base[lo, hi)
  u32 block;   // the window's first offset (a multiple of 16); 1 when none is loaded
  u64 w0, w1, w2;
};
// A stream of more than 0x7fffffff bytes (no page has one) is seen as
// empty: the chain kernel refuses its page.
__device__ __forceinline__ GdsWindow gds_window(const u8* d, u32 len) {
  GdsWindow w;
  w.base = (const u8*)((u64)d & ~15ull);
  w.lo = (u32)((u64)d & 15ull);
  w.hi = w.lo + (len > 0x7fffffffu ? 0u : len);
  w.block = 1; w.w0 = 0; w.w1 = 0; w.w2 = 0;
  return w;
}
__device__ __forceinline__ u32 gds_window_len(const GdsWindow& w) { return w.hi - w.lo; }
// The 8 stream bytes from offset `p` (zero past the stream's end), the
// first in the low byte.
__device__ __forceinline__ u64 gds_window_bytes8(GdsWindow& v, u32 p) {
  const u32 rel = v.lo + p;
  const u32 block = rel & ~15u;
  if (block != v.block) {
    v.block = block;
    if (block >= v.lo && block + 24 <= v.hi) {
      const uint4 a = *(const uint4*)(v.base + block);
      v.w0 = (u64)a.x | ((u64)a.y << 32);
      v.w1 = (u64)a.z | ((u64)a.w << 32);
      v.w2 = *(const u64*)(v.base + block + 16);
    } else {
      u64 w0 = 0, w1 = 0, w2 = 0;
#pragma unroll
      for (u32 b = 0; b < 24; ++b) {
        const u32 q = block + b;
        const u64 byte = q >= v.lo && q < v.hi ? (u64)v.base[q] : 0;
        if (b < 8) w0 |= byte << (8 * b);
        else if (b < 16) w1 |= byte << (8 * (b - 8));
        else w2 |= byte << (8 * (b - 16));
      }
      v.w0 = w0; v.w1 = w1; v.w2 = w2;
    }
  }
  const u32 at = rel - block;
  const u64 lo = at < 8 ? v.w0 : v.w1;
  const u64 hi = at < 8 ? v.w1 : v.w2;
  const u32 shift = 8 * (at & 7);
  // hi << (64 - shift), and 0 when shift is 0, without a branch.
  return (lo >> shift) | ((hi << 1) << (63 - shift));
}

// The element at `pos` (< the stream's length) read through the window:
// as gds_snappy_element (check.cu), from the 8 bytes at `pos` at once
// (gds_snappy_hop).
__device__ __forceinline__ SnappyHop gds_window_hop(GdsWindow& w, u32 pos) {
  return gds_snappy_hop(gds_window_bytes8(w, pos), gds_window_len(w), pos);
}

// As gds_window_hop, the tag's gds_hop_entry read from `table` (the 256
// tags' entries): a shared-memory load in place of the arithmetic.
__device__ __forceinline__ SnappyHop gds_window_hop_in(GdsWindow& w, u32 pos, const u64* table) {
  const u64 x = gds_window_bytes8(w, pos);
  return gds_snappy_hop_with(table[(u32)x & 0xffu], x, gds_window_len(w), pos);
}

// Steps over the element at `pos`: adds its output bytes to `out` and
// returns where the next element starts, or GDS_NO_POS when it runs past
// the stream.
__device__ __forceinline__ u32 gds_snappy_step(GdsWindow& w, u32 pos, u64& out) {
  const SnappyHop e = gds_window_hop(w, pos);
  if (e.code != GDS_SNAPPY_OK) return GDS_NO_POS;
  out += e.length;
  return e.next;
}

// Stream bytes [start, end) of segment k of a stream of `len` bytes.
struct GdsSegment {
  u32 start, end;
};
__device__ __forceinline__ GdsSegment gds_segment(u64 k, u32 len) {
  GdsSegment g;
  g.start = (u32)k * GDS_SCAN_SEGMENT;
  g.end = len - g.start < GDS_SCAN_SEGMENT ? len : g.start + GDS_SCAN_SEGMENT;
  return g;
}

__device__ __forceinline__ u64 gds_global_thread() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ u64 gds_thread_stride() { return (u64)gridDim.x * blockDim.x; }

// Speculative walk j of the segment k of a page: its bitmap.
__device__ __forceinline__ u64 gds_walk_bitmap(const ScanPage& pg, u64 k, u32 j) {
  return pg.bitmap_first + (k * GDS_SCAN_STARTS + j) * (GDS_SCAN_SEGMENT / 32);
}

// A copy's margin: its offset less the walk's output before it (i32, the
// offsets a page under 2 GiB can need); i32 max where the offset is 0 or
// 2^31 and more (never proved sound from the record: the verify kernel
// walks such a segment), i32 min for a literal (nothing to prove). A
// walk's output fits 32 bits (gds_snappy_spec says why).
__device__ __forceinline__ i32 gds_copy_margin(const SnappyHop& e, u32 before) {
  if (!e.copy) return (i32)0x80000000u;
  if (e.offset == 0 || e.offset > 0x7fffffffu) return 0x7fffffff;
  // offset - before, no lower than -0x7fffffff.
  return before > e.offset + 0x7fffffffu ? -0x7fffffff : (i32)(e.offset - before);
}

// A walk's bitmap of the offsets it visited, written a word at a time as
// the walk passes each 32 bytes.
struct GdsVisits {
  u32* bits;
  u32 seg_start;
  u32 word, at_word;  // the word being filled and its index
};
__device__ __forceinline__ GdsVisits gds_visits(u32* bits, u32 seg_start) {
  GdsVisits v;
  v.bits = bits; v.seg_start = seg_start; v.word = 0; v.at_word = 0;
  return v;
}
// Writes the bitmap's words before word `w`.
__device__ __forceinline__ void gds_visits_flush(GdsVisits& v, u32 w) {
  while (v.at_word < w) {
    v.bits[v.at_word++] = v.word;
    v.word = 0;
  }
}
__device__ __forceinline__ void gds_visit(GdsVisits& v, u32 p) {
  const u32 rel = p - v.seg_start;
  gds_visits_flush(v, rel >> 5);
  v.word |= 1u << (rel & 31);
}
// Whether the walk whose bitmap is `bits` visited offset `rel` of its
// segment.
__device__ __forceinline__ bool gds_visited(const u32* bits, u32 rel) { return (bits[rel >> 5] >> (rel & 31)) & 1u; }

// The speculative walks: gds_snappy_spec walk 0 of every segment, then
// gds_snappy_spec_later the others, then gds_snappy_spec_rest those the
// second launch left (below). Walk t = s *
// GDS_SCAN_STARTS + j writes its bitmap of visited offsets; its exit goes
// to exits[t] (GDS_NO_POS where an element it met is not one: a
// truncation); its record, GDS_SCAN_RECORD_WORDS words at outputs + t *
// GDS_SCAN_RECORD_WORDS, gets the output bytes of its elements (those that
// start in the segment) in word 0; in word i (0 < i < GDS_SCAN_WALK_WORDS)
// the output bytes of its first i elements, so gds_snappy_outs learns the
// walk's output from any of its first offsets on without walking it again;
// in word GDS_SCAN_WALK_WORDS + i the copy margin of its element i (i <
// GDS_SCAN_WALK_WORDS; i32 min past its last element); and in the last
// word the largest margin of its later elements, so gds_snappy_verify
// proves every copy of the walk from any of its first elements on within
// the output before it without walking it again. (Output bytes of
// elements starting in one segment of a page under 2 GiB fit 32 bits, with
// room: its literals are disjoint bytes of the stream, its copies 64 bytes
// at most, so no total reaches 0xffffffff, which the record would read as
// too many to say.)
//
// A later walk that lands on an offset walk 0 visited is walk 0 from
// there on (a chain's next element depends only on where it is), so it
// stops, its bitmap all zero, its exit GDS_SCAN_MERGED | that offset and
// its record's word 0 the output bytes of its elements before it: the
// chain kernel, which looks for the first walk that visited an offset of
// the real chain, never picks it; a real chain that enters the segment
// where it began jumps to where it stopped (its elements up to there are
// the real chain's own), and one that ran into it elsewhere walks on into
// walk 0 a few elements later. Only a walk out of step with walk 0
// through the whole segment (the case the later walks are for) walks it
// all. On TPC-H's pages about 9 in 10 later walks
// stop, after 17 elements on average; a warp lasts as long as its longest
// walk, so a later walk still out of step after GDS_SCAN_LATER_STEPS
// elements is left to a third launch, which walks those side by side:
// the three take about 0.4 of the warp-steps of three full walks per
// segment (benches/probe/snappy_walks.py, BENCHMARKS.md).
//
// Walk j of segment s (walk t = s * GDS_SCAN_STARTS + j). A LATER walk
// stops where it lands on walk 0's path (as said above), or, past its
// record's elements and GDS_SCAN_LATER_STEPS more still out of step,
// leaves its bitmap and record unfinished and returns false:
// gds_snappy_spec_rest walks it again.
template <bool LATER>
__device__ __forceinline__ bool gds_spec_walk(const u64* pages, const u32* seg_page, u64 s, u32 j, u32* bitmap,
                                              u32* exits, u32* outputs, const u64* hops) {
  const u64 t = s * GDS_SCAN_STARTS + j;
  const ScanPage pg = gds_scan_page(pages, seg_page[s]);
  const u8* d = (const u8*)pg.src;
  const u32 len = (u32)pg.len;
  GdsWindow win = gds_window(d, len);
  const u64 k = s - pg.seg_first;
  const GdsSegment g = gds_segment(k, len);
  const u32 seg_start = g.start, seg_end = g.end;
  const u32 n_words = (seg_end - seg_start + 31) / 32;
  u32* bits = bitmap + gds_walk_bitmap(pg, k, j);
  // Walk 0's bitmap, for a later walk.
  const u32* first_bits = bitmap + gds_walk_bitmap(pg, k, 0);
  u32* record = outputs + t * GDS_SCAN_RECORD_WORDS;
  u32* margins = record + GDS_SCAN_WALK_WORDS;
  GdsVisits visits = gds_visits(bits, seg_start);
  u32 elements = 0, total = 0, steps = 0;
  i32 later = (i32)0x80000000u;
  bool merged = false;
  u32 p = seg_start + j;
  // The first elements, each with its figures in the record.
  while (p < seg_end && elements < GDS_SCAN_WALK_WORDS) {
    if (LATER && gds_visited(first_bits, p - seg_start)) {
      merged = true;
      break;
    }
    gds_visit(visits, p);
    const SnappyHop e = gds_window_hop_in(win, p, hops);
    margins[elements] = (u32)gds_copy_margin(e, total);
    if (e.code != GDS_SNAPPY_OK) {
      p = GDS_NO_POS;
      break;
    }
    total += e.length;
    p = e.next;
    if (++elements < GDS_SCAN_WALK_WORDS) record[elements] = total;
  }
  // The rest (most of the walk): only the largest margin is kept.
  while (!merged && p < seg_end) {
    if (LATER) {
      if (gds_visited(first_bits, p - seg_start)) {
        merged = true;
        break;
      }
      if (++steps == GDS_SCAN_LATER_STEPS) return false;
    }
    gds_visit(visits, p);
    const SnappyHop e = gds_window_hop_in(win, p, hops);
    const i32 margin = gds_copy_margin(e, total);
    later = margin > later ? margin : later;
    if (e.code != GDS_SNAPPY_OK) {
      p = GDS_NO_POS;
      break;
    }
    total += e.length;
    p = e.next;
  }
  if (merged) {
    GDS_SCAN_MERGED_HOOK();
    for (u32 w = 0; w < n_words; ++w) bits[w] = 0;
    exits[t] = GDS_SCAN_MERGED | p;
    record[0] = total;
    return true;
  }
  gds_visits_flush(visits, n_words);
  // A walk that stopped at a bad element wrote its margin: the count
  // of margins written is then one more than its elements.
  for (u32 m = elements + (p == GDS_NO_POS ? 1u : 0u); m < GDS_SCAN_WALK_WORDS; ++m) margins[m] = 0x80000000u;
  margins[GDS_SCAN_WALK_WORDS] = (u32)later;
  exits[t] = p;
  record[0] = total;
  return true;
}

// The tags' gds_hop_entry, for the block's walks.
__device__ __forceinline__ void gds_hop_table(u64* hops) {
  for (u32 tag = threadIdx.x; tag < 256; tag += blockDim.x) hops[tag] = gds_hop_entry(tag);
  __syncthreads();
}

// Walk 0 of every segment, a thread each; empties `rest` (the count of
// later walks left for gds_snappy_spec_rest, then their numbers).
extern "C" __global__ void __launch_bounds__(GDS_SCAN_BLOCK) gds_snappy_spec(
    const u64* pages, const u32* seg_page, u32 n_segs, u32* bitmap, u32* exits, u32* outputs, u32* rest) {
  __shared__ u64 hops[256];
  gds_hop_table(hops);
  if (blockIdx.x == 0 && threadIdx.x == 0) rest[0] = 0;
  for (u64 s = gds_global_thread(); s < n_segs; s += gds_thread_stride())
    gds_spec_walk<false>(pages, seg_page, s, 0, bitmap, exits, outputs, hops);
}

// Walks 1 to GDS_SCAN_STARTS - 1 of every segment, a thread each: most
// stop on walk 0's path within a few elements; the few still out of step
// after GDS_SCAN_LATER_STEPS are listed in `rest`. A warp lasts as long
// as its longest walk, and one long walk in most warps made this launch
// as long as half of walk 0's.
extern "C" __global__ void __launch_bounds__(GDS_SCAN_BLOCK) gds_snappy_spec_later(
    const u64* pages, const u32* seg_page, u32 n_segs, u32* bitmap, u32* exits, u32* outputs, u32* rest) {
  __shared__ u64 hops[256];
  gds_hop_table(hops);
  const u32 per_seg = GDS_SCAN_STARTS - 1;
  const u64 n_walks = (u64)n_segs * per_seg;
  for (u64 i = gds_global_thread(); i < n_walks; i += gds_thread_stride()) {
    const u64 s = i / per_seg;
    const u32 j = 1 + (u32)(i % per_seg);
    if (!gds_spec_walk<true>(pages, seg_page, s, j, bitmap, exits, outputs, hops)) {
      const u32 at = atomicAdd(&rest[0], 1u);
      rest[1 + at] = (u32)(s * GDS_SCAN_STARTS + j);
    }
  }
}

// The later walks `rest` lists, walked whole from their start, side by
// side in full warps (launched for as many threads as there are later
// walks; those past the list's count do nothing).
extern "C" __global__ void __launch_bounds__(GDS_SCAN_BLOCK) gds_snappy_spec_rest(
    const u64* pages, const u32* seg_page, u32 n_segs, u32* bitmap, u32* exits, u32* outputs, u32* rest) {
  const u32 n = rest[0];
  // Most blocks have none (the list is short): they leave before the
  // table, together (the test is the same for the whole block).
  if ((u64)blockIdx.x * blockDim.x >= n) return;
  __shared__ u64 hops[256];
  gds_hop_table(hops);
  for (u64 i = gds_global_thread(); i < n; i += gds_thread_stride()) {
    const u32 t = rest[1 + i];
    gds_spec_walk<false>(pages, seg_page, t / GDS_SCAN_STARTS, t % GDS_SCAN_STARTS, bitmap, exits, outputs, hops);
  }
  (void)n_segs;  // the three launches take the same arguments
}

// The first of the speculative walks of segment k that visited `p` (an
// offset inside the segment), or GDS_SCAN_STARTS when none did.
__device__ __forceinline__ u32 gds_walk_visiting(const u32* bitmap, const ScanPage& pg, u64 k, u32 seg_start,
                                                 u32 p) {
  const u32 word = (p - seg_start) / 32, bit = (p - seg_start) & 31;
  u32 found = GDS_SCAN_STARTS;
  for (u32 j = GDS_SCAN_STARTS; j-- > 0;) {
    if ((bitmap[gds_walk_bitmap(pg, k, j) + word] >> bit) & 1u) found = j;
  }
  return found;
}

// How many offsets walk j of segment k visited before `p` (its element
// index at p, when it visited p), at most GDS_SCAN_WALK_WORDS; that too
// when p lies past the bitmap's first GDS_SCAN_INDEX_WORDS words (the count
// is only wanted below GDS_SCAN_WALK_WORDS, and elements are a few bytes).
__device__ __forceinline__ u32 gds_walk_index(const u32* bitmap, const ScanPage& pg, u64 k, u32 j, u32 seg_start,
                                              u32 p) {
  const u32 word = (p - seg_start) / 32, bit = (p - seg_start) & 31;
  if (word >= GDS_SCAN_INDEX_WORDS) return GDS_SCAN_WALK_WORDS;
  const u32* bits = bitmap + gds_walk_bitmap(pg, k, j);
  u32 n = __popc(bits[word] & ((1u << bit) - 1u));
  for (u32 w = 0; w < word; ++w) n += __popc(bits[w]);
  return n < GDS_SCAN_WALK_WORDS ? n : GDS_SCAN_WALK_WORDS;
}

// The output bytes of the elements of the chain from `from` that start
// before `to`; `reached` says whether the chain arrives exactly at `to`.
__device__ __forceinline__ u64 gds_chain_output(GdsWindow& win, u32 from, u32 to, bool& reached) {
  u64 sum = 0;
  u32 q = from;
  while (q < to) q = gds_snappy_step(win, q, sum);
  reached = q == to;
  return sum;
}

// Per segment, chain writes where the real chain met a speculative walk:
// meets[2s] the offset (GDS_NO_POS where it met none, or no element starts
// in the segment) and meets[2s + 1] the walk, and in outs[s] the output
// bytes of the real chain's own elements before that offset (all of the
// segment's where it met none).
extern "C" __global__ void __launch_bounds__(GDS_SCAN_BLOCK) gds_snappy_chain(
    const u64* pages, u32 n_pages, const u32* bitmap, const u32* exits, const u32* outputs, u32* entries,
    u32* meets, u64* outs, u32* verdicts) {
  for (u64 i = gds_global_thread(); i < n_pages; i += gds_thread_stride()) {
    const ScanPage pg = gds_scan_page(pages, i);
    const u8* d = (const u8*)pg.src;
    u32* r = verdicts + (u64)GDS_SCAN_RESULT_WORDS * i;
    for (u32 w = 0; w < GDS_SCAN_RESULT_WORDS; ++w) r[w] = 0;
    u32 e = GDS_NO_POS;
    if (pg.len > 0x7fffffffull || pg.size > 0x7fffffffull) {
      // Pages are under 2 GiB (the page header's sizes are i32).
      r[0] = GDS_SNAPPY_OVERRUN; r[2] = (u32)pg.size;
    } else {
      const u32 at = gds_snappy_preamble(d, (u32)pg.len, pg.size, r);
      if (r[0] == GDS_SNAPPY_OK) e = at;
    }
    const u32 len = (u32)pg.len;
    GdsWindow win = gds_window(d, (u32)pg.len);
    for (u64 k = 0; k < pg.n_segs; ++k) {
      const u64 seg = pg.seg_first + k;
      const GdsSegment g = gds_segment(k, len);
      const u32 seg_start = g.start, seg_end = g.end;
      entries[seg] = e;
      u64 own = 0;
      u32 meet = GDS_NO_POS, met = GDS_SCAN_STARTS;
      if (e < seg_end) {
        // The real chain from the entry meets one of the speculative ones a
        // few elements in (rarely none): from the first offset both visit,
        // they are the same chain, and that walk's exit is the real one.
        u32 p = e, walk = GDS_SCAN_STARTS;
        // Entering where a later walk began that stopped on walk 0's
        // path: that walk's elements up to there are the real chain's.
        const u32 j = p - seg_start;
        if (j > 0 && j < GDS_SCAN_STARTS) {
          const u64 t = seg * GDS_SCAN_STARTS + j;
          const u32 x = exits[t];
          // (GDS_NO_POS has the bit too: that walk met a bad element.)
          if (x != GDS_NO_POS && (x & GDS_SCAN_MERGED) != 0) {
            own += outputs[t * GDS_SCAN_RECORD_WORDS];
            p = x & ~GDS_SCAN_MERGED;
          }
        }
        while (p < seg_end && (walk = gds_walk_visiting(bitmap, pg, k, seg_start, p)) == GDS_SCAN_STARTS)
          p = gds_snappy_step(win, p, own);
        if (p < seg_end) {
          meet = p;
          met = walk;
          e = exits[seg * GDS_SCAN_STARTS + walk];
        } else {
          e = p;
        }
      }
      meets[2 * seg] = meet;
      meets[2 * seg + 1] = met;
      outs[seg] = own;
    }
  }
}

// A thread per segment: its output bytes along the real chain, completed
// from where chain says the real chain met a speculative walk: the walk's
// output from there on is its total less what its elements before that
// offset made, which its record holds when the offset is one of its first
// (the walks meet the real chain a few elements in); otherwise the walk is
// followed again from its start to there.
extern "C" __global__ void __launch_bounds__(GDS_SCAN_BLOCK) gds_snappy_outs(
    const u64* pages, const u32* seg_page, u32 n_segs, const u32* bitmap, const u32* outputs, const u32* meets,
    u64* outs) {
  for (u64 s = gds_global_thread(); s < n_segs; s += gds_thread_stride()) {
    const u32 meet = meets[2 * s];
    if (meet == GDS_NO_POS) continue;
    const u32 walk = meets[2 * s + 1];
    const ScanPage pg = gds_scan_page(pages, seg_page[s]);
    const u32 len = (u32)pg.len;
    const u64 k = s - pg.seg_first;
    const GdsSegment g = gds_segment(k, len);
    const u32* record = outputs + (s * GDS_SCAN_STARTS + walk) * GDS_SCAN_RECORD_WORDS;
    const u32 index = gds_walk_index(bitmap, pg, k, walk, g.start, meet);
    GdsWindow win = gds_window((const u8*)pg.src, len);
    bool reached = true;
    const u64 ahead = index == 0                     ? 0
                      : index < GDS_SCAN_WALK_WORDS ? (u64)record[index]
                                                     : gds_chain_output(win, g.start + walk, meet, reached);
    const u64 total = record[0];
    u64 out = outs[s];
    if (reached && total >= ahead) {
      out += total - ahead;
    } else {
      // Not reachable by construction (the walk visited the offset): the
      // real chain's own elements from there to the segment's end then.
      for (u32 p = meet; p < g.end;) p = gds_snappy_step(win, p, out);
    }
    outs[s] = out;
  }
}

extern "C" __global__ void __launch_bounds__(GDS_SCAN_BLOCK) gds_snappy_prefix(
    const u64* pages, u32 n_pages, const u64* outs, u64* before) {
  for (u64 i = gds_global_thread(); i < n_pages; i += gds_thread_stride()) {
    const ScanPage pg = gds_scan_page(pages, i);
    u64 sum = 0;
    for (u64 k = 0; k < pg.n_segs; ++k) {
      before[pg.seg_first + k] = sum;
      sum += outs[pg.seg_first + k];
    }
  }
}

// Whether the rest of segment s's real chain, from `meet` (where chain
// found it meets speculative walk `walk`, its element `index`) to the
// segment's end, is sound and touches no piece's edge, proved from the
// walk's record alone: `produced` is the page's output before `meet`.
// Every element from there on is the walk's (the same chain), none of
// them faulty (the walk's exit is an offset), so what remains is the
// copies' offsets against the output before each and the pieces: with the
// walk's output `ahead` before `meet` and its output `rest` from there,
// copy i reads within the output when its margin (offset less the walk's
// output before it) is at most produced - ahead, and within its piece
// when at most (produced - the piece's start) - ahead; no element starts
// a piece past `meet` or crosses a piece's end when the rest's output ends
// inside the piece `meet` starts in; and none passes the declared size
// when the rest's output ends at or before it. Where any of it fails, or
// the record cannot say (`meet` past the walk's first elements, a sum
// clamped), false: the segment is walked.
__device__ __forceinline__ bool gds_rest_proved(const ScanPage& pg, u64 s, u32 walk, u32 index, const u32* exits,
                                                const u32* outputs, u64 produced) {
  if (index >= GDS_SCAN_WALK_WORDS || exits[s * GDS_SCAN_STARTS + walk] == GDS_NO_POS) return false;
  const u32* record = outputs + (s * GDS_SCAN_STARTS + walk) * GDS_SCAN_RECORD_WORDS;
  const u32 total = record[0];
  const u32 ahead = index == 0 ? 0u : record[index];
  if (total == 0xffffffffu || ahead > total) return false;
  const u64 end = produced + (total - ahead);
  if (end > pg.size) return false;
  u64 room = produced;  // how far back a copy at `meet` may reach
  if (pg.n_pieces > 1) {
    const u64 piece = produced - produced % GDS_SNAPPY_PIECE;
    if (end > piece + GDS_SNAPPY_PIECE) return false;
    room = produced - piece;
  }
  i32 margin = (i32)record[GDS_SCAN_RECORD_WORDS - 1];
  for (u32 i = index; i < GDS_SCAN_WALK_WORDS; ++i) {
    const i32 m = (i32)record[GDS_SCAN_WALK_WORDS + i];
    margin = m > margin ? m : margin;
  }
  return margin != 0x7fffffff && (i64)margin <= (i64)room - (i64)ahead;
}

// Ends segment g's bitmap of the real chain's element starts (`visits`,
// which holds those the verify kernel walked, up to `from`): from `from`
// on (a meeting the rest of which was proved, not walked) the elements
// are the met walk's, whose bitmap is `met`. gds_snappy_decode reads it.
__device__ __forceinline__ void gds_real_elements(GdsVisits& v, const GdsSegment& g, u32 from, const u32* met) {
  const u32 n_words = (g.end - g.start + 31) / 32;
  if (from >= g.end) {
    gds_visits_flush(v, n_words);
    return;
  }
  const u32 rel = from - g.start, w = rel >> 5;
  gds_visits_flush(v, w);
  v.bits[w] = v.word | (met[w] & ~((1u << (rel & 31)) - 1u));
  for (u32 x = w + 1; x < n_words; ++x) v.bits[x] = met[x];
}

// A thread per segment: its real chain checked as the host checks it
// (truncation, then a copy's offset against the bytes produced, then the
// declared size), the first fault recorded; the element that starts each
// 64 KiB piece of the output found, and whether any element crosses a
// piece's end or copies from before its piece. The real chain's own
// elements (from its entry to where it met a speculative walk) are walked;
// the rest is proved from that walk's record where it can be
// (gds_rest_proved: most segments), else walked too. Where `real` is not
// null, the segment's bitmap of the real chain's element starts goes there
// (GDS_SCAN_SEGMENT / 32 words a segment), for gds_snappy_decode.
extern "C" __global__ void __launch_bounds__(GDS_SCAN_BLOCK) gds_snappy_verify(
    const u64* pages, const u32* seg_page, u32 n_segs, const u32* entries, const u64* before, const u32* bitmap,
    const u32* exits, const u32* outputs, const u32* meets, u32* faults, u32* starts, u32* verdicts, u32* real) {
  for (u64 s = gds_global_thread(); s < n_segs; s += gds_thread_stride()) {
    const u32 page = seg_page[s];
    const ScanPage pg = gds_scan_page(pages, page);
    const u8* d = (const u8*)pg.src;
    const u32 len = (u32)pg.len;
    const u64 size = pg.size;
    const u64 k = s - pg.seg_first;
    const GdsSegment g = gds_segment(k, len);
    const u32 seg_end = g.end;
    const u32 meet = meets[2 * s];
    // Walk to the meeting first, then (unless the rest is proved) on.
    u32 stop = meet < seg_end ? meet : seg_end;
    u64 produced = before[s];
    u32 code = GDS_SNAPPY_OK, c_at = 0, c_a = 0, c_b = 0;
    bool whole = false;  // an element crosses a piece's end or copies from before its piece
    u32 p = entries[s];
    GdsWindow win = gds_window(d, len);
    // The real chain's elements this thread walks, for `real`.
    GdsVisits visits = gds_visits(real != nullptr ? real + s * (GDS_SCAN_SEGMENT / 32) : nullptr, g.start);
    bool proved = false;
    for (;;) {
      while (p < stop) {
        if (real != nullptr) gds_visit(visits, p);
        const SnappyHop e = gds_window_hop(win, p);
        if (e.code != GDS_SNAPPY_OK) {
          code = e.code; c_at = e.at;
          break;
        }
        if (e.copy && (e.offset == 0 || (u64)e.offset > produced)) {
          code = GDS_SNAPPY_BAD_OFFSET; c_at = p; c_a = e.offset; c_b = (u32)produced;
          break;
        }
        if (produced + e.length > size) {
          code = GDS_SNAPPY_OVERRUN; c_at = p; c_a = (u32)size;
          break;
        }
        if (pg.n_pieces > 1) {
          const u64 in_piece = produced % GDS_SNAPPY_PIECE;
          if (in_piece == 0) starts[pg.starts_first + produced / GDS_SNAPPY_PIECE] = p;
          if ((e.copy && (u64)e.offset > in_piece) || in_piece + e.length > GDS_SNAPPY_PIECE) whole = true;
        }
        produced += e.length;
        p = e.next;
      }
      if (code != GDS_SNAPPY_OK || stop == seg_end) break;
      // At the meeting (p == meet: chain's walk arrived there).
      stop = seg_end;
      const u32 walk = meets[2 * s + 1];
      if (p == meet && gds_rest_proved(pg, s, walk, gds_walk_index(bitmap, pg, k, walk, g.start, meet), exits,
                                       outputs, produced)) {
        if (pg.n_pieces > 1 && produced % GDS_SNAPPY_PIECE == 0)
          starts[pg.starts_first + produced / GDS_SNAPPY_PIECE] = p;
        GDS_SCAN_PROVED_HOOK();
        proved = true;
        break;
      }
    }
    if (real != nullptr) {
      const u32* met = proved ? bitmap + gds_walk_bitmap(pg, k, meets[2 * s + 1]) : nullptr;
      gds_real_elements(visits, g, proved ? meet : seg_end, met);
    }
    u32* f = faults + 4 * s;
    f[0] = code; f[1] = c_at; f[2] = c_a; f[3] = c_b;
    // Every writer writes 1: no race on the value.
    if (whole) verdicts[(u64)GDS_SCAN_RESULT_WORDS * page + 4] = 1;
  }
}

// Job arrays of the Snappy call (n jobs each) and the pieces' tasks
// (GDS_PIECE_WORDS words per job). With `own_decoder` every job points at
// `dummy` and no piece is written: gds_snappy_decode (snappy_decode.cu)
// decodes the scanned pages in place after nvCOMP's call.
extern "C" __global__ void __launch_bounds__(GDS_SCAN_BLOCK) gds_snappy_finish(
    const u64* pages, u32 n_pages, const u32* faults, const u64* before, const u64* outs, const u32* starts,
    u32* verdicts, u64* src, u64* src_len, u64* dst_len, u64* tasks, u64 dummy, u32 own_decoder) {
  for (u64 i = gds_global_thread(); i < n_pages; i += gds_thread_stride()) {
    const ScanPage pg = gds_scan_page(pages, i);
    u32* r = verdicts + (u64)GDS_SCAN_RESULT_WORDS * i;
    if (r[0] == GDS_SNAPPY_OK) {
      for (u64 k = 0; k < pg.n_segs; ++k) {
        const u32* f = faults + 4 * (pg.seg_first + k);
        if (f[0] != GDS_SNAPPY_OK) {
          r[0] = f[0]; r[1] = f[1]; r[2] = f[2]; r[3] = f[3];
          break;
        }
      }
    }
    if (r[0] == GDS_SNAPPY_OK) {
      const u64 last = pg.seg_first + pg.n_segs - 1;
      const u64 produced = pg.n_segs == 0 ? 0 : before[last] + outs[last];
      if (produced != pg.size) {
        r[0] = GDS_SNAPPY_SHORT; r[1] = 0; r[2] = (u32)produced; r[3] = (u32)pg.size;
      }
    }
    const bool ok = r[0] == GDS_SNAPPY_OK;
    const bool split = ok && pg.n_pieces > 1 && r[4] == 0;
    r[5] = split ? 1u : 0u;
    for (u64 j = 0; j < pg.n_pieces; ++j) {
      const u64 k = pg.job_first + j;
      u64* t = tasks + (u64)GDS_PIECE_WORDS * k;
      t[0] = 0; t[1] = 0; t[2] = 0; t[3] = 0;
      if (!ok || (!split && j > 0) || own_decoder != 0) {
        // (With own_decoder, gds_snappy_decode decodes the page, not
        // nvCOMP: it reads the pieces in place.)
        src[k] = dummy;
        src_len[k] = 1;
      } else if (!split) {
        src[k] = pg.src;
        src_len[k] = pg.len;
        dst_len[k] = pg.size;
      } else {
        const u32 from = starts[pg.starts_first + j];
        const u32 to = j + 1 < pg.n_pieces ? starts[pg.starts_first + j + 1] : (u32)pg.len;
        const u64 out_len = pg.size - j * GDS_SNAPPY_PIECE < GDS_SNAPPY_PIECE ? pg.size - j * GDS_SNAPPY_PIECE
                                                                                : GDS_SNAPPY_PIECE;
        // Pieces' streams side by side: each is at most its elements plus a
        // GDS_PIECE_HEAD-byte varint.
        const u64 slot = pg.region + (from - starts[pg.starts_first]) + GDS_PIECE_HEAD * j;
        src[k] = slot;
        src_len[k] = gds_varint_len(out_len) + (to - from);
        dst_len[k] = out_len;
        t[0] = pg.src + from; t[1] = slot; t[2] = to - from; t[3] = out_len;
      }
    }
  }
}
