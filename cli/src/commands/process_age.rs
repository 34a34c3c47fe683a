//! How long this process has run, by the kernel's clock: from its start
//! (`/proc/self/stat`'s start time) to now (`/proc/uptime`), both in the
//! kernel's clock ticks (10 ms on most systems). What a user waits for a
//! fresh command includes what happens before `main`: loading the binary
//! and its libraries.

/// Seconds since this process started; None where `/proc` does not say.
pub(crate) fn seconds_since_start() -> Option<f64> {
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's name (which may hold spaces), from
    // the third on: the start time is the 22nd.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let ticks: f64 = after_name.split_whitespace().nth(19)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (per_second > 0).then(|| (uptime - ticks / per_second as f64).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_process_is_younger_than_a_day_and_ages() {
        let first = seconds_since_start().expect("Linux has /proc");
        assert!((0.0..86_400.0).contains(&first), "{first}");
        std::thread::sleep(std::time::Duration::from_millis(50));
        let later = seconds_since_start().unwrap();
        assert!(later >= first, "{first} then {later}");
    }
}
