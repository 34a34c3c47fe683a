// gdscan GPU decoder: definitions shared by every kernel source.
//
// Compiled at run time by NVRTC (no system headers). The constants (block
// size, kinds, encodings, conversions, flags, error codes) come from
// "gdscan_generated.cuh", which the Rust side writes from its own
// definitions (src/decode/kernels/task.rs), together with static_asserts that
// the structs below have exactly the Rust layout, field by field.
#ifndef GDSCAN_COMMON_CUH
#define GDSCAN_COMMON_CUH

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

// One data page to decode (filled by the host, one per page). See
// src/decode/kernels/task.rs for the meaning of every field.
struct PageTask {
  // Device addresses.
  u64 data;               // page values (v1: [[u32 rep len][rep levels]][u32 def len][def levels][values] when GDS_FLAG_V1_LEVELS)
  u64 def_levels;         // v2 definition levels (RLE hybrid, no length prefix), 0 if none
  u64 dict;               // dictionary values (PLAIN fixed width, or 16-byte views for byte arrays)
  u64 out_values;         // the column's output values (row 0 of this row group)
  u64 out_validity;       // the column's validity bitmap (zeroed, 4-byte words), 0 if none
  u64 scratch;            // per-page scratch (byte-array offsets, or the row map)
  u64 view_buffer_base;   // address that Utf8View offsets are relative to
  u64 rep_levels;         // nested leaf, v2: repetition levels (RLE hybrid, no length prefix), 0 if none
  u64 out_rep;            // nested leaf: gds_decode_pages writes one byte per level entry, from the page's first entry; 0 if none
  u64 out_def;            // as out_rep for the definition levels
  // Sizes and modes.
  u32 data_len;
  u32 def_len;
  u32 num_values;         // levels in the page (= rows for flat columns)
  u32 dict_count;
  u32 dict_len;
  u32 out_row;            // first output row of this page
  u32 out_rows;           // rows the output buffers hold
  u32 kind;
  u32 encoding;
  u32 flags;
  u32 max_def;
  u32 conversion;
  u32 type_length;        // input width in bytes (physical type, FLBA length, 16 for dictionary views)
  u32 out_width;          // output bytes per value
  u32 view_buffer_index;
  u32 scratch_len;        // bytes
  // Written by the kernels.
  u32 error;
  u32 error_index;
  u32 null_count;
  u32 value_count;
  u32 plain_count;
  // Inputs with GDS_FLAG_ROW_WINDOW: the page's rows [row_skip, row_skip + row_take) are written.
  u32 row_skip;
  u32 row_take;
  u32 value_bytes;        // written by gds_dba_sizes: bytes of a DELTA_BYTE_ARRAY page's values
  u32 rep_len;            // bytes at rep_levels
  u32 max_rep;            // the column's maximum repetition level (nested leaves)
};

// One byte-array dictionary page: its PLAIN values become 16-byte views
// (or decimals: gds_byte_array_slot bytes an entry).
struct DictTask {
  u64 data;               // dictionary page values (PLAIN byte arrays), decompressed
  u64 out_views;          // gds_byte_array_slot(conversion) * count bytes, 16-byte aligned
  u64 view_buffer_base;   // address that the views' offsets are relative to
  u32 data_len;
  u32 count;              // entries announced by the dictionary page header
  u32 view_buffer_index;
  u32 error;              // written by the kernel
  u32 found;              // entries found by the walk (written by the kernel)
  u32 conversion;         // GDS_CONV_COPY: views; GDS_CONV_BE_TO_DECIMAL128/256: decimals
};

// One nested leaf's column chunk for the nesting kernels (nest.cu); see
// src/decode/kernels/nest.rs.
struct NestTask {
  u64 rep;        // u8 per entry, 0: all 0
  u64 def;        // u8 per entry, 0: all 0
  u64 tiles;      // GDS_NEST_LEVELS u32 per tile: slots in the tile, then slots before it
  u64 outputs;    // NestOutput[n_outputs]
  u64 status;     // GDS_NEST_STATUS_WORDS u32: error, error_index, slots per level, counted valid slots (zeroed)
  u32 entries;
  u32 n_outputs;
  u32 max_rep;
  u32 max_def;
  u32 level_def[8];  // GDS_NEST_LEVELS: level j's slots are the entries with rep <= j && def >= level_def[j]
  u32 level_fixed[8];  // per level: the FixedSizeList size whose elements it holds (padding), 0: none
  u32 capacity[8];     // per level: the most slots its outputs hold
};

