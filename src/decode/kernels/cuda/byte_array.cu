// gdscan GPU decoder: byte-array preparation kernels.
//
// Both kernels walk a chain of 4-byte length prefixes (PLAIN BYTE_ARRAY
// values): the position of value i+1 depends on the length of value i, a
// chain of dependent loads that cannot be split without knowing the
// lengths. Walked straight from global memory it costs a load latency per
// value (measured on the H200 with Nsight Compute: 21 ms for one SF 1
// lineitem row group's PLAIN string pages, 11 ms for its string
// dictionaries, against 0.6 ms for every page's decode). So one block per
// page stages the section in shared memory, GDS_WALK_CHUNK bytes at a
// time with coalesced loads by every thread, and the block finds the
// chain through the staged bytes in parallel (gds_walk_prefixes says how:
// speculative walks per segment, joined by one thread a segment at a
// time). A chunk always starts at a length prefix; a value longer than the
// rest of the chunk is skipped without being staged.
//
// These one-block walks are the `apart` and `together` modes; the default,
// byte_array_spread.cu, gives every chunk of every section a block of its
// own and shares gds_walk_chain with them.
//
// gds_byte_array_walk: for every PLAIN BYTE_ARRAY page of a task array
// (one block per task, the others return at once), writes each value's
// offset to the page's scratch: scratch[i] = offset of value i's length
// prefix in the values section, scratch[n] = the end of the last whole
// value, n = plain_count. Launch it before gds_decode_pages, on the same
// stream.
//
// gds_dict_views: one block per byte-array dictionary page (DictTask): the
// walk writes each entry's length and start into its own view slot, then
// every thread turns its entries into 16-byte Utf8View/BinaryView views
// pointing into the dictionary's buffer (or, for a BYTE_ARRAY decimal
// column, into Decimal128 or 32-byte Decimal256 values). Pages then gather
// these slots like fixed-width dictionary values.
#include "common.cuh"

// Bytes staged in shared memory per step of a walk: the generated header
// sets it (task.rs, from KernelConfig::string_chunk).
#ifndef GDS_WALK_CHUNK
#define GDS_WALK_CHUNK 16384u
#endif
// Most threads a walking block may have (its per-segment arrays).
#define GDS_WALK_MAX_THREADS 256u
// A chain position that is no position: the chain ended before.
#define GDS_WALK_END 0xffffffffu
// How a segment's walk ended inside it (seg_term).
#define GDS_WALK_GOES_ON 0u  // it left the segment (seg_exit is where)
#define GDS_WALK_DEAD 1u     // a length past the section's end at seg_exit
#define GDS_WALK_CUT 2u      // a length prefix cut by the chunk's end at seg_exit

struct WalkShared {
  // Four bytes more than a chunk: the spread walk reads a prefix that
  // begins in its chunk and ends in the next.
  u8 stage[GDS_WALK_CHUNK + 4];
  // Bit p: a walk of the chunk visited a length prefix at chunk offset p.
  u32 bits[GDS_WALK_CHUNK / 32];
  // Per segment: where its walk left it (or ended), how, where the real
  // chain enters it, and the values before it in the chunk.
  u32 seg_exit[GDS_WALK_MAX_THREADS];
  u32 seg_term[GDS_WALK_MAX_THREADS];
  u32 seg_entry[GDS_WALK_MAX_THREADS];
  u32 seg_start[GDS_WALK_MAX_THREADS];  // where its speculative walk began (GDS_WALK_END: nowhere)
  u32 warp_sums[GDS_WALK_MAX_THREADS / 32];
  u32 pos;    // next length prefix (offset in the section)
  u32 count;  // values found so far
  u32 done;   // a value ran past the section: the walk ends
  u32 chunk_end;  // where the chunk's chain ended: its next prefix (chunk offset)
  u32 chunk_term; // and how (GDS_WALK_*)
  u32 stop_at;    // chunk offset of the value max_count, when the chunk holds it
};

