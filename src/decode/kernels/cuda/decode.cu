// gdscan GPU decoder: the page kernel.
//
// gds_decode_pages: one thread block of GDS_BLOCK threads per data page (a
// grid-stride loop over the tasks, so any grid size works). Every kind of
// page (fixed width, boolean, byte array, levels only) is one branch of the
// same kernel, uniform per block, so one launch decodes a whole row group's
// pages whatever their columns.
//
// A page is walked in tiles of GDS_TILE levels. Per tile:
//   1. one warp reads the definition-level run headers covering the tile
//      into a shared table (gds_runs_fill); every thread expands its
//      GDS_ITEMS levels from it
//      (item k of thread t is level lo + k * GDS_BLOCK + t, so a warp holds 32
//      consecutive levels);
//   2. warp ballots give the validity bits (one or two atomicOr per warp and
//      item into the column's bitmap) and per-warp counts, which warp 0 scans
//      when the tile has a null: each defined level learns its value index
//      (the row map; in a tile without nulls it is the level's own place);
//   3. for dictionary and RLE values, the run headers covering the tile's
//      value indices: read in step 1 already (by warp 2, beside the levels'
//      readers) for as many values as the tile has levels, which is the
//      count whenever the tile has no null; a tile with nulls reads them
//      again, from where that read began, for its defined levels only;
//   4. every thread converts and writes its values to their rows: consecutive
//      lanes write consecutive rows (coalesced). Copies of 4, 8 or 16 bytes
//      (gds_copy_items) find all of a thread's items first and then load
//      them together.
// A nested leaf's page (level outputs out_rep/out_def) also gets each
// entry's definition level as a byte in step 1 and, decoded beside them
// (their own run table, filled by warp 1 while warp 0 fills the
// definition levels'), its repetition level: the nesting kernels (nest.cu)
// read those bytes.
// Errors never stop a thread mid-tile (it skips the faulty item); the block
// leaves the page after the tile in which any thread failed.
#include "common.cuh"
#include "delta.cuh"
#include "delta_strings.cuh"

// Where a page's values lie, as the block's prologue found them: kept in
// shared memory, not in each thread's registers, through the tile loop
// (held in registers with the rest of the loop's state, they did not fit
// the 64 a thread has: ptxas spilled them to local memory).
struct PageValues {
  const u8* values;       // PLAIN / BYTE_STREAM_SPLIT / bit-packed booleans
  const u8* str;          // byte arrays: value i at str + str_offsets[i] + str_prefix
  const u32* str_offsets;
  u32 skip;               // the rows written: the page's levels [skip, end)
  u32 end;
  u32 values_len;
  u32 split_n;            // BYTE_STREAM_SPLIT values
  u32 str_len;
  u32 str_count;
  u32 str_prefix;
};

struct DecodeShared {
  PageTask task;       // the block's copy of its task (keeps it out of registers)
  RunTable def_runs;   // definition-level run headers of the current tile
  RunTable rep_runs;   // a nested leaf's repetition-level run headers of the tile
  RunTable value_runs; // dictionary-index or RLE-boolean run headers of the tile's values
  RunCursor levels;
  RunCursor values;
  RunCursor values_before;  // `values` before the tile's fill (a refill starts there)
  RunCursor rep;
  u32 ballots[32];     // [item k][warp]: which of the warp's 32 levels are defined
  u32 counts[32];      // [item k][warp]: defined levels before them in the tile
  u32 tile_total;
  u32 win_lo;          // values before the row window's first row
  u32 win_hi;          // values before the row window's end
  u32 error;
  u32 error_index;
  PageValues pv;       // where the values lie (set once per page)
  DeltaShared delta;  // DELTA_BINARY_PACKED pages' walk and scan
};

