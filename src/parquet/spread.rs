//! Spreading a scan over several GPUs: every kept row group goes to one
//! share (one device), balancing the bytes each share reads.
//!
//! Pure, like the planner: it takes plans and returns per-share plans, and
//! is tested without files or a GPU. Row groups are taken in plan order
//! (files, then each file's row groups) and each goes to the share with the
//! fewest bytes so far (the lowest-numbered on a tie). That is list
//! scheduling: when a row group lands on the share that ends up fullest,
//! that share was the emptiest, so the fullest and the emptiest differ by
//! at most one row group's bytes. Consecutive row groups of a file land on
//! different shares, so every device reads from every part of a table at
//! once and the shares' row groups come out interleaved in plan order
//! ([`Spread::placements`] says which share holds each).

use std::sync::Arc;

use super::plan::ScanPlan;

/// Where one kept row group goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The file (index into the plans spread).
    pub file: usize,
    /// Its position in that plan's [`ScanPlan::row_groups`].
    pub position: usize,
    /// The row group's index in the file.
    pub row_group: usize,
    /// Bytes its requests read.
    pub bytes: u64,
    /// The share (device slot) that reads and decodes it.
    pub share: usize,
}

/// A scan's row groups spread over shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spread {
    /// Every kept row group in plan order, with its share.
    pub placements: Vec<Placement>,
    /// Bytes each share reads.
    pub bytes: Vec<u64>,
}

/// Spreads the row groups of `plans` over `shares` shares (at least one),
/// balancing bytes read.
pub fn spread(plans: &[Arc<ScanPlan>], shares: usize) -> Spread {
    let shares = shares.max(1);
    let mut bytes = vec![0u64; shares];
    let mut placements = Vec::new();
    for (file, plan) in plans.iter().enumerate() {
        for (position, rg) in plan.row_groups.iter().enumerate() {
            let share = (0..shares)
                .min_by_key(|&s| (bytes[s], s))
                .expect("at least one share");
            bytes[share] += rg.bytes;
            placements.push(Placement {
                file,
                position,
                row_group: rg.index,
                bytes: rg.bytes,
                share,
            });
        }
    }
    Spread { placements, bytes }
}

impl Spread {
    /// Shares spread over.
    pub fn shares(&self) -> usize {
        self.bytes.len()
    }

    /// The bytes of the largest row group (the bound on any two shares'
    /// difference).
    pub fn largest_row_group(&self) -> u64 {
        self.placements.iter().map(|p| p.bytes).max().unwrap_or(0)
    }

    /// Row groups each share holds.
    pub fn row_groups(&self) -> Vec<usize> {
        let mut n = vec![0; self.shares()];
        for p in &self.placements {
            n[p.share] += 1;
        }
        n
    }

    /// `plans` cut down to what `share` holds: the same chunks and requests
    /// (row groups refer to them by index, so the fetch and the decoder read
    /// them unchanged) with only the share's row groups, in plan order. The
    /// totals of bytes, requests, chunks and row groups kept are the
    /// share's; the pruning counts stay the whole plan's.
    pub fn plans_of(&self, plans: &[Arc<ScanPlan>], share: usize) -> Vec<Arc<ScanPlan>> {
        plans
            .iter()
            .enumerate()
            .map(|(file, plan)| {
                let keep: Vec<usize> = self
                    .placements
                    .iter()
                    .filter(|p| p.file == file && p.share == share)
                    .map(|p| p.position)
                    .collect();
                if keep.len() == plan.row_groups.len() {
                    return plan.clone();
                }
                let mut cut = ScanPlan::clone(plan);
                cut.row_groups = keep.iter().map(|&i| plan.row_groups[i].clone()).collect();
                let t = &mut cut.totals;
                t.row_groups_kept = cut.row_groups.len();
                t.bytes_read = cut.row_groups.iter().map(|r| r.bytes).sum();
                t.requests = cut.row_groups.iter().map(|r| r.requests.len()).sum();
                t.chunks = cut.row_groups.iter().map(|r| r.chunks.len()).sum();
                t.bytes_needed = cut
                    .row_groups
                    .iter()
                    .flat_map(|r| r.chunks.iter())
                    .map(|&c| plan.chunks[c].needed())
                    .sum();
                Arc::new(cut)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parquet::plan::{PlanTotals, RowGroupPlan};

    fn plan_of(sizes: &[u64]) -> Arc<ScanPlan> {
        Arc::new(ScanPlan {
            leaves: vec![],
            chunks: vec![],
            row_groups: sizes
                .iter()
                .enumerate()
                .map(|(i, &bytes)| RowGroupPlan {
                    index: i * 2, // pruned row groups in between
                    num_rows: 10,
                    chunks: vec![],
                    requests: vec![],
                    bytes,
                    rows: None,
                })
                .collect(),
            requests: vec![],
            totals: PlanTotals {
                bytes_read: sizes.iter().sum(),
                row_groups_kept: sizes.len(),
                ..PlanTotals::default()
            },
        })
    }

    /// A small deterministic generator (xorshift), so the test needs no crate.
    fn sizes(seed: u64, n: usize, max: u64) -> Vec<u64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % max
            })
            .collect()
    }

