//! Planning ahead of the GPU: a thread takes the fetch's row groups in
//! order as they land, gathers them into groups of about `group_bytes`
//! stored bytes, plans each group's row groups on the rayon pool at once
//! ([`super::s1_plan_row_group::plan_host`]: header walk, page plan, compressed-page
//! check) and hands the planned group to the decoder, one group ahead.
//!
//! Planning is the host's largest share of a decode (the Snappy check
//! above all). Done on the decoder's own thread as a group was launched,
//! it hid the GPU's work on the groups before but the GPU waited for it in
//! turn; here the next group is planned while the decoder waits on the
//! GPU. One group at a time, with every worker thread on it: planning
//! every row group as it landed, each on its own task, ran many at once
//! and finished each later (0.55 s against 0.37 s for all of SF 10
//! lineitem's columns on 16 cores). The fetch's byte budget bounds how far
//! ahead the fetch reads.

use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use super::compressed_check::Checks;
use super::decode_error::DecodeError;
use super::input::DecodeInput;
use super::s0_land::Landed;
use super::s1_plan_row_group::{plan_host, HostPlan, PageSource};
use crate::parquet::fetch::{FetchedRowGroup, RowGroupStream};
use crate::store::LocalSource;

/// A fetched row group and its host plan.
pub(crate) struct PlannedRowGroup {
    pub(crate) fetched: FetchedRowGroup<Landed>,
    pub(crate) plan: HostPlan,
}

/// A group of planned row groups, in plan order.
pub(crate) struct PlannedGroup {
    pub(crate) row_groups: Vec<PlannedRowGroup>,
    /// The fetched bytes of its row groups (what the group's target counts).
    pub(crate) bytes: u64,
    /// Seconds the planning thread waited for the fetch to gather it.
    pub(crate) fetch_wait: f64,
    /// Seconds planning it took (wall, every worker thread on it).
    pub(crate) plan: f64,
    /// When the planning thread began gathering it, when the last of its
    /// row groups landed, and when its planning ended (for the timeline).
    pub(crate) gather_started: Instant,
    pub(crate) gathered: Instant,
    pub(crate) planned: Instant,
}

/// Called by the planning thread after each group it hands over (and when
/// it ends): how a pipeline that polls several planners learns of one.
pub(crate) type Notify = Arc<dyn Fn() + Send + Sync>;

/// A planner asked without waiting ([`PlanAhead::poll`]).
pub(crate) enum Polled {
    /// The next group, or the planner's failure.
    Ready(Result<PlannedGroup, DecodeError>),
    /// Still planning it.
    NotYet,
    /// Every group was handed over.
    End,
}

/// The fetch's row groups, planned, a group at a time.
pub(crate) struct PlanAhead {
    /// Declared first: dropped (failing the thread's next send) before the
    /// thread is joined.
    groups: Option<Receiver<Result<PlannedGroup, DecodeError>>>,
    thread: Option<JoinHandle<()>>,
}

impl PlanAhead {
    /// Starts planning the row groups `fetch` lands, for `inputs`, in
    /// groups of at least `group_bytes` stored bytes (the last may be
    /// smaller; with `ramp`, the first three and the last few are smaller
    /// too: see [`group_target`]). `notify`, when given, is called after
    /// each group handed over and when the thread ends.
    pub(crate) fn start(
        fetch: RowGroupStream<Landed>,
        inputs: Arc<Vec<DecodeInput>>,
        check: Checks,
        group_bytes: u64,
        ramp: Ramp,
        notify: Option<Notify>,
    ) -> PlanAhead {
        // One planned group waits while the next is planned.
        let (tx, groups) = sync_channel(1);
        let total: u64 = inputs
            .iter()
            .flat_map(|i| i.plan.row_groups.iter().map(|r| r.bytes))
            .sum();
        let thread = std::thread::Builder::new()
            .name("gdscan-plan".into())
            .spawn(move || {
                // Said when the thread ends, however it ends.
                let _ended = notify.clone().map(NotifyOnDrop);
                let mut fetch = fetch;
                let mut gathered = 0u64;
                for index in 0.. {
                    let remaining = total.saturating_sub(gathered);
                    let target = group_target(group_bytes, index, ramp, remaining);
                    let group = next_group(&mut fetch, &inputs, check, target);
                    if let Some(Ok(g)) = &group {
                        gathered += g.bytes;
                    }
                    let end = !matches!(group, Some(Ok(_)));
                    // A closed receiver: the decoder is gone.
                    if let Some(group) = group {
                        if tx.send(group).is_err() {
                            return;
                        }
                        if let Some(notify) = &notify {
                            notify();
                        }
                    }
                    if end {
                        return;
                    }
                }
            })
            .ok();
        PlanAhead {
            groups: Some(groups),
            thread,
        }
    }
}

