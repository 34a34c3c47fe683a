// gdscan GPU decoder: the structural check of Snappy pages before nvCOMP.
//
// nvCOMP's behaviour on corrupt Snappy is undefined (on the H200 a flipped
// bit made its kernel read 1.3 GB past the page). The check walks every
// element of a page's stream (literal runs skipped whole, each copy's
// offset and length checked against the bytes produced so far and the
// declared size), which proves that every read and write of the
// decompressor stays inside the page. It is the host check of
// src/decode/page/validate/ (`check_snappy`), same order of tests, same
// positions reported, moved to the GPU: on the host it cost 0.35 s of 16
// cores for SF 10 lineitem's 2.15 GB.
//
// gds_check_snappy: one warp per job of a Snappy batch (the arrays nvCOMP
// takes) whose stream is at most `max_len` bytes (the host checks the
// longer ones, see src/decode/scan/s1_plan_row_group.rs). The warp moves through the stream 32 bytes at a time: each lane
// parses the element that would start at its byte, pointer doubling over
// the lanes' "next element" links finds the elements the stream really
// has in those 32 bytes (the chain from the window's first element), a
// scan of their output lengths gives each one the bytes produced before
// it, and a ballot picks the first that fails. Elements are at least two
// bytes long, so a window holds at most 16 and four doubling rounds find
// them all. A literal run longer than the window is skipped whole. A
// refused job is pointed at `dummy`, a one-byte stream of nothing, so
// nvCOMP never reads it; its result says why: [code, at, a, b]
// (GDS_SNAPPY_*).
#include "common.cuh"

#define GDS_CHECK_WARPS (GDS_CHECK_BLOCK / 32u)
// Bytes of a stream each warp holds in shared memory (a multiple of 4, at
// least a window's 37 bytes plus 3 of alignment).
#define GDS_CHECK_STAGE 2048u
#define GDS_FULL_WARP 0xffffffffu

