// gdscan GPU decoder: nested columns' levels to Arrow's nested layout.
//
// A nested leaf is decoded flat over its level entries by gds_decode_pages
// (one output slot per entry), which also writes every entry's repetition
// and definition level as a byte, at the page's first entry in the chunk.
// These kernels then build the nesting (src/decode/kernels/nest.rs has the
// host's side, and src/decode/page/nesting/assembly.rs the same arithmetic
// on the CPU):
//
//   gds_nest_count   a block per tile of GDS_NEST_TILE entries of each
//                    NestTask (y: the task): the levels checked, and per
//                    level j the tile's slots (rep <= j && def >= level_def[j],
//                    and a null or empty FixedSizeList's padding);
//   gds_nest_scan    a block per task: the tiles' counts into exclusive
//                    prefixes, each level's slots into the status, the last
//                    entry of each offsets output;
//   gds_nest_write   as gds_nest_count: every output of the task at its
//                    slots' positions (the tile's prefix plus the block's
//                    scan of each thread's GDS_NEST_ITEMS consecutive entries).
//
// Every position written is a count of slots before an entry, so it is
// below the level's slot count; gds_nest_scan checks every count against
// the task's capacity (the entries; under FixedSizeLists the records times
// their sizes) and gds_nest_write writes nothing after any error: whatever
// the level bytes hold, no write leaves the buffers the host sized.
// Corrupt levels are reported in the status; the host discards the batch.
// Counts add with saturation, so a sum past 32 bits fails the capacity.
#include "common.cuh"

static_assert(GDS_NEST_LEVELS == 8, "NestTask.level_def holds GDS_NEST_LEVELS levels");
static_assert(GDS_NEST_BLOCK % 32 == 0 && GDS_NEST_BLOCK / 32 <= 32, "one warp scans the warps' sums");

#define GDS_NEST_TILE (GDS_NEST_BLOCK * GDS_NEST_ITEMS)
#define GDS_NEST_WARPS (GDS_NEST_BLOCK / 32)
// The kernels' launch bounds: with GDS_NEST_MIN_BLOCKS (0: the compiler's
// choice, which spills gds_nest_write's state at 48 registers) blocks an
// SM, the register cap that goes with it.
#if GDS_NEST_MIN_BLOCKS > 0
#define GDS_NEST_BOUNDS __launch_bounds__(GDS_NEST_BLOCK, GDS_NEST_MIN_BLOCKS)
#else
#define GDS_NEST_BOUNDS __launch_bounds__(GDS_NEST_BLOCK)
#endif

// ----------------------------------------------------- the entries' slots

__device__ __forceinline__ u32 gds_level_at(const u8* levels, u64 i) { return levels ? (u32)levels[i] : 0u; }

// Tiles of a task's entries.
__device__ __forceinline__ u32 gds_nest_tiles(const NestTask& t) { return (t.entries + GDS_NEST_TILE - 1) / GDS_NEST_TILE; }

// Levels of a task: the records and one per list (at most GDS_NEST_LEVELS).
__device__ __forceinline__ u32 gds_nest_level_count(const NestTask& t) {
  return t.max_rep < GDS_NEST_LEVELS ? t.max_rep + 1 : GDS_NEST_LEVELS;
}

// Whether an entry with levels (r, d) starts a slot of level j.
__device__ __forceinline__ bool gds_is_slot(const NestTask& t, u32 j, u32 r, u32 d) {
  return r <= j && d >= t.level_def[j];
}

__device__ __forceinline__ u32 gds_sat_add(u32 a, u32 b) {
  const u32 s = a + b;
  return s < a ? 0xffffffffu : s;
}

// The slots of level j entry (r, d) stands for: 1 where it starts one;
// where it is a null or empty FixedSizeList above the level instead, the
// list's padding (its size times the sizes of the FixedSizeLists between
// it and level j; 0 through a variable-length list); else 0.
__device__ __forceinline__ u32 gds_nest_weight(const NestTask& t, u32 j, u32 r, u32 d) {
  if (r > j) return 0;
  if (d >= t.level_def[j]) return 1;
  u64 w = 1;
  u32 k = j;
  while (k > 0 && d < t.level_def[k]) {
    w *= t.level_fixed[k];
    if (w == 0) return 0;
    if (w > 0xffffffffull) w = 0xffffffffull;
    --k;
  }
  // A continuation below where the entry's slots end fails the level
  // check; it stands for nothing.
  return r <= k ? (u32)w : 0u;
}

