//! Paired A/B timings (`bench tpch --engine datafusion`): the median of
//! the paired ratios and a distribution-free interval for it.

use serde::Serialize;

/// The median of paired ratios (`baseline[i] / ours[i]`, one pair per
/// iteration, both sides run back to back) with a distribution-free
/// confidence interval for it: the order statistics `[r(k), r(n+1-k)]`,
/// whose coverage is `1 - 2 P(Binomial(n, 1/2) < k)` whatever the
/// distribution (the sign-test interval). `k` is the largest with coverage
/// of at least 95 %; under 6 pairs no interval reaches that, and the
/// interval is the whole range with its smaller coverage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct PairedRatio {
    /// Median of the paired ratios.
    pub median: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
    /// The interval's coverage (0 to 1).
    pub coverage: f64,
}

/// What a [`PairedRatio`] shows, at its coverage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    /// The whole interval (of at least 95 % coverage) is above 1: ours is
    /// faster.
    Faster,
    /// The interval holds 1: no difference the runs can show.
    Even,
    /// The whole interval is below 1: ours is slower.
    Slower,
}

impl Verdict {
    /// The verdict as the reports print it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Even => "even",
            Verdict::Slower => "slower",
        }
    }
}

impl PairedRatio {
    /// Pairs `baseline` and `ours` by index (`None` when they differ in
    /// length, are empty, or hold a time that is not positive).
    pub(crate) fn new(baseline: &[f64], ours: &[f64]) -> Option<PairedRatio> {
        if baseline.len() != ours.len() || ours.is_empty() {
            return None;
        }
        let mut r = baseline
            .iter()
            .zip(ours)
            .map(|(&b, &o)| (b > 0.0 && o > 0.0).then(|| b / o))
            .collect::<Option<Vec<f64>>>()?;
        r.sort_by(|a, b| a.total_cmp(b));
        let n = r.len();
        let median = if n % 2 == 1 {
            r[n / 2]
        } else {
            (r[n / 2 - 1] + r[n / 2]) / 2.0
        };
        // P(Binomial(n, 1/2) <= j) for j = 0, 1, ...
        let mut below = Vec::with_capacity(n / 2 + 1);
        let (mut choose, mut sum) = (1.0f64, 0.0f64);
        let total = 2f64.powi(n as i32);
        for j in 0..=n / 2 {
            if j > 0 {
                choose = choose * (n + 1 - j) as f64 / j as f64;
            }
            sum += choose;
            below.push(sum / total);
        }
        // The interval [r(k), r(n+1-k)] misses the median with
        // probability 2 P(Binomial(n, 1/2) <= k - 1).
        let coverage_of = |k: usize| 1.0 - 2.0 * below[k - 1];
        let mut k = 1;
        while k < n / 2 && coverage_of(k + 1) >= 0.95 {
            k += 1;
        }
        Some(PairedRatio {
            median,
            low: r[k - 1],
            high: r[n - k],
            coverage: coverage_of(k),
        })
    }

    /// Faster, even or slower, from where the interval lies against 1; even
    /// whenever the interval covers less than 95 % (under 6 pairs).
    pub(crate) fn verdict(&self) -> Verdict {
        if self.coverage < 0.95 {
            Verdict::Even
        } else if self.low > 1.0 {
            Verdict::Faster
        } else if self.high < 1.0 {
            Verdict::Slower
        } else {
            Verdict::Even
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_ratio_interval_from_order_statistics() {
        // Ten pairs: the sign-test interval is [r(2), r(9)], coverage
        // 1 - 2 * 11/1024.
        let ours = [1.0; 10];
        let baseline = [1.5, 0.9, 1.1, 1.2, 0.95, 1.3, 1.05, 1.15, 1.25, 1.02];
        let p = PairedRatio::new(&baseline, &ours).unwrap();
        assert_eq!(p.low, 0.95);
        assert_eq!(p.high, 1.3);
        assert!((p.median - 1.125).abs() < 1e-12);
        assert!((p.coverage - (1.0 - 22.0 / 1024.0)).abs() < 1e-12);
        assert_eq!(p.verdict(), Verdict::Even);
    }

    #[test]
    fn paired_ratio_verdicts() {
        let ours = [2.0; 8];
        let faster = [2.2, 2.4, 2.3, 2.1, 2.6, 2.5, 2.2, 2.3];
        let slower = [1.8, 1.9, 1.7, 1.6, 1.9, 1.85, 1.75, 1.95];
        assert_eq!(
            PairedRatio::new(&faster, &ours).unwrap().verdict(),
            Verdict::Faster
        );
        assert_eq!(
            PairedRatio::new(&slower, &ours).unwrap().verdict(),
            Verdict::Slower
        );
        // Eight pairs: [r(2), r(7)] would cover only 1 - 2 * 9/256 < 95 %,
        // so the interval is the whole range, coverage 1 - 2/256.
        let p = PairedRatio::new(&faster, &ours).unwrap();
        assert!((p.coverage - (1.0 - 2.0 / 256.0)).abs() < 1e-12);
        assert_eq!(p.low, 1.05);
    }

    #[test]
    fn paired_ratio_small_or_bad_input() {
        // Three pairs: the whole range, coverage 1 - 2/8.
        let p = PairedRatio::new(&[1.0, 2.0, 3.0], &[1.0, 1.0, 1.0]).unwrap();
        assert_eq!((p.low, p.high), (1.0, 3.0));
        assert!((p.coverage - 0.75).abs() < 1e-12);
        // Too few pairs to show a difference, however large.
        let q = PairedRatio::new(&[3.0, 3.0, 3.0], &[1.0, 1.0, 1.0]).unwrap();
        assert_eq!(q.verdict(), Verdict::Even);
        assert!(PairedRatio::new(&[1.0], &[1.0, 2.0]).is_none());
        assert!(PairedRatio::new(&[], &[]).is_none());
        assert!(PairedRatio::new(&[1.0], &[0.0]).is_none());
    }
}
