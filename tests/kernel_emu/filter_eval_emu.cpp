// The filter evaluator (filter_eval.cu: gds_filter_eval) under the CPU
// emulation of emu.h, on cases read from a file that tests/kernel_emu.rs
// writes from random Arrow batches and predicates compiled by
// GpuPredicate::compile; the masks are written back for the test to
// compare with the host evaluator (Predicate::evaluate).
//
// Input (little-endian): u32 n_cases, then per case: u32 n_rows, u32
// n_steps and the program (16 bytes a step), u32 n_columns and the column
// table (GDS_FILTER_COLUMN_WORDS u64s a column), u32 n_buffers and the
// buffer table (two u64s a buffer), u32 literals_len and the literals, u64
// data_len and the data. Addresses in the tables are 1 + an offset into
// the data (0: none). Output per case: u32 status, then n_rows mask bytes.
#include "emu.h"
#include "filter_eval.cu"
#include <cstdio>
#include <vector>

struct Input {
  const std::vector<uint8_t>& b;
  size_t at = 0;
  const uint8_t* bytes(size_t n) {
    if (at + n > b.size()) { fprintf(stderr, "input ends early\n"); exit(2); }
    const uint8_t* p = b.data() + at;
    at += n;
    return p;
  }
  u32 word() { u32 v; memcpy(&v, bytes(4), 4); return v; }
  u64 dword() { u64 v; memcpy(&v, bytes(8), 8); return v; }
};

// memcpy of n bytes, none when n is 0 (empty vectors may hold no pointer).
static void copy(void* dst, const void* src, size_t n) {
  if (n) memcpy(dst, src, n);
}

// An address of the file (1 + offset) as one into `data`.
static u64 place(u64 v, const uint8_t* data) { return v == 0 ? 0 : (u64)data + (v - 1); }

int main(int argc, char** argv) {
  if (argc != 3) { fprintf(stderr, "usage: filter_eval_emu input output\n"); return 2; }
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  std::vector<uint8_t> raw;
  for (int c; (c = fgetc(f)) != EOF;) raw.push_back((uint8_t)c);
  fclose(f);
  FILE* o = fopen(argv[2], "wb");
  if (!o) return 2;
  Input in{raw};
  const u32 n_cases = in.word();
  for (u32 k = 0; k < n_cases; ++k) {
    const u32 n_rows = in.word();
    const u32 n_steps = in.word();
    // Each part in a vector of exactly its size: a read past it is a heap
    // overflow under the sanitizers.
    std::vector<u32> program(n_steps * 4);
    copy(program.data(), in.bytes(n_steps * 16ull), n_steps * 16ull);
    const u32 n_columns = in.word();
    std::vector<u64> columns(n_columns * (u64)GDS_FILTER_COLUMN_WORDS);
    copy(columns.data(), in.bytes(columns.size() * 8), columns.size() * 8);
    const u32 n_buffers = in.word();
    std::vector<u64> buffers(n_buffers * 2ull);
    copy(buffers.data(), in.bytes(buffers.size() * 8), buffers.size() * 8);
    const u32 literals_len = in.word();
    std::vector<u8> literals(literals_len);
    copy(literals.data(), in.bytes(literals_len), literals_len);
    const u64 data_len = in.dword();
    std::vector<u64> data_words((data_len + 7) / 8 + 1);
    const uint8_t* data = (const uint8_t*)data_words.data();
    copy(data_words.data(), in.bytes(data_len), data_len);
    for (u32 c = 0; c < n_columns; ++c) {
      u64* w = columns.data() + (u64)c * GDS_FILTER_COLUMN_WORDS;
      w[1] = place(w[1], data);
      for (u32 j = 0; j < GDS_FILTER_MAX_PATH; ++j) w[6 + 3 * j] = place(w[6 + 3 * j], data);
    }
    for (u32 b = 0; b < n_buffers; ++b) buffers[2 * b] = place(buffers[2 * b], data);
    std::vector<u8> mask(n_rows, 0xAB);
    u32 status = 0;
    // Small blocks, at most two: rows past the grid are strided over.
    const u32 block = 64;
    u32 grid = (n_rows + block - 1) / block;
    grid = grid > 2 ? 2 : grid;
    if (n_rows > 0) {
      const u32* pp = program.data();
      const u64* cp = columns.data();
      const u64* bp = buffers.data();
      const u8* lp = literals.data();
      u8* mp = mask.data();
      emu_launch(grid, block, [&] {
        gds_filter_eval(pp, n_steps, cp, n_columns, bp, n_buffers, lp, literals_len, n_rows, mp, &status);
      });
    }
    fwrite(&status, 4, 1, o);
    if (n_rows) fwrite(mask.data(), 1, n_rows, o);
  }
  fclose(o);
  printf("ALL OK\n");
  return 0;
}
