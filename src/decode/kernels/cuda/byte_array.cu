// gdscan GPU decoder: byte-array preparation kernels.
//
// gds_byte_array_walk: for every PLAIN BYTE_ARRAY page of a task array, one
// thread walks the 4-byte length prefixes of its values section (a chain of
// dependent loads that cannot be split without knowing the lengths) and
// writes each value's offset to the page's scratch: scratch[i] = offset of
// value i's length prefix in the values section, scratch[n] = the end of the
// last whole value, n = plain_count. Other tasks are skipped. Threads of a
// warp walk different pages, so the latency of each chain hides behind the
// others'. Launch it before gds_decode_pages, on the same stream.
//
// gds_dict_views: one block per byte-array dictionary page (DictTask). One
// thread walks the length prefixes (writing each entry's length and start
// into its own view slot), then every thread turns its entries into 16-byte
// Utf8View/BinaryView views pointing into the dictionary's buffer. Pages then
// gather these views like fixed-width 16-byte dictionary values.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(GDS_WALK_BLOCK) gds_byte_array_walk(PageTask* tasks, u32 n_tasks) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n_tasks; t += stride) {
    PageTask* task = tasks + t;
    if (task->kind != GDS_KIND_BYTE_ARRAY || task->encoding != GDS_ENC_PLAIN) continue;
    const PageTask tk = *task;
    Sections s;
    if (gds_sections(tk, s) != 0) {
      // gds_decode_pages reports the same error for the page.
      task->plain_count = 0;
      continue;
    }
    if (tk.scratch == 0 || (tk.scratch & 3) || (u64)tk.scratch_len / 4 < (u64)tk.num_values + 1) {
      task->plain_count = 0;
      atomicCAS(&task->error, 0u, (u32)GDS_ERR_SCRATCH);
      continue;
    }
    u32* const offsets = (u32*)tk.scratch;
    const u8* const values = s.values;
    const u32 values_len = s.values_len;
    u32 pos = 0;
    u32 n = 0;
    // Bounded by num_values steps, and by the section: every step moves 4+ bytes.
    while (n < tk.num_values && values_len - pos >= 4) {
      const u32 len = gds_ld_u32(values + pos);
      if (len > values_len - pos - 4) break;  // a value that runs past the section ends the walk
      offsets[n++] = pos;
      pos += 4 + len;
    }
    offsets[n] = pos;
    task->plain_count = n;
  }
}

extern "C" __global__ void __launch_bounds__(GDS_DICT_BLOCK) gds_dict_views(DictTask* dicts, u32 n_dicts) {
  __shared__ u32 s_found;
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
    if (threadIdx.x == 0) {
      u32 pos = 0;
      u32 n = 0;
      while (n < d.count && d.data_len - pos >= 4) {
        const u32 len = gds_ld_u32(data + pos);
        if (len > d.data_len - pos - 4) break;
        // Temporarily: the entry's length and start in its own view slot.
        *(uint2*)(views + (u64)n * 16) = make_uint2(len, pos + 4);
        ++n;
        pos += 4 + len;
      }
      s_found = n;
      task->found = n;
      if (n < d.count) atomicCAS(&task->error, 0u, (u32)GDS_ERR_DICT_OVERRUN);
    }
    // Makes thread 0's slot writes visible to the block.
    __syncthreads();
    const u32 found = s_found;
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
    // s_found is reused by the next dictionary of this block.
    __syncthreads();
  }
}
