//! Who is searching, who is asleep, and whom to wake.
//!
//! # Protocol
//!
//! One atomic word counts the workers that are *unparked* (high bits) and,
//! among them, those that are *searching* (low bits): looking for work in
//! other workers' rings and the global injector. A mutex-protected list holds
//! the indices of parked workers.
//!
//! * A worker with nothing in its own queue becomes a searcher, unless half
//!   the workers already are (thieves beyond that only contend).
//! * A searcher that finds work stops searching; if it was the **last**
//!   searcher it wakes one parked worker, because the work it found may be
//!   the first of a burst that others should share.
//! * Whoever makes work visible (a push to the injector, or a push that
//!   leaves **exactly two tasks** in a worker's LIFO slot and ring) wakes
//!   one parked worker, but only if **no one is searching** and someone is
//!   parked: a searcher will find the work, or wake someone when it stops.
//!   A push that leaves more adds to spare work already announced (below).
//!   A push that leaves its worker holding just that task wakes no one
//!   while a watcher sleeps (see "The watch").
//!   The woken worker starts out counted as searching, so a burst of pushes
//!   wakes workers one at a time instead of all at once.
//! * A worker going to sleep removes itself from the counts and enters the
//!   list under the lock. If it was the last searcher it then checks every
//!   queue once more (rings only if they hold two tasks or more) and wakes a
//!   worker if it finds anything.
//!
//! # Why no work is stranded
//!
//! The promise is liveness: while a task sits in a queue, some unparked
//! worker will look at that queue again. For a ring this holds without any
//! wake-up: only its owner pushes to it, and the owner parks only after
//! finding its slot and ring empty, so a non-empty ring has an awake owner
//! that will run or lose (to a thief) every task in it. Wake-ups are what
//! spreads spare work over the workers, and what starts work in the
//! injector, which has no owner.
//!
//! (A sleeper may stay asleep while a busy worker still has queued work;
//! that costs parallelism for at most the busy worker's current poll, as in
//! tokio, or for a lone task, about one watch interval.)
//!
//! A notifier skips the wake-up only if (a) someone is searching, or (b) no
//! worker is parked.
//!
//! * (b) Every worker is awake, and each looks at the injector and its own
//!   ring before it parks. One refused permission to search still leaves a
//!   searcher awake, which is case (a).
//! * (a) The searcher either finds work, and is then a running worker that
//!   will look at every queue again before it parks; or it parks as the last
//!   searcher and looks at every queue once more. That last look cannot miss
//!   the push: the notifier wrote its queue and then read the state word,
//!   the searcher wrote the state word and then read the queues, and each
//!   side's write and read are separated by a `SeqCst` fence or `SeqCst`
//!   read-modify-write. In the single total order of `SeqCst` operations one
//!   of the two reads comes second and sees the other's write: either the
//!   notifier saw no searcher (and woke a sleeper) or the last searcher sees
//!   the work (and wakes one). Release/acquire alone does not forbid both
//!   reads seeing stale values (the store-buffering shape), which is why
//!   these operations are `SeqCst`.
//!
//! `loom-tests/tests/park.rs` model-checks this with one and two workers.
//!
//! # Spare work made once, announced once
//!
//! A worker's ring and slot hold spare work from the push that leaves two
//! tasks until owner and thieves take them down to one; call that an
//! episode. Only the owner pushes, so every episode starts with a push that
//! left two, and that push ran the notify above. Pushes within the episode
//! skip it. The argument above applies to the first push: either it woke a
//! worker (or saw a searcher, or no one parked), or a worker parking as the
//! last searcher, whose final look is ordered after that push by the
//! `SeqCst` total order, sees the two tasks and wakes one. A worker that
//! looked earlier and found fewer than two parked before the episode
//! began, and is counted by the first push's read of the state word. So
//! some awake worker, or the owner itself, will look at the ring while the
//! episode lasts, and it then sees every task pushed so far. When the
//! episode ends the next push that makes spare work starts a new one and
//! notifies again. (The owner counts slot and ring after its push; a thief
//! can only make that count smaller, so a push that starts an episode never
//! reads three or more.)
//!
//! # The watch
//!
//! A task alone in a worker's slot and ring is run by that worker when its
//! current poll returns; the watch bounds how long that can take when the
//! poll is long. A worker that parks while another is unparked takes the
//! watch if no one holds it, sleeps for at most the watch interval
//! (`worker.rs`), gives the watch back when it wakes, and searches, taking
//! lone tasks too (a task alone in a ring, or one in a worker's LIFO
//! slot). A worker that pushes a lone task skips the wake-up only if it
//! reads the watch as held; otherwise it notifies as above.
//!
//! Why a lone task that waits behind a long poll is found: its worker
//! skipped the wake-up because its `SeqCst` load read the watch held, set
//! by some holder's take. That holder's release is later in the total
//! order of `SeqCst` operations (a load cannot read a store that the total
//! order puts before a later store to the same place), and so is the
//! holder's look at the state word when it parks again, which therefore
//! counts the pushing worker as unparked (its unparking came before its
//! push) unless it has parked since, which it does only with an empty slot
//! and ring. So while the task waits, whoever parks next takes the watch
//! again, and every interval some worker looks at every ring and slot; a
//! push is visible to such a look after finitely many intervals. The push
//! and the load of the watch are not fenced: a stale read costs at most
//! one more interval, and the fence was the dearest part of a push. Loom
//! does not model timeouts; `loom-tests/tests/park.rs` checks the
//! hand-over without them (a worker that read the watch held keeps a
//! watcher).
//!
//! The [`Parker`](crate::park::Parker) remembers an `unpark` that arrives
//! before `park`, so a worker picked from the list between its check and its
//! sleep still wakes.
//!
//! # One worker
//!
//! An executor with one worker drops the steps that exist only for other
//! workers, and the argument above still holds:
//!
//! * Its own pushes notify no one (`Worker::notify_after_push`,
//!   `push_new_batch`): the pusher is the only worker and is unparked, so
//!   [`worker_to_notify`](Idle::worker_to_notify) would read every worker
//!   unparked and return `None` (case (b)); the skip saves only its
//!   `SeqCst` fence. The ring then has an awake owner, the pusher, which
//!   empties it before it parks.
//! * It never takes the watch (`Worker::park`): no other worker's lone
//!   task exists to take.
//! * Its ring has no thief (`queue::solo`, made by `Builder::build`), so
//!   its pops need no CAS (`queue/local.rs`, "A ring without thieves").
//!
//! Unchanged: threads that are not workers (the outside poster, a
//! `block_on` caller, a wake from another thread) push to the injector or
//! the poster's ring and notify through
//! [`worker_to_notify`](Idle::worker_to_notify), and an earlier timer
//! deadline unparks the timer holder or notifies. The lone worker may
//! always search (half of one worker is no searcher), so it parks as the
//! last searcher and makes the final look, and case (a) applies as
//! written; it fires due timers at its global tick and holds the timer
//! role while it sleeps. `loom-tests/tests/park.rs` models one worker too.

