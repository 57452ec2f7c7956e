//! The executor: its shared state, its handle and builder, the global
//! instance, and the spawn paths.
//!
//! # Shutdown
//!
//! Dropping an [`Executor`]:
//!
//! 1. raises the shutdown flag and unparks every worker;
//! 2. joins the workers; each leaves its loop at its next check and drops
//!    what is left in its own ring (see [`worker`](crate::worker));
//! 3. closes the registry of parked tasks and wakes every task in it; the
//!    wakes push their runnables into the injector (the entry of a
//!    dependent waiting for its dependencies, see [`deps`](crate::deps),
//!    drops the task from its node instead, on the spot);
//! 4. drains the injector, the overflow queue and the priority queues,
//!    dropping each runnable (and so its future), until they are empty
//!    **and** every task the registry held at step 3 has had its future
//!    dropped; then closes them, so a waker fired later by some other
//!    thread drops its task on the spot instead of queueing it.
//!
//! The wait in step 4 is for wakes from other threads already under way
//! at step 3: async-task marks a task scheduled before it calls the
//! schedule function, so step 3's wake of such a task does nothing, and
//! its runnable reaches the injector (or, under the simple scheduler, is
//! dropped by the waking thread) a moment later. The registry counts, from
//! its closing on, the registered futures not yet dropped (each drop
//! deregisters once); the drain goes on, yielding the thread between
//! rounds, until that count is zero. Nothing else can hold such a task:
//! the workers are joined (their rings drained on exit), nothing polls
//! it, and a task registers only when a poll returns `Pending`, or, for a
//! dependent, while it waits unpolled in its node (a dependent released
//! from there as the registry closes is on its way to a queue, as a task
//! whose wake was under way; its entry goes when it is dropped or first
//! polled). The one
//! exception is a drop run from one of the executor's own tasks: on its
//! worker, whose thread is not joined, or, under the simple scheduler, on
//! a `block_on` caller's thread that runs it. It does not wait, since that
//! task's own future is alive until the drop returns. Step 3's wakes on a
//! worker's thread queue their tasks in its ring (also inside a `block_on`
//! of another executor, which sets the worker aside: entering this
//! executor for steps 3 and 4 makes the thread its worker again), and the
//! drop drains that ring itself rather than leave it to the worker's exit,
//! which comes only after the task running the drop returns: that task
//! may wait for them first (a group they are in; the `block_on` that set
//! the worker aside waits for the tasks its root spawned, ours among them).
//!
//! Steps 3 and 4 run with the executor as the dropping thread's current
//! one, so a task spawned by a destructor they run (a future's guard that
//! spawns its clean-up, say) joins this executor and is dropped with it,
//! unpolled, instead of going to the global executor. (Not on a thread
//! whose thread-locals are being torn down, an executor kept in a
//! thread-local and dropped at thread exit: there is no current executor
//! to set then, and such a spawn goes to the global executor; where the
//! task's membership cannot be lent out either, in none of its groups.)
//!
//! After that no future of this executor is alive, whoever holds its wakers
//! (unless the drop ran in one of its own tasks, as above).
//! Last, the timer queue is closed and the timers still in it (of timer
//! futures that live on elsewhere, e.g. a `Sleep` first polled under this
//! executor and moved out) are woken; each registers again, on its next
//! poll, with the executor it is polled under then.
//!
//! # How a waker finds its executor
//!
//! A task's schedule function holds its executor's id, not a reference
//! count on [`Shared`]: an `Arc` clone per spawn and a release per finished
//! task were two atomic read-modify-writes on one cache line that every
//! worker touches, about a tenth of a small task's cost. A wake on one of
//! the executor's own workers (nearly all of them) compares ids and pushes
//! to that worker's queue. A wake from any other thread looks the id up in
//! a process-wide table of live executors; `Executor::drop` removes its
//! entry after the shutdown sequence, so a wake that no longer finds its
//! executor drops the task, as a wake that reached the closed injector
//! would.

use std::future::Future;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use std::thread;

use async_task::{ScheduleInfo, WithInfo};
use concurrent_queue::{ConcurrentQueue, PushError};

use crate::batch;
use crate::blocking::BlockingPool;
use crate::context;
use crate::ext::{ExtConfig, Extensions};
use crate::idle::Idle;
use crate::park::{Parker, Unparker};
use crate::queue::{self, LifoSlot, LifoSteal, Local, Overflow, Posting, Steal};
use crate::registry::Registry;
use crate::sync::{fence, AtomicBool, AtomicUsize, Ordering::*};
use crate::task::{Failure, JoinHandle, RawHandle, RawTask, Runnable, TaskFuture, TaskOutput};
use crate::task_group::{MemberGuard, MembershipArc};
use crate::time::TimerQueue;
use crate::worker::{self, Worker};
use std::sync::{Arc, Weak};
use std::time::Instant;

/// State shared by an executor's handle, its workers and its tasks'
/// schedule functions.
pub(crate) struct Shared {
    /// This executor's key in the table of live executors.
    id: u64,
    injector: ConcurrentQueue<Runnable>,
    /// The ring of the first outside thread that posts (`queue/posting.rs`):
    /// all its tasks go there (a full ring sends its older half to
    /// `overflow`).
    posting: Posting<Runnable>,
    /// Where full rings send their older half, in batches of
    /// [`OVERFLOW_BATCH`]: one push and one pop per batch instead of one per
    /// task through the injector.
    overflow: ConcurrentQueue<Vec<Runnable>>,
    stealers: Box<[Steal<Runnable>]>,
    /// The thieves' handles of every worker's LIFO slot: the watch takes a
    /// task waiting there behind a long poll (`worker.rs`).
    slot_thieves: Box<[LifoSteal<Runnable>]>,
    unparkers: Box<[Unparker]>,
    idle: Idle,
    registry: Registry,
    shutdown: AtomicBool,
    timers: Arc<TimerQueue>,
    blocking: BlockingPool,
    /// The worker parked with the timer role (see `worker.rs`), or
    /// [`NO_TIMER_HOLDER`].
    timer_holder: AtomicUsize,
    /// Priorities, metrics, hooks, the simple scheduler (`ext.rs`).
    pub(crate) ext: Extensions,
}

/// `timer_holder` when no worker holds the timer role.
pub(crate) const NO_TIMER_HOLDER: usize = usize::MAX;

impl Shared {
    pub(crate) fn timers(&self) -> &Arc<TimerQueue> {
        &self.timers
    }

    /// Fires the timers that are due, if any. Cheap when none are pending.
    pub(crate) fn fire_due_timers(&self) {
        if let Some(deadline) = self.timers.next_deadline() {
            let now = Instant::now();
            if deadline <= now {
                self.timers.fire_expired(now);
            }
        }
    }

