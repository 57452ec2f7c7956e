//! A worker thread: where it looks for tasks, how it runs them, when it
//! sleeps.
//!
//! # Ownership
//!
//! Each worker owns its local ring ([`Local`]), a LIFO slot holding the task
//! most recently woken by the task it is running ([`LifoSlot`]), and its
//! [`Parker`]. The executor's shared state holds the thieves' handles of
//! every ring and every slot, the
//! global injector, the [`Idle`](crate::idle::Idle) accounting and the
//! registry of parked tasks. The `Worker` lives in its thread's thread-local
//! state for the thread's whole life, which is how a task's waker finds the
//! ring to push into.
//!
//! # Where a task goes
//!
//! * A **spawned** task goes to the back of the spawning worker's ring. From
//!   any other thread it goes to the ring of the first outside thread that
//!   posted (if that is this thread; `queue/posting.rs`), else to the
//!   injector. Tasks posted from outside start in the order they were
//!   posted when one worker runs them (the poster's ring and the injector
//!   are FIFO, are only ever moved to the back of a ring, and the poster's
//!   ring sends its older half to the overflow queue when full, which
//!   workers look at first; `Shared::inject`); spawns from a task
//!   start in order until its ring overflows, which moves the older half, in
//!   batches, to the executor's overflow queue, and with one worker also
//!   after that once the spawning poll returns (see "After a burst").
//! * A task **woken by the running task** on the same worker goes into the
//!   LIFO slot, replacing (and pushing back) any previous occupant, so a
//!   message handed to a waiting task is handled while it is still in cache.
//!   At most [`MAX_LIFO_STREAK`] LIFO tasks run in a row, so two tasks
//!   waking each other cannot starve the ring.
//! * A task that **woke itself** (`yield_now`) goes to the back of the ring,
//!   behind everything that was waiting; so does a task woken by the running
//!   task's **completion** (the awaiter of its handle): a task awaiting many
//!   handles in turn would otherwise run once per completion, only to find
//!   the next handle not ready. While the ring has no room for work waiting
//!   elsewhere, either goes to the injector instead (see "A full ring").
//!
//! # After a burst
//!
//! A poll that spawns more tasks than the ring holds (a task building a
//! task graph, a loop of spawns) sends the ring's older half to the
//! overflow queue each time the ring fills, so when the poll returns the
//! oldest of its spawns wait in overflow batches and the newest in the
//! ring, which the search order looks at first. Run in that order, the
//! newest would start first: for tasks that await their predecessors (a
//! lattice of `Shared` handles spawned row by row), each of those polls
//! finds its predecessor not run yet, parks, registers its waker, and is
//! polled again after the wake-up: `dag_lattice_shared` at 1 thread made
//! ~146 such polls per 10,000 nodes, the ring's last half-fill. So a push
//! that overflows marks the worker, and when the running task's poll
//! returns the worker moves what its ring still holds, oldest first, to the
//! back of the overflow queue (one look at a `Cell` per poll; the moving
//! once per overflowing poll), and then takes the overflow batches oldest
//! first as the search order does. The tasks are not lost to anyone: they
//! move from a ring only its awake owner pushes to into a queue every
//! worker looks at before it parks.
//!
//! # Search order
//!
//! Written out in [`Worker::next_task`]: every [`GLOBAL_INTERVAL`] ticks a
//! batch of outside work joins the back of the ring, as much as fits
//! (overflow batches, else half the outside poster's ring, then, once the
//! overflow queue is empty, a share of the injector; and
//! due timers fire, and a worker that only requeues self-waking tasks
//! offers its core, below), so work posted from outside starts even while
//! local tasks keep waking each other; then the LIFO slot, the local ring,
//! a batch from the overflow queue, half the outside poster's ring and a
//! batch from the injector behind it, and finally stealing half of another
//! worker's ring that holds two tasks or more (then the overflow queue and
//! the outside work once more).
//!
//! # Spinning on self-waking tasks
//!
//! A task that wakes itself (`yield_now` in a loop, a poll loop waiting
//! for a flag another thread sets) keeps its worker busy without sleeping:
//! the worker polls it, requeues it, polls it again. Work posted from
//! outside still gets in (every [`GLOBAL_INTERVAL`] ticks it joins the ring
//! ahead of the requeued task), but a thread of the program that is not a
//! worker (the poster, a `block_on` waiting for its handles) may be
//! runnable on the same core and get it only when the kernel preempts the
//! worker, at worst when its time slice ends, which the kernel checks at
//! its tick (4 ms on the bench machine, `CONFIG_HZ=250`). So at the global
//! tick, a worker whose polls of the whole interval (all but at most one)
//! were of tasks that woke themselves, and whose slot and ring hold at
//! most one task after the injector's share was moved in, calls
//! `sched_yield` once: the kernel runs another runnable thread on this
//! core, if there is one, and returns at once otherwise. At most one system
//! call per interval, only while the worker does nothing but requeue
//! self-waking tasks; counted in `Metrics::core_offers`.
//!
//! # A full ring
//!
//! A task that wakes itself is requeued into the slot its own pop freed,
//! so a ring filled with such tasks stays full: no push overflows it, and
//! it never runs empty. So does a ring of tasks that each spawn a child
//! and await it (the child takes the slot its parent's pop freed, and its
//! completion requeues the parent into the slot the child's pop freed),
//! and a ring of tasks that wake one another (a wake goes into the LIFO
//! slot, and the task the slot gives back, replaced or at the end of a
//! streak, into the slot a pop freed). The global tick moves work in only
//! where there is room (an overflow would send older tasks behind newer
//! ones), so tasks in the overflow queue and outside work would wait
//! until those tasks stopped coming back, and for good if they wait on
//! one of them. So a global tick that leaves work waiting elsewhere with
//! less than half a ring of room sets a mark: until the next tick, a task
//! that wakes itself, or that the running task's completion wakes, or
//! that the LIFO slot gives back, goes to the back of the injector rather
//! than of the ring. Each such requeue frees a slot, and the next ticks
//! move the waiting work in as usual, oldest first (the overflow queue,
//! then the outside poster's ring and the injector, where the requeued
//! tasks wait behind what was posted before them). Nothing is reordered
//! that the order promises cover: those are about tasks spawned or posted
//! and not yet started, and what moves has started, or is a dependent
//! queued as a wake (`deps`), whose start order none promises. One look
//! at a `Cell` per such wake or give-back; the requeues pay the
//! injector's lock-free push and wake-up check only while the mark is set.
//!
//! # Waking another worker
//!
//! A worker that queues a task on itself (a spawn, a wake into the LIFO
//! slot, a yield) wakes a parked worker only when it now holds **spare
//! work**: two tasks or more in its slot and ring together. Only the push
//! that makes the spare work (the one that leaves exactly two) pays for
//! the check and its `SeqCst` fence: a push that leaves three or more adds
//! to spare work that was there before it (only the owner pushes, thieves
//! only take), whose making already woke a worker or found one searching
//! or none asleep (`idle.rs`, "Spare work made once, announced once"). A
//! burst of spawns thus pays one fence, not one per spawn: at 2 threads
//! `spawn_many_local` went from 261 to 233 ns per task (median,
//! interleaved; BENCHMARKS.md). A task alone
//! there is the one this worker runs as soon as the running task's poll
//! returns; a sleeper woken for it could only steal it, and a chain of
//! spawns (each task spawning the next) or a narrow wavefront of a task
//! graph would then move from core to core on every link, dragging the
//! task headers and the tasks' data along. For the same reason searchers,
//! and the last searcher's final look before parking, pass over a ring
//! that holds a single task. Work from outside (the injector) still wakes a
//! worker on every push (`executor.rs`).
//!
//! The price is latency when the running task's poll is long: a task it
//! spawned alone waits for that poll to end (and for at most
//! [`MAX_LIFO_STREAK`] LIFO-slot tasks after it). **The watch** bounds the
//! wait: while some worker is awake, one parked worker, the watcher, sleeps
//! at most [`WATCH_INTERVAL`], and its next search may take a task that is
//! alone in its ring, or else the task in another worker's LIFO slot. A
//! push that finds no watcher wakes a sleeper as before. So a task spawned
//! or woken by a task that then blocks or computes for long is picked up
//! by an idle worker within about one watch interval (tokio's LIFO slot,
//! the same trade, has no such bound: its task waits for the poll to end).
//! Only the watch's search looks at the slots, and taking from one costs
//! its owner a read-modify-write per task it takes from its own slot (as
//! a pop from its ring does); a lone worker's slot, which no one watches,
//! costs none (`queue/slot.rs`). The watcher costs one wake-up per
//! interval while one worker is busy and another idle; an executor with
//! every worker asleep has no watcher. `idle.rs` has the argument that nothing is
//! stranded.
//!
//! # Shutdown
//!
//! When the executor's shutdown flag is raised and the worker unparked, the
//! worker leaves its loop at the next check, drops what is left in its LIFO
//! slot and ring (dropping a runnable drops its future), and then
//! unregisters from thread-local state. Tasks that dropping wakes or spawns
//! on this thread mostly come back to its slot and ring, and the same drain
//! drops them (past a full ring they go to the overflow queue, and while
//! the "A full ring" mark is set, woken ones and what the slot gives back go
//! to the injector); tasks woken on other threads land in the injector.
//! Nothing is lost either way: the executor drains both after
//! joining every worker (dropped from one of its own tasks, it has closed
//! them by then, and a task queued there is dropped on the spot).

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::context;
use crate::executor::Shared;
use crate::executor::OVERFLOW_BATCH;
use crate::metrics::{CachePadded, WorkerCounters};
use crate::park::Parker;
use crate::queue::{LifoSlot, Local, Overflow, CAPACITY};
use crate::task::Runnable;
use std::sync::Arc;