use crate::sync::{fence, lock, AtomicBool, AtomicUsize, Mutex, Ordering::SeqCst};

/// Bits of the state word that count searching workers; the rest count
/// unparked workers. Excludes more than 65,535 workers.
const SEARCHING_MASK: usize = (1 << 16) - 1;
const UNPARKED_ONE: usize = 1 << 16;

/// The searching and sleeping accounting of one executor.
pub struct Idle {
    state: AtomicUsize,
    sleepers: Mutex<Vec<usize>>,
    workers: usize,
    /// Whether a parked worker holds the watch: it sleeps with a bounded
    /// timeout and looks at every queue when it wakes (module docs).
    watch: AtomicBool,
}

fn searching(state: usize) -> usize {
    state & SEARCHING_MASK
}

fn unparked(state: usize) -> usize {
    state >> 16
}

impl Idle {
    /// Accounting for `workers` workers, all unparked and none searching.
    pub fn new(workers: usize) -> Idle {
        assert!(
            workers > 0 && workers <= SEARCHING_MASK,
            "1..=65535 workers"
        );
        Idle {
            state: AtomicUsize::new(workers * UNPARKED_ONE),
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            workers,
            watch: AtomicBool::new(false),
        }
    }

    /// Called after making work visible: picks a parked worker to wake, if
    /// one should be woken. The caller unparks it.
    pub fn worker_to_notify(&self) -> Option<usize> {
        // SeqCst: orders the caller's push before this read of the state
        // word (see "Why no work is stranded"); AcqRel cannot order a write
        // before a later read.
        fence(SeqCst);
        if !self.should_notify(self.state.load(SeqCst)) {
            return None;
        }
        let mut sleepers = lock(&self.sleepers);
        // SeqCst: part of the same total order as the fence above.
        if !self.should_notify(self.state.load(SeqCst)) {
            return None;
        }
        let index = sleepers.pop()?;
        // SeqCst: the woken worker counts as unparked and searching before
        // anyone else decides whether to notify.
        self.state.fetch_add(UNPARKED_ONE | 1, SeqCst);
        Some(index)
    }