// One output of a NestTask.
struct NestOutput {
  u64 dst;
  u64 src;
  u32 kind;       // GDS_NEST_OFFSETS, _VALIDITY, _VALUES, _BITS
  u32 level;
  u32 threshold;
  u32 width;
};

// offsetof for the layout asserts: NVRTC's front end has no
// __builtin_offsetof (and no <cstddef>); __INTADDR__ is the EDG intrinsic its
// offsetof is made of. Other compilers (nvcc, clang) take the builtin.
#if defined(__CUDACC_RTC__)
#define GDS_OFFSETOF(T, field) __INTADDR__(&(((T*)0)->field))
#else
#define GDS_OFFSETOF(T, field) __builtin_offsetof(T, field)
#endif

#include "gdscan_generated.cuh"

static_assert(GDS_ITEMS * (GDS_BLOCK / 32) == 32, "one warp scans the per-warp counts of a tile");
static_assert(GDS_BLOCK % 32 == 0, "whole warps");

#define GDS_TILE (GDS_BLOCK * GDS_ITEMS)
#define GDS_WARPS (GDS_BLOCK / 32)
#define GDS_MAX_RUNS (GDS_TILE + 1)
#define GDS_FULL_MASK 0xffffffffu
#define GDS_I32_MAX 0x7fffffffu

// ---------------------------------------------------------------- loads

// Little-endian loads from byte addresses of any alignment (page sections
// start wherever the level section ends).
__device__ __forceinline__ u32 gds_ld_u32(const u8* p) {
  if ((((u64)p) & 3) == 0) return *(const u32*)p;
  return (u32)p[0] | ((u32)p[1] << 8) | ((u32)p[2] << 16) | ((u32)p[3] << 24);
}

__device__ __forceinline__ u16 gds_ld_u16(const u8* p) {
  if ((((u64)p) & 1) == 0) return *(const u16*)p;
  return (u16)((u32)p[0] | ((u32)p[1] << 8));
}

__device__ __forceinline__ u64 gds_ld_u64(const u8* p) {
  if ((((u64)p) & 7) == 0) return *(const u64*)p;
  if ((((u64)p) & 3) == 0) return (u64)(*(const u32*)p) | ((u64)(*(const u32*)(p + 4)) << 32);
  return (u64)gds_ld_u32(p) | ((u64)gds_ld_u32(p + 4) << 32);
}

__device__ __forceinline__ uint4 gds_ld_16(const u8* p) {
  if ((((u64)p) & 15) == 0) return *(const uint4*)p;
  uint4 v;
  v.x = gds_ld_u32(p);
  v.y = gds_ld_u32(p + 4);
  v.z = gds_ld_u32(p + 8);
  v.w = gds_ld_u32(p + 12);
  return v;
}

// 16-byte store; `p` is 16-byte aligned when the output base is (the host
// guarantees it for 16-byte outputs), otherwise 4 words.
__device__ __forceinline__ void gds_st_16(u8* p, uint4 v) {
  if ((((u64)p) & 15) == 0) {
    *(uint4*)p = v;
  } else {
    u32* w = (u32*)p;
    w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
  }
}

// Records the first error of a page (0 = none): later ones keep the first.
__device__ __forceinline__ void gds_fail(u32* error, u32* error_index, u32 code, u32 index) {
  if (atomicCAS(error, 0u, code) == 0u) *error_index = index;
}

// ------------------------------------------------------- page sections

// Where a page's levels and values lie. Computed identically by every thread
// (a pure function of the task), so errors found here are block-uniform.
struct Sections {
  const u8* levels;  // definition levels (RLE hybrid), or 0
  u32 levels_len;
  const u8* values;  // the values section
  u32 values_len;
};