// Checks the task's modes and sizes (block-uniform). 0 when it can be decoded.
__device__ __noinline__ u32 gds_check_task(const PageTask& t) {
  // Levels are counted in 32-bit arithmetic (a tile's end, an item's row):
  // a page holds fewer than 2^31 of them, as Parquet's i32 counts say.
  if (t.num_values > 0x7fffffffu) return GDS_ERR_BAD_TASK;
  if (t.max_def > 0xffffu) return GDS_ERR_BAD_TASK;
  // Level outputs hold a byte per entry; the nesting has GDS_NEST_LEVELS.
  if ((t.out_def != 0 && t.max_def > 255u) || (t.out_rep != 0 && t.max_rep >= GDS_NEST_LEVELS))
    return GDS_ERR_BAD_TASK;
  if (t.flags & GDS_FLAG_ROW_WINDOW) {
    if ((u64)t.row_skip + (u64)t.row_take > (u64)t.num_values) return GDS_ERR_BAD_TASK;
    if ((u64)t.out_row + (u64)t.row_take > (u64)t.out_rows) return GDS_ERR_OUTPUT_RANGE;
  } else if ((u64)t.out_row + (u64)t.num_values > (u64)t.out_rows) {
    return GDS_ERR_OUTPUT_RANGE;
  }
  if (t.dict == 0 && t.dict_len != 0) return GDS_ERR_BAD_TASK;
  if (t.out_validity & 3) return GDS_ERR_BAD_TASK;
  switch (t.kind) {
    case GDS_KIND_FIXED: {
      if (t.encoding != GDS_ENC_PLAIN && t.encoding != GDS_ENC_DICTIONARY &&
          t.encoding != GDS_ENC_BYTE_STREAM_SPLIT && t.encoding != GDS_ENC_DELTA_BINARY_PACKED &&
          t.encoding != GDS_ENC_DELTA_BYTE_ARRAY)
        return GDS_ERR_BAD_ENCODING;
      if (t.encoding == GDS_ENC_DELTA_BINARY_PACKED && t.type_length != 4 && t.type_length != 8)
        return GDS_ERR_BAD_ENCODING;
      const u32 in = t.type_length, out = t.out_width;
      bool ok;
      switch (t.conversion) {
        case GDS_CONV_COPY: ok = in >= 1 && in == out; break;
        case GDS_CONV_I32_TO_8: ok = in == 4 && out == 1; break;
        case GDS_CONV_I32_TO_16: ok = in == 4 && out == 2; break;
        case GDS_CONV_I32_TO_DECIMAL128: ok = in == 4 && out == 16; break;
        case GDS_CONV_I64_TO_DECIMAL128: ok = in == 8 && out == 16; break;
        case GDS_CONV_BE_TO_DECIMAL128: ok = in >= 1 && in <= 16 && out == 16; break;
        case GDS_CONV_INT96_TO_TIMESTAMP_NS: ok = in == 12 && out == 8; break;
        case GDS_CONV_BE_TO_DECIMAL256: ok = in >= 1 && in <= 32 && out == 32; break;
        case GDS_CONV_INTERVAL_DAY_TIME: ok = in == 12 && out == 8; break;
        default: ok = false;
      }
      if (!ok) return GDS_ERR_BAD_CONVERSION;
      break;
    }
    case GDS_KIND_BOOLEAN:
      if (t.encoding != GDS_ENC_PLAIN && t.encoding != GDS_ENC_RLE) return GDS_ERR_BAD_ENCODING;
      break;
    case GDS_KIND_BYTE_ARRAY:
      if (t.encoding != GDS_ENC_PLAIN && t.encoding != GDS_ENC_DICTIONARY &&
          t.encoding != GDS_ENC_DELTA_LENGTH_BYTE_ARRAY && t.encoding != GDS_ENC_DELTA_BYTE_ARRAY)
        return GDS_ERR_BAD_ENCODING;
      // Views or Decimal128 values (16 bytes a row), or Decimal256 values
      // (32): BYTE_ARRAY decimals. The row's bytes follow from the
      // conversion (gds_byte_array_slot), out_width is not read.
      if (t.conversion != GDS_CONV_COPY && t.conversion != GDS_CONV_BE_TO_DECIMAL128 &&
          t.conversion != GDS_CONV_BE_TO_DECIMAL256)
        return GDS_ERR_BAD_CONVERSION;
      if (t.encoding == GDS_ENC_PLAIN) {
        if (t.scratch == 0 || (t.scratch & 3) ||
            ((u64)t.plain_count + 1) * 4 > (u64)t.scratch_len)
          return GDS_ERR_SCRATCH;
      }
      break;
    case GDS_KIND_LEVELS:
      if (t.scratch != 0 && ((t.scratch & 3) || (u64)t.num_values * 4 > (u64)t.scratch_len))
        return GDS_ERR_SCRATCH;
      return 0;
    default:
      return GDS_ERR_BAD_TASK;
  }
  if (t.num_values != 0 && t.out_values == 0) return GDS_ERR_BAD_TASK;
  if (t.out_values & 15) return GDS_ERR_BAD_TASK;
  return 0;
}

// Where a nested page's repetition levels lie: v1 behind their 4-byte
// length at the start of the page, v2 at rep_levels. 0 when they can be read.
__device__ __forceinline__ u32 gds_rep_section(const PageTask& t, const u8** rep, u32* rep_len) {
  *rep = 0;
  *rep_len = 0;
  if (t.flags & GDS_FLAG_V1_LEVELS) {
    if (!(t.flags & GDS_FLAG_V1_REP_LEVELS)) return GDS_ERR_BAD_TASK;
    if (t.data_len < 4 || t.data == 0) return GDS_ERR_LEVELS_LENGTH;
    const u8* data = (const u8*)t.data;
    const u32 len = gds_ld_u32(data);
    if (len > t.data_len - 4) return GDS_ERR_LEVELS_LENGTH;
    *rep = data + 4;
    *rep_len = len;
    return 0;
  }
  if (t.rep_len != 0 && t.rep_levels == 0) return GDS_ERR_BAD_TASK;
  *rep = (const u8*)t.rep_levels;
  *rep_len = t.rep_len;
  return 0;
}

__device__ __forceinline__ void gds_store_128(u8* dst, u64 lo, u64 hi) {
  uint4 v;
  v.x = (u32)lo;
  v.y = (u32)(lo >> 32);
  v.z = (u32)hi;
  v.w = (u32)(hi >> 32);
  gds_st_16(dst, v);
}

// A big-endian decimal of `in` bytes into 16 (or, `wide`, 32) little-endian
// bytes. Not inlined: its registers (a 32-byte value built byte by byte)
// would be the page kernel's peak, and at its register cap ptxas would
// spill the tile loop's state to local memory, on every path, for it.
__device__ __noinline__ void gds_write_be_decimal(u8* dst, const u8* src, u32 in, bool wide) {
  if (!wide) {
    gds_st_16(dst, gds_be_to_128(src, in));
  } else {
    gds_st_16(dst, gds_be_to_le_part(src, in, 0));
    gds_st_16(dst + 16, gds_be_to_le_part(src, in, 16));
  }
}

