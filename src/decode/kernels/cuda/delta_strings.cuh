// DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY pages: their length
// streams (DELTA_BINARY_PACKED INT32, decoded by delta.cuh's
// gds_delta_run) into the task's scratch, scanned into offsets by the
// block. Included by decode.cu.
//
// DELTA_LENGTH_BYTE_ARRAY: <lengths> <bytes>. The lengths become offsets
// (scratch[i] = value i's start in the bytes, scratch[n] = their end), read
// by gds_decode_page's view branch like a PLAIN page's walk, with no length
// prefix before each value.
//
// DELTA_BYTE_ARRAY: <prefix lengths> <suffix lengths> <suffix bytes>;
// value i is the first prefix[i] bytes of value i - 1, then suffix i. The
// values are materialized a tile of the block's threads at a time, each
// thread resolving its value's prefix back through the tile
// (gds_dba_materialize):
// - FIXED_LEN_BYTE_ARRAY: into the task's scratch as PLAIN values
//   (gds_dba_fixed), read by the fixed-width branch;
// - BYTE_ARRAY: their size is unknown until the lengths are decoded, so
//   gds_dba_sizes (a kernel of its own, decode.cu) decodes them first and
//   reports each page's bytes (PageTask.value_bytes); the host sizes a
//   buffer from them (decode::scan::s5_delta_string_buffers) and gds_decode_page
//   materializes the values into it (gds_dba_prepare).
//
// Scratch layouts, in 4-byte words, n = num_values:
//   DELTA_LENGTH_BYTE_ARRAY      offsets[n + 1]
//   DELTA_BYTE_ARRAY, BYTE_ARRAY prefix[n] suffix_offsets[n + 1]
//                                value_offsets[n + 1] suffix_start
//   DELTA_BYTE_ARRAY, FLBA       values[ceil(n * type_length / 4)] prefix[n]
//                                suffix_offsets[n + 1]
// (launch::scratch_bytes computes the same sizes.)

#ifndef GDSCAN_DELTA_STRINGS_CUH
#define GDSCAN_DELTA_STRINGS_CUH

#include "common.cuh"
#include "delta.cuh"

// Words of the BYTE_ARRAY DELTA_BYTE_ARRAY layout.
__device__ __forceinline__ u64 gds_dba_words(u32 n) { return 3ull * n + 3; }
// Words of the FLBA DELTA_BYTE_ARRAY values, then of the whole layout.
__device__ __forceinline__ u64 gds_dba_fixed_value_words(u32 n, u32 type_length) {
  return ((u64)n * type_length + 3) / 4;
}
__device__ __forceinline__ u64 gds_dba_fixed_words(u32 n, u32 type_length) {
  return gds_dba_fixed_value_words(n, type_length) + 2ull * n + 1;
}

// Block-wide exclusive scan of one u64 per thread (in thread order);
// *all gets the block's total. Every thread must call it.
__device__ __forceinline__ u64 gds_block_scan_u64(u64 mine, DeltaShared& sh, u64* all) {
  const u32 tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  u64 incl = mine;
#pragma unroll
  for (u32 o = 1; o < 32; o <<= 1) {
    const u64 y = __shfl_up_sync(GDS_FULL_MASK, incl, o);
    if (lane >= o) incl += y;
  }
  if (lane == 31) sh.warp_sums[warp] = incl;
  __syncthreads();
  u64 before = incl - mine, total = 0;
  for (u32 w = 0; w < GDS_WARPS; ++w) {
    if (w < warp) before += sh.warp_sums[w];
    total += sh.warp_sums[w];
  }
  // Every thread has read the sums before the next scan writes them.
  __syncthreads();
  *all = total;
  return before;
}

