//! fastexec: a work-stealing async executor for task graphs, with
//! structured concurrency.
//!
//! * [`spawn`] starts a task and returns a [`JoinHandle`]; dropping the
//!   handle detaches the task, [`JoinHandle::abort`] cancels it.
//! * [`block_on`] runs a future on the calling thread and returns only when
//!   the future **and every task it spawned, transitively,** have finished.
//! * [`wait!`] blocks on several handles or futures and returns a tuple;
//!   [`join!`] does the same inside async code.
//! * [`TaskGroup`] tracks a set of tasks and all their descendants.
//! * [`Executor`] is an explicit pool of worker threads; the free functions
//!   use a global one sized by `FASTEXEC_WORKERS` (default: one thread per
//!   core), and [`current_threads`] tells how many workers the executor
//!   [`spawn`] would use has. [`spawn_blocking`] runs blocking closures on
//!   its elastic pool.
//! * [`time`]: sleeps, timeouts and intervals driven by the workers
//!   themselves (no timer thread); [`cancel`]: cancellation tokens;
//!   [`signal`]: a notify primitive with a stored permit.
//! * [`task::Builder`] spawns any kind of task with a name (a `tracing`
//!   span per poll) and a [`Priority`]; [`Executor::metrics`] reads counters, queue depths and an
//!   opt-in latency histogram; [`Builder`] takes thread and task hooks; and
//!   [`Scheduler::Simple`] (`FASTEXEC_SCHEDULER=simple`, `FASTEXEC_SEED`)
//!   replays a run's task order from a seed.
//! * [`spawn_completion`] and [`JoinHandle::shared`] give a [`Completion`],
//!   a cloneable handle many can await; [`spawn_after`] starts a task once
//!   its dependencies' completions succeeded, released by counting (see
//!   [`deps`]).
//! * [`graph`]: named tasks with dependencies, retries, timeouts,
//!   cancellation, failure propagation, a report, DOT and trace export.
//!
//! ```
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::sync::Arc;
//!
//! let counter = Arc::new(AtomicUsize::new(0));
//! let seen = counter.clone();
//! fastexec::block_on(async move {
//!     for _ in 0..100 {
//!         let seen = seen.clone();
//!         // Detached: block_on still waits for it, and for its children.
//!         fastexec::spawn(async move {
//!             let inner = seen.clone();
//!             fastexec::spawn(async move { inner.fetch_add(1, Ordering::Relaxed) }).detach();
//!             seen.fetch_add(1, Ordering::Relaxed);
//!         })
//!         .detach();
//!     }
//! });
//! assert_eq!(counter.load(Ordering::Relaxed), 200);
//! ```
//!
//! # The global executor
//!
//! Code that spawns or waits without naming an [`Executor`] uses the
//! executor of the task or `block_on` it runs in. Outside both, it uses
//! the global executor, which starts on first use with the settings of
//! [`Builder::from_env`]: [`spawn`], [`spawn_many`], [`detach_many`],
//! [`spawn_blocking`], [`block_on`], [`spawn_completion`], [`spawn_after`],
//! [`task::Builder`]'s spawns, [`TaskGroup::spawn`], [`Scope::current`],
//! the timers of [`time`] and [`graph`] runs all do. If it cannot start (`FASTEXEC_WORKERS`,
//! `FASTEXEC_SCHEDULER` or `FASTEXEC_SEED` holds a bad value, or the
//! operating system refuses a thread), they panic with a message that
//! names the cause. A program that wants these as errors builds its
//! executor itself: [`Builder::from_env`] and [`Builder::build`] return
//! them.
//!
//! # Design
//!
//! Tasks are `async-task` allocations run by a fixed set of worker threads.
//! Each worker owns a bounded lock-free ring (one producer, many thieves)
//! plus a LIFO slot for the task it just woke; a global injector takes work
//! from other threads and ring overflow. Idle workers steal half of another
//! ring, at most half of them search at once, and then park until work
//! arrives: no thread polls. The module docs of `worker`, `idle`,
//! `queue`, `task_group` and `executor` (in the source) state each protocol
//! and why it is correct; `loom-tests/` model-checks the ring, the group
//! counter and its waiters, the park/notify protocol, the timer queue and
//! the hand-off of the timer role, `Notify`, the wake-up of a cancellation
//! token's waiters and the completion protocol of [`deps`].