    fn check(plans: &[Arc<ScanPlan>], shares: usize) {
        let s = spread(plans, shares);
        assert_eq!(s.shares(), shares.max(1));
        // Every kept row group exactly once, in plan order.
        let expected: Vec<(usize, usize)> = plans
            .iter()
            .enumerate()
            .flat_map(|(f, p)| p.row_groups.iter().map(move |rg| (f, rg.index)))
            .collect();
        let got: Vec<(usize, usize)> = s.placements.iter().map(|p| (p.file, p.row_group)).collect();
        assert_eq!(got, expected);
        // Each share's bytes add up, and to the whole.
        let total: u64 = plans.iter().map(|p| p.totals.bytes_read).sum();
        assert_eq!(s.bytes.iter().sum::<u64>(), total);
        // Balanced within one row group's bytes.
        let (max, min) = (
            *s.bytes.iter().max().unwrap(),
            *s.bytes.iter().min().unwrap(),
        );
        assert!(
            max - min <= s.largest_row_group(),
            "shares {:?} differ by more than the largest row group {}",
            s.bytes,
            s.largest_row_group()
        );
        // The cut plans hold exactly each share's row groups, and their
        // totals add up to the share's bytes.
        let mut seen = Vec::new();
        for share in 0..s.shares() {
            let cut = s.plans_of(plans, share);
            assert_eq!(cut.len(), plans.len());
            let bytes: u64 = cut.iter().map(|p| p.totals.bytes_read).sum();
            assert_eq!(bytes, s.bytes[share]);
            let rgs: usize = cut.iter().map(|p| p.row_groups.len()).sum();
            assert_eq!(rgs, s.row_groups()[share]);
            for (f, p) in cut.iter().enumerate() {
                assert!(p.row_groups.windows(2).all(|w| w[0].index < w[1].index));
                seen.extend(p.row_groups.iter().map(|rg| (f, rg.index)));
            }
        }
        seen.sort_unstable();
        let mut all = expected;
        all.sort_unstable();
        assert_eq!(seen, all);
    }

    #[test]
    fn bytes_per_share_are_within_one_row_group_of_even() {
        for seed in 1..40u64 {
            let files: Vec<Arc<ScanPlan>> = (0..(seed % 5 + 1))
                .map(|f| {
                    plan_of(&sizes(
                        seed * 31 + f,
                        (seed as usize * 7) % 50 + 1,
                        200 << 20,
                    ))
                })
                .collect();
            for shares in 1..=8 {
                check(&files, shares);
            }
        }
    }

    #[test]
    fn skewed_sizes_and_more_shares_than_row_groups() {
        check(&[plan_of(&[1 << 30, 1, 1, 1, 1, 1])], 2);
        check(&[plan_of(&[5, 5, 5])], 8);
        check(&[plan_of(&[]), plan_of(&[7])], 2);
        check(&[plan_of(&[0, 0, 0, 0])], 2);
        let s = spread(&[plan_of(&[10, 10, 10, 10])], 2);
        assert_eq!(s.bytes, vec![20, 20]);
        assert_eq!(
            s.placements.iter().map(|p| p.share).collect::<Vec<_>>(),
            vec![0, 1, 0, 1]
        );
    }

    #[test]
    fn one_share_keeps_the_plans_as_they_are() {
        let plans = vec![plan_of(&[3, 4]), plan_of(&[5])];
        let s = spread(&plans, 1);
        let cut = s.plans_of(&plans, 0);
        assert!(Arc::ptr_eq(&cut[0], &plans[0]) && Arc::ptr_eq(&cut[1], &plans[1]));
    }
}
