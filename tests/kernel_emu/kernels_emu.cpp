// The decode kernels under the CPU emulation of emu.h, on hand-built pages
// (a tiny RLE/bit-packed hybrid encoder below): values, validity, views,
// null counts, status words and error codes against expectations computed
// here. Built and run by tests/kernel_emu.rs; exits non-zero on a mismatch.
#include "emu.h"
#include "decode.cu"
#include "byte_array.cu"
#include "byte_array_spread.cu"
#include "status.cu"
#include "nest.cu"
#include <cassert>
#include <cstring>
#include <cstdlib>
#include <string>
#include <optional>
#include <algorithm>

static std::vector<std::vector<uint8_t>*> keep;
// Uploads keep exactly the page's bytes, so that a read past them is a
// heap overflow AddressSanitizer reports (build with -fsanitize=address).
static u64 up(const std::vector<uint8_t>& v) {
  auto* p = new std::vector<uint8_t>(v);
  if (p->empty()) p->reserve(1);
  keep.push_back(p);
  return (u64)p->data();
}
static u64 alloc(size_t n, uint8_t fill) {
  // 16-byte aligned
  auto* p = new std::vector<uint8_t>(n + 32, fill);
  keep.push_back(p);
  u64 a = (u64)p->data();
  return (a + 15) & ~15ull;
}
struct Rng { u64 s; u64 next() { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; } u64 below(u64 n) { return next() % n; } };

static void uleb(std::vector<uint8_t>& o, u64 v) { for (;;) { uint8_t b = v & 0x7f; v >>= 7; if (!v) { o.push_back(b); return; } o.push_back(b | 0x80); } }
static std::vector<uint8_t> hybrid(const std::vector<u32>& vals, u32 bw, size_t min_rle = 8) {
  std::vector<uint8_t> out; std::vector<u32> pend;
  auto flush = [&]() {
    while (!pend.empty()) {
      size_t take = std::min(pend.size(), (size_t)504);
      std::vector<u32> c(pend.begin(), pend.begin() + take); pend.erase(pend.begin(), pend.begin() + take);
      size_t g = (c.size() + 7) / 8; c.resize(g * 8, 0);
      uleb(out, (g << 1) | 1);
      unsigned __int128 acc = 0; u32 nb = 0;
      for (u32 v : c) { acc |= (unsigned __int128)v << nb; nb += bw; while (nb >= 8) { out.push_back((uint8_t)acc); acc >>= 8; nb -= 8; } }
    }
  };
  size_t i = 0;
  while (i < vals.size()) {
    size_t j = i; while (j < vals.size() && vals[j] == vals[i]) ++j;
    if (j - i >= min_rle && pend.size() % 8 == 0) {
      flush(); uleb(out, (u64)(j - i) << 1);
      for (u32 b = 0; b < (bw + 7) / 8; ++b) out.push_back((vals[i] >> (8 * b)) & 0xff);
      i = j;
    } else { pend.push_back(vals[i]); ++i; }
  }
  flush();
  return out;
}
static std::vector<bool> rdef(Rng& r, size_t n, u64 pm) {
  std::vector<bool> o;
  while (o.size() < n) {
    if (r.below(10) == 0) { size_t run = r.below(100) + 1; bool v = r.below(2); for (size_t k = 0; k < run && o.size() < n; ++k) o.push_back(v); }
    else o.push_back(r.below(1000) >= pm);
  }
  return o;
}
enum Layout { REQ, V1, V2 };
static void place(PageTask& t, Layout l, const std::vector<bool>& def, const std::vector<uint8_t>& values, size_t min_rle = 8) {
  t.num_values = def.size();
  std::vector<u32> lv; for (bool d : def) lv.push_back(d);
  if (l == REQ) { t.max_def = 0; t.data = up(values); t.data_len = values.size(); }
  else if (l == V1) {
    auto e = hybrid(lv, 1, min_rle); std::vector<uint8_t> d(4); u32 n = e.size(); memcpy(d.data(), &n, 4);
    d.insert(d.end(), e.begin(), e.end()); d.insert(d.end(), values.begin(), values.end());
    t.max_def = 1; t.flags |= GDS_FLAG_V1_LEVELS; t.data = up(d); t.data_len = d.size();
  } else {
    auto e = hybrid(lv, 1, (size_t)-1);
    t.max_def = 1; t.def_levels = up(e); t.def_len = e.size(); t.data = up(values); t.data_len = values.size();
  }
}
static bool mode_is(const char* m) {
  const char* walks = getenv("GDSCAN_STRING_WALKS");
  return walks != nullptr && strcmp(walks, m) == 0;
}
// The spread walk as the decoder queues it: the item table as the host
// builds it (launch::SpreadTable), fresh state and bitmaps filled with
// garbage (every word the kernels read they must have written).
static void spread(std::vector<PageTask>& tasks, std::vector<DictTask>& dicts) {
  const u32 n = tasks.size(), m = dicts.size();
  std::vector<u32> first;
  u32 chunks = 0;
  for (auto& d : dicts) { first.push_back(chunks); u32 c = (d.data_len + GDS_WALK_CHUNK - 1) / GDS_WALK_CHUNK; chunks += c == 0 && d.count > 0 ? 1 : c; }
  for (auto& t : tasks) { first.push_back(chunks); if (t.kind == GDS_KIND_BYTE_ARRAY && t.encoding == GDS_ENC_PLAIN) chunks += (t.data_len + GDS_WALK_CHUNK - 1) / GDS_WALK_CHUNK; }
  first.push_back(chunks);
  if (n + m == 0) return;
  std::vector<u32> state((size_t)chunks * GDS_SPREAD_STATE_WORDS + 1, 0xEEEEEEEEu), bits((size_t)chunks * (GDS_WALK_CHUNK / 32) + 1, 0xA5A5A5A5u);
  PageTask* tp = tasks.data(); DictTask* dp = dicts.data();
  // The join runs even without chunks (an empty section's count and end).
  if (chunks) emu_launch(chunks, GDS_SPREAD_BLOCK, [&] { gds_spread_spec(dp, m, tp, n, first.data(), state.data(), bits.data()); });
  emu_launch((n + m + GDS_SPREAD_JOIN_BLOCK - 1) / GDS_SPREAD_JOIN_BLOCK, GDS_SPREAD_JOIN_BLOCK, [&] { gds_spread_join(dp, m, tp, n, first.data(), state.data(), bits.data()); });
  if (chunks) emu_launch(chunks, GDS_SPREAD_BLOCK, [&] { gds_spread_emit(dp, m, tp, n, first.data(), state.data(), bits.data()); });
}
static void run(std::vector<PageTask>& tasks, std::vector<DictTask>& dicts, std::vector<uint4>& status) {
  PageTask* tp = tasks.data(); DictTask* dp = dicts.data(); u32 n = tasks.size(), m = dicts.size();
  status.assign(n + m, make_uint4(0xEE, 0xEE, 0xEE, 0xEE));
  uint4* sp = status.data();
  // As the decoder launches them: one after the other, both walks in one
  // launch (GDSCAN_STRING_WALKS=together) or spread over chunks (spread).
  if (mode_is("together")) {
    if (n + m) emu_launch(n + m, GDS_DICT_BLOCK, [&] { gds_string_walks(dp, m, tp, n); });
  } else if (mode_is("spread")) {
    spread(tasks, dicts);
  } else {
    if (m) emu_launch(m, GDS_DICT_BLOCK, [&] { gds_dict_views(dp, m); });
    emu_launch(n, GDS_WALK_BLOCK, [&] { gds_byte_array_walk(tp, n); });
  }
  emu_launch(n, GDS_BLOCK, [&] { gds_decode_pages(tp, n); });
  emu_launch((n + m + 255) / 256, GDS_STATUS_BLOCK, [&] { gds_gather_status(tp, n, dp, m, sp); });
}
// DELTA_BINARY_PACKED as the specification writes it (values of
// `width_bits`, 32 or 64, wrapping).
static std::vector<uint8_t> delta_encode(const std::vector<uint64_t>& v, u32 block, u32 minis, u32 width_bits) {
  std::vector<uint8_t> o; uleb(o, block); uleb(o, minis); uleb(o, v.size());
  auto zz = [](int64_t x) { return ((uint64_t)x << 1) ^ (uint64_t)(x >> 63); };
  uleb(o, zz(v.empty() ? 0 : (int64_t)v[0]));
  const u32 per = block / minis;
  const uint64_t mask = width_bits == 64 ? ~0ull : ((1ull << width_bits) - 1);
  for (size_t b = 1; b < v.size(); b += block) {
    std::vector<uint64_t> d;
    for (size_t j = b; j < v.size() && j < b + block; ++j) d.push_back((v[j] - v[j - 1]) & mask);
    // Deltas as signed values of the physical width, minus their minimum.
    auto sx = [&](uint64_t x) { return width_bits == 64 ? (int64_t)x : (int64_t)(int32_t)(uint32_t)x; };
    int64_t mn = sx(d[0]); for (auto x : d) mn = std::min(mn, sx(x));
    uleb(o, zz(mn));
    const size_t wpos = o.size(); o.resize(o.size() + minis, 0);
    for (u32 m = 0; m < minis && m * per < d.size(); ++m) {
      uint64_t mx = 0; for (u32 k = 0; k < per && m * per + k < d.size(); ++k) mx = std::max(mx, ((uint64_t)sx(d[m * per + k]) - (uint64_t)mn) & mask);
      u32 w = 0; while (w < 64 && (mx >> w)) ++w;
      o[wpos + m] = (uint8_t)w;
      std::vector<uint8_t> bits((size_t)per * w / 8 + 1, 0);
      for (u32 k = 0; k < per; ++k) {
        uint64_t x = m * per + k < d.size() ? ((uint64_t)sx(d[m * per + k]) - (uint64_t)mn) & mask : 0;
        for (u32 bt = 0; bt < w; ++bt) if ((x >> bt) & 1) { size_t at = (size_t)k * w + bt; bits[at / 8] |= 1 << (at % 8); }
      }
      o.insert(o.end(), bits.begin(), bits.begin() + (size_t)per * w / 8);
    }
  }
  return o;
}

