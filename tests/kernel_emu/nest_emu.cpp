// The nesting kernels (nest.cu: gds_nest_count, gds_nest_scan,
// gds_nest_write) under the CPU emulation of emu.h, on tasks read from a
// file that tests/kernel_emu.rs writes from real files' levels; what they
// make is written back for the test to compare with the CPU reference
// (src/decode/page/nesting/assembly.rs).
//
// Input (little-endian u32 unless said): n_tasks, then per task: entries,
// max_rep, max_def, level_def[8], level_fixed[8], capacity[8], n_outputs,
// the repetition levels
// (entries bytes), the definition levels (entries bytes), then per output:
// kind, level, threshold, width, src_len, src (src_len bytes), dst_len.
// Output: per task its GDS_NEST_STATUS_WORDS status words, then per output
// its dst_len bytes.
#include "emu.h"
#include "nest.cu"
#include <cstdio>
#include <vector>

static std::vector<std::vector<uint8_t>*> keep;

// A 256-byte aligned buffer of n bytes (plus slack), filled with `fill`.
static uint8_t* alloc(size_t n, uint8_t fill) {
  auto* p = new std::vector<uint8_t>(n + 512, fill);
  keep.push_back(p);
  return (uint8_t*)(((u64)p->data() + 255) & ~255ull);
}

struct Input {
  const std::vector<uint8_t>& b;
  size_t at = 0;
  u32 word() {
    if (at + 4 > b.size()) { fprintf(stderr, "input ends early\n"); exit(2); }
    u32 v;
    memcpy(&v, b.data() + at, 4);
    at += 4;
    return v;
  }
  const uint8_t* bytes(size_t n) {
    if (at + n > b.size()) { fprintf(stderr, "input ends early\n"); exit(2); }
    const uint8_t* p = b.data() + at;
    at += n;
    return p;
  }
};

int main(int argc, char** argv) {
  if (argc != 3) { fprintf(stderr, "usage: nest_emu input output\n"); return 2; }
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  std::vector<uint8_t> raw;
  for (int c; (c = fgetc(f)) != EOF;) raw.push_back((uint8_t)c);
  fclose(f);
  Input in{raw};
  const u32 n_tasks = in.word();
  std::vector<NestTask> tasks(n_tasks);
  std::vector<std::vector<std::pair<uint8_t*, u32>>> dsts(n_tasks);
  u32 max_entries = 0;
  for (u32 k = 0; k < n_tasks; ++k) {
    NestTask& t = tasks[k];
    t = NestTask{};
    t.entries = in.word();
    t.max_rep = in.word();
    t.max_def = in.word();
    for (u32 j = 0; j < GDS_NEST_LEVELS; ++j) t.level_def[j] = in.word();
    for (u32 j = 0; j < GDS_NEST_LEVELS; ++j) t.level_fixed[j] = in.word();
    for (u32 j = 0; j < GDS_NEST_LEVELS; ++j) t.capacity[j] = in.word();
    t.n_outputs = in.word();
    max_entries = t.entries > max_entries ? t.entries : max_entries;
    // Levels hold exactly their entries: a read past them is a heap
    // overflow under the sanitizers.
    const uint8_t* rp = in.bytes(t.entries);
    auto* rep = new std::vector<uint8_t>(rp, rp + t.entries);
    keep.push_back(rep);
    const uint8_t* dp = in.bytes(t.entries);
    auto* def = new std::vector<uint8_t>(dp, dp + t.entries);
    keep.push_back(def);
    t.rep = t.max_rep > 0 ? (u64)rep->data() : 0;
    t.def = t.max_def > 0 ? (u64)def->data() : 0;
    const u32 tiles = (t.entries + GDS_NEST_TILE - 1) / GDS_NEST_TILE;
    t.tiles = (u64)alloc((size_t)tiles * GDS_NEST_LEVELS * 4 + 4, 0xEE);
    t.status = (u64)alloc(GDS_NEST_STATUS_WORDS * 4, 0);
    auto* outs = (NestOutput*)alloc(sizeof(NestOutput) * (t.n_outputs + 1), 0);
    u32 counted = 0;
    for (u32 o = 0; o < t.n_outputs; ++o) {
      NestOutput& out = outs[o];
      out.kind = in.word();
      out.level = in.word();
      out.threshold = in.word();
      out.width = in.word();
      const u32 src_len = in.word();
      uint8_t* src = alloc(src_len, 0);
      memcpy(src, in.bytes(src_len), src_len);
      out.src = src_len ? (u64)src : 0;
      // A validity's valid slots are counted in the task's status words
      // from GDS_NEST_COUNT_FIRST, in output order (as the decoder assigns).
      if ((out.kind & 0xffu) == GDS_NEST_VALIDITY) {
        out.src = counted < GDS_NEST_STATUS_WORDS - GDS_NEST_COUNT_FIRST ? GDS_NEST_COUNT_FIRST + counted : 0;
        ++counted;
      }
      const u32 dst_len = in.word();
      // Bitmaps start zeroed (the host zeroes them); other outputs are
      // filled with a marker a missed write would leave.
      const u32 kind = out.kind & 0xffu;
      const bool bitmap = kind == GDS_NEST_VALIDITY || kind == GDS_NEST_BITS;
      uint8_t* dst = alloc(dst_len, bitmap ? 0 : 0xCD);
      out.dst = (u64)dst;
      dsts[k].push_back({dst, dst_len});
    }
    t.outputs = (u64)outs;
  }
  if (n_tasks > 0) {
    const u32 tiles = (max_entries + GDS_NEST_TILE - 1) / GDS_NEST_TILE;
    const u32 gx = tiles == 0 ? 1 : tiles;
    NestTask* tp = tasks.data();
    emu_launch_2d(gx, n_tasks, GDS_NEST_BLOCK, [&] { gds_nest_count(tp, n_tasks); });
    emu_launch(n_tasks, GDS_NEST_BLOCK, [&] { gds_nest_scan(tp, n_tasks); });
    emu_launch_2d(gx, n_tasks, GDS_NEST_BLOCK, [&] { gds_nest_write(tp, n_tasks); });
  }
  FILE* o = fopen(argv[2], "wb");
  if (!o) return 2;
  for (u32 k = 0; k < n_tasks; ++k) {
    fwrite((const void*)tasks[k].status, 4, GDS_NEST_STATUS_WORDS, o);
    for (auto& d : dsts[k]) fwrite(d.first, 1, d.second, o);
  }
  fclose(o);
  printf("ALL OK\n");
  return 0;
}