    /// Makes worker `index` the timer holder if no one is. The holder parks
    /// with the nearest deadline as its timeout.
    pub(crate) fn try_take_timer_role(&self, index: usize) -> bool {
        // SeqCst: the caller has just left the unparked count
        // (`Idle::transition_to_parked`), and an inserter that finds no
        // holder wakes a parked worker only if it sees that (in
        // `notify_one`, after its fence in `on_earlier_deadline`). This
        // fence orders the count's write before the read of the deadline
        // below, so either this read sees the insert or the inserter sees
        // this worker parked: the store-buffering shape again, which the
        // count's SeqCst read-modify-write alone does not order against a
        // Relaxed load (`loom-tests/tests/timer_role.rs` finds the lost
        // wake-up without it).
        fence(SeqCst);
        if self.timers.next_deadline().is_none() {
            return false;
        }
        // SeqCst: with the fence below, this pairs with the fence in
        // `on_earlier_deadline`: either the inserter sees the holder (and
        // unparks it) or the holder's next read of the deadline sees the
        // insert. A write followed by a read on each side is the
        // store-buffering shape, which AcqRel does not order.
        let taken = self
            .timer_holder
            .compare_exchange(NO_TIMER_HOLDER, index, SeqCst, SeqCst)
            .is_ok();
        fence(SeqCst);
        taken
    }

    pub(crate) fn release_timer_role(&self) {
        // Release: pairs with the SeqCst CAS of the next holder; nothing the
        // holder wrote needs more.
        self.timer_holder.store(NO_TIMER_HOLDER, Release);
    }

    /// Called by a worker that gave the timer role back on waking and may
    /// now stay busy for long (see `block_on.rs`): if timers are pending,
    /// wakes a sleeping worker, which takes the role when it parks again.
    /// (If a worker is searching it wakes no one: the searcher either parks,
    /// taking the role, or finds work and, as the last searcher, wakes one.)
    pub(crate) fn hand_off_timer_role(&self) {
        if self.timers.next_deadline().is_some() {
            self.notify_one();
        }
    }

    /// The timer queue's hook: a new deadline is earlier than all others.
    fn on_earlier_deadline(&self) {
        // SeqCst: see `try_take_timer_role`.
        fence(SeqCst);
        match self.timer_holder.load(SeqCst) {
            NO_TIMER_HOLDER => self.notify_one(),
            holder => self.unparkers[holder].unpark(),
        }
        self.ext.on_earlier_deadline();
    }

