// gdscan GPU decoder: Snappy pages decompressed from what the scan found
// (GDSCAN_SNAPPY_DECODER=gdscan; nvCOMP's call is the default).
//
// The scan (snappy_scan.cu) walks every element of every Snappy page to
// prove the page sound, and nvCOMP then parses every element again, one
// small block per job walking its job's elements one after the other.
// Here the scan's verify kernel also writes, per segment, a bitmap of the
// real chain's element starts (`real`), so the elements are known before
// decoding begins: a warp per job (a 64 KiB piece of a split page, or a
// whole page) takes 32 elements at a time, one a lane, found by counting
// bits, not by following the chain:
//
// 1. each lane reads its element's tag (where its bytes start, what it
//    makes) and a warp scan gives every element's place in the output;
// 2. literal runs are written, every lane its own at once (long runs by
//    the whole warp, four bytes a lane);
// 3. copies are written in rounds: a copy whose source lies wholly before
//    the first copy still unwritten can go now (every byte before that
//    copy's place is written), and the first unwritten copy always can
//    (its source lies before its place; a copy that overlaps its own
//    output, a run of a repeated pattern, is written byte by byte in
//    order). Copies in text reach back past the 32 elements' output, so
//    most batches take one or two rounds.
//
// A batch whose output fits the warp's ring (GDS_UNSNAP_RING bytes of
// shared memory) is written there, four bytes at a time wherever its
// elements allow, and then to the output by the whole warp, a word a lane;
// a larger one (long literal runs) goes to the output directly.
//
// Only pages the scan found sound are decoded (a job of another page
// writes nothing); still every element is checked again as it is used (it
// starts where the element before it ends, the first at the job's first
// byte and the last ending at its last, so the bitmap can only name the
// chain itself; its bytes inside the job's range of the stream, its output
// inside the job's, a copy's source inside the job's output), and a job
// that fails any of it stops with nvcompErrorCannotDecompress, so that no
// stream, whatever the scan missed, writes outside its output or reads
// outside its page.
#include "common.cuh"

// nvCOMP's status for a stream it cannot decompress (the host reads both
// decoders' statuses the same way).
#define GDS_UNSNAP_CANNOT_DECOMPRESS 12u
// Literal runs at least this long are written by the whole warp.
#define GDS_UNSNAP_LONG_RUN 64u
// Blocks an SM the decoder is compiled for: 72 registers a thread. Left
// to itself ptxas held it to 64 and spilled 44 bytes a thread (the long
// runs' copy loop), read back on every batch; with 7 it spills nothing
// (the NVRTC spill test checks).
#define GDS_UNSNAP_MIN_BLOCKS 7

// The position of the n-th set bit (from 0) of x, which has more than n.
__device__ __forceinline__ u32 gds_nth_set_bit(u32 x, u32 n) {
  u32 pos = 0;
#pragma unroll
  for (u32 half = 16; half > 0; half >>= 1) {
    const u32 low = __popc(x & ((1u << half) - 1u));
    if (n >= low) {
      n -= low;
      x >>= half;
      pos += half;
    }
  }
  return pos;
}

// Copies n bytes from `from` to `to` eight at a time, each eight's loads
// before its stores, so that eight bytes cost one load's latency rather
// than eight (a byte loop's loads wait on its stores: the compiler cannot
// tell that they do not overlap). The source must not reach the eight
// bytes being written: disjoint buffers, or a copy's offset of 8 or more.
__device__ __forceinline__ void gds_copy_by_eights(u8* to, const u8* from, u32 n) {
  for (u32 i = 0; i < n; i += 8) {
    const u32 left = n - i;
    u64 b = 0;  // the eight bytes, the first in the low byte
#pragma unroll
    for (u32 t = 0; t < 8; ++t) b |= (u64)(t < left ? from[i + t] : 0) << (8 * t);
#pragma unroll
    for (u32 t = 0; t < 8; ++t) {
      if (t < left) to[i + t] = (u8)(b >> (8 * t));
    }
  }
}

