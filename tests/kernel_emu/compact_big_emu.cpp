// compact_emu.cpp with 1024 items a thread (tiles of 262144 rows), so that
// its scan test runs millions of rows in few tiles under the emulation.
#define GDS_COMPACT_ITEMS 1024u
#include "compact_emu.cpp"
