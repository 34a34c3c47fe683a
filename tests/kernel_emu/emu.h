// CPU emulation of the CUDA features the gdscan kernels use, so that their
// logic (tiles, run tables, ballots, scans, bounds checks) is tested on
// machines without a GPU (tests/kernel_emu.rs compiles and runs it).
//
// A fiber (a stack and saved registers) per CUDA thread, all on
// one OS thread; the blocks of a launch run one after another, so
// `__shared__` is a function-level static. A block's fibers run in turn,
// each until it waits at a barrier or ends: __syncthreads is a block
// barrier, __syncwarp / __ballot_sync / __shfl_up_sync / __shfl_sync use a
// barrier per warp (a barrier completes when every thread of the block, or
// of the warp, has arrived; a kernel that calls them from diverged threads,
// or after some threads returned, is a deadlock, which aborts with the
// waiting threads named, as it would misbehave on the GPU). Device memory
// is host memory. What this does NOT model: the GPU's memory model and
// timing, alignment faults, and the compiler NVRTC is (the NVRTC compile
// test covers that). Under AddressSanitizer the stack switches are
// announced to it (__sanitizer_start_switch_fiber).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>
#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_ASAN 1
#endif
#endif
#ifdef EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

struct dim3 { unsigned x = 1, y = 1, z = 1; };
// Set by the scheduler before it resumes a thread's fiber.
inline dim3 threadIdx;
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

// A barrier: complete when `expected` threads have arrived; `gen` counts
// completions (a waiting thread runs again once it moved on).
struct EmuBarrier {
  unsigned expected = 0, arrived = 0, gen = 0;
};

struct EmuBlock {
  std::vector<EmuBarrier> bars;  // [0] the block's, [1 + w] warp w's
  std::atomic<int> or_flag{0};
  std::atomic<unsigned> ballot[64];
  unsigned shfl[64][32];
};
inline EmuBlock* emu;

// A fiber's saved context. On x86-64 a switch saves the callee-saved
// registers on the old stack and loads the new one (emu_ctx_switch below: a
// few nanoseconds); elsewhere ucontext's swapcontext does it (with a system
// call for the signal mask each time).
#if defined(__x86_64__)
struct EmuCtx {
  void* sp = nullptr;
};
extern "C" void emu_ctx_switch(void** save_sp, void* load_sp);
asm(R"(
  .text
  .globl emu_ctx_switch
  .type emu_ctx_switch, @function
emu_ctx_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size emu_ctx_switch, .-emu_ctx_switch
)");
// A context that starts `entry` (which must never return) on `stack`.
inline void emu_ctx_make(EmuCtx& c, char* stack, size_t size, void (*entry)()) {
  void** sp = (void**)(((uintptr_t)(stack + size)) & ~(uintptr_t)15);
  *--sp = nullptr;          // entry's return address: none
  *--sp = (void*)entry;     // where emu_ctx_switch's `ret` goes
  for (int i = 0; i < 6; ++i) *--sp = nullptr;  // rbp, rbx, r12-r15
  --sp;
  unsigned mxcsr = 0x1f80;  // the defaults: every exception masked,
  unsigned short fpcw = 0x037f;  // round to nearest
  memcpy(sp, &mxcsr, 4);
  memcpy((char*)sp + 4, &fpcw, 2);
  c.sp = sp;
}
inline void emu_ctx_swap(EmuCtx& from, EmuCtx& to) { emu_ctx_switch(&from.sp, to.sp); }
#else
struct EmuCtx {
  ucontext_t uc;
};
inline void emu_ctx_make(EmuCtx& c, char* stack, size_t size, void (*entry)()) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
}
inline void emu_ctx_swap(EmuCtx& from, EmuCtx& to) {
  if (swapcontext(&from.uc, &to.uc) != 0) {
    perror("emu: swapcontext");
    abort();
  }
}
#endif

// A CUDA thread: its fiber's context and stack, and the barrier it waits at.
struct EmuFiber {
  EmuCtx ctx;
  char* stack = nullptr;  // the usable stack, above a guard page
  unsigned waits = 0;     // 1 + the barrier it waits at; 0: none
  unsigned gen = 0;       // that barrier's `gen` when it arrived
  bool done = false;
};
// 1 MiB a fiber (pages are touched only as used), a guard page below it.
inline constexpr size_t EMU_STACK = 1u << 20;
inline constexpr size_t EMU_GUARD = 1u << 16;
// The fibers, kept across launches (a context must not move).
inline std::vector<std::unique_ptr<EmuFiber>> emu_fibers;
inline unsigned emu_cur;  // the running fiber
inline EmuCtx emu_main;  // the launching (scheduler's) context
inline const std::function<void()>* emu_kernel;
inline const void* emu_main_bottom;  // the scheduler's stack, for ASan
inline size_t emu_main_size;