// Bytes of each warp's ring of its job's latest output, in shared memory
// (a power of two). A batch whose output fits is written into the ring,
// four bytes at a time wherever its elements allow, its copies reading
// their sources there, and then to the output by the whole warp, a word a
// lane; a larger batch (long literal runs) goes to the output directly.
// Why: written straight to the output a byte at a time, a copy waits on a
// load of bytes stored a round before, and each byte load and store uses a
// 32-byte sector for one byte. Most copies reach back less than 4 KiB
// (82 % in the first row group of SF 0.2 lineitem).
#define GDS_UNSNAP_RING 4096u
#define GDS_UNSNAP_RING_BYTE_MASK (GDS_UNSNAP_RING - 1u)
#define GDS_UNSNAP_RING_WORD_MASK (GDS_UNSNAP_RING / 4u - 1u)

// The 4 bytes at p, of any alignment, all inside [lo, hi): unaligned, the
// two aligned words around them and a funnel shift when both lie inside
// [lo, hi); else gds_ld_u32 (an aligned load, or four byte loads), so no
// read leaves [lo, hi).
__device__ __forceinline__ u32 gds_load4(const u8* p, const u8* lo, const u8* hi) {
  const u64 a = (u64)p & ~3ull;
  const u32 shift = 8u * (u32)((u64)p & 3ull);
  if (shift != 0 && a >= (u64)lo && a + 8 <= (u64)hi) {
    const u32* const w = (const u32*)a;
    return __funnelshift_r(w[0], w[1], shift);
  }
  return gds_ld_u32(p);
}

// The 4 ring bytes of output positions q to q + 3 (any alignment): the
// two ring words around them and a funnel shift.
__device__ __forceinline__ u32 gds_ring_load4(const u32* ring, u32 q) {
  const u32 w = q >> 2;
  return __funnelshift_r(ring[w & GDS_UNSNAP_RING_WORD_MASK], ring[(w + 1) & GDS_UNSNAP_RING_WORD_MASK], 8u * (q & 3u));
}

// One lane writes n bytes into the ring at output positions q, q + 1, ...:
// byte by byte (`byte(i)`: the i-th) up to a word's start, then whole
// words (`word(i)`: bytes i to i + 3), then the rest byte by byte. Byte
// stores leave the bytes around them alone, so lanes writing neighbouring
// elements at once do not disturb each other. In order: `word(i)` may read
// what this call wrote before byte i (a copy's offset of 4 or more).
template <typename Word, typename Byte>
__device__ __forceinline__ void gds_ring_write(u32* ring, u32 q, u32 n, Word word, Byte byte) {
  u8* const bytes = (u8*)ring;
  const u32 to_word = (4u - (q & 3u)) & 3u;
  const u32 head = to_word < n ? to_word : n;
  u32 i = 0;
  for (; i < head; ++i) bytes[(q + i) & GDS_UNSNAP_RING_BYTE_MASK] = byte(i);
  for (; i + 4 <= n; i += 4) ring[((q + i) >> 2) & GDS_UNSNAP_RING_WORD_MASK] = word(i);
  for (; i < n; ++i) bytes[(q + i) & GDS_UNSNAP_RING_BYTE_MASK] = byte(i);
}

// The warp writes each lane's long literal run (where `is_long`: `run_at`
// in the stream, `length` bytes to output position `place`) in turn, all
// lanes calling `write(run_at, place, length)` with that run's values.
template <typename Write>
__device__ __forceinline__ void gds_each_long_run(bool is_long, u32 run_at, u32 place, u32 length, Write write) {
  u32 long_runs = __ballot_sync(GDS_FULL_WARP, is_long);
  while (long_runs != 0) {
    const u32 l = __ffs(long_runs) - 1;
    long_runs &= long_runs - 1;
    write(__shfl_sync(GDS_FULL_WARP, run_at, l), __shfl_sync(GDS_FULL_WARP, place, l),
          __shfl_sync(GDS_FULL_WARP, length, l));
  }
  __syncwarp();
}

// The batch's copies (where `is_copy`: `length` bytes to output position
// `place` from `offset` back) in rounds: in each, every copy whose source
// ends before the first unwritten copy's place, and that one, call
// `write()`; the warp waits for the round before the next.
template <typename Write>
__device__ __forceinline__ void gds_copy_rounds(bool is_copy, u32 place, u32 offset, u32 length, Write write) {
  const u32 lane = threadIdx.x & 31;
  u32 pending = __ballot_sync(GDS_FULL_WARP, is_copy);
  while (pending != 0) {
    const u32 first = __ffs(pending) - 1;
    const u32 written = __shfl_sync(GDS_FULL_WARP, place, first);
    const bool ready = ((pending >> lane) & 1u) != 0 && (lane == first || place - offset + length <= written);
    if (ready) write();
    __syncwarp();
    pending &= ~__ballot_sync(GDS_FULL_WARP, ready);
  }
}

