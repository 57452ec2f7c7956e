//! What [`spawn_after`](crate::spawn_after) accepts as dependencies, and the
//! not-yet-started dependent it registers with each of them.

use std::future::Future;
use std::ops::ControlFlow::{self, Break, Continue};
use std::sync::{Arc, Weak};
use std::task::{Wake, Waker};

use super::completion::Completion;
use super::error::CompletionError;
use super::node::{Dependent, Node, Register, Registration};
use super::spawn::{build_producer, catching, start, Missing};
use crate::context;
use crate::executor::Shared;
use crate::registry::{self, Slot};
use crate::sync::Ordering::AcqRel;
use crate::task::{Builder, RawTask, Runnable};
use crate::task_group::{self, Membership, MembershipArc};
use crate::worker::Worker;

/// The dependencies a task can be spawned after, and the outputs it then
/// receives, in the same order and shape:
///
/// | dependencies | outputs |
/// | --- | --- |
/// | `Completion<T>` or `&Completion<T>` | `Arc<T>` |
/// | `Vec<Completion<T>>` or `&[Completion<T>]` | `Vec<Arc<T>>` |
/// | `[Completion<T>; N]` | `[Arc<T>; N]` |
/// | a tuple of 1 to 4 `Completion`s or `&Completion`s, of any types | the tuple of their `Arc`s |
/// | `()` | `()` (the task starts at once) |
///
/// ```
/// use std::sync::Arc;
///
/// let total = fastexec::block_on(async {
///     let parts: Vec<_> = (1..=3u32).map(|i| fastexec::spawn_completion(async move { i })).collect();
///     let label = fastexec::spawn_completion(async { "sum" });
///     let sum = fastexec::spawn_after(parts, |parts: Vec<Arc<u32>>| async move {
///         parts.iter().map(|p| **p).sum::<u32>()
///     });
///     let shown = fastexec::spawn_after((&label, &sum), |(label, sum)| async move {
///         format!("{label} = {sum}")
///     });
///     shown.await.unwrap()
/// });
/// assert_eq!(*total, "sum = 6");
/// ```
pub trait Dependencies {
    /// What the dependent task receives.
    type Outputs: Send + 'static;
    #[doc(hidden)]
    type Held: Held<Outputs = Self::Outputs>;
    #[doc(hidden)]
    fn hold(self) -> Self::Held;
}

/// One element of a tuple of dependencies: a `Completion<T>` or a reference
/// to one.
pub trait Dependency {
    /// The output type of the completion.
    type Output: Send + Sync + 'static;
    #[doc(hidden)]
    fn into_node(self) -> Arc<Node<Self::Output>>;
}

/// Dependencies as the dependent's task holds them until it starts: the
/// completions' nodes (a word each, where a `Completion` takes two). Not
/// nameable outside the crate.
pub trait Held: Send + Sync + 'static {
    /// What the dependent task receives.
    type Outputs: Send + 'static;
    /// How many dependencies there are.
    fn count(&self) -> usize;
    /// Calls `f` on each dependency in order until it breaks.
    fn each(&self, f: &mut dyn FnMut(&dyn Register) -> ControlFlow<()>);
    /// The outputs, once every dependency succeeded.
    fn outputs(&self) -> Self::Outputs;
}

impl<T: Send + Sync + 'static> Dependency for Completion<T> {
    type Output = T;
    fn into_node(self) -> Arc<Node<T>> {
        Completion::into_node(self)
    }
}

impl<T: Send + Sync + 'static> Dependency for &Completion<T> {
    type Output = T;
    fn into_node(self) -> Arc<Node<T>> {
        self.node().clone()
    }
}

impl<T: Send + Sync + 'static> Held for Arc<Node<T>> {
    type Outputs = Arc<T>;
    fn count(&self) -> usize {
        1
    }
    fn each(&self, f: &mut dyn FnMut(&dyn Register) -> ControlFlow<()>) {
        let _ = f(&**self);
    }
    fn outputs(&self) -> Arc<T> {
        self.output()
    }
}

impl<T: Send + Sync + 'static> Dependencies for Completion<T> {
    type Outputs = Arc<T>;
    type Held = Arc<Node<T>>;
    fn hold(self) -> Arc<Node<T>> {
        self.into_node()
    }
}

impl<T: Send + Sync + 'static> Dependencies for &Completion<T> {
    type Outputs = Arc<T>;
    type Held = Arc<Node<T>>;
    fn hold(self) -> Arc<Node<T>> {
        self.into_node()
    }
}

