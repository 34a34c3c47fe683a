// gdscan GPU filter: a batch cut to the rows of a mask (stream compaction).
//
// The host (src/decode/filter/compact.rs) queues, on one stream:
//   1. the kept rows: gds_compact_tile_sums over the mask (width 1: a byte
//      counts 1 when it is not 0), gds_compact_scan_sums (one block: the
//      tiles' exclusive prefix and the total), gds_compact_mask_rows (each
//      tile's kept row numbers, u32, in order);
//   2. per column, with the rows it keeps (`rows`, `k` of them, each a
//      position counted from `first` in the column's buffers):
//      gds_compact_gather (values of any width, 16-byte views included),
//      gds_compact_bits (validity and boolean bitmaps, counting the unset
//      bits: the new null count);
//   3. per list (List, LargeList, Map): gds_compact_list_lengths (each kept
//      row's length, its offsets checked against the child's length), the
//      lengths scanned as the mask is (width 4) into the new offsets
//      (gds_compact_scan_write, 4- or 8-byte offsets), then
//      gds_compact_expand: the child's rows, the kept rows' ranges one
//      after the other; per fixed-size list, gds_compact_fixed_rows.
//
// Scans run over tiles of GDS_COMPACT_TILE items (GDS_COMPACT_ITEMS per
// thread) in 64-bit sums, so any length up to 2^32 - 1 items is exact. Every
// kernel loops over its work with the grid's stride: any grid is correct.
// Nothing is read outside what the host describes: positions past a
// source's end and offsets that are negative, decreasing or past the
// child's length set a bit in `error` (GDS_COMPACT_*) instead.
#include "common.cuh"

#define GDS_COMPACT_BLOCK 256u
// The CPU emulation's test of millions of rows builds with more items a
// thread (fewer tiles); the GPU's value is launch_compact.rs's COMPACT_TILE / 256.
#ifndef GDS_COMPACT_ITEMS
#define GDS_COMPACT_ITEMS 16u
#endif
#define GDS_COMPACT_TILE (GDS_COMPACT_BLOCK * GDS_COMPACT_ITEMS)
#define GDS_COMPACT_WARPS (GDS_COMPACT_BLOCK / 32u)
// Error bits.
#define GDS_COMPACT_BAD_OFFSETS 1u  // a list's offsets: negative, decreasing or past its child
#define GDS_COMPACT_OUT_OF_RANGE 2u // a position past its source's end

// Exclusive prefix of `v` over the block (blockDim.x == GDS_COMPACT_BLOCK,
// every thread calls it); `*total` gets the block's sum.
__device__ __forceinline__ u64 gds_compact_block_scan(u64 v, u64* total) {
  __shared__ u64 warp_sums[GDS_COMPACT_WARPS + 1];
  const u32 lane = threadIdx.x & 31u;
  const u32 warp = threadIdx.x >> 5;
  u64 x = v;
  for (u32 d = 1; d < 32u; d <<= 1) {
    const u64 y = __shfl_up_sync(GDS_FULL_MASK, x, d);
    if (lane >= d) x += y;
  }
  if (lane == 31u) warp_sums[warp] = x;
  __syncthreads();
  if (threadIdx.x == 0) {
    u64 run = 0;
    for (u32 w = 0; w < GDS_COMPACT_WARPS; ++w) {
      const u64 s = warp_sums[w];
      warp_sums[w] = run;
      run += s;
    }
    warp_sums[GDS_COMPACT_WARPS] = run;
  }
  __syncthreads();
  const u64 r = warp_sums[warp] + x - v;
  *total = warp_sums[GDS_COMPACT_WARPS];
  __syncthreads();
  return r;
}

// Item `i` of `values` as a count: width 1, 1 when the byte is not 0;
// width 4, the u32.
__device__ __forceinline__ u64 gds_compact_item(const u8* values, u64 i, u32 width) {
  if (width == 1u) return values[i] != 0 ? 1u : 0u;
  return ((const u32*)values)[i];
}

// The sum of this thread's items of tile `tile` (its GDS_COMPACT_ITEMS
// consecutive items; those past `n` count 0).
__device__ __forceinline__ u64 gds_compact_thread_sum(const u8* values, u64 n, u32 width, u64 tile) {
  const u64 start = tile * GDS_COMPACT_TILE + (u64)threadIdx.x * GDS_COMPACT_ITEMS;
  u64 sum = 0;
  for (u32 j = 0; j < GDS_COMPACT_ITEMS; ++j) {
    const u64 i = start + j;
    if (i < n) sum += gds_compact_item(values, i, width);
  }
  return sum;
}

// sums[t] = the sum of tile t's items (mask bytes: width 1; u32: width 4).
extern "C" __global__ void __launch_bounds__(GDS_COMPACT_BLOCK)
    gds_compact_tile_sums(const u8* values, u64 n, u32 width, u64* sums) {
  const u64 n_tiles = (n + GDS_COMPACT_TILE - 1) / GDS_COMPACT_TILE;
  for (u64 tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
    u64 total;
    gds_compact_block_scan(gds_compact_thread_sum(values, n, width, tile), &total);
    if (threadIdx.x == 0) sums[tile] = total;
  }
}

