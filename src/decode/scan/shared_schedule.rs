//! The turns of the decodes on a device's shared pipeline ([`Schedule`]):
//! which decode's planned group goes on the GPU next, and how many groups
//! a decode may hold before its reader takes them. No I/O and no GPU:
//! `shared_pipeline` asks it and does what it says.
//!
//! The rules: decodes take turns (round robin from the one after the last
//! launched), so a decode with a fast planner does not starve the others;
//! a decode holds at most [`Schedule::limit`] groups (queued on the GPU or
//! finished and waiting for its reader), so a reader that stops reading
//! stops only its own decode, and the device memory held for readers stays
//! bounded by the decodes at once, not by the table's size.

/// Groups a decode may hold while others launch beside it: one on the GPU,
/// one being read.
pub(crate) const HELD_BESIDE_OTHERS: usize = 2;

/// A decode's counts.
#[derive(Debug, Clone, Default)]
struct Turn {
    /// Groups launched for it so far.
    launched: usize,
    /// Groups its reader has taken (or that kept no row) so far.
    taken: usize,
    /// Its planner has handed over every group.
    planned_all: bool,
    /// Failed, or its reader went away: nothing more is launched.
    closed: bool,
}

/// The decodes on one pipeline and their turns.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    turns: Vec<Option<Turn>>,
    /// The decode after the last one launched.
    next: usize,
    /// The pipeline's depth: groups on the GPU at once, for all decodes.
    depth: usize,
}

impl Schedule {
    /// No decode yet, on a pipeline of `depth` groups.
    pub(crate) fn new(depth: usize) -> Schedule {
        Schedule {
            turns: Vec::new(),
            next: 0,
            depth: depth.max(1),
        }
    }

    /// Adds a decode; its id (a freed one is reused).
    pub(crate) fn add(&mut self) -> usize {
        match self.turns.iter().position(Option::is_none) {
            Some(id) => {
                self.turns[id] = Some(Turn::default());
                id
            }
            None => {
                self.turns.push(Some(Turn::default()));
                self.turns.len() - 1
            }
        }
    }

    /// Forgets decode `id` (it ended).
    pub(crate) fn remove(&mut self, id: usize) {
        if let Some(turn) = self.turns.get_mut(id) {
            *turn = None;
        }
    }

    /// Groups a decode may hold: the only one still launching, its depth
    /// and one more being read (what a pipeline of its own holds); with
    /// others launching beside it, two (one on the GPU, one being read).
    pub(crate) fn limit(&self) -> usize {
        let launching = |t: &&Turn| !t.closed && !t.planned_all;
        let open = self.turns.iter().flatten().filter(launching).count();
        if open <= 1 {
            self.depth + 1
        } else {
            HELD_BESIDE_OTHERS
        }
    }

    /// The decodes that may launch a group now, in turn order: open, not
    /// done planning, holding fewer than [`Schedule::limit`] groups.
    pub(crate) fn candidates(&self) -> Vec<usize> {
        let n = self.turns.len();
        let limit = self.limit();
        (0..n)
            .map(|k| (self.next + k) % n)
            .filter(|&id| {
                self.turns[id].as_ref().is_some_and(|t| {
                    !t.closed && !t.planned_all && t.launched - t.taken.min(t.launched) < limit
                })
            })
            .collect()
    }

    /// Decode `id` launched a group: the turn passes to the next.
    pub(crate) fn launched(&mut self, id: usize) {
        if let Some(t) = self.turns.get_mut(id).and_then(Option::as_mut) {
            t.launched += 1;
            self.next = (id + 1) % self.turns.len();
        }
    }

    /// Decode `id`'s reader has taken `taken` groups in all.
    pub(crate) fn set_taken(&mut self, id: usize, taken: usize) {
        if let Some(t) = self.turns.get_mut(id).and_then(Option::as_mut) {
            t.taken = taken;
        }
    }

