// The Snappy scan (snappy_scan.cu, then gds_snappy_pieces of check.cu)
// under the CPU emulation of emu.h. argv[1] holds the host's layout
// (src/decode/kernels/snappy_scan.rs, ScanLayout): u32 n_pages, n_segs,
// bitmap_words, starts, region_bytes, n_jobs; the page table (10 u64 a
// page, src as an offset into the pages' bytes, which follow); the segment
// table (n_segs u32); then per page its u32 length and bytes. Each page
// gets an allocation of exactly its bytes, so a read outside it fails
// under AddressSanitizer. argv[2] receives, per page, its 8 result words,
// then per job: u8 (1 when pointed at the empty stream), u64 src_len, u64
// dst_len and the src_len bytes nvCOMP would read; then three u64: the
// segments gds_snappy_verify proved without walking them, the later
// speculative walks that stopped on walk 0's path, and those left to
// gds_snappy_spec_rest; then what gds_snappy_decode (snappy_decode.cu) made
// of the same pages from the scan's findings: per job u32 status and u64
// output bytes, then per page its output buffer (the page header's size,
// an allocation of exactly that); then the same again with every page's
// verdict forced sound; then again as scanned with one element start of
// each sound page's bitmap moved a byte on, and a byte per page, 1 where
// one was.
#include "emu.h"
#include <atomic>
// Segments gds_snappy_verify proved from a walk's record instead of walking
// them: counted, and written after the jobs, so that the test knows the
// proof ran.
static std::atomic<unsigned long long> proved_segments{0};
#define GDS_SCAN_PROVED_HOOK() (proved_segments += 1)
// Later speculative walks that stopped on walk 0's path: counted too.
static std::atomic<unsigned long long> merged_walks{0};
#define GDS_SCAN_MERGED_HOOK() (merged_walks += 1)
#include "check.cu"
#include "snappy_scan.cu"
#include "snappy_decode.cu"
#include <fstream>
#include <iterator>

