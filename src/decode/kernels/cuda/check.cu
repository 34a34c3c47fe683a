// gdscan GPU decoder: the pieces of Snappy streams the decoder checks.
//
// nvCOMP's behaviour on corrupt Snappy is undefined (on the H200 a flipped
// bit made its kernel read 1.3 GB past the page). So every element of a
// page's stream is walked before nvCOMP sees it (literal runs skipped
// whole, each copy's offset and length checked against the bytes produced
// so far and the declared size), which proves that every read and write of
// the decompressor stays inside the page. The walk is the host check of
// src/decode/page/validate.rs (`check_snappy`), same order of tests, same
// positions reported; snappy_scan.cu runs it on the GPU, a thread per
// segment of every stream. This file holds what the walk reads (the
// preamble and one element) and gds_snappy_pieces, which writes each piece
// of a split page as a stream of its own.
#include "common.cuh"

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

// The element that would start at stream offset `pos`:
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

// gds_snappy_pieces: one block per piece of a split Snappy page. The host's
// walk of the page (src/decode/page/validate.rs, snappy_block_starts) found
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
    u32 head = 1;
    for (u64 rest = out_len >> 7; rest != 0; rest >>= 7) ++head;
    if (threadIdx.x < head) {
      const u64 group = out_len >> (7 * threadIdx.x);
      dst[threadIdx.x] = (u8)((group & 0x7f) | (threadIdx.x + 1 < head ? 0x80 : 0));
    }
    for (u64 i = threadIdx.x; i < len; i += blockDim.x) dst[head + i] = src[i];
  }
}