__device__ __forceinline__ u32 gds_sections(const PageTask& t, Sections& s) {
  const u8* data = (const u8*)t.data;
  s.levels = 0;
  s.levels_len = 0;
  s.values = data;
  s.values_len = t.data_len;
  if (t.data_len != 0 && t.data == 0) return GDS_ERR_BAD_TASK;
  if (t.max_def == 0) return 0;
  if (t.flags & GDS_FLAG_V1_LEVELS) {
    // A nested column's repetition levels first: skipped here.
    u32 at = 0;
    if (t.flags & GDS_FLAG_V1_REP_LEVELS) {
      if (t.data_len < 4) return GDS_ERR_LEVELS_LENGTH;
      const u32 rep_len = gds_ld_u32(data);
      if (rep_len > t.data_len - 4) return GDS_ERR_LEVELS_LENGTH;
      at = 4 + rep_len;
    }
    if (t.data_len - at < 4) return GDS_ERR_LEVELS_LENGTH;
    u32 len = gds_ld_u32(data + at);
    if (len > t.data_len - at - 4) return GDS_ERR_LEVELS_LENGTH;
    s.levels = data + at + 4;
    s.levels_len = len;
    s.values = data + at + 4 + len;
    s.values_len = t.data_len - at - 4 - len;
  } else {
    if (t.def_len != 0 && t.def_levels == 0) return GDS_ERR_BAD_TASK;
    s.levels = (const u8*)t.def_levels;
    s.levels_len = t.def_len;
  }
  return 0;
}

// Bits needed for values up to `max` (0 for 0).
__device__ __forceinline__ u32 gds_bit_width(u32 max) { return max == 0 ? 0 : 32 - __clz(max); }

// ------------------------------------- RLE / bit-packed hybrid streams

// A cursor over one hybrid stream (definition levels, dictionary indices or
// RLE booleans). It lives in shared memory and only one warp advances it.
struct RunCursor {
  const u8* base;
  u32 len;        // stream bytes
  u32 pos;        // next run header
  u32 bw;         // bit width (0..32)
  u32 packed;     // current run: bit-packed?
  u32 payload;    // current run: RLE value, or byte offset of its packed bits
  u32 pad;
  u64 run_start;  // current run: first item index
  u64 run_end;    // current run: one past its last item index
};

// The runs that cover one tile of items, as a table all threads search.
struct RunTable {
  u32 start[GDS_MAX_RUNS];
  u32 payload[GDS_MAX_RUNS];
  u8 packed[GDS_MAX_RUNS];
  u32 count;
  u32 covered;    // items below this index (and at or above the tile's start) are covered
};

__device__ __forceinline__ void gds_cursor_init(RunCursor& c, const u8* base, u32 len, u32 bw) {
  c.base = base;
  c.len = base == 0 ? 0 : len;
  c.pos = 0;
  c.bw = bw;
  c.packed = 0;
  c.payload = 0;
  c.pad = 0;
  c.run_start = 0;
  c.run_end = 0;
}

// A run header of a hybrid stream as the fill reads it at byte q: the
// run's items (0: a run that adds no table entry), where the next header
// starts, its RLE value or the byte offset of its packed bits, and whether
// the stream ends at q instead (a header cut short or over five bytes, a
// zero header, an RLE value cut short: the fill then stops, its position
// at the stream's end).
struct GdsRunHeader {
  u64 count;
  u32 next;
  u32 payload;
  u32 packed;
  u32 ends;
};

// The header at byte q of a stream of `len` bytes and bit width `bw`, from
// its bytes q..q+11 (those before `len`; zero past it): x holds bytes 0..7,
// y bytes 8..11. A header is at most five bytes and an RLE value four.
__device__ __forceinline__ GdsRunHeader gds_run_header(u64 x, u32 y, u32 q, u32 len, u32 bw) {
  GdsRunHeader e;
  e.count = 0;
  e.next = len;
  e.payload = 0;
  e.packed = 0;
  e.ends = 1;
  const u32 avail = q < len ? len - q : 0u;
  u64 h = 0;
  u32 header_len = 0;
  bool done = false;
#pragma unroll
  for (u32 b = 0; b < 5; ++b) {
    if (!done && b < avail) {
      const u32 c = (u32)(x >> (8 * b)) & 0xffu;
      h |= (u64)(c & 0x7fu) << (7 * b);
      header_len = b + 1;
      done = (c & 0x80u) == 0;
    }
  }
  // A zero header (an empty RLE run) ends the stream, as arrow-rs and
  // Arrow C++ read it (writers that pad pages leave zeros behind).
  if (!done || h == 0) return e;
  const u32 p = q + header_len;
  if (h & 1) {
    const u64 groups = h >> 1;
    e.count = groups * 8;
    e.packed = 1;
    e.payload = p;
    // A truncated last run is tolerated here; reading an item past the
    // stream's end is caught when the item is extracted.
    const u64 bytes = groups * (u64)bw;
    e.next = bytes > (u64)(len - p) ? len : p + (u32)bytes;
  } else {
    const u32 value_bytes = (bw + 7) >> 3;
    if (value_bytes > len - p) return e;
    // The bytes after the header (it is one to five bytes long).
    const u64 rest = (x >> (8 * header_len)) | ((u64)y << (64 - 8 * header_len));
    e.count = h >> 1;
    e.payload = value_bytes == 0 ? 0u : (u32)rest & (0xffffffffu >> (32 - 8 * value_bytes));
    e.next = p + value_bytes;
  }
  e.ends = 0;
  return e;
}

