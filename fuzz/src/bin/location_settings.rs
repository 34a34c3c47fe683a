//! AFL target `location_settings` (see `gdscan_fuzz::location_settings`).
fn main() {
    // No abort-on-panic hook: the oracle's panics are caught inside the
    // target; any other panic still aborts (a crash for AFL).
    afl::fuzz_nohook!(|data: &[u8]| {
        gdscan_fuzz::location_settings(data);
    });
}
