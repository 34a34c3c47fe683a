// DELTA_BINARY_PACKED pages (INT32, INT64): the page's values are decoded
// into the task's scratch as PLAIN little-endian values of type_length
// bytes, so the value loop of gds_decode_page reads them as it reads a
// PLAIN page. Included by decode.cu.
//
// Layout (the Parquet specification): a header <block size> <miniblocks
// per block> <value count> <first value, zigzag>, all ULEB128; then
// blocks: <min delta, zigzag ULEB128> <one bit-width byte per miniblock>
// <the miniblocks, bit-packed LSB first, block size / miniblocks values
// each>. Value j is the first value plus the sum of deltas 1..j, wrapping
// in 64 bits (the low 32 bits are the INT32 answer).

#ifndef GDSCAN_DELTA_CUH
#define GDSCAN_DELTA_CUH

#include "common.cuh"

// Most miniblocks of deltas one pass of GDS_TILE values can touch:
// miniblocks hold at least 32 values.
#define GDS_DELTA_SLOTS (GDS_TILE / 32 + 2)

struct DeltaShared {
  u64 mb_min[GDS_DELTA_SLOTS];  // min delta of the miniblock's block
  u32 mb_off[GDS_DELTA_SLOTS];  // byte offset of the miniblock's data in the values section
  u32 mb_width[GDS_DELTA_SLOTS];
  u64 carry;                    // sum of the values before the pass
  u64 first;
  u32 total, per_block, per_mini, minis;
  // The walk: the next miniblock (global index) and where its data starts,
  // its block's bit widths and min delta.
  u64 walk_mini;
  u32 walk_off, walk_widths, walk_block_end_mini;
  u64 walk_min;
  u64 slot_base;  // the global index of the miniblock in slot 0
  u32 error;
  u32 max_width;  // a wider miniblock is an error (64 for values, 32 for length streams)
  u64 warp_sums[GDS_WARPS];
};