// Block-wide: the n lengths (INT32) at a[0, n) become their exclusive sums,
// a[n] their total. 0, or GDS_ERR_DELTA_LENGTH when a length is negative
// or the total passes `limit` (block-uniform).
__device__ __noinline__ u32 gds_lengths_to_offsets(u32* a, u32 n, u64 limit, DeltaShared& sh) {
  const u32 tid = threadIdx.x;
  u64 carry = 0;  // the same in every thread
  bool bad = false;
  for (u64 c0 = 0; c0 < n; c0 += GDS_TILE) {
    u32 x[GDS_ITEMS];
    u64 mine = 0;
#pragma unroll
    for (int k = 0; k < GDS_ITEMS; ++k) {
      const u64 j = c0 + (u64)tid * GDS_ITEMS + k;
      x[k] = j < n ? a[j] : 0;
      if ((i32)x[k] < 0) {
        bad = true;
        x[k] = 0;
      }
      mine += x[k];
    }
    u64 all;
    u64 before = carry + gds_block_scan_u64(mine, sh, &all);
    // Each thread rewrites only the items it read.
#pragma unroll
    for (int k = 0; k < GDS_ITEMS; ++k) {
      const u64 j = c0 + (u64)tid * GDS_ITEMS + k;
      if (j < n) a[j] = before > 0xffffffffull ? 0xffffffffu : (u32)before;
      before += x[k];
    }
    carry += all;
  }
  if (__syncthreads_or(bad) || carry > limit) return GDS_ERR_DELTA_LENGTH;
  if (tid == 0) a[n] = (u32)carry;
  __syncthreads();
  return 0;
}

// Block-wide: a DELTA_LENGTH_BYTE_ARRAY values section `s` of task `t`:
// the lengths into scratch as offsets. On success the values' bytes are
// s.values[*bytes_at, s.values_len) and there are *count of them; else
// the error (block-uniform).
__device__ __noinline__ u32 gds_dlba_prepare(const PageTask& t, const Sections& s, DeltaShared& sh, u32* bytes_at,
                                             u32* count) {
  if (t.scratch == 0 || (t.scratch & 3) || ((u64)t.num_values + 1) * 4 > (u64)t.scratch_len) return GDS_ERR_SCRATCH;
  u32 err = 0, end = 0;
  u32* const offsets = (u32*)t.scratch;
  const u32 n = gds_delta_run(s.values, s.values_len, t.num_values, 4, 32, (u8*)offsets, (u64)t.num_values * 4, sh, &err,
                              &end);
  if (err) return err;
  err = gds_lengths_to_offsets(offsets, n, s.values_len - end, sh);
  if (err) return err;
  *bytes_at = end;
  *count = n;
  return 0;
}

// Block-wide: the lengths of a DELTA_BYTE_ARRAY values section v[0, vlen)
// of at most max_n values: prefix lengths into P[0, n), suffix offsets
// (from the suffix bytes' start) into SO[0, n], and, with O, the values'
// offsets into O[0, n] (O[n]: their total); without O, every value must
// have `fixed` bytes. Returns n, the suffix bytes' start in *sfx_at; or
// sets *err (block-uniform).
__device__ __noinline__ u32 gds_dba_lengths(const u8* v, u32 vlen, u32 max_n, u32* P, u32* SO, u32* O, u32 fixed,
                                            DeltaShared& sh, u32* err, u32* sfx_at) {
  const u32 tid = threadIdx.x;
  u32 e1 = 0, e2 = 0;
  const u32 np = gds_delta_run(v, vlen, max_n, 4, 32, (u8*)P, (u64)max_n * 4, sh, err, &e1);
  if (*err) return 0;
  const u32 ns = gds_delta_run(v + e1, vlen - e1, max_n, 4, 32, (u8*)SO, (u64)max_n * 4, sh, err, &e2);
  if (*err) return 0;
  if (np != ns) {
    *err = GDS_ERR_DELTA_LENGTH;
    return 0;
  }
  const u32 n = np, sfx = e1 + e2;
  u32 e = gds_lengths_to_offsets(SO, n, vlen - sfx, sh);
  if (e) {
    *err = e;
    return 0;
  }
  // Value lengths: prefix + suffix, the prefix within the previous value.
  u64 carry = 0;
  bool bad_len = false, bad_prefix = false;
  for (u64 c0 = 0; c0 < n; c0 += GDS_TILE) {
    u64 x[GDS_ITEMS];
    u64 mine = 0;
#pragma unroll
    for (int k = 0; k < GDS_ITEMS; ++k) {
      const u64 j = c0 + (u64)tid * GDS_ITEMS + k;
      x[k] = 0;
      if (j >= n) continue;
      const u32 p = P[j];
      const u64 prev = j == 0 ? 0 : (u64)P[j - 1] + SO[j] - SO[j - 1];
      if ((i32)p < 0) {
        bad_len = true;
      } else if (p > prev) {
        bad_prefix = true;
      } else {
        x[k] = (u64)p + SO[j + 1] - SO[j];
        if (O == 0 && x[k] != fixed) bad_len = true;
      }
      mine += x[k];
    }
    if (O != 0) {
      u64 all;
      u64 before = carry + gds_block_scan_u64(mine, sh, &all);
#pragma unroll
      for (int k = 0; k < GDS_ITEMS; ++k) {
        const u64 j = c0 + (u64)tid * GDS_ITEMS + k;
        if (j < n) O[j] = before > 0xffffffffull ? 0xffffffffu : (u32)before;
        before += x[k];
      }
      carry += all;
    }
  }
  const bool any_len = __syncthreads_or(bad_len);
  const bool any_prefix = __syncthreads_or(bad_prefix);
  if (any_len || any_prefix) {
    *err = any_len ? GDS_ERR_DELTA_LENGTH : GDS_ERR_DELTA_PREFIX;
    return 0;
  }
  // Views count their offsets in 31 bits.
  if (O != 0 && carry > GDS_I32_MAX) {
    *err = GDS_ERR_VIEW_OFFSET;
    return 0;
  }
  if (O != 0 && tid == 0) O[n] = (u32)carry;
  __syncthreads();
  *sfx_at = sfx;
  return n;
}

