//! The timer queue: every pending timer of one executor.
//!
//! (heap variant, kept for measurement; see the final module doc)

use std::task::Waker;
use std::time::{Duration, Instant};

use slab::Slab;

use crate::sync::{lock, AtomicU64, Mutex, Ordering};

/// Names one timer in a [`TimerQueue`].
///
/// The generation makes a key unique for the queue's lifetime, so a key whose
/// timer fired or was cancelled never reaches a timer that reuses its slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TimerKey {
    index: usize,
    generation: u64,
}

/// The value of the published earliest deadline when no timer is pending.
const NO_DEADLINE: u64 = u64::MAX;

/// How many wakers `fire_expired` collects under the lock before it releases
/// the lock to wake them: bounds both the lock hold time and the buffer.
const FIRE_BATCH: usize = 64;

/// All pending timers of one executor.
pub(crate) struct TimerQueue {
    /// Deadlines are stored as nanoseconds since this instant.
    epoch: Instant,
    /// The earliest pending deadline in nanoseconds since `epoch`, or
    /// [`NO_DEADLINE`]; written under the lock, read without it.
    earliest: AtomicU64,
    /// Called after an insert moved `earliest` earlier.
    on_earlier: Box<dyn Fn() + Send + Sync>,
    timers: Mutex<Timers>,
}

impl TimerQueue {
    /// Creates an empty queue; `on_earlier` runs (outside the lock) after an
    /// insert made the earliest deadline earlier.
    pub(crate) fn new(on_earlier: Box<dyn Fn() + Send + Sync>) -> Self {
        Self {
            epoch: Instant::now(),
            earliest: AtomicU64::new(NO_DEADLINE),
            on_earlier,
            timers: Mutex::new(Timers::default()),
        }
    }

    /// Registers `waker` to be woken once `deadline` has passed.
    pub(crate) fn insert(&self, deadline: Instant, waker: &Waker) -> TimerKey {
        let nanos = self.nanos_since_epoch(deadline);
        let (key, moved_earlier) = {
            let mut timers = lock(&self.timers);
            let key = timers.insert(nanos, waker.clone());
            let moved_earlier = self.publish_earliest(&timers);
            (key, moved_earlier)
        };
        if moved_earlier {
            (self.on_earlier)();
        }
        key
    }

    /// Replaces the waker of a pending timer; returns false if the timer is
    /// no longer pending (it fired or was cancelled).
    pub(crate) fn reset_waker(&self, key: TimerKey, waker: &Waker) -> bool {
        lock(&self.timers).reset_waker(key, waker)
    }

    /// Removes a timer and drops its waker; does nothing if it already fired
    /// or was cancelled.
    pub(crate) fn cancel(&self, key: TimerKey) {
        let removed = {
            let mut timers = lock(&self.timers);
            let removed = timers.remove(key);
            if removed.is_some() {
                self.publish_earliest(&timers);
            }
            removed
        };
        // The waker may run arbitrary drop code: not under the lock.
        drop(removed);
    }

    /// The earliest pending deadline, read without taking the lock.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        // Relaxed: the value is a hint for a park timeout and guards no other
        // memory; a parked driver that read a stale value is woken by
        // `on_earlier`, whose own synchronisation orders this store before
        // the driver's next load.
        match self.earliest.load(Ordering::Relaxed) {
            NO_DEADLINE => None,
            nanos => Some(self.epoch + Duration::from_nanos(nanos)),
        }
    }

    /// Wakes every timer whose deadline is at or before `now`, waking outside
    /// the lock; returns how many fired.
    pub(crate) fn fire_expired(&self, now: Instant) -> usize {
        let now = self.nanos_since_epoch_floor(now);
        let mut wakers = Vec::with_capacity(FIRE_BATCH);
        let mut fired = 0;
        loop {
            let more = {
                let mut timers = lock(&self.timers);
                let more = timers.take_expired(now, &mut wakers, FIRE_BATCH);
                self.publish_earliest(&timers);
                more
            };
            fired += wakers.len();
            wakers.drain(..).for_each(Waker::wake);
            if !more {
                return fired;
            }
        }
    }

    /// How many timers are pending.
    pub(crate) fn len(&self) -> usize {
        lock(&self.timers).len()
    }

    /// Stores the current earliest deadline; returns whether it moved earlier.
    fn publish_earliest(&self, timers: &Timers) -> bool {
        let earliest = timers.earliest();
        // Relaxed: see `next_deadline`; the lock orders writers.
        let previous = self.earliest.swap(earliest, Ordering::Relaxed);
        earliest < previous
    }

    /// A deadline in nanoseconds since the epoch; earlier instants map to 0.
    fn nanos_since_epoch(&self, deadline: Instant) -> u64 {
        let nanos = deadline.saturating_duration_since(self.epoch).as_nanos();
        u64::try_from(nanos).unwrap_or(NO_DEADLINE - 1)
    }

    /// `now` in nanoseconds since the epoch, rounded down (never later than
    /// the real `now`).
    fn nanos_since_epoch_floor(&self, now: Instant) -> u64 {
        self.nanos_since_epoch(now)
    }
}

