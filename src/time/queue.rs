//! The timer queue: every pending timer of one executor.
//!
//! [`TimerQueue`] is a hierarchical timing wheel behind one mutex, with the
//! earliest deadline also published in an atomic so that a worker deciding
//! how long to park reads it without the lock.
//!
//! # Why a wheel
//!
//! Chosen by measurement against an indexed binary heap (commit 6d6f570 of
//! branch `time`), both with 1,000,000 pending timers spread over 10 s,
//! cancelled in random order, and fired by one `fire_expired` call per
//! virtual millisecond. Alternating runs on one 2-core machine shared with
//! other builds, in nanoseconds per timer:
//!
//! | queue | insert   | cancel   | fire       |
//! |-------|----------|----------|------------|
//! | heap  | 121–268  | 394–425  | 1042–1086  |
//! | wheel | 63–131   | 173–243  | 337–534    |
//!
//! Command: `cargo test --release --lib timer_queue_cost -- --ignored --nocapture`.
//!
//! Insert and cancel are O(1) in the wheel (a cancel unlinks one node of a
//! doubly linked list kept in a slab) and firing costs at most one move per
//! level, which is what most timers (timeouts that are cancelled before they
//! fire) need. The price is resolution: deadlines round up to a tick of
//! 65.536 µs, so a timer fires up to one tick late and never early.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::task::Waker;
use std::time::{Duration, Instant};

use slab::Slab;

use crate::sync::{lock, AtomicU64, Mutex, Ordering};

/// Wakes each of `wakers`, outside the queue's lock. A timer may hold any
/// waker (a sleep polled by hand, or under another executor), whose `wake`
/// may panic: the panic is caught, reported by the panic hook and otherwise
/// discarded, so that the wakers after it are still woken and the thread
/// firing them (a worker, a `block_on`, the executor's drop) goes on.
fn wake_all(wakers: impl IntoIterator<Item = Waker>) {
    for waker in wakers {
        if let Err(panic) = catch_unwind(AssertUnwindSafe(move || waker.wake())) {
            crate::task::drop_panic(panic);
        }
    }
}

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
    /// `Timers::earliest` in nanoseconds since `epoch`, or [`NO_DEADLINE`];
    /// written under the lock, read without it.
    earliest: AtomicU64,
    /// Called after an insert moved `earliest` earlier.
    on_earlier: Box<dyn Fn() + Send + Sync>,
    timers: Mutex<Timers>,
}

impl TimerQueue {
    /// Creates an empty queue; `on_earlier` runs (outside the lock) after an
    /// insert made [`next_deadline`](Self::next_deadline) earlier, so the
    /// thread that parks until that instant can be woken to re-read it.
    pub(crate) fn new(on_earlier: Box<dyn Fn() + Send + Sync>) -> Self {
        Self {
            epoch: Instant::now(),
            earliest: AtomicU64::new(NO_DEADLINE),
            on_earlier,
            timers: Mutex::new(Timers::default()),
        }
    }

    /// Registers `waker` to be woken once `deadline` has passed; `None` if
    /// the queue is [closed](Self::close), as no one would fire it.
    pub(crate) fn insert(&self, deadline: Instant, waker: &Waker) -> Option<TimerKey> {
        let nanos = self.nanos_since_epoch(deadline);
        let (key, moved_earlier) = {
            let mut timers = lock(&self.timers);
            if timers.closed {
                return None;
            }
            let key = timers.insert(nanos, waker.clone());
            let moved_earlier = self.publish_earliest(&timers);
            (key, moved_earlier)
        };
        if moved_earlier {
            (self.on_earlier)();
        }
        Some(key)
    }

    /// Refuses further inserts and wakes every pending timer, early: the
    /// executor that fired them has shut down. A woken timer future finds
    /// its entry gone and registers again, in the queue of the executor it
    /// is polled under then (`Timer::register`).
    pub(crate) fn close(&self) {
        let wakers: Vec<Waker> = {
            let mut timers = lock(&self.timers);
            timers.closed = true;
            let wakers = timers.take_all();
            self.publish_earliest(&timers);
            wakers
        };
        // Not under the lock: a wake may run arbitrary code.
        wake_all(wakers);
    }

