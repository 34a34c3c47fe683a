// gdscan GPU decoder: the structural check of Snappy pages before nvCOMP.
//
// nvCOMP's behaviour on corrupt Snappy is undefined (on the H200 a flipped
// bit made its kernel read 1.3 GB past the page). The check walks every
// element of a page's stream (literal runs skipped whole, each copy's
// offset and length checked against the bytes produced so far and the
// declared size), which proves that every read and write of the
// decompressor stays inside the page. It is the host check of
// src/decode/page/validate.rs (`check_snappy`), same order of tests, same
// positions reported, moved to the GPU: on the host it cost 0.35 s of 16
// cores for SF 10 lineitem's 2.15 GB.
//
// gds_check_snappy: one block per job of a Snappy batch (the arrays nvCOMP
// takes). The block stages GDS_CHECK_CHUNK bytes of the stream at a time
// in shared memory; thread 0 walks the elements there. A refused job is
// pointed at `dummy`, a one-byte stream of nothing, so nvCOMP never reads
// it; its result says why: [code, at, a, b] (GDS_SNAPPY_*).
#include "common.cuh"

#define GDS_CHECK_CHUNK 8192u

struct CheckShared {
  u8 stage[GDS_CHECK_CHUNK];
  u32 at;        // next element (offset in the stream)
  u64 produced;  // bytes the elements before it produce
  u32 done;      // refused, or the end reached
  u32 result[4];
};

__device__ __forceinline__ u32 gds_le_bytes(const u8* p, u32 n) {
  u32 v = 0;
  for (u32 b = 0; b < n; ++b) v |= (u32)p[b] << (8 * b);
  return v;
}

// Thread 0: the varint preamble (the uncompressed length, at most 5
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

extern "C" __global__ void __launch_bounds__(GDS_CHECK_BLOCK) gds_check_snappy(
    u64* src, u64* src_len, const u64* dst_len, u32 n_jobs, u32* results, u64 dummy) {
  __shared__ CheckShared sh;
  for (u32 j = blockIdx.x; j < n_jobs; j += gridDim.x) {
    const u8* const data = (const u8*)src[j];
    const u64 len64 = src_len[j];
    const u64 size = dst_len[j];
    if (threadIdx.x == 0) {
      sh.result[0] = GDS_SNAPPY_OK; sh.result[1] = 0; sh.result[2] = 0; sh.result[3] = 0;
      sh.produced = 0;
      sh.done = 0;
      if (len64 > 0xffffffffull || size > 0xffffffffull) {
        // Pages are under 2 GiB (the page header's sizes are i32).
        sh.result[0] = GDS_SNAPPY_OVERRUN; sh.result[2] = (u32)size;
        sh.done = 1;
      } else {
        sh.at = gds_snappy_preamble(data, (u32)len64, size, sh.result);
        if (sh.result[0] != GDS_SNAPPY_OK) sh.done = 1;
      }
    }
    __syncthreads();
    const u32 len = (u32)len64;
    while (true) {
      const u32 at = sh.at;
      const bool stop = sh.done != 0 || at >= len;
      __syncthreads();
      if (stop) break;
      const u32 chunk = len - at < GDS_CHECK_CHUNK ? len - at : GDS_CHECK_CHUNK;
      const bool last = at + chunk == len;
      for (u32 b = threadIdx.x; b < chunk; b += blockDim.x) sh.stage[b] = data[at + b];
      __syncthreads();
      if (threadIdx.x == 0) {
        u32 p = 0;
        u64 produced = sh.produced;
        u32* const r = sh.result;
        while (p < chunk) {
          const u8* const q = sh.stage + p;
          const u32 tag = q[0];
          const u32 kind = tag & 3;
          const u32 extra = kind == 0 ? ((tag >> 2) >= 60 ? (tag >> 2) - 59 : 0) : (kind == 1 ? 1 : (kind == 2 ? 2 : 4));
          if (1 + extra > chunk - p) {
            // The element's header passes the chunk: the next chunk starts
            // at it; at the stream's end it is truncated (after its tag).
            if (last) { r[0] = GDS_SNAPPY_TRUNCATED; r[1] = at + p + 1; }
            break;
          }
          const u32 start = at + p;
          u64 elen;
          u32 offset = 0;
          if (kind == 0) {
            elen = (u64)((tag >> 2) >= 60 ? gds_le_bytes(q + 1, extra) : (tag >> 2)) + 1;
            if ((u64)start + 1 + extra + elen > (u64)len) { r[0] = GDS_SNAPPY_TRUNCATED; r[1] = start; break; }
            p += 1 + extra + (u32)elen;
          } else {
            if (kind == 1) {
              elen = 4 + ((tag >> 2) & 7);
              offset = ((tag >> 5) << 8) | q[1];
            } else {
              elen = (tag >> 2) + 1;
              offset = gds_le_bytes(q + 1, extra);
            }
            p += 1 + extra;
            if (offset == 0 || (u64)offset > produced) {
              r[0] = GDS_SNAPPY_BAD_OFFSET; r[1] = start; r[2] = offset; r[3] = (u32)produced;
              break;
            }
          }
          produced += elen;
          if (produced > size) { r[0] = GDS_SNAPPY_OVERRUN; r[1] = start; r[2] = (u32)size; break; }
        }
        // p may pass the chunk (a literal run skipped whole): the next
        // chunk starts after it.
        sh.at = at + p;
        sh.produced = produced;
        if (r[0] != GDS_SNAPPY_OK || (last && at + p >= len)) sh.done = 1;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      u32* const r = sh.result;
      if (r[0] == GDS_SNAPPY_OK && sh.produced != size) {
        r[0] = GDS_SNAPPY_SHORT; r[2] = (u32)sh.produced; r[3] = (u32)size;
      }
      for (u32 w = 0; w < 4; ++w) results[4 * (u64)j + w] = r[w];
      if (r[0] != GDS_SNAPPY_OK) {
        src[j] = dummy;
        src_len[j] = 1;
      }
    }
    // sh is reused by the block's next job.
    __syncthreads();
  }
}