impl<T: Send + Sync + 'static> Held for Vec<Arc<Node<T>>> {
    type Outputs = Vec<Arc<T>>;
    fn count(&self) -> usize {
        self.len()
    }
    fn each(&self, f: &mut dyn FnMut(&dyn Register) -> ControlFlow<()>) {
        let _ = self.iter().try_for_each(|n| f(&**n));
    }
    fn outputs(&self) -> Vec<Arc<T>> {
        self.iter().map(|n| n.output()).collect()
    }
}

impl<T: Send + Sync + 'static> Dependencies for Vec<Completion<T>> {
    type Outputs = Vec<Arc<T>>;
    type Held = Vec<Arc<Node<T>>>;
    fn hold(self) -> Vec<Arc<Node<T>>> {
        self.into_iter().map(Dependency::into_node).collect()
    }
}

impl<T: Send + Sync + 'static> Dependencies for &[Completion<T>] {
    type Outputs = Vec<Arc<T>>;
    type Held = Vec<Arc<Node<T>>>;
    fn hold(self) -> Vec<Arc<Node<T>>> {
        self.iter().map(Dependency::into_node).collect()
    }
}

impl<T: Send + Sync + 'static, const N: usize> Held for [Arc<Node<T>>; N] {
    type Outputs = [Arc<T>; N];
    fn count(&self) -> usize {
        N
    }
    fn each(&self, f: &mut dyn FnMut(&dyn Register) -> ControlFlow<()>) {
        let _ = self.iter().try_for_each(|n| f(&**n));
    }
    fn outputs(&self) -> [Arc<T>; N] {
        self.each_ref().map(|n| n.output())
    }
}

impl<T: Send + Sync + 'static, const N: usize> Dependencies for [Completion<T>; N] {
    type Outputs = [Arc<T>; N];
    type Held = [Arc<Node<T>>; N];
    fn hold(self) -> [Arc<Node<T>>; N] {
        self.map(Dependency::into_node)
    }
}

impl Held for () {
    type Outputs = ();
    fn count(&self) -> usize {
        0
    }
    fn each(&self, _: &mut dyn FnMut(&dyn Register) -> ControlFlow<()>) {}
    fn outputs(&self) {}
}

impl Dependencies for () {
    type Outputs = ();
    type Held = ();
    fn hold(self) {}
}

/// Tuples of one to four dependencies of any output types.
macro_rules! tuple_dependencies {
    ($count:literal; $($name:ident $index:tt),+) => {
        impl<$($name: Send + Sync + 'static),+> Held for ($(Arc<Node<$name>>,)+) {
            type Outputs = ($(Arc<$name>,)+);
            fn count(&self) -> usize {
                $count
            }
            fn each(&self, f: &mut dyn FnMut(&dyn Register) -> ControlFlow<()>) {
                let _ = (|| {
                    $(f(&*self.$index)?;)+
                    Continue(())
                })();
            }
            fn outputs(&self) -> Self::Outputs {
                ($(self.$index.output(),)+)
            }
        }

        impl<$($name: Dependency),+> Dependencies for ($($name,)+) {
            type Outputs = ($(Arc<$name::Output>,)+);
            type Held = ($(Arc<Node<$name::Output>>,)+);
            fn hold(self) -> Self::Held {
                ($(self.$index.into_node(),)+)
            }
        }
    };
}

tuple_dependencies!(1; A 0);
tuple_dependencies!(2; A 0, B 1);
tuple_dependencies!(3; A 0, B 1, C 2);
tuple_dependencies!(4; A 0, B 1, C 2, D 3);

impl<T: Send + Sync + 'static> Dependent for Node<T> {
    fn dependency_finished(self: Arc<Self>, failure: Option<&CompletionError>) {
        match failure {
            None => met(&self, 1),
            Some(error) => fail(&self, error),
        }
    }
}

/// `n` more dependencies of `node` succeeded.
fn met<T: Send + Sync + 'static>(node: &Node<T>, n: usize) {
    // AcqRel, pairing with the other decrements of this counter (each
    // dependency's and the spawner's): the one that reaches zero sees every
    // dependency's outcome, and the queue hands that on to whoever polls
    // the task, which reads the outputs (their `OnceLock`s order that too;
    // this does not lean on it).
    if node.unmet.fetch_sub(n, AcqRel) == n {
        // `None` if it was aborted while it waited.
        if let Some(task) = node.take_unstarted() {
            // As a wake: by its schedule function, on this worker.
            task.schedule();
        }
    }
}

