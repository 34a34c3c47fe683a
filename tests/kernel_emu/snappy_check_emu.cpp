// gds_check_snappy under the CPU emulation of emu.h. Reads jobs from the
// file named by argv[1] (per job: u32 compressed length, u32 declared size,
// the bytes), runs the kernel over all of them, and prints one line per
// job: "code at a b rewritten" (rewritten: 1 when the job's pointer and
// size now name the one-byte empty stream). tests/kernel_emu.rs compares
// the lines with the host check (src/decode/page/validate/).
#include "emu.h"
#include "check.cu"
#include <fstream>
#include <iterator>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::vector<uint8_t>*> pages;
  std::vector<u64> src, src_len, dst_len;
  size_t at = 0;
  while (at + 8 <= all.size()) {
    u32 len, size;
    memcpy(&len, &all[at], 4);
    memcpy(&size, &all[at + 4], 4);
    at += 8;
    // Exactly the page's bytes: a read past them is a heap overflow under
    // AddressSanitizer.
    auto* page = new std::vector<uint8_t>(all.begin() + at, all.begin() + at + len);
    at += len;
    pages.push_back(page);
    src.push_back((u64)page->data());
    src_len.push_back(len);
    dst_len.push_back(size);
  }
  const u32 n = (u32)src.size();
  std::vector<u32> results(4 * (size_t)n, 0xEEEEEEEEu);
  static uint8_t dummy = 0;
  emu_launch(n < 64 ? n : 64, GDS_CHECK_BLOCK, [&] {
    gds_check_snappy(src.data(), src_len.data(), dst_len.data(), n, results.data(), (u64)&dummy, ~0ull);
  });
  for (u32 j = 0; j < n; ++j) {
    const bool rewritten = src[j] == (u64)&dummy && src_len[j] == 1;
    printf("%u %u %u %u %d\n", results[4 * j], results[4 * j + 1], results[4 * j + 2], results[4 * j + 3], rewritten ? 1 : 0);
  }
  for (auto* p : pages) delete p;
  return 0;
}