// The aligned word at `at` of a stream ending at `end` (addresses): whole
// when it lies before the end, else its bytes before the end (zero past
// it), so nothing past the stream is read. A word that starts before the
// stream lies in the stream's allocation (an allocation starts on a 4-byte
// boundary, so not after the word's first byte).
__device__ __forceinline__ u32 gds_word_before(u64 at, u64 end) {
  if (at + 4 <= end) return *(const u32*)at;
  u32 w = 0;
  for (u32 b = 0; b < 4 && at + b < end; ++b) w |= (u32)*(const u8*)(at + b) << (8 * b);
  return w;
}

// Fills `r` with the runs covering items [lo, hi), continuing from where the
// cursor stopped (tiles are visited in order, so the previous fill ended at or
// past `lo`, unless the stream ended). Called by every lane of ONE warp.
// Bounded: every header consumes at least one byte and every table entry
// covers at least one item of the tile, so at most GDS_MAX_RUNS entries and
// `len` bytes.
//
// The walk is a chain (each header's place depends on the run before it)
// that one warp runs while the block waits at the next barrier. Read by
// one thread, each header is a chain of dependent loads and branches, and
// columns of a few distinct values in short runs (TPC-H's flags) have dozens
// of runs a tile, so the other warps would wait behind that thread
// (BENCHMARKS.md has the profile). So the warp reads the 32
// header places from the cursor on at once (16 aligned words, a lane each,
// handed out by shuffles), every lane reads a header at its own place as if
// one started there, and the chain is then followed from lane to lane by
// shuffles for as long as it stays among those places; a run that jumps
// past them (long bit-packed runs: most columns' tiles have two or three)
// starts the next read where it lands. The cursor is copied into registers
// and written back once, by lane 0, which also writes the table.
// Entry n of table `r`: a run from item `start` (lane 0 writes it).
__device__ __forceinline__ void gds_runs_put(RunTable& r, u32 n, u32 lane, u64 start, u32 payload, u32 packed) {
  if (lane != 0) return;
  r.start[n] = (u32)start;
  r.payload[n] = payload;
  r.packed[n] = (u8)packed;
}

