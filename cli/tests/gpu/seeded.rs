//! What the property tests share: a small seedable generator, the replay of
//! one case from its seed (`GDSCAN_PROPERTY_SEED`) and the time budget
//! (`GDSCAN_PROPERTY_SECONDS`, 60 by default, and at least `MIN_CASES`).

use std::time::{Duration, Instant};

/// Fewer cases than this fail a property test, however long they took.
pub const MIN_CASES: usize = 20;

/// SplitMix64: a small, seedable generator, so a failing case is replayed
/// from its seed alone.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// One of `items`.
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize].clone()
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// The one case `GDSCAN_PROPERTY_SEED` asks to replay (hexadecimal, with or
/// without `0x`), if any.
pub fn replay_seed() -> Option<u64> {
    let text = std::env::var("GDSCAN_PROPERTY_SEED").ok()?;
    u64::from_str_radix(text.trim().trim_start_matches("0x"), 16).ok()
}

/// How long a property test keeps drawing cases: `GDSCAN_PROPERTY_SECONDS`
/// (60 by default).
pub fn time_budget() -> Duration {
    Duration::from_secs(
        std::env::var("GDSCAN_PROPERTY_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60),
    )
}

/// Runs `run_case` (which panics on a failure and otherwise describes the
/// case) on the replayed seed alone when `GDSCAN_PROPERTY_SEED` is set;
/// else on fresh seeds, drawn from a base seed of the clock (printed, so
/// runs explore different cases), until the time budget is spent and at
/// least [`MIN_CASES`] ran. `label` names the test in the log.
pub fn run_seeded_cases(label: &str, mut run_case: impl FnMut(u64) -> String) {
    if let Some(seed) = replay_seed() {
        eprintln!("{label}: replayed {}", run_case(seed));
        return;
    }
    let budget = time_budget();
    let base = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    eprintln!("{label}: base seed {base:#x}, {budget:?}");
    let started = Instant::now();
    let mut cases = 0usize;
    let mut seeds = Rng(base);
    while cases < MIN_CASES || started.elapsed() < budget {
        let what = run_case(seeds.next_u64());
        cases += 1;
        if cases <= 5 || cases % 50 == 0 {
            eprintln!("case {cases}: {what}");
        }
    }
    eprintln!(
        "{label}: {cases} random files equal to arrow-rs in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(cases >= MIN_CASES);
}
