// The compaction kernels (compact.cu) under the CPU emulation of emu.h.
//
// `compact_emu scan`: the scans against plain loops, for many lengths (0,
// 1, warp, block and tile edges, past 256 tiles, millions): the kept rows
// of random masks of several densities, and u32 values scanned into 4- and
// 8-byte offsets (sums past 2^32 included).
//
// `compact_emu INPUT OUTPUT`: batches read from INPUT, compacted by the
// kernels in the order src/decode/filter/compact.rs and compact_column.rs
// queue them, written to OUTPUT for tests/kernel_emu/compact.rs to compare
// with arrow's filter. Little-endian u64 throughout.
// Input: n_cases; per case: rows n, the mask (n bytes), n_columns, columns.
// Column: type (0 Null, 1 fixed width, 2 Boolean, 3 view, 4 offsets and
// bytes, 5 list, 6 fixed-size list, 7 struct), param (width, offset width
// or size), offset, len, has_validity, [validity: n_bytes, bytes],
// n_buffers, [n_bytes, bytes] each, n_children, children.
// Output: per case: the error word, k, then (when 0 < k < n) per column:
// len, has_validity, null_count, [validity: n_bytes, bytes], n_buffers,
// buffers (views: the gathered views only), n_children, children.
#include "emu.h"
#include "compact.cu"
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

static std::vector<std::unique_ptr<std::vector<uint8_t>>> keep;
static const unsigned GRID_CAP = 3;  // few blocks: every kernel strides

// A buffer of exactly n bytes (a read past it is a heap overflow under the
// sanitizers), filled with `fill`.
static uint8_t* alloc(size_t n, uint8_t fill = 0xCD) {
  keep.push_back(std::make_unique<std::vector<uint8_t>>(n == 0 ? 1 : n, fill));
  return keep.back()->data();
}

static void launch(u64 blocks, std::function<void()> k) {
  if (blocks == 0) return;
  emu_launch((unsigned)(blocks < GRID_CAP ? blocks : GRID_CAP), GDS_COMPACT_BLOCK, k);
}
static u64 per_item(u64 items) { return (items + GDS_COMPACT_BLOCK - 1) / GDS_COMPACT_BLOCK; }
static u64 tiles(u64 n) { return (n + GDS_COMPACT_TILE - 1) / GDS_COMPACT_TILE; }

struct Scan {
  u64* sums;
  u64 total;
};

// As Compaction::scan: the tiles' sums, their prefix, the total.
static Scan scan(const uint8_t* values, u64 n, u32 width) {
  Scan s{(u64*)alloc(8 * tiles(n)), 0};
  u64* total = (u64*)alloc(8);
  launch(tiles(n), [&] { gds_compact_tile_sums(values, n, width, s.sums); });
  emu_launch(1, GDS_COMPACT_BLOCK, [&] { gds_compact_scan_sums(s.sums, (u32)tiles(n), total); });
  s.total = *total;
  return s;
}

