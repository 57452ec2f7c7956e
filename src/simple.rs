//! The simple scheduler: one thread at a time runs tasks, in a seeded
//! pseudo-random order, so a failing interleaving can be replayed.
//!
//! Chosen with `FASTEXEC_SCHEDULER=simple` (global executor,
//! [`Builder::from_env`](crate::Builder::from_env)) or
//! [`Builder::scheduler`](crate::Builder::scheduler); the seed comes from
//! `FASTEXEC_SEED` or [`Builder::seed`](crate::Builder::seed), and when
//! neither gives one, a seed is drawn and printed once to stderr (a line
//! `fastexec: simple scheduler seed N ...`) and kept in
//! [`Executor::seed`](crate::Executor::seed).
//!
//! # Protocol
//!
//! Ready tasks wait in one set per [`Priority`], under one mutex, with the
//! random number generator. To run a task a thread must be the **owner**:
//!
//! * the executor's single worker thread becomes owner for one task at a
//!   time, and only when no `block_on` is waiting for ownership;
//! * `block_on` becomes owner for its whole duration (re-entrantly: a task
//!   calling `block_on` on the owning thread keeps ownership). In between
//!   polls of its root future it runs ready tasks itself, so the root future
//!   and every task it spawns run on the calling thread, interleaved by the
//!   one generator, with no second thread racing them.
//! * The one exception: an owner with no ready task and no wake of its root
//!   lends ownership to a `block_on` caller of another thread that waits for
//!   it (its root may be waiting for that very call), and takes it back once
//!   nobody owns and it has something to do; once its root is woken it
//!   waits for ownership as a caller does, so that an idle borrower lends
//!   it back (the borrower may be waiting for that root). Only programs
//!   that call `block_on` from several threads lend, and their order is
//!   not the seed's alone anyway.
//!
//! The owner polls the root future first whenever it was woken, except
//! right after polling it (a root that wakes itself, yielding until a task
//! it spawned has run, lets one ready task run in between), and otherwise
//! takes a task from the highest non-empty priority set, at the index the
//! generator draws. The generator (SplitMix64) is advanced only by
//! those draws, so with the same seed, the same program and the same
//! external events, tasks start in the same order, and every later poll
//! comes in the same order too (one thread runs them all, one draw per
//! pick; `tests/simple_replay_prop.rs` checks the whole log of polls). A
//! `block_on` entered from a task rather than from a plain thread makes
//! one more draw (the task's own pick), so the two give different orders
//! for one seed; each replays itself. What the seed cannot fix
//! is the timing of events from other threads: timers (their firing depends
//! on the clock), `spawn_blocking` results, tasks spawned by other threads,
//! and tasks spawned outside any `block_on`, which the worker thread runs
//! as soon as it sees them.
//!
//! Waiting: an owner with nothing to run, and the worker thread when it may
//! not run, wait on one condition variable, bounded by the nearest timer
//! deadline, and fire the due timers when they wake. Every push of a ready
//! task, every wake of a root future and every ownership release changes
//! the state (or, for a root's flag, takes the mutex) before it notifies, so
//! a waiter that checked under the lock either sees the change or is
//! already waiting when the notification comes.
//!
//! Shutdown: the executor's drop marks the state shut down and notifies;
//! the worker thread returns, tasks pushed from then on are dropped, and
//! the ready tasks are dropped (unrun) at the drop's step 4, with the
//! executor current on the dropping thread, outside the lock, since
//! dropping a future may wake others. From then on no thread waits for
//! ownership (no task runs any more), since the owner may be the
//! executor's drop itself, joining the waiter's thread (the worker, or a
//! blocking job's): an owner lending it gives it up without taking it
//! back, and a `block_on` that finds another owner goes on without it.

use std::cell::RefCell;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, ThreadId};
use std::time::Instant;

use crate::context;
use crate::executor::{EnvError, Shared};
use crate::park::wait_timeout;
use crate::sync::thread_local;
use crate::sync::{lock, AtomicBool, Condvar, Mutex, MutexGuard, Ordering::*};
use crate::task::Runnable;
use crate::Priority;

/// The environment variable that chooses the scheduler: `work-stealing`
/// (the default) or `simple`.
pub const SCHEDULER_ENV: &str = "FASTEXEC_SCHEDULER";

/// The environment variable that sets the simple scheduler's seed (a
/// `u64`).
pub const SEED_ENV: &str = "FASTEXEC_SEED";