// Block-wide: writes n values, value i at out + (O ? O[i] : i * fixed):
// the first P[i] bytes of value i - 1, then suffix i (sfx + SO[i]). The
// lengths are gds_dba_lengths' (checked: P[0] = 0, P[i] <= length of
// value i - 1). Ends with a barrier.
//
// A tile of GDS_BLOCK values at a time, a thread a value. Byte j < P[i]
// of value i is byte j of value i - 1, so it comes from the suffix of the
// last value k <= i whose prefix does not cover it (P[k] <= j): the
// thread walks back from i through the tile's prefixes, copying each
// value's share of the bytes still unresolved, and takes what remains
// from the value before the tile, written by the tile before (the
// barrier between tiles makes it visible). A walk is at most one tile
// long, whatever the chain of shared prefixes.
__device__ __noinline__ void gds_dba_materialize(const u8* sfx, const u32* P, const u32* SO, const u32* O, u32 fixed,
                                                 u32 n, u8* out) {
  __shared__ u32 tile_prefix[GDS_BLOCK];
  const u32 tid = threadIdx.x;
  for (u32 t0 = 0; t0 < n; t0 += GDS_BLOCK) {
    const u32 i = t0 + tid;
    if (tid < GDS_BLOCK && i < n) tile_prefix[tid] = P[i];
    __syncthreads();
    if (tid < GDS_BLOCK && i < n) {
      const u64 at = O != 0 ? (u64)O[i] : (u64)i * fixed;
      u32 e = tile_prefix[tid];
      const u32 s0 = SO[i], sl = SO[i + 1] - s0;
      for (u32 j = 0; j < sl; ++j) out[at + e + j] = sfx[s0 + j];
      // Bytes [0, e) of value i are unresolved; k walks back from i - 1.
      for (u32 k = i; e > 0;) {
        if (k == t0) {
          // Value t0 - 1 (t0 > 0 here: P[0] = 0 ends every walk of the
          // first tile before it) is whole: the rest is its bytes.
          const u64 from = O != 0 ? (u64)O[k - 1] : (u64)(k - 1) * fixed;
          for (u32 j = 0; j < e; ++j) out[at + j] = out[from + j];
          break;
        }
        --k;
        const u32 p = tile_prefix[k - t0];
        if (p < e) {
          const u32 so = SO[k];
          for (u32 j = p; j < e; ++j) out[at + j] = sfx[so + (j - p)];
          e = p;
        }
      }
    }
    __syncthreads();
  }
}

