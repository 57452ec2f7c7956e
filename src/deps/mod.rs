//! Completion handles, and spawning a task after others.
//!
//! A [`Completion<T>`] is a cloneable, awaitable handle to a task's outcome:
//! its output, shared as an `Arc<T>`, or a [`CompletionError`] (the task
//! panicked, was cancelled, or never ran because a dependency failed). Get
//! one with [`spawn_completion`], [`spawn_after`] or
//! [`JoinHandle::shared`](crate::JoinHandle::shared). Name the task, or
//! give it a priority, by spawning it through a
//! [`task::Builder`](crate::task::Builder) (or name it later with
//! [`Completion::named`]); every error names the task and, for an upstream
//! failure, the dependency that failed.
//!
//! [`spawn_after`]`(deps, body)` starts `body(outputs)` only once every
//! dependency succeeded, with their outputs in the order given (see
//! [`Dependencies`]). If one fails or is cancelled, the task never starts
//! and its completion reports [`CompletionError::UpstreamFailed`] naming
//! that dependency, and so on down to its own dependents.
//!
//! ```
//! use std::sync::Arc;
//!
//! let report = fastexec::block_on(async {
//!     let fetch = fastexec::task::Builder::new()
//!         .name("fetch")
//!         .spawn_completion(async { vec![3, 1, 2] });
//!     let sort = fastexec::spawn_after(&fetch, |v: Arc<Vec<i32>>| async move {
//!         let mut v = (*v).clone();
//!         v.sort();
//!         v
//!     });
//!     let sum = fastexec::spawn_after(&fetch, |v: Arc<Vec<i32>>| async move { v.iter().sum::<i32>() });
//!     // A diamond: `report` runs after both, which both ran after `fetch`.
//!     let report = fastexec::spawn_after((sort, sum), |(sorted, sum)| async move {
//!         format!("{sorted:?} sum to {sum}")
//!     });
//!     report.await.unwrap()
//! });
//! assert_eq!(*report, "[1, 2, 3] sum to 6");
//! ```
//!
//! # Release by counting
//!
//! A dependent is its completion's node, holding a counter of unmet
//! dependencies, and its task, built by `spawn_after` but not queued: the
//! task's future holds the dependencies' nodes and the body. The node is
//! registered in each dependency's list of waiters; a dependency that
//! finishes walks its list once, decrementing each dependent's counter, and
//! the decrement that reaches zero queues the dependent's task as a wake
//! would (by the task's schedule function: on the releasing worker, next in
//! line, or at the back of the injector while that worker's ring has no
//! room for work waiting elsewhere; `worker.rs`, "A full ring"). When
//! first polled, the task reads its dependencies' outputs,
//! drops its hold on them and calls the body. A failed dependency instead
//! fails each dependent at once, which drops its task unpolled. Cost: two
//! allocations per dependent (node and task; a `()` output is shared, not
//! allocated; a third, the node's out-of-line part, only for a name,
//! awaiters or a third dependent), O(out-degree) per finished task, one
//! list entry per edge (the first two inline in the node), no future, task
//! or waker per edge, and nothing scans for ready tasks. A dependent that
//! waits (not every dependency had succeeded at its spawn) also takes an
//! entry in its executor's registry of parked tasks until it starts, as a
//! task that parks does (see below). Plain `.await`s of
//! a completion put a waker in the out-of-line list; an awaiter dropped
//! before the end frees its slot for the next waiter, so the lists never
//! outgrow the most waiters present at once.
//!
//! # Protocol (why no release is lost or doubled)
//!
//! Each completion's node has an outcome cell (a `OnceLock`, set once) and a
//! small mutex-protected state: the waiters (the first two dependents in
//! place; awaiters' wakers, further dependents and the name in a box made
//! on first use), the task's handle (for abort) and, for a dependent not
//! yet released, its task. The node is *closed* once its outcome is
//! stored; code holding the lock reads that as "the lists are taken or
//! about to be". The lock is never taken while a task is polled, only when
//! a dependent registers, a task is built, released or finishes, or a
//! handle is awaited.
//!
//! * **Finish**: store the outcome (the first finisher wins: a task, an
//!   abort and failing dependencies may race), then, under the lock, take
//!   the lists and the unreleased task; after unlocking, drop that task
//!   unpolled, wake the wakers and release the dependents.
//! * **Register**: if the outcome is stored, use it at once without
//!   registering; else, under the lock, if the outcome is still not
//!   stored, push the dependent; if it is, use it.
//!
//! Registration and the closing step are serialised by the lock, so each
//! edge is handled exactly once: if the registrar, under the lock, finds no
//! outcome, the finisher had not yet taken the lock (its outcome, stored
//! before it locks, would be visible through the lock otherwise), so it
//! finds the new entry when it does; if the registrar finds the outcome, it
//! does not push. Handing the node its task and aborting it follow the same
//! rule. The dependent's counter starts
//! at the number of dependencies **plus one**, a token the spawner holds
//! until it has registered with all of them and handed the node its task
//! (then it gives the token back, adding one for each dependency that had
//! already succeeded); so the count cannot reach zero, and no one can look
//! for the task, before it is there. Exactly one decrement reaches zero; it
//! takes the task under the lock, unless a finish (an abort) took it first.
//! A failed dependency never decrements, so a dependent with a failure never
//! starts; the first failure to reach it finishes it (a second finds it
//! finished). If a dependency fails while the spawner registers, the node
//! is finished before its task exists: the spawner, handing the task over,
//! finds the node closed and drops the task instead. If a dependency had
//! failed already, no task is built; if every one had succeeded already,
//! no list holds the node and no handle to it exists yet, so the spawner
//! queues the task itself (keeping only its handle in the node, for abort)
//! instead of parking it there. The decrements are `AcqRel`: the one
//! reaching zero sees every dependency's outcome, and the queue hands that
//! on to the thread that polls the task. No lock is held while another is
//! taken: finishing takes a node's own lock only to empty its lists (its
//! outcome, stored before, is what closes it), and releases it before it
//! touches any dependent.
//!
//! An abort and the task's end race through the same "first finisher
//! wins": an abort takes the handle and the unreleased task under the lock;
//! it drops an unreleased task (whose guard finishes the node as cancelled)
//! or aborts a queued or running one (whose future, when dropped, does).
//!
//! A failure propagates iteratively: while a thread releases dependents, the
//! releases their failures trigger are queued (in thread-local state) and run
//! by the outer loop, so a failed chain of a million dependents uses a
//! constant amount of stack. The user code a release runs (a dependent's
//! drop glue, an awaiter's `wake`) runs with that queue set aside, so that
//! a failure finished inside it (a clean-up `block_on` in a destructor,
//! waiting for it to reach its dependents) is released there instead of
//! waiting behind the very call that waits for it. Errors carry the failing
//! dependency and the original cause only, so they stay two levels deep.
//! A panic in the user
//! code a release runs (a dependent's drop glue, an awaiter's `wake`) is
//! caught, so that it leaves no waiter unreleased and no queued release
//! stranded on the thread; the first is re-raised once the loop is done.
//!
//! `loom-tests/tests/deps_node.rs` model-checks this protocol with loom,
//! on the real node and spawner (the outcome cell is then `sync.rs`'s loom
//! stand-in for `OnceLock`, and a dependent's task one that no executor
//! holds, run by the thread whose decrement releases it): a registration
//! racing a finish; two dependencies finishing on two threads, also while
//! the spawner registers (exactly one release, after both outputs); a
//! failure racing a success or an abort (no release, one failure); a
//! failure down a chain; an awaiter racing a finish (woken exactly once,
//! or the outcome seen at once).
//!
//! # Task groups and cancellation
//!
//! A dependent counts in the task groups of the code that called
//! `spawn_after` from that call on, not only once it starts: its task is
//! built by that call (and so counted, and seen by the executor's spawn
//! hook, as any spawn), and `block_on` and
//! [`TaskGroup::wait`](crate::TaskGroup::wait) wait for dependents that
//! have not started yet. If its dependencies never finish, neither does the
//! wait, unless the group is cancelled: a cancelled
//! [`TaskGroup`](crate::TaskGroup) drops its dependents that have not
//! started, without waiting for their dependencies (a dependent waiting
//! for them is registered with each cancellable group it counts in, as a
//! parked task is). [`Completion::abort`] cancels a running task or a
//! dependent that has not started; a cancelled task group, an aborted [`JoinHandle`]
//! behind `shared()`, or an executor being dropped all finish the
//! completion as cancelled. For the last, a dependent waiting for its
//! dependencies is registered with its executor's registry of parked
//! tasks from its spawn until it starts, as a parked task is: dropping the
//! executor drops it unpolled, whatever executor its dependencies run on.
//! A dependent spawned onto an executor being dropped is dropped at once. For `shared()`, the group and the executor are
//! those of the forwarding task: ending it that way detaches the task
//! behind the handle, which only [`Completion::abort`] aborts (see
//! [`JoinHandle::shared`]); if that task has finished by then, the
//! completion reports its outcome instead.