/// Which scheduler an [`Executor`](crate::Executor) uses.
///
/// Chosen by [`Builder::scheduler`](crate::Builder::scheduler), or through
/// the environment by [`Builder::from_env`](crate::Builder::from_env) and
/// the global executor: `FASTEXEC_SCHEDULER=work-stealing` (the default) or
/// `simple`; any other value is an [`EnvError`] naming the variable and the
/// value.
///
/// # The simple scheduler
///
/// One thread at a time runs tasks, picking each next task at random among
/// the ready tasks of the highest priority, with a generator seeded by
/// [`Builder::seed`](crate::Builder::seed) or else `FASTEXEC_SEED` (a
/// `u64`, read at build time however the executor is built). Without a
/// seed, one is drawn at build time, kept in
/// [`Executor::seed`](crate::Executor::seed), and **printed once to stderr**
/// (`fastexec: simple scheduler seed N (set FASTEXEC_SEED=N to replay this
/// run)`), so a failing run can be re-run with it.
///
/// `block_on` takes the right to run tasks for its whole duration and runs
/// the ready tasks itself between polls of its future, on the calling
/// thread, so everything it spawns, transitively, starts in an order that
/// is a function of the seed alone: the same seed and the same program give
/// the same order. The executor's one worker thread runs tasks when no
/// `block_on` does (tasks spawned outside any `block_on`). What the seed
/// cannot replay is what other threads do at times of their own: timers
/// firing, `spawn_blocking` results, spawns from other threads.
///
/// ```
/// use fastexec::{Executor, Scheduler};
///
/// let executor = Executor::builder().scheduler(Scheduler::Simple).seed(7).build().unwrap();
/// assert_eq!(executor.seed(), Some(7));
/// assert_eq!(executor.threads(), 1);
/// assert_eq!(executor.block_on(async { fastexec::spawn(async { 5 }).await.unwrap() }), 5);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Scheduler {
    /// Worker threads with their own queues and stealing (`work-stealing`).
    #[default]
    WorkStealing,
    /// One thread at a time, in a seeded pseudo-random order of the ready
    /// tasks (`simple`); see [`Builder::seed`](crate::Builder::seed).
    Simple,
}

impl Scheduler {
    /// Parses a value of `FASTEXEC_SCHEDULER`.
    fn parse(value: &str) -> Result<Scheduler, EnvError> {
        match value.trim() {
            "work-stealing" => Ok(Scheduler::WorkStealing),
            "simple" => Ok(Scheduler::Simple),
            _ => Err(EnvError {
                variable: SCHEDULER_ENV,
                value: value.to_string(),
                expected: "`work-stealing` or `simple`",
            }),
        }
    }
}