// One block: sums[0..n_tiles) become their exclusive prefix, total[0] their sum.
extern "C" __global__ void __launch_bounds__(GDS_COMPACT_BLOCK)
    gds_compact_scan_sums(u64* sums, u32 n_tiles, u64* total) {
  if (blockIdx.x != 0) return;
  u64 carry = 0;
  for (u64 base = 0; base < n_tiles; base += GDS_COMPACT_BLOCK) {
    const u64 i = base + threadIdx.x;
    const u64 v = i < n_tiles ? sums[i] : 0;
    u64 chunk;
    const u64 before = gds_compact_block_scan(v, &chunk);
    if (i < n_tiles) sums[i] = carry + before;
    carry += chunk;
  }
  if (threadIdx.x == 0) total[0] = carry;
}

// rows[] = the positions i < n where mask[i] != 0, in order; `sums` is
// gds_compact_scan_sums's prefix of the mask's tiles.
extern "C" __global__ void __launch_bounds__(GDS_COMPACT_BLOCK)
    gds_compact_mask_rows(const u8* mask, u64 n, const u64* sums, u32* rows) {
  const u64 n_tiles = (n + GDS_COMPACT_TILE - 1) / GDS_COMPACT_TILE;
  for (u64 tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
    u64 total;
    u64 at = sums[tile] + gds_compact_block_scan(gds_compact_thread_sum(mask, n, 1u, tile), &total);
    const u64 start = tile * GDS_COMPACT_TILE + (u64)threadIdx.x * GDS_COMPACT_ITEMS;
    for (u32 j = 0; j < GDS_COMPACT_ITEMS; ++j) {
      const u64 i = start + j;
      if (i < n && mask[i] != 0) rows[at++] = (u32)i;
    }
  }
}

// out[i] = the exclusive prefix of the u32 values[0..i), out[n] = their sum,
// as u32 (width 4) or u64 (width 8): list offsets from lengths. `sums` is
// gds_compact_scan_sums's prefix of the values' tiles (from
// gds_compact_tile_sums with width 4); the host checked the sum fits.
extern "C" __global__ void __launch_bounds__(GDS_COMPACT_BLOCK)
    gds_compact_scan_write(const u32* values, u64 n, const u64* sums, u32 width, u8* out) {
  const u64 n_tiles = (n + GDS_COMPACT_TILE - 1) / GDS_COMPACT_TILE;
  for (u64 tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
    u64 total;
    const u8* bytes = (const u8*)values;
    u64 at = sums[tile] + gds_compact_block_scan(gds_compact_thread_sum(bytes, n, 4u, tile), &total);
    const u64 start = tile * GDS_COMPACT_TILE + (u64)threadIdx.x * GDS_COMPACT_ITEMS;
    for (u32 j = 0; j <= GDS_COMPACT_ITEMS; ++j) {
      const u64 i = start + j;
      // Item n (the sum) is written by the thread whose items end there.
      if (i > n || (j == GDS_COMPACT_ITEMS && i != n)) break;
      if (width == 8u) {
        ((u64*)out)[i] = at;
      } else {
        ((u32*)out)[i] = (u32)at;
      }
      if (i < n) at += values[i];
    }
  }
}

// Offset `i` of a list's offsets (4 or 8 bytes each), signed.
__device__ __forceinline__ i64 gds_compact_offset(const u8* offsets, u32 width, u64 i) {
  if (width == 8u) return ((const i64*)offsets)[i];
  return ((const i32*)offsets)[i];
}

// lengths[i] = the length of the list at position first + rows[i] (its
// offsets there and after); a row whose offsets are negative, decreasing or
// past `child_len` sets GDS_COMPACT_BAD_OFFSETS and counts 0, one whose
// offsets are not inside the `offsets_count` given GDS_COMPACT_OUT_OF_RANGE.
// The host made sure child_len < 2^32.
extern "C" __global__ void __launch_bounds__(GDS_COMPACT_BLOCK)
    gds_compact_list_lengths(const u8* offsets, u32 width, u64 offsets_count, u64 first, const u32* rows, u32 k,
                             u64 child_len, u32* lengths, u32* error) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < k; i += stride) {
    const u64 p = first + rows[i];
    lengths[i] = 0;
    if (p + 1 >= offsets_count) {
      atomicOr(error, GDS_COMPACT_OUT_OF_RANGE);
      continue;
    }
    const i64 s = gds_compact_offset(offsets, width, p);
    const i64 e = gds_compact_offset(offsets, width, p + 1);
    u32 len = 0;
    if (s < 0 || e < s || (u64)e > child_len) {
      atomicOr(error, GDS_COMPACT_BAD_OFFSETS);
    } else {
      len = (u32)(e - s);
    }
    lengths[i] = len;
  }
}