// Swaps from `from` to `to` (whose stack is `bottom`, `size` bytes);
// `ending`: the current fiber never runs again.
inline void emu_swap(EmuCtx& from, EmuCtx& to, const void* bottom, size_t size, bool ending = false) {
#ifdef EMU_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(ending ? nullptr : &fake, bottom, size);
#else
  (void)bottom, (void)size, (void)ending;
#endif
  emu_ctx_swap(from, to);
#ifdef EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

// A fiber's entry: runs the kernel as thread `emu_cur`, then hands back.
inline void emu_fiber_main() {
#ifdef EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &emu_main_bottom, &emu_main_size);
#endif
  (*emu_kernel)();
  EmuFiber& f = *emu_fibers[emu_cur];
  f.done = true;
  emu_swap(f.ctx, emu_main, emu_main_bottom, emu_main_size, true);
  abort();  // never resumed
}

// Arrives at barrier `b` and waits until it completes.
inline void emu_wait(unsigned b) {
  EmuBarrier& bar = emu->bars[b];
  if (++bar.arrived == bar.expected) {
    bar.arrived = 0;
    ++bar.gen;
    return;
  }
  EmuFiber& f = *emu_fibers[emu_cur];
  f.waits = b + 1;
  f.gen = bar.gen;
  emu_swap(f.ctx, emu_main, emu_main_bottom, emu_main_size);
}

inline unsigned emu_tid() { return threadIdx.x; }
inline void __syncthreads() { emu_wait(0); }
inline int __syncthreads_or(int p) {
  if (p) emu->or_flag = 1;
  emu_wait(0);
  int r = emu->or_flag.load();
  emu_wait(0);
  if (emu_tid() == 0) emu->or_flag = 0;
  emu_wait(0);
  return r;
}
inline int __syncthreads_and(int p) { return !__syncthreads_or(!p); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu_wait(1 + emu_tid() / 32); }
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

// The order the threads run in between two barriers: a new shuffle each
// round (seeded by GDSCAN_EMU_SEED, else a fixed seed: a run repeats
// itself), so that a kernel missing a barrier between a write and a read
// of shared memory reads before the write in some round, whichever thread
// writes.
inline uint64_t emu_rng = [] {
  const char* seed = getenv("GDSCAN_EMU_SEED");
  const uint64_t s = seed ? strtoull(seed, nullptr, 10) : 0;
  return s * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
}();
inline void emu_shuffle(std::vector<unsigned>& order) {
  for (size_t i = order.size(); i > 1; --i) {
    emu_rng ^= emu_rng << 13;
    emu_rng ^= emu_rng >> 7;
    emu_rng ^= emu_rng << 17;
    std::swap(order[i - 1], order[emu_rng % i]);
  }
}

// Runs one block of `block` threads: each fiber in turn (in a shuffled
// order) until it waits or ends, round after round, until all have ended;
// aborts on a deadlock.
inline void emu_run_block(unsigned block, const std::function<void()>& kernel) {
  EmuBlock eb;
  eb.bars.resize(1 + (block + 31) / 32);
  eb.bars[0].expected = block;
  for (unsigned w = 0; w + 1 < eb.bars.size(); ++w) eb.bars[1 + w].expected = std::min(32u, block - w * 32);
  for (auto& a : eb.ballot) a = 0;
  emu = &eb;
  emu_kernel = &kernel;
  while (emu_fibers.size() < block) {
    auto f = std::make_unique<EmuFiber>();
    void* m = mmap(nullptr, EMU_STACK + EMU_GUARD, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED || mprotect(m, EMU_GUARD, PROT_NONE) != 0) {
      perror("emu: a fiber's stack");
      abort();
    }
    f->stack = (char*)m + EMU_GUARD;
    emu_fibers.push_back(std::move(f));
  }
  for (unsigned t = 0; t < block; ++t) {
    EmuFiber& f = *emu_fibers[t];
    f.done = false;
    f.waits = 0;
#ifdef EMU_ASAN
    // What the last block left poisoned on this stack is not this one's.
    ASAN_UNPOISON_MEMORY_REGION(f.stack, EMU_STACK);
#endif
    emu_ctx_make(f.ctx, f.stack, EMU_STACK, emu_fiber_main);
  }
  std::vector<unsigned> order(block);
  for (unsigned t = 0; t < block; ++t) order[t] = t;
  for (unsigned left = block;;) {
    emu_shuffle(order);
    bool ran = false;
    for (const unsigned t : order) {
      EmuFiber& f = *emu_fibers[t];
      if (f.done || (f.waits && eb.bars[f.waits - 1].gen == f.gen)) continue;
      f.waits = 0;
      emu_cur = t;
      threadIdx.x = t;
      emu_swap(emu_main, f.ctx, f.stack, EMU_STACK);
      ran = true;
      left -= f.done;
    }
    if (left == 0) break;
    if (!ran) {
      fprintf(stderr, "emu: deadlock in block (%u, %u): threads waiting at a barrier that cannot complete:",
              blockIdx.x, blockIdx.y);
      for (unsigned t = 0; t < block; ++t) {
        const EmuFiber& f = *emu_fibers[t];
        if (!f.done) fprintf(stderr, " %u (%s)", t, f.waits == 1 ? "block" : "warp");
      }
      fprintf(stderr, "\n");
      abort();
    }
  }
  emu = nullptr;
}

// Launches `kernel` over `grid` x `grid_y` blocks of `block` threads.
inline void emu_launch_2d(unsigned grid, unsigned grid_y, unsigned block, std::function<void()> kernel) {
  gridDim.x = grid;
  gridDim.y = grid_y;
  blockDim.x = block;
  for (unsigned b = 0; b < grid * grid_y; ++b) {
    blockIdx.x = b % grid;
    blockIdx.y = b / grid;
    emu_run_block(block, kernel);
  }
}

// Launches `kernel` over `grid` blocks of `block` threads.
inline void emu_launch(unsigned grid, unsigned block, std::function<void()> kernel) {
  emu_launch_2d(grid, 1, block, kernel);
}