// Reads a ULEB128 of at most 10 bytes at p[*at..len); false past the end or
// on an overlong number.
__device__ __forceinline__ bool gds_uleb(const u8* p, u32 len, u32* at, u64* out) {
  u64 v = 0;
  for (u32 shift = 0; shift < 70; shift += 7) {
    if (*at >= len) return false;
    const u8 b = p[(*at)++];
    v |= (u64)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

__device__ __forceinline__ u64 gds_unzigzag(u64 v) { return (v >> 1) ^ (0 - (v & 1)); }

// Thread 0: parses the block header at sh.walk_off (the next miniblock is
// the block's first). 0 or an error code.
__device__ __noinline__ u32 gds_delta_block(const u8* p, u32 len, DeltaShared& sh) {
  u32 at = sh.walk_off;
  u64 min;
  if (!gds_uleb(p, len, &at, &min)) return GDS_ERR_DELTA_HEADER;
  if ((u64)at + sh.minis > (u64)len) return GDS_ERR_DELTA_HEADER;
  sh.walk_min = gds_unzigzag(min);
  sh.walk_widths = at;
  sh.walk_off = at + sh.minis;
  sh.walk_block_end_mini = (u32)(sh.walk_mini + sh.minis);
  return 0;
}

// Thread 0: fills the slots of miniblocks [m_lo, m_hi] (global indices),
// walking forward from the last one found. 0 or an error code.
__device__ __noinline__ u32 gds_delta_walk(const u8* p, u32 len, DeltaShared& sh, u64 m_lo, u64 m_hi) {
  // A miniblock can straddle two passes: the previous pass's last one is
  // this pass's first, already walked; its slot moves to slot 0.
  if (m_lo < sh.walk_mini) {
    const u32 from = (u32)(m_lo - sh.slot_base);
    sh.mb_min[0] = sh.mb_min[from];
    sh.mb_off[0] = sh.mb_off[from];
    sh.mb_width[0] = sh.mb_width[from];
  }
  sh.slot_base = m_lo;
  for (u64 m = sh.walk_mini; m <= m_hi; ++m) {
    if (m == sh.walk_block_end_mini) {
      const u32 e = gds_delta_block(p, len, sh);
      if (e) return e;
    }
    const u32 k = (u32)(m - (sh.walk_block_end_mini - sh.minis));
    const u32 width = p[sh.walk_widths + k];
    if (width > sh.max_width) return GDS_ERR_BIT_WIDTH;
    if (m >= m_lo) {
      const u32 slot = (u32)(m - m_lo);
      sh.mb_min[slot] = sh.walk_min;
      sh.mb_off[slot] = sh.walk_off;
      sh.mb_width[slot] = width;
    }
    // The next miniblock's data: this one's is per_mini * width bits.
    const u64 next = (u64)sh.walk_off + (u64)sh.per_mini * width / 8;
    // Past the section is only an error if a later miniblock is needed.
    sh.walk_off = next > (u64)len ? len + 1u : (u32)next;
    sh.walk_mini = m + 1;
  }
  return 0;
}

// The delta of miniblock slot `slot`, value `k` in it; false when its bits
// pass the section.
__device__ __forceinline__ bool gds_delta_at(const u8* p, u32 len, const DeltaShared& sh, u32 slot, u32 k, u64* out) {
  const u32 width = sh.mb_width[slot];
  u64 v = 0;
  if (width > 0) {
    if (sh.mb_off[slot] > len) return false;
    const u64 bit = (u64)k * width;
    const u64 first = (u64)sh.mb_off[slot] + bit / 8;
    const u32 shift = (u32)(bit & 7);
    const u64 end = (u64)sh.mb_off[slot] + (bit + width + 7) / 8;
    if (end > (u64)len) return false;
    const u32 n = (u32)(end - first);
    u64 lo = 0;
    for (u32 b = 0; b < n && b < 8; ++b) lo |= (u64)p[first + b] << (8 * b);
    v = lo >> shift;
    if (n == 9) v |= (u64)p[first + 8] << (64 - shift);
    if (width < 64) v &= (1ull << width) - 1;
  }
  *out = sh.mb_min[slot] + v;
  return true;
}

// Block-wide: decodes the DELTA_BINARY_PACKED stream p[0, len) (at most
// `max_total` values) into `out` as little-endian values of `width` (4 or
// 8) bytes, at most `out_cap` bytes. A miniblock wider than `max_bits`
// is GDS_ERR_BIT_WIDTH: values pass 64 (INT32 deltas computed in 64 bits,
// as DuckDB writes them, wrap to the same 32-bit sums), length streams 32.
// Returns the number of values and, in
// *end, where the stream ends: after its last needed miniblock, padded to
// full size as the format writes it (arrow-rs's `get_offset`), or after
// the header when it holds one value or none. Sets *err instead
// (block-uniform); an end past `len` is GDS_ERR_DELTA_HEADER.
__device__ __noinline__ u32 gds_delta_run(const u8* p, u32 len, u32 max_total, u32 width, u32 max_bits, u8* out,
                                          u64 out_cap, DeltaShared& sh, u32* err, u32* end) {
  const u32 tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) {
    sh.error = 0;
    u32 at = 0;
    u64 block, minis, total, first;
    if (!gds_uleb(p, len, &at, &block) || !gds_uleb(p, len, &at, &minis) || !gds_uleb(p, len, &at, &total) ||
        !gds_uleb(p, len, &at, &first)) {
      sh.error = GDS_ERR_DELTA_HEADER;
    } else if (block == 0 || block % 128 != 0 || block > (1u << 20) || minis == 0 || block % minis != 0 ||
               (block / minis) % 32 != 0 || total > (u64)max_total) {
      sh.error = GDS_ERR_DELTA_HEADER;
    } else if ((width != 4 && width != 8) || out == 0 || (((u64)out) & (width - 1)) || total * width > out_cap) {
      sh.error = GDS_ERR_SCRATCH;
    } else {
      sh.per_block = (u32)block;
      sh.minis = (u32)minis;
      sh.per_mini = (u32)(block / minis);
      sh.total = (u32)total;
      sh.max_width = max_bits;
      sh.first = gds_unzigzag(first);
      sh.carry = 0;
      sh.walk_mini = 0;
      sh.slot_base = 0;
      sh.walk_off = at;
      sh.walk_block_end_mini = 0;
    }
  }
  __syncthreads();
  const u32 header_error = sh.error;
  const u32 total = sh.total;
  // Every thread has read the header's verdict before thread 0 writes the
  // walk's into the same word.
  __syncthreads();
  if (header_error) {
    *err = header_error;
    return 0;
  }
  // Passes of GDS_TILE values: thread tid holds values c0 + tid*ITEMS .. +ITEMS.
  for (u64 c0 = 0; c0 < total; c0 += GDS_TILE) {
    const u64 c1 = c0 + GDS_TILE < total ? c0 + GDS_TILE : total;
    // Deltas d = j - 1 of values j in [max(c0, 1), c1).
    const u64 d_lo = c0 > 0 ? c0 - 1 : 0;
    const bool any = c1 > 1;
    const u64 m_lo = d_lo / sh.per_mini;
    const u64 m_hi = any ? (c1 - 2) / sh.per_mini : m_lo;
    if (tid == 0 && any) sh.error = gds_delta_walk(p, len, sh, m_lo, m_hi);
    __syncthreads();
    if (sh.error) {
      *err = sh.error;
      return 0;
    }
    u64 x[GDS_ITEMS];
    u64 mine = 0;
    bool bad = false;
#pragma unroll
    for (int k = 0; k < GDS_ITEMS; ++k) {
      const u64 j = c0 + (u64)tid * GDS_ITEMS + k;
      x[k] = 0;
      if (j >= c1) continue;
      if (j == 0) {
        x[k] = sh.first;
      } else {
        const u64 d = j - 1;
        const u64 m = d / sh.per_mini;
        if (!gds_delta_at(p, len, sh, (u32)(m - m_lo), (u32)(d % sh.per_mini), &x[k])) bad = true;
      }
      mine += x[k];
    }
    // Exclusive scan of the threads' sums (wrapping), warp then block.
    u64 incl = mine;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
      const u64 y = __shfl_up_sync(GDS_FULL_MASK, incl, o);
      if (lane >= o) incl += y;
    }
    if (lane == 31) sh.warp_sums[warp] = incl;
    if (__syncthreads_or(bad)) {
      *err = GDS_ERR_VALUES_OVERRUN;
      return 0;
    }
    u64 before = sh.carry;
    for (u32 w = 0; w < warp; ++w) before += sh.warp_sums[w];
    before += incl - mine;
#pragma unroll
    for (int k = 0; k < GDS_ITEMS; ++k) {
      const u64 j = c0 + (u64)tid * GDS_ITEMS + k;
      if (j >= c1) break;
      before += x[k];
      if (width == 4) *(u32*)(out + j * 4) = (u32)before;
      else *(u64*)(out + j * 8) = before;
    }
    __syncthreads();
    if (tid == 0) {
      u64 all = 0;
      for (u32 w = 0; w < GDS_WARPS; ++w) all += sh.warp_sums[w];
      sh.carry += all;
    }
    __syncthreads();
  }
  // The walk stopped after the last needed miniblock (or never left the
  // header): the stream's end.
  const u32 stop = sh.walk_off;
  __syncthreads();
  if (stop > len) {
    *err = GDS_ERR_DELTA_HEADER;
    return 0;
  }
  *end = stop;
  return total;
}

// Block-wide: decodes the values section `s` of task `t` into t.scratch as
// PLAIN values of type_length bytes. Returns the number of values, or sets
// *err (block-uniform).
__device__ __forceinline__ u32 gds_delta_to_plain(const PageTask& t, const Sections& s, DeltaShared& sh, u32* err) {
  u32 end;
  if (t.scratch & 7) {
    *err = GDS_ERR_SCRATCH;
    return 0;
  }
  return gds_delta_run(s.values, s.values_len, t.num_values, t.type_length, 64, (u8*)t.scratch, t.scratch_len, sh, err,
                       &end);
}

#endif  // GDSCAN_DELTA_CUH