// Block-wide: a FIXED_LEN_BYTE_ARRAY DELTA_BYTE_ARRAY values section `s`
// of task `t` into scratch as PLAIN values. Returns their count, or sets
// *err (block-uniform).
__device__ __noinline__ u32 gds_dba_fixed(const PageTask& t, const Sections& s, DeltaShared& sh, u32* err) {
  const u32 n = t.num_values, w = t.type_length;
  if (t.scratch == 0 || (t.scratch & 3) || w == 0 || gds_dba_fixed_words(n, w) * 4 > (u64)t.scratch_len) {
    *err = GDS_ERR_SCRATCH;
    return 0;
  }
  u32* const words = (u32*)t.scratch;
  u32* const P = words + gds_dba_fixed_value_words(n, w);
  u32* const SO = P + n;
  u32 sfx = 0;
  const u32 count = gds_dba_lengths(s.values, s.values_len, n, P, SO, 0, w, sh, err, &sfx);
  if (*err) return 0;
  gds_dba_materialize(s.values + sfx, P, SO, 0, w, count, (u8*)t.scratch);
  return count;
}

// Block-wide: the sizes of a BYTE_ARRAY DELTA_BYTE_ARRAY page (task `t`,
// a copy of *task), for gds_dba_sizes: its lengths into scratch,
// task->plain_count its values and task->value_bytes their bytes, or
// task->error.
__device__ __noinline__ void gds_dba_size_one(PageTask* task, const PageTask& t, DeltaShared& sh) {
  Sections s;
  u32 err = gds_sections(t, s);
  const u32 n = t.num_values;
  if (err == 0 && (t.scratch == 0 || (t.scratch & 3) || gds_dba_words(n) * 4 > (u64)t.scratch_len)) {
    err = GDS_ERR_SCRATCH;
  }
  u32 count = 0;
  u32* const P = (u32*)t.scratch;
  if (err == 0) {
    u32 sfx = 0;
    count = gds_dba_lengths(s.values, s.values_len, n, P, P + n, P + 2 * n + 1, 0, sh, &err, &sfx);
    if (err == 0 && threadIdx.x == 0) P[3 * n + 2] = sfx;
  }
  if (threadIdx.x == 0) {
    task->plain_count = err == 0 ? count : 0;
    task->value_bytes = err == 0 ? P[2 * n + 1 + count] : 0;
    if (err != 0 && task->error == 0) {
      task->error = err;
      task->error_index = 0;
    }
  }
}

// Block-wide: a BYTE_ARRAY DELTA_BYTE_ARRAY page of task `t`, sized by
// gds_dba_sizes: its values into the buffer the host gave it (t.dict,
// t.dict_len bytes). On success the values are at *str with offsets
// *offsets (value i: (*offsets)[i] .. [i + 1]) and *count of them.
__device__ __noinline__ u32 gds_dba_prepare(const PageTask& t, const Sections& s, const u8** str, u32* str_len,
                                            const u32** offsets, u32* count) {
  const u32 n = t.num_values, c = t.plain_count;
  if (t.scratch == 0 || (t.scratch & 3) || gds_dba_words(n) * 4 > (u64)t.scratch_len || c > n) return GDS_ERR_SCRATCH;
  const u32* const P = (const u32*)t.scratch;
  const u32* const SO = P + n;
  const u32* const O = P + 2 * n + 1;
  const u32 sfx = P[3 * n + 2];
  // What gds_dba_sizes wrote, against the page and the buffer.
  if (sfx > s.values_len || SO[c] > s.values_len - sfx || O[c] != t.value_bytes) return GDS_ERR_SCRATCH;
  if (O[c] > t.dict_len || (O[c] != 0 && t.dict == 0)) return GDS_ERR_SCRATCH;
  u8* const out = (u8*)t.dict;
  gds_dba_materialize(s.values + sfx, P, SO, O, 0, c, out);
  *str = out;
  *str_len = O[c];
  *offsets = O;
  *count = c;
  return 0;
}

#endif  // GDSCAN_DELTA_STRINGS_CUH