    /// Replaces the waker of a pending timer; returns false if the timer is
    /// no longer pending (it fired or was cancelled).
    pub(crate) fn reset_waker(&self, key: TimerKey, waker: &Waker) -> bool {
        let mut replaced = None;
        let pending = lock(&self.timers).reset_waker(key, waker, &mut replaced);
        // The old waker may run arbitrary drop code (a foreign executor's
        // waker may own a task whose timers use this queue): not under the
        // lock.
        drop(replaced);
        pending
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

    /// When `fire_expired` should next run, read without taking the lock;
    /// `None` when no timer is pending.
    ///
    /// It is never later than the earliest deadline rounded up to a tick; it
    /// may be earlier (the start of a higher wheel slot), in which case the
    /// call to `fire_expired` at that time only moves timers down the wheel
    /// and publishes a later instant.
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
        let now = self.nanos_since_epoch(now);
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
            wake_all(wakers.drain(..));
            if !more {
                return fired;
            }
        }
    }

    /// How many timers are pending.
    // Part of the executor's interface; until it is integrated only tests call it.
    #[cfg_attr(not(test), allow(dead_code))]
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
}

/// log2 of the wheel's tick in nanoseconds: 2^16 ns = 65.536 µs. A deadline
/// is rounded up to a whole tick and `now` down, so rounding can only make a
/// timer late, by less than one tick, never early.
const TICK_SHIFT: u32 = 16;
/// log2 of the slots per level.
const LEVEL_BITS: u32 = 6;
const SLOTS: usize = 1 << LEVEL_BITS;
/// Eight levels of 64 slots span 2^48 ticks, the whole u64 nanosecond range.
const LEVELS: usize = 8;
const MAX_TICK: u64 = (1 << (LEVEL_BITS as usize * LEVELS)) - 1;
/// The list of timers that were already due when inserted.
const EXPIRED_LIST: usize = LEVELS * SLOTS;
const LISTS: usize = EXPIRED_LIST + 1;
/// The end of a list.
const NIL: usize = usize::MAX;

/// One pending timer, a node of the doubly linked list of its slot.
struct Entry {
    /// The deadline in ticks, rounded up.
    when: u64,
    waker: Waker,
    generation: u64,
    /// Which list (slot) holds the entry.
    list: usize,
    prev: usize,
    next: usize,
}

/// The slot a wheel will process next.
struct Expiration {
    list: usize,
    /// The first tick the slot covers.
    start: u64,
}

/// A hierarchical timing wheel: level `l` has 64 slots of 64^l ticks each.
///
/// A timer sits at the lowest level whose slot separates its deadline from
/// `elapsed`; when the wheel reaches a slot of a higher level, the slot's
/// timers move down (or fire). Insert and cancel are O(1): a slab holds the
/// entries, which link into per-slot lists by index.
struct Timers {
    entries: Slab<Entry>,
    heads: [usize; LISTS],
    /// Bit `s` of `occupied[l]` is set when slot `s` of level `l` is non-empty.
    occupied: [u64; LEVELS],
    /// The tick the wheel has advanced to: every timer due at or before it
    /// has fired or sits in the expired list.
    elapsed: u64,
    next_generation: u64,
    /// Set by `TimerQueue::close`: no more inserts.
    closed: bool,
}

impl Default for Timers {
    fn default() -> Self {
        Self {
            entries: Slab::new(),
            heads: [NIL; LISTS],
            occupied: [0; LEVELS],
            elapsed: 0,
            next_generation: 0,
            closed: false,
        }
    }
}