__device__ __forceinline__ u32 gds_stage_u32(const u8* q) {
  return (u32)q[0] | ((u32)q[1] << 8) | ((u32)q[2] << 16) | ((u32)q[3] << 24);
}
// Bitmaps of prefix positions (a bit per byte), in shared or global
// memory; one thread changes a given word at a time.
__device__ __forceinline__ bool gds_bits_get(const u32* w, u32 p) { return (w[p >> 5] >> (p & 31)) & 1u; }
// The mask of bits [from, to) within the word holding `from` (to > from),
// and how many of them.
__device__ __forceinline__ u32 gds_bits_span_mask(u32 from, u32 to, u32& n) {
  const u32 lo = from & 31;
  n = to - from < 32 - lo ? to - from : 32 - lo;
  return (n == 32 ? 0xffffffffu : ((1u << n) - 1)) << lo;
}
// Clears bits [from, to).
__device__ __forceinline__ void gds_bits_clear(u32* w, u32 from, u32 to) {
  while (from < to) {
    u32 n;
    w[from >> 5] &= ~gds_bits_span_mask(from, to, n);
    from += n;
  }
}
// Set bits in [from, to).
__device__ __forceinline__ u32 gds_bits_count(const u32* w, u32 from, u32 to) {
  u32 c = 0;
  while (from < to) {
    u32 n;
    c += __popc(w[from >> 5] & gds_bits_span_mask(from, to, n));
    from += n;
  }
  return c;
}
// `word`, the bitmap word of positions [lo, lo + 32), without the positions
// before `entry` (all of them when entry >= lo + 32).
__device__ __forceinline__ u32 gds_bits_from(u32 word, u32 lo, u32 entry) {
  if (entry <= lo) return word;
  return entry - lo >= 32 ? 0 : word & (0xffffffffu << (entry - lo));
}
__device__ __forceinline__ bool gds_walk_bit(const WalkShared& sh, u32 p) { return gds_bits_get(sh.bits, p); }
// Clears bits [from, to) of the chunk's bitmap (one thread).
__device__ __forceinline__ void gds_walk_clear(WalkShared& sh, u32 from, u32 to) { gds_bits_clear(sh.bits, from, to); }

// Walks the length-prefixed values of `data[0, len)` (at most `max_count`
// of them) with the whole block of BLOCK threads; `emit(i, pos,
// value_len)` is called once for value i whose prefix is at `pos`, by some
// thread, in no particular order. Every thread returns with sh.count
// (values found) and sh.pos (the end of the last whole value); sh.done is
// set when a length ran past the section (the values stop before it).
//
// A chunk of GDS_WALK_CHUNK bytes is staged at a time; the chain of
// prefixes through it is found in parallel:
// 1. each thread takes a GDS_WALK_CHUNK / BLOCK-byte segment, finds its
//    first plausible prefix (a length that fits in what is left of the
//    section; thread 0 starts at the chunk's first byte, a real prefix)
//    and walks from there to the segment's end, marking each prefix it
//    visits. Four bytes of text read as a length do not fit, so a walk
//    begun inside a value starts at the next real prefix;
// 2. thread 0 follows the real chain from segment to segment: where it
//    enters a segment at a marked prefix, the segment's walk is the real
//    chain from there on; otherwise it walks from the entry until it meets
//    a marked prefix, unmarking what the speculative walk marked in
//    between (and everything after a chain's end);
// 3. each thread counts the marked prefixes after its segment's entry,
//    the block scans the counts, and every thread emits its values.
// Bounded: every step of a walk moves 4+ bytes; thread 0's pass visits
// each segment once and walks each byte at most once.
// Copies `chunk` bytes of `src` into `stage` with the whole block, four
// bytes a load when `src` is 4-byte aligned. The caller's next barrier
// makes them visible.
__device__ __forceinline__ void gds_stage_chunk(u8* stage, const u8* src, u32 chunk) {
  if ((((u64)src) & 3) == 0) {
    const u32 words = chunk >> 2;
    for (u32 w = threadIdx.x; w < words; w += blockDim.x) ((u32*)stage)[w] = ((const u32*)src)[w];
    for (u32 b = (words << 2) + threadIdx.x; b < chunk; b += blockDim.x) stage[b] = src[b];
  } else {
    for (u32 b = threadIdx.x; b < chunk; b += blockDim.x) stage[b] = src[b];
  }
}