/// Ticks between two looks at the injector ahead of local work. Prime, so it
/// does not fall into step with periodic task patterns.
pub(crate) const GLOBAL_INTERVAL: u32 = 61;

/// LIFO-slot tasks run in a row before the ring gets a turn.
pub(crate) const MAX_LIFO_STREAK: u32 = 3;

/// How long the watcher sleeps before it looks at every queue again: the
/// longest a task queued alone behind a long poll waits for an idle worker.
pub(crate) const WATCH_INTERVAL: Duration = Duration::from_millis(1);

/// One worker's own state. Lives in its thread's thread-local state.
pub(crate) struct Worker {
    shared: Arc<Shared>,
    index: usize,
    local: Local<Runnable>,
    /// The task woken last by the running task (see "Where a task goes").
    lifo: LifoSlot<Runnable>,
    lifo_streak: Cell<u32>,
    tick: Cell<u32>,
    searching: Cell<bool>,
    /// Set by a watch that timed out: this search may take a task that is
    /// alone in its ring (see "Waking another worker").
    takes_lone_tasks: Cell<bool>,
    /// Tasks that woke themselves since the last global tick (see
    /// "Spinning on self-waking tasks" in the module docs).
    self_wakes: Cell<u32>,
    /// Set when one of the running task's spawns sent the ring's older half
    /// to the overflow queue (see "After a burst" in the module docs).
    overflowed: Cell<bool>,
    /// Set by a global tick that left work waiting for room in the ring:
    /// until the next, tasks that wake themselves (or that the running
    /// task's completion wakes, or that the LIFO slot gives back) go to the
    /// injector (see "A full ring" in the module docs).
    spills_requeues: Cell<bool>,
    parker: Parker,
    rng: Cell<u32>,
    /// This worker's metrics, on their own cache line (`metrics.rs`).
    counters: Arc<CachePadded<WorkerCounters>>,
}