__device__ __noinline__ void gds_runs_fill(RunCursor& cursor, RunTable& r, u64 lo, u64 hi) {
  const u32 lane = threadIdx.x & 31;
  const u8* const base = cursor.base;
  const u32 len = cursor.len, bw = cursor.bw;
  u32 pos = cursor.pos, packed = cursor.packed, payload = cursor.payload;
  u64 run_start = cursor.run_start, run_end = cursor.run_end;
  u32 n = 0;
  if (run_end > lo) gds_runs_put(r, n++, lane, run_start, payload, packed);
  const u64 stream_end = (u64)base + len;
  // Whether the tile needs another run (and the stream has one).
  auto more = [&]() { return run_end < hi && n < GDS_MAX_RUNS && pos < len; };
  while (more()) {
    // Bytes pos - d .. pos - d + 63 (d < 4: the first aligned word), lane l
    // holding word l of them for l < 16.
    const u64 first = ((u64)base + pos) & ~3ull;
    const u32 d = (u32)((u64)base + pos - first);
    const u32 word = lane < 16 ? gds_word_before(first + 4ull * lane, stream_end) : 0u;
    // This lane's place pos + lane: its bytes from there on, twelve of them.
    const u32 at = d + lane;
    const u32 w0 = __shfl_sync(GDS_FULL_MASK, word, (int)(at >> 2));
    const u32 w1 = __shfl_sync(GDS_FULL_MASK, word, (int)(at >> 2) + 1);
    const u32 w2 = __shfl_sync(GDS_FULL_MASK, word, (int)(at >> 2) + 2);
    const u32 w3 = __shfl_sync(GDS_FULL_MASK, word, (int)(at >> 2) + 3);
    const u32 shift = 8 * (at & 3);
    const u64 x = (u64)__funnelshift_r(w0, w1, shift) | ((u64)__funnelshift_r(w1, w2, shift) << 32);
    const u32 y = __funnelshift_r(w2, w3, shift);
    const GdsRunHeader mine = gds_run_header(x, y, pos + lane, len, bw);
    const u32 window = pos;
    // Along the chain while it stays among the 32 places read.
    u32 from = 0;
    while (true) {
      // `ends` and `packed` in one shuffle.
      const u32 flags = __shfl_sync(GDS_FULL_MASK, mine.ends | (mine.packed << 1), (int)from);
      const u32 next = __shfl_sync(GDS_FULL_MASK, mine.next, (int)from);
      const u32 count_lo = __shfl_sync(GDS_FULL_MASK, (u32)mine.count, (int)from);
      const u32 count_hi = __shfl_sync(GDS_FULL_MASK, (u32)(mine.count >> 32), (int)from);
      const u32 run_payload = __shfl_sync(GDS_FULL_MASK, mine.payload, (int)from);
      if (flags & 1u) {
        pos = len;
        break;
      }
      pos = next;
      const u64 count = ((u64)count_hi << 32) | count_lo;
      if (count != 0) {
        run_start = run_end;
        run_end += count;
        packed = flags >> 1;
        payload = run_payload;
        gds_runs_put(r, n++, lane, run_start, payload, packed);
      }
      if (!more() || pos - window >= 32) break;
      from = pos - window;
    }
  }
  // Every lane has read the cursor (the shuffles, or here) before lane 0
  // writes it back.
  __syncwarp();
  if (lane == 0) {
    r.count = n;
    r.covered = (u32)(run_end < hi ? run_end : hi);
    cursor.pos = pos;
    cursor.packed = packed;
    cursor.payload = payload;
    cursor.run_start = run_start;
    cursor.run_end = run_end;
  }
}

// The run of table `r` that holds item `i` (the last whose start is at or
// before it), in `run`; false when the table does not reach item `i`.
__device__ __forceinline__ bool gds_runs_find(const RunTable& r, u32 i, u32& run) {
  if (i >= r.covered || r.count == 0) return false;
  u32 lo = 0, hi = r.count;
  while (hi - lo > 1) {
    const u32 mid = (lo + hi) >> 1;
    if (r.start[mid] <= i) lo = mid; else hi = mid;
  }
  run = lo;
  return true;
}

// The value of item `i` (inside the tile the table was filled for). False
// when the stream does not reach the item.
__device__ __forceinline__ bool gds_runs_get(const RunCursor& c, const RunTable& r, u32 i, u32& out) {
  u32 lo;
  if (!gds_runs_find(r, i, lo)) return false;
  if (!r.packed[lo]) { out = r.payload[lo]; return true; }
  const u32 bw = c.bw;
  const u64 bit = (u64)(i - r.start[lo]) * bw;
  u64 byte = (u64)r.payload[lo] + (bit >> 3);
  u32 sh = (u32)(bit & 7);
  u32 mask = bw >= 32 ? 0xffffffffu : ((1u << bw) - 1u);
  if (sh + bw <= 32 && byte + 8 <= (u64)c.len) {
    // The 32 bits from the item's first byte, out of the two aligned words
    // that hold them: both lie in the stream's allocation (the stream
    // holds the 8 bytes from that byte on, and an allocation starts on a
    // 4-byte boundary, so not after the first word).
    const u64 at = (u64)c.base + byte;
    const u32* w = (const u32*)(at & ~3ull);
    const u32 bits = __funnelshift_r(w[0], w[1], (u32)(at & 3) * 8);
    out = (bits >> sh) & mask;
    return true;
  }
  u32 nbytes = (sh + bw + 7) >> 3;
  if (byte + nbytes > (u64)c.len) return false;
  u64 acc = 0;
  for (u32 b = 0; b < nbytes; ++b) acc |= (u64)c.base[byte + b] << (8 * b);
  out = (u32)(acc >> sh) & mask;
  return true;
}

