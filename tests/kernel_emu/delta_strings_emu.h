// DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY pages (and BYTE_ARRAY
// decimals) under the emulation: included by kernels_emu.cpp after its
// helpers. Pages are encoded here as the specification writes them; the
// expected views and values are computed from the inputs.

// A DELTA_BYTE_ARRAY page's three sections, for strings `ss`.
struct DbaParts { std::vector<uint64_t> prefix, suffix; std::vector<uint8_t> bytes; };
static DbaParts dba_parts(const std::vector<std::string>& ss) {
  DbaParts d;
  for (size_t i = 0; i < ss.size(); ++i) {
    size_t p = 0;
    if (i) while (p < ss[i].size() && p < ss[i - 1].size() && ss[i][p] == ss[i - 1][p]) ++p;
    d.prefix.push_back(p); d.suffix.push_back(ss[i].size() - p);
    d.bytes.insert(d.bytes.end(), ss[i].begin() + p, ss[i].end());
  }
  return d;
}
static std::vector<uint8_t> dba_page(const DbaParts& d, u32 block = 128, u32 minis = 4) {
  auto o = delta_encode(d.prefix, block, minis, 32);
  auto s = delta_encode(d.suffix, block, minis, 32);
  o.insert(o.end(), s.begin(), s.end()); o.insert(o.end(), d.bytes.begin(), d.bytes.end());
  return o;
}
static std::vector<uint8_t> dlba_page(const std::vector<std::string>& ss, u32 block = 128, u32 minis = 4) {
  std::vector<uint64_t> lens; std::vector<uint8_t> bytes;
  for (auto& s : ss) { lens.push_back(s.size()); bytes.insert(bytes.end(), s.begin(), s.end()); }
  auto o = delta_encode(lens, block, minis, 32);
  o.insert(o.end(), bytes.begin(), bytes.end());
  return o;
}
static std::vector<uint8_t> emu_view(const std::string& s, u32 bi, u64 off) {
  std::vector<uint8_t> v(16, 0); u32 L = s.size(); memcpy(v.data(), &L, 4);
  if (L <= 12) memcpy(v.data() + 4, s.data(), L);
  else { memcpy(v.data() + 4, s.data(), 4); memcpy(v.data() + 8, &bi, 4); u32 o = off; memcpy(v.data() + 12, &o, 4); }
  return v;
}
static std::vector<uint8_t> emu_decimal(const std::string& s) {
  std::vector<uint8_t> v(16, (!s.empty() && (s[0] & 0x80)) ? 0xff : 0);
  for (size_t b = 0; b < s.size(); ++b) v[b] = s[s.size() - 1 - b];
  return v;
}
// As the decoder runs a row group with BYTE_ARRAY DELTA_BYTE_ARRAY pages:
// the sizes, a buffer of each page's bytes (index 7), then the kernels.
static void run_dba(std::vector<PageTask>& ts, std::vector<uint4>& st) {
  std::vector<DictTask> nod;
  emu_launch(ts.size(), GDS_BLOCK, [&] { gds_dba_sizes(ts.data(), ts.size()); });
  for (auto& t : ts) {
    if (t.kind != GDS_KIND_BYTE_ARRAY || t.encoding != GDS_ENC_DELTA_BYTE_ARRAY || t.error) continue;
    // Exactly the page's bytes: a write past them is a heap overflow ASan sees.
    t.dict = up(std::vector<uint8_t>(t.value_bytes, 0xCD)); t.dict_len = t.value_bytes;
    t.view_buffer_base = t.dict; t.view_buffer_index = 7;
  }
  run(ts, nod, st);
}