impl Worker {
    pub(crate) fn new(
        shared: Arc<Shared>,
        index: usize,
        (local, lifo): (Local<Runnable>, LifoSlot<Runnable>),
        parker: Parker,
    ) -> Self {
        Worker {
            counters: shared.ext.counters.worker(index),
            shared,
            index,
            local,
            lifo,
            lifo_streak: Cell::new(0),
            tick: Cell::new(0),
            searching: Cell::new(false),
            takes_lone_tasks: Cell::new(false),
            self_wakes: Cell::new(0),
            overflowed: Cell::new(false),
            spills_requeues: Cell::new(false),
            parker,
            // Any odd seed works for xorshift; spread workers apart.
            rng: Cell::new((index as u32).wrapping_mul(0x9E37_79B9) | 1),
        }
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    pub(crate) fn shared_arc(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    pub(crate) fn counters(&self) -> &WorkerCounters {
        &self.counters.0
    }

    /// Queues a newly spawned task at the back of the ring.
    pub(crate) fn push_new(&self, task: Runnable) {
        self.local.push_back(task, self);
        self.notify_after_push();
    }

    /// Queues a chunk of newly spawned tasks (`spawn_many`) at the back of
    /// the ring, published with one store when they fit, with one wake-up
    /// check for the chunk: the check a single push makes, for the tasks
    /// held before and after (no one, if spare work was there before; see
    /// "Waking another worker" in the module docs).
    pub(crate) fn push_new_batch(&self, tasks: &mut Vec<Runnable>) {
        let before = self.tasks_held();
        self.local.push_many(tasks.drain(..), self);
        if self.shared.workers() == 1 || before >= 2 {
            return;
        }
        if self.tasks_held() >= 2 || !self.shared.idle().is_watched() {
            self.shared.notify_one();
        }
    }

    /// Wakes another worker if this one now holds more than the task it
    /// will run next, or if it holds just that one and no watcher sleeps
    /// (see "Waking another worker" in the module docs). A push onto
    /// spare work that was already there wakes no one.
    #[inline]
    fn notify_after_push(&self) {
        // A lone worker has no one to wake: it is awake, pushing. Skipping
        // the check skips its `SeqCst` fence, the dearest step of a push.
        if self.shared.workers() == 1 {
            return;
        }
        match self.tasks_held() {
            // It held spare work before this push (only the owner pushes;
            // thieves only take), and the push that made that spare work
            // notified as below; so does the next push that makes it
            // again, once owner and thieves have taken it down to one.
            3.. => {}
            2 => self.shared.notify_one(),
            _ => {
                if !self.shared.idle().is_watched() {
                    self.shared.notify_one();
                }
            }
        }
    }

    /// The tasks in the slot and ring together. Only the owner pushes, so a
    /// thief can only make this stale towards fewer.
    fn tasks_held(&self) -> usize {
        usize::from(self.lifo.is_occupied()) + self.local.len()
    }

    /// Queues a woken task: into the LIFO slot, unless it woke itself or the
    /// running task woke it by completing.
    ///
    /// A completion wakes whoever awaits the task's handle. Running that
    /// awaiter at once would make a task that awaits many handles in turn
    /// (fan-in) run once per completion, each time to find the next handle
    /// not ready; behind the queued work it finds most of them ready.
    #[inline]
    pub(crate) fn schedule_woken(&self, task: Runnable, woke_itself: bool) {
        if woke_itself {
            self.self_wakes.set(self.self_wakes.get().wrapping_add(1));
        }
        if woke_itself || context::running_task_completed() {
            if self.spills_requeues.get() {
                self.shared.requeue_outside(task);
                return;
            }
            self.push_new(task);
            return;
        }
        if let Some(previous) = self.lifo.put(task) {
            self.push_back_or_spill(previous);
        }
        self.notify_after_push();
    }

    /// Queues a task the LIFO slot gives back (replaced, or at the end of a
    /// streak) at the back of the ring, or of the injector while the mark
    /// of "A full ring" (module docs) is set.
    #[inline]
    fn push_back_or_spill(&self, task: Runnable) {
        if self.spills_requeues.get() {
            self.shared.requeue_outside(task);
        } else {
            self.local.push_back(task, &*self.shared);
        }
    }

    /// The search order, in one place (see the module docs).
    ///
    /// Inlined into the run loop up to the ring, where a busy worker finds
    /// its next task nearly every time; the rest of the order is out of
    /// line, so the common path saves and restores no more registers than
    /// it uses.
    #[inline]
    pub(crate) fn next_task(&self) -> Option<Runnable> {
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        if tick % GLOBAL_INTERVAL == 0 {
            self.global_tick();
        }
        // High-priority tasks first (`priority.rs`): one Relaxed load when
        // there are none.
        if let Some(task) = self.shared.ext.priority.pop_high() {
            return Some(task);
        }
        if let Some(task) = self.pop_lifo() {
            return Some(task);
        }
        self.lifo_streak.set(0);
        self.local.pop().or_else(|| self.next_task_beyond_ring())
    }

    /// The search order past the ring (see [`Worker::next_task`]).
    #[inline(never)]
    fn next_task_beyond_ring(&self) -> Option<Runnable> {
        self.pull_overflow_batch()
            .or_else(|| self.pull_injected_batch())
            .or_else(|| self.search())
            // No normal work visible: low tasks (and high ones the hint hid).
            .or_else(|| self.shared.ext.priority.pop_any())
    }

    /// What every [`GLOBAL_INTERVAL`]th tick does before the search order.
    #[inline(never)]
    fn global_tick(&self) {
        // Busy workers fire due timers too, so timers never wait for a
        // worker to go idle.
        self.shared.fire_due_timers();
        // Outside work joins the back of the ring: it cannot starve behind
        // tasks that keep waking each other (they requeue behind it), and
        // tasks posted from outside still start in order.
        self.move_injected_to_ring();
        self.spills_requeues.set(self.work_waits_for_room());
        self.offer_core_if_spinning();
    }

    /// Whether work waits outside the ring (in the overflow queue, the
    /// outside poster's ring or the injector) while the ring has less room
    /// than the tick moves in at a time (see "A full ring" in the module
    /// docs).
    fn work_waits_for_room(&self) -> bool {
        self.local.remaining() < CAPACITY / 2
            && (self.shared.has_overflow() || self.shared.outside_len() > 0)
    }

    /// Gives the core to the OS scheduler once (`sched_yield`) if the
    /// polls of the interval were of tasks that woke themselves (all but at
    /// most one) and nothing else is queued here, the injector's share
    /// already moved in (see "Spinning on self-waking tasks").
    fn offer_core_if_spinning(&self) {
        let self_wakes = self.self_wakes.replace(0);
        if self_wakes >= GLOBAL_INTERVAL - 1 && self.tasks_held() <= 1 {
            self.counters.0.core_offers.add(1);
            std::thread::yield_now();
        }
    }

    fn pop_lifo(&self) -> Option<Runnable> {
        let task = self.lifo.take()?;
        let streak = self.lifo_streak.get();
        if streak < MAX_LIFO_STREAK {
            self.lifo_streak.set(streak + 1);
            return Some(task);
        }
        // Let the ring have a turn; the LIFO task waits behind it.
        self.lifo_streak.set(0);
        self.push_back_or_spill(task);
        None
    }

    /// Moves a fair share of the work posted from outside into the ring;
    /// returns one task, the oldest. Called with the slot and ring empty.
    ///
    /// Half of the outside poster's ring (`queue/posting.rs`), then a share
    /// of the injector behind it. The injector holds the other outside
    /// threads' tasks, in no order with the poster's (whose owner never
    /// posts there, `Shared::inject`): taken only once the poster's ring
    /// was empty, they waited for as long as the poster kept it filled.
    fn pull_injected_batch(&self) -> Option<Runnable> {
        if self.shared.take_posted(&self.local) > 0 {
            self.move_injected_to_ring_at_most(self.fair_share());
            return self.local.pop();
        }
        let first = self.shared.pop_injected()?;
        self.move_injected_to_ring_at_most(self.fair_share() - 1);
        Some(first)
    }

    /// Moves the oldest overflow batch into the ring; returns its first task.
    fn pull_overflow_batch(&self) -> Option<Runnable> {
        let mut tasks = self.shared.pop_overflow()?.into_iter();
        let first = tasks.next();
        self.local.push_many(tasks, &*self.shared);
        first
    }

    /// Appends a fair share of the work posted from outside to the back of
    /// the ring: half of the outside poster's ring (unless overflow batches
    /// came in), and a share of the injector behind it (see
    /// [`pull_injected_batch`](Self::pull_injected_batch)).
    ///
    /// First, if there is room, overflow batches (up to half a ring): the
    /// outside poster's ring sends its older half there when full, so it
    /// may hold posted tasks older than the ring's, which would otherwise
    /// wait until this ring runs empty (never, while self-waking tasks keep
    /// requeueing).
    fn move_injected_to_ring(&self) {
        // Up to half a ring, as from the injector below.
        let mut moved = 0;
        while moved < CAPACITY / 2 && self.local.remaining() >= OVERFLOW_BATCH {
            let Some(batch) = self.shared.pop_overflow() else {
                break;
            };
            moved += batch.len();
            self.local.push_many(batch, &*self.shared);
        }
        // Batches left in the overflow queue (the loop stopped at its cap,
        // or never ran for lack of room) may hold tasks older than any in
        // the injector (a ring's overflow sends injected tasks there too):
        // the injector waits until they are in the ring.
        if self.shared.has_overflow() {
            return;
        }
        if moved == 0 {
            self.shared.take_posted(&self.local);
        }
        // Otherwise the injector gets its share at every tick, whatever
        // else came in: its tasks are other threads' than the poster's, in
        // no order with them (see `pull_injected_batch`), and would wait
        // for as long as the poster keeps its ring filled.
        self.move_injected_to_ring_at_most(self.fair_share());
    }

    /// This worker's share of the injector, at least one task.
    fn fair_share(&self) -> usize {
        self.shared.injected_len() / self.shared.workers() + 1
    }

    /// Moves up to `n` tasks, never more than fit without overflowing (an
    /// overflow would send older tasks back behind newer ones).
    fn move_injected_to_ring_at_most(&self, n: usize) {
        let room = self.local.remaining().min(CAPACITY / 2);
        for _ in 0..n.min(room) {
            match self.shared.pop_injected() {
                Some(task) => self.local.push_back(task, &*self.shared),
                None => break,
            }
        }
    }

    /// Steals from other workers, if this worker may search. At most half
    /// the workers search at once.
    fn search(&self) -> Option<Runnable> {
        if !self.searching.get() {
            if !self.shared.idle().transition_to_searching() {
                return None;
            }
            self.searching.set(true);
        }
        // The overflow queue before outside work: it may hold posted tasks
        // older than those in the outside poster's ring.
        self.steal()
            .or_else(|| self.pull_overflow_batch())
            .or_else(|| self.pull_injected_batch())
    }

    /// Takes half of the first non-empty ring, starting at a random victim.
    fn steal(&self) -> Option<Runnable> {
        let stealers = self.shared.stealers();
        let n = stealers.len();
        let start = self.next_random() as usize % n;
        // A task alone in its ring is the one its (awake) owner runs next;
        // taking it would only move that owner's work to another core.
        let least = if self.takes_lone_tasks.replace(false) {
            1
        } else {
            2
        };
        let stolen = (0..n)
            .map(|i| (start + i) % n)
            .filter(|&victim| victim != self.index && stealers[victim].len() >= least)
            .find_map(|victim| stealers[victim].steal_into(&self.local));
        let (task, moved) = match stolen {
            Some(stolen) => stolen,
            None if least == 1 => (self.steal_from_a_slot(start)?, 1),
            None => return None,
        };
        self.counters.0.steals.add(moved as u64);
        Some(task)
    }

    /// Takes the task waiting in another worker's LIFO slot, starting at
    /// victim `start`. Only the watch's search does (after a whole watch
    /// interval, that task waits behind a long poll; see "Waking another
    /// worker"): any other would move the task its owner runs next, hot in
    /// its cache, to another core.
    #[cold]
    fn steal_from_a_slot(&self, start: usize) -> Option<Runnable> {
        let thieves = self.shared.slot_thieves();
        let n = thieves.len();
        (0..n)
            .map(|i| (start + i) % n)
            .filter(|&victim| victim != self.index)
            .find_map(|victim| thieves[victim].steal())
    }

    fn next_random(&self) -> u32 {
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.rng.set(x);
        x
    }

    /// Runs one task. Found work ends a search; if this was the last
    /// searcher, another worker is woken to look for more.
    #[inline]
    pub(crate) fn run_task(&self, task: Runnable) {
        if self.searching.get() {
            self.end_search();
        }
        self.counters.0.polls.add(1);
        // The task's panics, its future's destructor's included, are caught
        // inside `TaskFuture`, and async-task runs what follows the poll
        // under its own abort-on-panic guard; this catch only keeps the
        // worker alive against anything else unwinding out of `run` (free
        // on the path that does not unwind).
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| task.run())) {
            crate::task::drop_panic(panic);
        }
        if self.overflowed.get() {
            self.requeue_behind_overflow();
        }
        // Output stored: only now may its groups count it as finished.
        if let Err(panic) = catch_unwind(context::release_finished) {
            crate::task::drop_panic(panic);
        }
    }