template <typename T>
static T take(const std::vector<uint8_t>& all, size_t& at) {
  T v;
  memcpy(&v, &all[at], sizeof(T));
  at += sizeof(T);
  return v;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = 0;
  const u32 n_pages = take<u32>(all, at), n_segs = take<u32>(all, at), bitmap_words = take<u32>(all, at);
  const u32 n_starts = take<u32>(all, at), region_bytes = take<u32>(all, at), n_jobs = take<u32>(all, at);
  std::vector<u64> table(10 * (size_t)n_pages);
  for (auto& w : table) w = take<u64>(all, at);
  std::vector<u32> seg_page(n_segs);
  for (auto& s : seg_page) s = take<u32>(all, at);
  std::vector<std::vector<uint8_t>*> pages;
  std::vector<uint8_t> region(region_bytes + 1);
  for (u32 i = 0; i < n_pages; ++i) {
    const u32 len = take<u32>(all, at);
    auto* p = new std::vector<uint8_t>(all.begin() + at, all.begin() + at + len);
    at += len;
    pages.push_back(p);
    table[10 * i] = (u64)p->data();
    if (table[10 * i + 7] > 1) table[10 * i + 8] += (u64)region.data();
  }
  std::vector<u32> bitmap(bitmap_words + 1), exits((size_t)n_segs * GDS_SCAN_STARTS + 1), entries(n_segs + 1), faults(4 * (size_t)n_segs + 4);
  std::vector<u32> outputs((size_t)n_segs * GDS_SCAN_STARTS * GDS_SCAN_RECORD_WORDS + 1);
  std::vector<u32> meets(2 * (size_t)n_segs + 2);
  // The real chain's element starts, for gds_snappy_decode.
  std::vector<u32> real((size_t)n_segs * (GDS_SCAN_SEGMENT / 32) + 1);
  std::vector<u32> rest(1 + (size_t)n_segs * (GDS_SCAN_STARTS - 1));
  // The walks' arrays start as stale pool memory would: bits set at
  // random, exits and records anywhere. Every walk must write all of its
  // own (a bitmap word or an exit left from before could make the join
  // follow a chain that is not the stream's).
  u64 stale = 0x9e3779b97f4a7c15ull;
  auto garbage = [&]() {
    stale ^= stale << 13;
    stale ^= stale >> 7;
    stale ^= stale << 17;
    return (u32)stale;
  };
  for (auto& w : bitmap) w = garbage();
  for (auto& w : exits) w = garbage() % 4096;
  for (auto& w : outputs) w = garbage();
  for (auto& w : rest) w = garbage();
  for (auto& w : real) w = garbage();
  std::vector<u64> outs(n_segs + 1), before(n_segs + 1);
  std::vector<u32> starts(n_starts + 1), verdicts(8 * (size_t)n_pages);
  std::vector<u64> src(n_jobs, 0xEEEE), src_len(n_jobs, 0), dst_len(n_jobs, 0), tasks(4 * (size_t)n_jobs + 4);
  // The host's output sizes, as for nvCOMP.
  for (u32 i = 0; i < n_pages; ++i) {
    const u64 size = table[10 * i + 2], first = table[10 * i + 6], pieces = table[10 * i + 7];
    for (u64 j = 0; j < pieces; ++j) {
      dst_len[first + j] = pieces == 1 ? size : (size - j * 65536 < 65536 ? size - j * 65536 : 65536);
    }
  }
  static uint8_t dummy = 0;
  const unsigned grid = 4;
  // Walk 0 of every segment, the later walks, and those they left (as
  // the host launches them).
  emu_launch(grid, GDS_SCAN_BLOCK, [&] {
    gds_snappy_spec(table.data(), seg_page.data(), n_segs, bitmap.data(), exits.data(), outputs.data(), rest.data());
  });
  emu_launch(grid, GDS_SCAN_BLOCK, [&] {
    gds_snappy_spec_later(table.data(), seg_page.data(), n_segs, bitmap.data(), exits.data(), outputs.data(),
                          rest.data());
  });
  const u64 left = rest[0];
  emu_launch(grid, GDS_SCAN_BLOCK, [&] {
    gds_snappy_spec_rest(table.data(), seg_page.data(), n_segs, bitmap.data(), exits.data(), outputs.data(),
                         rest.data());
  });
  emu_launch(grid, GDS_SCAN_BLOCK, [&] {
    gds_snappy_chain(table.data(), n_pages, bitmap.data(), exits.data(), outputs.data(), entries.data(), meets.data(),
                     outs.data(), verdicts.data());
  });
  emu_launch(grid, GDS_SCAN_BLOCK, [&] {
    gds_snappy_outs(table.data(), seg_page.data(), n_segs, bitmap.data(), outputs.data(), meets.data(), outs.data());
  });
  emu_launch(grid, GDS_SCAN_BLOCK, [&] { gds_snappy_prefix(table.data(), n_pages, outs.data(), before.data()); });
  emu_launch(grid, GDS_SCAN_BLOCK, [&] {
    gds_snappy_verify(table.data(), seg_page.data(), n_segs, entries.data(), before.data(), bitmap.data(), exits.data(),
                      outputs.data(), meets.data(), faults.data(), starts.data(), verdicts.data(), real.data());
  });
  emu_launch(grid, GDS_SCAN_BLOCK, [&] {
    gds_snappy_finish(table.data(), n_pages, faults.data(), before.data(), outs.data(), starts.data(), verdicts.data(),
                      src.data(), src_len.data(), dst_len.data(), tasks.data(), (u64)&dummy, 0);
  });
  emu_launch(grid, GDS_PIECES_BLOCK, [&] { gds_snappy_pieces(tasks.data(), n_jobs); });
  std::ofstream out(argv[2], std::ios::binary);
  out.write((const char*)verdicts.data(), verdicts.size() * 4);
  for (u32 k = 0; k < n_jobs; ++k) {
    const uint8_t is_dummy = src[k] == (u64)&dummy ? 1 : 0;
    out.write((const char*)&is_dummy, 1);
    out.write((const char*)&src_len[k], 8);
    out.write((const char*)&dst_len[k], 8);
    if (!is_dummy) out.write((const char*)src[k], src_len[k]);
  }
  const u64 proved = proved_segments.load();
  out.write((const char*)&proved, 8);
  const u64 merged = merged_walks.load();
  out.write((const char*)&merged, 8);
  out.write((const char*)&left, 8);
  // The decoder on the scan's findings with the verdicts `given`, into an
  // output buffer of exactly its size per page; its results written out.
  auto decode_with = [&](const std::vector<u32>& given) {
    std::vector<std::vector<uint8_t>*> page_out(n_pages);
    std::vector<u64> dst(n_jobs), actual(n_jobs, 0xAAAA);
    std::vector<u32> statuses(n_jobs, 0xBBBB);
    for (u32 i = 0; i < n_pages; ++i) {
      const u64 size = table[10 * i + 2], first = table[10 * i + 6], pieces = table[10 * i + 7];
      page_out[i] = new std::vector<uint8_t>(size);
      for (u64 j = 0; j < pieces; ++j) dst[first + j] = (u64)page_out[i]->data() + j * GDS_SNAPPY_PIECE;
    }
    emu_launch(grid, GDS_UNSNAP_BLOCK, [&] {
      gds_snappy_decode(table.data(), n_pages, n_jobs, entries.data(), starts.data(), given.data(), real.data(),
                        dst.data(), actual.data(), statuses.data());
    });
    for (u32 k = 0; k < n_jobs; ++k) {
      out.write((const char*)&statuses[k], 4);
      out.write((const char*)&actual[k], 8);
    }
    for (auto* o : page_out) {
      if (!o->empty()) out.write((const char*)o->data(), o->size());
      delete o;
    }
  };
  decode_with(verdicts);
  // Again with every page's verdict forced sound (the split flags kept):
  // the decoder's own checks, not the scan's, then stand between a
  // corrupt stream and the output buffers.
  std::vector<u32> forced = verdicts;
  for (u32 i = 0; i < n_pages; ++i) forced[8 * (size_t)i] = GDS_SNAPPY_OK;
  decode_with(forced);
  // Once more as scanned, with one element start of each sound page's
  // bitmap moved a byte on (its first start past the middle of its
  // stream; an element is at least two bytes, so the byte after a start is
  // none): the decoder must refuse the page, whatever the scan said. Then
  // a byte per page: 1 where a start was moved.
  std::vector<uint8_t> moved(n_pages, 0);
  auto real_bit = [&](u64 seg_first, u64 pos) -> u32& {
    return real[(seg_first + pos / GDS_SCAN_SEGMENT) * (GDS_SCAN_SEGMENT / 32) + (pos % GDS_SCAN_SEGMENT) / 32];
  };
  for (u32 i = 0; i < n_pages; ++i) {
    const u64 len = table[10 * i + 1], seg_first = table[10 * i + 3], segs = table[10 * i + 4];
    if (verdicts[8 * (size_t)i] != GDS_SNAPPY_OK || segs == 0) continue;
    const u64 entry = entries[seg_first];
    for (u64 pos = entry + (len - entry) / 2; pos + 1 < len; ++pos) {
      if ((real_bit(seg_first, pos) >> (pos % 32) & 1u) == 0) continue;
      real_bit(seg_first, pos) ^= 1u << (pos % 32);
      real_bit(seg_first, pos + 1) ^= 1u << ((pos + 1) % 32);
      moved[i] = 1;
      break;
    }
  }
  decode_with(verdicts);
  out.write((const char*)moved.data(), moved.size());
  for (auto* p : pages) delete p;
  return 0;
}