static int failures = 0;
#define CHECK(c, ...)                     \
  do {                                    \
    if (!(c)) {                           \
      printf("FAIL %s: ", #c);            \
      printf(__VA_ARGS__);                \
      printf("\n");                       \
      if (++failures > 20) exit(1);       \
    }                                     \
  } while (0)

// gds_compact_scan_sums alone over more tiles than its block takes at once
// (chunks of GDS_COMPACT_BLOCK), with sums near 2^32 each (the 64-bit
// prefix of 2^32 - 1 rows' worth of lists).
static void scan_sums_self_test(std::mt19937_64& rng) {
  for (u32 n_tiles : {0u, 1u, 255u, 256u, 257u, 1000u}) {
    std::vector<u64> sums(n_tiles + 1), copy;
    for (auto& s : sums) s = rng() >> 32;
    copy = sums;
    u64 total = 0;
    u64* sp = sums.data();
    emu_launch(1, GDS_COMPACT_BLOCK, [&] { gds_compact_scan_sums(sp, n_tiles, &total); });
    u64 at = 0;
    for (u32 i = 0; i < n_tiles; ++i) {
      CHECK(sums[i] == at, "scan_sums %u: prefix %u", n_tiles, i);
      at += copy[i];
    }
    CHECK(total == at, "scan_sums %u: total", n_tiles);
    CHECK(sums[n_tiles] == copy[n_tiles], "scan_sums %u: wrote past its tiles", n_tiles);
  }
}

static void scan_self_test() {
  std::mt19937_64 rng(58);
  const u64 T = GDS_COMPACT_TILE;
  scan_sums_self_test(rng);
  // The GPU's tiles: lengths at the warp, thread, block and tile edges;
  // built with more items a thread (GDS_COMPACT_ITEMS): millions of rows.
  const bool gpu_tiles = GDS_COMPACT_ITEMS == 16u;
  std::vector<u64> lengths = {0, 1, 2, 15, 16, 17, 33, 255, 257, 4095, 4096, 4097, 8193, T * 3 + 100};
  if (!gpu_tiles) lengths = {T - 1, T + 1, T * 5 + 3, 3000017};
  for (u64 n : lengths) {
    // Densities: none, all, one, sparse, half, runs (the ends at 257 only).
    for (int d = 0; d < 6; ++d) {
      if (n != 257 && (d == 0 || d == 1)) continue;
      if (n > 100000 && d != 4 && d != 5) continue;
      uint8_t* mask = alloc(n);
      u64 one = n ? rng() % n : 0;
      u64 run = 0;
      bool on = false;
      for (u64 i = 0; i < n; ++i) {
        if (run == 0) { on = !on; run = 1 + rng() % 5000; }
        --run;
        const u64 r = rng();
        mask[i] = d == 0 ? 0 : d == 1 ? (uint8_t)(1 + r % 255) : d == 2 ? (i == one) : d == 3 ? (r % 97 == 0)
                : d == 4 ? (uint8_t)(r & 1) * 7 : on;
      }
      std::vector<u32> expect;
      for (u64 i = 0; i < n; ++i) if (mask[i]) expect.push_back((u32)i);
      Scan s = scan(mask, n, 1);
      CHECK(s.total == expect.size(), "n %llu density %d: total %llu, loop %zu", (unsigned long long)n, d,
            (unsigned long long)s.total, expect.size());
      u32* rows = (u32*)alloc(4 * s.total + 4);
      launch(tiles(n), [&] { gds_compact_mask_rows(mask, n, s.sums, rows); });
      CHECK(s.total != expect.size() || memcmp(rows, expect.data(), 4 * expect.size()) == 0,
            "n %llu density %d: rows differ", (unsigned long long)n, d);
    }
    if (n > 100000) continue;
    // u32 values (some huge: the sums pass 2^32) into 4- and 8-byte offsets.
    for (int big = 0; big < 2; ++big) {
      u32* values = (u32*)alloc(4 * n);
      for (u64 i = 0; i < n; ++i) values[i] = big ? (u32)(rng() >> 33) : (u32)(rng() % 9);
      Scan s = scan((const uint8_t*)values, n, 4);
      u64 sum = 0;
      for (u64 i = 0; i < n; ++i) sum += values[i];
      CHECK(s.total == sum, "values n %llu: total", (unsigned long long)n);
      for (u32 width : {4u, 8u}) {
        if (width == 4 && sum > 0xffffffffull) continue;
        uint8_t* out = alloc(width * (n + 1));
        if (n == 0) memset(out, 0, width);  // as Compaction::ranges: zeroed
        launch(tiles(n), [&] { gds_compact_scan_write(values, n, s.sums, width, out); });
        u64 at = 0;
        for (u64 i = 0; i <= n; ++i) {
          const u64 got = width == 8 ? ((u64*)out)[i] : ((u32*)out)[i];
          CHECK(got == at, "values n %llu width %u: offset %llu is %llu, loop %llu", (unsigned long long)n, width,
                (unsigned long long)i, (unsigned long long)got, (unsigned long long)at);
          if (got != at) break;
          if (i < n) at += values[i];
        }
      }
    }
  }
}

struct Reader {
  std::vector<uint8_t> b;
  size_t at = 0;
  u64 word() {
    if (at + 8 > b.size()) { fprintf(stderr, "input ends early\n"); exit(2); }
    u64 v;
    memcpy(&v, b.data() + at, 8);
    at += 8;
    return v;
  }
  // A buffer of exactly its bytes.
  std::pair<uint8_t*, u64> bytes() {
    const u64 n = word();
    if (at + n > b.size()) { fprintf(stderr, "input ends early\n"); exit(2); }
    uint8_t* p = alloc(n);
    memcpy(p, b.data() + at, n);
    at += n;
    return {p, n};
  }
};

struct Col {
  u64 type, param, offset, len;
  bool has_validity;
  std::pair<uint8_t*, u64> validity;
  std::vector<std::pair<uint8_t*, u64>> buffers;
  std::vector<Col> children;
};

static Col read_col(Reader& r) {
  Col c;
  c.type = r.word();
  c.param = r.word();
  c.offset = r.word();
  c.len = r.word();
  c.has_validity = r.word() != 0;
  if (c.has_validity) c.validity = r.bytes();
  for (u64 i = r.word(); i > 0; --i) c.buffers.push_back(r.bytes());
  for (u64 i = r.word(); i > 0; --i) c.children.push_back(read_col(r));
  return c;
}

struct Rows {
  u32* list;
  u32 k;
  u64 base;
};

static u32* error_word;
static std::vector<uint8_t> out;

static void put(u64 v) { out.insert(out.end(), (uint8_t*)&v, (uint8_t*)&v + 8); }
static void put_bytes(const uint8_t* p, u64 n) {
  put(n);
  out.insert(out.end(), p, p + n);
}

// As Compaction::bits.
static std::pair<uint8_t*, u64> bits(std::pair<uint8_t*, u64> src, u64 first, const Rows& rows, u32* unset) {
  const u64 n = 4 * (((u64)rows.k + 31) / 32);
  uint8_t* dst = alloc(n);
  launch(per_item((rows.k + 31ull) / 32), [&] {
    gds_compact_bits(src.first, first, 8 * src.second, rows.list, rows.k, (u32*)dst, unset, error_word);
  });
  return {dst, n};
}

// As Compaction::gather.
static std::pair<uint8_t*, u64> gather(std::pair<uint8_t*, u64> src, u64 first, u32 width, const Rows& rows) {
  uint8_t* dst = alloc((u64)width * rows.k);
  if (width > 0)
    launch(per_item(rows.k), [&] {
      gds_compact_gather(src.first, first, src.second / width, width, rows.list, rows.k, dst, error_word);
    });
  return {dst, (u64)width * rows.k};
}

// As Compaction::ranges: the new offsets and the child rows (false when the
// offsets are bad: the host stops there).
static bool ranges(std::pair<uint8_t*, u64> offsets, u32 width, u64 first, const Rows& rows, u64 child_len,
                   std::pair<uint8_t*, u64>* new_offsets, Rows* child) {
  u32* lengths = (u32*)alloc(4 * rows.k);
  launch(per_item(rows.k), [&] {
    gds_compact_list_lengths(offsets.first, width, offsets.second / width, first, rows.list, rows.k, child_len,
                             lengths, error_word);
  });
  Scan s = scan((const uint8_t*)lengths, rows.k, 4);
  if (*error_word != 0) return false;
  const u64 n = ((u64)rows.k + 1) * width;
  uint8_t* o = alloc(n, 0);
  launch(tiles(rows.k), [&] { gds_compact_scan_write(lengths, rows.k, s.sums, width, o); });
  u32* child_rows = (u32*)alloc(4 * s.total);
  launch(per_item(s.total), [&] {
    gds_compact_expand(o, width, rows.k, offsets.first, first, rows.list, s.total, child_rows);
  });
  *new_offsets = {o, n};
  *child = Rows{child_rows, (u32)s.total, 0};
  return true;
}

static u32 counters[1024];
static u32 next_counter;

// Compacts `c` to `rows` and writes it out (as Compaction::column).
static bool column(const Col& c, const Rows& rows) {
  const u64 first = c.offset + rows.base;
  put(rows.k);
  put(c.has_validity);
  std::pair<uint8_t*, u64> validity;
  u32* unset = nullptr;
  if (c.has_validity) {
    unset = &counters[next_counter++];
    validity = bits(c.validity, first, rows, unset);
  }
  std::vector<std::pair<uint8_t*, u64>> bufs;
  std::vector<std::pair<const Col*, Rows>> kids;
  std::pair<uint8_t*, u64> offs;
  Rows child;
  switch (c.type) {
    case 0: break;
    case 1: bufs.push_back(gather(c.buffers[0], first, (u32)c.param, rows)); break;
    case 2: bufs.push_back(bits(c.buffers[0], first, rows, nullptr)); break;
    case 3: bufs.push_back(gather(c.buffers[0], first, 16, rows)); break;
    case 4:
      if (!ranges(c.buffers[0], (u32)c.param, first, rows, c.buffers[1].second, &offs, &child)) return false;
      bufs.push_back(offs);
      bufs.push_back(gather(c.buffers[1], 0, 1, child));
      break;
    case 5:
      if (!ranges(c.buffers[0], (u32)c.param, first, rows, c.children[0].len, &offs, &child)) return false;
      bufs.push_back(offs);
      kids.push_back({&c.children[0], child});
      break;
    case 6: {
      const u64 total = rows.k * c.param;
      u32* child_rows = (u32*)alloc(4 * total);
      launch(per_item(total), [&] {
        gds_compact_fixed_rows(rows.list, rows.k, first, (u32)c.param, child_rows);
      });
      kids.push_back({&c.children[0], Rows{child_rows, (u32)total, 0}});
      break;
    }
    case 7:
      for (const Col& k : c.children) kids.push_back({&k, Rows{rows.list, rows.k, first}});
      break;
  }
  put(unset ? *unset : 0);
  if (c.has_validity) put_bytes(validity.first, validity.second);
  put(bufs.size());
  for (auto& b : bufs) put_bytes(b.first, b.second);
  put(kids.size());
  for (auto& k : kids)
    if (!column(*k.first, k.second)) return false;
  return true;
}

static void compact_file(const char* in_path, const char* out_path) {
  FILE* f = fopen(in_path, "rb");
  if (!f) exit(2);
  Reader r;
  for (int ch; (ch = fgetc(f)) != EOF;) r.b.push_back((uint8_t)ch);
  fclose(f);
  for (u64 cases = r.word(); cases > 0; --cases) {
    const u64 n = r.word();
    uint8_t* mask = r.bytes().first;
    std::vector<Col> cols;
    for (u64 i = r.word(); i > 0; --i) cols.push_back(read_col(r));
    memset(counters, 0, sizeof counters);
    error_word = &counters[0];
    next_counter = 1;
    // As Compaction::kept_rows.
    Scan s = scan(mask, n, 1);
    Rows rows{(u32*)alloc(4 * s.total), (u32)s.total, 0};
    launch(tiles(n), [&] { gds_compact_mask_rows(mask, n, s.sums, rows.list); });
    const size_t head = out.size();
    put(0);
    put(s.total);
    if (s.total > 0 && s.total < n)
      for (const Col& c : cols)
        if (!column(c, rows)) break;
    memcpy(out.data() + head, error_word, 4);
  }
  FILE* o = fopen(out_path, "wb");
  if (!o) exit(2);
  fwrite(out.data(), 1, out.size(), o);
  fclose(o);
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "scan") == 0) {
    scan_self_test();
  } else if (argc == 3) {
    compact_file(argv[1], argv[2]);
  } else {
    fprintf(stderr, "usage: compact_emu scan | compact_emu input output\n");
    return 2;
  }
  if (failures) return 1;
  printf("ALL OK\n");
  return 0;
}