    /// Moves what the ring still holds, oldest first, to the back of the
    /// overflow queue, after a poll whose spawns overflowed the ring: the
    /// overflow batches hold older tasks, which then run first (see "After
    /// a burst" in the module docs).
    #[inline(never)]
    fn requeue_behind_overflow(&self) {
        self.overflowed.set(false);
        let held = self.local.len();
        if held == 0 {
            return;
        }
        // `take` sizes the batches by what the ring held; thieves taking
        // some meanwhile only end the `pop`s sooner.
        self.shared
            .push_batch(std::iter::from_fn(|| self.local.pop()).take(held));
    }

    /// Ends this worker's search if it is searching (see
    /// [`end_search`](Self::end_search)).
    #[inline]
    pub(crate) fn end_search_if_searching(&self) {
        if self.searching.get() {
            self.end_search();
        }
    }

    /// Ends this worker's search, waking another worker to search in its
    /// place if it was the last searcher.
    #[inline(never)]
    fn end_search(&self) {
        self.searching.set(false);
        if self.shared.idle().transition_from_searching() {
            self.shared.notify_one();
        }
    }

    /// Sleeps until woken by new work, shutdown, an unpark from a
    /// `block_on` waker on this thread, or (for the timer holder) the
    /// nearest timer deadline.
    ///
    /// The timer role: one parked worker at a time holds it and sleeps with
    /// the nearest deadline as its timeout; an insert of an earlier deadline
    /// unparks it to re-arm. On waking it hands the role back and fires what
    /// is due, and the next worker to park takes the role. So timers need no
    /// thread of their own, and the role migrates between idle workers.
    ///
    /// Returns whether this worker held the timer role while it slept (it
    /// has given it back).
    pub(crate) fn park(&self) -> bool {
        // Nothing is queued here: the room it waited for is there.
        self.spills_requeues.set(false);
        let idle = self.shared.idle();
        let was_searching = self.searching.replace(false);
        if idle.transition_to_parked(self.index, was_searching) && self.shared.has_visible_work() {
            self.shared.notify_one();
        }
        self.counters.0.parks.add(1);
        let holds_timers = self.shared.try_take_timer_role(self.index);
        let watches = self.shared.workers() > 1 && idle.try_take_watch();
        if !self.shared.is_shutdown() {
            match self.park_timeout(holds_timers, watches) {
                Some(timeout) => {
                    self.parker.park_timeout(timeout);
                }
                None => self.parker.park(),
            }
        }
        if watches {
            idle.release_watch();
            // Its next search takes a lone task too: one still queued after
            // a whole watch interval waits behind a long poll.
            self.takes_lone_tasks.set(true);
        }
        if idle.transition_from_parked(self.index) {
            self.searching.set(true);
        }
        if holds_timers {
            self.shared.release_timer_role();
            self.shared.fire_due_timers();
        }
        holds_timers
    }