// Steps 1 and 2 of a chunk's walk (below), shared with the spread walk
// (byte_array_spread.cu): the chain of length prefixes through the staged
// bytes sh.stage[0, avail), at positions [0, span) (span <= avail), where
// `left` is what the section holds after a prefix at position 0 (a prefix
// at p may have a length up to left - p; p + 4 <= avail for any p < span
// except at the section's end). With `real_start` the chain begins at 0
// (a prefix the caller knows is real); without, it begins where the first
// segment with a plausible prefix begins its walk (a guess the caller
// checks). Returns, in every thread, with sh.bits marking the chain at or
// after each segment's entry (bits before sh.seg_entry[t] in segment t are
// left from its speculative walk: not the chain), sh.seg_entry[t] (where
// the chain enters segment t, GDS_WALK_END: it does not), sh.chunk_end (the
// chain's next prefix past the span, or where it ended) and sh.chunk_term
// (how: GDS_WALK_*). The caller stages the bytes; this starts with the
// barrier that publishes them.
template <u32 BLOCK>
__device__ __forceinline__ void gds_walk_chain(WalkShared& sh, u32 span, u32 avail, u32 left, bool real_start) {
  static_assert(BLOCK <= GDS_WALK_MAX_THREADS && BLOCK % 32 == 0, "a walk's block");
  static_assert(GDS_WALK_CHUNK % (BLOCK * 32) == 0, "segments of whole bitmap words");
  constexpr u32 SEG = GDS_WALK_CHUNK / BLOCK;
  const u32 t = threadIdx.x;
  // 1. The speculative walk of segment t.
  const u32 a = t * SEG;
  const u32 b = a + SEG < span ? a + SEG : span;
  for (u32 w = 0; w < SEG / 32; ++w) sh.bits[a / 32 + w] = 0;
  __syncthreads();  // the stage is written, every bit cleared
  {
    // A prefix is plausible at p when its length fits in what is left.
    // The bytes just before a real prefix of a short length read as
    // plausible too (c, L, 0, 0 and c, c, L, 0 are small numbers), while
    // the byte after it does not (0, 0, 0, c is not, for any c but 0):
    // so a walk starts at the last of a run of plausible offsets.
    auto plausible = [&](u32 q) { return q + 4 <= avail && gds_stage_u32(sh.stage + q) <= left - q; };
    u32 p = a;
    if (t != 0 || !real_start) {
      while (p < b && !(plausible(p) && !plausible(p + 1))) ++p;
    }
    sh.seg_start[t] = p < b ? p : GDS_WALK_END;
    u32 term = GDS_WALK_GOES_ON;
    while (p < b) {
      if (p + 4 > avail) {
        term = GDS_WALK_CUT;
        break;
      }
      const u32 v = gds_stage_u32(sh.stage + p);
      if (v > left - p) {
        term = GDS_WALK_DEAD;
        break;
      }
      // Segments own whole words: no other thread writes this one.
      sh.bits[p >> 5] |= 1u << (p & 31);
      p += 4 + v;
    }
    if (a < span) {
      sh.seg_exit[t] = p;
      sh.seg_term[t] = term;
    }
  }
  __syncthreads();
  // 2a. The chain, joined in parallel on the guess that every segment's
  // walk is the chain from where it began: then a segment's entry is the
  // exit of the last segment before it whose walk began anywhere (the
  // segments between lie inside one value), and the first walked
  // segment's is its own start. Each segment checks the guess: its entry
  // is a prefix it marked, or it has no walk and the entry lies past it.
  // One failure and 2b joins them.
  {
    const bool walked = a < span && sh.seg_start[t] != GDS_WALK_END;
    // 1 + the last segment at or before t with a walk; 0: none.
    u32 last = walked ? t + 1 : 0;
    for (u32 d = 1; d < 32; d <<= 1) {
      const u32 up = __shfl_up_sync(0xffffffffu, last, d);
      if ((t & 31) >= d && up > last) last = up;
    }
    if ((t & 31) == 31) sh.warp_sums[t / 32] = last;
    __syncthreads();
    u32 before = 0;  // 1 + the last walked segment before t; 0: none
    {
      u32 prev = __shfl_up_sync(0xffffffffu, last, 1);
      if ((t & 31) == 0) prev = 0;
      for (u32 w = 0; w < t / 32; ++w) before = sh.warp_sums[w] > before ? sh.warp_sums[w] : before;
      if ((t & 31) != 0 && prev > before) before = prev;
    }
    bool wrong = false;
    if (a < span) {
      u32 e;
      if (before == 0) {
        e = walked ? sh.seg_start[t] : GDS_WALK_END;
      } else {
        e = sh.seg_term[before - 1] != GDS_WALK_GOES_ON ? GDS_WALK_END : sh.seg_exit[before - 1];
      }
      if (e == GDS_WALK_END || e >= b) {
        wrong = walked;
      } else {
        wrong = !walked || !gds_walk_bit(sh, e);
      }
      sh.seg_entry[t] = e;
    }
    if (__syncthreads_or(wrong) == 0) {
      if (t == 0) {
        // The chunk's chain ends where the last walked segment's does.
        u32 k = 0;
        for (u32 w = 0; w < BLOCK / 32; ++w) k = sh.warp_sums[w] > k ? sh.warp_sums[w] : k;
        sh.chunk_term = k == 0 ? GDS_WALK_GOES_ON : sh.seg_term[k - 1];
        sh.chunk_end = k == 0 ? span : sh.seg_exit[k - 1];
      }
      __syncthreads();
      return;
    }
  }
  // 2b. The chain, segment by segment.
  if (t == 0) {
    u32 e = real_start ? 0 : GDS_WALK_END, end_term = GDS_WALK_GOES_ON, end_at = 0;
    bool started = real_start;
    for (u32 k = 0; k < BLOCK; ++k) {
      const u32 ka = k * SEG;
      if (ka >= span) break;
      const u32 kb = ka + SEG < span ? ka + SEG : span;
      if (!started && sh.seg_start[k] != GDS_WALK_END) {
        e = sh.seg_start[k];
        started = true;
      }
      sh.seg_entry[k] = e;
      if (e == GDS_WALK_END || e >= kb) continue;
      u32 p = e, term = GDS_WALK_GOES_ON;
      bool met = false;
      while (p < kb) {
        if (gds_walk_bit(sh, p)) {
          met = true;
          break;
        }
        if (p + 4 > avail) {
          term = GDS_WALK_CUT;
          break;
        }
        const u32 v = gds_stage_u32(sh.stage + p);
        if (v > left - p) {
          term = GDS_WALK_DEAD;
          break;
        }
        const u32 next = p + 4 + v;
        sh.bits[p >> 5] |= 1u << (p & 31);
        gds_walk_clear(sh, p + 1, next < kb ? next : kb);
        p = next;
      }
      if (met) {
        p = sh.seg_exit[k];
        term = sh.seg_term[k];
      }
      if (term != GDS_WALK_GOES_ON) {
        // Nothing after the chain's end is a value.
        gds_walk_clear(sh, p, kb);
        end_term = term;
        end_at = p;
        e = GDS_WALK_END;
      } else {
        e = p;
      }
    }
    sh.chunk_term = end_term;
    sh.chunk_end = !started ? span : e == GDS_WALK_END ? end_at : e;
  }
  __syncthreads();
}