    /// This executor's key in the table of live executors (unique for the
    /// life of the process).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn workers(&self) -> usize {
        self.stealers.len()
    }

    pub(crate) fn idle(&self) -> &Idle {
        &self.idle
    }

    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    pub(crate) fn stealers(&self) -> &[Steal<Runnable>] {
        &self.stealers
    }

    /// The thieves' handles of the workers' LIFO slots, by worker index.
    pub(crate) fn slot_thieves(&self) -> &[LifoSteal<Runnable>] {
        &self.slot_thieves
    }

    pub(crate) fn unparker(&self, index: usize) -> &Unparker {
        &self.unparkers[index]
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        // Acquire: pairs with the Release store in `Executor::drop`.
        self.shutdown.load(Acquire)
    }

    pub(crate) fn pop_injected(&self) -> Option<Runnable> {
        self.injector.pop().ok()
    }

    pub(crate) fn injected_len(&self) -> usize {
        self.injector.len()
    }

    /// Tasks posted from outside and not yet taken: the injector's and the
    /// outside poster's ring's.
    pub(crate) fn outside_len(&self) -> usize {
        self.injector.len() + self.posting.len()
    }

    /// Whether the outside poster's ring holds tasks (a racy hint).
    pub(crate) fn has_posted(&self) -> bool {
        self.posting.len() > 0
    }

    /// Moves half of the outside poster's ring (rounded up), oldest first,
    /// to the back of `local`, or as many as fit there; returns how many.
    pub(crate) fn take_posted(&self, local: &Local<Runnable>) -> usize {
        self.posting.stealer().steal_batch_into(local)
    }

    /// Whether the overflow queue holds a batch (a racy hint).
    pub(crate) fn has_overflow(&self) -> bool {
        !self.overflow.is_empty()
    }

    /// The oldest batch that overflowed from a full ring (never empty).
    pub(crate) fn pop_overflow(&self) -> Option<Vec<Runnable>> {
        pop_unless_empty(&self.overflow)
    }

    /// Whether any queue holds work (for the last searcher's final look).
    pub(crate) fn has_visible_work(&self) -> bool {
        !self.injector.is_empty()
            || self.has_posted()
            || !self.overflow.is_empty()
            // A lone task is its awake owner's next one (the watch covers
            // a long poll; `idle.rs`).
            || self.stealers.iter().any(|s| s.len() > 1)
            || self.ext.has_visible_work()
    }

    /// Wakes one parked worker if the idle protocol says one should wake.
    pub(crate) fn notify_one(&self) {
        if let Some(index) = self.idle.worker_to_notify() {
            self.unparkers[index].unpark();
        }
    }

    /// Spawns `future` with the given group membership. `worker` is this
    /// thread's worker if the caller already knows it belongs to `self`.
    #[inline]
    pub(crate) fn spawn<F>(
        self: &Arc<Self>,
        future: F,
        membership: Option<MembershipArc>,
        worker: Option<&Worker>,
    ) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // One predictable branch: hooks, latency histogram, simple scheduler.
        if self.ext.decorates() {
            let options = crate::task::builder::Options::default();
            return crate::task::builder::spawn_decorated(
                self, future, membership, worker, &options, None,
            );
        }
        let (task, handle) = self.build_plain(future, membership);
        self.queue_spawned(task, worker);
        JoinHandle::new(handle)
    }

    /// Counts and queues a new task: on `worker`, or on this thread's worker
    /// when it is one of ours (found here, so that a spawn through
    /// [`Executor::spawn`] from a task is counted on the worker's own
    /// counter, not with an atomic add on the line of outside spawns that
    /// every worker would then share), else in the injector.
    #[inline]
    fn queue_spawned(&self, task: Runnable, worker: Option<&Worker>) {
        if worker.is_none() && context::is_worker_of(self.id) {
            return context::with_worker(|found| self.count_and_queue(task, found));
        }
        self.count_and_queue(task, worker)
    }

    #[inline]
    fn count_and_queue(&self, task: Runnable, worker: Option<&Worker>) {
        self.ext.counters.count_spawn(worker);
        match worker {
            Some(worker) => worker.push_new(task),
            None => self.inject(task),
        }
    }

    /// Counts and queues a chunk of new tasks built by `spawn_many` (the
    /// default path's, in order), leaving `tasks` empty: on `worker` (one
    /// of this executor's, the caller's thread's) with one push and one
    /// wake-up check, else as [`inject_batch`](Self::inject_batch) does.
    pub(crate) fn queue_new_batch(&self, tasks: &mut Vec<Runnable>, worker: Option<&Worker>) {
        self.ext.counters.count_spawns(worker, tasks.len());
        match worker {
            Some(worker) => worker.push_new_batch(tasks),
            None => self.inject_batch(tasks),
        }
    }

    /// [`inject`](Self::inject) for a chunk of tasks, oldest first, leaving
    /// `tasks` empty: into the outside poster's ring with one push (each
    /// run that fits published with one store) if this thread owns it,
    /// else into the injector one by one; then one wake-up check for the
    /// chunk. After shutdown the tasks go to the closed injector, which
    /// drops them, as `inject` does. The order promise of `inject` holds:
    /// the ring's owner still never posts to the injector (but after
    /// shutdown).
    fn inject_batch(&self, tasks: &mut Vec<Runnable>) {
        if tasks.is_empty() {
            return;
        }
        if !self.is_shutdown() {
            let key = context::thread_key();
            if self.posting.try_push_many(key, tasks, self) {
                self.notify_one();
                self.take_back_after_shutdown(key);
                return;
            }
        }
        let mut queued = false;
        for task in tasks.drain(..) {
            match self.injector.push(task) {
                Ok(()) => queued = true,
                Err(PushError::Closed(task) | PushError::Full(task)) => drop(task),
            }
        }
        if queued {
            self.notify_one();
        }
    }

    /// Builds `future` into a task of this executor, not yet queued: the
    /// default path's task, whose schedule function holds only the id.
    pub(crate) fn build_plain<F>(
        &self,
        future: F,
        membership: Option<MembershipArc>,
    ) -> (Runnable, RawHandle<F::Output>)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let future = TaskFuture::new(future, membership);
        let executor = self.id;
        let schedule = WithInfo(move |task: Runnable, info: ScheduleInfo| {
            schedule_woken(executor, task, info.woken_while_running)
        });
        async_task::Builder::new().spawn(move |()| future, schedule)
    }

    /// Builds `future` into a task counted as spawned (and in the groups of
    /// `membership`) but not queued: a dependent's, which its last
    /// dependency queues with [`Runnable::schedule`] (as a wake would, by
    /// the task's own schedule function). Dropping the runnable instead
    /// drops the task's future unpolled.
    pub(crate) fn build<F>(
        self: &Arc<Self>,
        future: F,
        membership: Option<MembershipArc>,
        worker: Option<&Worker>,
    ) -> (Runnable, RawTask<F::Output>)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        if self.ext.decorates() {
            let options = crate::task::builder::Options::default();
            return crate::task::builder::build_decorated(
                self, future, membership, worker, &options, None,
            );
        }
        let (task, handle) = self.build_plain(future, membership);
        self.ext.counters.count_spawn(worker);
        (task, handle.fallible())
    }

    /// Queues a new task: the back of this worker's ring, or the injector.
    pub(crate) fn schedule_new(&self, task: Runnable) {
        if !context::is_worker_of(self.id) {
            return self.inject(task);
        }
        context::with_worker(|worker| match worker {
            Some(worker) if std::ptr::eq(worker.shared(), self) => worker.push_new(task),
            _ => self.inject(task),
        })
    }

    /// Queues a woken task of this executor (for schedule functions that
    /// hold the `Arc`, as the decorated path's do; the default path's hold
    /// only the id, see [`schedule_woken`]).
    pub(crate) fn schedule_woken(&self, task: Runnable, woke_itself: bool) {
        if !context::is_worker_of(self.id) {
            return self.inject(task);
        }
        context::with_worker(|worker| match worker {
            Some(worker) if worker.shared().id == self.id => {
                worker.schedule_woken(task, woke_itself)
            }
            _ => self.inject(task),
        })
    }

    /// Queues a task from outside the workers and wakes a worker: in the
    /// outside poster's ring if this thread owns it (or is the first to
    /// post), else in the injector. After shutdown, drops the task instead
    /// (which drops its future).
    ///
    /// Order: with one worker, tasks posted by one thread start in the order
    /// they were posted. The ring's owner never posts to the injector (but
    /// after shutdown); a full ring sends its older half to the overflow
    /// queue, so what it sent there is older than what it holds; and a
    /// worker looks at the overflow queue before the ring (`worker.rs`).
    /// (The one exception: a worker that found the overflow queue empty and
    /// then takes from the ring while the owner, meanwhile, filled it to
    /// overflowing starts those newer tasks first.)
    #[inline]
    fn inject(&self, task: Runnable) {
        let task = if !self.is_shutdown() {
            let key = context::thread_key();
            match self.posting.try_push(key, task, self) {
                Ok(()) => {
                    self.notify_one();
                    self.take_back_after_shutdown(key);
                    return;
                }
                Err(task) => task,
            }
        } else {
            task
        };
        match self.injector.push(task) {
            Ok(()) => self.notify_one(),
            Err(PushError::Closed(task) | PushError::Full(task)) => drop(task),
        }
    }

    /// Queues a task that woke itself (or that the running task's
    /// completion woke, or that the LIFO slot gave back) on a worker whose
    /// ring has no room for the work waiting elsewhere at the back of the
    /// injector (worker.rs,
    /// "A full ring"): never into the outside poster's ring, whose order
    /// promise is for tasks its owner posted.
    pub(crate) fn requeue_outside(&self, task: Runnable) {
        match self.injector.push(task) {
            // A lone worker is the one pushing: no one to wake (and no
            // `SeqCst` fence for each requeue while the mark lasts).
            Ok(()) if self.workers() == 1 => {}
            Ok(()) => self.notify_one(),
            // After shutdown, dropping the task drops its future, as `inject` does.
            Err(PushError::Closed(task) | PushError::Full(task)) => drop(task),
        }
    }

    /// The ring owner's half of the shutdown hand-over: the executor may
    /// have drained the ring for the last time just before this thread's
    /// push, so if it is shutting down the owner drops what it left there.
    /// The check reads the flag after `notify_one`'s `SeqCst` fence, which
    /// follows the push; `Executor::drop` stores the flag `SeqCst` and
    /// fences before it drains the ring: either this read sees the flag or
    /// that drain sees the push (the store-buffering shape, which is why
    /// both sides are `SeqCst`).
    #[inline]
    fn take_back_after_shutdown(&self, key: u64) {
        if self.is_shutdown() {
            self.posting.drain_as(key, drop);
        }
    }

    /// Step 3 and 4 of the shutdown sequence (module docs). With
    /// `await_wakes`, also waits for wakes from other threads that were
    /// under way (see the module docs).
    fn drop_remaining_tasks(&self, await_wakes: bool) {
        for waker in self.registry.close() {
            waker.wake();
        }
        loop {
            self.drain_queues();
            self.ext.drain_queued();
            if !await_wakes || self.registry.outstanding() == 0 {
                break;
            }
            // A parked task whose wake from another thread had begun when
            // `close` woke it: it reaches a queue (or is dropped by the
            // waking thread) within that thread's next few instructions.
            thread::yield_now();
        }
        self.injector.close();
        self.overflow.close();
        self.drain_queues();
        self.ext.drop_remaining_tasks();
    }

    fn drain_queues(&self) {
        // SeqCst: pairs with the fence in the ring owner's push
        // (`take_back_after_shutdown`): the ring is read after the
        // shutdown flag's store.
        fence(SeqCst);
        let (spare, _) = queue::local();
        while self.posting.stealer().steal_batch_into(&spare) > 0 {
            while let Some(task) = spare.pop() {
                drop(task);
            }
        }
        while let Ok(task) = self.injector.pop() {
            drop(task);
        }
        while let Ok(batch) = self.overflow.pop() {
            drop(batch);
        }
    }
}