/// Calls its notification when dropped.
struct NotifyOnDrop(Notify);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        (self.0)();
    }
}

impl PlanAhead {
    /// The next group if it is planned, without waiting.
    pub(crate) fn poll(&mut self) -> Polled {
        let Some(groups) = self.groups.as_ref() else {
            return Polled::End;
        };
        match groups.try_recv() {
            Ok(group) => Polled::Ready(group),
            Err(TryRecvError::Empty) => Polled::NotYet,
            // The thread ended: `next` says how.
            Err(TryRecvError::Disconnected) => match self.next() {
                Some(group) => Polled::Ready(group),
                None => Polled::End,
            },
        }
    }
}

/// Which groups are smaller than `group_bytes` ([`group_target`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Ramp {
    /// The first three: an eighth, a quarter and a half of it.
    pub(crate) up: bool,
    /// The last few: half of what remains once less than two groups do
    /// (at least an eighth of a group).
    pub(crate) down: bool,
}

/// The stored bytes the `index`-th group gathers, with `remaining` bytes
/// of the scan not gathered yet: `group_bytes`, or smaller where `ramp`
/// says. A group's work on the GPU is a chain (copy, check, nvCOMP,
/// kernels) that lasts about 10 ms for 128 MiB on the H200 when other
/// groups run beside it: small first groups give the GPU (and the
/// consumer) its first batch after a small part of the fetch, and small
/// last ones end the scan sooner after the fetch's last byte.
pub(crate) fn group_target(group_bytes: u64, index: usize, ramp: Ramp, remaining: u64) -> u64 {
    let floor = (group_bytes / 8).max(1);
    let mut target = group_bytes;
    if ramp.up {
        target >>= 3usize.saturating_sub(index) as u32;
    }
    if ramp.down && remaining < group_bytes.saturating_mul(2) {
        target = target.min(remaining / 2);
    }
    target.max(floor)
}

/// Gathers and plans the next group: None when the fetch has ended.
fn next_group(
    fetch: &mut RowGroupStream<Landed>,
    inputs: &[DecodeInput],
    check: Checks,
    group_bytes: u64,
) -> Option<Result<PlannedGroup, DecodeError>> {
    use rayon::prelude::*;
    let mut fetched = Vec::new();
    let mut bytes = 0u64;
    let mut fetch_wait = 0.0;
    let gather_started = Instant::now();
    while bytes < group_bytes {
        let waited = Instant::now();
        let Some(next) = fetch.next() else { break };
        fetch_wait += waited.elapsed().as_secs_f64();
        match next {
            Ok(f) => {
                bytes += f.buffer.len() as u64;
                fetched.push(f);
            }
            Err(e) => return Some(Err(DecodeError::from(e))),
        }
    }
    if fetched.is_empty() {
        return None;
    }
    let started = Instant::now();
    let gathered = started;
    let planned: Result<Vec<PlannedRowGroup>, DecodeError> = fetched
        .into_par_iter()
        .map(|f| plan_one(inputs, f, check))
        .collect();
    Some(planned.map(|row_groups| PlannedGroup {
        row_groups,
        bytes,
        fetch_wait,
        plan: started.elapsed().as_secs_f64(),
        gather_started,
        gathered,
        planned: Instant::now(),
    }))
}