    /// Whether a parked worker holds the watch (see "The watch"). A plain
    /// load on x86: no fence, unlike [`worker_to_notify`](Self::worker_to_notify).
    pub fn is_watched(&self) -> bool {
        // SeqCst: read before the holder's release of the watch in the total
        // order, and so before its next look at the state word (module docs).
        self.watch.load(SeqCst)
    }

    /// Takes the watch, if some worker is unparked to be watched and no one
    /// holds it. The caller has already left the unparked count; it then
    /// sleeps for at most the watch interval (`worker.rs`) and calls [`release_watch`](Self::release_watch) when it wakes,
    /// before it looks for work.
    pub fn try_take_watch(&self) -> bool {
        // SeqCst: this read must see every worker that read the watch held
        // before the previous holder released it (module docs).
        if unparked(self.state.load(SeqCst)) == 0 {
            return false;
        }
        // SeqCst: the same total order.
        self.watch
            .compare_exchange(false, true, SeqCst, SeqCst)
            .is_ok()
    }

    /// Gives the watch back (on waking, before looking for work).
    pub fn release_watch(&self) {
        // SeqCst: the same total order.
        self.watch.store(false, SeqCst);
    }

    fn should_notify(&self, state: usize) -> bool {
        searching(state) == 0 && unparked(state) < self.workers
    }

    /// Tries to become a searcher; fails when half the workers already are.
    pub fn transition_to_searching(&self) -> bool {
        // SeqCst: this load and the increment below belong to the total
        // order that the notifier's fence relies on.
        let state = self.state.load(SeqCst);
        if 2 * searching(state) >= self.workers {
            return false;
        }
        // SeqCst: see above; a concurrent notifier must either see this
        // searcher or be seen by its search.
        self.state.fetch_add(1, SeqCst);
        true
    }

    /// A searcher found work. Returns whether it was the last searcher, in
    /// which case the caller wakes another worker.
    pub fn transition_from_searching(&self) -> bool {
        // SeqCst: the decrement must be ordered against notifiers' reads.
        searching(self.state.fetch_sub(1, SeqCst)) == 1
    }

    /// Records `index` as parked. Returns whether it was the last searcher,
    /// in which case the caller must look at every queue once more.
    pub fn transition_to_parked(&self, index: usize, is_searching: bool) -> bool {
        let mut sleepers = lock(&self.sleepers);
        let dec = UNPARKED_ONE | usize::from(is_searching);
        // SeqCst: the write half of the store-buffering pair (see the module
        // docs); the caller's re-check of the queues must come after it.
        let prev = self.state.fetch_sub(dec, SeqCst);
        sleepers.push(index);
        drop(sleepers);
        let last = is_searching && searching(prev) == 1;
        if last {
            // SeqCst: keeps the caller's queue reads after the decrement.
            fence(SeqCst);
        }
        last
    }

    /// Called by `index` after it wakes. If a notifier picked it, it is
    /// already counted as unparked and searching, and this returns `true`;
    /// otherwise (a spurious or foreign wake-up) it leaves the list, counts
    /// as unparked but not searching, and this returns `false`.
    pub fn transition_from_parked(&self, index: usize) -> bool {
        let mut sleepers = lock(&self.sleepers);
        match sleepers.iter().position(|&i| i == index) {
            Some(pos) => {
                sleepers.swap_remove(pos);
                // SeqCst: back in the count before anyone reads it again.
                self.state.fetch_add(UNPARKED_ONE, SeqCst);
                false
            }
            None => true,
        }
    }

    /// Workers not parked, and those of them searching (a snapshot).
    pub fn counts(&self) -> (usize, usize) {
        // Relaxed: a statistic, not a decision.
        let state = self.state.load(crate::sync::Ordering::Relaxed);
        (unparked(state), searching(state))
    }
}