// The varint preamble (the uncompressed length, at most 5
// bytes). Returns the stream offset after it, or fills `r` and returns 0.
__device__ u32 gds_snappy_preamble(const u8* data, u32 len, u64 size, u32* r) {
  u64 declared = 0;
  u32 at = 0;
  for (u32 shift = 0; shift < 35; shift += 7) {
    if (at >= len) {
      r[0] = GDS_SNAPPY_TRUNCATED; r[1] = at;
      return 0;
    }
    const u8 b = data[at++];
    declared |= (u64)(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
    if (shift == 28) {
      r[0] = GDS_SNAPPY_TRUNCATED; r[1] = at;
      return 0;
    }
  }
  if (declared != size) {
    r[0] = GDS_SNAPPY_LENGTH_MISMATCH; r[2] = (u32)declared; r[3] = (u32)(declared >> 32);
    return 0;
  }
  return at;
}

// Inclusive sum over the warp's lanes of a 32-bit value (one shuffle a
// step).
__device__ __forceinline__ u32 gds_warp_inclusive_sum(u32 v, u32 lane) {
#pragma unroll
  for (u32 d = 1; d < 32; d <<= 1) {
    const u32 up = __shfl_up_sync(GDS_FULL_WARP, v, d);
    if (lane >= d) v += up;
  }
  return v;
}

// Inclusive sum over the warp's lanes of a 64-bit value.
__device__ __forceinline__ u64 gds_warp_inclusive_sum(u64 v, u32 lane) {
  for (u32 d = 1; d < 32; d <<= 1) {
    const u32 lo = __shfl_up_sync(GDS_FULL_WARP, (u32)v, d);
    const u32 hi = __shfl_up_sync(GDS_FULL_WARP, (u32)(v >> 32), d);
    if (lane >= d) v += ((u64)hi << 32) | lo;
  }
  return v;
}

// One lane's view of the element that would start at stream offset `pos`:
// where the next one starts, what it produces, and whether its bytes are
// all inside the stream.
struct SnappyElement {
  u64 next;     // offset after it (meaningless when truncated)
  u64 length;   // bytes it produces
  u32 offset;   // a copy's distance back (0 for a literal run)
  u32 copy;     // 1 for a copy
  u32 code;     // GDS_SNAPPY_OK or GDS_SNAPPY_TRUNCATED
  u32 at;       // where a truncation is reported (as the host check does)
};

// `at(p)` returns the stream's byte at offset p (< len).
template <typename At>
__device__ __forceinline__ SnappyElement gds_snappy_element(At at, u32 len, u64 pos) {
  SnappyElement e;
  e.next = ~0ull; e.length = 0; e.offset = 0; e.copy = 0; e.code = GDS_SNAPPY_OK; e.at = 0;
  const u32 tag = at(pos);
  const u32 kind = tag & 3;
  const u32 extra = kind == 0 ? ((tag >> 2) >= 60 ? (tag >> 2) - 59 : 0) : (kind == 1 ? 1 : (kind == 2 ? 2 : 4));
  if (pos + 1 + extra > len) {
    // The element's header passes the end (reported after its tag).
    e.code = GDS_SNAPPY_TRUNCATED; e.at = (u32)(pos + 1);
    return e;
  }
  u32 ext = 0;
  for (u32 b = 0; b < extra; ++b) ext |= (u32)at(pos + 1 + b) << (8 * b);
  if (kind == 0) {
    e.length = (u64)((tag >> 2) >= 60 ? ext : (tag >> 2)) + 1;
    if (pos + 1 + extra + e.length > len) {
      e.code = GDS_SNAPPY_TRUNCATED; e.at = (u32)pos;
      return e;
    }
    e.next = pos + 1 + extra + e.length;
  } else {
    e.copy = 1;
    if (kind == 1) {
      e.length = 4 + ((tag >> 2) & 7);
      e.offset = ((tag >> 5) << 8) | ext;
    } else {
      e.length = (tag >> 2) + 1;
      e.offset = ext;
    }
    e.next = pos + 1 + extra;
  }
  return e;
}

// One element of a stream under 2 GiB (every Snappy page: the page
// header's sizes are i32) as the scan's walks see it, in 32-bit
// arithmetic: a walk is a chain of these, one after the other, and 64-bit
// positions and lengths doubled its instructions.
struct SnappyHop {
  u32 next;    // offset after it; 0xffffffff when truncated
  u32 length;  // bytes it produces (meaningless when truncated)
  u32 offset;  // a copy's distance back (0 for a literal run)
  u32 copy;    // 1 for a copy
  u32 code;    // GDS_SNAPPY_OK or GDS_SNAPPY_TRUNCATED
  u32 at;      // where a truncation is reported (as the host check does)
};

// What a tag says of its element, packed so that a walk can read it from
// a table of the 256 tags (gds_snappy_spec does): the mask of its extra
// bytes in the low word; in the high word the extra bytes' count (bits
// 0-2), whether it is a literal (bit 3) whose length less one is in the
// extra bytes (bit 4), its length (a copy) or its length less one (a
// literal of at most 60 bytes) in bits 5-11, and a copy's offset bits
// above its extra byte (kind 1) in bits 12-22.
__device__ __forceinline__ u64 gds_hop_entry(u32 tag) {
  const u32 kind = tag & 3u, n = tag >> 2;
  const bool literal = kind == 0u;
  const bool long_run = literal && n >= 60u;
  const u32 extra = literal ? (long_run ? n - 59u : 0u) : (kind == 3u ? 4u : kind);
  const u32 mask = extra >= 4u ? 0xffffffffu : (1u << (8u * extra)) - 1u;
  const u32 base = literal ? (long_run ? 0u : n) : (kind == 1u ? 4u + (n & 7u) : n + 1u);
  const u32 high = kind == 1u ? (tag >> 5) << 8 : 0u;
  const u32 info = extra | (literal ? 8u : 0u) | (long_run ? 16u : 0u) | (base << 5) | (high << 12);
  return ((u64)info << 32) | mask;
}

// The element at `pos` (< len <= 0x7fffffff) from `x`, the 8 stream bytes
// from `pos` (the tag in the low byte, zero past the stream's end), and
// `entry`, its tag's gds_hop_entry: gds_snappy_element's result for the
// same bytes, from one register and with no branch on the element's kind.
// The scan's walks (snappy_scan.cu) spend most of their instructions
// here, and a warp's threads walk elements of every kind at once: a branch
// per kind makes the warp issue every kind's path.
__device__ __forceinline__ SnappyHop gds_snappy_hop_with(u64 entry, u64 x, u32 len, u32 pos) {
  const u32 mask = (u32)entry, info = (u32)(entry >> 32);
  const u32 extra = info & 7u;
  const bool literal = (info & 8u) != 0u, long_run = (info & 16u) != 0u;
  const u32 base = (info >> 5) & 0x7fu;
  const u32 ext = (u32)(x >> 8) & mask;
  // pos < 2^31: none of these sums wraps.
  const u32 head_end = pos + 1u + extra;
  // A literal's length less one (up to 2^32 - 1: compared, never added
  // unless it fits the stream).
  const u32 run = long_run ? ext : base;
  const bool head_cut = head_end > len;
  const bool body_cut = !head_cut && literal && run >= len - head_end;
  const bool cut = head_cut || body_cut;
  const bool copy = !head_cut && !literal;
  SnappyHop h;
  h.next = cut ? 0xffffffffu : head_end + (literal ? run + 1u : 0u);
  h.length = literal ? run + 1u : base;
  h.offset = copy ? (info >> 12) | ext : 0u;
  h.copy = copy ? 1u : 0u;
  h.code = cut ? GDS_SNAPPY_TRUNCATED : GDS_SNAPPY_OK;
  h.at = head_cut ? pos + 1u : (body_cut ? pos : 0u);
  return h;
}

// gds_snappy_hop_with, the tag's entry worked out in registers.
__device__ __forceinline__ SnappyHop gds_snappy_hop(u64 x, u32 len, u32 pos) {
  return gds_snappy_hop_with(gds_hop_entry((u32)x & 0xffu), x, len, pos);
}

// Copies stream bytes [base, base + n) into the warp's stage (n <=
// GDS_CHECK_STAGE), four bytes a load where the source allows; the caller
// picks base so that data + base is 4-byte aligned.
__device__ __forceinline__ void gds_stage_bytes(const u8* data, u32 base, u32 n, u8* stage, u32 lane) {
  const u32 words = n >> 2;
  const u32* src = (const u32*)(data + base);
  for (u32 w = lane; w < words; w += 32) ((u32*)stage)[w] = src[w];
  for (u32 b = (words << 2) + lane; b < n; b += 32) stage[b] = data[base + b];
  __syncwarp();
}

// Checks one stream with the whole warp; every lane returns the same result.
// The stream is read through `stage`, the warp's GDS_CHECK_STAGE bytes of
// shared memory, refilled with coalesced loads whenever the next window
// (32 element starts and their up to 5 header bytes) is not all inside it:
// parsed straight from global memory, every window paid a load's latency
// (the check took 23 ms per 128 MiB group on the H200, more than nvCOMP).
__device__ void gds_check_snappy_warp(const u8* data, u64 len64, u64 size, u32 lane, u32* r, u8* stage) {
  r[0] = GDS_SNAPPY_OK; r[1] = 0; r[2] = 0; r[3] = 0;
  if (len64 > 0xffffffffull || size > 0xffffffffull) {
    // Pages are under 2 GiB (the page header's sizes are i32).
    r[0] = GDS_SNAPPY_OVERRUN; r[2] = (u32)size;
    return;
  }
  const u32 len = (u32)len64;
  // Every lane reads the preamble (a few bytes) and agrees on it.
  u64 at = gds_snappy_preamble(data, len, size, r);
  if (r[0] != GDS_SNAPPY_OK) return;
  u64 produced = 0;
  u32 base = 0, staged = 0;  // the stage holds stream bytes [base, base + staged)
  while (at < len) {
    const u64 pos = at + lane;
    // The window reads bytes [at, min(at + 37, len)).
    const u32 need_end = len - at < 37 ? len : (u32)at + 37;
    if (at < base || need_end > base + staged) {
      const u32 mis = (u32)(((u64)(data + at)) & 3);
      base = (u32)at - ((u32)at >= mis ? mis : 0);
      staged = len - base < GDS_CHECK_STAGE ? len - base : GDS_CHECK_STAGE;
      __syncwarp();
      if ((((u64)(data + base)) & 3) == 0) {
        gds_stage_bytes(data, base, staged, stage, lane);
      } else {
        for (u32 b = lane; b < staged; b += 32) stage[b] = data[base + b];
        __syncwarp();
      }
    }
    const u8* const view = stage;
    const u32 from = base;
    SnappyElement e;
    if (pos < len) {
      e = gds_snappy_element([&](u64 p) { return (u32)view[p - from]; }, len, pos);
    } else {
      e.next = ~0ull; e.length = 0; e.offset = 0; e.copy = 0; e.code = GDS_SNAPPY_OK; e.at = 0;
    }
    // The lane of the element after this one, when inside the window
    // (32 or more: outside it, or none).
    u32 link = e.code == GDS_SNAPPY_OK && e.next - at < 32 ? (u32)(e.next - at) : 32u;
    u32 reach = (1u << lane) | (link < 32 ? 1u << link : 0u);
    for (u32 round = 0; round < 4; ++round) {
      const u32 their_reach = __shfl_sync(GDS_FULL_WARP, reach, link & 31);
      const u32 their_link = __shfl_sync(GDS_FULL_WARP, link, link & 31);
      if (link < 32) {
        reach |= their_reach;
        link = their_link;
      }
    }
    // The stream's elements in this window: the chain from lane 0, within
    // the stream.
    u32 members = __shfl_sync(GDS_FULL_WARP, reach, 0);
    if (len - at < 32) members &= (1u << (u32)(len - at)) - 1u;
    const bool member = (members >> lane) & 1u;
    const u64 mine = member ? e.length : 0;
    const u64 through = gds_warp_inclusive_sum(mine, lane);
    const u64 before = produced + through - mine;
    u32 code = GDS_SNAPPY_OK, c_at = 0, c_a = 0, c_b = 0;
    if (member) {
      if (e.code != GDS_SNAPPY_OK) {
        code = e.code; c_at = e.at;
      } else if (e.copy && (e.offset == 0 || (u64)e.offset > before)) {
        code = GDS_SNAPPY_BAD_OFFSET; c_at = (u32)pos; c_a = e.offset; c_b = (u32)before;
      } else if (before + e.length > size) {
        code = GDS_SNAPPY_OVERRUN; c_at = (u32)pos; c_a = (u32)size;
      }
    }
    const u32 failed = __ballot_sync(GDS_FULL_WARP, code != GDS_SNAPPY_OK);
    if (failed != 0) {
      const u32 first = __ffs(failed) - 1;
      r[0] = __shfl_sync(GDS_FULL_WARP, code, first);
      r[1] = __shfl_sync(GDS_FULL_WARP, c_at, first);
      r[2] = __shfl_sync(GDS_FULL_WARP, c_a, first);
      r[3] = __shfl_sync(GDS_FULL_WARP, c_b, first);
      return;
    }
    // On to the element after the window's last one.
    const u32 last = 31 - __clz(members);
    const u32 next_lo = __shfl_sync(GDS_FULL_WARP, (u32)e.next, last);
    const u32 next_hi = __shfl_sync(GDS_FULL_WARP, (u32)(e.next >> 32), last);
    produced += __shfl_sync(GDS_FULL_WARP, (u32)through, 31) |
                ((u64)__shfl_sync(GDS_FULL_WARP, (u32)(through >> 32), 31) << 32);
    at = ((u64)next_hi << 32) | next_lo;
  }
  if (produced != size) {
    r[0] = GDS_SNAPPY_SHORT; r[2] = (u32)produced; r[3] = (u32)size;
  }
}

extern "C" __global__ void __launch_bounds__(GDS_CHECK_BLOCK) gds_check_snappy(
    u64* src, u64* src_len, const u64* dst_len, u32 n_jobs, u32* results, u64 dummy, u64 max_len) {
  alignas(16) __shared__ u8 stages[GDS_CHECK_WARPS][GDS_CHECK_STAGE];
  const u32 lane = threadIdx.x & 31u;
  const u32 warp = threadIdx.x >> 5;
  for (u32 j = blockIdx.x * GDS_CHECK_WARPS + warp; j < n_jobs; j += gridDim.x * GDS_CHECK_WARPS) {
    u32 r[4];
    if (src_len[j] > max_len) {
      // Longer pages are checked by the host before they are staged: the
      // check lasts as long as its longest page.
      if (lane == 0) {
        for (u32 w = 0; w < 4; ++w) results[4 * (u64)j + w] = GDS_SNAPPY_OK;
      }
      continue;
    }
    gds_check_snappy_warp((const u8*)src[j], src_len[j], dst_len[j], lane, r, stages[warp]);
    if (lane == 0) {
      for (u32 w = 0; w < 4; ++w) results[4 * (u64)j + w] = r[w];
      if (r[0] != GDS_SNAPPY_OK) {
        src[j] = dummy;
        src_len[j] = 1;
      }
    }
  }
}

// Bytes of the varint of n (a Snappy preamble).
__device__ __forceinline__ u32 gds_varint_len(u64 n) {
  u32 head = 1;
  for (u64 rest = n >> 7; rest != 0; rest >>= 7) ++head;
  return head;
}

// Threads `first`, `first` + `stride`, ... of `stride` threads copy
// src[0, n) to dst[0, n), four bytes a thread where they can: each aligned
// word of dst from the two aligned words of src around its bytes (a funnel
// shift), reading only words that lie inside [src, src + n); the bytes
// before dst's first such word and after its last one a byte at a time (a
// byte a thread issues several times the instructions a byte).
__device__ __forceinline__ void gds_strided_copy(u8* dst, const u8* src, u64 n, u32 first_thread, u32 stride) {
  const u64 pre_max = (4u - ((u64)dst & 3u)) & 3u;
  const u64 pre = pre_max < n ? pre_max : n;  // dst + pre is aligned
  // The source of dst + pre's word lies at src + pre; its aligned word
  // starts before src when the misalignment passes pre: then start one
  // word later.
  const u64 first = pre + ((((u64)src + pre) & 3u) > pre ? 4u : 0u);
  u64 words = 0;
  u32 shift = 0;
  const u32* from = nullptr;
  if (first + 4 <= n) {
    const u64 at = (u64)src + first;
    shift = 8u * (u32)(at & 3u);
    from = (const u32*)(at & ~3ull);
    // Words of src from `from` to src's end, less the one a shifted word
    // reads ahead; no more than dst has room for.
    const u64 in_src = ((u64)src + n - (u64)from) / 4u;
    const u64 ahead = shift != 0 ? 1u : 0u;
    const u64 room = (n - first) / 4u;
    words = in_src > ahead ? in_src - ahead : 0u;
    words = words < room ? words : room;
  }
  u32* out = (u32*)(dst + first);
  for (u64 w = first_thread; w < words; w += stride) {
    const u32 lo = from[w];
    const u32 hi = shift != 0 ? from[w + 1] : 0u;
    out[w] = __funnelshift_r(lo, hi, shift);
  }
  const u64 start = words == 0 ? n : first;
  const u64 end = words == 0 ? n : first + 4u * words;
  for (u64 i = first_thread; i < start; i += stride) dst[i] = src[i];
  for (u64 i = end + first_thread; i < n; i += stride) dst[i] = src[i];
}

// The whole block copies src[0, n) to dst[0, n) (gds_strided_copy).
__device__ __forceinline__ void gds_block_copy(u8* dst, const u8* src, u64 n) {
  gds_strided_copy(dst, src, n, threadIdx.x, blockDim.x);
}

// gds_snappy_pieces: one block per piece of a split Snappy page. The host's
// walk of the page (src/decode/page/validate/, `snappy_pieces`) found
// that its output splits into 64 KiB pieces that decompress alone: an
// element starts at every multiple of 64 KiB of output and no copy reaches
// back past its piece's start (Snappy compressors work in 64 KiB
// fragments). A piece is written here as a stream of its own, the varint of
// its output length and then its elements, so that nvCOMP, which spends one
// small block on each job, works on a 1 MiB page with 16 blocks rather than
// one. Task t is GDS_PIECE_WORDS words: [src, dst, len, out_len]: the
// piece's elements (len bytes at src) go to dst after the varint; a task
// whose dst is 0 is no piece (gds_snappy_finish writes one per job).
extern "C" __global__ void __launch_bounds__(GDS_PIECES_BLOCK) gds_snappy_pieces(const u64* tasks, u32 n_tasks) {
  for (u32 t = blockIdx.x; t < n_tasks; t += gridDim.x) {
    const u64* task = tasks + (u64)GDS_PIECE_WORDS * t;
    const u8* const src = (const u8*)task[0];
    u8* const dst = (u8*)task[1];
    const u64 len = task[2];
    const u64 out_len = task[3];
    if (dst == 0) continue;
    const u32 head = gds_varint_len(out_len);
    if (threadIdx.x < head) {
      const u64 group = out_len >> (7 * threadIdx.x);
      dst[threadIdx.x] = (u8)((group & 0x7f) | (threadIdx.x + 1 < head ? 0x80 : 0));
    }
    gds_block_copy(dst + head, src, len);
  }
}
