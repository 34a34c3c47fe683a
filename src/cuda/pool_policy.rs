//! The policy both caching pools follow, whatever they cache (device
//! buffers, pinned host buffers): which idle buffer a request takes, which
//! idle buffers go when a returned one takes the cache over its cap, and
//! what is counted. Device-free: a pool says how to make a buffer and how
//! large one is; the policy never calls the driver, so its tests need no GPU.

use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use super::pool_stats::{PoolCounters, PoolStats};

/// What the policy needs to know of a cached buffer.
pub(crate) trait Cached {
    /// The buffer's size in bytes (what it counts against the cap).
    fn bytes(&self) -> usize;
}

/// A pool's idle buffers, least recently returned first, with its counters.
#[derive(Debug)]
pub(crate) struct IdleCache<T> {
    max_cached_bytes: usize,
    free: Mutex<Vec<T>>,
    counters: PoolCounters,
}

impl<T: Cached> IdleCache<T> {
    /// An empty cache that keeps idle buffers of at most `max_cached_bytes`
    /// in all.
    pub(crate) fn new(max_cached_bytes: usize) -> Self {
        IdleCache {
            max_cached_bytes,
            free: Mutex::new(Vec::new()),
            counters: PoolCounters::default(),
        }
    }

    fn free(&self) -> MutexGuard<'_, Vec<T>> {
        // A panic while the list was held leaves it whole: keep using it.
        self.free.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the pool has done since it was made.
    pub(crate) fn stats(&self) -> PoolStats {
        self.counters.snapshot()
    }

    /// Starts a new high-water mark of the bytes handed out from what is
    /// handed out now.
    pub(crate) fn reset_peak(&self) {
        self.counters.reset_peak();
    }

    /// Bytes handed out now (not yet returned).
    pub(crate) fn in_use_bytes(&self) -> usize {
        self.counters.in_use() as usize
    }

    /// Idle buffers held now.
    pub(crate) fn cached(&self) -> usize {
        self.free().len()
    }

    /// Bytes of the idle buffers held now.
    pub(crate) fn cached_bytes(&self) -> usize {
        self.free().iter().map(Cached::bytes).sum()
    }

    /// A buffer for a request of `want` bytes (already rounded by the
    /// pool): the smallest idle one of `want..=limit` bytes, else a new one
    /// from `make(want)`, counted and timed. `make` runs outside the lock.
    pub(crate) fn lend<E>(
        &self,
        want: usize,
        limit: usize,
        make: impl FnOnce(usize) -> Result<T, E>,
    ) -> Result<T, E> {
        let reused = {
            let mut free = self.free();
            let best = free
                .iter()
                .enumerate()
                .filter(|(_, b)| b.bytes() >= want && b.bytes() <= limit)
                .min_by_key(|(_, b)| b.bytes())
                .map(|(i, _)| i);
            best.map(|i| free.remove(i))
        };
        let buffer = match reused {
            Some(b) => b,
            None => {
                let started = Instant::now();
                let made = make(want)?;
                self.counters.created(want, started);
                made
            }
        };
        self.counters.handed_out(buffer.bytes());
        Ok(buffer)
    }

    /// Keeps a returned buffer as the most recently used one and lets go of
    /// the least recently returned ones while the idle bytes exceed the cap,
    /// so the cache follows the working set when a scan of another shape
    /// starts (keeping the old buffers and freeing the new ones would make
    /// and free a buffer per row group from then on).
    pub(crate) fn give_back(&self, buffer: T) {
        self.counters.returned(buffer.bytes());
        let evicted = {
            let mut free = self.free();
            keep_newest(&mut free, buffer, self.max_cached_bytes)
        };
        self.counters.evicted(evicted.len());
        // Dropped outside the lock: freeing or unpinning waits for the driver.
        drop(evicted);
    }

    /// Lets go of every idle buffer (those handed out stay their owners').
    pub(crate) fn trim(&self) {
        let idle = std::mem::take(&mut *self.free());
        drop(idle);
    }
}

/// Pushes `returned` as the most recently used of the idle buffers `free`
/// (oldest first) and takes out the least recently returned ones while
/// their bytes exceed `cap`; the caller drops those outside its lock.
fn keep_newest<T: Cached>(free: &mut Vec<T>, returned: T, cap: usize) -> Vec<T> {
    free.push(returned);
    let mut held: usize = free.iter().map(Cached::bytes).sum();
    let mut evicted = Vec::new();
    while held > cap && !free.is_empty() {
        let oldest = free.remove(0);
        held -= oldest.bytes();
        evicted.push(oldest);
    }
    evicted
}