// Whether a FixedSizeList level lies below a variable-length list: an
// entry may then stand for no innermost slot and another for several, so
// equal counts do not make the slots the entries (no identity case).
__device__ __forceinline__ bool gds_nest_fixed_under_variable(const NestTask& t) {
  bool variable = false;
  for (u32 j = 1; j < gds_nest_level_count(t); ++j) {
    if (t.level_fixed[j] == 0) variable = true;
    else if (variable) return true;
  }
  return false;
}

// Whether the task has a FixedSizeList level (padding, sizes to check).
__device__ __forceinline__ bool gds_nest_has_fixed(const NestTask& t) {
  u32 any = 0;
#pragma unroll
  for (u32 j = 0; j < GDS_NEST_LEVELS; ++j) any |= t.level_fixed[j];
  return any != 0;
}

// Exclusive block-wide scan of `v`; `total` gets the block's sum. Called by
// every thread of the block (three barriers; `sums` reused after).
__device__ __forceinline__ u32 gds_nest_scan_block(u32 v, u32* total, u32* sums) {
  const u32 tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  u32 x = v;
  for (u32 d = 1; d < 32; d <<= 1) {
    const u32 y = __shfl_up_sync(GDS_FULL_MASK, x, d);
    if (lane >= d) x = gds_sat_add(x, y);
  }
  if (lane == 31) sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    u32 w = lane < GDS_NEST_WARPS ? sums[lane] : 0u;
    for (u32 d = 1; d < 32; d <<= 1) {
      const u32 y = __shfl_up_sync(GDS_FULL_MASK, w, d);
      if (lane >= d) w = gds_sat_add(w, y);
    }
    if (lane < GDS_NEST_WARPS) sums[lane] = w;
  }
  __syncthreads();
  const u32 before = warp == 0 ? 0u : sums[warp - 1];
  *total = sums[GDS_NEST_WARPS - 1];
  __syncthreads();
  // Exact unless the block's sum saturated (then the capacity fails).
  return gds_sat_add(before, x - v);
}

// The first entry of this thread in the tile, and one past its last.
__device__ __forceinline__ void gds_nest_items(const NestTask& t, u32 tile, u64* first, u64* end) {
  const u64 e = (u64)tile * GDS_NEST_TILE + (u64)threadIdx.x * GDS_NEST_ITEMS;
  const u64 n = t.entries;
  *first = e < n ? e : n;
  *end = e + GDS_NEST_ITEMS < n ? e + GDS_NEST_ITEMS : n;
}

static_assert(GDS_NEST_ITEMS == 16, "a thread's levels are one 16-byte load per kind");

// A thread's GDS_NEST_ITEMS levels of one kind, four to a word (entry
// first + k is byte k): one 16-byte load when whole and aligned.
struct Levels16 {
  u32 w[4];
};

__device__ __forceinline__ Levels16 gds_levels16(const u8* levels, u64 first, u64 end) {
  Levels16 l = {{0, 0, 0, 0}};
  if (levels == 0) return l;
  const u8* p = levels + first;
  if (end - first == GDS_NEST_ITEMS && (((u64)p) & 15) == 0) {
    const uint4 v = *(const uint4*)p;
    l.w[0] = v.x; l.w[1] = v.y; l.w[2] = v.z; l.w[3] = v.w;
    return l;
  }
  for (u64 i = first; i < end; ++i) {
    const u32 k = (u32)(i - first);
    l.w[k >> 2] |= (u32)p[k] << ((k & 3) * 8);
  }
  return l;
}

__device__ __forceinline__ u32 gds_level16(const Levels16& l, u32 k) { return (l.w[k >> 2] >> ((k & 3) * 8)) & 0xffu; }

// Checks entry i's levels (r, d) against the task (`before`: the previous
// entry's definition level): range, the chunk's first entry, a
// continuation of a list that has an element there.
__device__ __forceinline__ void gds_nest_check(const NestTask& t, u32* status, u64 i, u32 r, u32 d, u32 before) {
  u32 code = 0;
  if (d > t.max_def) {
    code = GDS_ERR_BAD_LEVEL;
  } else if (r > t.max_rep) {
    code = GDS_ERR_REP_LEVEL;
  } else if (i == 0 && r != 0) {
    code = GDS_ERR_FIRST_NOT_RECORD;
  } else if (i > 0 && r > 0) {
    const u32 need = t.level_def[r];
    if (before < need || d < need) code = GDS_ERR_BAD_CONTINUATION;
  }
  if (code != 0) gds_fail(&status[0], &status[1], code, (u32)i);
}

