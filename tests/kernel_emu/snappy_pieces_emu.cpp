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

int main(int argc, char** argv) {
  if (argc != 3) return 2;
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
    auto* src = new std::vector<uint8_t>(all.begin() + at, all.begin() + at + len);
    at += len;
    u32 head = 1;
    for (u32 rest = out_len >> 7; rest != 0; rest >>= 7) ++head;
    auto* dst = new std::vector<uint8_t>(head + len, 0xEE);
    srcs.push_back(src);
    dsts.push_back(dst);
    tasks.push_back((u64)src->data());
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