/// Pops from `queue` unless it looks empty. `ConcurrentQueue::pop` on an
/// empty queue issues a full fence before it finds nothing; a worker whose
/// ring runs dry looks at the overflow queue (nearly always empty) every
/// time, and the priority queues (empty unless priorities are used) before
/// it parks, so the two plain loads of `is_empty` go first. (Not for the
/// injector: when tasks come from outside it is seldom empty, and there
/// the check would only add loads.)
/// A stale "empty" is no worse than a pop an instant earlier: that no work
/// is stranded rests on the idle protocol's own fences (`idle.rs`).
pub(crate) fn pop_unless_empty<T>(queue: &ConcurrentQueue<T>) -> Option<T> {
    if queue.is_empty() {
        return None;
    }
    queue.pop().ok()
}

/// Tasks per overflow batch: half a ring in two. Small enough that glibc
/// serves the buffer (512 bytes) from its small bins: buffers of a kilobyte
/// or more (half a ring in one piece) made every overflow consolidate the
/// allocator's free lists. Batches of 32 cost ~10 instructions more per
/// overflowed task (an allocation and a queue push and pop per 32 tasks).
pub(crate) const OVERFLOW_BATCH: usize = 64;

/// Queues a task of executor `id` that was woken: on one of that executor's
/// workers, in its queues; elsewhere, in the executor's injector, or if the
/// executor is gone, nowhere (the task is dropped).
fn schedule_woken(id: u64, task: Runnable, woke_itself: bool) {
    // On one of its workers the worker is there unless its thread is being
    // torn down; then, as from any other thread, the task goes through the
    // table of live executors.
    let not_queued = if context::is_worker_of(id) {
        context::with_worker(|worker| match worker {
            Some(worker) => {
                worker.schedule_woken(task, woke_itself);
                None
            }
            None => Some(task),
        })
    } else {
        Some(task)
    };
    let Some(task) = not_queued else { return };
    match live::find(id) {
        Some(shared) => shared.inject(task),
        None => drop(task),
    }
}

/// The table of live executors, by id, for wakes from threads that are not
/// the executor's workers (see the module docs).
mod live {
    use std::collections::HashMap;
    // Not the loom shim: the table is not part of any model, and its
    // `static`s need const constructors.
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::{Arc, PoisonError, RwLock};

    use super::Shared;

    static EXECUTORS: RwLock<Option<HashMap<u64, Arc<Shared>>>> = RwLock::new(None);

    /// Ids are never reused, so a stale id cannot reach a newer executor.
    pub(super) fn next_id() -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // Relaxed: only uniqueness matters, which the RMW gives.
        NEXT.fetch_add(1, Relaxed)
    }

    pub(super) fn insert(shared: Arc<Shared>) {
        let mut table = EXECUTORS.write().unwrap_or_else(PoisonError::into_inner);
        table
            .get_or_insert_with(HashMap::new)
            .insert(shared.id, shared);
    }

    pub(super) fn remove(id: u64) -> Option<Arc<Shared>> {
        let mut table = EXECUTORS.write().unwrap_or_else(PoisonError::into_inner);
        table.as_mut()?.remove(&id)
    }

    pub(super) fn find(id: u64) -> Option<Arc<Shared>> {
        let table = EXECUTORS.read().unwrap_or_else(PoisonError::into_inner);
        table.as_ref()?.get(&id).cloned()
    }
}

impl Overflow<Runnable> for Shared {
    // Out of line: it runs once per half ring of pushes, and inlined into
    // `Local::push_back` it makes the push every spawn runs larger and
    // slower (spawn_many_local, 1 thread: 769-773 instructions per task
    // when it was, 748 out of line; scripts/instr-per-task).
    //
    // Each chunk is filled by one `extend` of a known length (the ring's
    // iterator is exact), which writes the tasks without a capacity test
    // per task: chunking through `peekable` and `collect` cost ~23
    // instructions for every task a burst of spawns overflows.
    //
    // After shutdown the closed queue refuses a chunk, and dropping it
    // drops its tasks, whose futures' destructors may spawn into the very
    // ring the batch comes from (which moved it out of its slots before the
    // call: `Overflow`): the rest of the batch is dropped with it.
    #[inline(never)]
    fn push_batch(&self, batch: impl Iterator<Item = Runnable>) {
        let mut batch = batch;
        loop {
            let mut chunk = Vec::with_capacity(OVERFLOW_BATCH);
            chunk.extend(batch.by_ref().take(OVERFLOW_BATCH));
            let full = chunk.len() == OVERFLOW_BATCH;
            if !chunk.is_empty() {
                if let Err(PushError::Closed(mut chunk) | PushError::Full(mut chunk)) =
                    self.overflow.push(chunk)
                {
                    chunk.extend(batch);
                    drop(chunk);
                    return;
                }
            }
            if !full || batch.size_hint().1 == Some(0) {
                return;
            }
        }
    }
}

/// A set of worker threads running tasks, with work stealing.
///
/// Most programs use the global executor through [`spawn`](crate::spawn) and
/// [`block_on`](crate::block_on); build one with [`Executor::builder`] to
/// choose the number of threads or to shut it down deterministically.
///
/// Dropping an `Executor` stops and joins its threads and drops the future of
/// every unfinished task before it returns, including tasks parked on wakers
/// held elsewhere and tasks that another thread is waking at that moment.
/// The one exception is a drop made inside one of its own tasks (the task
/// holds the last `Arc` to its executor, say): the future of that task (and
/// of any task of this executor whose poll is under way beneath it on that
/// thread, through a nested `block_on`) is alive at least until the drop
/// returns, and the drop cannot wait for anything without waiting for
/// itself, so a parked task that another thread is waking at that moment
/// may still be being dropped on that thread after the drop returned.
///
/// ```
/// let executor = fastexec::Executor::builder().threads(2).build().unwrap();
/// let total = executor.block_on(async {
///     let parts: Vec<_> = (0..4u64).map(|i| fastexec::spawn(async move { i * 10 })).collect();
///     let mut total = 0;
///     for part in parts {
///         total += part.await.unwrap();
///     }
///     total
/// });
/// assert_eq!(total, 60);
/// ```
pub struct Executor {
    shared: Arc<Shared>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Executor {
    /// A builder with the default settings.
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Spawns `future` onto this executor. Inside a task or a `block_on`,
    /// the new task joins the current task groups. From any other thread
    /// it starts at once, with no `block_on` needed; await its handle from
    /// async code, or block on it.
    ///
    /// ```
    /// let executor = fastexec::Executor::builder().threads(2).build().unwrap();
    /// let handle = executor.spawn(async { 6 * 7 });
    /// assert_eq!(executor.block_on(handle).unwrap(), 42);
    /// ```
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.shared.spawn(future, context::membership(), None)
    }