mod completion;
mod dependencies;
mod error;
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_api;
mod node;
mod spawn;

use std::future::Future;
use std::sync::Arc;

pub use completion::Completion;
pub use dependencies::{Dependencies, Dependency};
pub use error::{CompletionError, TaskLabel};

use crate::context;
use crate::executor::Executor;
use crate::task::{Builder, JoinHandle};
use node::Node;

/// The spawns with a completion, with the builder's options: a named task's
/// errors show its name, and its hooks' [`TaskMeta`](crate::task::TaskMeta)
/// and `tracing` span show the same name and number; a prioritised one is
/// queued by its priority (when it starts, for `spawn_after`).
impl Builder<'_> {
    /// Spawns `future` and returns its completion, as
    /// [`spawn_completion`](crate::spawn_completion) does, with these options.
    ///
    /// ```
    /// let executor = fastexec::Executor::builder().threads(1).build().unwrap();
    /// let err = executor.block_on(async {
    ///     fastexec::task::Builder::new()
    ///         .name("flaky")
    ///         .on(&executor)
    ///         .spawn_completion(async { panic!("bad input") })
    ///         .await
    ///         .unwrap_err()
    /// });
    /// assert!(err.to_string().contains("\"flaky\" panicked: bad input"));
    /// ```
    pub fn spawn_completion<F>(&self, future: F) -> Completion<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + Sync + 'static,
    {
        let node = Arc::new(Node::new(self.options().name().cloned(), 0));
        self.spawn_producing(node, spawn::catching(future))
    }

    /// Spawns a task storing what `future` gives in `node`, a new node.
    fn spawn_producing<T, F>(&self, node: Arc<Node<T>>, future: F) -> Completion<T>
    where
        T: Send + Sync + 'static,
        F: Future<Output = Result<T, spawn::Missing>> + Send + 'static,
    {
        let membership = context::membership();
        self.with_target(|shared, worker| {
            let (node, options) = (node.clone(), self.options());
            spawn::spawn_producer(shared, node, future, membership, worker, options)
        });
        Completion::new(node)
    }

    /// Spawns `body(outputs)` once every dependency succeeded, as
    /// [`spawn_after`](crate::spawn_after) does, with these options.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use fastexec::{task, Priority};
    ///
    /// let total = fastexec::block_on(async {
    ///     let parts = [1, 2, 3].map(|i| fastexec::spawn_completion(async move { i }));
    ///     task::Builder::new()
    ///         .name("sum")
    ///         .priority(Priority::High)
    ///         .spawn_after(parts, |parts: [Arc<i32>; 3]| async move {
    ///             parts.iter().map(|p| **p).sum::<i32>()
    ///         })
    ///         .await
    ///         .unwrap()
    /// });
    /// assert_eq!(*total, 6);
    /// ```
    pub fn spawn_after<D, F, Fut>(&self, deps: D, body: F) -> Completion<Fut::Output>
    where
        D: Dependencies,
        F: FnOnce(D::Outputs) -> Fut + Send + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: Send + Sync + 'static,
    {
        Completion::new(dependencies::spawn_after_on(self, deps.hold(), body))
    }
}

