//! AFL target `reader` (see `gdscan_fuzz::reader`).
fn main() {
    // No abort-on-panic hook: the oracle's panics are caught inside the
    // target; any other panic still aborts (a crash for AFL).
    afl::fuzz_nohook!(|data: &[u8]| {
        gdscan_fuzz::reader(data);
    });
}
