// CPU emulation of the CUDA features the gdscan kernels use, so that their
// logic (tiles, run tables, ballots, scans, bounds checks) is tested on
// machines without a GPU (tests/kernel_emu.rs compiles and runs it).
//
// One std::thread per CUDA thread; the blocks of a launch run one after
// another, so `__shared__` is a function-level static. __syncthreads is a
// block barrier, __syncwarp / __ballot_sync / __shfl_up_sync / __shfl_sync use a barrier
// per warp (a kernel that calls them from diverged threads hangs here, as
// it would misbehave on the GPU). Device memory is host memory. What this
// does NOT model: the GPU's memory model and timing, alignment faults, and
// the compiler NVRTC is (the NVRTC compile test covers that).
#pragma once
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
#include <cstdio>
#include <cstdlib>

struct dim3 { unsigned x = 1, y = 1, z = 1; };
inline thread_local dim3 threadIdx;
inline dim3 blockIdx;
inline dim3 blockDim;
inline dim3 gridDim;
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
inline uint2 make_uint2(unsigned a, unsigned b) { return {a, b}; }

#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static

struct EmuBlock {
  std::barrier<>* block;
  std::vector<std::barrier<>*> warps;
  std::atomic<int> or_flag{0};
  std::atomic<unsigned> ballot[64];
  unsigned shfl[64][32];
};
inline EmuBlock* emu;

inline unsigned emu_tid() { return threadIdx.x; }
inline void __syncthreads() { emu->block->arrive_and_wait(); }
inline int __syncthreads_or(int p) {
  if (p) emu->or_flag = 1;
  emu->block->arrive_and_wait();
  int r = emu->or_flag.load();
  emu->block->arrive_and_wait();
  if (emu_tid() == 0) emu->or_flag = 0;
  emu->block->arrive_and_wait();
  return r;
}
inline int __syncthreads_and(int p) { return !__syncthreads_or(!p); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu->warps[emu_tid() / 32]->arrive_and_wait(); }
inline unsigned __ballot_sync(unsigned, int p) {
  unsigned w = emu_tid() / 32, lane = emu_tid() % 32;
  if (p) emu->ballot[w].fetch_or(1u << lane);
  __syncwarp();
  unsigned r = emu->ballot[w].load();
  __syncwarp();
  if (lane == 0) emu->ballot[w] = 0;
  __syncwarp();
  return r;
}
inline unsigned __shfl_up_sync(unsigned, unsigned v, unsigned d) {
  unsigned w = emu_tid() / 32, lane = emu_tid() % 32;
  emu->shfl[w][lane] = v;
  __syncwarp();
  unsigned r = lane >= d ? emu->shfl[w][lane - d] : v;
  __syncwarp();
  return r;
}
// CUDA's 64-bit overload: the two halves, one shuffle each.
inline unsigned long long __shfl_up_sync(unsigned m, unsigned long long v, unsigned d) {
  const unsigned lo = __shfl_up_sync(m, (unsigned)v, d);
  const unsigned hi = __shfl_up_sync(m, (unsigned)(v >> 32), d);
  return ((unsigned long long)hi << 32) | lo;
}
inline unsigned __shfl_sync(unsigned, unsigned v, int from) {
  unsigned w = emu_tid() / 32, lane = emu_tid() % 32;
  emu->shfl[w][lane] = v;
  __syncwarp();
  unsigned r = emu->shfl[w][from & 31];
  __syncwarp();
  return r;
}
inline int __ffs(unsigned x) { return __builtin_ffs(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __clz(unsigned x) { return x == 0 ? 32 : __builtin_clz(x); }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return (unsigned)((((unsigned long long)hi << 32) | lo) >> (shift & 31));
}
inline unsigned atomicOr(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).fetch_or(v); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).fetch_add(v); }
inline unsigned atomicCAS(unsigned* p, unsigned cmp, unsigned v) {
  std::atomic_ref<unsigned>(*p).compare_exchange_strong(cmp, v);
  return cmp;
}

// Launches `kernel` over `grid` x `grid_y` blocks of `block` threads.
inline void emu_launch_2d(unsigned grid, unsigned grid_y, unsigned block, std::function<void()> kernel) {
  gridDim.x = grid;
  gridDim.y = grid_y;
  blockDim.x = block;
  for (unsigned b = 0; b < grid * grid_y; ++b) {
    blockIdx.x = b % grid;
    blockIdx.y = b / grid;
    EmuBlock eb;
    std::barrier<> bar(block);
    eb.block = &bar;
    std::vector<std::barrier<>*> wb;
    for (unsigned w = 0; w < (block + 31) / 32; ++w) wb.push_back(new std::barrier<>(std::min(32u, block - w * 32)));
    eb.warps = wb;
    for (auto& a : eb.ballot) a = 0;
    emu = &eb;
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < block; ++t) ts.emplace_back([t, &kernel] { threadIdx.x = t; kernel(); });
    for (auto& t : ts) t.join();
    for (auto* p : wb) delete p;
  }
}

// Launches `kernel` over `grid` blocks of `block` threads.
inline void emu_launch(unsigned grid, unsigned block, std::function<void()> kernel) {
  emu_launch_2d(grid, 1, block, kernel);
}