/// A dependency of `node` failed with `error`: the task never starts. The
/// first failure to arrive finishes the node, which drops its task
/// unpolled; a later one changes nothing.
fn fail<T: Send + Sync + 'static>(node: &Node<T>, error: &CompletionError) {
    if !node.is_finished() {
        node.finish(Err(error.upstream_of(node.label())));
    }
}

/// Registers a task that runs `body` on the outputs of `deps` once they all
/// succeeded, built by `target` (a [`Builder`]: its executor and options,
/// counted in the current task groups from now on); returns its node.
///
/// The task is built at once (so it counts in the groups, and its number
/// and hooks are those of this call), but queued only by the decrement
/// that meets its last dependency.
pub(crate) fn spawn_after_on<D, F, Fut>(
    target: &impl Target,
    deps: D,
    body: F,
) -> Arc<Node<Fut::Output>>
where
    D: Held,
    F: FnOnce(D::Outputs) -> Fut + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: Send + Sync + 'static,
{
    let deps_count = deps.count();
    let node = Arc::new(Node::new(target.name(), deps_count + 1));
    // Our own token, plus each dependency that had succeeded already.
    let mut met_already = 1;
    let mut failed = None;
    // One reference per list the node joins, made only then.
    let edge = || -> Arc<dyn Dependent> { node.clone() };
    deps.each(&mut |dep| match dep.register(&edge) {
        Registration::Waiting => Continue(()),
        Registration::Succeeded => {
            met_already += 1;
            Continue(())
        }
        Registration::Failed(error) => {
            failed = Some(error);
            Break(())
        }
    });
    if let Some(error) = failed {
        // Our token is never given back: the count cannot reach zero. No
        // task is built.
        fail(&node, &error);
        return node;
    }
    let parks = met_already != deps_count + 1;
    let (unstarted, task, watch) =
        target.build(&node, parks, |parked| catching(start(deps, body, parked)));
    if !parks {
        // Every dependency had succeeded: no list holds the node and no
        // handle to it exists yet, so nothing can release, fail or abort
        // it meanwhile. Queue the task at once, as the last decrement
        // would, without parking it in the node.
        node.set_task(Some(task), None);
        unstarted.schedule();
        return node;
    }
    // Outside `build` (and its executor's `with_target`): if a dependency
    // failed meanwhile, this drops the task, running its future's drop
    // glue.
    node.set_task(Some(task), Some(unstarted));
    // The shutdown may have woken the task's registry entry before the
    // task was in the node (see `drop_with_executor`).
    if target.is_shutting_down() {
        drop_with_executor(&node);
    }
    met(&node, met_already);
    if let Some(membership) = watch {
        watch_cancel(&node, &membership);
    }
    node
}

/// The membership a dependent counts in, if a group of it can be
/// cancelled: that group's `cancel` must reach the task while it waits
/// unreleased, when no poll of it would.
pub(crate) type Watch = Option<MembershipArc>;

/// Registers a dependent waiting unreleased in the node with the
/// cancellable groups of `membership`, so that their `cancel` drops its
/// task unpolled (finishing the node as cancelled, and counting the task
/// out of its groups), as it ends any other member at its next poll.
/// Called once the task is in the node: if a group was cancelled before the
/// registration, the registration sees the flag and wakes the watcher at
/// once (see `task_group::register_for_cancel`). A task released meanwhile
/// is left to the check before its poll.
#[cold]
#[inline(never)]
fn watch_cancel<T: Send + Sync + 'static>(node: &Arc<Node<T>>, membership: &Membership) {
    let waker = Waker::from(Arc::new(AbortUnstarted(Arc::downgrade(node))));
    let registration = task_group::register_for_cancel(membership, &waker);
    node.keep_cancel_registration(registration);
}

/// The waker a cancellable group keeps for an unreleased dependent: waking
/// it (the group's `cancel`) drops the task if it is still unreleased. Weak:
/// the group must not keep the node alive.
struct AbortUnstarted<T>(Weak<Node<T>>);

impl<T: Send + Sync + 'static> Wake for AbortUnstarted<T> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if let Some(node) = self.0.upgrade() {
            node.abort_unstarted();
        }
    }
}

/// Drops the task of a dependent parked in `node` by a spawn that raced
/// its executor's shutdown, as the shutdown drops the dependents parked
/// before it (see [`Parked`]).
///
/// The spawn registered the task's entry before the task was in the node,
/// so the shutdown's wake of that entry may have found no task to drop.
/// If it did, it took the node's lock before `set_task` did, after the
/// shutdown flag was stored; the check that calls this follows `set_task`,
/// so it sees the flag (the lock orders them, whatever the flag's own
/// ordering). If the wake came later, it dropped the task itself and this
/// finds none. A spawn into a registry already closed registered nothing
/// and comes here too: its executor drops tasks spawned now.
#[cold]
#[inline(never)]
fn drop_with_executor<T: Send + Sync + 'static>(node: &Node<T>) {
    node.abort_unstarted();
}