// Builds the 16-byte Utf8View/BinaryView of `len` bytes at `p`.
__device__ __forceinline__ uint4 gds_make_view(const u8* p, u32 len, u32 buffer_index, u32 offset) {
  uint4 v;
  v.x = len;
  if (len <= 12) {
    // Unrolled with constant indices so that `w` stays in registers.
    u32 w[3] = {0, 0, 0};
#pragma unroll
    for (u32 b = 0; b < 12; ++b) {
      if (b < len) w[b >> 2] |= (u32)p[b] << (8 * (b & 3));
    }
    v.y = w[0];
    v.z = w[1];
    v.w = w[2];
  } else {
    v.y = (u32)p[0] | ((u32)p[1] << 8) | ((u32)p[2] << 16) | ((u32)p[3] << 24);
    v.z = buffer_index;
    v.w = offset;
  }
  return v;
}

// Bytes `first` to `first + 16` of the little-endian, sign-extended value
// of the big-endian two's complement of `len` bytes at `src` (0 to 32; 0 is
// zero, as arrow-rs reads an empty decimal).
__device__ __forceinline__ uint4 gds_be_to_le_part(const u8* src, u32 len, u32 first) {
  const u64 fill = (len > 0 && (src[0] & 0x80)) ? 0xffull : 0ull;
  u64 lo = 0, hi = 0;
#pragma unroll
  for (u32 k = 0; k < 16; ++k) {
    const u32 b = first + k;
    const u64 byte = b < len ? (u64)src[len - 1 - b] : fill;
    if (k < 8) lo |= byte << (8 * k); else hi |= byte << (8 * (k - 8));
  }
  return make_uint4((u32)lo, (u32)(lo >> 32), (u32)hi, (u32)(hi >> 32));
}

// Big-endian two's complement of `len` bytes (0 to 16) -> little-endian,
// sign-extended 128 bits.
__device__ __forceinline__ uint4 gds_be_to_128(const u8* src, u32 len) { return gds_be_to_le_part(src, len, 0); }

// Bytes one BYTE_ARRAY value takes in its column's output and in its
// dictionary's slots: 32 for a Decimal256, 16 for a view or a Decimal128.
__device__ __forceinline__ u32 gds_byte_array_slot(u32 conversion) {
  return conversion == GDS_CONV_BE_TO_DECIMAL256 ? 32u : 16u;
}

// Writes the output of one byte-array value of `len` bytes at `p` to its
// slot `dst` (gds_byte_array_slot bytes, 16-byte aligned): its
// Utf8View/BinaryView (`conversion` GDS_CONV_COPY; offsets from `base` in
// buffer `buffer_index`), its Decimal128 (GDS_CONV_BE_TO_DECIMAL128) or its
// Decimal256 (GDS_CONV_BE_TO_DECIMAL256). Sets *error (and writes zero)
// when the view's offset does not fit 31 bits or the decimal passes its
// width.
__device__ __forceinline__ void gds_byte_array_store(u8* dst, const u8* p, u32 len, u32 conversion,
                                                     u32 buffer_index, u64 base, u32* error) {
  const uint4 zero = make_uint4(0, 0, 0, 0);
  if (conversion == GDS_CONV_BE_TO_DECIMAL256) {
    const bool fits = len <= 32;
    if (!fits) *error = GDS_ERR_DECIMAL_LENGTH;
    gds_st_16(dst, fits ? gds_be_to_le_part(p, len, 0) : zero);
    gds_st_16(dst + 16, fits ? gds_be_to_le_part(p, len, 16) : zero);
    return;
  }
  if (conversion == GDS_CONV_BE_TO_DECIMAL128) {
    const bool fits = len <= 16;
    if (!fits) *error = GDS_ERR_DECIMAL_LENGTH;
    gds_st_16(dst, fits ? gds_be_to_128(p, len) : zero);
    return;
  }
  const u64 addr = (u64)p;
  if (len > 12 && (addr < base || addr - base > GDS_I32_MAX || len > GDS_I32_MAX)) {
    *error = GDS_ERR_VIEW_OFFSET;
    gds_st_16(dst, zero);
    return;
  }
  gds_st_16(dst, gds_make_view(p, len, buffer_index, (u32)(addr - base)));
}

// Zeroes one byte-array output slot (a null row, or a value not found).
__device__ __forceinline__ void gds_byte_array_zero(u8* dst, u32 conversion) {
  gds_st_16(dst, make_uint4(0, 0, 0, 0));
  if (conversion == GDS_CONV_BE_TO_DECIMAL256) gds_st_16(dst + 16, make_uint4(0, 0, 0, 0));
}

#endif  // GDSCAN_COMMON_CUH
