// gds_snappy_hop (check.cu: an element from its 8 bytes in one register,
// in 32-bit arithmetic, without branches on its kind) against
// gds_snappy_element (a byte at a time, 64-bit), under the CPU emulation of
// emu.h: every tag, random bytes after it, positions up to just under
// 2 GiB, and stream ends from inside the element's header to far past it
// (literal lengths up to 2^32 included). A truncated element's length is
// not compared (no caller reads it). Prints "ALL OK" and the count of
// elements compared, or the first difference.
#include "emu.h"
#include "check.cu"
#include <cstdio>

static bool same(const SnappyElement& a, const SnappyHop& b) {
  const bool ok = a.code == GDS_SNAPPY_OK;
  return (ok ? a.next == b.next && a.length == b.length : b.next == 0xffffffffu) && a.offset == b.offset &&
         a.copy == b.copy && a.code == b.code && a.at == b.at;
}

int main() {
  u64 state = 0x9e3779b97f4a7c15ull;
  auto next = [&]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  u64 compared = 0;
  const u64 positions[] = {0, 1, 5, 4093, 0x7fffff00ull, 0x7ffffff0ull};
  for (u32 tag = 0; tag < 256; ++tag) {
    for (u32 r = 0; r < 64; ++r) {
      // r 0 and 1: every byte after the tag zero or 0xff (the extremes of
      // the lengths and offsets).
      const u64 rest = r == 0 ? 0 : (r == 1 ? ~0ull : next());
      const u64 full = (rest << 8) | tag;
      for (const u64 pos : positions) {
        for (u64 room = 1; room < 80; ++room) {
          const u64 len64 = pos + room;
          if (len64 > 0x7fffffffull) continue;
          const u32 len = (u32)len64;
          // The 8 bytes from pos as a window gives them: zero past the end.
          const u64 x = room >= 8 ? full : full & ((1ull << (8 * room)) - 1);
          const SnappyElement a =
              gds_snappy_element([x, pos](u64 p) { return (u32)(x >> (8 * (p - pos))) & 0xffu; }, len, pos);
          const SnappyHop b = gds_snappy_hop(x, len, (u32)pos);
          ++compared;
          if (!same(a, b)) {
            printf("tag %u bytes %016llx pos %llu len %u: bytewise next %llu length %llu offset %u copy %u code %u at %u;"
                   " hop next %u length %u offset %u copy %u code %u at %u\n",
                   tag, (unsigned long long)full, (unsigned long long)pos, len, (unsigned long long)a.next,
                   (unsigned long long)a.length, a.offset, a.copy, a.code, a.at, b.next, b.length, b.offset, b.copy,
                   b.code, b.at);
            return 1;
          }
        }
        // The longest stream a page has (a literal's length up to 2^32 is
        // read and refused).
        const SnappyElement a =
            gds_snappy_element([full, pos](u64 p) { return (u32)(full >> (8 * (p - pos))) & 0xffu; }, 0x7fffffffu, pos);
        const SnappyHop b = gds_snappy_hop(full, 0x7fffffffu, (u32)pos);
        ++compared;
        if (!same(a, b)) {
          printf("tag %u bytes %016llx pos %llu long stream differs\n", tag, (unsigned long long)full,
                 (unsigned long long)pos);
          return 1;
        }
      }
    }
  }
  printf("ALL OK: %llu elements\n", (unsigned long long)compared);
  return 0;
}