// This thread's slots of level j among its entries (padding included).
__device__ __forceinline__ u32 gds_nest_count_level(const NestTask& t, u32 j, const Levels16& rl, const Levels16& dl,
                                                    u32 items) {
  u32 mine = 0;
#pragma unroll
  for (u32 k = 0; k < GDS_NEST_ITEMS; ++k) {
    if (k < items) mine = gds_sat_add(mine, gds_nest_weight(t, j, gds_level16(rl, k), gds_level16(dl, k)));
  }
  return mine;
}

// ------------------------------------------------------- gds_nest_count

extern "C" __global__ void GDS_NEST_BOUNDS gds_nest_count(const NestTask* tasks, u32 n_tasks) {
  __shared__ u32 sums[32];
  for (u32 k = blockIdx.y; k < n_tasks; k += gridDim.y) {
    const NestTask& t = tasks[k];
    const u32 n_tiles = gds_nest_tiles(t);
    const u8* rep = (const u8*)t.rep;
    const u8* def = (const u8*)t.def;
    u32* const status = (u32*)t.status;
    u32* const tiles = (u32*)t.tiles;
    const u32 levels = gds_nest_level_count(t);
    for (u32 tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
      u64 first, end;
      gds_nest_items(t, tile, &first, &end);
      const Levels16 rl = gds_levels16(rep, first, end), dl = gds_levels16(def, first, end);
      const u32 items = (u32)(end - first);
      u32 before = first > 0 ? gds_level_at(def, first - 1) : 0u;
#pragma unroll
      for (u32 i = 0; i < GDS_NEST_ITEMS; ++i) {
        if (i < items) {
          const u32 r = gds_level16(rl, i), d = gds_level16(dl, i);
          gds_nest_check(t, status, first + i, r, d, before);
          before = d;
        }
      }
      for (u32 j = 0; j < levels; ++j) {
        u32 total = 0;
        gds_nest_scan_block(gds_nest_count_level(t, j, rl, dl, items), &total, sums);
        if (threadIdx.x == 0) tiles[(u64)tile * GDS_NEST_LEVELS + j] = total;
      }
    }
  }
}

// -------------------------------------------------------- gds_nest_scan

extern "C" __global__ void GDS_NEST_BOUNDS gds_nest_scan(const NestTask* tasks, u32 n_tasks) {
  __shared__ u32 sums[32];
  __shared__ u32 slots[GDS_NEST_LEVELS];
  const u32 tid = threadIdx.x;
  for (u32 k = blockIdx.x; k < n_tasks; k += gridDim.x) {
    const NestTask& t = tasks[k];
    const u32 n_tiles = gds_nest_tiles(t);
    u32* const tiles = (u32*)t.tiles;
    u32* const status = (u32*)t.status;
    const u32 levels = gds_nest_level_count(t);
    for (u32 j = 0; j < levels; ++j) {
      u32 running = 0;
      for (u32 base = 0; base < n_tiles; base += GDS_NEST_BLOCK) {
        const u32 at = base + tid;
        const u32 v = at < n_tiles ? tiles[(u64)at * GDS_NEST_LEVELS + j] : 0u;
        u32 total = 0;
        const u32 before = gds_nest_scan_block(v, &total, sums);
        if (at < n_tiles) tiles[(u64)at * GDS_NEST_LEVELS + j] = gds_sat_add(running, before);
        running = gds_sat_add(running, total);
      }
      if (tid == 0) {
        status[2 + j] = running;
        slots[j] = running;
        if (running > t.capacity[j]) gds_fail(&status[0], &status[1], GDS_ERR_SLOT_CAPACITY, j);
      }
    }
    __syncthreads();
    // Each offsets output ends with its list's element count (within its
    // capacity + 1 offsets).
    bool fits = true;
    for (u32 j = 0; j < levels; ++j) fits = fits && slots[j] <= t.capacity[j];
    const NestOutput* outputs = (const NestOutput*)t.outputs;
    for (u32 o = tid; fits && o < t.n_outputs; o += GDS_NEST_BLOCK) {
      const NestOutput out = outputs[o];
      if ((out.kind & 0xffu) == GDS_NEST_OFFSETS && out.level >= 1 && out.level < levels) {
        if (out.width == 8) ((i64*)out.dst)[slots[out.level - 1]] = (i64)slots[out.level];
        else ((i32*)out.dst)[slots[out.level - 1]] = (i32)slots[out.level];
      }
    }
    __syncthreads();
  }
}

// ------------------------------------------------------- gds_nest_write

// Bits of one thread's consecutive slots, gathered a word at a time: one
// atomicOr per word touched (neighbouring threads share the edge words).
struct BitRun {
  u64 word;
  u32 bits;
};