    /// Spawns every future of `futures` onto this executor, in order, and
    /// adds their handles to `handles`, in the same order: what calling
    /// [`spawn`](Executor::spawn) for each would do, for less per task (the
    /// tasks are queued in chunks, each with one queue operation and one
    /// wake-up check). Inside a task or a `block_on` the tasks join the
    /// current task groups, so an enclosing `block_on` waits for them;
    /// hooks and metrics see each task as they would a `spawn`.
    ///
    /// The tasks of a chunk start when the chunk is queued: while the
    /// iterator is still running for a big batch, at the latest when this
    /// returns. So, unlike a loop of `spawn`, the iterator must not wait
    /// for something an earlier future of the same batch does: that task
    /// may not be queued yet. A handle is added as soon as its task is built, so if the
    /// iterator panics midway, `handles` holds the handle of every task
    /// already created, and those tasks are queued (and so run) before the
    /// panic leaves this call. After the executor has shut down, the handles
    /// report their tasks cancelled, as `spawn`'s would.
    ///
    /// For a batch whose handles are not needed, see
    /// [`detach_many`](Executor::detach_many).
    ///
    /// ```
    /// let executor = fastexec::Executor::builder().threads(2).build().unwrap();
    /// let mut handles = Vec::new();
    /// executor.spawn_many((0..100u64).map(|i| async move { i * i }), &mut handles);
    /// let squares: Vec<u64> = executor.block_on(async {
    ///     let mut squares = Vec::new();
    ///     for handle in handles {
    ///         squares.push(handle.await.unwrap());
    ///     }
    ///     squares
    /// });
    /// assert_eq!(squares[9], 81);
    /// assert_eq!(squares.len(), 100);
    /// ```
    pub fn spawn_many<I, F>(&self, futures: I, handles: &mut impl Extend<JoinHandle<F::Output>>)
    where
        I: IntoIterator<Item = F>,
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let membership = context::membership();
        let mut handles = batch::Collect(handles);
        batch::spawn_many(&self.shared, futures, membership, None, &mut handles);
    }

    /// Spawns every future of `futures` onto this executor, detached, in
    /// order: [`spawn_many`](Executor::spawn_many) without the handles, for
    /// fire-and-forget batches (a million tasks need not leave a million
    /// handles behind). The tasks still count in the current task groups,
    /// so a `block_on` they were spawned in waits for them.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let executor = fastexec::Executor::builder().threads(2).build().unwrap();
    /// let ran = Arc::new(AtomicUsize::new(0));
    /// executor.block_on(async {
    ///     fastexec::detach_many((0..1000).map(|_| {
    ///         let ran = ran.clone();
    ///         async move {
    ///             ran.fetch_add(1, Ordering::Relaxed);
    ///         }
    ///     }));
    /// }); // block_on waits for the detached tasks too
    /// assert_eq!(ran.load(Ordering::Relaxed), 1000);
    /// ```
    pub fn detach_many<I, F>(&self, futures: I)
    where
        I: IntoIterator<Item = F>,
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let membership = context::membership();
        batch::spawn_many(&self.shared, futures, membership, None, &mut batch::Detach);
    }

    /// Runs `future` to completion on this thread, then waits for every task
    /// it spawned, transitively. See [`block_on`](crate::block_on).
    ///
    /// Inside the future, [`spawn`](crate::spawn) and the other free
    /// functions use this executor. Called from a task of another executor,
    /// it blocks that task's worker meanwhile (the worker runs none of its
    /// own executor's tasks until it returns), as on any thread that is
    /// not one of this executor's workers.
    ///
    /// ```
    /// let executor = fastexec::Executor::builder().threads(1).build().unwrap();
    /// let name = executor.block_on(async {
    ///     fastexec::spawn(async { std::thread::current().name().map(String::from) })
    ///         .await
    ///         .unwrap()
    /// });
    /// assert_eq!(name.as_deref(), Some("fastexec-worker-0"));
    /// ```
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        crate::block_on::block_on(&self.shared, future)
    }

    /// The shared state, for the spawn paths of other modules (`deps`,
    /// `task::Builder`).
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.shared.workers()
    }

    /// Runs a blocking closure on this executor's blocking pool. See
    /// [`spawn_blocking`](crate::spawn_blocking).
    ///
    /// ```
    /// let executor = fastexec::Executor::builder().threads(1).build().unwrap();
    /// let job = executor.spawn_blocking(|| std::fs::metadata(".").is_ok());
    /// assert!(executor.block_on(job).unwrap());
    /// ```
    pub fn spawn_blocking<F, T>(&self, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        spawn_blocking_on(&self.shared, f)
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // SeqCst: the Release half pairs with the Acquire load in
        // `is_shutdown`, so a worker that sees the flag sees everything done
        // before the drop; SeqCst also orders the store before the fence
        // ahead of the last drains of the outside poster's ring (see
        // `take_back_after_shutdown`: a store then a read on each side).
        self.shared.shutdown.store(true, SeqCst);
        self.shared.ext.begin_shutdown();
        for unparker in self.shared.unparkers.iter() {
            unparker.unpark();
        }
        let current = thread::current().id();
        for handle in self.threads.drain(..) {
            // Dropped from one of its own tasks: that thread exits when the
            // task returns; joining it here would wait for ourselves.
            if handle.thread().id() != current {
                let _ = handle.join();
            }
        }
        {
            // The futures dropped here run their destructors on this thread;
            // a spawn from one of them must reach this executor (whose
            // closed queues drop it), not the global one, where it would
            // outlive its executor. (On one of our own workers the spawn
            // already goes to that worker's ring, which the drain below
            // empties. One that a `block_on` of another executor set aside
            // is ours again once entered, wakes and spawns included.)
            let entered = context::is_worker_of(self.shared.id);
            let own_worker = context::worker_of(&self.shared);
            let on_own_worker = entered || own_worker.is_some();
            let _executor = (!entered).then(|| context::enter_executor(self.shared.clone()));
            // On one of its own workers, that worker's tasks are still in
            // its ring, and so are the parked tasks that step's wakes queue
            // there; the task running this drop is alive: waiting for every
            // parked task would wait for ourselves. So does a
            // simple-scheduler task that a `block_on` runs on some other
            // thread: the drop runs there, inside it.
            let in_own_task = on_own_worker || self.shared.ext.runs_simple_task_here();
            self.shared.drop_remaining_tasks(!in_own_task);
            // Those wakes queued the parked tasks in this worker's ring,
            // which the worker drains only when it exits, after the task
            // running this drop returns: a task that waits for them first
            // (a group they are in; set aside by a `block_on` of another
            // executor, that `block_on`, which waits for the tasks its root
            // spawned) would wait for good. Drained here, they are dropped
            // now (tasks their destructors spawn come back here).
            if let Some(worker) = own_worker {
                worker.drain();
            }
        }
        // From here on, a wake from another thread drops its task at once.
        drop(live::remove(self.shared.id));
        // Timers still registered belong to futures that outlive the
        // executor: no one would fire them. Wake them, so that they register
        // with the executor they are polled under next.
        self.shared.timers.close();
        // Runs the blocking jobs already queued, then joins the pool.
        self.shared.blocking.shutdown();
    }
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (unparked, searching) = self.shared.idle.counts();
        f.debug_struct("Executor")
            .field("threads", &self.threads())
            .field("unparked", &unparked)
            .field("searching", &searching)
            .field("injected", &self.shared.outside_len())
            .field("parked_tasks", &self.shared.registry.len())
            .finish()
    }
}