static int fails = 0;
#define CHECK(c, ...) do { if (!(c)) { ++fails; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); if (fails > 20) exit(1);} } while (0)
static bool bit(u64 p, size_t i) { return (((const uint8_t*)p)[i / 8] >> (i % 8)) & 1; }
template <class T> static std::vector<uint8_t> bytes(const std::vector<T>& v) { std::vector<uint8_t> o(v.size() * sizeof(T)); if (!o.empty()) memcpy(o.data(), v.data(), o.size()); return o; }
static PageTask fixed(u32 rows, u32 conv, u32 in, u32 out) { PageTask t{}; t.kind = GDS_KIND_FIXED; t.encoding = GDS_ENC_PLAIN; t.conversion = conv; t.type_length = in; t.out_width = out; t.out_rows = rows; return t; }
static void ok(const std::vector<PageTask>& ts, const std::vector<uint4>& st) {
  for (size_t i = 0; i < ts.size(); ++i) {
    CHECK(ts[i].error == 0, "page %zu error %u at %u", i, ts[i].error, ts[i].error_index);
    CHECK(st[i].x == ts[i].error && st[i].z == ts[i].null_count && st[i].w == ts[i].value_count, "status %zu", i);
  }
}

// The block-parallel walk of length prefixes against the plain serial
// walk it replaces: value i at the offset the serial walk finds, the same
// count and end, for blocks of both sizes that use it.
struct WalkRef { std::vector<u32> offs; u32 pos; };
static WalkRef walk_ref(const std::vector<uint8_t>& d, u32 max_count) {
  WalkRef r{{}, 0};
  const u32 len = d.size();
  while (r.offs.size() < max_count && len - r.pos >= 4) {
    u32 v; memcpy(&v, d.data() + r.pos, 4);
    if (v > len - r.pos - 4) break;
    r.offs.push_back(r.pos);
    r.pos += 4 + v;
  }
  return r;
}
template <u32 BLOCK> static void walk_case_one(const std::vector<uint8_t>& d, u32 max_count, const char* what, int iter, int serial);
template <u32 BLOCK> static void walk_case(const std::vector<uint8_t>& d, u32 max_count, const char* what, int iter) {
  for (int serial = 0; serial < 2; ++serial) walk_case_one<BLOCK>(d, max_count, what, iter, serial);
}
template <u32 BLOCK> static void walk_case_one(const std::vector<uint8_t>& d, u32 max_count, const char* what, int iter, int serial) {
  const u64 data = up(d);
  std::vector<u32> offs(std::min<size_t>(max_count, d.size() / 4 + 1) + 1, 0xEEEEEEEEu), lens(offs.size(), 0xEEEEEEEEu);
  u32 res[2] = {0, 0};
  emu_launch(1, BLOCK, [&] {
    __shared__ WalkShared sh;
    auto emit = [&](u32 i, u32 pos, u32 vlen) {
      if (i < offs.size()) { offs[i] = pos; lens[i] = vlen; }
    };
    if (serial) gds_walk_prefixes_serial((const u8*)data, (u32)d.size(), max_count, sh, emit);
    else gds_walk_prefixes_parallel<BLOCK>((const u8*)data, (u32)d.size(), max_count, sh, emit);
    if (threadIdx.x == 0) { res[0] = sh.count; res[1] = sh.pos; }
  });
  const WalkRef r = walk_ref(d, max_count);
  CHECK(res[0] == r.offs.size() && res[1] == r.pos, "%s %d block %u serial %d: count %u pos %u, serial %zu %u", what, iter, BLOCK, serial, res[0], res[1], r.offs.size(), r.pos);
  for (size_t i = 0; i < r.offs.size() && i < offs.size(); ++i) {
    u32 v; memcpy(&v, d.data() + r.offs[i], 4);
    CHECK(offs[i] == r.offs[i] && lens[i] == v, "%s %d block %u: value %zu at %u (%u), serial %u", what, iter, BLOCK, i, offs[i], lens[i], r.offs[i]);
  }
}
// The spread walk of one section, as a PLAIN page's values and as a
// dictionary, against the plain serial walk: the same offsets, count and
// end; the same views, entries found and overrun.
static void spread_case(const std::vector<uint8_t>& d, u32 max_count, const char* what, int iter) {
  const WalkRef r = walk_ref(d, max_count);
  const u64 data = up(d);
  PageTask t{}; t.kind = GDS_KIND_BYTE_ARRAY; t.encoding = GDS_ENC_PLAIN; t.num_values = max_count;
  t.data = data; t.data_len = d.size(); t.view_buffer_base = data;
  t.scratch = alloc(((size_t)max_count + 1) * 4, 0xEE); t.scratch_len = (max_count + 1) * 4;
  DictTask k{}; k.data = data; k.data_len = d.size(); k.count = max_count; k.out_views = alloc((size_t)max_count * 16, 0xEE); k.view_buffer_base = data; k.view_buffer_index = 2;
  std::vector<PageTask> ts{t}; std::vector<DictTask> ds{k};
  spread(ts, ds);
  const u32* offs = (const u32*)t.scratch;
  CHECK(ts[0].plain_count == r.offs.size() && offs[r.offs.size()] == r.pos, "%s %d spread: count %u end %u, serial %zu %u", what, iter, ts[0].plain_count, offs[ts[0].plain_count], r.offs.size(), r.pos);
  for (size_t i = 0; i < r.offs.size(); ++i) CHECK(offs[i] == r.offs[i], "%s %d spread: value %zu at %u, serial %u", what, iter, i, offs[i], r.offs[i]);
  const bool short_of = r.offs.size() < max_count;
  CHECK(ds[0].found == r.offs.size() && (ds[0].error == GDS_ERR_DICT_OVERRUN) == short_of && (short_of || ds[0].error == 0), "%s %d spread dict: found %u error %u, serial %zu", what, iter, ds[0].found, ds[0].error, r.offs.size());
  for (u32 i = 0; i < max_count; ++i) {
    uint4 want = make_uint4(0, 0, 0, 0);
    if (i < r.offs.size()) { u32 L; memcpy(&L, d.data() + r.offs[i], 4); want = gds_make_view((const u8*)data + r.offs[i] + 4, L, 2, r.offs[i] + 4); }
    CHECK(memcmp((void*)(k.out_views + (u64)i * 16), &want, 16) == 0, "%s %d spread dict: view %u", what, iter, i);
  }
}
static void walks(Rng& rng) {
  const bool spread_too = mode_is("spread");
  int cases = 0;
  for (int iter = 0; iter < 120; ++iter) {
    // Values: short text, empty, long (past a segment, past a chunk),
    // and bytes that read as plausible lengths (little-endian small
    // numbers), which defeat the speculative walks' start.
    std::vector<uint8_t> d;
    const int kind = iter % 4;
    const u32 n = 1 + rng.below(iter % 7 == 0 ? 4000 : 900);
    for (u32 i = 0; i < n; ++i) {
      u32 l = kind == 0 ? rng.below(44) : kind == 1 ? (rng.below(20) == 0 ? rng.below(40000) : rng.below(12))
                                               : kind == 2 ? rng.below(3) * 4 : rng.below(300);
      for (int b = 0; b < 4; ++b) d.push_back((l >> (8 * b)) & 0xff);
      for (u32 k = 0; k < l; ++k) {
        uint8_t c = kind == 0 ? (uint8_t)(' ' + rng.below(90)) : kind == 2 ? (uint8_t)(k % 4 == 0 ? rng.below(8) : 0) : (uint8_t)rng.next();
        d.push_back(c);
      }
    }
    // Sometimes the section lies: cut short, a length raised, trailing bytes.
    switch (rng.below(5)) {
      case 0: d.resize(d.size() - rng.below(std::min<size_t>(d.size(), 64) + 1)); break;
      case 1: if (d.size() > 8) d[rng.below(d.size() - 4)] ^= 0x40; break;
      case 2: for (int k = 0; k < 3; ++k) d.push_back((uint8_t)rng.next()); break;
      default: break;
    }
    const u32 max_count = rng.below(4) == 0 ? (u32)rng.below(n + 1) : n + (u32)rng.below(3);
    walk_case<GDS_WALK_BLOCK>(d, max_count, "walk", iter);
    walk_case<GDS_DICT_BLOCK>(d, max_count, "walk", iter);
    cases += 2;
    if (spread_too) { spread_case(d, max_count, "walk", iter); ++cases; }
  }
  // Edge sections: empty, under four bytes, one empty value, a prefix cut
  // by every chunk end, a value ending exactly at a chunk's end.
  std::vector<std::vector<uint8_t>> edges = {{}, {1, 0}, {0, 0, 0, 0}, {5, 0, 0, 0, 'a'}};
  for (u32 tail : {0u, 1u, 2u, 3u, 4u, 5u}) {
    std::vector<uint8_t> d;
    const u32 l = GDS_WALK_CHUNK - 4 - tail;  // the next prefix starts `tail` bytes before the chunk's end... or after
    for (int b = 0; b < 4; ++b) d.push_back((l >> (8 * b)) & 0xff);
    d.resize(4 + l, 'x');
    for (int v = 0; v < 3; ++v) { d.push_back(2); d.push_back(0); d.push_back(0); d.push_back(0); d.push_back('y'); d.push_back('z'); }
    edges.push_back(d);
  }
  int e = 0;
  for (auto& d : edges) {
    for (u32 m : {0u, 1u, 2u, 1000u}) {
      walk_case<GDS_WALK_BLOCK>(d, m, "edge", e); walk_case<GDS_DICT_BLOCK>(d, m, "edge", e); cases += 2;
      if (spread_too) { spread_case(d, m, "edge", e); ++cases; }
    }
    ++e;
  }
  printf("walks ok (%d cases, each walk against the plain serial one%s)\n", cases, spread_too ? ", the spread one too" : "");
}