template <u32 BLOCK, typename Emit>
__device__ __forceinline__ void gds_walk_prefixes_parallel(const u8* data, u32 len, u32 max_count, WalkShared& sh, Emit emit) {
  constexpr u32 SEG = GDS_WALK_CHUNK / BLOCK;
  const u32 t = threadIdx.x;
  if (t == 0) {
    sh.pos = 0;
    sh.count = 0;
    sh.done = 0;
  }
  __syncthreads();
  while (true) {
    const u32 pos = sh.pos;
    const u32 count = sh.count;
    const bool stop = sh.done != 0 || count >= max_count || len - pos < 4;
    // Everyone has read the state before thread 0 may change it.
    __syncthreads();
    if (stop) break;
    const u32 chunk = len - pos < GDS_WALK_CHUNK ? len - pos : GDS_WALK_CHUNK;
    gds_stage_chunk(sh.stage, data + pos, chunk);
    // 1 and 2: the chain through the chunk, from its first byte.
    gds_walk_chain<BLOCK>(sh, chunk, chunk, len - pos - 4, true);
    if (t == 0) sh.stop_at = GDS_WALK_END;
    const u32 a = t * SEG;
    const u32 b = a + SEG < chunk ? a + SEG : chunk;
    // 3. Counts, their scan, the values.
    u32 n = 0;
    const u32 entry = a < chunk ? sh.seg_entry[t] : GDS_WALK_END;
    if (entry != GDS_WALK_END && entry < b) {
      for (u32 w = entry >> 5; w < (b + 31) >> 5; ++w) {
        u32 word = sh.bits[w];
        if (w == (entry >> 5)) word &= 0xffffffffu << (entry & 31);
        n += __popc(word);
      }
    }
    u32 incl = n;
    for (u32 d = 1; d < 32; d <<= 1) {
      const u32 up = __shfl_up_sync(0xffffffffu, incl, d);
      if ((t & 31) >= d) incl += up;
    }
    if ((t & 31) == 31) sh.warp_sums[t / 32] = incl;
    __syncthreads();
    u32 before = incl - n, total = 0;
    for (u32 w = 0; w < BLOCK / 32; ++w) {
      if (w < t / 32) before += sh.warp_sums[w];
      total += sh.warp_sums[w];
    }
    if (n != 0) {
      u32 i = count + before;
      for (u32 w = entry >> 5; w < (b + 31) >> 5 && i <= max_count; ++w) {
        u32 word = sh.bits[w];
        if (w == (entry >> 5)) word &= 0xffffffffu << (entry & 31);
        while (word != 0 && i <= max_count) {
          const u32 p = w * 32 + (__ffs(word) - 1);
          word &= word - 1;
          if (i == max_count) {
            sh.stop_at = p;  // one thread: value max_count is one prefix
          } else {
            emit(i, pos + p, gds_stage_u32(sh.stage + p));
          }
          ++i;
        }
      }
    }
    __syncthreads();
    if (t == 0) {
      if (count + total > max_count) {
        sh.count = max_count;
        sh.pos = pos + sh.stop_at;
      } else {
        sh.count = count + total;
        sh.pos = pos + sh.chunk_end;
        // With max_count values found, the walk ends before it looks further.
        if (sh.chunk_term == GDS_WALK_DEAD && sh.count < max_count) sh.done = 1;
      }
    }
    __syncthreads();
  }
}