static void delta_strings(Rng& rng) {
  std::vector<uint4> st;
  // Strings with long shared prefixes (sorted), empty ones, short and long.
  auto rstrs = [&](size_t n, bool sorted) {
    std::vector<std::string> ss;
    for (size_t i = 0; i < n; ++i) {
      u64 k = rng.below(5); size_t len = k == 0 ? 0 : k == 1 ? rng.below(13) : k == 2 ? 13 + rng.below(20) : rng.below(300);
      std::string s = k == 4 ? std::string(40, 'p') : std::string();
      for (size_t j = 0; j < len; ++j) s += 'a' + rng.below(k == 4 ? 3 : 26);
      ss.push_back(s);
    }
    if (sorted) std::sort(ss.begin(), ss.end());
    return ss;
  };
  // Runs of equal values (prefix = the whole previous value, no suffix)
  // up to 700 long, some ending one byte longer: prefix chains that
  // cross the kernel's tiles of values.
  auto runs = [&](size_t n) {
    std::vector<std::string> ss;
    while (ss.size() < n) {
      std::string s(1 + rng.below(60), 'r');
      for (auto& ch : s) ch = 'a' + rng.below(26);
      for (size_t r = 1 + rng.below(700); r > 0 && ss.size() < n; --r) {
        if (rng.below(50) == 0) s += 'z';
        ss.push_back(s);
      }
    }
    return ss;
  };
  struct Case { u32 enc; Layout l; size_t n; u64 pm; bool window; bool decimal; u32 block, minis; bool runs = false; };
  const Case cases[] = {
      {GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, V1, 2600, 200, false, false, 128, 4},
      {GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, REQ, 1500, 0, true, false, 256, 2},
      {GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, V2, 1, 0, false, false, 128, 4},
      {GDS_ENC_DELTA_BYTE_ARRAY, V2, 3000, 300, false, false, 128, 4},
      {GDS_ENC_DELTA_BYTE_ARRAY, REQ, 2100, 0, true, false, 2048, 8},
      {GDS_ENC_DELTA_BYTE_ARRAY, V1, 700, 500, true, false, 128, 4},
      {GDS_ENC_DELTA_BYTE_ARRAY, REQ, 1, 0, false, false, 128, 4},
      {GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, V1, 900, 100, false, true, 128, 4},
      {GDS_ENC_DELTA_BYTE_ARRAY, V2, 900, 100, false, true, 128, 4},
      {GDS_ENC_DELTA_BYTE_ARRAY, REQ, 5000, 0, false, false, 128, 4, true},
      {GDS_ENC_DELTA_BYTE_ARRAY, V1, 4000, 300, true, false, 256, 4, true},
  };
  std::vector<PageTask> ts; std::vector<std::vector<std::vector<uint8_t>>> exp; std::vector<std::string> all_bytes;
  for (const Case& c : cases) {
    auto def = c.l == REQ ? std::vector<bool>(c.n, true) : rdef(rng, c.n, c.pm);
    size_t nn = 0; for (bool d : def) nn += d;
    std::vector<std::string> ss = c.runs ? runs(nn) : rstrs(nn, c.enc == GDS_ENC_DELTA_BYTE_ARRAY);
    if (c.decimal) for (auto& s : ss) { s.resize(rng.below(17)); for (auto& ch : s) ch = (char)rng.below(256); }
    if (c.decimal && c.enc == GDS_ENC_DELTA_BYTE_ARRAY) std::sort(ss.begin(), ss.end());
    std::vector<uint8_t> sec = c.enc == GDS_ENC_DELTA_BYTE_ARRAY ? dba_page(dba_parts(ss), c.block, c.minis) : dlba_page(ss, c.block, c.minis);
    PageTask t{}; t.kind = GDS_KIND_BYTE_ARRAY; t.encoding = c.enc; t.view_buffer_index = 3; t.out_width = 16;
    t.conversion = c.decimal ? GDS_CONV_BE_TO_DECIMAL128 : GDS_CONV_COPY;
    place(t, c.l, def, sec); t.view_buffer_base = t.data;
    size_t skip = 0, take = c.n;
    if (c.window) { skip = c.n / 3; take = c.n / 2; t.flags |= GDS_FLAG_ROW_WINDOW; t.row_skip = skip; t.row_take = take; }
    t.out_rows = take;
    const u64 words = c.enc == GDS_ENC_DELTA_BYTE_ARRAY ? 3 * c.n + 3 : c.n + 1;
    t.scratch = alloc(words * 4, 0xEE); t.scratch_len = words * 4;
    t.out_values = alloc(take * 16, 0xCD);
    if (c.l != REQ) t.out_validity = alloc((take + 31) / 32 * 4, 0);
    // Where value k's bytes are: DLBA after the lengths in the page
    // (offsets from t.data), DBA in its buffer (offsets from its start).
    u64 pos = 0;
    if (c.enc == GDS_ENC_DELTA_LENGTH_BYTE_ARRAY) {
      if (c.l == V1) { u32 L; memcpy(&L, (void*)t.data, 4); pos = 4 + L; }
      std::vector<uint64_t> lens; for (auto& s : ss) lens.push_back(s.size());
      pos += delta_encode(lens, c.block, c.minis, 32).size();
    }
    std::string cat; exp.push_back({}); size_t k = 0;
    for (size_t r = 0; r < c.n; ++r) {
      const bool d = def[r];
      std::vector<uint8_t> v(16, 0);
      if (d) { const auto& s = ss[k++]; v = c.decimal ? emu_decimal(s) : emu_view(s, c.enc == GDS_ENC_DELTA_BYTE_ARRAY ? 7 : 3, pos + cat.size()); cat += s; }
      if (r >= skip && r < skip + take) exp.back().push_back(v);
    }
    all_bytes.push_back(cat);
    ts.push_back(t);
  }
  run_dba(ts, st); ok(ts, st);
  for (size_t p = 0; p < ts.size(); ++p) {
    for (size_t r = 0; r < exp[p].size(); ++r) CHECK(memcmp((void*)(ts[p].out_values + r * 16), exp[p][r].data(), 16) == 0, "delta strings page %zu row %zu", p, r);
    if (ts[p].encoding == GDS_ENC_DELTA_BYTE_ARRAY) {
      CHECK(ts[p].value_bytes == all_bytes[p].size(), "dba page %zu: %u bytes, want %zu", p, ts[p].value_bytes, all_bytes[p].size());
      CHECK(memcmp((void*)ts[p].dict, all_bytes[p].data(), all_bytes[p].size()) == 0, "dba page %zu values", p);
    }
  }
  // FIXED_LEN_BYTE_ARRAY DELTA_BYTE_ARRAY (5 bytes, copied; 16 bytes, decimals).
  for (u32 w : {5u, 16u}) {
    size_t n = 1800; auto def = rdef(rng, n, 250); std::vector<std::string> ss;
    for (bool d : def) if (d) { std::string s(w, 'x'); for (u32 b = 2; b < w; ++b) s[b] = (char)rng.below(256); ss.push_back(s); }
    std::sort(ss.begin(), ss.end());
    const u32 conv = w == 16 ? GDS_CONV_BE_TO_DECIMAL128 : GDS_CONV_COPY;
    auto t = fixed(n, conv, w, w == 16 ? 16 : w); t.encoding = GDS_ENC_DELTA_BYTE_ARRAY;
    place(t, V1, def, dba_page(dba_parts(ss)));
    const u64 bytes = ((n * w + 3) / 4 + 2 * n + 1) * 4;
    t.scratch = alloc(bytes, 0xEE); t.scratch_len = bytes; t.out_values = alloc(n * 16, 0xCD); t.out_validity = alloc((n + 31) / 32 * 4, 0);
    std::vector<PageTask> one{t}; run_dba(one, st); ok(one, st);
    size_t k = 0;
    for (size_t r = 0; r < n; ++r) {
      std::vector<uint8_t> e(t.out_width, 0);
      if (def[r]) { auto& s = ss[k++]; e = w == 16 ? emu_decimal(s) : std::vector<uint8_t>(s.begin(), s.end()); }
      CHECK(memcmp((void*)(one[0].out_values + r * t.out_width), e.data(), t.out_width) == 0, "flba dba width %u row %zu", w, r);
    }
  }
  printf("delta strings ok (%zu pages)\n", ts.size() + 2);
}