#include "delta_strings_emu.h"

int main() {
  Rng rng{42};
  std::vector<DictTask> nod; std::vector<uint4> st;
  { // optional int64 v1 + v2 adjacent, required int32
    size_t s0 = 3001, s1 = 2500, rows = s0 + s1;
    u64 out = alloc(rows * 8, 0xCD), val = alloc((rows + 31) / 32 * 4, 0);
    std::vector<PageTask> ts; std::vector<std::optional<int64_t>> exp;
    for (int p = 0; p < 2; ++p) {
      auto def = rdef(rng, p ? s1 : s0, 300);
      std::vector<int64_t> v; for (bool d : def) if (d) v.push_back((int64_t)rng.next());
      size_t k = 0; for (bool d : def) exp.push_back(d ? std::optional<int64_t>(v[k++]) : std::nullopt);
      auto t = fixed(rows, GDS_CONV_COPY, 8, 8); place(t, p ? V2 : V1, def, bytes(v));
      t.out_values = out; t.out_validity = val; t.out_row = p ? s0 : 0; ts.push_back(t);
    }
    std::vector<int32_t> r32; for (int i = 0; i < 5000; ++i) r32.push_back(i * 7 - 1000);
    auto t = fixed(5000, GDS_CONV_COPY, 4, 4); place(t, REQ, std::vector<bool>(5000, true), bytes(r32)); t.out_values = alloc(5000 * 4, 0xCD); ts.push_back(t);
    run(ts, nod, st); ok(ts, st);
    for (size_t r = 0; r < rows; ++r) {
      int64_t g; memcpy(&g, (void*)(out + r * 8), 8);
      CHECK(bit(val, r) == exp[r].has_value(), "validity row %zu", r);
      CHECK(g == (exp[r] ? *exp[r] : 0), "row %zu", r);
    }
    CHECK(memcmp((void*)ts[2].out_values, r32.data(), 20000) == 0, "int32");
    printf("fixed plain ok (nulls %u+%u)\n", ts[0].null_count, ts[1].null_count);
  }
  { // dictionary with conversions
    std::vector<int32_t> dv; for (int i = 0; i < 300; ++i) dv.push_back(i * 7919 - 150000);
    u64 dict = up(bytes(dv));
    size_t n = 4100; auto def = rdef(rng, n, 200);
    std::vector<u32> idx; for (bool d : def) if (d) idx.push_back(rng.below(4) == 0 ? 5 : rng.below(300));
    std::vector<uint8_t> sec{9}; auto h = hybrid(idx, 9); sec.insert(sec.end(), h.begin(), h.end());
    u32 convs[4][2] = {{GDS_CONV_COPY, 4}, {GDS_CONV_I32_TO_8, 1}, {GDS_CONV_I32_TO_16, 2}, {GDS_CONV_I32_TO_DECIMAL128, 16}};
    std::vector<PageTask> ts;
    for (auto& c : convs) {
      auto t = fixed(n, c[0], 4, c[1]); t.encoding = GDS_ENC_DICTIONARY; place(t, V1, def, sec);
      t.dict = dict; t.dict_count = 300; t.dict_len = 1200; t.out_values = alloc(n * c[1], 0xCD); ts.push_back(t);
    }
    run(ts, nod, st); ok(ts, st);
    for (int c = 0; c < 4; ++c) {
      size_t k = 0; u32 w = convs[c][1];
      for (size_t r = 0; r < n; ++r) {
        uint8_t want[16] = {0};
        if (def[r]) { int64_t v = dv[idx[k++]]; __int128 x = v; memcpy(want, &x, w); }
        CHECK(memcmp((void*)(ts[c].out_values + r * w), want, w) == 0, "conv %d row %zu", c, r);
      }
    }
    printf("dictionary ok\n");
  }
  { // dictionary indices at every kind of bit width, in pages of many tiles
    // whose runs alternate between RLE and short bit-packed runs (as TPC-H's
    // flag columns do) or are all bit-packed: the fill reads the staged
    // window, and past it (wide indices, long RLE stretches) global memory.
    const u32 widths[] = {1, 2, 5, 9, 12, 17, 24, 31, 32};
    std::vector<PageTask> ts; std::vector<std::vector<u32>> exp;
    u64 dict_n = 1u << 16; std::vector<u32> dv(dict_n); for (u64 i = 0; i < dict_n; ++i) dv[i] = (u32)(i * 2654435761u);
    u64 dict = up(bytes(dv));
    for (u32 bw : widths) {
      for (int shape = 0; shape < 3; ++shape) {
        const Layout l = shape == 2 ? V2 : REQ;
        size_t n = 5000 + rng.below(4000);
        auto def = std::vector<bool>(n, true);
        if (l == V2) {
          // Tiles without nulls (their values' runs read once), with some
          // (read again for the defined ones), with none defined, and
          // without nulls again after them.
          def.assign(2500, true);
          auto mixed = rdef(rng, 1500, 300); def.insert(def.end(), mixed.begin(), mixed.end());
          def.insert(def.end(), 2200, false); def.insert(def.end(), 2800, true);
          n = def.size();
        }
        const u64 top = bw >= 32 ? ~0ull >> 32 : (1ull << bw) - 1;
        const u64 count = std::min<u64>(top + 1, dict_n);
        size_t ndef = 0; for (bool d : def) ndef += d;
        // shape 0: runs of 8..40 equal indices between short random
        // stretches; otherwise every index random.
        std::vector<u32> idx;
        while (idx.size() < ndef) {
          if (shape == 0 && rng.below(3) == 0) {
            const u32 v = (u32)rng.below(count);
            for (u64 r = 8 + rng.below(33); r > 0 && idx.size() < ndef; --r) idx.push_back(v);
          } else {
            idx.push_back((u32)rng.below(count));
          }
        }
        std::vector<uint8_t> sec{(uint8_t)bw}; auto h = hybrid(idx, bw); sec.insert(sec.end(), h.begin(), h.end());
        auto t = fixed(n, GDS_CONV_COPY, 4, 4); t.encoding = GDS_ENC_DICTIONARY; place(t, l, def, sec);
        t.dict = dict; t.dict_count = (u32)dict_n; t.dict_len = (u32)dict_n * 4; t.out_values = alloc(n * 4 + 4, 0xCD);
        ts.push_back(t);
        exp.push_back({}); size_t k = 0; for (bool d : def) exp.back().push_back(d ? dv[idx[k++]] : 0);
      }
    }
    run(ts, nod, st); ok(ts, st);
    for (size_t p = 0; p < ts.size(); ++p) CHECK(memcmp((void*)ts[p].out_values, exp[p].data(), exp[p].size() * 4) == 0, "bit width page %zu", p);
    printf("dictionary widths ok\n");
  }
  { // decimals
    size_t n = 700; std::vector<PageTask> ts; std::vector<std::vector<__int128>> exp;
    std::vector<int64_t> v64; for (size_t i = 0; i < n; ++i) v64.push_back((int64_t)rng.next() >> rng.below(60));
    auto t = fixed(n, GDS_CONV_I64_TO_DECIMAL128, 8, 16); place(t, REQ, std::vector<bool>(n, true), bytes(v64)); t.out_values = alloc(n * 16, 0xCD); ts.push_back(t);
    exp.push_back({}); for (auto v : v64) exp.back().push_back(v);
    for (u32 len = 1; len <= 16; ++len) {
      std::vector<uint8_t> b; exp.push_back({});
      for (size_t i = 0; i < n; ++i) {
        unsigned __int128 raw = ((unsigned __int128)rng.next() << 64) | rng.next();
        __int128 v = (__int128)raw >> (128 - 8 * len);
        exp.back().push_back(v);
        for (int k = len - 1; k >= 0; --k) b.push_back((uint8_t)((unsigned __int128)v >> (8 * k)));
      }
      auto t = fixed(n, GDS_CONV_BE_TO_DECIMAL128, len, 16); place(t, REQ, std::vector<bool>(n, true), b); t.out_values = alloc(n * 16, 0xCD); ts.push_back(t);
    }
    run(ts, nod, st); ok(ts, st);
    for (size_t i = 0; i < ts.size(); ++i) for (size_t r = 0; r < n; ++r) { __int128 g; memcpy(&g, (void*)(ts[i].out_values + r * 16), 16); CHECK(g == exp[i][r], "dec %zu row %zu", i, r); }
    printf("decimals ok\n");
  }
  { // BYTE_STREAM_SPLIT at every width the format allows (FLOAT16, FLOAT/INT32,
    // DOUBLE/INT64, FLBA of odd and wide lengths, decimals, INT96), required
    // and optional, v1 and v2, and INT96 PLAIN: the expected bytes are the
    // PLAIN values (or their conversion) computed here from the same values.
    struct Case { u32 in, out, conv; };
    const Case cases[] = {{2, 2, GDS_CONV_COPY}, {4, 4, GDS_CONV_COPY}, {8, 8, GDS_CONV_COPY}, {5, 5, GDS_CONV_COPY},
                          {20, 20, GDS_CONV_COPY}, {16, 16, GDS_CONV_BE_TO_DECIMAL128}, {7, 16, GDS_CONV_BE_TO_DECIMAL128},
                          {4, 16, GDS_CONV_I32_TO_DECIMAL128}, {12, 8, GDS_CONV_INT96_TO_TIMESTAMP_NS},
                          {20, 32, GDS_CONV_BE_TO_DECIMAL256}, {32, 32, GDS_CONV_BE_TO_DECIMAL256},
                          {12, 8, GDS_CONV_INTERVAL_DAY_TIME}};
    std::vector<PageTask> ts; std::vector<std::vector<uint8_t>> exp;
    auto convert = [](const uint8_t* v, const Case& c, uint8_t* o) {
      if (c.conv == GDS_CONV_COPY) { memcpy(o, v, c.in); return; }
      if (c.conv == GDS_CONV_I32_TO_DECIMAL128) { int32_t x; memcpy(&x, v, 4); __int128 y = x; memcpy(o, &y, 16); return; }
      if (c.conv == GDS_CONV_BE_TO_DECIMAL128) { __int128 y = (int8_t)v[0]; for (u32 b = 1; b < c.in; ++b) y = y * 256 + v[b]; memcpy(o, &y, 16); return; }
      if (c.conv == GDS_CONV_BE_TO_DECIMAL256) {  // byte by byte: reversed, then the sign byte
        for (u32 b = 0; b < 32; ++b) o[b] = b < c.in ? v[c.in - 1 - b] : ((v[0] & 0x80) ? 0xff : 0);
        return;
      }
      if (c.conv == GDS_CONV_INTERVAL_DAY_TIME) { memcpy(o, v + 4, 8); return; }
      uint64_t nanos; int32_t day; memcpy(&nanos, v, 8); memcpy(&day, v + 8, 4);  // INT96
      uint64_t t = (uint64_t)((int64_t)day - 2440588) * 86400000000000ull + nanos; memcpy(o, &t, 8);
    };
    for (int split = 0; split < 2; ++split) {
      for (const Case& c : cases) {
        if (!split && c.conv != GDS_CONV_INT96_TO_TIMESTAMP_NS && c.conv != GDS_CONV_INTERVAL_DAY_TIME &&
            c.conv != GDS_CONV_BE_TO_DECIMAL256)
          continue;
        for (int l = 0; l < 3; ++l) {
          const Layout lay = l == 0 ? REQ : (l == 1 ? V1 : V2);
          const size_t n = 3000 + rng.below(3000);
          auto def = lay == REQ ? std::vector<bool>(n, true) : rdef(rng, n, 250);
          std::vector<std::vector<uint8_t>> vals;
          for (bool d : def) if (d) { std::vector<uint8_t> v(c.in); for (auto& b : v) b = (uint8_t)rng.next(); vals.push_back(v); }
          if (c.conv == GDS_CONV_INT96_TO_TIMESTAMP_NS) for (auto& v : vals) { int32_t day = 2440588 + (int32_t)rng.below(200000) - 100000; memcpy(v.data() + 8, &day, 4); }
          std::vector<uint8_t> sec(vals.size() * c.in);
          for (size_t i = 0; i < vals.size(); ++i) for (u32 b = 0; b < c.in; ++b) sec[split ? b * vals.size() + i : i * c.in + b] = vals[i][b];
          auto t = fixed(n, c.conv, c.in, c.out); t.encoding = split ? GDS_ENC_BYTE_STREAM_SPLIT : GDS_ENC_PLAIN; place(t, lay, def, sec);
          t.out_values = alloc(n * c.out, 0xCD); ts.push_back(t);
          exp.push_back(std::vector<uint8_t>(n * c.out, 0)); size_t k = 0;
          for (size_t r = 0; r < n; ++r) if (def[r]) convert(vals[k++].data(), c, exp.back().data() + r * c.out);
        }
      }
    }
    run(ts, nod, st); ok(ts, st);
    for (size_t p = 0; p < ts.size(); ++p) CHECK(memcmp((void*)ts[p].out_values, exp[p].data(), exp[p].size()) == 0, "byte stream split / int96 page %zu", p);
    // Lying sections: a length that is not a whole number of values, and
    // fewer values than defined levels.
    std::vector<PageTask> bad; size_t n = 100;
    { auto t = fixed(n, GDS_CONV_COPY, 4, 4); t.encoding = GDS_ENC_BYTE_STREAM_SPLIT; place(t, REQ, std::vector<bool>(n, true), std::vector<uint8_t>(n * 4 - 1, 1)); t.out_values = alloc(n * 4, 0); bad.push_back(t); }
    { auto t = fixed(n, GDS_CONV_COPY, 8, 8); t.encoding = GDS_ENC_BYTE_STREAM_SPLIT; place(t, REQ, std::vector<bool>(n, true), std::vector<uint8_t>((n - 2) * 8, 1)); t.out_values = alloc(n * 8, 0); bad.push_back(t); }
    run(bad, nod, st);
    CHECK(bad[0].error == GDS_ERR_VALUES_LENGTH, "split length error %u", bad[0].error);
    CHECK(bad[1].error == GDS_ERR_VALUES_OVERRUN, "split overrun error %u", bad[1].error);
    printf("byte stream split and int96 ok (%zu pages)\n", ts.size());
  }
  { // DELTA_BINARY_PACKED, INT32 and INT64, several block shapes (arrow-rs's
    // 128 x 4, DuckDB-like 2048 x 8, 256 x 2), with nulls, deltas that wrap
    // the physical width, and widths 0 to 64; the encoder here follows the
    // specification, the expected values are the inputs.
    auto encode = delta_encode;
    struct Shape { u32 block, minis; };
    const Shape shapes[] = {{128, 4}, {2048, 8}, {256, 2}};
    std::vector<PageTask> ts; std::vector<std::vector<uint8_t>> exp;
    for (u32 width : {4u, 8u}) {
      for (const Shape& sh : shapes) {
        for (int l = 0; l < 3; ++l) {
          const Layout lay = l == 0 ? REQ : (l == 1 ? V1 : V2);
          const size_t n = 1 + rng.below(6000);
          auto def = lay == REQ ? std::vector<bool>(n, true) : rdef(rng, n, 250);
          std::vector<uint64_t> v; uint64_t x = rng.next();
          for (bool d : def) if (d) {
            switch (rng.below(4)) {  // runs, small steps, anything (wrapping), constant
              case 0: x += rng.below(3); break;
              case 1: x -= rng.below(1000); break;
              case 2: x = rng.next(); break;
              default: break;
            }
            v.push_back(width == 4 ? (uint64_t)(uint32_t)x : x);
          }
          // INT32 pages also as DuckDB writes them: deltas of the
          // sign-extended values in 64 bits (miniblocks up to 33 bits),
          // which wrap to the same 32-bit values.
          const bool duck = width == 4 && (sh.block == 2048 || l == 2);
          std::vector<uint64_t> wide(v);
          if (duck) for (auto& y : wide) y = (uint64_t)(int64_t)(int32_t)(uint32_t)y;
          auto sec = encode(duck ? wide : v, sh.block, sh.minis, duck ? 64 : width * 8);
          auto t = fixed(n, GDS_CONV_COPY, width, width); t.encoding = GDS_ENC_DELTA_BINARY_PACKED; place(t, lay, def, sec);
          t.out_values = alloc(n * width, 0xCD); t.scratch = alloc(n * width + 8, 0xEE); t.scratch_len = n * width;
          ts.push_back(t);
          exp.push_back(std::vector<uint8_t>(n * width, 0)); size_t k = 0;
          for (size_t r = 0; r < n; ++r) if (def[r]) { memcpy(exp.back().data() + r * width, &v[k], width); ++k; }
        }
      }
    }
    run(ts, nod, st); ok(ts, st);
    for (size_t p = 0; p < ts.size(); ++p) {
      size_t at = 0; const uint8_t* got = (const uint8_t*)ts[p].out_values;
      while (at < exp[p].size() && got[at] == exp[p][at]) ++at;
      const size_t w = ts[p].type_length, r = at / (w ? w : 1);
      uint64_t g = 0, e = 0; if (at < exp[p].size()) { memcpy(&g, got + r * w, w); memcpy(&e, exp[p].data() + r * w, w); }
      CHECK(at == exp[p].size(), "delta page %zu: first difference at row %zu of %zu (width %zu): got %016llx, want %016llx", p, r, exp[p].size() / w, w, (unsigned long long)g, (unsigned long long)e);
    }
    // Lying headers and blocks: typed errors, never a read outside the page.
    std::vector<PageTask> bad; std::vector<u32> want; size_t n = 300;
    std::vector<uint64_t> v(n); for (size_t i = 0; i < n; ++i) v[i] = i * i * 7;  // deltas 7 (2i - 1): 13-bit miniblocks
    auto good = encode(v, 128, 4, 64);
    auto mk = [&](std::vector<uint8_t> sec, u32 want_code) {
      auto t = fixed(n, GDS_CONV_COPY, 8, 8); t.encoding = GDS_ENC_DELTA_BINARY_PACKED; place(t, REQ, std::vector<bool>(n, true), sec);
      t.out_values = alloc(n * 8, 0); t.scratch = alloc(n * 8, 0); t.scratch_len = n * 8; bad.push_back(t); want.push_back(want_code);
    };
    { auto s = good; s[0] = 100; mk(s, GDS_ERR_DELTA_HEADER); }                      // block size not a multiple of 128
    { auto s = good; s[2] = 3; mk(s, GDS_ERR_DELTA_HEADER); }                        // 3 miniblocks of 128
    { std::vector<uint8_t> s; uleb(s, 128); uleb(s, 4); uleb(s, n + 1); uleb(s, 0); mk(s, GDS_ERR_DELTA_HEADER); }  // more values than levels
    { auto s = good; s.resize(s.size() / 2); mk(s, 0); }                            // truncated: header or values run out
    { auto s = good; s.resize(6); mk(s, GDS_ERR_DELTA_HEADER); }                     // header only
    { auto s = good; size_t w = 7; s[w] = 65; mk(s, GDS_ERR_BIT_WIDTH); }           // a miniblock width over 64 (header 6 bytes, min delta 1)
    { auto s = good; size_t w = 7; s[w] = 64; mk(s, 0); }                           // a lying width: later blocks misread
    run(bad, nod, st);
    // want 0: any typed error (which one depends on where the lie lands).
    for (size_t i = 0; i < bad.size(); ++i) CHECK(want[i] ? bad[i].error == want[i] : bad[i].error != 0, "bad delta %zu: error %u, want %u", i, bad[i].error, want[i]);
    printf("delta binary packed ok (%zu pages)\n", ts.size());
  }
  { // booleans
    size_t s0 = 2077, s1 = 3000, rows = s0 + s1;
    u64 out = alloc((rows + 31) / 32 * 4, 0), val = alloc((rows + 31) / 32 * 4, 0);
    std::vector<PageTask> ts; std::vector<int> exp;
    for (int p = 0; p < 2; ++p) {
      auto def = rdef(rng, p ? s1 : s0, 250); std::vector<u32> v; size_t i = 0;
      for (bool d : def) if (d) { v.push_back((i / 40) % 2 == 0 ? 1 : rng.below(2)); ++i; }
      size_t k = 0; for (bool d : def) exp.push_back(d ? (int)v[k++] : -1);
      std::vector<uint8_t> sec;
      PageTask t{}; t.kind = GDS_KIND_BOOLEAN; t.out_rows = rows; t.out_row = p ? s0 : 0; t.out_values = out; t.out_validity = val;
      if (p == 0) { t.encoding = GDS_ENC_PLAIN; sec.assign((v.size() + 7) / 8, 0); for (size_t j = 0; j < v.size(); ++j) if (v[j]) sec[j / 8] |= 1 << (j % 8); }
      else { t.encoding = GDS_ENC_RLE; auto h = hybrid(v, 1); u32 L = h.size(); sec.resize(4); memcpy(sec.data(), &L, 4); sec.insert(sec.end(), h.begin(), h.end()); }
      place(t, p ? V2 : V1, def, sec); ts.push_back(t);
    }
    run(ts, nod, st); ok(ts, st);
    for (size_t r = 0; r < rows; ++r) { CHECK(bit(val, r) == (exp[r] >= 0), "bool validity %zu", r); CHECK(bit(out, r) == (exp[r] == 1), "bool value %zu", r); }
    printf("booleans ok\n");
  }
  { // row windows (a pruned page keeps its levels [row_skip, row_skip + row_take)):
    // rows out_row.. get the window's values and validity, rows outside it
    // keep what they held, the null count is the window's, the value count
    // the page's; windows across tiles, at the page's ends, and empty
    struct W { u32 skip, take; };
    const W wins[] = {{1000, 2500}, {0, 5000}, {4993, 7}, {0, 1}, {1024, 0}, {3071, 1025}};
    const size_t n = 5000, out_row = 3;
    std::vector<int32_t> dv; for (int i = 0; i < 64; ++i) dv.push_back(i * 131 - 4000);
    u64 dict = up(bytes(dv));
    for (const W& w : wins) {
      auto def = rdef(rng, n, 300);
      size_t ndef = 0; for (bool d : def) ndef += d;
      std::vector<int64_t> v64; for (size_t k = 0; k < ndef; ++k) v64.push_back((int64_t)rng.next());
      std::vector<u32> idx; for (size_t k = 0; k < ndef; ++k) idx.push_back(rng.below(64));
      std::vector<uint8_t> dsec{6}; { auto h = hybrid(idx, 6); dsec.insert(dsec.end(), h.begin(), h.end()); }
      std::vector<u32> bits; for (size_t k = 0; k < ndef; ++k) bits.push_back(rng.below(2));
      std::vector<uint8_t> bsec; { auto h = hybrid(bits, 1); u32 L = h.size(); bsec.resize(4); memcpy(bsec.data(), &L, 4); bsec.insert(bsec.end(), h.begin(), h.end()); }
      std::vector<std::string> ss; for (size_t k = 0; k < ndef; ++k) ss.push_back(std::string(rng.below(20), (char)('a' + k % 26)));
      std::vector<uint8_t> ssec; for (auto& x : ss) { u32 L = x.size(); ssec.insert(ssec.end(), (uint8_t*)&L, (uint8_t*)&L + 4); ssec.insert(ssec.end(), x.begin(), x.end()); }
      const size_t rows = out_row + w.take + 2;
      std::vector<PageTask> ts;
      auto windowed = [&](PageTask& t) { t.flags |= GDS_FLAG_ROW_WINDOW; t.row_skip = w.skip; t.row_take = w.take; t.out_row = out_row; t.out_rows = rows; t.out_validity = alloc((rows + 31) / 32 * 4, 0); };
      { auto t = fixed(rows, GDS_CONV_COPY, 8, 8); place(t, V1, def, bytes(v64)); windowed(t); t.out_values = alloc(rows * 8, 0xCD); ts.push_back(t); }
      { auto t = fixed(rows, GDS_CONV_COPY, 4, 4); t.encoding = GDS_ENC_DICTIONARY; place(t, V2, def, dsec); windowed(t);
        t.dict = dict; t.dict_count = 64; t.dict_len = 256; t.out_values = alloc(rows * 4, 0xCD); ts.push_back(t); }
      { PageTask t{}; t.kind = GDS_KIND_BOOLEAN; t.encoding = GDS_ENC_RLE; place(t, V1, def, bsec); windowed(t); t.out_values = alloc((rows + 31) / 32 * 4, 0); ts.push_back(t); }
      { PageTask t{}; t.kind = GDS_KIND_BYTE_ARRAY; t.encoding = GDS_ENC_PLAIN; t.view_buffer_index = 2; place(t, V2, def, ssec); windowed(t);
        t.view_buffer_base = t.data; t.scratch = alloc((n + 1) * 4, 0xFF); t.scratch_len = (n + 1) * 4; t.out_values = alloc(rows * 16, 0xCD); ts.push_back(t); }
      { PageTask t{}; t.kind = GDS_KIND_LEVELS; place(t, V2, def, {}); windowed(t); t.scratch = alloc(n * 4, 0xFF); t.scratch_len = n * 4; ts.push_back(t); }
      run(ts, nod, st); ok(ts, st);
      size_t win_nulls = 0; for (size_t i = w.skip; i < w.skip + w.take; ++i) win_nulls += !def[i];
      for (size_t p = 0; p < ts.size(); ++p) {
        CHECK(ts[p].null_count == win_nulls && ts[p].value_count == ndef, "window %u+%u page %zu: nulls %u (want %zu), values %u (want %zu)",
              w.skip, w.take, p, ts[p].null_count, win_nulls, ts[p].value_count, ndef);
        for (size_t r = 0; r < rows; ++r) {
          const bool in = r >= out_row && r < out_row + w.take;
          CHECK(bit(ts[p].out_validity, r) == (in && def[w.skip + r - out_row]), "window %u+%u page %zu validity row %zu", w.skip, w.take, p, r);
        }
      }
      size_t k = 0; u64 str_at = 0;
      for (size_t i = 0; i < n; ++i) {
        const bool in = i >= w.skip && i < w.skip + w.take;
        const size_t r = out_row + i - w.skip;
        if (def[i] && in) {
          int64_t g64; memcpy(&g64, (void*)(ts[0].out_values + r * 8), 8); CHECK(g64 == v64[k], "window %u+%u plain row %zu", w.skip, w.take, r);
          int32_t g32; memcpy(&g32, (void*)(ts[1].out_values + r * 4), 4); CHECK(g32 == dv[idx[k]], "window %u+%u dictionary row %zu", w.skip, w.take, r);
          CHECK(bit(ts[2].out_values, r) == (bits[k] != 0), "window %u+%u boolean row %zu", w.skip, w.take, r);
          u32 L; memcpy(&L, (void*)(ts[3].out_values + r * 16), 4); CHECK(L == ss[k].size(), "window %u+%u string row %zu", w.skip, w.take, r);
          if (L == ss[k].size() && L <= 12) CHECK(memcmp((void*)(ts[3].out_values + r * 16 + 4), ss[k].data(), L) == 0, "window %u+%u string bytes row %zu", w.skip, w.take, r);
          if (L > 12) { u32 off; memcpy(&off, (void*)(ts[3].out_values + r * 16 + 12), 4); CHECK(off == str_at + 4, "window %u+%u string offset row %zu", w.skip, w.take, r); }
          u32 m; memcpy(&m, (void*)(ts[4].scratch + 4 * k), 4); CHECK(m == r, "window %u+%u row map %zu", w.skip, w.take, k);
        } else if (in) {
          int64_t g64; memcpy(&g64, (void*)(ts[0].out_values + r * 8), 8); CHECK(g64 == 0, "window %u+%u null row %zu", w.skip, w.take, r);
        }
        if (def[i]) { str_at += 4 + ss[k].size(); ++k; }
      }
      // Rows outside the window keep what they held.
      for (size_t r : {(size_t)0, out_row - 1, out_row + w.take, rows - 1}) {
        uint8_t b8[8]; memcpy(b8, (void*)(ts[0].out_values + r * 8), 8);
        CHECK(std::all_of(b8, b8 + 8, [](uint8_t x) { return x == 0xCD; }), "window %u+%u row %zu outside written", w.skip, w.take, r);
      }
    }
    printf("row windows ok\n");
  }
  { // byte arrays plain + dict, levels
    auto rstr = [&]() { u64 k = rng.below(4); size_t len = k == 0 ? 0 : k == 1 ? rng.below(13) : k == 2 ? 13 + rng.below(20) : rng.below(200); std::string s; for (size_t i = 0; i < len; ++i) s += 'a' + rng.below(26); return s; };
    auto view = [](const std::string& s, u32 bi, u64 off) { std::vector<uint8_t> v(16, 0); u32 L = s.size(); memcpy(v.data(), &L, 4); if (L <= 12) memcpy(v.data() + 4, s.data(), L); else { memcpy(v.data() + 4, s.data(), 4); memcpy(v.data() + 8, &bi, 4); u32 o = off; memcpy(v.data() + 12, &o, 4); } return v; };
    std::vector<PageTask> ts; std::vector<std::vector<std::vector<uint8_t>>> exp;
    for (int p = 0; p < 2; ++p) {
      size_t n = 2600; auto def = p ? std::vector<bool>(n, true) : rdef(rng, n, 200);
      std::vector<std::string> ss; for (bool d : def) if (d) ss.push_back(rstr());
      std::vector<uint8_t> sec; for (auto& s : ss) { u32 L = s.size(); sec.insert(sec.end(), (uint8_t*)&L, (uint8_t*)&L + 4); sec.insert(sec.end(), s.begin(), s.end()); }
      PageTask t{}; t.kind = GDS_KIND_BYTE_ARRAY; t.encoding = GDS_ENC_PLAIN; t.out_rows = n; t.view_buffer_index = 3 + p;
      place(t, p ? REQ : V1, def, sec); t.view_buffer_base = t.data;
      t.scratch = alloc((n + 1) * 4, 0xFF); t.scratch_len = (n + 1) * 4; t.out_values = alloc(n * 16, 0xCD);
      if (!p) t.out_validity = alloc((n + 31) / 32 * 4, 0);
      u64 pos = 0; if (!p) { u32 L; memcpy(&L, (void*)t.data, 4); pos = 4 + L; }
      exp.push_back({}); size_t k = 0;
      for (bool d : def) { if (!d) { exp.back().push_back(std::vector<uint8_t>(16, 0)); continue; } auto& s = ss[k++]; exp.back().push_back(view(s, t.view_buffer_index, pos + 4)); pos += 4 + s.size(); }
      ts.push_back(t);
    }
    // dictionary
    std::vector<std::string> ent; for (int i = 0; i < 500; ++i) ent.push_back(rstr());
    std::vector<uint8_t> dp; std::vector<u64> offs; for (auto& s : ent) { u32 L = s.size(); offs.push_back(dp.size() + 4); dp.insert(dp.end(), (uint8_t*)&L, (uint8_t*)&L + 4); dp.insert(dp.end(), s.begin(), s.end()); }
    DictTask d{}; d.data = up(dp); d.data_len = dp.size(); d.count = 500; d.out_views = alloc(500 * 16, 0xCD); d.view_buffer_base = d.data; d.view_buffer_index = 1;
    std::vector<DictTask> ds{d};
    size_t n = 3333; auto def = rdef(rng, n, 100); std::vector<u32> idx; for (bool x : def) if (x) idx.push_back(rng.below(500));
    std::vector<uint8_t> sec{9}; auto h = hybrid(idx, 9); sec.insert(sec.end(), h.begin(), h.end());
    PageTask t{}; t.kind = GDS_KIND_BYTE_ARRAY; t.encoding = GDS_ENC_DICTIONARY; t.out_rows = n; t.dict = d.out_views; t.dict_count = 500; t.dict_len = 8000;
    place(t, V2, def, sec); t.out_values = alloc(n * 16, 0xCD); t.out_validity = alloc((n + 31) / 32 * 4, 0);
    exp.push_back({}); { size_t k = 0; for (bool x : def) { if (!x) { exp.back().push_back(std::vector<uint8_t>(16, 0)); continue; } u32 i = idx[k++]; exp.back().push_back(view(ent[i], 1, offs[i])); } }
    ts.push_back(t);
    // levels
    size_t nl = 7000; auto dl = rdef(rng, nl, 400);
    PageTask tl{}; tl.kind = GDS_KIND_LEVELS; tl.out_rows = nl + 10; tl.out_row = 10; place(tl, V2, dl, {});
    tl.scratch = alloc(nl * 4, 0xFF); tl.scratch_len = nl * 4; tl.out_validity = alloc((nl + 10 + 31) / 32 * 4, 0); ts.push_back(tl);
    run(ts, ds, st); ok(ts, st);
    CHECK(ds[0].error == 0 && ds[0].found == 500, "dict %u %u", ds[0].error, ds[0].found);
    for (int i = 0; i < 500; ++i) CHECK(memcmp((void*)(d.out_views + i * 16), view(ent[i], 1, offs[i]).data(), 16) == 0, "dict view %d", i);
    for (size_t p = 0; p < 3; ++p) for (size_t r = 0; r < exp[p].size(); ++r) CHECK(memcmp((void*)(ts[p].out_values + r * 16), exp[p][r].data(), 16) == 0, "ba page %zu row %zu", p, r);
    size_t k = 0; for (size_t r = 0; r < nl; ++r) if (dl[r]) { u32 g; memcpy(&g, (void*)(tl.scratch + 4 * k++), 4); CHECK(g == r + 10, "rowmap"); }
    CHECK(ts[3].value_count == k, "levels count");
    for (size_t r = 0; r < nl + 10; ++r) CHECK(bit(tl.out_validity, r) == (r >= 10 && dl[r - 10]), "levels validity %zu", r);
    printf("byte arrays + levels ok\n");
  }
  { // nested leaves (v1 pages with repetition levels first, and v2): decoded flat over level entries,
    // with every entry's level bytes (the nesting kernels' input) written by the same kernel
    std::vector<PageTask> ts; std::vector<std::vector<int32_t>> exp; std::vector<std::vector<u32>> defs, reps;
    for (int p = 0; p < 3; ++p) {
      size_t n = 3000; std::vector<u32> rep, def; std::vector<int32_t> vals;
      for (size_t i = 0; i < n; ++i) { rep.push_back(i == 0 ? 0 : (u32)rng.below(2)); def.push_back((u32)rng.below(4)); }
      std::vector<uint8_t> body;
      auto section = [&](const std::vector<u32>& lv, u32 bw) { auto e = hybrid(lv, bw); u32 L = e.size(); body.insert(body.end(), (uint8_t*)&L, (uint8_t*)&L + 4); body.insert(body.end(), e.begin(), e.end()); };
      if (p < 2) { section(rep, 1); section(def, 2); }
      for (u32 d : def) if (d == 3) { int32_t v = (int32_t)rng.below(1u << 30) - (1 << 29); vals.push_back(v); body.insert(body.end(), (uint8_t*)&v, (uint8_t*)&v + 4); }
      auto t = fixed(n, GDS_CONV_COPY, 4, 4); t.num_values = n; t.max_def = 3; t.max_rep = 1;
      t.flags = p < 2 ? GDS_FLAG_V1_LEVELS | GDS_FLAG_V1_REP_LEVELS : 0;
      if (p == 2) {  // v2: both level sections apart, no length prefix
        auto re = hybrid(rep, 1), de = hybrid(def, 2);
        t.rep_levels = up(re); t.rep_len = re.size(); t.def_levels = up(de); t.def_len = de.size();
      }
      if (p == 1) body.resize(body.size() - 2);  // the last value cut: its error
      t.data = up(body); t.data_len = body.size(); t.out_values = alloc(n * 4, 0xCD); t.out_validity = alloc((n + 31) / 32 * 4, 0);
      t.out_rep = alloc(n, 0xEE); t.out_def = alloc(n, 0xEE);
      ts.push_back(t); exp.push_back(vals); defs.push_back(def); reps.push_back(rep);
    }
    // A repetition section longer than the page.
    std::vector<uint8_t> bad{0xff, 0xff, 0, 0, 1, 2, 3};
    auto tb = fixed(4, GDS_CONV_COPY, 4, 4); tb.num_values = 4; tb.max_def = 3; tb.max_rep = 1; tb.flags = GDS_FLAG_V1_LEVELS | GDS_FLAG_V1_REP_LEVELS;
    tb.data = up(bad); tb.data_len = bad.size(); tb.out_values = alloc(16, 0); tb.out_validity = alloc(4, 0);
    tb.out_rep = alloc(4, 0); tb.out_def = alloc(4, 0); ts.push_back(tb);
    // Repetition levels above the maximum (v2), and cut short.
    std::vector<u32> high(100, 0); high[60] = 3;
    auto th = fixed(100, GDS_CONV_COPY, 4, 4); th.num_values = 100; th.max_def = 1; th.max_rep = 2;
    auto he = hybrid(high, 2); th.rep_levels = up(he); th.rep_len = he.size();
    std::vector<u32> ones(100, 1); auto oe = hybrid(ones, 1); th.def_levels = up(oe); th.def_len = oe.size();
    std::vector<uint8_t> hv(400, 0); th.data = up(hv); th.data_len = 400; th.out_values = alloc(400, 0); th.out_validity = alloc(16, 0);
    th.out_rep = alloc(100, 0); th.out_def = alloc(100, 0); ts.push_back(th);
    auto tc = th; auto ce = hybrid(std::vector<u32>(50, 0), 1); tc.rep_levels = up(ce); tc.rep_len = ce.size(); tc.error = 0; tc.error_index = 0;
    tc.out_rep = alloc(100, 0); tc.out_def = alloc(100, 0); tc.out_values = alloc(400, 0); tc.out_validity = alloc(16, 0); ts.push_back(tc);
    run(ts, nod, st);
    CHECK(ts[0].error == 0, "nested v1: error %u at %u", ts[0].error, ts[0].error_index);
    CHECK(ts[1].error == GDS_ERR_VALUES_OVERRUN, "nested v1 cut: error %u", ts[1].error);
    CHECK(ts[2].error == 0, "nested v2: error %u at %u", ts[2].error, ts[2].error_index);
    CHECK(ts[3].error == GDS_ERR_LEVELS_LENGTH, "nested v1 rep length: error %u", ts[3].error);
    CHECK(ts[4].error == GDS_ERR_REP_LEVEL && ts[4].error_index == 60, "nested rep above max: error %u at %u", ts[4].error, ts[4].error_index);
    CHECK(ts[5].error == GDS_ERR_LEVELS_OVERRUN, "nested rep cut: error %u", ts[5].error);
    for (int p : {0, 2}) {
      for (size_t i = 0; i < reps[p].size(); ++i) {
        CHECK(((uint8_t*)ts[p].out_rep)[i] == reps[p][i], "page %d rep byte %zu", p, i);
        CHECK(((uint8_t*)ts[p].out_def)[i] == defs[p][i], "page %d def byte %zu", p, i);
      }
    }
    for (int p : {0, 2}) {
      size_t k = 0;
      for (size_t i = 0; i < defs[p].size(); ++i) {
        const bool valid = defs[p][i] == 3;
        CHECK(bit(ts[p].out_validity, i) == valid, "nested validity %zu", i);
        if (valid) { int32_t g; memcpy(&g, (void*)(ts[p].out_values + i * 4), 4); CHECK(g == exp[p][k], "nested value %zu", i); ++k; }
      }
      CHECK(ts[p].value_count == k, "nested value count %u %zu", ts[p].value_count, k);
    }
    printf("nested v1 leaves ok\n");
  }
  { // BYTE_ARRAY decimals of up to 32 bytes -> Decimal256 (plain and dictionary), 33 bytes an error
    auto le256 = [](const std::vector<uint8_t>& be) { std::vector<uint8_t> v(32, (!be.empty() && (be[0] & 0x80)) ? 0xff : 0); for (size_t b = 0; b < be.size(); ++b) v[b] = be[be.size() - 1 - b]; return v; };
    auto rdec = [&](size_t len) { std::vector<uint8_t> v(len); for (auto& b : v) b = rng.below(256); return v; };
    auto plain = [](const std::vector<std::vector<uint8_t>>& vs) { std::vector<uint8_t> sec; for (auto& v : vs) { u32 L = v.size(); sec.insert(sec.end(), (uint8_t*)&L, (uint8_t*)&L + 4); sec.insert(sec.end(), v.begin(), v.end()); } return sec; };
    std::vector<PageTask> ts; std::vector<std::vector<std::vector<uint8_t>>> exp;
    size_t n = 2100; auto def = rdef(rng, n, 150);
    std::vector<std::vector<uint8_t>> vs; for (size_t i = 0; i < n; ++i) if (def[i]) vs.push_back(rdec(i % 33));
    PageTask t{}; t.kind = GDS_KIND_BYTE_ARRAY; t.encoding = GDS_ENC_PLAIN; t.conversion = GDS_CONV_BE_TO_DECIMAL256; t.out_width = 32; t.out_rows = n;
    place(t, V1, def, plain(vs)); t.view_buffer_base = t.data;
    t.scratch = alloc((n + 1) * 4, 0xFF); t.scratch_len = (n + 1) * 4; t.out_values = alloc(n * 32, 0xCD); t.out_validity = alloc((n + 31) / 32 * 4, 0);
    exp.push_back({}); { size_t k = 0; for (bool d : def) exp.back().push_back(d ? le256(vs[k++]) : std::vector<uint8_t>(32, 0)); }
    ts.push_back(t);
    std::vector<std::vector<uint8_t>> ent; for (int i = 0; i < 300; ++i) ent.push_back(rdec(i % 33));
    auto dp = plain(ent);
    DictTask d{}; d.data = up(dp); d.data_len = dp.size(); d.count = 300; d.conversion = GDS_CONV_BE_TO_DECIMAL256; d.out_views = alloc(300 * 32, 0xCD); d.view_buffer_base = d.data;
    std::vector<DictTask> ds{d};
    size_t nd = 1900; auto dd = rdef(rng, nd, 90); std::vector<u32> idx; for (bool x : dd) if (x) idx.push_back(rng.below(300));
    std::vector<uint8_t> sec{9}; auto h = hybrid(idx, 9); sec.insert(sec.end(), h.begin(), h.end());
    PageTask td{}; td.kind = GDS_KIND_BYTE_ARRAY; td.encoding = GDS_ENC_DICTIONARY; td.conversion = GDS_CONV_BE_TO_DECIMAL256; td.out_width = 32; td.out_rows = nd;
    td.dict = d.out_views; td.dict_count = 300; td.dict_len = 300 * 32;
    place(td, V2, dd, sec); td.out_values = alloc(nd * 32, 0xCD); td.out_validity = alloc((nd + 31) / 32 * 4, 0);
    exp.push_back({}); { size_t k = 0; for (bool x : dd) exp.back().push_back(x ? le256(ent[idx[k++]]) : std::vector<uint8_t>(32, 0)); }
    ts.push_back(td);
    run(ts, ds, st); ok(ts, st);
    CHECK(ds[0].error == 0 && ds[0].found == 300, "dec256 dict %u %u", ds[0].error, ds[0].found);
    for (int i = 0; i < 300; ++i) CHECK(memcmp((void*)(d.out_views + i * 32), le256(ent[i]).data(), 32) == 0, "dec256 dict entry %d", i);
    for (size_t p = 0; p < 2; ++p) for (size_t r = 0; r < exp[p].size(); ++r) CHECK(memcmp((void*)(ts[p].out_values + r * 32), exp[p][r].data(), 32) == 0, "dec256 page %zu row %zu", p, r);
    // A value of 33 bytes: the page's error, at its row.
    std::vector<std::vector<uint8_t>> bad{rdec(3), rdec(32), rdec(33), rdec(1)};
    PageTask tb{}; tb.kind = GDS_KIND_BYTE_ARRAY; tb.encoding = GDS_ENC_PLAIN; tb.conversion = GDS_CONV_BE_TO_DECIMAL256; tb.out_width = 32; tb.out_rows = 4;
    place(tb, REQ, std::vector<bool>(4, true), plain(bad)); tb.view_buffer_base = tb.data;
    tb.scratch = alloc(5 * 4, 0xFF); tb.scratch_len = 20; tb.out_values = alloc(4 * 32, 0xCD);
    std::vector<PageTask> tbs{tb}; std::vector<DictTask> nd0;
    run(tbs, nd0, st);
    CHECK(tbs[0].error == GDS_ERR_DECIMAL_LENGTH && tbs[0].error_index == 2, "dec256 33 bytes: error %u at %u", tbs[0].error, tbs[0].error_index);
    printf("byte-array Decimal256 ok\n");
  }
  { // errors
    size_t n = 100; std::vector<int32_t> dv; for (int i = 0; i < 10; ++i) dv.push_back(i); u64 dict = up(bytes(dv));
    auto dsec = [](std::vector<u32> idx, u32 bw) { std::vector<uint8_t> s{(uint8_t)bw}; auto h = hybrid(idx, bw); s.insert(s.end(), h.begin(), h.end()); return s; };
    std::vector<bool> all(n, true);
    auto base = [&](Layout l, std::vector<uint8_t> vals, u32 enc) { auto t = fixed(n, GDS_CONV_COPY, 4, 4); t.encoding = enc; place(t, l, all, vals); t.out_values = alloc(n * 4, 0); t.dict = dict; t.dict_count = 10; t.dict_len = 40; return t; };
    std::vector<PageTask> ts; std::vector<u32> want;
    ts.push_back(base(REQ, dsec(std::vector<u32>(n, 3), 4), GDS_ENC_DICTIONARY)); want.push_back(0);
    { std::vector<u32> i(n, 1); i[57] = 12; ts.push_back(base(REQ, dsec(i, 4), GDS_ENC_DICTIONARY)); want.push_back(GDS_ERR_DICT_INDEX); }
    ts.push_back(base(REQ, {33, 0, 0, 0}, GDS_ENC_DICTIONARY)); want.push_back(GDS_ERR_BIT_WIDTH);
    // A zero run header ends a hybrid stream (arrow-rs, Arrow C++): the 50
    // indices after it are not values, nor the 50 levels after one.
    ts.push_back(base(REQ, {4, 0x64, 3, 0x00, 0x64, 3}, GDS_ENC_DICTIONARY)); want.push_back(GDS_ERR_VALUES_OVERRUN);
    { auto t = base(V2, std::vector<uint8_t>(400, 0), GDS_ENC_PLAIN); std::vector<uint8_t> lv{0x64, 1, 0x00, 0x64, 1}; t.def_levels = up(lv); t.def_len = lv.size(); t.max_def = 1; ts.push_back(t); want.push_back(GDS_ERR_LEVELS_OVERRUN); }
    { std::vector<u32> i; for (size_t k = 0; k < n; ++k) i.push_back(k % 10); auto s = dsec(i, 4); s.resize(s.size() / 2); ts.push_back(base(REQ, s, GDS_ENC_DICTIONARY)); want.push_back(GDS_ERR_VALUES_OVERRUN); }
    ts.push_back(base(REQ, std::vector<uint8_t>(396, 0), GDS_ENC_PLAIN)); want.push_back(GDS_ERR_VALUES_OVERRUN);
    { auto t = base(V1, std::vector<uint8_t>(400, 0), GDS_ENC_PLAIN); u32 big = 10000; memcpy((void*)t.data, &big, 4); ts.push_back(t); want.push_back(GDS_ERR_LEVELS_LENGTH); }
    { auto t = base(V2, std::vector<uint8_t>(400, 0), GDS_ENC_PLAIN); t.def_len = 1; ts.push_back(t); want.push_back(GDS_ERR_LEVELS_OVERRUN); }
    { auto t = base(V2, std::vector<uint8_t>(400, 0), GDS_ENC_PLAIN); auto lv = hybrid(std::vector<u32>(n, 3), 2); t.def_levels = up(lv); t.def_len = lv.size(); t.max_def = 2; ts.push_back(t); want.push_back(GDS_ERR_BAD_LEVEL); }
    { auto t = base(REQ, std::vector<uint8_t>(400, 0), GDS_ENC_PLAIN); t.out_row = 1; ts.push_back(t); want.push_back(GDS_ERR_OUTPUT_RANGE); }
    { auto t = base(REQ, std::vector<uint8_t>(400, 0), GDS_ENC_PLAIN); t.out_width = 8; ts.push_back(t); want.push_back(GDS_ERR_BAD_CONVERSION); }
    // Levels are counted in 32 bits: a page of 2^31 levels or more (no Parquet
    // page; out_rows large enough) is refused before any tile.
    { auto t = base(REQ, std::vector<uint8_t>(400, 0), GDS_ENC_PLAIN); t.num_values = 0x80000000u; t.out_rows = 0xffffffffu; ts.push_back(t); want.push_back(GDS_ERR_BAD_TASK); }
    { std::vector<uint8_t> s; for (int i = 0; i < 99; ++i) { u32 L = 3; s.insert(s.end(), (uint8_t*)&L, (uint8_t*)&L + 4); s.push_back('a'); s.push_back('b'); s.push_back('c'); } u32 L = 1000; s.insert(s.end(), (uint8_t*)&L, (uint8_t*)&L + 4);
      PageTask t{}; t.kind = GDS_KIND_BYTE_ARRAY; t.encoding = GDS_ENC_PLAIN; t.out_rows = n; place(t, REQ, all, s); t.view_buffer_base = t.data; t.scratch = alloc(404, 0); t.scratch_len = 404; t.out_values = alloc(n * 16, 0); ts.push_back(t); want.push_back(GDS_ERR_VALUES_OVERRUN); }
    std::vector<uint8_t> sd; for (char c : std::string("xy")) { u32 L = 1; sd.insert(sd.end(), (uint8_t*)&L, (uint8_t*)&L + 4); sd.push_back(c); }
    DictTask d{}; d.data = up(sd); d.data_len = sd.size(); d.count = 3; d.out_views = alloc(48, 0); std::vector<DictTask> ds{d};
    run(ts, ds, st);
    for (size_t i = 0; i < ts.size(); ++i) { CHECK(ts[i].error == want[i], "case %zu: %u want %u", i, ts[i].error, want[i]); CHECK(st[i].x == ts[i].error, "status %zu", i); }
    CHECK(ts[1].error_index == 57, "index %u", ts[1].error_index);
    CHECK(ds[0].error == GDS_ERR_DICT_OVERRUN && ds[0].found == 2, "dict overrun");
    CHECK(st[ts.size()].x == GDS_ERR_DICT_OVERRUN && st[ts.size()].w == 2, "dict status");
    printf("errors ok\n");
  }
  { // many mixed sizes
    std::vector<PageTask> ts; std::vector<std::vector<u32>> exp;
    for (int p = 0; p < 24; ++p) {
      size_t n = p % 4 == 0 ? 0 : p % 4 == 1 ? rng.below(50) + 1 : rng.below(9000) + 1;
      Layout l = (Layout)(p % 3); u64 pm = rng.below(1000);
      auto def = l == REQ ? std::vector<bool>(n, true) : rdef(rng, n, pm);
      std::vector<u32> v; for (bool d : def) if (d) v.push_back(rng.next());
      auto t = fixed(n, GDS_CONV_COPY, 4, 4); place(t, l, def, bytes(v), p % 2 ? 8 : 1000000); t.out_values = alloc(n * 4 + 4, 0xCD);
      exp.push_back({}); size_t k = 0; for (bool d : def) exp.back().push_back(d ? v[k++] : 0);
      ts.push_back(t);
    }
    run(ts, nod, st); ok(ts, st);
    for (size_t p = 0; p < ts.size(); ++p) CHECK(exp[p].empty() || memcmp((void*)ts[p].out_values, exp[p].data(), exp[p].size() * 4) == 0, "mixed page %zu", p);
    printf("mixed ok\n");
  }
  { // corrupted pages: bit flips, truncations, lying lengths. Every page must
    // finish with a known error code or a consistent count, and (under
    // -fsanitize=address) no read may leave the page's bytes.
    Rng fz{777};
    auto mutate = [&](std::vector<uint8_t> v) {
      if (v.empty()) return v;
      switch (fz.below(4)) {
        case 0: for (u64 k = fz.below(4) + 1; k > 0; --k) v[fz.below(v.size())] ^= 1 << fz.below(8); break;
        case 1: v.resize(fz.below(v.size())); break;
        case 2: { size_t at = fz.below(v.size()); for (size_t k = at; k < v.size() && k < at + 4; ++k) v[k] = 0xff; break; }
        default: v[fz.below(v.size())] = (uint8_t)fz.next(); break;
      }
      return v;
    };
    int errors = 0, pages = 0;
    for (int iter = 0; iter < 40; ++iter) {
      size_t n = fz.below(600) + 1;
      auto def = rdef(fz, n, 300);
      size_t nd = 0; for (bool d : def) nd += d;
      std::vector<PageTask> ts;
      // Dictionary INT32, v1 levels, corrupt anywhere in the page.
      std::vector<int32_t> dv(50, 7); u64 dict = up(bytes(dv));
      { std::vector<u32> idx; for (size_t k = 0; k < nd; ++k) idx.push_back(fz.below(50));
        std::vector<uint8_t> sec{6}; auto h = hybrid(idx, 6); sec.insert(sec.end(), h.begin(), h.end());
        auto t = fixed(n, GDS_CONV_COPY, 4, 4); t.encoding = GDS_ENC_DICTIONARY; place(t, V1, def, sec);
        std::vector<uint8_t> whole((uint8_t*)t.data, (uint8_t*)t.data + t.data_len); auto m = mutate(whole);
        t.data = up(m); t.data_len = m.size(); t.dict = dict; t.dict_count = 50; t.dict_len = 200; t.out_values = alloc(n * 4, 0); ts.push_back(t); }
      // PLAIN byte arrays, required, corrupt values (lengths).
      { std::vector<uint8_t> sec; for (size_t k = 0; k < n; ++k) { u32 L = fz.below(30); sec.insert(sec.end(), (uint8_t*)&L, (uint8_t*)&L + 4); for (u32 b = 0; b < L; ++b) sec.push_back('a' + b % 26); }
        PageTask t{}; t.kind = GDS_KIND_BYTE_ARRAY; t.encoding = GDS_ENC_PLAIN; t.out_rows = n; place(t, REQ, std::vector<bool>(n, true), mutate(sec));
        t.view_buffer_base = t.data; t.scratch = alloc((n + 1) * 4, 0); t.scratch_len = (n + 1) * 4; t.out_values = alloc(n * 16, 0); ts.push_back(t); }
      // RLE booleans, v2 levels corrupt.
      { std::vector<u32> v; for (size_t k = 0; k < nd; ++k) v.push_back(fz.below(2));
        auto h = hybrid(v, 1); u32 L = h.size(); std::vector<uint8_t> sec(4); memcpy(sec.data(), &L, 4); sec.insert(sec.end(), h.begin(), h.end());
        PageTask t{}; t.kind = GDS_KIND_BOOLEAN; t.encoding = GDS_ENC_RLE; t.out_rows = n; place(t, V2, def, mutate(sec));
        std::vector<uint8_t> lv((uint8_t*)t.def_levels, (uint8_t*)t.def_levels + t.def_len); auto m = mutate(lv); t.def_levels = up(m); t.def_len = m.size();
        t.out_values = alloc((n + 31) / 32 * 4, 0); t.out_validity = alloc((n + 31) / 32 * 4, 0); ts.push_back(t); }
      // Byte-array dictionary (corrupt dictionary page) gathered by a page.
      std::vector<uint8_t> dp; for (int k = 0; k < 40; ++k) { u32 L = fz.below(20); dp.insert(dp.end(), (uint8_t*)&L, (uint8_t*)&L + 4); for (u32 b = 0; b < L; ++b) dp.push_back('A' + b); }
      auto md = mutate(dp);
      DictTask d{}; d.data = up(md); d.data_len = md.size(); d.count = 40; d.out_views = alloc(40 * 16, 0); d.view_buffer_base = d.data;
      std::vector<DictTask> ds{d};
      { std::vector<u32> idx; for (size_t k = 0; k < nd; ++k) idx.push_back(fz.below(40));
        std::vector<uint8_t> sec{6}; auto h = hybrid(idx, 6); sec.insert(sec.end(), h.begin(), h.end());
        PageTask t{}; t.kind = GDS_KIND_BYTE_ARRAY; t.encoding = GDS_ENC_DICTIONARY; t.out_rows = n; t.dict = d.out_views; t.dict_count = 40; t.dict_len = 640;
        place(t, V1, def, mutate(sec)); t.out_values = alloc(n * 16, 0); t.out_validity = alloc((n + 31) / 32 * 4, 0); ts.push_back(t); }
      run(ts, ds, st);
      for (size_t i = 0; i < ts.size(); ++i) {
        ++pages;
        CHECK(ts[i].error <= GDS_ERR_LAUNCH, "fuzz %d page %zu: code %u", iter, i, ts[i].error);
        if (ts[i].error) ++errors;
        else CHECK(ts[i].value_count + ts[i].null_count == ts[i].num_values, "fuzz %d page %zu counts", iter, i);
      }
      CHECK(ds[0].error <= GDS_ERR_LAUNCH && ds[0].found <= 40, "fuzz %d dict", iter);
    }
    printf("corruption ok (%d of %d pages reported an error)\n", errors, pages);
  }
  walks(rng);
  delta_strings(rng);
  delta_strings_corrupt(rng);
  printf(fails ? "FAILURES: %d\n" : "ALL OK\n", fails);
  return fails != 0;
}