__device__ __forceinline__ void gds_bit_flush(u32* dst, BitRun& b) {
  if (b.bits != 0) atomicOr(dst + b.word, b.bits);
  b.bits = 0;
}

__device__ __forceinline__ void gds_bit_set(u32* dst, BitRun& b, u64 pos) {
  const u64 word = pos >> 5;
  if (word != b.word) {
    gds_bit_flush(dst, b);
    b.word = word;
  }
  b.bits |= 1u << (pos & 31);
}

// `width` bytes from src to dst, by the widest aligned word.
__device__ __forceinline__ void gds_copy_value(u8* dst, const u8* src, u32 width) {
  if ((width & 15) == 0 && ((((u64)dst) | ((u64)src)) & 15) == 0) {
    for (u32 b = 0; b < width; b += 16) *(uint4*)(dst + b) = *(const uint4*)(src + b);
  } else if ((width & 7) == 0 && ((((u64)dst) | ((u64)src)) & 7) == 0) {
    for (u32 b = 0; b < width; b += 8) *(u64*)(dst + b) = *(const u64*)(src + b);
  } else if ((width & 3) == 0 && ((((u64)dst) | ((u64)src)) & 3) == 0) {
    for (u32 b = 0; b < width; b += 4) *(u32*)(dst + b) = *(const u32*)(src + b);
  } else {
    for (u32 b = 0; b < width; ++b) dst[b] = src[b];
  }
}

// One output over this thread's entries (`items` of them from `first`,
// their levels `rl`, `dl`), whose slots of each level start at pos[level].
// Returns the valid slots this thread set (GDS_NEST_VALIDITY), else 0.
__device__ __forceinline__ u32 gds_nest_output(const NestTask& t, const NestOutput& out, const u32* pos, u64 first,
                                               u32 items, const Levels16& rl, const Levels16& dl) {
  const u32 kind = out.kind & 0xffu;
  const u32 j = out.level;
  if (kind == GDS_NEST_OFFSETS) {
    if (j == 0 || j > t.max_rep) return 0;
    // 32-bit offsets (List, Map), or 64-bit (LargeList: width 8). A
    // padded parent slot (under a FixedSizeList) is an empty list.
    const bool wide = out.width == 8;
    u32 parent = pos[j - 1], child = pos[j];
#pragma unroll
    for (u32 k = 0; k < GDS_NEST_ITEMS; ++k) {
      if (k >= items) break;
      const u32 r = gds_level16(rl, k), d = gds_level16(dl, k);
      const u32 slots = gds_nest_weight(t, j - 1, r, d);
      for (u32 s = 0; s < slots; ++s) {
        if (wide) ((i64*)out.dst)[parent++] = (i64)child;
        else ((i32*)out.dst)[parent++] = (i32)child;
      }
      child += gds_nest_weight(t, j, r, d);
    }
    return 0;
  }
  if (j > t.max_rep) return 0;
  u32 at = pos[j];
  if (kind == GDS_NEST_VALUES) {
    u8* const dst = (u8*)out.dst;
    const u8* const src = (const u8*)out.src;
#pragma unroll
    for (u32 k = 0; k < GDS_NEST_ITEMS; ++k) {
      if (k >= items) break;
      const u32 r = gds_level16(rl, k), d = gds_level16(dl, k);
      // Padded slots stay as the host zeroed them.
      if (gds_is_slot(t, j, r, d)) gds_copy_value(dst + (u64)at * out.width, src + (first + k) * out.width, out.width);
      at += gds_nest_weight(t, j, r, d);
    }
    return 0;
  }
  if (kind != GDS_NEST_VALIDITY && kind != GDS_NEST_BITS) return 0;
  u32* const dst = (u32*)out.dst;
  const u32* const src = (const u32*)out.src;
  BitRun b = {0, 0};
  u32 valid = 0;
#pragma unroll
  for (u32 k = 0; k < GDS_NEST_ITEMS; ++k) {
    if (k >= items) break;
    const u32 r = gds_level16(rl, k), d = gds_level16(dl, k);
    // Padded slots are null (their bits stay 0).
    if (gds_is_slot(t, j, r, d)) {
      const u64 i = first + k;
      const bool set = kind == GDS_NEST_VALIDITY ? d >= out.threshold : ((src[i >> 5] >> (i & 31)) & 1u) != 0;
      if (set) gds_bit_set(dst, b, at);
      valid += set ? 1u : 0u;
    }
    at += gds_nest_weight(t, j, r, d);
  }
  gds_bit_flush(dst, b);
  return kind == GDS_NEST_VALIDITY ? valid : 0u;
}