/// A waiting dependent's entry in its executor's registry of parked tasks
/// (where, and with which executor), which the dependent's future holds
/// while it waits: dropping it removes the entry, once, when the future
/// starts or is dropped. `None` when it has no entry: its dependencies had
/// all succeeded at its spawn, the registry was closed, or it belongs to
/// no executor (the loom stand-in).
///
/// The dependent's task sits in its node, out of the executor's reach (no
/// queue holds it, and it never polled, so it never parked itself). Its
/// entry's waker is the node: an executor's shutdown wakes every entry,
/// which drops the task if it is still in its node (finishing the
/// completion as cancelled), and waits until every entry is removed. A
/// task released meanwhile is on its way to a queue, which the shutdown
/// drains, dropping it; its entry stays until then, so the wait covers
/// that way too.
pub(crate) struct Parked(Option<(Arc<Shared>, Slot)>);

impl Parked {
    /// No entry.
    pub(crate) const NONE: Parked = Parked(None);

    /// Registers the dependent of `node` with `shared`'s registry of
    /// parked tasks (in `worker`'s shard, a worker of `shared` if the
    /// spawner is one).
    #[inline(never)]
    fn register<T: Send + Sync + 'static>(
        shared: &Arc<Shared>,
        worker: Option<&Worker>,
        node: &Arc<Node<T>>,
    ) -> Parked {
        let waker = Waker::from(node.clone());
        Parked(registry::register_on(shared, worker, waker).map(|slot| (shared.clone(), slot)))
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        if let Some((executor, slot)) = self.0.take() {
            executor.registry().deregister(slot);
        }
    }
}

/// The waker of a dependent's entry in its executor's registry of parked
/// tasks (see [`Parked`]): the shutdown's wake drops the task if it still
/// waits in the node. The node itself rather than a weak reference to it,
/// to spare an allocation per waiting dependent: the entry keeps the node
/// alive only while the task waits (and the task keeps it alive anyway).
impl<T: Send + Sync + 'static> Wake for Node<T> {
    fn wake(self: Arc<Self>) {
        self.abort_unstarted();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.abort_unstarted();
    }
}

/// What builds a dependent's task for [`spawn_after_on`]: a [`Builder`],
/// or, in the loom models, a stand-in with no executor.
pub(crate) trait Target {
    /// The task's name, if it has one.
    fn name(&self) -> Option<Arc<str>>;

    /// Builds the producer of `node` running `future(parked)`, without
    /// queueing it; returns it with its handle, and the membership to
    /// watch for cancellation while it waits (see [`Watch`]). If the task
    /// `parks` in the node (not all its dependencies succeeded yet),
    /// `parked` is its entry in its executor's registry of parked tasks,
    /// registered with the node as its waker; else [`Parked::NONE`].
    fn build<T, F>(
        &self,
        node: &Arc<Node<T>>,
        parks: bool,
        future: impl FnOnce(Parked) -> F,
    ) -> (Runnable, RawTask<()>, Watch)
    where
        T: Send + Sync + 'static,
        F: Future<Output = Result<T, Missing>> + Send + 'static;

    /// Whether the executor `build` builds on is shutting down.
    fn is_shutting_down(&self) -> bool;
}

impl Target for Builder<'_> {
    #[inline(always)]
    fn name(&self) -> Option<Arc<str>> {
        self.options().name().cloned()
    }

    /// Builds on the builder's executor, counted in the current task
    /// groups, with its options.
    #[inline(always)]
    fn build<T, F>(
        &self,
        node: &Arc<Node<T>>,
        parks: bool,
        future: impl FnOnce(Parked) -> F,
    ) -> (Runnable, RawTask<()>, Watch)
    where
        T: Send + Sync + 'static,
        F: Future<Output = Result<T, Missing>> + Send + 'static,
    {
        let membership = context::membership();
        let watch = task_group::cancellable(&membership).cloned();
        let (unstarted, task) = self.with_target(|shared, worker| {
            let parked = if parks {
                Parked::register(shared, worker, node)
            } else {
                Parked::NONE
            };
            build_producer(
                shared,
                node,
                future(parked),
                membership,
                worker,
                self.options(),
            )
        });
        (unstarted, task, watch)
    }

    fn is_shutting_down(&self) -> bool {
        self.with_target(|shared, _| shared.is_shutdown())
    }
}