// Lying DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY pages: the typed error,
// never a read or write outside the page (ASan build), never a hang.
static void delta_strings_corrupt(Rng& rng) {
  std::vector<uint4> st;
  std::vector<PageTask> bad; std::vector<u32> want;
  const size_t n = 300;
  auto mk = [&](u32 enc, std::vector<uint8_t> sec, u32 want_code, u32 conv = GDS_CONV_COPY) {
    PageTask t{}; t.kind = GDS_KIND_BYTE_ARRAY; t.encoding = enc; t.out_rows = n; t.out_width = 16; t.conversion = conv;
    place(t, REQ, std::vector<bool>(n, true), sec); t.view_buffer_base = t.data;
    const u64 words = enc == GDS_ENC_DELTA_BYTE_ARRAY ? 3 * n + 3 : n + 1;
    t.scratch = alloc(words * 4, 0xEE); t.scratch_len = words * 4; t.out_values = alloc(n * 16, 0);
    bad.push_back(t); want.push_back(want_code);
  };
  std::vector<std::string> ss; for (size_t i = 0; i < n; ++i) ss.push_back(std::string(20, 'k') + std::to_string(i * 7919));
  std::sort(ss.begin(), ss.end());
  const auto parts = dba_parts(ss);
  auto with = [&](std::vector<uint64_t> pre, std::vector<uint64_t> suf, std::vector<uint8_t> bytes) {
    return dba_page(DbaParts{pre, suf, bytes});
  };
  const auto neg = (uint64_t)(uint32_t)-5;
  { auto p = parts.prefix; p[10] = ss[9].size() + 1; mk(GDS_ENC_DELTA_BYTE_ARRAY, with(p, parts.suffix, parts.bytes), GDS_ERR_DELTA_PREFIX); }
  { auto p = parts.prefix; p[0] = 1; mk(GDS_ENC_DELTA_BYTE_ARRAY, with(p, parts.suffix, parts.bytes), GDS_ERR_DELTA_PREFIX); }
  { auto p = parts.prefix; p[5] = neg; mk(GDS_ENC_DELTA_BYTE_ARRAY, with(p, parts.suffix, parts.bytes), GDS_ERR_DELTA_LENGTH); }
  { auto s = parts.suffix; s[5] = neg; mk(GDS_ENC_DELTA_BYTE_ARRAY, with(parts.prefix, s, parts.bytes), GDS_ERR_DELTA_LENGTH); }
  { auto s = parts.suffix; s[7] += 100000; mk(GDS_ENC_DELTA_BYTE_ARRAY, with(parts.prefix, s, parts.bytes), GDS_ERR_DELTA_LENGTH); }
  { auto s = parts.suffix; s.pop_back(); mk(GDS_ENC_DELTA_BYTE_ARRAY, with(parts.prefix, s, parts.bytes), GDS_ERR_DELTA_LENGTH); }
  { auto b = parts.bytes; b.resize(b.size() - 1); mk(GDS_ENC_DELTA_BYTE_ARRAY, with(parts.prefix, parts.suffix, b), GDS_ERR_DELTA_LENGTH); }
  { auto pg = dba_page(parts); pg.resize(20); mk(GDS_ENC_DELTA_BYTE_ARRAY, pg, 0); }          // cut inside the lengths
  { auto pg = dba_page(parts); pg[7] = 40; mk(GDS_ENC_DELTA_BYTE_ARRAY, pg, GDS_ERR_BIT_WIDTH); }  // a prefix miniblock of 40 bits (INT32)
  { auto pg = dlba_page(ss); pg[7] = 33; mk(GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, pg, GDS_ERR_BIT_WIDTH); }
  { std::vector<uint64_t> l(n, 3); l[17] = neg; auto pg = delta_encode(l, 128, 4, 32); pg.resize(pg.size() + 3 * n, 'z'); mk(GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, pg, GDS_ERR_DELTA_LENGTH); }
  { auto pg = dlba_page(ss); pg.resize(pg.size() - 1); mk(GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, pg, GDS_ERR_DELTA_LENGTH); }
  { auto pg = dlba_page(ss); pg.resize(9); mk(GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, pg, 0); }
  { std::vector<uint8_t> pg; uleb(pg, 128); uleb(pg, 4); uleb(pg, n + 1); uleb(pg, 0); mk(GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, pg, GDS_ERR_DELTA_HEADER); }
  { std::vector<std::string> big{std::string(17, '\x01')}; big.resize(n, "\x02"); mk(GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, dlba_page(big), GDS_ERR_DECIMAL_LENGTH, GDS_CONV_BE_TO_DECIMAL128); }
  const size_t lies = bad.size();
  // Byte flips of good pages: any result, within bounds.
  for (int f = 0; f < 40; ++f) {
    auto pg = f % 2 ? dba_page(parts) : dlba_page(ss);
    for (int k = 0; k < 3; ++k) pg[rng.below(std::min<size_t>(pg.size(), 64 + f * 8))] ^= 1 + rng.below(255);
    mk(f % 2 ? GDS_ENC_DELTA_BYTE_ARRAY : GDS_ENC_DELTA_LENGTH_BYTE_ARRAY, pg, 0xffffffffu);
  }
  run_dba(bad, st);
  for (size_t i = 0; i < lies; ++i) CHECK(want[i] ? bad[i].error == want[i] : bad[i].error != 0, "bad delta string page %zu: error %u, want %u", i, bad[i].error, want[i]);
  size_t errs = 0; for (size_t i = lies; i < bad.size(); ++i) errs += bad[i].error != 0;
  printf("delta strings corruption ok (%zu lies; %zu of %zu flipped pages reported an error)\n", lies, errs, bad.size() - lies);
}