/// `len` (at least 1) rounded up to a multiple of `granule`, saturating.
pub(crate) fn round_up(len: usize, granule: usize) -> usize {
    len.max(1).div_ceil(granule).saturating_mul(granule)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;

    /// A buffer of some bytes that counts its drops (its "frees").
    #[derive(Debug)]
    struct Fake {
        bytes: usize,
        freed: Arc<AtomicUsize>,
    }

    impl Cached for Fake {
        fn bytes(&self) -> usize {
            self.bytes
        }
    }

    impl Drop for Fake {
        fn drop(&mut self) {
            self.freed.fetch_add(1, Ordering::Relaxed);
        }
    }

    impl Cached for usize {
        fn bytes(&self) -> usize {
            *self
        }
    }

    fn fake(bytes: usize, freed: &Arc<AtomicUsize>) -> Fake {
        Fake {
            bytes,
            freed: freed.clone(),
        }
    }

    /// `cache.lend` that must reuse (a call to `make` fails the test).
    fn reuse(cache: &IdleCache<usize>, want: usize, limit: usize) -> Option<usize> {
        cache.lend(want, limit, |_| Err::<usize, ()>(())).ok()
    }

    #[test]
    fn bytes_in_use_count_what_is_lent_until_it_comes_back() {
        let cache: IdleCache<usize> = IdleCache::new(1000);
        assert_eq!(cache.in_use_bytes(), 0);
        let a = cache.lend(100, 200, Ok::<usize, ()>).unwrap();
        let b = cache.lend(300, 600, Ok::<usize, ()>).unwrap();
        assert_eq!(cache.in_use_bytes(), 400);
        cache.give_back(a);
        assert_eq!(cache.in_use_bytes(), 300);
        // Reused from the idle list: counted again while out.
        let again = reuse(&cache, 100, 200).unwrap();
        assert_eq!(cache.in_use_bytes(), 400);
        cache.give_back(again);
        cache.give_back(b);
        assert_eq!(cache.in_use_bytes(), 0);
    }

    #[test]
    fn the_returned_buffer_stays_and_the_oldest_go_while_over_the_cap() {
        let mut free = vec![40usize, 30, 20];
        // 140 bytes: the oldest (40) goes, 100 is within the cap.
        let evicted = keep_newest(&mut free, 50, 100);
        assert_eq!(evicted, vec![40]);
        assert_eq!(free, vec![30, 20, 50]);
        // 110 bytes: the oldest left (30) goes.
        let evicted = keep_newest(&mut free, 10, 100);
        assert_eq!(evicted, vec![30]);
        assert_eq!(free, vec![20, 50, 10]);
        // Within the cap: nothing goes.
        let evicted = keep_newest(&mut free, 5, 100);
        assert!(evicted.is_empty());
        // A buffer larger than the cap alone goes too: nothing is kept.
        let evicted = keep_newest(&mut free, 500, 100);
        assert_eq!(evicted, vec![20, 50, 10, 5, 500]);
        assert!(free.is_empty());
    }

    #[test]
    fn a_request_takes_the_smallest_idle_buffer_within_its_limit() {
        let cache = IdleCache::<usize>::new(1000);
        for b in [64, 16, 40, 24] {
            cache.give_back(b);
        }
        // 20..=48: 24 and 40 fit, 24 is the smaller; 16 is too small, 64 too large.
        assert_eq!(reuse(&cache, 20, 48), Some(24));
        assert_eq!(reuse(&cache, 20, 48), Some(40));
        assert_eq!(reuse(&cache, 20, 48), None);
        assert_eq!(cache.cached(), 2);
        assert_eq!(cache.cached_bytes(), 64 + 16);
        assert_eq!(cache.stats().created, 0);
    }

    #[test]
    fn a_miss_makes_a_buffer_of_the_size_asked_and_counts_it() {
        let cache = IdleCache::<usize>::new(1000);
        cache.give_back(100);
        let made = cache.lend(10, 20, Ok::<usize, ()>).unwrap();
        assert_eq!(made, 10);
        let failed = cache.lend(30, 40, |_| Err::<usize, &str>("no memory"));
        assert_eq!(failed, Err("no memory"));
        let stats = cache.stats();
        assert_eq!((stats.created, stats.created_bytes), (1, 10));
        // The idle 100 was too large for either request.
        assert_eq!(cache.cached(), 1);
    }

    #[test]
    fn the_peak_follows_the_bytes_handed_out_and_restarts_from_now() {
        let cache = IdleCache::<usize>::new(1000);
        let a = cache.lend(30, 30, Ok::<usize, ()>).unwrap();
        let b = cache.lend(50, 50, Ok::<usize, ()>).unwrap();
        cache.give_back(a);
        assert_eq!(cache.stats().peak_in_use_bytes, 80);
        cache.reset_peak();
        assert_eq!(cache.stats().peak_in_use_bytes, 50);
        cache.give_back(b);
        assert_eq!(cache.stats().peak_in_use_bytes, 50);
    }

    #[test]
    fn going_over_the_cap_frees_the_oldest_and_trim_frees_the_rest() {
        let freed = Arc::new(AtomicUsize::new(0));
        let cache = IdleCache::<Fake>::new(100);
        cache.give_back(fake(60, &freed));
        cache.give_back(fake(30, &freed));
        assert_eq!(freed.load(Ordering::Relaxed), 0);
        // 130 bytes: the 60 returned first is freed and counted.
        cache.give_back(fake(40, &freed));
        assert_eq!(freed.load(Ordering::Relaxed), 1);
        assert_eq!(cache.stats().evicted, 1);
        assert_eq!(cache.cached_bytes(), 70);
        cache.trim();
        assert_eq!(freed.load(Ordering::Relaxed), 3);
        assert_eq!(cache.cached(), 0);
        // Trimming is not evicting: the count stays.
        assert_eq!(cache.stats().evicted, 1);
    }

    #[test]
    fn sizes_round_up_to_the_granule_and_saturate() {
        assert_eq!(round_up(0, 8), 8);
        assert_eq!(round_up(1, 8), 8);
        assert_eq!(round_up(8, 8), 8);
        assert_eq!(round_up(9, 8), 16);
        assert_eq!(round_up(usize::MAX, 2 << 20), usize::MAX);
    }
}