/// One pending timer.
struct Entry {
    waker: Waker,
    generation: u64,
    /// Index of this entry in `Timers::heap`.
    position: usize,
}

/// A binary min-heap of deadlines whose entries know their heap position,
/// so a cancel removes its entry in O(log n).
#[derive(Default)]
struct Timers {
    entries: Slab<Entry>,
    /// (deadline, slab index), ordered as a min-heap on the deadline.
    heap: Vec<(u64, usize)>,
    next_generation: u64,
}

impl Timers {
    fn insert(&mut self, deadline: u64, waker: Waker) -> TimerKey {
        let generation = self.next_generation;
        self.next_generation += 1;
        let position = self.heap.len();
        let index = self.entries.insert(Entry {
            waker,
            generation,
            position,
        });
        self.heap.push((deadline, index));
        self.sift_up(position);
        TimerKey { index, generation }
    }

    fn reset_waker(&mut self, key: TimerKey, waker: &Waker) -> bool {
        match self.get_mut(key) {
            Some(entry) => {
                if !entry.waker.will_wake(waker) {
                    entry.waker = waker.clone();
                }
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, key: TimerKey) -> Option<Waker> {
        let position = self.get_mut(key)?.position;
        self.remove_at(position);
        Some(self.entries.remove(key.index).waker)
    }

    /// Moves up to `limit` expired wakers into `out`; returns whether more
    /// expired timers remain.
    fn take_expired(&mut self, now: u64, out: &mut Vec<Waker>, limit: usize) -> bool {
        while let Some(&(deadline, index)) = self.heap.first() {
            if deadline > now {
                return false;
            }
            if out.len() == limit {
                return true;
            }
            self.remove_at(0);
            out.push(self.entries.remove(index).waker);
        }
        false
    }

    fn earliest(&self) -> u64 {
        self.heap.first().map_or(NO_DEADLINE, |&(deadline, _)| deadline)
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn get_mut(&mut self, key: TimerKey) -> Option<&mut Entry> {
        self.entries
            .get_mut(key.index)
            .filter(|entry| entry.generation == key.generation)
    }

    fn remove_at(&mut self, position: usize) {
        let last = self.heap.len() - 1;
        self.swap(position, last);
        self.heap.pop();
        if position < self.heap.len() {
            self.sift_down(position);
            self.sift_up(position);
        }
    }

    fn sift_up(&mut self, mut position: usize) {
        while position > 0 {
            let parent = (position - 1) / 2;
            if self.heap[parent].0 <= self.heap[position].0 {
                break;
            }
            self.swap(parent, position);
            position = parent;
        }
    }

    fn sift_down(&mut self, mut position: usize) {
        loop {
            let left = 2 * position + 1;
            let right = left + 1;
            let mut smallest = position;
            if left < self.heap.len() && self.heap[left].0 < self.heap[smallest].0 {
                smallest = left;
            }
            if right < self.heap.len() && self.heap[right].0 < self.heap[smallest].0 {
                smallest = right;
            }
            if smallest == position {
                return;
            }
            self.swap(position, smallest);
            position = smallest;
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.entries[self.heap[a].1].position = a;
        self.entries[self.heap[b].1].position = b;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use std::task::Wake;

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct CountingWaker(AtomicUsize);

    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    impl CountingWaker {
        fn wakes(&self) -> usize {
            self.0.load(std::sync::atomic::Ordering::SeqCst)
        }
    }

    fn quiet_queue() -> TimerQueue {
        TimerQueue::new(Box::new(|| {}))
    }

    fn counting_waker() -> (Arc<CountingWaker>, Waker) {
        let counter = Arc::new(CountingWaker::default());
        let waker = Waker::from(counter.clone());
        (counter, waker)
    }

    /// A cheap xorshift generator: the measurement needs spread deadlines,
    /// not statistical quality.
    fn pseudo_random(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn fires_at_the_deadline_and_never_before() {
        let queue = quiet_queue();
        let (counter, waker) = counting_waker();
        let deadline = queue.epoch + Duration::from_millis(10);
        queue.insert(deadline, &waker);

        assert_eq!(queue.fire_expired(deadline - Duration::from_nanos(1)), 0);
        assert_eq!(counter.wakes(), 0);
        assert_eq!(queue.fire_expired(deadline), 1);
        assert_eq!(counter.wakes(), 1);
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.next_deadline(), None);
    }

    #[test]
    fn fires_in_deadline_order_across_calls() {
        let queue = quiet_queue();
        let counters: Vec<_> = (0..200u64)
            .map(|i| {
                let (counter, waker) = counting_waker();
                // Scrambled order, deadlines 1..=200 ms.
                let millis = (i * 67) % 200 + 1;
                queue.insert(queue.epoch + Duration::from_millis(millis), &waker);
                (millis, counter)
            })
            .collect();
        for now in 0..=200 {
            queue.fire_expired(queue.epoch + Duration::from_millis(now));
            for (millis, counter) in &counters {
                assert_eq!(counter.wakes(), usize::from(*millis <= now), "timer {millis} at {now}");
            }
        }
        assert_eq!(queue.len(), 0);
    }

    #[test]
    fn cancel_frees_the_entry_and_the_waker_and_is_idempotent() {
        let queue = quiet_queue();
        let (counter, waker) = counting_waker();
        let key = queue.insert(queue.epoch + Duration::from_millis(5), &waker);
        drop(waker);
        assert_eq!(Arc::strong_count(&counter), 2);

        queue.cancel(key);
        queue.cancel(key);
        assert_eq!(queue.len(), 0);
        assert_eq!(Arc::strong_count(&counter), 1);
        assert_eq!(queue.next_deadline(), None);
        assert_eq!(queue.fire_expired(queue.epoch + Duration::from_secs(1)), 0);
        assert_eq!(counter.wakes(), 0);
    }

    #[test]
    fn a_stale_key_does_not_touch_the_timer_that_reused_its_slot() {
        let queue = quiet_queue();
        let (_, first) = counting_waker();
        let stale = queue.insert(queue.epoch, &first);
        queue.fire_expired(queue.epoch);
        let (counter, second) = counting_waker();
        queue.insert(queue.epoch + Duration::from_millis(1), &second);

        queue.cancel(stale);
        assert!(!queue.reset_waker(stale, &first));
        assert_eq!(queue.len(), 1);
        queue.fire_expired(queue.epoch + Duration::from_millis(1));
        assert_eq!(counter.wakes(), 1);
    }

    #[test]
    fn reset_waker_redirects_the_wake() {
        let queue = quiet_queue();
        let (old_counter, old) = counting_waker();
        let (new_counter, new) = counting_waker();
        let key = queue.insert(queue.epoch + Duration::from_millis(1), &old);
        assert!(queue.reset_waker(key, &new));
        queue.fire_expired(queue.epoch + Duration::from_millis(1));
        assert_eq!((old_counter.wakes(), new_counter.wakes()), (0, 1));
    }

    #[test]
    fn next_deadline_tracks_the_earliest_timer() {
        let queue = quiet_queue();
        let waker = futures::task::noop_waker();
        let later = queue.epoch + Duration::from_secs(2);
        let sooner = queue.epoch + Duration::from_secs(1);
        let late_key = queue.insert(later, &waker);
        let soon_key = queue.insert(sooner, &waker);
        let reported = queue.next_deadline().expect("two timers pending");
        assert!(reported >= sooner && reported <= later);
        queue.cancel(soon_key);
        let reported = queue.next_deadline().expect("one timer pending");
        assert!(reported > sooner && reported <= later);
        queue.cancel(late_key);
        assert_eq!(queue.next_deadline(), None);
    }

    #[test]
    fn on_earlier_runs_only_when_the_earliest_deadline_moves_earlier() {
        let calls = Arc::new(AtomicUsize::new(0));
        let hook_calls = calls.clone();
        let queue = TimerQueue::new(Box::new(move || {
            hook_calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }));
        let waker = futures::task::noop_waker();
        let count = || calls.load(std::sync::atomic::Ordering::SeqCst);

        queue.insert(queue.epoch + Duration::from_secs(10), &waker);
        assert_eq!(count(), 1, "first timer: from none to some");
        queue.insert(queue.epoch + Duration::from_secs(20), &waker);
        assert_eq!(count(), 1, "a later timer does not move the earliest");
        queue.insert(queue.epoch + Duration::from_secs(1), &waker);
        assert_eq!(count(), 2, "an earlier timer does");
    }

    #[test]
    fn deadlines_before_the_epoch_fire_at_once() {
        let queue = quiet_queue();
        let (counter, waker) = counting_waker();
        let past = queue.epoch.checked_sub(Duration::from_millis(1));
        queue.insert(past.unwrap_or(queue.epoch), &waker);
        assert_eq!(queue.fire_expired(queue.epoch), 1);
        assert_eq!(counter.wakes(), 1);
    }

    #[test]
    fn fires_more_than_one_batch_in_one_call() {
        let queue = quiet_queue();
        let (counter, waker) = counting_waker();
        for _ in 0..(FIRE_BATCH * 3 + 7) {
            queue.insert(queue.epoch, &waker);
        }
        assert_eq!(queue.fire_expired(queue.epoch), FIRE_BATCH * 3 + 7);
        assert_eq!(counter.wakes(), FIRE_BATCH * 3 + 7);
    }

    #[test]
    fn many_random_timers_fire_exactly_once_and_never_early() {
        let queue = quiet_queue();
        let mut seed = 0x9E37_79B9_7F4A_7C15;
        let timers: Vec<_> = (0..5_000)
            .map(|_| {
                let (counter, waker) = counting_waker();
                // Spread over ~17 minutes of virtual time so every level is used.
                let nanos = pseudo_random(&mut seed) % (1 << 40);
                let deadline = queue.epoch + Duration::from_nanos(nanos);
                let key = queue.insert(deadline, &waker);
                (deadline, key, counter)
            })
            .collect();
        for (deadline, key, _) in timers.iter().step_by(3) {
            let _ = deadline;
            queue.cancel(*key);
        }
        let mut now = queue.epoch;
        while queue.len() > 0 {
            now += Duration::from_nanos(pseudo_random(&mut seed) % (1 << 32));
            queue.fire_expired(now);
            for (index, (deadline, _, counter)) in timers.iter().enumerate() {
                let expected = usize::from(index % 3 != 0 && *deadline <= now);
                assert_eq!(counter.wakes(), expected, "timer {index}");
            }
            if let Some(next) = queue.next_deadline() {
                assert!(next > now, "the next deadline is in the future");
            }
        }
    }

    /// Prints the cost per timer of insert, cancel and fire with 1,000,000
    /// pending timers. Run with
    /// `cargo test --release --lib timer_queue_cost -- --ignored --nocapture`.
    #[test]
    #[ignore = "measurement, prints figures"]
    fn timer_queue_cost() {
        const TIMERS: u64 = 1_000_000;
        const SPREAD_NANOS: u64 = 10_000_000_000;
        let waker = futures::task::noop_waker();
        let queue = quiet_queue();
        let mut seed = 0x2545_F491_4F6C_DD1D;
        let deadlines: Vec<Instant> = (0..TIMERS)
            .map(|_| queue.epoch + Duration::from_nanos(pseudo_random(&mut seed) % SPREAD_NANOS))
            .collect();
        let per_timer = |elapsed: Duration| elapsed.as_nanos() as f64 / TIMERS as f64;

        let started = Instant::now();
        let keys: Vec<TimerKey> = deadlines.iter().map(|&d| queue.insert(d, &waker)).collect();
        let insert = per_timer(started.elapsed());

        let started = Instant::now();
        // Cancel in an order unrelated to the deadlines.
        for i in 0..TIMERS {
            queue.cancel(keys[(i * 7_919 % TIMERS) as usize]);
        }
        let cancel = per_timer(started.elapsed());
        assert_eq!(queue.len(), 0);

        deadlines.iter().for_each(|&d| {
            queue.insert(d, &waker);
        });
        let started = Instant::now();
        let mut fired = 0;
        // One fire call per virtual millisecond, as a driver would.
        for millis in 0..=(SPREAD_NANOS / 1_000_000) {
            fired += queue.fire_expired(queue.epoch + Duration::from_millis(millis));
        }
        let fire = per_timer(started.elapsed());
        assert_eq!(fired as u64, TIMERS);

        println!(
            "{TIMERS} timers over {} s: insert {insert:.0} ns, cancel {cancel:.0} ns, fire {fire:.0} ns per timer",
            SPREAD_NANOS / 1_000_000_000
        );
    }
}