    /// How long this worker may sleep; `None` for an unbounded park.
    fn park_timeout(&self, holds_timers: bool, watches: bool) -> Option<Duration> {
        let watch = watches.then_some(WATCH_INTERVAL);
        let timers = if holds_timers {
            self.shared.timers().next_deadline()
        } else {
            None
        };
        let timers = timers.map(|deadline| deadline.saturating_duration_since(Instant::now()));
        match (watch, timers) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The worker thread's main loop.
    pub(crate) fn run(&self) {
        while !self.shared.is_shutdown() {
            match self.next_task() {
                Some(task) => self.run_task(task),
                None => {
                    self.park();
                }
            }
        }
    }

    /// Drops every task left in this worker's slot and ring, including tasks
    /// that dropping wakes onto this worker.
    pub(crate) fn drain(&self) {
        loop {
            let task = self.lifo.take().or_else(|| self.local.pop());
            match task {
                Some(task) => drop(task),
                None => return,
            }
        }
    }
}

/// The worker's pushes to its own ring overflow through it, so that it
/// learns that the running task overflowed the ring.
impl Overflow<Runnable> for Worker {
    #[inline(never)]
    fn push_batch(&self, batch: impl Iterator<Item = Runnable>) {
        self.overflowed.set(true);
        self.shared.push_batch(batch);
    }
}

/// Body of a worker thread: run until shutdown, then drop leftovers.
pub(crate) fn thread_main(
    shared: Arc<Shared>,
    index: usize,
    queues: (Local<Runnable>, LifoSlot<Runnable>),
    parker: Parker,
) {
    let worker = Rc::new(Worker::new(shared.clone(), index, queues, parker));
    context::enter_worker(worker.clone());
    shared.ext.hooks.thread_started();
    match &shared.ext.simple {
        // The simple scheduler runs tasks its own way (`simple.rs`).
        Some(simple) => simple.run_worker(&shared),
        None => worker.run(),
    }
    // Still registered, so that tasks woken while dropping come back here.
    worker.drain();
    context::exit_worker();
    shared.ext.hooks.thread_stopping();
}