// The session-9 walk, kept to measure against (GDSCAN_STRING_WALK=serial
// sets GDS_WALK_PARALLEL to 0): thread 0 walks every staged chunk alone.
template <typename Emit>
__device__ __forceinline__ void gds_walk_prefixes_serial(const u8* data, u32 len, u32 max_count, WalkShared& sh, Emit emit) {
  if (threadIdx.x == 0) {
    sh.pos = 0;
    sh.count = 0;
    sh.done = 0;
  }
  __syncthreads();
  while (true) {
    const u32 pos = sh.pos;
    const u32 count = sh.count;
    const bool stop = sh.done != 0 || count >= max_count || len - pos < 4;
    // Everyone has read the state before thread 0 may change it.
    __syncthreads();
    if (stop) break;
    const u32 chunk = len - pos < GDS_WALK_CHUNK ? len - pos : GDS_WALK_CHUNK;
    gds_stage_chunk(sh.stage, data + pos, chunk);
    __syncthreads();
    if (threadIdx.x == 0) {
      u32 p = 0;
      u32 n = count;
      while (n < max_count && p <= chunk && chunk - p >= 4) {
        const u8* q = sh.stage + p;
        const u32 vlen = (u32)q[0] | ((u32)q[1] << 8) | ((u32)q[2] << 16) | ((u32)q[3] << 24);
        if (vlen > len - (pos + p) - 4) {  // a value that runs past the section ends the walk
          sh.done = 1;
          break;
        }
        emit(n, pos + p, vlen);
        ++n;
        p += 4 + vlen;
      }
      sh.pos = pos + p;
      sh.count = n;
    }
    __syncthreads();
  }
}

// The walk the kernels use: GDS_WALK_PARALLEL (the generated header) picks it.
template <u32 BLOCK, typename Emit>
__device__ __forceinline__ void gds_walk_prefixes(const u8* data, u32 len, u32 max_count, WalkShared& sh, Emit emit) {
#if GDS_WALK_PARALLEL
  gds_walk_prefixes_parallel<BLOCK>(data, len, max_count, sh, emit);
#else
  gds_walk_prefixes_serial(data, len, max_count, sh, emit);
#endif
}

// The walk of one PLAIN byte-array page task (block-uniform: every thread
// calls it with the same task; other tasks return at once). Ends with a
// barrier, so that `sh` may be reused.
template <u32 BLOCK>
__device__ __forceinline__ void gds_byte_array_walk_one(PageTask* task, WalkShared& sh) {
  // DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY pages are not walked.
  if (task->kind != GDS_KIND_BYTE_ARRAY || task->encoding != GDS_ENC_PLAIN) return;
  const PageTask tk = *task;
  Sections s;
  if (gds_sections(tk, s) != 0) {
    // gds_decode_pages reports the same error for the page.
    if (threadIdx.x == 0) task->plain_count = 0;
    return;
  }
  if (tk.scratch == 0 || (tk.scratch & 3) || (u64)tk.scratch_len / 4 < (u64)tk.num_values + 1) {
    if (threadIdx.x == 0) {
      task->plain_count = 0;
      atomicCAS(&task->error, 0u, (u32)GDS_ERR_SCRATCH);
    }
    return;
  }
  u32* const offsets = (u32*)tk.scratch;
  gds_walk_prefixes<BLOCK>(s.values, s.values_len, tk.num_values, sh,
                           [&](u32 i, u32 pos, u32) { offsets[i] = pos; });
  if (threadIdx.x == 0) {
    offsets[sh.count] = sh.pos;
    task->plain_count = sh.count;
  }
  // sh is reused by the block's next task.
  __syncthreads();
}

