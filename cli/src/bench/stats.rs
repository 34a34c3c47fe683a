//! Small timing helpers: repeated runs after a warm-up, their best and
//! median, and a distribution-free interval for paired A/B ratios.

use serde::Serialize;

use gdscan::report::gbps;

/// Timings of one case over several repeats.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Timing {
    /// Bytes moved per run.
    pub bytes: u64,
    /// Each run's seconds, in run order.
    pub seconds: Vec<f64>,
}

impl Timing {
    /// The fastest run.
    pub(crate) fn best(&self) -> f64 {
        self.seconds.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// The median run (upper median for even counts).
    pub(crate) fn median(&self) -> f64 {
        let mut s = self.seconds.clone();
        s.sort_by(|a, b| a.total_cmp(b));
        s.get(s.len() / 2).copied().unwrap_or(f64::NAN)
    }

    /// GB/s (1e9 bytes per second) of the best run.
    pub(crate) fn best_gbps(&self) -> f64 {
        gbps(self.bytes, self.best())
    }

    /// GB/s of the median run.
    pub(crate) fn median_gbps(&self) -> f64 {
        gbps(self.bytes, self.median())
    }
}

/// Runs `f` once as a warm-up, then `iterations` times (at least once),
/// and returns each timed run's seconds in run order.
pub(crate) fn time_runs<F: FnMut() -> crate::error::Result<()>>(
    iterations: usize,
    mut f: F,
) -> crate::error::Result<Vec<f64>> {
    f()?;
    let mut out = Vec::new();
    for _ in 0..iterations.max(1) {
        let start = std::time::Instant::now();
        f()?;
        out.push(start.elapsed().as_secs_f64());
    }
    Ok(out)
}

/// CPU seconds (user plus system) the whole process has used so far, from
/// `getrusage(RUSAGE_SELF)`: every thread, the engine's workers included.
pub(crate) fn process_cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid out pointer for one rusage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return f64::NAN;
    }
    // SAFETY: getrusage filled it.
    let u = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_cpu_seconds_grow_with_work_on_another_thread() {
        let before = process_cpu_seconds();
        std::thread::spawn(|| {
            let start = std::time::Instant::now();
            let mut x = 0u64;
            while start.elapsed().as_millis() < 200 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            x
        })
        .join()
        .unwrap();
        let spent = process_cpu_seconds() - before;
        assert!(spent >= 0.1, "a 200 ms busy thread counted {spent} CPU s");
    }

    #[test]
    fn best_and_median() {
        let t = Timing {
            bytes: 2_000_000_000,
            seconds: vec![2.0, 1.0, 4.0],
        };
        assert_eq!(t.best(), 1.0);
        assert_eq!(t.median(), 2.0);
        assert_eq!(t.best_gbps(), 2.0);
        assert_eq!(t.median_gbps(), 1.0);
    }
}
