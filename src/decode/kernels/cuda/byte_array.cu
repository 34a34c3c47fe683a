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
// time with coalesced loads by every thread, and thread 0 walks the staged
// bytes at shared-memory latency. A chunk always starts at a length
// prefix; a value longer than the rest of the chunk is skipped without
// being staged.
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
// pointing into the dictionary's buffer. Pages then gather these views like
// fixed-width 16-byte dictionary values.
#include "common.cuh"

// Bytes staged in shared memory per step of a walk.
#define GDS_WALK_CHUNK 16384u

struct WalkShared {
  u8 stage[GDS_WALK_CHUNK];
  u32 pos;    // next length prefix (offset in the section)
  u32 count;  // values found so far
  u32 done;   // a value ran past the section: the walk ends
};

// Walks the length-prefixed values of `data[0, len)` (at most `max_count`
// of them) with the whole block; thread 0 calls `emit(i, pos, value_len)`
// for value i whose prefix is at `pos`. Every thread returns with
// sh.count (values found) and sh.pos (the end of the last whole value).
// Bounded: every step of the inner walk moves 4+ bytes, every chunk moves
// the walk forward or ends it.
template <typename Emit>
__device__ __forceinline__ void gds_walk_prefixes(const u8* data, u32 len, u32 max_count, WalkShared& sh, Emit emit) {
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
    const u8* src = data + pos;
    if ((((u64)src) & 3) == 0) {
      const u32 words = chunk >> 2;
      for (u32 w = threadIdx.x; w < words; w += blockDim.x) ((u32*)sh.stage)[w] = ((const u32*)src)[w];
      for (u32 b = (words << 2) + threadIdx.x; b < chunk; b += blockDim.x) sh.stage[b] = src[b];
    } else {
      for (u32 b = threadIdx.x; b < chunk; b += blockDim.x) sh.stage[b] = src[b];
    }
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

extern "C" __global__ void __launch_bounds__(GDS_WALK_BLOCK) gds_byte_array_walk(PageTask* tasks, u32 n_tasks) {
  __shared__ WalkShared sh;
  for (u32 t = blockIdx.x; t < n_tasks; t += gridDim.x) {
    PageTask* task = tasks + t;
    // Block-uniform: every thread reads the same task.
    if (task->kind != GDS_KIND_BYTE_ARRAY || task->encoding != GDS_ENC_PLAIN) continue;
    const PageTask tk = *task;
    Sections s;
    if (gds_sections(tk, s) != 0) {
      // gds_decode_pages reports the same error for the page.
      if (threadIdx.x == 0) task->plain_count = 0;
      continue;
    }
    if (tk.scratch == 0 || (tk.scratch & 3) || (u64)tk.scratch_len / 4 < (u64)tk.num_values + 1) {
      if (threadIdx.x == 0) {
        task->plain_count = 0;
        atomicCAS(&task->error, 0u, (u32)GDS_ERR_SCRATCH);
      }
      continue;
    }
    u32* const offsets = (u32*)tk.scratch;
    gds_walk_prefixes(s.values, s.values_len, tk.num_values, sh,
                      [&](u32 i, u32 pos, u32) { offsets[i] = pos; });
    if (threadIdx.x == 0) {
      offsets[sh.count] = sh.pos;
      task->plain_count = sh.count;
    }
    // sh is reused by the block's next task.
    __syncthreads();
  }
}

extern "C" __global__ void __launch_bounds__(GDS_DICT_BLOCK) gds_dict_views(DictTask* dicts, u32 n_dicts) {
  __shared__ WalkShared sh;
  for (u32 t = blockIdx.x; t < n_dicts; t += gridDim.x) {
    DictTask* task = dicts + t;
    const DictTask d = *task;
    u8* const views = (u8*)d.out_views;
    const u8* const data = (const u8*)d.data;
    // Block-uniform checks.
    if ((d.count != 0 && views == 0) || (d.out_views & 15) || (d.data_len != 0 && data == 0)) {
      if (threadIdx.x == 0) {
        atomicCAS(&task->error, 0u, (u32)GDS_ERR_BAD_TASK);
        task->found = 0;
      }
      continue;
    }
    // Temporarily: each entry's length and start in its own view slot.
    gds_walk_prefixes(data, d.data_len, d.count, sh, [&](u32 i, u32 pos, u32 vlen) {
      *(uint2*)(views + (u64)i * 16) = make_uint2(vlen, pos + 4);
    });
    const u32 found = sh.count;
    if (threadIdx.x == 0) {
      task->found = found;
      if (found < d.count) atomicCAS(&task->error, 0u, (u32)GDS_ERR_DICT_OVERRUN);
    }
    // The walk's last barrier made thread 0's slot writes visible to the block.
    for (u32 i = threadIdx.x; i < d.count; i += blockDim.x) {
      uint4* const slot = (uint4*)(views + (u64)i * 16);
      if (i >= found) {
        *slot = make_uint4(0, 0, 0, 0);
        continue;
      }
      const uint2 entry = *(const uint2*)slot;
      const u32 len = entry.x;
      const u8* const p = data + entry.y;
      const u64 addr = (u64)p;
      if (len > 12 && (addr < d.view_buffer_base || addr - d.view_buffer_base > GDS_I32_MAX ||
                       len > GDS_I32_MAX)) {
        atomicCAS(&task->error, 0u, (u32)GDS_ERR_VIEW_OFFSET);
        *slot = make_uint4(0, 0, 0, 0);
        continue;
      }
      *slot = gds_make_view(p, len, d.view_buffer_index, (u32)(addr - d.view_buffer_base));
    }
    // sh is reused by the block's next dictionary.
    __syncthreads();
  }
}