/// Configures and starts an [`Executor`].
///
/// Invalid sizes ([`threads`](Builder::threads) of 0,
/// [`max_blocking_threads`](Builder::max_blocking_threads) of 0) panic at
/// once, as a programming error; [`build`](Builder::build) returns the
/// operating system's error if a thread cannot be started; settings read
/// from the environment ([`from_env`](Builder::from_env)) give an
/// [`EnvError`] instead.
///
/// ```
/// let executor = fastexec::Executor::builder()
///     .threads(2)
///     .thread_name("compute")
///     .max_blocking_threads(4)
///     .build()
///     .expect("threads started");
/// assert_eq!(executor.threads(), 2);
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    threads: Option<usize>,
    thread_name: String,
    max_blocking_threads: usize,
    /// Hooks, latency histogram, scheduler and seed (`ext.rs`).
    pub(crate) ext: ExtConfig,
}

/// How long an idle blocking-pool thread waits for work before it exits.
const BLOCKING_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(10);

/// The environment variable that sets the global executor's thread count.
pub const WORKERS_ENV: &str = "FASTEXEC_WORKERS";

/// A bad value in one of fastexec's environment variables.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}={value:?} is invalid: expected {expected}")]
pub struct EnvError {
    /// The variable's name.
    pub variable: &'static str,
    /// The value found.
    pub value: String,
    /// What was expected instead.
    pub expected: &'static str,
}

impl Builder {
    /// Default settings: one thread per available core, threads named
    /// `fastexec-worker-N`.
    pub fn new() -> Builder {
        Builder {
            threads: None,
            thread_name: "fastexec-worker".to_string(),
            max_blocking_threads: 64,
            ext: ExtConfig::default(),
        }
    }

    /// Settings from the environment: `FASTEXEC_WORKERS` threads if set,
    /// and the scheduler and seed from `FASTEXEC_SCHEDULER` and
    /// `FASTEXEC_SEED` (see [`Scheduler`](crate::Scheduler)).
    ///
    /// # Errors
    ///
    /// An [`EnvError`] naming a variable with a bad value, and the
    /// value: `FASTEXEC_WORKERS` not a whole number from 1 to 65535,
    /// `FASTEXEC_SCHEDULER` neither `work-stealing` nor `simple`, or
    /// `FASTEXEC_SEED` not a `u64`; a value that is not Unicode is bad
    /// too (its bad bytes shown as U+FFFD).
    pub fn from_env() -> Result<Builder, EnvError> {
        // A value that is not Unicode comes with its bad bytes replaced
        // (U+FFFD), so that it fails to parse and is reported, rather than
        // read as unset.
        Builder::from_lookup(|name| {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        })
    }

    /// As [`from_env`](Builder::from_env), reading each variable through
    /// `lookup` (a name to its value, `None` if unset): for tests, or for
    /// settings that come from somewhere else.
    ///
    /// # Errors
    ///
    /// As [`from_env`](Builder::from_env).
    ///
    /// ```
    /// use fastexec::{Builder, Scheduler};
    ///
    /// let env = |name: &str| match name {
    ///     "FASTEXEC_SCHEDULER" => Some("simple".to_string()),
    ///     "FASTEXEC_SEED" => Some("42".to_string()),
    ///     _ => None,
    /// };
    /// let executor = Builder::from_lookup(env).unwrap().build().unwrap();
    /// assert_eq!(executor.scheduler(), Scheduler::Simple);
    /// assert_eq!(executor.seed(), Some(42));
    ///
    /// let err = Builder::from_lookup(|name| (name == "FASTEXEC_SEED").then(|| "x".into()));
    /// assert_eq!(err.unwrap_err().variable, "FASTEXEC_SEED");
    /// ```
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Builder, EnvError> {
        let builder = Builder::new().apply_env_ext(&lookup)?;
        match lookup(WORKERS_ENV) {
            Some(value) => match value.trim().parse::<usize>() {
                Ok(n) if n > 0 && n <= 65_535 => Ok(builder.threads(n)),
                _ => Err(EnvError {
                    variable: WORKERS_ENV,
                    value,
                    expected: "a whole number of worker threads from 1 to 65535",
                }),
            },
            None => Ok(builder),
        }
    }

    /// The number of worker threads (at least 1).
    ///
    /// # Panics
    ///
    /// If `n` is 0 or more than 65,535.
    ///
    /// ```should_panic
    /// // An executor with no thread could never run a task.
    /// let _ = fastexec::Executor::builder().threads(0);
    /// ```
    pub fn threads(mut self, n: usize) -> Builder {
        assert!(
            n > 0 && n <= 65_535,
            "an executor needs 1 to 65535 threads, got {n}"
        );
        self.threads = Some(n);
        self
    }

    /// The most threads the blocking pool may run at once (default 64;
    /// idle ones exit after 10 s).
    ///
    /// # Panics
    ///
    /// If `n` is 0.
    pub fn max_blocking_threads(mut self, n: usize) -> Builder {
        assert!(n > 0, "the blocking pool needs at least one thread");
        self.max_blocking_threads = n;
        self
    }

    /// The prefix of the worker threads' names; each gets `-N` appended.
    pub fn thread_name(mut self, prefix: impl Into<String>) -> Builder {
        self.thread_name = prefix.into();
        self
    }

    /// Starts the worker threads.
    ///
    /// # Errors
    ///
    /// An [`io::ErrorKind::InvalidInput`] error if the
    /// [`thread_name`](Builder::thread_name) prefix holds a NUL, which no
    /// thread's name can, or if the simple scheduler, given no
    /// [`seed`](Builder::seed), finds `FASTEXEC_SEED` set to something
    /// other than a `u64` (the error wraps the [`EnvError`]); the
    /// operating system's error if it refuses to start a thread (the
    /// threads already started are stopped and joined).
    pub fn build(mut self) -> io::Result<Executor> {
        self.ext
            .seed_from_env_if_unset()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        if self.thread_name.contains('\0') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "fastexec: the thread name prefix {:?} holds a NUL, which no thread's name can",
                    self.thread_name
                ),
            ));
        }
        let workers = self
            .ext
            .forced_workers()
            .or(self.threads)
            .unwrap_or_else(|| thread::available_parallelism().map_or(1, |n| n.get()));
        // A lone worker's ring has no thief: the only steals from a
        // worker's ring are other workers' (`Worker::steal`; `block_on` on a
        // worker thread runs as that worker, outside threads never touch a
        // worker's ring, and the worker count is fixed here). So it pops
        // without a CAS (`queue/local.rs`, "A ring without thieves").
        let ring = if workers == 1 {
            queue::solo
        } else {
            queue::local
        };
        let (locals, stealers): (Vec<Local<Runnable>>, Vec<Steal<Runnable>>) =
            (0..workers).map(|_| ring()).unzip();
        // Likewise a lone worker's LIFO slot has no thief.
        let (slots, slot_thieves): (Vec<LifoSlot<Runnable>>, Vec<LifoSteal<Runnable>>) =
            (0..workers).map(|_| LifoSlot::new(workers == 1)).unzip();
        let parkers: Vec<Parker> = (0..workers).map(|_| Parker::new()).collect();
        let shared = Arc::new_cyclic(|weak: &Weak<Shared>| {
            let weak = weak.clone();
            let hook = move || {
                if let Some(shared) = weak.upgrade() {
                    shared.on_earlier_deadline();
                }
            };
            Shared {
                id: live::next_id(),
                injector: ConcurrentQueue::unbounded(),
                posting: Posting::new(),
                overflow: ConcurrentQueue::unbounded(),
                stealers: stealers.into_boxed_slice(),
                slot_thieves: slot_thieves.into_boxed_slice(),
                unparkers: parkers.iter().map(Parker::unparker).collect(),
                idle: Idle::new(workers),
                registry: Registry::new(workers),
                shutdown: AtomicBool::new(false),
                timers: Arc::new(TimerQueue::new(Box::new(hook))),
                blocking: BlockingPool::new(
                    self.max_blocking_threads,
                    BLOCKING_KEEP_ALIVE,
                    format!("{}-blocking", self.thread_name),
                ),
                timer_holder: AtomicUsize::new(NO_TIMER_HOLDER),
                ext: Extensions::new(&self.ext, workers),
            }
        });
        live::insert(shared.clone());
        let mut executor = Executor {
            shared: shared.clone(),
            threads: Vec::with_capacity(workers),
        };
        let queues = locals.into_iter().zip(slots);
        for (index, ((local, slot), parker)) in queues.zip(parkers).enumerate() {
            let shared = shared.clone();
            let handle = thread::Builder::new()
                .name(format!("{}-{index}", self.thread_name))
                .spawn(move || worker::thread_main(shared, index, (local, slot), parker))?;
            executor.threads.push(handle);
        }
        Ok(executor)
    }
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