// The views of one byte-array dictionary (block-uniform). Ends with a
// barrier, so that `sh` may be reused.
template <u32 BLOCK>
__device__ __forceinline__ void gds_dict_views_one(DictTask* task, WalkShared& sh) {
  const DictTask d = *task;
  u8* const views = (u8*)d.out_views;
  const u8* const data = (const u8*)d.data;
  // Block-uniform checks.
  if ((d.count != 0 && views == 0) || (d.out_views & 15) || (d.data_len != 0 && data == 0)) {
    if (threadIdx.x == 0) {
      atomicCAS(&task->error, 0u, (u32)GDS_ERR_BAD_TASK);
      task->found = 0;
    }
    return;
  }
  const u32 slot_bytes = gds_byte_array_slot(d.conversion);
  // Temporarily: each entry's length and start in its own slot.
  gds_walk_prefixes<BLOCK>(data, d.data_len, d.count, sh, [&](u32 i, u32 pos, u32 vlen) {
    *(uint2*)(views + (u64)i * slot_bytes) = make_uint2(vlen, pos + 4);
  });
  const u32 found = sh.count;
  if (threadIdx.x == 0) {
    task->found = found;
    if (found < d.count) atomicCAS(&task->error, 0u, (u32)GDS_ERR_DICT_OVERRUN);
  }
  // The walk's last barrier made every thread's slot writes visible to the block.
  for (u32 i = threadIdx.x; i < d.count; i += blockDim.x) {
    u8* const slot = views + (u64)i * slot_bytes;
    if (i >= found) {
      gds_byte_array_zero(slot, d.conversion);
      continue;
    }
    const uint2 entry = *(const uint2*)slot;
    u32 error = 0;
    gds_byte_array_store(slot, data + entry.y, entry.x, d.conversion, d.view_buffer_index, d.view_buffer_base, &error);
    if (error) atomicCAS(&task->error, 0u, error);
  }
  // sh is reused by the block's next dictionary.
  __syncthreads();
}

extern "C" __global__ void __launch_bounds__(GDS_WALK_BLOCK) gds_byte_array_walk(PageTask* tasks, u32 n_tasks) {
  __shared__ WalkShared sh;
  for (u32 t = blockIdx.x; t < n_tasks; t += gridDim.x) gds_byte_array_walk_one<GDS_WALK_BLOCK>(tasks + t, sh);
}

extern "C" __global__ void __launch_bounds__(GDS_DICT_BLOCK) gds_dict_views(DictTask* dicts, u32 n_dicts) {
  __shared__ WalkShared sh;
  for (u32 t = blockIdx.x; t < n_dicts; t += gridDim.x) gds_dict_views_one<GDS_DICT_BLOCK>(dicts + t, sh);
}

// Both walks in one launch: blocks [0, n_dicts) take the dictionaries,
// the next n_tasks blocks the pages. The two have no order between them
// (a page's values come from its own bytes or, through gds_decode_pages,
// from the views), so a row group's dictionaries and PLAIN pages are
// walked at once instead of one kernel after the other (each about 2.3 ms
// for a row group of SF 10 lineitem's strings on the H200).
extern "C" __global__ void __launch_bounds__(GDS_DICT_BLOCK) gds_string_walks(DictTask* dicts, u32 n_dicts,
                                                                             PageTask* tasks, u32 n_tasks) {
  __shared__ WalkShared sh;
  const u64 n = (u64)n_dicts + n_tasks;
  for (u64 b = blockIdx.x; b < n; b += gridDim.x) {
    if (b < n_dicts) {
      gds_dict_views_one<GDS_DICT_BLOCK>(dicts + b, sh);
    } else {
      gds_byte_array_walk_one<GDS_DICT_BLOCK>(tasks + (b - n_dicts), sh);
    }
  }
}