/// Spawns `future` on the current executor (as [`spawn`](crate::spawn)
/// does) and returns a [`Completion`] that any number of dependents can
/// await or be spawned after. The task joins the current task groups.
///
/// ```
/// let answer = fastexec::spawn_completion(async { 6 * 7 });
/// assert_eq!(*fastexec::block_on(answer).unwrap(), 42);
/// ```
pub fn spawn_completion<F>(future: F) -> Completion<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + Sync + 'static,
{
    Builder::new().spawn_completion(future)
}

/// Spawns `body(outputs)` on the current executor once every dependency in
/// `deps` has succeeded, giving it their outputs in the order and shape of
/// `deps` (see [`Dependencies`]). If a dependency fails or is cancelled, the
/// task never starts and its completion reports an upstream failure naming
/// that dependency. The task counts in the current task groups from this
/// call on, so an enclosing `block_on` waits for it even before it starts.
///
/// ```
/// use std::sync::Arc;
///
/// let sum = fastexec::block_on(async {
///     let a = fastexec::spawn_completion(async { 2 });
///     let b = fastexec::spawn_completion(async { 40 });
///     fastexec::spawn_after([a, b], |[a, b]: [Arc<i32>; 2]| async move { *a + *b })
///         .await
///         .unwrap()
/// });
/// assert_eq!(*sum, 42);
/// ```
pub fn spawn_after<D, F, Fut>(deps: D, body: F) -> Completion<Fut::Output>
where
    D: Dependencies,
    F: FnOnce(D::Outputs) -> Fut + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: Send + Sync + 'static,
{
    Builder::new().spawn_after(deps, body)
}