// child_rows[j] for j < total: the child's position of the j-th value of the
// kept lists, one list after the other: the list i with new_offsets[i] <= j
// < new_offsets[i + 1] (a binary search over the k + 1 new offsets), at its
// old start (offsets at first + rows[i]) plus j - new_offsets[i]. Runs after
// gds_compact_list_lengths found no bad offsets.
extern "C" __global__ void __launch_bounds__(GDS_COMPACT_BLOCK)
    gds_compact_expand(const u8* new_offsets, u32 width, u32 k, const u8* offsets, u64 first, const u32* rows,
                       u64 total, u32* child_rows) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < total; j += stride) {
    // The last i in [0, k) with new_offsets[i] <= j (new_offsets[0] is 0).
    u64 lo = 0, hi = k;
    while (hi - lo > 1) {
      const u64 mid = lo + (hi - lo) / 2;
      if ((u64)gds_compact_offset(new_offsets, width, mid) <= j) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    const u64 from = (u64)gds_compact_offset(new_offsets, width, lo);
    const i64 start = gds_compact_offset(offsets, width, first + rows[lo]);
    child_rows[j] = (u32)((u64)start + (j - from));
  }
}

// child_rows[j] for j < k * size: the child positions of the kept fixed-size
// lists, (first + rows[j / size]) * size + j % size. The host checked they
// fit in u32.
extern "C" __global__ void __launch_bounds__(GDS_COMPACT_BLOCK)
    gds_compact_fixed_rows(const u32* rows, u32 k, u64 first, u32 size, u32* child_rows) {
  const u64 total = (u64)k * size;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < total; j += stride) {
    child_rows[j] = (u32)((first + rows[j / size]) * size + j % size);
  }
}

// dst's item i = src's item first + rows[i], `width` bytes each, for i < k;
// a position at or past `src_count` sets GDS_COMPACT_OUT_OF_RANGE and
// writes zeros. Copies in the widest words the width and both addresses
// allow.
extern "C" __global__ void __launch_bounds__(GDS_COMPACT_BLOCK)
    gds_compact_gather(const u8* src, u64 first, u64 src_count, u32 width, const u32* rows, u32 k, u8* dst,
                       u32* error) {
  const u64 aligned = (u64)src | (u64)dst | width;
  const u32 word = (aligned & 15u) == 0 ? 16u : (aligned & 7u) == 0 ? 8u : (aligned & 3u) == 0 ? 4u : 1u;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < k; i += stride) {
    const u64 p = first + rows[i];
    u8* to = dst + i * width;
    if (p >= src_count) {
      atomicOr(error, GDS_COMPACT_OUT_OF_RANGE);
      for (u32 b = 0; b < width; ++b) to[b] = 0;
      continue;
    }
    const u8* from = src + p * width;
    if (word == 16u) {
      for (u32 b = 0; b < width; b += 16u) *(uint4*)(to + b) = *(const uint4*)(from + b);
    } else if (word == 8u) {
      for (u32 b = 0; b < width; b += 8u) *(u64*)(to + b) = *(const u64*)(from + b);
    } else if (word == 4u) {
      for (u32 b = 0; b < width; b += 4u) *(u32*)(to + b) = *(const u32*)(from + b);
    } else {
      for (u32 b = 0; b < width; ++b) to[b] = from[b];
    }
  }
}

// dst's bit i = src's bit first + rows[i], for i < k, written a 32-bit word
// at a time (dst: (k + 31) / 32 words, 4-byte aligned; the bits past k are
// 0); `unset` (when not null) gets the number of 0 bits among the k (the new
// null count of a validity bitmap). A position at or past `src_bits` sets
// GDS_COMPACT_OUT_OF_RANGE and reads as 0.
extern "C" __global__ void __launch_bounds__(GDS_COMPACT_BLOCK)
    gds_compact_bits(const u8* src, u64 first, u64 src_bits, const u32* rows, u32 k, u32* dst, u32* unset,
                     u32* error) {
  const u64 n_words = ((u64)k + 31u) / 32u;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  // Every thread of a block takes the same number of turns (the block scan
  // inside needs them all).
  for (u64 base = (u64)blockIdx.x * blockDim.x; base < n_words; base += stride) {
    const u64 w = base + threadIdx.x;
    u32 zeros = 0;
    if (w < n_words) {
      u32 word = 0;
      u32 bad = 0;
      for (u32 b = 0; b < 32u; ++b) {
        const u64 i = w * 32u + b;
        if (i >= k) break;
        const u64 p = first + rows[i];
        u32 bit = 0;
        if (p < src_bits) {
          bit = (src[p >> 3] >> (p & 7u)) & 1u;
        } else {
          bad = 1;
        }
        word |= bit << b;
        zeros += 1u - bit;
      }
      if (bad) atomicOr(error, GDS_COMPACT_OUT_OF_RANGE);
      dst[w] = word;
    }
    if (unset != 0) {
      u64 block_zeros;
      gds_compact_block_scan(zeros, &block_zeros);
      if (threadIdx.x == 0 && block_zeros != 0) atomicAdd(unset, (u32)block_zeros);
    }
  }
}