// Converts one value at `src` (`in` bytes) to `dst` (the row's slot).
__device__ __forceinline__ void gds_write_value(u8* dst, const u8* src, u32 conversion, u32 in) {
  switch (conversion) {
    case GDS_CONV_COPY:
      switch (in) {
        case 1: *dst = *src; return;
        case 2: *(u16*)dst = gds_ld_u16(src); return;
        case 4: *(u32*)dst = gds_ld_u32(src); return;
        case 8: *(u64*)dst = gds_ld_u64(src); return;
        case 16: gds_st_16(dst, gds_ld_16(src)); return;
        default:
          for (u32 b = 0; b < in; ++b) dst[b] = src[b];
          return;
      }
    case GDS_CONV_I32_TO_8: *dst = (u8)gds_ld_u32(src); return;
    case GDS_CONV_I32_TO_16: *(u16*)dst = (u16)gds_ld_u32(src); return;
    case GDS_CONV_I32_TO_DECIMAL128: {
      i64 v = (i64)(i32)gds_ld_u32(src);
      gds_store_128(dst, (u64)v, (u64)(v >> 63));
      return;
    }
    case GDS_CONV_I64_TO_DECIMAL128: {
      i64 v = (i64)gds_ld_u64(src);
      gds_store_128(dst, (u64)v, (u64)(v >> 63));
      return;
    }
    case GDS_CONV_BE_TO_DECIMAL128:
      // Big-endian two's complement of `in` bytes -> little-endian, sign-extended.
      gds_write_be_decimal(dst, src, in, false);
      return;
    case GDS_CONV_INT96_TO_TIMESTAMP_NS: {
      // (Julian day - the epoch's) * ns per day + ns in the day, wrapping.
      const u64 nanos = gds_ld_u64(src);
      const i64 day = (i64)(i32)gds_ld_u32(src + 8);
      const u64 days = (u64)(day - 2440588ll);
      *(u64*)dst = days * 86400000000000ull + nanos;
      return;
    }
    case GDS_CONV_BE_TO_DECIMAL256:
      // As BE_TO_DECIMAL128, into 32 bytes.
      gds_write_be_decimal(dst, src, in, true);
      return;
    case GDS_CONV_INTERVAL_DAY_TIME:
      // Months (bytes 0..4) dropped: days, then milliseconds.
      *(u64*)dst = gds_ld_u64(src + 4);
      return;
    default:
      return;
  }
}

// Zeroes the slot of a null row (Arrow leaves it undefined; zero is
// deterministic and never exposes stale pool memory).
__device__ __forceinline__ void gds_write_zero(u8* dst, u32 width) {
  switch (width) {
    case 1: *dst = 0; return;
    case 2: *(u16*)dst = 0; return;
    case 4: *(u32*)dst = 0; return;
    case 8: *(u64*)dst = 0; return;
    case 16: gds_st_16(dst, make_uint4(0, 0, 0, 0)); return;
    default:
      for (u32 b = 0; b < width; ++b) dst[b] = 0;
      return;
  }
}

// ORs the 32 bits of a warp (levels i0..i0+31 of the page) into a bitmap at
// row `r0` = out_row + i0: one or two words, never a word without set bits.
__device__ __forceinline__ void gds_or_bits(u32* bitmap, u32 r0, u32 bits) {
  if (bits == 0) return;
  const u32 w = r0 >> 5;
  const u32 s = (u32)(r0 & 31);
  atomicOr(&bitmap[w], bits << s);
  if (s != 0) {
    const u32 high = bits >> (32 - s);
    if (high) atomicOr(&bitmap[w + 1], high);
  }
}

// As gds_or_bits for the bits of levels i0..i0+31 that fall in the row
// window [skip, end): level i goes to row out_row + i - skip.
__device__ __forceinline__ void gds_or_window(u32* bitmap, u32 out_row, u32 i0, u32 bits, u32 skip, u32 end) {
  if (i0 >= end || i0 + 32 <= skip) return;
  if (end < i0 + 32) bits &= (1u << (u32)(end - i0)) - 1u;
  if (i0 >= skip) {
    gds_or_bits(bitmap, out_row + (i0 - skip), bits);
  } else {
    gds_or_bits(bitmap, out_row, bits >> (u32)(skip - i0));
  }
}

// A value of `w` bytes (4, 8 or 16) loaded into registers and stored
// (gds_decode_page's copies of a tile's items; `w` is a constant where
// they are inlined, so only the words it needs are kept).
__device__ __forceinline__ uint4 gds_copy_load(const u8* p, u32 w) {
  if (w == 16) return gds_ld_16(p);
  if (w == 8) {
    const u64 x = gds_ld_u64(p);
    return make_uint4((u32)x, (u32)(x >> 32), 0, 0);
  }
  return make_uint4(gds_ld_u32(p), 0, 0, 0);
}

__device__ __forceinline__ void gds_copy_store(u8* p, uint4 v, u32 w) {
  if (w == 16) gds_st_16(p, v);
  else if (w == 8) *(u64*)p = (u64)v.x | ((u64)v.y << 32);
  else *(u32*)p = v.x;
}

// The value index of level `i`, item `k` of its thread in the tile from
// level `lo`, `ballot` its warp's ballot of defined levels: with the
// tile's definition levels scanned, `vbase` plus the defined levels before
// it (its warp's count before it and the lanes below it in `ballot`);
// otherwise every level has a value.
__device__ __forceinline__ u32 gds_value_index(const DecodeShared& sh, int k, u32 ballot, u32 i, u32 lo, u32 vbase,
                                               bool scanned) {
  const u32 lane = threadIdx.x & 31;
  const u32 warp = threadIdx.x >> 5;
  return scanned ? vbase + sh.counts[k * GDS_WARPS + warp] + __popc(ballot & ((1u << lane) - 1u)) : vbase + (i - lo);
}