/// The scheduler and seed set by `lookup` (an environment reader).
pub(crate) fn from_lookup(
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(Scheduler, Option<u64>), EnvError> {
    let scheduler = match lookup(SCHEDULER_ENV) {
        Some(value) => Scheduler::parse(&value)?,
        None => Scheduler::WorkStealing,
    };
    Ok((scheduler, seed_from_lookup(lookup)?))
}

/// The seed set by `lookup` (an environment reader) in `FASTEXEC_SEED`.
pub(crate) fn seed_from_lookup(
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<u64>, EnvError> {
    match lookup(SEED_ENV) {
        Some(value) => Ok(Some(value.trim().parse::<u64>().map_err(|_| EnvError {
            variable: SEED_ENV,
            value,
            expected: "a whole number from 0 to 18446744073709551615",
        })?)),
        None => Ok(None),
    }
}

/// A seed for a run that was not given one: different on every call.
pub(crate) fn draw_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// SplitMix64: tiny, fast, and every seed (including 0) gives a full-period
/// sequence.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The state under the scheduler's mutex.
struct State {
    /// Ready tasks by priority: low, normal, high.
    ready: [Vec<Runnable>; 3],
    rng: SplitMix64,
    /// The thread allowed to run tasks, and how many times it acquired.
    owner: Option<ThreadId>,
    depth: usize,
    /// `block_on` callers waiting to become owner, and lenders whose root
    /// was woken waiting to take ownership back; an idle owner lends to
    /// them, and the worker thread leaves ownership to them.
    claims: usize,
    shutdown: bool,
}

impl State {
    /// The next task: the highest non-empty priority, at a drawn index.
    fn pop(&mut self) -> Option<Runnable> {
        let ready = self.ready.iter_mut().rev().find(|r| !r.is_empty())?;
        let index = (self.rng.next() % ready.len() as u64) as usize;
        Some(ready.swap_remove(index))
    }

    fn len(&self) -> usize {
        self.ready.iter().map(Vec::len).sum()
    }
}

/// One executor's simple scheduler (see the module docs).
pub(crate) struct SimpleScheduler {
    seed: u64,
    state: Mutex<State>,
    changed: Condvar,
}

impl SimpleScheduler {
    pub(crate) fn new(seed: u64) -> Self {
        SimpleScheduler {
            seed,
            state: Mutex::new(State {
                ready: Default::default(),
                rng: SplitMix64(seed),
                owner: None,
                depth: 0,
                claims: 0,
                shutdown: false,
            }),
            changed: Condvar::new(),
        }
    }

    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }

    pub(crate) fn ready_len(&self) -> usize {
        lock(&self.state).len()
    }

    /// Makes `task` ready; after shutdown, gives it back, for the caller
    /// to drop (with the executor current: see `task::builder::enqueue`).
    pub(crate) fn push(&self, task: Runnable, priority: Priority) -> Option<Runnable> {
        let mut state = lock(&self.state);
        if state.shutdown {
            return Some(task);
        }
        state.ready[priority as usize].push(task);
        drop(state);
        self.changed.notify_all();
        None
    }

    /// Wakes every waiter (a timer deadline moved, or shutdown).
    pub(crate) fn notify(&self) {
        drop(lock(&self.state));
        self.changed.notify_all();
    }

    /// Refuses new tasks (a push drops its task); the worker thread returns
    /// at its next look. The ready tasks stay until [`shut_down`]: this
    /// runs before the executor's drop makes itself the dropping thread's
    /// current executor, so a task spawned by a ready task's destructor
    /// here would go to the global executor and outlive this one.
    ///
    /// [`shut_down`]: SimpleScheduler::shut_down
    pub(crate) fn begin_shut_down(&self) {
        lock(&self.state).shutdown = true;
        self.changed.notify_all();
    }

    /// Refuses new tasks and drops the ready ones; the worker thread
    /// returns at its next look.
    pub(crate) fn shut_down(&self) {
        let mut state = lock(&self.state);
        state.shutdown = true;
        let dropped: Vec<Vec<Runnable>> = state.ready.iter_mut().map(std::mem::take).collect();
        drop(state);
        self.changed.notify_all();
        drop(dropped);
    }

    /// Whether this thread is running one of this scheduler's tasks: it
    /// owns the scheduler and is inside a [`run`] of one of its tasks (on
    /// the worker thread, or on a `block_on` caller's thread, which runs
    /// tasks too), not only of another executor's. The executor's drop,
    /// called from such a task, must not wait for that task's own future to
    /// be dropped.
    pub(crate) fn runs_task_here(&self) -> bool {
        let me = self.address();
        let running = RUNNING_TASKS
            .try_with(|r| r.borrow().contains(&me))
            .unwrap_or(false);
        running && lock(&self.state).owner == Some(thread::current().id())
    }

    /// This scheduler's address: its entry in [`RUNNING_TASKS`].
    fn address(&self) -> usize {
        self as *const SimpleScheduler as usize
    }

    /// Waits for a change, no longer than the nearest timer; fires the due
    /// timers (without the lock: firing wakes tasks, which lock).
    fn wait<'a>(&'a self, state: MutexGuard<'a, State>, shared: &Shared) -> MutexGuard<'a, State> {
        let state = match shared.timers().next_deadline() {
            Some(deadline) => wait_timeout(
                &self.changed,
                state,
                deadline.saturating_duration_since(Instant::now()),
            ),
            None => self.changed.wait(state).unwrap_or_else(|e| e.into_inner()),
        };
        drop(state);
        shared.fire_due_timers();
        lock(&self.state)
    }

    /// The worker thread's loop: run one task at a time while no
    /// `block_on` owns the scheduler, until shutdown.
    pub(crate) fn run_worker(&self, shared: &Shared) {
        let me = thread::current().id();
        loop {
            let task = {
                let mut state = lock(&self.state);
                loop {
                    if state.shutdown {
                        return;
                    }
                    if state.owner.is_none() && state.claims == 0 {
                        if let Some(task) = state.pop() {
                            state.owner = Some(me);
                            state.depth = 1;
                            break task;
                        }
                    }
                    state = self.wait(state, shared);
                }
            };
            let owner = Ownership(self);
            run(self, shared, task);
            drop(owner);
            shared.fire_due_timers();
        }
    }

    /// Becomes the owner, waiting for the current one to release; once the
    /// executor has shut down, goes on without ownership if another thread
    /// has it (no task runs any more, and that owner may be the executor's
    /// drop, joining this thread): the guard then releases nothing.
    fn acquire(&self) -> Ownership<'_> {
        let me = thread::current().id();
        let mut state = lock(&self.state);
        if state.owner != Some(me) {
            state.claims += 1;
            // An idle owner lends ownership to a claim (`lend_ownership`).
            self.changed.notify_all();
            while state.owner.is_some() && !state.shutdown {
                state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            state.claims -= 1;
            if state.owner.is_some() {
                return Ownership(self);
            }
            state.owner = Some(me);
        }
        state.depth += 1;
        Ownership(self)
    }

    /// `block_on` under the simple scheduler (see the module docs).
    pub(crate) fn block_on<F: Future>(
        self: &Arc<Self>,
        shared: &Arc<Shared>,
        root: F,
    ) -> F::Output {
        // Spawns from this thread come here, even on the worker thread.
        let _executor = context::enter_executor(shared.clone());
        let owner = self.acquire();
        let in_task = RUNNING_TASKS
            .try_with(|r| !r.borrow().is_empty())
            .unwrap_or(false);
        let signal = Arc::new(RootSignal {
            woken: AtomicBool::new(true),
            scheduler: self.clone(),
        });
        let waker = Waker::from(signal.clone());
        let mut cx = Context::from_waker(&waker);
        let mut root = pin!(root);
        loop {
            // Acquire: pairs with the Release store in `RootSignal::wake`.
            let polled = signal.woken.swap(false, Acquire);
            if polled {
                if let Poll::Ready(output) = root.as_mut().poll(&mut cx) {
                    return output;
                }
                // Then a ready task, if any, before the root's next poll,
                // even if it woke itself (a root yielding until a task it
                // spawned has run lets it run); and once the executor has
                // shut down, `run_parked`, if this is not a task's
                // `block_on` (a sleep that finds the timer queue closed
                // asks to be polled again: only `run_parked` has a queue
                // of last resort).
            }
            match self.next_for_owner(&signal, shared, in_task, polled) {
                Next::Task(task) => {
                    run(self, shared, task);
                    shared.fire_due_timers();
                }
                Next::Woken => continue,
                Next::ShutDown => {
                    // Not a task's `block_on`: finish the root as a plain
                    // thread's `block_on` does (work-stealing `run_parked`).
                    drop(owner);
                    return crate::block_on::run_parked(root.as_mut(), shared);
                }
            }
        }
    }

    /// What the owner does next: run a ready task, poll its root (woken),
    /// or, once the executor has shut down, finish its root elsewhere. Only
    /// a `block_on` called from a task (`in_task`: under a [`run`] on this
    /// thread) panics then, as the crate docs say; any other (a blocking
    /// job's, or one nested in such a `block_on`'s root) goes on, and the
    /// executor's drop waits for that job. A task's panics once the root,
    /// just `polled`, is still pending, even if it woke itself (as a task's
    /// `block_on` does under work stealing): a root yielding for ever would
    /// keep the thread, which the drop may be joining.
    fn next_for_owner(
        &self,
        signal: &RootSignal,
        shared: &Shared,
        in_task: bool,
        mut polled: bool,
    ) -> Next {
        let mut state = lock(&self.state);
        loop {
            // After shutdown the ready tasks wait to be dropped, unrun.
            if !state.shutdown {
                if let Some(task) = state.pop() {
                    return Next::Task(task);
                }
            }
            // Before a woken root: `run_parked` polls it first.
            if state.shutdown && !in_task {
                return Next::ShutDown;
            }
            // Acquire: see `block_on`.
            if signal.woken.load(Acquire) && !(state.shutdown && polled) {
                return Next::Woken;
            }
            if state.shutdown {
                panic!("fastexec: the executor shut down while a task was blocked in block_on");
            }
            if state.claims > 0 {
                state = self.lend_ownership(state, signal, shared);
                // A root woken meanwhile has not been polled since.
                polled = false;
                continue;
            }
            state = self.wait(state, shared);
        }
    }

    /// Lets a `block_on` caller waiting for ownership run while this owner
    /// has nothing to do (its root may be waiting for that very caller), and
    /// takes ownership back, at the depth it had, once nobody owns and it
    /// has something to do again: its root was woken or a task is ready.
    ///
    /// Once its root was woken it also claims ownership back, as a waiting
    /// caller does: the borrower may now wait for that very root (it woke
    /// it, and waits for what it does next), and it lends only to claims.
    /// Ready tasks alone make no claim: whoever owns runs them.
    ///
    /// Once the executor has shut down no task runs any more, so ownership
    /// no longer orders anything: a lender whose borrower still owns
    /// returns without it (its levels are given up: see [`Ownership`]),
    /// since that borrower may be the executor's drop, joining this very
    /// thread (the worker's) or waiting for this `block_on`'s job.
    fn lend_ownership<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        signal: &RootSignal,
        shared: &Shared,
    ) -> MutexGuard<'a, State> {
        let depth = std::mem::take(&mut state.depth);
        state.owner = None;
        self.changed.notify_all();
        let mut claimed = false;
        loop {
            state = self.wait(state, shared);
            // Acquire: see `block_on`.
            let woken = signal.woken.load(Acquire);
            let wanted = woken || state.len() > 0 || state.shutdown;
            if state.owner.is_some() && state.shutdown {
                if claimed {
                    state.claims -= 1;
                }
                return state;
            }
            if state.owner.is_none() && wanted {
                if claimed {
                    state.claims -= 1;
                }
                state.owner = Some(thread::current().id());
                state.depth = depth;
                return state;
            }
            if woken && !claimed {
                claimed = true;
                state.claims += 1;
                // An idle owner lends ownership to a claim.
                self.changed.notify_all();
            }
        }
    }
}