// The page (of `n_pages` in `pages`, in job order) that job k belongs to.
__device__ __forceinline__ u32 gds_job_page(const u64* pages, u32 n_pages, u64 k) {
  u32 lo = 0, hi = n_pages;
  while (hi - lo > 1) {
    const u32 mid = (lo + hi) >> 1;
    if (pages[(u64)GDS_SCAN_PAGE_WORDS * mid + 6] <= k) lo = mid; else hi = mid;
  }
  return lo;
}

// One job: stream bytes [from, to) of page `pg` (their element starts
// marked in `real`), whose output is `out_len` bytes at `out`. Every lane
// returns the output bytes written, or GDS_NO_POS when an element broke a
// rule the scan had proved.
__device__ __forceinline__ u32 gds_unsnap_range(const ScanPage& pg, const u32* real, u32 from, u32 to, u8* out,
                                                u32 out_len, u32* ring) {
  const u32 lane = threadIdx.x & 31;
  const u8* const src = (const u8*)pg.src;
  const u8* const src_end = src + pg.len;
  u8* const ring_bytes = (u8*)ring;
  u32 produced = 0;
  // The ring holds output positions [ring_from, produced): none at first,
  // none after a batch written to the output directly.
  u32 ring_from = 0;
  u32 expect = from;  // where the next element must start: the chain from `from`
  for (u32 c = from & ~1023u; c < to; c += 1024) {
    // Lane l's 32 bytes of the stream: its bitmap word, only the
    // elements that start in [from, to).
    const u32 at = c + 32 * lane;
    u32 bits = 0;
    if (at < to && at + 32 > from) {
      const u64 seg = pg.seg_first + at / GDS_SCAN_SEGMENT;
      bits = real[seg * (GDS_SCAN_SEGMENT / 32) + (at % GDS_SCAN_SEGMENT) / 32];
      if (from > at) bits &= ~0u << (from - at);
      if (to < at + 32) bits &= (1u << (to - at)) - 1u;
    }
    const u32 upto = gds_warp_inclusive_sum((u32)__popc(bits), lane);  // elements in lanes 0..lane
    const u32 total = __shfl_sync(GDS_FULL_WARP, upto, 31);
    for (u32 b = 0; b < total; b += 32) {
      // 1. Element b + lane: the lane whose word holds it, then its bit.
      const u32 e = b + lane;
      const bool has = e < total;
      u32 owner = 0;
#pragma unroll
      for (u32 step = 16; step > 0; step >>= 1) {
        const u32 v = __shfl_sync(GDS_FULL_WARP, upto, owner + step - 1);
        if (v <= e) owner += step;
      }
      const u32 owner_bits = __shfl_sync(GDS_FULL_WARP, bits, owner);
      const u32 owner_before = __shfl_sync(GDS_FULL_WARP, upto - __popc(bits), owner);
      SnappyHop h;
      h.next = 0; h.length = 0; h.offset = 0; h.copy = 0; h.code = GDS_SNAPPY_OK; h.at = 0;
      u32 p = 0;
      if (has) {
        p = c + 32 * owner + gds_nth_set_bit(owner_bits, e - owner_before);
        // A window of its own: a lane's elements are 32 apart, so a
        // window kept from one batch to the next would rarely hold the
        // next one, and its registers would be held through the copies.
        GdsWindow win = gds_window(src, (u32)pg.len);
        h = gds_window_hop(win, p);
      }
      const u32 length = has ? h.length : 0;
      const u32 end = gds_warp_inclusive_sum(length, lane);  // output bytes of elements b .. e
      const u32 batch = __shfl_sync(GDS_FULL_WARP, end, 31);
      const u32 place = produced + end - length;  // the element's first output byte
      // The rules the scan proved, again: each element starts where the
      // one before it ends (so the marked elements are the chain from
      // `from`, whatever the bitmap holds), inside the range, inside the
      // output, a copy's source inside the job's output.
      const u32 chain_at = __shfl_up_sync(GDS_FULL_WARP, h.next, 1);
      const bool broken = has && (p != (lane == 0 ? expect : chain_at) || h.code != GDS_SNAPPY_OK || h.next > to ||
                                  length > out_len - place || place > out_len ||
                                  (h.copy && (h.offset == 0 || h.offset > place)));
      if (__ballot_sync(GDS_FULL_WARP, broken) != 0 || batch > out_len - produced) return GDS_NO_POS;
      expect = __shfl_sync(GDS_FULL_WARP, h.next, total - b < 32 ? total - b - 1 : 31);
      const bool literal = has && !h.copy;
      const u32 run_at = h.next - length;  // a literal's bytes in the stream
      if (batch > GDS_UNSNAP_RING) {
        // 2. Literal runs: short ones a lane each, then long ones by the warp.
        if (literal && length < GDS_UNSNAP_LONG_RUN) gds_copy_by_eights(out + place, src + run_at, length);
        gds_each_long_run(literal && length >= GDS_UNSNAP_LONG_RUN, run_at, place, length,
                          [&](u32 r_at, u32 r_place, u32 r_len) {
                            gds_strided_copy(out + r_place, src + r_at, r_len, lane, 32);
                          });
        // 3. Copies, in rounds from the first unwritten one.
        gds_copy_rounds(has && h.copy, place, h.offset, length, [&] {
          u8* const to_at = out + place;
          const u8* const from_at = to_at - h.offset;
          if (h.offset >= 8) {
            gds_copy_by_eights(to_at, from_at, length);
          } else {
            // A repeated pattern shorter than eight bytes: each byte may
            // be one this copy wrote.
            for (u32 i = 0; i < length; ++i) to_at[i] = from_at[i];
          }
        });
        ring_from = produced + batch;
      } else {
        // The ring: positions from ring_lo on are in it, or will be once
        // written (this batch's own, at most GDS_UNSNAP_RING of them, share
        // no ring byte with each other nor with those read), and every
        // position before `produced` is in the output.
        const u32 keep = produced + batch > GDS_UNSNAP_RING ? produced + batch - GDS_UNSNAP_RING : 0;
        const u32 ring_lo = ring_from > keep ? ring_from : keep;
        // 2. Literal runs into the ring: short ones a lane each, long
        // ones by the warp.
        if (literal && length < GDS_UNSNAP_LONG_RUN) {
          const u8* const bytes = src + run_at;
          gds_ring_write(
              ring, place, length, [&](u32 i) { return gds_load4(bytes + i, src, src_end); },
              [&](u32 i) { return bytes[i]; });
        }
        gds_each_long_run(literal && length >= GDS_UNSNAP_LONG_RUN, run_at, place, length,
                          [&](u32 r_at, u32 r_place, u32 r_len) {
                            for (u32 i = lane; i < r_len; i += 32) {
                              ring_bytes[(r_place + i) & GDS_UNSNAP_RING_BYTE_MASK] = src[r_at + i];
                            }
                          });
        // 3. Copies into the ring, in rounds from the first unwritten one.
        gds_copy_rounds(has && h.copy, place, h.offset, length, [&] {
          const u32 source = place - h.offset;
          if (h.offset >= 4 && source >= ring_lo) {
            gds_ring_write(
                ring, place, length, [&](u32 i) { return gds_ring_load4(ring, source + i); },
                [&](u32 i) { return ring_bytes[(source + i) & GDS_UNSNAP_RING_BYTE_MASK]; });
          } else if (h.offset >= 4 && source + length <= produced) {
            gds_ring_write(
                ring, place, length, [&](u32 i) { return gds_load4(out + source + i, out, out + out_len); },
                [&](u32 i) { return out[source + i]; });
          } else {
            // A pattern shorter than four bytes repeated (each byte may
            // be one this copy wrote), or a source from before the ring
            // running into it: byte by byte, each from where it is.
            for (u32 i = 0; i < length; ++i) {
              const u32 at = source + i;
              ring_bytes[(place + i) & GDS_UNSNAP_RING_BYTE_MASK] =
                  at >= ring_lo ? ring_bytes[at & GDS_UNSNAP_RING_BYTE_MASK] : out[at];
            }
          }
        });
        // 4. The batch from the ring to the output: a word a lane where
        // the output's words lie whole inside the batch, its ends (and all
        // of it where the output is not word-aligned) a byte a lane.
        const u32 batch_end = produced + batch;
        const u32 up = (produced + 3u) & ~3u;
        const u32 first_word = ((u64)out & 3ull) == 0 && up < batch_end ? up : batch_end;
        const u32 down = batch_end & ~3u;
        const u32 last_word = down > first_word ? down : first_word;
        for (u32 w = first_word / 4 + lane; w < last_word / 4; w += 32) {
          ((u32*)out)[w] = ring[w & GDS_UNSNAP_RING_WORD_MASK];
        }
        for (u32 q = produced + lane; q < first_word; q += 32) out[q] = ring_bytes[q & GDS_UNSNAP_RING_BYTE_MASK];
        for (u32 q = last_word + lane; q < batch_end; q += 32) out[q] = ring_bytes[q & GDS_UNSNAP_RING_BYTE_MASK];
        __syncwarp();
        ring_from = ring_lo;
      }
      produced += batch;
    }
  }
  // The chain must end where the range does (no element left unmarked).
  return expect == to ? produced : GDS_NO_POS;
}