// Records an error for item `i`: the first one of the page wins.
#define GDS_FAIL(code, i)                                        \
  do {                                                           \
    gds_fail(&sh.error, &sh.error_index, (code), (u32)(i));      \
    failed = true;                                               \
  } while (0)

// One thread's items of a tile whose values are copies of W bytes (4, 8
// or 16: integers, floats, dates, a dictionary's string views — most
// columns), in three passes: every item's place (its value index, or for a
// dictionary the run that holds its index), then every load (packed
// indices, then values), then every store, so the thread's loads overlap.
// gds_decode_page's general loop takes one item at a time, each waiting on
// its packed index, then on the dictionary entry it names, before the next
// begins. Not inlined: its arrays would raise the page kernel's register
// peak, and ptxas would spill the tile loop's state on every path for them.
// True when an item failed (its error recorded as GDS_FAIL does).
template <u32 W>
__device__ __noinline__ bool gds_copy_items(DecodeShared& sh, u32 lo, u32 hi, u32 vbase, bool scanned, bool dictionary) {
  const u32 tid = threadIdx.x;
  const u32 lane = tid & 31;
  const u32 warp = tid >> 5;
  const PageValues& pv = sh.pv;
  const u32 skip = pv.skip, end = pv.end;
  const u32 out_row = sh.task.out_row;
  const u64 out_at = sh.task.out_values;
  const u8* const dict = (const u8*)sh.task.dict;
  const u32 dict_count = sh.task.dict_count;
  const u64 dict_len = sh.task.dict_len;
  bool failed = false;
  const RunCursor& c = sh.values;
  const RunTable& r = sh.value_runs;
  const u32 lead = (u32)((u64)c.base & 3);
  const u32* const words = (const u32*)((u64)c.base - lead);
  const u32 bw = c.bw;
  const u32 mask = bw >= 32 ? 0xffffffffu : ((1u << bw) - 1u);
  // idx[k]: item k's value index (PLAIN) or dictionary index, or while
  // bit k of `packed` is set, the bit of `words` where its packed
  // dictionary index begins. The arrays start zeroed: an element left
  // unset on some path made ptxas keep it in local memory.
  u32 idx[GDS_ITEMS] = {};
  u32 ready = 0;   // bit k: idx[k] is known
  u32 packed = 0;  // bit k: idx[k] is still to be read from `words`
#pragma unroll
  for (int k = 0; k < GDS_ITEMS; ++k) {
    const u32 i = lo + (u32)k * GDS_BLOCK + tid;
    if (i >= hi) continue;
    const u32 ballot = sh.ballots[k * GDS_WARPS + warp];
    const u32 vi = gds_value_index(sh, k, ballot, i, lo, vbase, scanned);
    if (i < skip || i >= end || !((ballot >> lane) & 1)) continue;
    if (!dictionary) {
      if ((u64)(vi + 1) * W > (u64)pv.values_len) {
        GDS_FAIL(GDS_ERR_VALUES_OVERRUN, i);
      } else {
        idx[k] = vi;
        ready |= 1u << k;
      }
      continue;
    }
    // gds_runs_get, with the packed item's load left for later.
    u32 a;
    if (!gds_runs_find(r, vi, a)) {
      GDS_FAIL(GDS_ERR_VALUES_OVERRUN, i);
      continue;
    }
    if (!r.packed[a]) {
      idx[k] = r.payload[a];
      ready |= 1u << k;
      continue;
    }
    const u64 bit = (u64)(vi - r.start[a]) * bw;
    const u64 byte = (u64)r.payload[a] + (bit >> 3);
    const u32 in_byte = (u32)(bit & 7);
    const u64 at_bit = ((u64)lead + byte) * 8 + in_byte;
    if (in_byte + bw <= 32 && byte + 8 <= (u64)c.len && at_bit < (1ull << 32)) {
      // As gds_runs_get: two aligned words inside the stream's allocation
      // (word at_bit / 32 and the next; bits from at_bit % 32 on).
      idx[k] = (u32)at_bit;
      packed |= 1u << k;
    } else {
      u32 v;
      if (!gds_runs_get(c, r, vi, v)) {
        GDS_FAIL(GDS_ERR_VALUES_OVERRUN, i);
      } else {
        idx[k] = v;
        ready |= 1u << k;
      }
    }
  }
  if (packed != 0) {
    u32 w0[GDS_ITEMS], w1[GDS_ITEMS];
#pragma unroll
    for (int k = 0; k < GDS_ITEMS; ++k) {
      w0[k] = 0;
      w1[k] = 0;
      if ((packed >> k) & 1) {
        w0[k] = words[idx[k] >> 5];
        w1[k] = words[(idx[k] >> 5) + 1];
      }
    }
#pragma unroll
    for (int k = 0; k < GDS_ITEMS; ++k) {
      if ((packed >> k) & 1) idx[k] = (u32)((((u64)w1[k] << 32) | w0[k]) >> (idx[k] & 31)) & mask;
    }
    ready |= packed;
  }
  uint4 v[GDS_ITEMS];
#pragma unroll
  for (int k = 0; k < GDS_ITEMS; ++k) {
    v[k] = make_uint4(0, 0, 0, 0);
    if (!((ready >> k) & 1)) continue;
    if (!dictionary) {
      v[k] = gds_copy_load(pv.values + (u64)idx[k] * W, W);
    } else if (idx[k] >= dict_count || ((u64)idx[k] + 1) * W > dict_len) {
      GDS_FAIL(GDS_ERR_DICT_INDEX, lo + (u32)k * GDS_BLOCK + tid);
    } else {
      v[k] = gds_copy_load(dict + (u64)idx[k] * W, W);
    }
  }
#pragma unroll
  for (int k = 0; k < GDS_ITEMS; ++k) {
    const u32 i = lo + (u32)k * GDS_BLOCK + tid;
    if (i >= hi || i < skip || i >= end) continue;
    gds_copy_store((u8*)out_at + (u64)(out_row + i - skip) * W, v[k], W);
  }
  return failed;
}

