//! The process's resident set size (`/proc/self/statm`), for the load
//! benchmark's memory growth per round.

/// Bytes of this process resident in memory now (the second field of
/// `/proc/self/statm`, in pages, times the page size); None where that
/// file cannot be read (not Linux) or makes no sense.
pub(crate) fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    // SAFETY: sysconf reads a constant of the system; no pointers.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    rss_from_statm(&statm, u64::try_from(page).ok()?)
}

/// The resident bytes that a `statm` line gives: its second field (pages)
/// times `page_bytes`.
fn rss_from_statm(statm: &str, page_bytes: u64) -> Option<u64> {
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    pages.checked_mul(page_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_field_counts_pages() {
        assert_eq!(
            rss_from_statm("5000 1200 300 10 0 900 0\n", 4096),
            Some(1200 * 4096)
        );
        assert_eq!(rss_from_statm("5000", 4096), None);
        assert_eq!(rss_from_statm("5000 many", 4096), None);
        assert_eq!(rss_from_statm("1 18446744073709551615", 4096), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_resident_and_grows_with_touched_memory() {
        let before = rss_bytes().expect("/proc/self/statm on Linux");
        assert!(before > 0);
        let touched = vec![1u8; 64 << 20];
        let after = rss_bytes().unwrap();
        assert!(
            after >= before + (32 << 20),
            "{before} -> {after} with 64 MiB touched"
        );
        drop(std::hint::black_box(touched));
    }
}