/// What [`SimpleScheduler::next_for_owner`] tells the owner to do.
enum Next {
    /// Run this task.
    Task(Runnable),
    /// Poll the root: it was woken.
    Woken,
    /// The executor has shut down: no task runs any more, and the root
    /// finishes as a `block_on` on a thread of its own does.
    ShutDown,
}

/// Releases one level of ownership when dropped (also on a panic): none
/// if this thread does not own, having gone on without ownership at
/// shutdown (`SimpleScheduler::acquire`) or lent its levels away and given
/// them up then (`SimpleScheduler::lend_ownership`).
struct Ownership<'a>(&'a SimpleScheduler);

impl Drop for Ownership<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.0.state);
        if state.owner != Some(thread::current().id()) {
            // Only at shutdown does a thread go on without owning.
            debug_assert!(
                state.shutdown,
                "an ownership level released by a thread not owning"
            );
            return;
        }
        state.depth -= 1;
        if state.depth == 0 {
            state.owner = None;
            drop(state);
            self.0.changed.notify_all();
        }
    }
}

thread_local! {
    /// The [`run`]s under way on this thread, innermost last, each as its
    /// scheduler's address (a task's poll may call `block_on`, of this
    /// executor or another, which runs tasks too): whether a `block_on`
    /// here was called from a task, and whether from one of a given
    /// scheduler's ([`SimpleScheduler::runs_task_here`]).
    static RUNNING_TASKS: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Runs one task of `scheduler` on this thread, as a worker would.
fn run(scheduler: &SimpleScheduler, shared: &Shared, task: Runnable) {
    shared.ext.counters.external.0.count_poll();
    let running = RUNNING_TASKS
        .try_with(|r| r.borrow_mut().push(scheduler.address()))
        .is_ok();
    // The task's own panics are caught inside its future; this only
    // catches a panic from a destructor that runs after completion.
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| task.run())) {
        crate::task::drop_panic(panic);
    }
    if running {
        let _ = RUNNING_TASKS.try_with(|r| r.borrow_mut().pop());
    }
    if let Err(panic) = catch_unwind(context::release_finished) {
        crate::task::drop_panic(panic);
    }
}

/// Wakes the owner that polls a `block_on` root future.
struct RootSignal {
    woken: AtomicBool,
    scheduler: Arc<SimpleScheduler>,
}

impl Wake for RootSignal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release: pairs with the Acquire loads in `block_on` and
        // `next_for_owner`, so the poll sees what the waker's caller did.
        self.woken.store(true, Release);
        self.scheduler.notify();
    }
}
