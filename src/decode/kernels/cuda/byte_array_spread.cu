// gdscan GPU decoder: the spread string walk (GDSCAN_STRING_WALKS=spread).
//
// The walks of byte_array.cu give each dictionary and PLAIN page one block,
// which steps through it GDS_WALK_CHUNK bytes at a time: a 1 MiB page is 64
// steps, one after the other, while most of the GPU idles (measured on the
// H200: about 2.3 ms a row group of SF 10 lineitem, two thirds of the
// decoder's kernel time). Here every chunk of every section gets a block
// of its own, all at once, in three launches over a row group's walk items
// (its byte-array dictionaries, then its page tasks):
//
// 1. gds_spread_spec, a block per chunk: stages the chunk (and the 4 bytes
//    after it, for a prefix that begins in it) and finds the chain of
//    length prefixes through it (gds_walk_chain) from its first plausible
//    prefix; chunk 0 of a section from byte 0, a real prefix. Writes the
//    chain's bits (nothing before each segment's entry) to the chunk's
//    bitmap, and the chunk's state: prefixes on the chain, where it left
//    the chunk or ended, and how.
// 2. gds_spread_join, a thread per item: follows the real chain from chunk
//    to chunk. Where it enters a chunk at a prefix the chunk's chain
//    marked, that chain is the real one from there (prefixes after it =
//    the chunk's count minus the marked ones before); otherwise it walks
//    from the entry in global memory until it meets a marked prefix,
//    marking the real ones and clearing the rest (rare: text read as
//    lengths that happens to lead elsewhere). Writes each chunk's entry
//    and the values before it, the item's count and end (as the one-block
//    walk: PageTask.plain_count and scratch[count], DictTask.found).
// 3. gds_spread_emit, a block per chunk: counts the marked prefixes from
//    the chunk's entry, scans the counts, and writes each value's offset
//    (pages) or view (dictionaries); value max_count's offset is the end
//    when the section holds more. Dictionary views past the entries found
//    are zeroed.
//
// The item table `first` (n_items + 1 words, built by the host) gives each
// item's first chunk; an item's chunks cover an upper bound of its section
// (a page's data length); chunks past the section do nothing.
#include "common.cuh"
// Uses byte_array.cu's walk (gds_walk_chain, WalkShared) and bitmap helpers.

// What an item of the walk is.
#define GDS_SPREAD_WALK 0u        // a section to walk
#define GDS_SPREAD_SKIP 1u        // not a string walk (a page of another kind)
#define GDS_SPREAD_BAD_SECTION 2u // a page whose sections do not parse (decode reports it)
#define GDS_SPREAD_BAD_SCRATCH 3u // a page without room for its offsets
#define GDS_SPREAD_BAD_DICT 4u    // a dictionary task that is not sound

// Words of a chunk's state: the chain's prefixes, its exit (a section
// offset), how it ended, the real chain's entry, the values before it.
#define GDS_SPREAD_TOTAL 0
#define GDS_SPREAD_EXIT 1
#define GDS_SPREAD_TERM 2
#define GDS_SPREAD_ENTRY 4
#define GDS_SPREAD_BEFORE 5

struct SpreadItem {
  const u8* data;  // the section walked
  u32 len;
  u32 max_count;   // values wanted (num_values, the dictionary's count)
  u32 status;      // GDS_SPREAD_*
  u32 is_dict;
  u32 index;       // in dicts or tasks
};

__device__ __forceinline__ SpreadItem gds_spread_item(const DictTask* dicts, u32 n_dicts, const PageTask* tasks, u32 i) {
  SpreadItem it;
  it.data = 0;
  it.len = 0;
  it.max_count = 0;
  it.status = GDS_SPREAD_WALK;
  it.is_dict = i < n_dicts;
  it.index = it.is_dict ? i : i - n_dicts;
  if (it.is_dict) {
    const DictTask& d = dicts[it.index];
    if ((d.count != 0 && d.out_views == 0) || (d.out_views & 15) || (d.data_len != 0 && d.data == 0)) {
      it.status = GDS_SPREAD_BAD_DICT;
      return it;
    }
    it.data = (const u8*)d.data;
    it.len = d.data_len;
    it.max_count = d.count;
    return it;
  }
  const PageTask& tk = tasks[it.index];
  if (tk.kind != GDS_KIND_BYTE_ARRAY || tk.encoding != GDS_ENC_PLAIN) {
    it.status = GDS_SPREAD_SKIP;
    return it;
  }
  Sections s;
  if (gds_sections(tk, s) != 0) {
    it.status = GDS_SPREAD_BAD_SECTION;
    return it;
  }
  if (tk.scratch == 0 || (tk.scratch & 3) || (u64)tk.scratch_len / 4 < (u64)tk.num_values + 1) {
    it.status = GDS_SPREAD_BAD_SCRATCH;
    return it;
  }
  it.data = s.values;
  it.len = s.values_len;
  it.max_count = tk.num_values;
  return it;
}