static GLOBAL: OnceLock<Executor> = OnceLock::new();

/// The global executor, started on first use from the environment
/// ([`Builder::from_env`]): `FASTEXEC_WORKERS` threads (default: available
/// parallelism), `FASTEXEC_SCHEDULER`, `FASTEXEC_SEED`.
///
/// # Panics
///
/// If one of those variables is invalid, or the threads cannot be started.
pub(crate) fn global() -> &'static Executor {
    GLOBAL.get_or_init(|| {
        let builder = Builder::from_env().unwrap_or_else(|e| panic!("fastexec: {e}"));
        builder
            .build()
            .unwrap_or_else(|e| panic!("fastexec: cannot start the global executor: {e}"))
    })
}

/// Runs `f` with the executor of the current context, or the global one.
pub(crate) fn with_current<R>(f: impl FnOnce(&Arc<Shared>) -> R) -> R {
    context::with_executor(|shared, _| match shared {
        Some(shared) => f(shared),
        None => f(&global().shared),
    })
}

/// The executor of the current context, or the global one, as an owned
/// handle (for callers that may change the context while they hold it).
pub(crate) fn current() -> Arc<Shared> {
    with_current(Arc::clone)
}

/// The number of worker threads of the executor [`spawn`] would use here:
/// inside a task or a `block_on`, that executor's; elsewhere the global
/// executor's, or `None` if it has not started yet (it starts on first use,
/// with `FASTEXEC_WORKERS` threads). Asking never starts it.
///
/// For code that sizes its own concurrency to the executor it runs on (the
/// [`graph`](crate::graph) layer starts at most this many runners).
///
/// ```
/// let executor = fastexec::Executor::builder().threads(3).build().unwrap();
/// let inside = executor.block_on(async { fastexec::current_threads() });
/// assert_eq!(inside, Some(3));
/// ```
pub fn current_threads() -> Option<usize> {
    context::with_executor(|shared, _| match shared {
        Some(shared) => Some(shared.workers()),
        None => GLOBAL.get().map(Executor::threads),
    })
}

/// Spawns onto the current executor with an explicit membership.
pub(crate) fn spawn_with_membership<F>(
    future: F,
    membership: Option<MembershipArc>,
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    // A worker's task spawning (the common case) holds its worker by a
    // counted reference for the spawn, not inside the thread-local's
    // borrow: that kept the whole spawn inside `LocalKey::with`'s closure.
    if let Some(worker) = context::own_worker() {
        return worker.shared_arc().spawn(future, membership, Some(&worker));
    }
    context::with_executor(|shared, worker| match shared {
        Some(shared) => shared.spawn(future, membership, worker),
        None => global().shared.spawn(future, membership, None),
    })
}

/// Runs a blocking closure on the current executor's blocking pool, so that
/// no worker thread blocks; the pool grows on demand up to a bound
/// ([`Builder::max_blocking_threads`]) and idle threads exit after a
/// keep-alive. Dropping the executor runs the queued jobs (but those of a
/// cancelled group, see below) and joins the pool.
///
/// The job runs in the executor's context, as a task does: inside it,
/// [`spawn`] and [`block_on`](crate::block_on) use this executor (not the
/// global one). Called inside a task or a `block_on`, the job counts in the
/// current task groups, as a spawned task would, and so does what it
/// spawns: an enclosing `block_on` or
/// [`TaskGroup::wait`](crate::TaskGroup::wait) waits until it has run, also
/// when its handle was dropped or detached. A closure cannot be stopped
/// midway, so [`TaskGroup::cancel`](crate::TaskGroup::cancel) and
/// [`JoinHandle::abort`] only keep a job from starting: one that a pool
/// thread had not yet started when a group it counts in was cancelled (or
/// that was spawned into a cancelled group) never runs, and its handle
/// reports a cancelled [`JoinError`](crate::JoinError); a running job runs
/// to its end (after an abort, its output dropped). A job that never runs is
/// dropped in the same executor and groups, and so is the value of a
/// detached job, so a task their destructors spawn goes where one the job
/// spawned would.
///
/// ```
/// let len = fastexec::block_on(async {
///     fastexec::spawn_blocking(|| std::fs::read_dir(".").map(|d| d.count()).unwrap_or(0))
///         .await
///         .unwrap()
/// });
/// assert!(len > 0);
/// ```
///
/// # Panics
///
/// As [`spawn`] when the global executor is needed and cannot start.
pub fn spawn_blocking<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    with_current(|shared| spawn_blocking_on(shared, f))
}

/// Runs `f` on the blocking pool of `shared`, counted in the current task
/// groups until it has run and its value (or panic) is stored (or, never
/// started, until it is dropped): the guard moves into the job, which hands
/// it to its pool thread when it returns or unwinds, for release once the
/// pool's task has stored the value ([`ReleaseAfterStore`]), as a task's
/// completion hands its guard to its worker. The job
/// runs with `shared` as its thread's executor and the caller's groups
/// installed, as a task would, so that what it spawns (or `block_on`s)
/// goes to the same executor and counts in the same groups; a job dropped
/// unrun (aborted, or its pool shut down) is dropped the same way
/// ([`BlockingJob`]'s drop), and the value of a detached job is dropped
/// with the executor still entered ([`KeepExecutor`]) and the groups lent
/// out (`task::drop_output_caught`).
fn spawn_blocking_on<F, T>(shared: &Arc<Shared>, f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let membership = context::membership();
    let member = MemberGuard::enter(membership.clone());
    let job = BlockingJob {
        f: Some(f),
        executor: shared.clone(),
        membership,
        member: Some(member),
    };
    JoinHandle::new(
        shared
            .blocking
            .spawn_task(move || job.run().map(TaskOutput::new), Failure::panic),
    )
}

