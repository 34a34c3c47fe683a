// gdscan GPU decoder: one status array for the host.
//
// gds_gather_status copies, for every page task then every dictionary task
// of a row group, GDS_STATUS_WORDS words into `out`:
//   page:       [error, error_index, null_count, value_count]
//   dictionary: [error, 0,           0,          found]
// so the host checks a whole row group (errors and null counts) with ONE
// device-to-host copy of 16 * (n_tasks + n_dicts) bytes. `out` must be
// 16-byte aligned.
#include "common.cuh"

static_assert(GDS_STATUS_WORDS == 4, "one uint4 per task");

extern "C" __global__ void __launch_bounds__(GDS_STATUS_BLOCK) gds_gather_status(const PageTask* tasks, u32 n_tasks,
                                                                                 const DictTask* dicts, u32 n_dicts,
                                                                                 uint4* out) {
  const u64 total = (u64)n_tasks + n_dicts;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    uint4 v;
    if (i < n_tasks) {
      const PageTask* t = tasks + i;
      v = make_uint4(t->error, t->error_index, t->null_count, t->value_count);
    } else {
      const DictTask* d = dicts + (i - n_tasks);
      v = make_uint4(d->error, 0, 0, d->found);
    }
    out[i] = v;
  }
}