impl Executor {
    /// Spawns `future` onto this executor and returns its [`Completion`].
    /// See [`spawn_completion`].
    ///
    /// ```
    /// let executor = fastexec::Executor::builder().threads(2).build().unwrap();
    /// let task = executor.spawn_completion(async { "done" });
    /// assert_eq!(*executor.block_on(task).unwrap(), "done");
    /// ```
    pub fn spawn_completion<F>(&self, future: F) -> Completion<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + Sync + 'static,
    {
        Builder::new().on(self).spawn_completion(future)
    }

    /// Spawns `body(outputs)` onto this executor once every dependency
    /// succeeded. See [`spawn_after`].
    ///
    /// ```
    /// let executor = fastexec::Executor::builder().threads(2).build().unwrap();
    /// let base = executor.spawn_completion(async { 20 });
    /// let next = executor.spawn_after(base, |base| async move { *base + 1 });
    /// assert_eq!(*executor.block_on(next).unwrap(), 21);
    /// ```
    pub fn spawn_after<D, F, Fut>(&self, deps: D, body: F) -> Completion<Fut::Output>
    where
        D: Dependencies,
        F: FnOnce(D::Outputs) -> Fut + Send + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: Send + Sync + 'static,
    {
        Builder::new().on(self).spawn_after(deps, body)
    }
}

impl<T: Send + Sync + 'static> JoinHandle<T> {
    /// Turns the handle into a [`Completion`], which many can await and
    /// tasks can be spawned after.
    ///
    /// This costs one small forwarding task on the current executor, which
    /// awaits the handle and stores the outcome (panic message included).
    /// Like any spawned task it counts in the current task groups, so a
    /// `block_on` that calls `shared()` also waits for the task behind the
    /// handle.
    ///
    /// [`Completion::abort`] aborts the task behind the handle, and nothing
    /// else does: if the forwarding task ends first because a task group it
    /// counts in is cancelled, or the executor it runs on is dropped, the
    /// completion reports [`CompletionError::Cancelled`] and the task
    /// behind the handle is detached, as dropping the handle would (it runs
    /// on; its output is dropped). It may be in no such group, or on
    /// another executor. A task that has finished by then (its output not
    /// yet passed on by the forwarding task) is not lost that way: the
    /// completion reports its outcome, as it does after an abort.
    ///
    /// ```
    /// let handle = fastexec::spawn(async { 5 });
    /// let shared = handle.shared();
    /// let (a, b) = fastexec::block_on(async move {
    ///     let other = shared.clone();
    ///     (shared.await.unwrap(), other.await.unwrap())
    /// });
    /// assert_eq!((*a, *b), (5, 5));
    /// ```
    pub fn shared(self) -> Completion<T> {
        let node = Arc::new(Node::new(None, 0));
        let forwarder = spawn::forwarding(self, node.clone());
        Builder::new().spawn_producing(node, forwarder)
    }
}