impl Timers {
    fn insert(&mut self, deadline_nanos: u64, waker: Waker) -> TimerKey {
        let generation = self.next_generation;
        self.next_generation += 1;
        let when = deadline_nanos.div_ceil(1 << TICK_SHIFT).min(MAX_TICK);
        let index = self.entries.insert(Entry {
            when,
            waker,
            generation,
            list: NIL,
            prev: NIL,
            next: NIL,
        });
        self.link(index);
        TimerKey { index, generation }
    }

    /// Replaces the waker of timer `key`, putting the old one in `replaced`
    /// for the caller to drop once it unlocks; false if the timer is gone.
    fn reset_waker(&mut self, key: TimerKey, waker: &Waker, replaced: &mut Option<Waker>) -> bool {
        match self.get_mut(key) {
            Some(entry) => {
                if !entry.waker.will_wake(waker) {
                    *replaced = Some(std::mem::replace(&mut entry.waker, waker.clone()));
                }
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, key: TimerKey) -> Option<Waker> {
        self.get_mut(key)?;
        self.unlink(key.index);
        Some(self.entries.remove(key.index).waker)
    }

    /// Removes every timer, due or not, and returns their wakers.
    fn take_all(&mut self) -> Vec<Waker> {
        self.heads = [NIL; LISTS];
        self.occupied = [0; LEVELS];
        self.entries.drain().map(|entry| entry.waker).collect()
    }

    /// Moves up to `limit` wakers of timers due at `now_nanos` into `out`;
    /// returns whether more due timers remain.
    fn take_expired(&mut self, now_nanos: u64, out: &mut Vec<Waker>, limit: usize) -> bool {
        // `elapsed` came from a `now` some caller observed, so it is never
        // ahead of the real time: using the later of the two is safe.
        let now = (now_nanos >> TICK_SHIFT).max(self.elapsed);
        if self.drain_list(EXPIRED_LIST, now, out, limit) {
            return true;
        }
        while let Some(expiration) = self.next_expiration() {
            if expiration.start > now {
                break;
            }
            self.elapsed = self.elapsed.max(expiration.start);
            if self.drain_list(expiration.list, now, out, limit) {
                return true;
            }
        }
        self.elapsed = now;
        false
    }

    /// Fires the due timers of one list, up to `limit` in `out`, and moves
    /// the others down the wheel; returns whether due timers remain for
    /// the next batch (`out` is full and the expired list is not empty).
    ///
    /// A wheel slot is emptied whole, even once `out` is full: the wheel
    /// moves past it, and a due timer left there was found only when the
    /// slot came round again (up to the slot's span late: 17 s at level
    /// 3), while the next batch stopped at a later timer moved down from
    /// it. Due timers that do not fit wait in the expired list, which the
    /// next batch drains first.
    fn drain_list(&mut self, list: usize, now: u64, out: &mut Vec<Waker>, limit: usize) -> bool {
        while self.heads[list] != NIL {
            if out.len() == limit && list == EXPIRED_LIST {
                return true;
            }
            let index = self.heads[list];
            self.unlink(index);
            if self.entries[index].when > now {
                self.link(index);
            } else if out.len() < limit {
                out.push(self.entries.remove(index).waker);
            } else {
                self.link_into(index, EXPIRED_LIST);
            }
        }
        out.len() == limit && self.heads[EXPIRED_LIST] != NIL
    }

    /// The earliest nanosecond at which a timer may be due: exact for the
    /// lowest level, the start of the slot for the higher ones.
    fn earliest(&self) -> u64 {
        if self.heads[EXPIRED_LIST] != NIL {
            return 0;
        }
        self.next_expiration()
            .map_or(NO_DEADLINE, |expiration| expiration.start << TICK_SHIFT)
    }

    /// The first occupied slot at or after `elapsed`. Levels hold strictly
    /// later deadlines than the levels below them, so the lowest occupied
    /// level has it.
    fn next_expiration(&self) -> Option<Expiration> {
        (0..LEVELS).find_map(|level| {
            let occupied = self.occupied[level];
            if occupied == 0 {
                return None;
            }
            let shift = LEVEL_BITS * level as u32;
            let current = ((self.elapsed >> shift) as usize) % SLOTS;
            let slot =
                (current + occupied.rotate_right(current as u32).trailing_zeros() as usize) % SLOTS;
            let level_span = 1u64 << (shift + LEVEL_BITS);
            let block_start = self.elapsed & !(level_span - 1);
            Some(Expiration {
                list: level * SLOTS + slot,
                start: block_start + ((slot as u64) << shift),
            })
        })
    }

    #[cfg_attr(not(test), allow(dead_code))]
    fn len(&self) -> usize {
        self.entries.len()
    }

    fn get_mut(&mut self, key: TimerKey) -> Option<&mut Entry> {
        self.entries
            .get_mut(key.index)
            .filter(|entry| entry.generation == key.generation)
    }

    /// Puts an unlinked entry into the list its deadline belongs to.
    fn link(&mut self, index: usize) {
        let when = self.entries[index].when;
        let list = if when <= self.elapsed {
            EXPIRED_LIST
        } else {
            let level = level_for(self.elapsed, when);
            let slot = ((when >> (LEVEL_BITS as usize * level)) as usize) % SLOTS;
            self.occupied[level] |= 1 << slot;
            level * SLOTS + slot
        };
        self.link_into(index, list);
    }

    /// Puts entry `index` at the head of `list` (whose `occupied` bit, for
    /// a wheel slot, the caller sets).
    fn link_into(&mut self, index: usize, list: usize) {
        let head = self.heads[list];
        if head != NIL {
            self.entries[head].prev = index;
        }
        let entry = &mut self.entries[index];
        entry.list = list;
        entry.prev = NIL;
        entry.next = head;
        self.heads[list] = index;
    }

    fn unlink(&mut self, index: usize) {
        let Entry {
            list, prev, next, ..
        } = self.entries[index];
        if prev == NIL {
            self.heads[list] = next;
        } else {
            self.entries[prev].next = next;
        }
        if next != NIL {
            self.entries[next].prev = prev;
        }
        if self.heads[list] == NIL && list != EXPIRED_LIST {
            self.occupied[list / SLOTS] &= !(1 << (list % SLOTS));
        }
    }
}

/// The level of a timer due at tick `when` (after `elapsed`): the level of
/// the highest 6-bit digit in which the two differ.
fn level_for(elapsed: u64, when: u64) -> usize {
    let differing = ((elapsed ^ when) | (SLOTS as u64 - 1)).min(MAX_TICK);
    let highest_bit = 63 - differing.leading_zeros();
    (highest_bit / LEVEL_BITS) as usize
}

/// The queue's API for the loom models in `loom-tests/`; not public API.
#[cfg(loom)]
pub mod loom_api {
    use std::task::Waker;
    use std::time::Instant;

    /// A [`TimerQueue`](super::TimerQueue) behind a public face.
    pub struct LoomTimerQueue(super::TimerQueue);

    impl LoomTimerQueue {
        /// See `TimerQueue::new`.
        pub fn new(on_earlier: Box<dyn Fn() + Send + Sync>) -> Self {
            Self(super::TimerQueue::new(on_earlier))
        }

        /// See `TimerQueue::insert`.
        pub fn insert(&self, deadline: Instant, waker: &Waker) {
            self.0.insert(deadline, waker);
        }

        /// See `TimerQueue::next_deadline`.
        pub fn next_deadline(&self) -> Option<Instant> {
            self.0.next_deadline()
        }

        /// See `TimerQueue::fire_expired`.
        pub fn fire_expired(&self, now: Instant) -> usize {
            self.0.fire_expired(now)
        }
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
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    impl CountingWaker {
        fn wakes(&self) -> usize {
            self.0.load(std::sync::atomic::Ordering::Relaxed)
        }
    }

    /// The wheel's rounding: a timer fires at most this late.
    const TICK: Duration = Duration::from_nanos(1 << TICK_SHIFT);

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
    fn the_queue_can_be_shared_between_threads() {
        fn assert_traits<T: Send + Sync>() {}
        assert_traits::<TimerQueue>();
    }

    #[test]
    fn fires_at_the_deadline_and_never_before() {
        let queue = quiet_queue();
        let (counter, waker) = counting_waker();
        let deadline = queue.epoch + Duration::from_millis(10);
        queue.insert(deadline, &waker);

        assert_eq!(queue.fire_expired(deadline - Duration::from_nanos(1)), 0);
        assert_eq!(counter.wakes(), 0);
        assert_eq!(queue.fire_expired(deadline + TICK), 1);
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
        for now in 0..=201 {
            queue.fire_expired(queue.epoch + Duration::from_millis(now));
            for (millis, counter) in &counters {
                let wakes = counter.wakes();
                match millis.cmp(&now) {
                    std::cmp::Ordering::Greater => assert_eq!(wakes, 0, "early: {millis} at {now}"),
                    // Due within the last tick: may or may not have fired.
                    std::cmp::Ordering::Equal => assert!(wakes <= 1),
                    std::cmp::Ordering::Less => assert_eq!(wakes, 1, "missed: {millis} at {now}"),
                }
            }
        }
        assert_eq!(queue.len(), 0);
    }

    #[test]
    fn cancel_frees_the_entry_and_the_waker_and_is_idempotent() {
        let queue = quiet_queue();
        let (counter, waker) = counting_waker();
        let key = queue
            .insert(queue.epoch + Duration::from_millis(5), &waker)
            .unwrap();
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
        let stale = queue.insert(queue.epoch, &first).unwrap();
        queue.fire_expired(queue.epoch);
        let (counter, second) = counting_waker();
        queue.insert(queue.epoch + Duration::from_millis(1), &second);

        queue.cancel(stale);
        assert!(!queue.reset_waker(stale, &first));
        assert_eq!(queue.len(), 1);
        queue.fire_expired(queue.epoch + Duration::from_millis(1) + TICK);
        assert_eq!(counter.wakes(), 1);
    }

    #[test]
    fn reset_waker_redirects_the_wake() {
        let queue = quiet_queue();
        let (old_counter, old) = counting_waker();
        let (new_counter, new) = counting_waker();
        let key = queue
            .insert(queue.epoch + Duration::from_millis(1), &old)
            .unwrap();
        assert!(queue.reset_waker(key, &new));
        queue.fire_expired(queue.epoch + Duration::from_millis(1) + TICK);
        assert_eq!((old_counter.wakes(), new_counter.wakes()), (0, 1));
    }

    #[test]
    fn next_deadline_tracks_the_earliest_timer() {
        let queue = quiet_queue();
        let waker = futures::task::noop_waker();
        let later = queue.epoch + Duration::from_secs(2);
        let sooner = queue.epoch + Duration::from_secs(1);
        let late_key = queue.insert(later, &waker).unwrap();
        let soon_key = queue.insert(sooner, &waker).unwrap();
        // A wheel reports the start of the earliest occupied slot: never
        // later than the earliest deadline (plus the rounding tick).
        let reported = queue.next_deadline().expect("two timers pending");
        assert!(reported <= sooner + TICK);
        queue.cancel(soon_key);
        let reported = queue.next_deadline().expect("one timer pending");
        assert!(reported <= later + TICK);
        queue.cancel(late_key);
        assert_eq!(queue.next_deadline(), None);
    }

    #[test]
    fn on_earlier_runs_only_when_the_earliest_deadline_moves_earlier() {
        let calls = Arc::new(AtomicUsize::new(0));
        let hook_calls = calls.clone();
        let queue = TimerQueue::new(Box::new(move || {
            hook_calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }));
        let waker = futures::task::noop_waker();
        let count = || calls.load(std::sync::atomic::Ordering::Relaxed);

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
    fn close_wakes_every_pending_timer_and_refuses_inserts() {
        let queue = quiet_queue();
        let (counter, waker) = counting_waker();
        let key = queue
            .insert(queue.epoch + Duration::from_secs(60), &waker)
            .unwrap();
        queue.insert(queue.epoch, &waker).unwrap();

        queue.close();
        assert_eq!(counter.wakes(), 2, "due or not, each is woken once");
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.next_deadline(), None);
        assert!(!queue.reset_waker(key, &waker), "its entry is gone");
        assert!(queue.insert(queue.epoch, &waker).is_none());
        assert_eq!(queue.fire_expired(queue.epoch + Duration::from_secs(61)), 0);
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

    /// More due timers than a batch in one slot above level 0, with a
    /// later one that moves down the wheel as the slot is emptied: the
    /// batch after the first used to stop at that later timer, leaving the
    /// rest of the due ones in the slot the wheel had moved past.
    #[test]
    fn due_timers_past_a_batch_in_a_higher_slot_all_fire() {
        let queue = quiet_queue();
        let (counter, waker) = counting_waker();
        // 300 ms and 520 ms are in one level-2 slot (4096 ticks of 65.536
        // µs from 268 ms on).
        let due = FIRE_BATCH + 36;
        for _ in 0..due {
            queue.insert(queue.epoch + Duration::from_millis(300), &waker);
        }
        queue.insert(queue.epoch + Duration::from_millis(520), &waker);
        let fired = queue.fire_expired(queue.epoch + Duration::from_millis(350));
        assert_eq!((fired, counter.wakes()), (due, due));
        assert_eq!(queue.len(), 1, "the later timer is still pending");
        let later = queue.fire_expired(queue.epoch + Duration::from_millis(521));
        assert_eq!((later, counter.wakes()), (1, due + 1));
    }

    #[test]
    fn many_random_timers_fire_exactly_once_and_never_early() {
        let queue = quiet_queue();
        let mut seed = 0x9E37_79B9_7F4A_7C15;
        // Fewer timers and longer steps under Miri (`scripts/miri`), where
        // checking 5000 timers after each of ~500 steps would take hours.
        let (count, step_bits) = if cfg!(miri) { (200, 36) } else { (5_000, 32) };
        let timers: Vec<_> = (0..count)
            .map(|_| {
                let (counter, waker) = counting_waker();
                // Spread over ~17 minutes of virtual time so every level is used.
                let nanos = pseudo_random(&mut seed) % (1 << 40);
                let deadline = queue.epoch + Duration::from_nanos(nanos);
                let key = queue.insert(deadline, &waker).unwrap();
                (deadline, key, counter)
            })
            .collect();
        for (deadline, key, _) in timers.iter().step_by(3) {
            let _ = deadline;
            queue.cancel(*key);
        }
        let mut now = queue.epoch;
        while queue.len() > 0 {
            now += Duration::from_nanos(pseudo_random(&mut seed) % (1 << step_bits));
            queue.fire_expired(now);
            let mut earliest_pending = None;
            for (index, (deadline, _, counter)) in timers.iter().enumerate() {
                let cancelled = index % 3 == 0;
                let wakes = counter.wakes();
                if cancelled || *deadline > now {
                    assert_eq!(wakes, 0, "timer {index} fired early or after cancel");
                } else if *deadline + TICK <= now {
                    assert_eq!(wakes, 1, "timer {index} missed");
                } else {
                    assert!(wakes <= 1, "timer {index} fired twice");
                }
                if !cancelled && wakes == 0 {
                    earliest_pending = earliest_pending.min(Some(*deadline)).or(Some(*deadline));
                }
            }
            if let Some(next) = queue.next_deadline() {
                assert!(next > now, "the next deadline is in the future");
                let earliest =
                    earliest_pending.expect("a deadline is published, so a timer is pending");
                assert!(next <= earliest + TICK, "the next deadline is not late");
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
        let keys: Vec<TimerKey> = deadlines
            .iter()
            .map(|&d| queue.insert(d, &waker).unwrap())
            .collect();
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
        for millis in 0..=(SPREAD_NANOS / 1_000_000 + 1) {
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