// Every FixedSizeList with elements among this thread's entries holds its
// size: its first element's slot is its own slot times the size (padding
// makes every list before it that size; the host checks the last by the
// totals).
__device__ __forceinline__ void gds_nest_check_fixed(const NestTask& t, u32* status, const u32* pos, u32 levels,
                                                     u64 first, u32 items, const Levels16& rl, const Levels16& dl) {
  u32 at[GDS_NEST_LEVELS];
#pragma unroll
  for (u32 j = 0; j < GDS_NEST_LEVELS; ++j) at[j] = pos[j];
  for (u32 k = 0; k < items; ++k) {
    const u32 r = gds_level16(rl, k), d = gds_level16(dl, k);
    for (u32 j = 1; j < levels; ++j) {
      const u32 size = t.level_fixed[j];
      if (size != 0 && gds_is_slot(t, j - 1, r, d) && d >= t.level_def[j] &&
          (u64)at[j] != (u64)at[j - 1] * size) {
        gds_fail(&status[0], &status[1], GDS_ERR_FIXED_SIZE, (u32)(first + k));
      }
    }
    for (u32 j = 0; j < levels; ++j) at[j] += gds_nest_weight(t, j, r, d);
  }
}

extern "C" __global__ void GDS_NEST_BOUNDS gds_nest_write(const NestTask* tasks, u32 n_tasks) {
  __shared__ u32 sums[32];
  __shared__ u32 failed;
  for (u32 k = blockIdx.y; k < n_tasks; k += gridDim.y) {
    const NestTask& t = tasks[k];
    const u32 n_tiles = gds_nest_tiles(t);
    const u8* rep = (const u8*)t.rep;
    const u8* def = (const u8*)t.def;
    const u32* const tiles = (const u32*)t.tiles;
    u32* const status = (u32*)t.status;
    const u32 levels = gds_nest_level_count(t);
    // Nothing is written after an error of the levels or the capacity
    // (gds_nest_count and gds_nest_scan ran before on the stream). Read
    // once for the block: other blocks may report sizes meanwhile.
    if (threadIdx.x == 0) failed = status[0];
    __syncthreads();
    const bool skip = failed != 0;
    __syncthreads();
    if (skip) continue;
    const bool fixed = gds_nest_has_fixed(t);
    // The leaf's innermost slots are its entries (no empty or null list,
    // no null parent of a slot, no FixedSizeList below a variable-length
    // list): its values stay where the page kernel wrote them
    // (GDS_NEST_IF_MOVED outputs are skipped; the host reads the same
    // counts and takes the page's output).
    const bool identity = status[2 + (levels - 1)] == t.entries && !gds_nest_fixed_under_variable(t);
    const NestOutput* outputs = (const NestOutput*)t.outputs;
    for (u32 tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
      u64 first, end;
      gds_nest_items(t, tile, &first, &end);
      const Levels16 rl = gds_levels16(rep, first, end), dl = gds_levels16(def, first, end);
      const u32 items = (u32)(end - first);
      // Where this thread's slots of each level start.
      u32 pos[GDS_NEST_LEVELS];
#pragma unroll
      for (u32 j = 0; j < GDS_NEST_LEVELS; ++j) {
        pos[j] = 0;
        if (j < levels) {
          u32 total = 0;
          const u32 before = gds_nest_scan_block(gds_nest_count_level(t, j, rl, dl, items), &total, sums);
          pos[j] = tiles[(u64)tile * GDS_NEST_LEVELS + j] + before;
        }
      }
      if (fixed) gds_nest_check_fixed(t, status, pos, levels, first, items, rl, dl);
      for (u32 o = 0; o < t.n_outputs; ++o) {
        const NestOutput out = outputs[o];
        if (identity && (out.kind & GDS_NEST_IF_MOVED)) continue;
        const u32 valid = gds_nest_output(t, out, pos, first, items, rl, dl);
        // A counted validity's valid slots: the block's sum, one atomic
        // per tile (the output and its word are the block's: uniform).
        const u64 word = out.src;
        if ((out.kind & 0xffu) == GDS_NEST_VALIDITY && word >= GDS_NEST_COUNT_FIRST && word < GDS_NEST_STATUS_WORDS) {
          u32 total = 0;
          gds_nest_scan_block(valid, &total, sums);
          if (threadIdx.x == 0 && total != 0) atomicAdd(&status[word], total);
        }
      }
    }
  }
}
