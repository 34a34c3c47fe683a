// gds_snappy_pieces under the CPU emulation of emu.h. Reads tasks from the
// file named by argv[1] (per task: u32 elements length, u32 output length,
// the elements), runs the kernel over all of them, and writes to argv[2]
// what it made (per task: u32 length, the piece's stream). Every source
// and destination holds exactly its bytes: a read or write past them is a
// heap overflow under AddressSanitizer. tests/kernel_emu.rs decompresses
// the streams with the snap crate.
#include "emu.h"
#include "check.cu"
#include <fstream>
#include <iterator>

static bool block_copy_everywhere() {
  for (u32 so = 0; so < 4; ++so) {
    for (u32 d_off = 0; d_off < 4; ++d_off) {
      for (u32 n = 0; n <= 70; ++n) {
        std::vector<uint8_t> src(so + n), dst(d_off + n, 0xEE);
        for (u32 i = 0; i < n; ++i) src[so + i] = (uint8_t)(i * 7 + so + 1);
        emu_launch(1, 32, [&] { gds_block_copy(dst.data() + d_off, src.data() + so, n); });
        for (u32 i = 0; i < n; ++i) {
          if (dst[d_off + i] != src[so + i]) {
            fprintf(stderr, "block copy: source offset %u, destination offset %u, %u bytes: byte %u differs\n", so,
                    d_off, n, i);
            return false;
          }
        }
        for (u32 i = 0; i < d_off; ++i) {
          if (dst[i] != 0xEE) {
            fprintf(stderr, "block copy wrote before its destination (%u/%u/%u)\n", so, d_off, n);
            return false;
          }
        }
      }
    }
  }
  return true;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  if (!block_copy_everywhere()) return 3;
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::vector<uint8_t>*> srcs, dsts;
  std::vector<u64> tasks;
  size_t at = 0;
  while (at + 8 <= all.size()) {
    u32 len, out_len;
    memcpy(&len, &all[at], 4);
    memcpy(&out_len, &all[at + 4], 4);
    at += 8;
    // The elements at offset (task % 4) of an allocation that ends with them.
    const u32 off = (u32)(srcs.size() % 4);
    auto* src = new std::vector<uint8_t>(off, 0);
    src->insert(src->end(), all.begin() + at, all.begin() + at + len);
    at += len;
    u32 head = 1;
    for (u32 rest = out_len >> 7; rest != 0; rest >>= 7) ++head;
    auto* dst = new std::vector<uint8_t>(head + len, 0xEE);
    srcs.push_back(src);
    dsts.push_back(dst);
    tasks.push_back((u64)(src->data() + off));
    tasks.push_back((u64)dst->data());
    tasks.push_back(len);
    tasks.push_back(out_len);
  }
  const u32 n = (u32)srcs.size();
  emu_launch(n < 8 ? (n == 0 ? 1 : n) : 8, GDS_PIECES_BLOCK, [&] { gds_snappy_pieces(tasks.data(), n); });
  std::ofstream out(argv[2], std::ios::binary);
  for (auto* d : dsts) {
    const u32 len = (u32)d->size();
    out.write((const char*)&len, 4);
    out.write((const char*)d->data(), len);
  }
  for (auto* p : srcs) delete p;
  for (auto* p : dsts) delete p;
  return 0;
}
