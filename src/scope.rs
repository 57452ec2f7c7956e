//! [`Scope`]: the calling code's place in the task tree, kept to spawn
//! there later.
//!
//! [`spawn`](crate::spawn) puts a task in the executor and the task groups
//! of the code that calls it. Code that spawns on behalf of others, later
//! and from whatever thread happens to call it (a scheduler woken by the
//! callers of its methods, a pool that refills itself), wants the executor
//! and the groups of whoever *set it up* instead: otherwise its tasks count
//! in, and are cancelled with, the groups of some caller that only passed
//! by. A `Scope` captured at set-up time spawns there.
//!
//! # Ownership
//!
//! A scope holds its executor's shared state strongly and its groups
//! weakly. A strong hold would keep a `block_on` from returning while the
//! scope lives (a `block_on` scope is counted by the references to its
//! membership; see `task_group.rs`), so a `Scope` stored past its
//! `block_on` would hang it. A spawn through a scope whose membership is
//! gone (its `block_on` returned; the explicit-group task it was captured
//! in ended, with its descendants, even if the `TaskGroup` and an enclosing
//! `block_on` live on) starts a task in no group, as a spawn from a plain
//! thread would. While the groups are
//! alive, the upgrade that finds them is itself a reference counted in the
//! scope, so the new task is counted before the spawn returns and an
//! enclosing `block_on` waits for it.

use std::future::Future;
use std::sync::Arc;

use crate::context;
use crate::executor::{self, Shared};
use crate::task::JoinHandle;
use crate::task_group::MembershipArc;

/// Where the calling code sits in the task tree (its executor and its task
/// groups), captured so that tasks can be spawned there later, from any
/// thread.
///
/// Tasks spawned through a `Scope` join the groups that were current when it
/// was captured, not those of the thread that spawns: an enclosing
/// [`block_on`](crate::block_on) waits for them, and cancelling a
/// [`TaskGroup`](crate::TaskGroup) of that scope cancels them, while the
/// groups of whoever calls [`Scope::spawn`] play no part.
///
/// ```
/// use fastexec::Scope;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
///
/// let ran = Arc::new(AtomicBool::new(false));
/// let flag = ran.clone();
/// fastexec::block_on(async move {
///     let scope = Scope::current(); // this block_on's executor and groups
///     // A plain thread, in no group, spawns into the scope ...
///     std::thread::spawn(move || {
///         scope.spawn(async move { flag.store(true, Ordering::Relaxed) }).detach();
///     })
///     .join()
///     .unwrap();
/// });
/// // ... so the block_on waited for that task too.
/// assert!(ran.load(Ordering::Relaxed));
/// ```
///
/// The scope does not keep its groups open. What it holds (weakly) is the
/// *membership* of the code that captured it: the chain of groups a task
/// spawned there would join, which lives as long as that code or some task
/// spawned in it does. Captured in a `block_on`'s root future, that is until the `block_on`
/// returns. Captured in a task of an explicit [`TaskGroup`](crate::TaskGroup),
/// that is until that task and the tasks spawned from it (in its
/// membership) have finished: not as long as the `TaskGroup` value, nor as
/// long as its other members (each [`TaskGroup::spawn`](crate::TaskGroup::spawn)
/// from outside the group starts a membership of its own), nor as long as an
/// enclosing `block_on`. Once the membership has ended
/// ([`has_ended`](Self::has_ended)), a task spawned through the scope
/// belongs to **no group at all**, as a spawn from a plain thread would: the
/// `TaskGroup` does not count it ([`TaskGroup::active`](crate::TaskGroup::active),
/// [`wait`](crate::TaskGroup::wait)) or cancel it, and an enclosing
/// `block_on`, even one still running, does not wait for it. It still runs
/// on the scope's executor. To keep spawning into a group, capture the scope
/// in a task that outlives the spawns, or spawn with
/// [`TaskGroup::spawn`](crate::TaskGroup::spawn).
///
/// ```
/// use fastexec::{Scope, TaskGroup};
///
/// let group = TaskGroup::new();
/// let scope = fastexec::block_on(async {
///     // Captured in a member of `group`, which then finishes.
///     group.spawn(async { Scope::current() }).await.unwrap()
/// });
/// // `group` lives on, but the member the scope was captured in is gone.
/// assert!(scope.has_ended());
/// let late = scope.spawn(async { 7 });
/// assert_eq!(group.active(), 0); // not a member of `group` ...
/// group.cancel(); // ... so not cancelled with it
/// assert_eq!(fastexec::block_on(late).unwrap(), 7);
/// ```
#[derive(Clone)]
pub struct Scope {
    executor: Arc<Shared>,
    groups: Option<GroupsRef>,
}

/// A weak hold on a membership (see the module docs). loom's `Arc` has no
/// `Weak`; no loom model builds a `Scope`, so under loom it holds strongly.
#[cfg(not(loom))]
type GroupsRef = std::sync::Weak<crate::task_group::Membership>;
#[cfg(loom)]
type GroupsRef = MembershipArc;

impl Scope {
    /// The scope of the calling code: inside a task or a `block_on`, that
    /// executor and the current task groups; elsewhere the global executor
    /// (started on first use, as by [`spawn`](crate::spawn)) and no group.
    pub fn current() -> Scope {
        Scope {
            executor: executor::current(),
            groups: context::membership().map(|m| downgrade(&m)),
        }
    }

    /// Spawns `future` onto the scope's executor, in the scope's groups if
    /// they are still alive (see the type's docs), whatever the calling
    /// thread's own groups are.
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let groups = self.groups.as_ref().and_then(upgrade);
        self.executor.spawn(future, groups, None)
    }

    /// Whether the membership the scope was captured in has ended (see the
    /// type's docs: its `block_on` returned, or the group task it was
    /// captured in finished, with the tasks spawned from it), so that a task
    /// spawned through it would belong to no group. Always false for a scope
    /// captured outside any group (it never had one).
    pub fn has_ended(&self) -> bool {
        self.groups.as_ref().is_some_and(|g| upgrade(g).is_none())
    }

    /// Whether the scope's executor has shut down (its
    /// [`Executor`](crate::Executor) was dropped, or is being dropped). Once
    /// that drop has returned, a task spawned through the scope is dropped
    /// without running: its handle gives a cancelled
    /// [`JoinError`](crate::JoinError). Never true of the global executor,
    /// which does not shut down.
    ///
    /// ```
    /// let executor = fastexec::Executor::builder().threads(1).build().unwrap();
    /// let scope = executor.block_on(async { fastexec::Scope::current() });
    /// assert!(!scope.executor_has_shut_down());
    /// drop(executor);
    /// assert!(scope.executor_has_shut_down());
    /// let err = fastexec::block_on(scope.spawn(async { 1 })).unwrap_err();
    /// assert!(err.is_cancelled());
    /// ```
    pub fn executor_has_shut_down(&self) -> bool {
        self.executor.is_shutdown()
    }
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("in_groups", &self.groups.is_some())
            .field("ended", &self.has_ended())
            .finish_non_exhaustive()
    }
}

#[cfg(not(loom))]
fn downgrade(membership: &MembershipArc) -> GroupsRef {
    Arc::downgrade(membership)
}

#[cfg(not(loom))]
fn upgrade(groups: &GroupsRef) -> Option<MembershipArc> {
    groups.upgrade()
}

#[cfg(loom)]
fn downgrade(membership: &MembershipArc) -> GroupsRef {
    membership.clone()
}

#[cfg(loom)]
fn upgrade(groups: &GroupsRef) -> Option<MembershipArc> {
    Some(groups.clone())
}