/// Plans one row group; a panic in planning becomes a typed error.
fn plan_one(
    inputs: &[DecodeInput],
    fetched: FetchedRowGroup<Landed>,
    check: Checks,
) -> Result<PlannedRowGroup, DecodeError> {
    let input = &inputs[fetched.file];
    let file = input.source.location();
    let planned = crate::border::catch(|| {
        let source = match &fetched.buffer {
            Landed::Pinned(host) => PageSource::Host(host),
            Landed::Device(buffer) => PageSource::File {
                // Only local files land on the device (`landing::choose`).
                handle: LocalSource::of(input.source.as_ref()).map(|l| l.handle().as_ref()),
                len: buffer.len(),
            },
        };
        plan_host(
            file,
            &input.metadata,
            &input.plan,
            fetched.index,
            source,
            &fetched.chunks,
            check,
        )
    })
    .map_err(|panic| DecodeError::PlanPanicked {
        file: file.to_string(),
        row_group: fetched.index,
        message: panic.message().to_string(),
    })??;
    Ok(PlannedRowGroup {
        fetched,
        plan: planned,
    })
}

impl Iterator for PlanAhead {
    type Item = Result<PlannedGroup, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Ok(group) = self.groups.as_ref()?.recv() {
            return Some(group);
        }
        // The thread ended: the fetch is done, or the thread could not
        // start or panicked (never a silent end of the scan for those).
        self.groups = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(())) => None,
            Some(Err(panic)) => Some(Err(DecodeError::PlannerEnded {
                why: crate::border::Panicked::from_payload(panic)
                    .message()
                    .to_string(),
            })),
            None => Some(Err(DecodeError::PlannerEnded {
                why: "its thread could not start".into(),
            })),
        }
    }
}

impl Drop for PlanAhead {
    fn drop(&mut self) {
        // Closing the channel fails the thread's next send; the planned
        // group in it goes back to the fetch's budget, so a fetch waiting
        // for room moves on and the thread sees the closed channel.
        self.groups.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{group_target, Ramp};

    #[test]
    fn the_first_groups_ramp_up_to_the_group_size() {
        let g = 128 << 20;
        let up = Ramp {
            up: true,
            down: false,
        };
        let ramped: Vec<u64> = (0..6).map(|i| group_target(g, i, up, 10 * g)).collect();
        assert_eq!(ramped, [g / 8, g / 4, g / 2, g, g, g]);
        assert!((0..6).all(|i| group_target(g, i, Ramp::default(), 10 * g) == g));
        assert_eq!(group_target(1, 0, up, 10), 1, "never a group of no bytes");
    }

    #[test]
    fn the_last_groups_ramp_down_to_an_eighth() {
        let g = 128 << 20;
        let down = Ramp {
            up: false,
            down: true,
        };
        // Far from the end: whole groups.
        assert_eq!(group_target(g, 5, down, 2 * g), g);
        // Under two groups left: half of what remains, down to an eighth.
        let mut remaining = 2 * g - 1;
        let mut tail = Vec::new();
        while remaining > 0 {
            let t = group_target(g, 9, down, remaining);
            tail.push(t);
            remaining = remaining.saturating_sub(t);
        }
        assert_eq!(tail[0], (2 * g - 1) / 2);
        assert!(tail.windows(2).all(|w| w[1] <= w[0]), "{tail:?}");
        assert!(tail.iter().all(|&t| t >= g / 8), "{tail:?}");
        assert_eq!(tail.len(), 5, "{tail:?}");
        // Both: the first group is an eighth even near the end.
        let both = Ramp {
            up: true,
            down: true,
        };
        assert_eq!(group_target(g, 0, both, g), g / 8);
        assert_eq!(group_target(g, 3, both, g), g / 2);
    }
}