__device__ void gds_decode_page(PageTask* task, DecodeShared& sh) {
  const u32 tid = threadIdx.x;
  const u32 lane = tid & 31;
  const u32 warp = tid >> 5;

  static_assert(sizeof(PageTask) % 4 == 0 && sizeof(PageTask) / 4 <= GDS_BLOCK, "task copy");
  if (tid < sizeof(PageTask) / 4) ((u32*)&sh.task)[tid] = ((const u32*)task)[tid];
  __syncthreads();
  const PageTask& t = sh.task;

  Sections s;
  u32 err = gds_sections(t, s);
  if (err == 0) err = gds_check_task(t);

  // The values' hybrid stream, if any: dictionary indices (bit width in the
  // first byte) or RLE booleans (4-byte length prefix, bit width 1).
  const u32 kind = t.kind;
  const bool dictionary = (kind == GDS_KIND_FIXED || kind == GDS_KIND_BYTE_ARRAY) &&
                          t.encoding == GDS_ENC_DICTIONARY;
  const bool rle_bool = kind == GDS_KIND_BOOLEAN && t.encoding == GDS_ENC_RLE;
  const u8* vstream = 0;
  u32 vstream_len = 0, vstream_bw = 0;
  if (err == 0 && dictionary && s.values_len >= 1) {
    vstream_bw = s.values[0];
    if (vstream_bw > 32) err = GDS_ERR_BIT_WIDTH;
    vstream = s.values + 1;
    vstream_len = s.values_len - 1;
  }
  // BYTE_STREAM_SPLIT: the page's values fill its values section exactly.
  const bool split = kind == GDS_KIND_FIXED && t.encoding == GDS_ENC_BYTE_STREAM_SPLIT;
  u32 split_n = 0;
  if (err == 0 && split) {
    if (t.type_length == 0 || s.values_len % t.type_length != 0) err = GDS_ERR_VALUES_LENGTH;
    else split_n = s.values_len / t.type_length;
  }
  if (err == 0 && rle_bool && s.values_len >= 4) {
    const u32 len = gds_ld_u32(s.values);
    if (len > s.values_len - 4) err = GDS_ERR_VALUES_LENGTH;
    vstream = s.values + 4;
    vstream_len = len;
    vstream_bw = 1;
  }
  // DELTA_BINARY_PACKED: the values into scratch as PLAIN, read from there.
  if (err == 0 && kind == GDS_KIND_FIXED && t.encoding == GDS_ENC_DELTA_BINARY_PACKED) {
    const u32 n = gds_delta_to_plain(t, s, sh.delta, &err);
    s.values = (const u8*)t.scratch;
    s.values_len = n * t.type_length;
  }
  // DELTA_BYTE_ARRAY fixed-width values: materialized into scratch as PLAIN.
  if (err == 0 && kind == GDS_KIND_FIXED && t.encoding == GDS_ENC_DELTA_BYTE_ARRAY) {
    const u32 n = gds_dba_fixed(t, s, sh.delta, &err);
    s.values = (const u8*)t.scratch;
    s.values_len = n * t.type_length;
  }
  // Byte arrays: value i lies at str + offsets[i] + str_prefix ..
  // str + offsets[i + 1], i < str_count. PLAIN: offsets from the walk,
  // each value behind its 4-byte length; DELTA_LENGTH_BYTE_ARRAY: offsets
  // from its lengths, in the bytes after them; DELTA_BYTE_ARRAY: the
  // values materialized in the buffer the host sized.
  const u8* str = s.values;
  u32 str_len = s.values_len;
  const u32* str_offsets = (const u32*)t.scratch;
  u32 str_count = t.plain_count;
  u32 str_prefix = 4;
  if (err == 0 && kind == GDS_KIND_BYTE_ARRAY && t.encoding == GDS_ENC_DELTA_LENGTH_BYTE_ARRAY) {
    u32 at = 0;
    err = gds_dlba_prepare(t, s, sh.delta, &at, &str_count);
    str = s.values + at;
    str_len = s.values_len - at;
    str_prefix = 0;
  }
  if (err == 0 && kind == GDS_KIND_BYTE_ARRAY && t.encoding == GDS_ENC_DELTA_BYTE_ARRAY) {
    // gds_dba_sizes' error stands (the page's lengths were not decoded).
    if (t.error != 0) return;
    err = gds_dba_prepare(t, s, &str, &str_len, &str_offsets, &str_count);
    str_prefix = 0;
  }
  // A nested leaf's repetition levels, written as bytes (block-uniform).
  const bool rep_out = t.out_rep != 0 && t.max_rep > 0;
  const u8* rep = 0;
  u32 rep_len = 0;
  if (err == 0 && rep_out) err = gds_rep_section(t, &rep, &rep_len);
  if (err != 0) {
    if (tid == 0 && task->error == 0) {
      task->error = err;
      task->error_index = 0;
    }
    return;
  }

  // The rows written: the page's levels [skip, end) go to out_row.. .
  const bool windowed = (t.flags & GDS_FLAG_ROW_WINDOW) != 0;
  if (tid == 0) {
    sh.error = 0;
    sh.error_index = 0;
    gds_cursor_init(sh.levels, s.levels, s.levels_len, gds_bit_width(t.max_def));
    gds_cursor_init(sh.values, vstream, vstream_len, vstream_bw);
    gds_cursor_init(sh.rep, rep, rep_len, gds_bit_width(t.max_rep));
    PageValues& pv = sh.pv;
    pv.values = s.values;
    pv.values_len = s.values_len;
    pv.split_n = split_n;
    pv.str = str;
    pv.str_offsets = str_offsets;
    pv.str_len = str_len;
    pv.str_count = str_count;
    pv.str_prefix = str_prefix;
    pv.skip = windowed ? t.row_skip : 0u;
    pv.end = windowed ? t.row_skip + t.row_take : t.num_values;
  }
  __syncthreads();

  // Read from shared memory where used (see PageValues).
  const PageValues& pv = sh.pv;
  const u32& skip = pv.skip;
  const u32& end = pv.end;
  const u32& num_values = t.num_values;
  const u32& max_def = t.max_def;
  const u32& out_row = t.out_row;
  if (tid == 0) {
    sh.win_lo = 0;
    sh.win_hi = 0;
  }
  const bool has_levels = max_def > 0;
  const bool value_runs = dictionary || rle_bool;
  const u64& validity_at = t.out_validity;
  const u64& out_at = t.out_values;
  // Level bytes: level i of the page at out_row + i - skip (the rows).
  const bool def_out = has_levels && t.out_def != 0;

  u32 vbase = 0;  // values (defined levels) before this tile
  for (u32 lo = 0; lo < num_values; lo += GDS_TILE) {
    const u32 hi = lo + GDS_TILE < num_values ? lo + GDS_TILE : num_values;
    bool failed = false;

    // 1. Definition levels -> per-warp ballots of the defined ones, and the
    //    validity bits (a required column given a bitmap gets all rows set).
    //    The three run tables are filled at once, each by its own warp.
    if (has_levels || rep_out || value_runs) {
      if (warp == 0 && has_levels) gds_runs_fill(sh.levels, sh.def_runs, lo, hi);
      if (warp == 1 && rep_out) gds_runs_fill(sh.rep, sh.rep_runs, lo, hi);
      if (warp == 2 && value_runs) {
        if (lane == 0) sh.values_before = sh.values;
        gds_runs_fill(sh.values, sh.value_runs, vbase, vbase + (hi - lo));
      }
      __syncthreads();
    }
    bool all_defined = true;  // this thread's levels of the tile
#pragma unroll
    for (int k = 0; k < GDS_ITEMS; ++k) {
      const u32 i = lo + (u32)k * GDS_BLOCK + tid;
      bool d = i < hi;
      if (has_levels && d) {
        u32 level;
        if (!gds_runs_get(sh.levels, sh.def_runs, i, level)) {
          GDS_FAIL(GDS_ERR_LEVELS_OVERRUN, i);
          d = false;
        } else if (level > max_def) {
          GDS_FAIL(GDS_ERR_BAD_LEVEL, i);
          d = false;
        } else {
          d = level == max_def;
          if (def_out && i >= skip && i < end) ((u8*)sh.task.out_def)[out_row + i - skip] = (u8)level;
        }
      }
      all_defined &= d || i >= hi;
      const u32 ballot = __ballot_sync(GDS_FULL_MASK, d);
      if (lane == 0) {
        sh.ballots[k * GDS_WARPS + warp] = ballot;
        sh.counts[k * GDS_WARPS + warp] = __popc(ballot);
        if (validity_at != 0) gds_or_window((u32*)validity_at, out_row, lo + (u32)k * GDS_BLOCK + warp * 32, ballot, skip, end);
      }
    }

    // 1b. A nested leaf's repetition levels to bytes.
    if (rep_out) {
      const u32 max_rep = sh.task.max_rep;
      u8* const rep_bytes = (u8*)sh.task.out_rep;
#pragma unroll 1
      for (int k = 0; k < GDS_ITEMS; ++k) {
        const u32 i = lo + (u32)k * GDS_BLOCK + tid;
        if (i >= hi) break;
        u32 level;
        if (!gds_runs_get(sh.rep, sh.rep_runs, i, level)) GDS_FAIL(GDS_ERR_LEVELS_OVERRUN, i);
        else if (level > max_rep) GDS_FAIL(GDS_ERR_REP_LEVEL, i);
        else if (i >= skip && i < end) rep_bytes[out_row + i - skip] = (u8)level;
      }
    }

    // 2. Value index of every defined level: level i's is vbase + i - lo
    //    when the tile has no null (the barrier tells every thread);
    //    otherwise warp 0 scans the 32 counts (`scanned`).
    u32 ndef;
    bool scanned = false;
    if (has_levels && !__syncthreads_and(all_defined)) {
      scanned = true;
      if (warp == 0) {
        const u32 x = sh.counts[lane];
        u32 inclusive = x;
#pragma unroll
        for (u32 d = 1; d < 32; d <<= 1) {
          const u32 y = __shfl_up_sync(GDS_FULL_MASK, inclusive, d);
          if (lane >= d) inclusive += y;
        }
        sh.counts[lane] = inclusive - x;
        if (lane == 31) sh.tile_total = inclusive;
      }
      __syncthreads();
      ndef = sh.tile_total;
    } else {
      ndef = hi - lo;
      if (!has_levels) __syncwarp();  // lane 0's ballots, read below
    }

    auto value_index = [&](int k, u32 ballot, u32 i) -> u32 {
      return gds_value_index(sh, k, ballot, i, lo, vbase, scanned);
    };

    // 2b. The row window's edges: values before its first and its end row.
    if (windowed) {
#pragma unroll 1
      for (int k = 0; k < GDS_ITEMS; ++k) {
        const u32 i = lo + (u32)k * GDS_BLOCK + tid;
        if (i >= hi) break;
        if (i == skip || i == end) {
          const u32 ballot = sh.ballots[k * GDS_WARPS + warp];
          const u32 before = value_index(k, ballot, i);
          if (i == skip) sh.win_lo = (u32)before;
          if (i == end) sh.win_hi = (u32)before;
        }
      }
    }

    // 3. Run headers of the tile's values (dictionary indices, RLE booleans):
    //    read in step 1 for hi - lo values; a tile with nulls reads its
    //    ndef again from where that read began (the cursor then stands
    //    where the next tile's values start).
    if (value_runs && ndef < hi - lo) {
      if (warp == 2) {
        if (lane == 0) sh.values = sh.values_before;
        __syncwarp();
        if (ndef > 0) gds_runs_fill(sh.values, sh.value_runs, vbase, vbase + ndef);
      }
      __syncthreads();
    }

    // 4. Values to rows: item k of thread t is level lo + k * GDS_BLOCK + t,
    //    so consecutive lanes write consecutive rows. Loops not unrolled: one
    //    copy of each branch keeps the code (and the JIT) small.
    if (kind == GDS_KIND_BOOLEAN) {
#pragma unroll 1
      for (int k = 0; k < GDS_ITEMS; ++k) {
        const u32 i = lo + (u32)k * GDS_BLOCK + tid;
        const u32 ballot = sh.ballots[k * GDS_WARPS + warp];
        const u32 vi = value_index(k, ballot, i);
        bool bit = false;
        if ((ballot >> lane) & 1) {
          if (rle_bool) {
            u32 v;
            if (!gds_runs_get(sh.values, sh.value_runs, vi, v)) GDS_FAIL(GDS_ERR_VALUES_OVERRUN, i);
            else bit = v != 0;
          } else if ((vi >> 3) >= pv.values_len) {
            GDS_FAIL(GDS_ERR_VALUES_OVERRUN, i);
          } else {
            bit = (pv.values[vi >> 3] >> (vi & 7)) & 1;
          }
        }
        const u32 bits = __ballot_sync(GDS_FULL_MASK, bit);
        if (lane == 0) gds_or_window((u32*)out_at, out_row, lo + (u32)k * GDS_BLOCK + warp * 32, bits, skip, end);
      }
    } else if (kind == GDS_KIND_LEVELS) {
      u32* const row_map = (u32*)t.scratch;
      if (row_map != 0) {
#pragma unroll 1
        for (int k = 0; k < GDS_ITEMS; ++k) {
          const u32 i = lo + (u32)k * GDS_BLOCK + tid;
          const u32 ballot = sh.ballots[k * GDS_WARPS + warp];
          const u32 vi = value_index(k, ballot, i);
          if (((ballot >> lane) & 1) && i >= skip && i < end) row_map[vi] = (u32)(out_row + i - skip);
        }
      }
    } else if (kind == GDS_KIND_BYTE_ARRAY && !dictionary) {
      // Utf8View / BinaryView (or a decimal) from the values' offsets.
      const u32* const offsets = pv.str_offsets;
      const u32 plain_count = pv.str_count;
      const u64 base = t.view_buffer_base;
      const u32 buffer_index = t.view_buffer_index;
      const u32 conversion = t.conversion;
      const u32 slot = gds_byte_array_slot(conversion);
#pragma unroll 1
      for (int k = 0; k < GDS_ITEMS; ++k) {
        const u32 i = lo + (u32)k * GDS_BLOCK + tid;
        if (i >= hi) break;
        const u32 ballot = sh.ballots[k * GDS_WARPS + warp];
        const u32 vi = value_index(k, ballot, i);
        if (i < skip || i >= end) continue;
        u8* const dst = (u8*)out_at + (u64)(out_row + i - skip) * slot;
        bool written = false;
        if ((ballot >> lane) & 1) {
          if (vi >= plain_count) {
            GDS_FAIL(GDS_ERR_VALUES_OVERRUN, i);
          } else {
            const u32 pos = offsets[vi];
            const u32 next = offsets[vi + 1];
            if ((u64)pos + pv.str_prefix > (u64)next || next > pv.str_len) {
              GDS_FAIL(GDS_ERR_SCRATCH, i);  // offsets the walk did not write for this page
            } else {
              u32 bad = 0;
              gds_byte_array_store(dst, pv.str + pos + pv.str_prefix, next - pos - pv.str_prefix, conversion, buffer_index,
                                   base, &bad);
              written = true;
              if (bad) GDS_FAIL(bad, i);
            }
          }
        }
        if (!written) gds_byte_array_zero(dst, conversion);
      }
    } else {
      // Fixed width (and byte-array dictionary slots: copies of 16 or 32
      // bytes, views or decimals).
      const bool views = kind == GDS_KIND_BYTE_ARRAY;
      const u32 in_width = views ? gds_byte_array_slot(t.conversion) : t.type_length;
      const u32 out_width = views ? in_width : t.out_width;
      const u32 conversion = views ? (u32)GDS_CONV_COPY : t.conversion;
      const u8* const dict = (const u8*)t.dict;
      const u32 dict_count = t.dict_count;
      const u64 dict_len = t.dict_len;
      // Copies of 4, 8 or 16 bytes: most columns (gds_copy_items).
      const bool copy = !split && conversion == GDS_CONV_COPY;
      if (copy && in_width == 4) failed |= gds_copy_items<4>(sh, lo, hi, vbase, scanned, dictionary);
      else if (copy && in_width == 8) failed |= gds_copy_items<8>(sh, lo, hi, vbase, scanned, dictionary);
      else if (copy && in_width == 16) failed |= gds_copy_items<16>(sh, lo, hi, vbase, scanned, dictionary);
      else
#pragma unroll 1
      for (int k = 0; k < GDS_ITEMS; ++k) {
        const u32 i = lo + (u32)k * GDS_BLOCK + tid;
        if (i >= hi) break;
        const u32 ballot = sh.ballots[k * GDS_WARPS + warp];
        const u32 vi = value_index(k, ballot, i);
        if (i < skip || i >= end) continue;
        u8* const dst = (u8*)out_at + (u64)(out_row + i - skip) * out_width;
        const u8* src = 0;
        if ((ballot >> lane) & 1) {
          if (dictionary) {
            u32 index;
            if (!gds_runs_get(sh.values, sh.value_runs, vi, index)) GDS_FAIL(GDS_ERR_VALUES_OVERRUN, i);
            else if (index >= dict_count || ((u64)index + 1) * in_width > dict_len) GDS_FAIL(GDS_ERR_DICT_INDEX, i);
            else src = dict + (u64)index * in_width;
          } else if (split) {
            if (vi >= pv.split_n) {
              GDS_FAIL(GDS_ERR_VALUES_OVERRUN, i);
            } else if (in_width <= 32) {
              // Byte b of value vi is at b * n + vi: consecutive lanes read
              // consecutive bytes of each stream.
              u8 gathered[32];
              for (u32 b = 0; b < in_width; ++b) gathered[b] = pv.values[(u64)b * pv.split_n + vi];
              gds_write_value(dst, gathered, conversion, in_width);
              continue;
            } else {
              // Wider values are copied (in_width == out_width, checked).
              for (u32 b = 0; b < in_width; ++b) dst[b] = pv.values[(u64)b * pv.split_n + vi];
              continue;
            }
          } else if ((u64)(vi + 1) * in_width > (u64)pv.values_len) {
            GDS_FAIL(GDS_ERR_VALUES_OVERRUN, i);
          } else {
            src = pv.values + (u64)vi * in_width;
          }
        }
        if (src != 0) gds_write_value(dst, src, conversion, in_width);
        else gds_write_zero(dst, out_width);
      }
    }

    vbase += ndef;
    // Uniform exit: every thread sees the same answer.
    if (__syncthreads_or(failed)) break;
  }

  if (tid == 0) {
    task->value_count = (u32)vbase;
    if (windowed) {
      const u32 lo_v = skip >= num_values ? vbase : sh.win_lo;
      const u32 hi_v = end >= num_values ? vbase : sh.win_hi;
      task->null_count = sh.error == 0 ? (u32)((end - skip) - (hi_v - lo_v)) : 0;
    } else {
      task->null_count = sh.error == 0 ? num_values - (u32)vbase : 0;
    }
    if (sh.error != 0 && task->error == 0) {
      task->error = sh.error;
      task->error_index = sh.error_index;
    }
  }
}