#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

mod batch;
mod block_on;
mod context;
pub mod deps;
mod executor;
mod ext;
pub mod graph;
mod hint;
mod hooks;
mod idle;
pub mod metrics;
mod park;
mod priority;
mod queue;
mod registry;
mod scope;
mod simple;
mod sync;
pub mod task;
mod task_group;
mod wait;
mod waiters;
mod worker;

pub mod blocking;
pub mod cancel;
pub mod signal;
pub mod time;

pub use deps::{spawn_after, spawn_completion, Completion, CompletionError};
pub use executor::{
    current_threads, detach_many, spawn, spawn_blocking, spawn_many, Builder, EnvError, Executor,
    WORKERS_ENV,
};
pub use metrics::Metrics;
pub use priority::Priority;
pub use scope::Scope;
pub use simple::{Scheduler, SCHEDULER_ENV, SEED_ENV};
pub use task::{JoinError, JoinHandle};
pub use task_group::TaskGroup;
pub use wait::{yield_now, YieldNow};

/// Joins several futures inside async code, returning a tuple of their
/// outputs (a re-export of `futures_util::join!`).
///
/// ```
/// fastexec::block_on(async {
///     let (a, b) = fastexec::join!(async { 1 }, async { 2 });
///     assert_eq!(a + b, 3);
/// });
/// ```
pub use futures_util::join;

/// Runs `future` to completion on the calling thread, and returns its output
/// once it **and every task it spawned, transitively,** have finished.
///
/// Inside a task, or inside another `block_on`, it uses that executor;
/// elsewhere the global one. Called from inside a task it does not block the
/// worker: it runs other queued tasks while it waits, so even a one-thread
/// executor cannot deadlock waiting for the tasks it spawned. Those other
/// tasks run on top of it, on the same stack, so nested calls return
/// innermost first: a `block_on` whose future waits for something that a
/// `block_on` called above it (by a task it ran meanwhile) is itself
/// waiting for is stuck, since its future is not polled again until that
/// one returns.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
///
/// let grandchild_ran = Arc::new(AtomicBool::new(false));
/// let flag = grandchild_ran.clone();
/// fastexec::block_on(async move {
///     fastexec::spawn(async move {
///         fastexec::spawn(async move { flag.store(true, Ordering::Relaxed) }).detach();
///     })
///     .detach();
/// });
/// assert!(grandchild_ran.load(Ordering::Relaxed));
/// ```
///
/// If `future` panics, the panic propagates at once and the tasks it spawned
/// run on, detached.
///
/// On a thread that is exiting, once fastexec's thread-local state on it
/// has been torn down (a `block_on` in the destructor of another
/// thread-local, or of a future that such a destructor drops), `future`
/// still runs to completion here, but fastexec may have nowhere left to
/// record what is current: the tasks it spawns may go to the global
/// executor, whichever executor's `block_on` this is, and it may return
/// before they finish; tasks that a task it runs here (under the simple
/// scheduler) spawns join none of that task's groups.
///
/// # Panics
///
/// With `future`'s panic, as above. Called from inside a task, when the
/// executor shuts down (is dropped) while it waits: the task then ends with
/// that panic, so its handle reports `is_panic()` rather than
/// `is_cancelled()`. Outside any executor, as [`spawn`] when the global
/// executor cannot start.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    block_on::block_on(&executor::current(), future)
}

/// The README's code blocks, run as doctests so that the tour keeps
/// matching the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

#[doc(hidden)]
pub mod __private {
    pub use crate::wait::{JoinValue, WaitArg, WaitFuture, WaitJoinHandle};
    pub use futures_util::join;
}

/// Internals exposed to the loom models in `loom-tests/`; not public API.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom {
    pub use crate::deps::loom_api as deps;
    pub use crate::idle::Idle;
    pub use crate::park::{Parker, Unparker};
    pub use crate::queue::{local, solo, LifoSlot, LifoSteal, Local, Overflow, Steal, CAPACITY};
    pub use crate::task_group::loom_api::*;
    pub use crate::time::queue::loom_api::*;
}