    /// Decode `id`'s planner has handed over every group.
    pub(crate) fn planned_all(&mut self, id: usize) {
        if let Some(t) = self.turns.get_mut(id).and_then(Option::as_mut) {
            t.planned_all = true;
        }
    }

    /// Decode `id` failed or its reader went away.
    pub(crate) fn close(&mut self, id: usize) {
        if let Some(t) = self.turns.get_mut(id).and_then(Option::as_mut) {
            t.closed = true;
        }
    }

    /// Whether decode `id` is closed.
    pub(crate) fn is_closed(&self, id: usize) -> bool {
        self.turns
            .get(id)
            .and_then(Option::as_ref)
            .is_some_and(|t| t.closed)
    }

    /// Whether decode `id` launches no more groups (it planned them all or
    /// was closed): it ends once its queued groups finish.
    pub(crate) fn done_launching(&self, id: usize) -> bool {
        self.turns
            .get(id)
            .and_then(Option::as_ref)
            .is_some_and(|t| t.planned_all || t.closed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Schedule {
        /// The decodes present.
        fn len(&self) -> usize {
            self.turns.iter().flatten().count()
        }
    }

    /// Launches for every candidate in turn, `rounds` times; the order.
    fn launch_rounds(s: &mut Schedule, rounds: usize) -> Vec<usize> {
        let mut order = Vec::new();
        for _ in 0..rounds {
            if let Some(&id) = s.candidates().first() {
                s.launched(id);
                order.push(id);
            }
        }
        order
    }

    #[test]
    fn decodes_take_turns() {
        let mut s = Schedule::new(4);
        let (a, b, c) = (s.add(), s.add(), s.add());
        // Each may hold two groups: three rounds of turns, then none.
        let order = launch_rounds(&mut s, 8);
        assert_eq!(order, vec![a, b, c, a, b, c]);
        assert!(s.candidates().is_empty());
        // b's reader takes one: only b may launch again.
        s.set_taken(b, 1);
        assert_eq!(s.candidates(), vec![b]);
    }

    #[test]
    fn a_decode_alone_holds_the_depth_and_one_more() {
        let mut s = Schedule::new(4);
        let a = s.add();
        assert_eq!(s.limit(), 5);
        assert_eq!(launch_rounds(&mut s, 9).len(), 5);
        // Another decode comes: a holds more than two, so only the new one
        // may launch until a's reader catches up.
        let b = s.add();
        assert_eq!(s.limit(), 2);
        assert_eq!(s.candidates(), vec![b]);
        s.set_taken(a, 4);
        let order = launch_rounds(&mut s, 4);
        assert_eq!(order, vec![a, b, b]);
    }

    #[test]
    fn a_reader_that_stops_stops_only_its_decode() {
        let mut s = Schedule::new(2);
        let (slow, fast) = (s.add(), s.add());
        let mut launched = [0usize; 2];
        for round in 0..100 {
            // The fast reader takes all it was given; the slow one nothing.
            s.set_taken(fast, launched[fast]);
            for id in s.candidates() {
                s.launched(id);
                launched[id] += 1;
            }
            assert!(launched[slow] <= 2, "round {round}");
        }
        assert_eq!(launched[slow], 2);
        assert!(launched[fast] >= 99);
    }

    #[test]
    fn closed_and_fully_planned_decodes_launch_nothing_and_ids_are_reused() {
        let mut s = Schedule::new(4);
        let (a, b, c) = (s.add(), s.add(), s.add());
        s.close(a);
        s.planned_all(b);
        assert_eq!(s.candidates(), vec![c]);
        assert!(s.is_closed(a) && !s.is_closed(b));
        assert!(s.done_launching(a) && s.done_launching(b) && !s.done_launching(c));
        // With a closed and b done, c is the one still launching.
        assert_eq!(s.limit(), 5);
        s.remove(a);
        s.remove(b);
        assert_eq!(s.len(), 1);
        assert_eq!(s.limit(), 5);
        assert_eq!(s.add(), a);
        assert_eq!(s.len(), 2);
    }
}