// The item owning chunk g: the last i with first[i] <= g (items without
// chunks have first[i] == first[i + 1]).
__device__ __forceinline__ u32 gds_spread_owner(const u32* first, u32 n_items, u32 g) {
  u32 lo = 0, hi = n_items;
  while (hi - lo > 1) {
    const u32 mid = lo + (hi - lo) / 2;
    if (first[mid] <= g) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Chunk g's item and its index among the item's chunks, into shared
// memory by thread 0; every thread returns once they are there.
struct SpreadChunk {
  SpreadItem it;
  u32 item;
  u32 index;   // of the chunk within its item
  u32 chunks;  // the item's chunks
};
__device__ __forceinline__ void gds_spread_locate(SpreadChunk& c, const DictTask* dicts, u32 n_dicts,
                                                  const PageTask* tasks, const u32* first, u32 n_items, u32 g) {
  if (threadIdx.x == 0) {
    c.item = gds_spread_owner(first, n_items, g);
    c.it = gds_spread_item(dicts, n_dicts, tasks, c.item);
    c.index = g - first[c.item];
    c.chunks = first[c.item + 1] - first[c.item];
  }
  __syncthreads();
}

// 1. The chain through every chunk, each from its own start.
extern "C" __global__ void __launch_bounds__(GDS_SPREAD_BLOCK)
    gds_spread_spec(const DictTask* dicts, u32 n_dicts, const PageTask* tasks, u32 n_tasks, const u32* first,
                    u32* state, u32* bits) {
  __shared__ WalkShared sh;
  __shared__ SpreadChunk c;
  constexpr u32 WORDS = GDS_WALK_CHUNK / 32;
  constexpr u32 SEG = GDS_WALK_CHUNK / GDS_SPREAD_BLOCK;
  const u32 t = threadIdx.x;
  const u32 n_items = n_dicts + n_tasks;
  const u32 n_chunks = first[n_items];
  for (u32 g = blockIdx.x; g < n_chunks; g += gridDim.x) {
    gds_spread_locate(c, dicts, n_dicts, tasks, first, n_items, g);
    u32* const out = bits + (u64)g * WORDS;
    u32* const st = state + (u64)g * GDS_SPREAD_STATE_WORDS;
    const u64 cs = (u64)c.index * GDS_WALK_CHUNK;
    if (c.it.status != GDS_SPREAD_WALK || cs + 4 > c.it.len) {
      // No prefix begins here: an empty chain (the join walks any entry).
      for (u32 w = t; w < WORDS; w += blockDim.x) out[w] = 0;
      if (t == 0) {
        st[GDS_SPREAD_TOTAL] = 0;
        st[GDS_SPREAD_EXIT] = (u32)(cs < c.it.len ? cs : c.it.len);
        st[GDS_SPREAD_TERM] = GDS_WALK_CUT;
      }
      __syncthreads();  // `c` is rewritten for the next chunk
      continue;
    }
    const u32 rest = c.it.len - (u32)cs;
    const u32 span = rest < GDS_WALK_CHUNK ? rest : GDS_WALK_CHUNK;
    const u32 avail = rest < GDS_WALK_CHUNK + 4 ? rest : GDS_WALK_CHUNK + 4;
    gds_stage_chunk(sh.stage, c.it.data + cs, avail);
    gds_walk_chain<GDS_SPREAD_BLOCK>(sh, span, avail, rest - 4, c.index == 0);
    // The chain's bits from each segment's entry on, out and counted.
    const u32 a = t * SEG;
    const u32 b = a + SEG < span ? a + SEG : span;
    const u32 entry = a < span ? sh.seg_entry[t] : GDS_WALK_END;
    u32 n = 0;
    for (u32 w = a / 32; w < (a + SEG) / 32; ++w) {
      u32 word = sh.bits[w];
      const u32 lo = w * 32;
      word = entry == GDS_WALK_END || entry >= b ? 0 : gds_bits_from(word, lo, entry);
      out[w] = word;
      n += __popc(word);
    }
    for (u32 d = 1; d < 32; d <<= 1) {
      const u32 up = __shfl_up_sync(0xffffffffu, n, d);
      if ((t & 31) >= d) n += up;
    }
    if ((t & 31) == 31) sh.warp_sums[t / 32] = n;
    __syncthreads();
    if (t == 0) {
      u32 total = 0;
      for (u32 w = 0; w < GDS_SPREAD_BLOCK / 32; ++w) total += sh.warp_sums[w];
      st[GDS_SPREAD_TOTAL] = total;
      st[GDS_SPREAD_EXIT] = (u32)cs + sh.chunk_end;
      st[GDS_SPREAD_TERM] = sh.chunk_term;
    }
    __syncthreads();  // `sh` and `c` are rewritten for the next chunk
  }
}

// 2. The real chain of one item, chunk to chunk (one thread).
__device__ __forceinline__ void gds_spread_join_one(DictTask* dicts, u32 n_dicts, PageTask* tasks, const u32* first,
                                                    u32* state, u32* bits, u32 i) {
  constexpr u32 WORDS = GDS_WALK_CHUNK / 32;
  SpreadItem it = gds_spread_item(dicts, n_dicts, tasks, i);
  if (it.status == GDS_SPREAD_SKIP) return;
  const u32 c0 = first[i];
  const u32 n_alloc = first[i + 1] - c0;
  const u32 nc = it.status == GDS_SPREAD_WALK ? (u32)(((u64)it.len + GDS_WALK_CHUNK - 1) / GDS_WALK_CHUNK) : 0;
  if (nc > n_alloc && it.status == GDS_SPREAD_WALK) it.status = it.is_dict ? GDS_SPREAD_BAD_DICT : GDS_SPREAD_BAD_SCRATCH;
  for (u32 k = 0; k < n_alloc; ++k) state[(u64)(c0 + k) * GDS_SPREAD_STATE_WORDS + GDS_SPREAD_ENTRY] = GDS_WALK_END;
  if (it.status != GDS_SPREAD_WALK) {
    if (it.is_dict) {
      atomicCAS(&dicts[it.index].error, 0u, (u32)GDS_ERR_BAD_TASK);
      dicts[it.index].found = 0;
    } else {
      tasks[it.index].plain_count = 0;
      if (it.status == GDS_SPREAD_BAD_SCRATCH) atomicCAS(&tasks[it.index].error, 0u, (u32)GDS_ERR_SCRATCH);
    }
    return;
  }
  const u32 len = it.len;
  u32 e = 0, before = 0, end_pos = 0;
  bool ended = false;
  for (u32 k = 0; k < nc && !ended; ++k) {
    const u32 cs = k * GDS_WALK_CHUNK;
    const u32 ce = len - cs < GDS_WALK_CHUNK ? len : cs + GDS_WALK_CHUNK;
    if (e >= ce) continue;  // the chunk lies inside one value
    u32* const st = state + (u64)(c0 + k) * GDS_SPREAD_STATE_WORDS;
    u32* const w = bits + (u64)(c0 + k) * WORDS;
    const u32 rel = e - cs;
    u32 count, exit, term;
    if (gds_bits_get(w, rel)) {
      // On the chunk's chain: the rest of it is the real one.
      count = st[GDS_SPREAD_TOTAL] - gds_bits_count(w, 0, rel);
      exit = st[GDS_SPREAD_EXIT];
      term = st[GDS_SPREAD_TERM];
    } else {
      u32 p = e;
      bool met = false;
      term = GDS_WALK_GOES_ON;
      while (p < ce) {
        if (gds_bits_get(w, p - cs)) {
          met = true;
          break;
        }
        if (len - p < 4) {
          term = GDS_WALK_CUT;
          break;
        }
        const u32 v = gds_ld_u32(it.data + p);
        if (v > len - p - 4) {
          term = GDS_WALK_DEAD;
          break;
        }
        const u32 next = p + 4 + v;
        w[(p - cs) >> 5] |= 1u << ((p - cs) & 31);
        gds_bits_clear(w, p - cs + 1, (next < ce ? next : ce) - cs);
        p = next;
      }
      if (met) {
        exit = st[GDS_SPREAD_EXIT];
        term = st[GDS_SPREAD_TERM];
      } else {
        exit = p;
        // Nothing after the chain's end is a value.
        if (term != GDS_WALK_GOES_ON) gds_bits_clear(w, p - cs, ce - cs);
      }
      count = gds_bits_count(w, rel, ce - cs);
    }
    st[GDS_SPREAD_ENTRY] = e;
    st[GDS_SPREAD_BEFORE] = before;
    before += count;
    if (term != GDS_WALK_GOES_ON) {
      ended = true;
      end_pos = exit;
    } else {
      e = exit;
    }
  }
  if (!ended) end_pos = e < len ? e : len;
  const u32 found = before < it.max_count ? before : it.max_count;
  if (it.is_dict) {
    dicts[it.index].found = found;
    if (found < it.max_count) atomicCAS(&dicts[it.index].error, 0u, (u32)GDS_ERR_DICT_OVERRUN);
  } else {
    tasks[it.index].plain_count = found;
    // With more values than wanted, the emit writes the end (value
    // max_count's offset).
    if (before <= it.max_count) ((u32*)tasks[it.index].scratch)[found] = end_pos;
  }
}

extern "C" __global__ void __launch_bounds__(GDS_SPREAD_JOIN_BLOCK)
    gds_spread_join(DictTask* dicts, u32 n_dicts, PageTask* tasks, u32 n_tasks, const u32* first, u32* state,
                    u32* bits) {
  const u32 n_items = n_dicts + n_tasks;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n_items; i += (u64)gridDim.x * blockDim.x) {
    gds_spread_join_one(dicts, n_dicts, tasks, first, state, bits, (u32)i);
  }
}

// 3. Every value's offset or view.
extern "C" __global__ void __launch_bounds__(GDS_SPREAD_BLOCK)
    gds_spread_emit(DictTask* dicts, u32 n_dicts, PageTask* tasks, u32 n_tasks, const u32* first, const u32* state,
                    const u32* bits) {
  __shared__ SpreadChunk c;
  __shared__ u32 warp_sums[GDS_SPREAD_BLOCK / 32];
  constexpr u32 WORDS = GDS_WALK_CHUNK / 32;
  constexpr u32 PER = WORDS / GDS_SPREAD_BLOCK;
  static_assert(WORDS % GDS_SPREAD_BLOCK == 0, "whole words per thread");
  const u32 t = threadIdx.x;
  const u32 n_items = n_dicts + n_tasks;
  const u32 n_chunks = first[n_items];
  for (u32 g = blockIdx.x; g < n_chunks; g += gridDim.x) {
    gds_spread_locate(c, dicts, n_dicts, tasks, first, n_items, g);
    if (c.it.status == GDS_SPREAD_WALK) {
      const u32* const st = state + (u64)g * GDS_SPREAD_STATE_WORDS;
      const u32 entry = st[GDS_SPREAD_ENTRY];
      const u32 before = st[GDS_SPREAD_BEFORE];
      const u32 cs = c.index * GDS_WALK_CHUNK;
      const u32* const w = bits + (u64)g * WORDS;
      u32 mine[PER];
      u32 n = 0;
      for (u32 k = 0; k < PER; ++k) {
        const u32 at = t * PER + k;
        const u32 word = entry == GDS_WALK_END ? 0 : gds_bits_from(w[at], cs + at * 32, entry);
        mine[k] = word;
        n += __popc(word);
      }
      u32 incl = n;
      for (u32 d = 1; d < 32; d <<= 1) {
        const u32 up = __shfl_up_sync(0xffffffffu, incl, d);
        if ((t & 31) >= d) incl += up;
      }
      if ((t & 31) == 31) warp_sums[t / 32] = incl;
      __syncthreads();
      u32 i = before + incl - n;
      for (u32 k = 0; k < t / 32; ++k) i += warp_sums[k];
      const u32 max_count = c.it.max_count;
      for (u32 k = 0; k < PER && i <= max_count; ++k) {
        u32 word = mine[k];
        while (word != 0 && i <= max_count) {
          const u32 p = cs + (t * PER + k) * 32 + (__ffs(word) - 1);
          word &= word - 1;
          if (c.it.is_dict) {
            if (i < max_count) {
              DictTask* const d = dicts + c.it.index;
              u8* const slot = (u8*)d->out_views + (u64)i * gds_byte_array_slot(d->conversion);
              const u32 vlen = gds_ld_u32(c.it.data + p);
              u32 error = 0;
              gds_byte_array_store(slot, c.it.data + p + 4, vlen, d->conversion, d->view_buffer_index,
                                   d->view_buffer_base, &error);
              if (error) atomicCAS(&d->error, 0u, error);
            }
          } else {
            // Value i's offset; value max_count's is the end of the last one.
            ((u32*)tasks[c.it.index].scratch)[i] = p;
          }
          ++i;
        }
      }
      if (c.it.is_dict) {
        // Views past the entries found stay empty.
        const DictTask* const d = dicts + c.it.index;
        const u32 found = d->found;
        for (u64 j = (u64)found + (u64)c.index * blockDim.x + t; j < max_count; j += (u64)c.chunks * blockDim.x) {
          gds_byte_array_zero((u8*)d->out_views + j * gds_byte_array_slot(d->conversion), d->conversion);
        }
      }
    }
    __syncthreads();  // `c` and `warp_sums` are rewritten for the next chunk
  }
}