/// A `spawn_blocking` job: the closure, with the executor and the groups
/// it runs in (see [`spawn_blocking_on`]).
struct BlockingJob<F> {
    /// The closure, until it runs or is dropped.
    f: Option<F>,
    executor: Arc<Shared>,
    membership: Option<MembershipArc>,
    /// The job's place in its groups, until it runs or is dropped.
    member: Option<MemberGuard>,
}

impl<F: FnOnce() -> T, T> BlockingJob<F> {
    /// Runs the closure in the job's executor and groups, unless one of
    /// those groups was cancelled before it started: then the closure is
    /// dropped unrun (see `Drop`) and the job ends cancelled, its place in
    /// its groups let go of once that is stored, as for a job that ran.
    fn run(mut self) -> Result<T, Failure> {
        if self.member.as_ref().is_some_and(MemberGuard::is_cancelled) {
            let _member = ReleaseAfterStore(self.member.take());
            drop(self);
            return Err(Failure::Cancelled);
        }
        let f = self.f.take().expect("a blocking job runs once");
        let _executor = KeepExecutor(Some(context::enter_executor(self.executor.clone())));
        let _scope = BlockingScope(Some(context::replace_membership(self.membership.take())));
        let _member = ReleaseAfterStore(self.member.take());
        Ok(f())
    }
}

impl<F> Drop for BlockingJob<F> {
    /// Drops a closure that never ran in the job's executor and groups
    /// (less the cancelled ones, as for a task's future: see
    /// `task_group::for_destructor`),
    /// so that a task the destructor of what it captured spawns (a
    /// clean-up, say) goes where one the job spawned would, and an
    /// enclosing `block_on` waits for it. Then the job's place in its
    /// groups is let go of (the field drops after this). On a thread whose
    /// thread-local state is being torn down, the closure is dropped as it
    /// is. Either way, as for a task's future dropped unrun, a panic of
    /// what the closure captured is reported by the panic hook and
    /// otherwise discarded: the job ends cancelled (aborted, its pool shut
    /// down, or its group cancelled), not panicked.
    fn drop(&mut self) {
        let Some(f) = self.f.take() else {
            return;
        };
        let drop_caught = move || {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(move || drop(f))) {
                crate::task::drop_panic(panic);
            }
        };
        if !context::can_install_membership() {
            return drop_caught();
        }
        let _executor = context::enter_executor(self.executor.clone());
        let lent = crate::task_group::for_destructor(self.membership.as_ref());
        let _scope = BlockingScope(Some(context::replace_membership(lent)));
        drop_caught();
    }
}

/// Hands a blocking job's group guard to its pool thread when the job
/// returns or unwinds ([`context::stash_finished`]); the thread releases it
/// after the pool's task has stored the job's value or panic (the pool
/// calls [`context::release_finished`] after each job). Until then the
/// job's groups count it: a `block_on` or `TaskGroup::wait` that returns
/// finds its handle `is_finished`, and the value of a detached job dropped.
struct ReleaseAfterStore(Option<MemberGuard>);

impl Drop for ReleaseAfterStore {
    fn drop(&mut self) {
        if let Some(member) = self.0.take() {
            context::stash_finished(member);
        }
    }
}

/// Keeps a blocking job's executor entered on its pool thread when the job
/// returns or unwinds ([`context::keep_job_executor`]), until the pool has
/// stored its value or panic (the pool calls
/// [`context::release_job_executor`] after each job): a detached job's
/// value is dropped in between, in the job's executor, as a task's output
/// is dropped on its executor's worker.
struct KeepExecutor(Option<context::ExecutorGuard>);

impl Drop for KeepExecutor {
    fn drop(&mut self) {
        if let Some(guard) = self.0.take() {
            context::keep_job_executor(guard);
        }
    }
}

/// Puts a blocking-pool thread's own membership (none) back after a job,
/// also when the job panics.
struct BlockingScope(Option<Option<MembershipArc>>);

impl Drop for BlockingScope {
    fn drop(&mut self) {
        if let Some(outer) = self.0.take() {
            drop(context::replace_membership(outer));
        }
    }
}

/// Spawns every future of `futures` onto the current executor, in order,
/// and adds their handles to `handles` in the same order: [`spawn`] for
/// each, for less per task. See [`Executor::spawn_many`], which this is for
/// the executor `spawn` would use here.
///
/// ```
/// let mut handles = Vec::new();
/// fastexec::spawn_many(["a", "bb", "ccc"].map(|s| async move { s.len() }), &mut handles);
/// let lengths: Vec<usize> = handles.into_iter().map(|h| fastexec::block_on(h).unwrap()).collect();
/// assert_eq!(lengths, [1, 2, 3]);
/// ```
///
/// # Panics
///
/// As [`spawn`] when the global executor is needed and cannot start; and
/// with the iterator's panic (the tasks created before it still run).
pub fn spawn_many<I, F>(futures: I, handles: &mut impl Extend<JoinHandle<F::Output>>)
where
    I: IntoIterator<Item = F>,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_many_here(futures, &mut batch::Collect(handles));
}

/// Spawns every future of `futures` onto the current executor, detached,
/// in order: [`spawn_many`] without the handles. See
/// [`Executor::detach_many`].
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let ran = Arc::new(AtomicUsize::new(0));
/// fastexec::block_on(async {
///     fastexec::detach_many((0..100).map(|_| {
///         let ran = ran.clone();
///         async move {
///             ran.fetch_add(1, Ordering::Relaxed);
///         }
///     }));
/// });
/// assert_eq!(ran.load(Ordering::Relaxed), 100);
/// ```
///
/// # Panics
///
/// As [`spawn_many`].
pub fn detach_many<I, F>(futures: I)
where
    I: IntoIterator<Item = F>,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_many_here(futures, &mut batch::Detach);
}

/// The free functions' batch spawn: on this thread's worker when spawns go
/// to its executor (as [`spawn_with_membership`] finds it), else onto the
/// current executor.
fn spawn_many_here<I, F, H>(futures: I, handles: &mut H)
where
    I: IntoIterator<Item = F>,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    H: batch::Handles<F::Output>,
{
    let membership = context::membership();
    if let Some(worker) = context::own_worker() {
        let shared = worker.shared_arc();
        return batch::spawn_many(shared, futures, membership, Some(&worker), handles);
    }
    let shared = current();
    batch::spawn_many(&shared, futures, membership, None, handles);
}

/// Spawns a task onto the current executor.
///
/// Inside a task, or inside a `block_on`, the task goes to that executor and
/// joins the current task groups (so an enclosing `block_on` waits for it);
/// anywhere else it goes to the global executor, started on first use with
/// `FASTEXEC_WORKERS` threads (default: available parallelism).
///
/// ```
/// let handle = fastexec::spawn(async { 6 * 7 });
/// assert_eq!(fastexec::block_on(handle).unwrap(), 42);
/// ```
///
/// # Panics
///
/// When the global executor is needed and cannot start: one of
/// `FASTEXEC_WORKERS`, `FASTEXEC_SCHEDULER` or `FASTEXEC_SEED` has a bad
/// value (see [`Builder::from_env`]; the message names the variable and its
/// value), or the operating system refuses a thread.
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_with_membership(future, context::membership())
}