// A warp per job of the scanned Snappy pages (`n_pages` pages in `pages`,
// their jobs numbered from the first page's job_first, `n_jobs` of them):
// a split page's job j is its piece j (from the piece's first element, in
// `starts`, to the next piece's), a page that was not split is its first
// job whole (from the real chain's entry into its first segment, in
// `entries`), its other jobs empty; a page the scan refused is not
// decoded. Writes each job's output bytes to `actual` and its status
// (0, or GDS_UNSNAP_CANNOT_DECOMPRESS) to `statuses`, at the job's number,
// as nvCOMP does; `dst` holds each job's output address.
extern "C" __global__ void __launch_bounds__(GDS_UNSNAP_BLOCK, GDS_UNSNAP_MIN_BLOCKS) gds_snappy_decode(
    const u64* pages, u32 n_pages, u32 n_jobs, const u32* entries, const u32* starts, const u32* verdicts,
    const u32* real, const u64* dst, u64* actual, u32* statuses) {
  if (n_pages == 0) return;
  __shared__ u32 rings[GDS_UNSNAP_BLOCK / 32][GDS_UNSNAP_RING / 4];
  u32* const ring = rings[threadIdx.x / 32];
  const u32 lane = threadIdx.x & 31;
  const u64 first_job = pages[6];
  const u64 warps = (u64)gridDim.x * (blockDim.x / 32);
  for (u64 w = (u64)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; w < n_jobs; w += warps) {
    const u64 k = first_job + w;
    const u32 i = gds_job_page(pages, n_pages, k);
    const ScanPage pg = gds_scan_page(pages, i);
    const u32* r = verdicts + (u64)GDS_SCAN_RESULT_WORDS * i;
    const u64 j = k - pg.job_first;
    const bool split = r[5] == 1u;
    u32 written = 0;
    if (r[0] == GDS_SNAPPY_OK && (split || j == 0)) {
      u32 from, to, out_len;
      if (split) {
        from = starts[pg.starts_first + j];
        to = j + 1 < pg.n_pieces ? starts[pg.starts_first + j + 1] : (u32)pg.len;
        const u64 left = pg.size - j * GDS_SNAPPY_PIECE;
        out_len = (u32)(left < GDS_SNAPPY_PIECE ? left : GDS_SNAPPY_PIECE);
      } else {
        from = pg.n_segs == 0 ? (u32)pg.len : entries[pg.seg_first];
        to = (u32)pg.len;
        out_len = (u32)pg.size;
      }
      written = from <= to ? gds_unsnap_range(pg, real, from, to, (u8*)dst[k], out_len, ring) : GDS_NO_POS;
    }
    if (lane == 0) {
      actual[k] = written == GDS_NO_POS ? 0 : written;
      statuses[k] = written == GDS_NO_POS ? GDS_UNSNAP_CANNOT_DECOMPRESS : 0u;
    }
  }
}