#undef GDS_FAIL

extern "C" __global__ void __launch_bounds__(GDS_BLOCK, GDS_MIN_BLOCKS) gds_decode_pages(PageTask* tasks, u32 n_tasks) {
  __shared__ DecodeShared sh;
  if (blockDim.x != GDS_BLOCK || blockDim.y != 1 || blockDim.z != 1) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      for (u32 t = blockIdx.x; t < n_tasks; t += gridDim.x) atomicCAS(&tasks[t].error, 0u, (u32)GDS_ERR_LAUNCH);
    }
    return;
  }
  for (u32 t = blockIdx.x; t < n_tasks; t += gridDim.x) {
    gds_decode_page(tasks + t, sh);
    __syncthreads();
  }
}

// gds_dba_sizes: one block of GDS_BLOCK threads per BYTE_ARRAY
// DELTA_BYTE_ARRAY page (grid-stride; the other tasks return at once):
// decodes its prefix and suffix lengths into its scratch and writes its
// values' count (plain_count) and bytes (value_bytes), or its error. The
// host reads them back, gives each page a buffer of value_bytes and
// launches the rest (delta_strings.cuh says why).
extern "C" __global__ void __launch_bounds__(GDS_BLOCK, GDS_MIN_BLOCKS) gds_dba_sizes(PageTask* tasks, u32 n_tasks) {
  __shared__ DeltaShared sh;
  __shared__ PageTask task;
  if (blockDim.x != GDS_BLOCK || blockDim.y != 1 || blockDim.z != 1) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      for (u32 t = blockIdx.x; t < n_tasks; t += gridDim.x) atomicCAS(&tasks[t].error, 0u, (u32)GDS_ERR_LAUNCH);
    }
    return;
  }
  for (u32 t = blockIdx.x; t < n_tasks; t += gridDim.x) {
    if (tasks[t].kind != GDS_KIND_BYTE_ARRAY || tasks[t].encoding != GDS_ENC_DELTA_BYTE_ARRAY) continue;
    if (threadIdx.x < sizeof(PageTask) / 4) ((u32*)&task)[threadIdx.x] = ((const u32*)(tasks + t))[threadIdx.x];
    __syncthreads();
    gds_dba_size_one(tasks + t, task, sh);
    // `task` and `sh` are rewritten for the next page.
    __syncthreads();
  }
}
