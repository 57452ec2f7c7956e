//! Structured concurrency: counting every task a scope spawned, transitively.
//!
//! # Protocol
//!
//! A group is a counter plus an event that fires when the counter returns
//! to zero, after rayon's `CountLatch`. A task's *membership* is the chain
//! of groups it counts in, shared by all tasks spawned in the same scope.
//! The chain lives in thread-local state while a task is polled (and while
//! `block_on` polls its root future, and, less its cancelled groups, while
//! a task's future is dropped unfinished: [`for_destructor`]), so a task
//! spawned from there joins the same groups without being told.
//!
//! There are two kinds of group, and they count different things:
//!
//! * A `block_on` scope's group counts **memberships**: one for its own,
//!   created with the scope. Its tasks are counted by the membership's
//!   reference count instead: every member task holds the membership by
//!   `Arc`, so the membership is dropped, and only then leaves its group,
//!   once the scope's owner and every member task let go of it. A member
//!   spawned by a member clones the spawner's `Arc` while the spawner still
//!   holds its own, so the count cannot reach zero in between. That makes a
//!   task's whole bookkeeping in such a scope one increment (its clone, at
//!   spawn) and one decrement (its drop, at finish), on one counter.
//! * An explicit [`TaskGroup`] counts **tasks**, exactly, so that
//!   [`TaskGroup::active`] can say how many are alive and `cancel` can reach
//!   them: a task whose chain holds one or more explicit groups also
//!   increments each of them at spawn and decrements it at finish.
//!
//! The steps, for either kind:
//!
//! * **Spawn** counts the new task in (the `Arc` clone; the increments of
//!   explicit groups) before it can run. The spawner is itself a live member
//!   (or the scope's owner), so nothing it counts in can drop to zero before
//!   its child is counted: a child is counted before its parent's
//!   decrement, by program order in the parent.
//! * **Finish** happens when the task's future is dropped, after it
//!   completed, panicked or was cancelled. Each explicit group's decrement
//!   is `AcqRel`: its Release half publishes everything the task did to the
//!   waiter's Acquire load of zero. The membership's `Arc` decrement is
//!   Release too, and the last one is followed by an Acquire fence (std's
//!   `Arc`), so the drop of the membership, and its own `AcqRel` decrement
//!   of its group, come after every member's work. The decrementer that
//!   takes a counter to zero notifies the event.
//! * **Wait** checks the counter, registers its waker in the group's
//!   [`WaitList`], and checks again before it returns pending; the
//!   registration and the notification are each followed by a `SeqCst`
//!   fence (see `waiters.rs`), so a decrement to zero that races with the
//!   registration is seen by one of the two. The notification wakes the
//!   waiters with no lock held: a waiter's waker (a foreign one) may poll or
//!   drop the wait on the spot. A waker that panics is reported by the panic
//!   hook and otherwise ignored, so that the finishing task still leaves
//!   every other group it is in. A `block_on` drops its own reference to the
//!   scope's membership before it waits, so its group reaches zero when the
//!   last member finishes.
//!
//! After the final decrement the finishing task still touches the group (to
//! notify), so the group must outlive the waiter's return: every membership
//! holds the group by `Arc`, and the notify borrows that `Arc`, never the
//! waiter's stack.
//!
//! Nothing but a member task or the scope's owner may hold a strong
//! reference to a `block_on` membership for long: a worker's cache of the
//! last membership it polled (see `context.rs`) holds a `Weak`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::context;
use crate::waiters::{FirstPanic, Slot, WaitList};
use std::task::Waker;

use slab::Slab;

use crate::sync::{lock, Arc, AtomicBool, AtomicUsize, Mutex, Ordering::*};
use crate::task::JoinHandle;

/// The counter of one group, and its cancellation state.
pub(crate) struct GroupInner {
    /// Live member tasks of an explicit group; live memberships of a
    /// `block_on` group (see the module docs).
    active: AtomicUsize,
    /// Wakers of the group's `wait`ers.
    done: WaitList,
    /// Whether this is an explicit [`TaskGroup`], which counts its tasks and
    /// can be cancelled; `block_on`'s groups count memberships and cannot be
    /// cancelled, so their members never touch `parked`.
    cancellable: bool,
    cancelled: AtomicBool,
    /// Wakers of parked members, for `cancel` to wake.
    parked: Mutex<Slab<Waker>>,
}

impl GroupInner {
    /// A group that cannot be cancelled (a `block_on` scope).
    pub(crate) fn new() -> Arc<GroupInner> {
        Self::with_cancel(false)
    }

    fn with_cancel(cancellable: bool) -> Arc<GroupInner> {
        Arc::new(GroupInner {
            active: AtomicUsize::new(0),
            done: WaitList::new(),
            cancellable,
            cancelled: AtomicBool::new(false),
            parked: Mutex::new(Slab::new()),
        })
    }

    fn is_cancelled(&self) -> bool {
        // Acquire: pairs with the Release store in `cancel`.
        self.cancelled.load(Acquire)
    }

    /// Marks the group cancelled and wakes every parked member, so that each
    /// sees the flag at its next poll and ends.
    fn cancel(&self) {
        // Release: pairs with the Acquire load in `is_cancelled`.
        self.cancelled.store(true, Release);
        let wakers: Vec<Waker> = lock(&self.parked).drain().collect();
        wakers.into_iter().for_each(Waker::wake);
    }

    pub(crate) fn active(&self) -> usize {
        // Acquire: pairs with the AcqRel decrement in `leave`, so a reader
        // that sees zero also sees the members' effects.
        self.active.load(Acquire)
    }

    fn enter(&self) {
        // Relaxed: the increment is ordered before any decrement of the new
        // member by the spawn itself (the task is published through the run
        // queue's release/acquire), and a member spawning it keeps the count
        // above zero meanwhile. For a `block_on` group the one increment is
        // the creation of its membership, before anything can leave.
        self.active.fetch_add(1, Relaxed);
    }

    fn leave(&self) {
        // AcqRel: Release publishes the member's work to the Acquire load in
        // `active`/`wait`; Acquire orders the notify after every other
        // member's release.
        if self.active.fetch_sub(1, AcqRel) == 1 {
            let mut panic = FirstPanic::default();
            self.done.wake_all(&mut panic);
            // The leaver is the executor finishing a task, which must go on
            // to leave the groups around this one: a waker's panic is not
            // re-raised into it.
            panic.discard();
        }
    }

    /// Resolves once the counter is zero.
    pub(crate) fn wait(&self) -> GroupWait<'_> {
        GroupWait {
            group: self,
            slot: Slot::default(),
        }
    }
}

/// The future of [`GroupInner::wait`].
pub(crate) struct GroupWait<'a> {
    group: &'a GroupInner,
    slot: Slot,
}

impl Future for GroupWait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let group = this.group;
        group
            .done
            .poll_until(&mut this.slot, cx, || group.active() == 0)
    }
}

impl Drop for GroupWait<'_> {
    fn drop(&mut self) {
        self.group.done.unregister(&mut self.slot);
    }
}

/// A membership as tasks hold it: the loom shim's `Arc`, so that the loom
/// models see the reference count that counts a `block_on` scope's tasks.
pub(crate) type MembershipArc = Arc<Membership>;

/// The chain of groups a task counts in, innermost first. Holding one by
/// `Arc` counts in its `block_on` groups; dropping the last `Arc` leaves
/// them (see the module docs).
pub(crate) struct Membership {
    group: Arc<GroupInner>,
    parent: Option<Arc<Membership>>,
    /// Whether some group of the chain can be cancelled (an explicit
    /// [`TaskGroup`]). Fixed when the chain is built, so a member of
    /// `block_on` scopes only (the common case) never walks the chain for
    /// cancellation, neither before each poll nor when it parks.
    cancellable: bool,
}

impl Membership {
    /// A chain with `group` in front of `parent` (which may be empty).
    pub(crate) fn new(group: Arc<GroupInner>, parent: Option<Arc<Membership>>) -> Arc<Membership> {
        let cancellable = group.cancellable || parent.as_ref().is_some_and(|p| p.cancellable);
        if !group.cancellable {
            group.enter();
        }
        Arc::new(Membership {
            group,
            parent,
            cancellable,
        })
    }

    fn groups(&self) -> impl Iterator<Item = &GroupInner> {
        let mut next = Some(self);
        std::iter::from_fn(move || {
            let current = next?;
            next = current.parent.as_deref();
            Some(&*current.group)
        })
    }

    fn contains(&self, group: &Arc<GroupInner>) -> bool {
        self.groups().any(|g| std::ptr::eq(g, &**group))
    }

    fn arcs(&self) -> impl Iterator<Item = &Arc<GroupInner>> {
        let mut next = Some(self);
        std::iter::from_fn(move || {
            let current = next?;
            next = current.parent.as_deref();
            Some(&current.group)
        })
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        // The last member of a `block_on` scope, or its owner, let go: the
        // membership leaves its group (an explicit group counted tasks, not
        // memberships). The parent chain, if any, is released after this,
        // when the fields drop.
        if !self.group.cancellable {
            self.group.leave();
        }
    }
}

/// A parked task's entries in its cancellable groups, removed on drop;
/// empty for most tasks.
///
/// Boxed: most tasks are in no cancellable group, and a task should carry
/// one pointer for this, not a whole `Vec`. The drop tests that pointer
/// inline, so the common empty case costs no call (every task drops one).
#[derive(Default)]
pub(crate) struct CancelRegistration(Option<Box<CancelEntries>>);

/// Each cancellable group a parked task is registered with, and its key there.
type CancelEntries = Vec<(Arc<GroupInner>, usize)>;

impl CancelRegistration {
    /// Whether the task is registered with no group (dropping this does
    /// nothing).
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

impl Drop for CancelRegistration {
    #[inline]
    fn drop(&mut self) {
        if let Some(entries) = self.0.take() {
            remove_cancel_entries(*entries);
        }
    }
}

#[cold]
fn remove_cancel_entries(entries: CancelEntries) {
    for (group, key) in entries {
        lock(&group.parked).try_remove(key);
    }
}

/// A task's place in its groups: counts it in on creation, out on drop.
pub(crate) struct MemberGuard(Option<Arc<Membership>>);

impl MemberGuard {
    /// Counts a new task into every group of `membership`: into the
    /// `block_on` groups by holding the `Arc` (cloned by the caller), into
    /// each explicit group by its counter.
    ///
    /// A task in no group (the common case) takes the inline test only.
    #[inline]
    pub(crate) fn enter(membership: Option<Arc<Membership>>) -> MemberGuard {
        match membership {
            None => MemberGuard(None),
            Some(m) => enter_groups(m),
        }
    }

    /// Lends the membership out (to thread-local state during a poll).
    pub(crate) fn take(&mut self) -> Option<Arc<Membership>> {
        self.0.take()
    }

    /// Whether the guard counts the task in no group.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Moves the guard out, leaving an empty one (for a task that completed:
    /// its worker releases the guard after the output is stored).
    pub(crate) fn take_guard(&mut self) -> MemberGuard {
        MemberGuard(self.0.take())
    }

    /// Takes the membership back after a poll.
    pub(crate) fn restore(&mut self, membership: Option<Arc<Membership>>) {
        self.0 = membership;
    }
}

impl MemberGuard {
    /// The membership the guard counts the task in, if any.
    #[inline]
    pub(crate) fn membership(&self) -> Option<&Arc<Membership>> {
        self.0.as_ref()
    }

    /// Whether one of the task's groups was cancelled.
    #[inline]
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|m| m.cancellable && any_group_cancelled(m))
    }

    /// Registers a parked task's waker with each cancellable group, so that
    /// `cancel` can wake it (see [`register_for_cancel`]).
    pub(crate) fn register_for_cancel(&self, waker: &Waker) -> CancelRegistration {
        match self.0.as_ref().filter(|m| m.cancellable) {
            Some(membership) => register_for_cancel(membership, waker),
            None => CancelRegistration::default(),
        }
    }
}

/// The membership of the current scope if some group of it can be
/// cancelled (an explicit [`TaskGroup`]); `None` otherwise, without
/// touching a reference count (a dependent's spawner asks this of every
/// dependent it parks).
pub(crate) fn cancellable(membership: &Option<MembershipArc>) -> Option<&MembershipArc> {
    membership.as_ref().filter(|m| m.cancellable)
}

/// The membership to lend out while a task's unfinished future is dropped
/// (aborted, cancelled, dropped with its executor), so that a task its
/// destructor spawns (a clean-up, say) joins the task's groups: the task's
/// own chain, less the groups that were cancelled. A destructor that runs
/// because its group was cancelled may still spawn work that runs, as it
/// could before the cancel reached it; that work still counts in every
/// other group of the chain, so an enclosing `block_on` waits for it.
pub(crate) fn for_destructor(membership: Option<&MembershipArc>) -> Option<MembershipArc> {
    let membership = membership?;
    if !membership.cancellable || !any_group_cancelled(membership) {
        return Some(membership.clone());
    }
    // Rebuilt from the outermost group in: each `block_on` group counts the
    // new chain as a membership of its own, which the task's chain (alive
    // meanwhile) keeps from reaching zero until then.
    let live: Vec<&Arc<GroupInner>> = membership.arcs().filter(|g| !g.is_cancelled()).collect();
    live.into_iter().rev().fold(None, |parent, group| {
        Some(Membership::new(group.clone(), parent))
    })
}

/// Registers `waker` with each cancellable group of `membership`, so that
/// `cancel` wakes it; wakes it at once if a group was cancelled meanwhile
/// (`cancel` sets its flag before it takes the wakers under the same lock,
/// so a registration it missed sees the flag here). For a parked task,
/// and for a dependent's task that waits for its dependencies unqueued,
/// which no poll would otherwise end (see `deps/dependencies.rs`).
pub(crate) fn register_for_cancel(membership: &Membership, waker: &Waker) -> CancelRegistration {
    let mut entries = Vec::new();
    let mut cancelled = false;
    for group in membership.arcs().filter(|g| g.cancellable) {
        let key = lock(&group.parked).insert(waker.clone());
        entries.push((group.clone(), key));
        cancelled |= group.is_cancelled();
    }
    if cancelled {
        waker.wake_by_ref();
    }
    CancelRegistration((!entries.is_empty()).then(|| Box::new(entries)))
}

/// [`MemberGuard::enter`] for a task in some group.
#[inline(never)]
fn enter_groups(membership: Arc<Membership>) -> MemberGuard {
    if membership.cancellable {
        count_in_explicit_groups(&membership, GroupInner::enter);
    }
    MemberGuard(Some(membership))
}

/// Whether a group of `membership` was cancelled (out of line: a task in no
/// cancellable group pays only the guard's null test and the chain's flag).
#[inline(never)]
fn any_group_cancelled(membership: &Membership) -> bool {
    membership.groups().any(GroupInner::is_cancelled)
}

impl Drop for MemberGuard {
    #[inline]
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            leave_groups(m);
        }
    }
}

/// Counts a finished task out of its groups (the guard's drop, out of line
/// so that a task in no group pays only the test): out of each explicit
/// group by its counter, out of the `block_on` groups by letting go of the
/// membership.
#[inline(never)]
fn leave_groups(membership: Arc<Membership>) {
    if membership.cancellable {
        count_in_explicit_groups(&membership, GroupInner::leave);
    }
}

/// Applies `count` (a task counted in, or out) to each explicit group of
/// the chain (out of line: most tasks are in none).
#[inline(never)]
fn count_in_explicit_groups(membership: &Membership, count: fn(&GroupInner)) {
    membership
        .groups()
        .filter(|g| g.cancellable)
        .for_each(count);
}

/// A set of tasks that can be awaited as a whole, descendants included.
///
/// Every task spawned through [`TaskGroup::spawn`] is a member, and so is
/// every task a member spawns, transitively, with [`spawn`](crate::spawn) or
/// otherwise: membership is inherited through thread-local state while a
/// member runs, and while its future is dropped (aborted, say), so a task
/// its destructor spawns is a member too (unless this group was cancelled
/// by then, see [`cancel`](TaskGroup::cancel): such a task counts in the
/// member's other groups only). [`wait`](TaskGroup::wait) resolves when no
/// member is left.
///
/// A member spawned inside a task or a `block_on` also counts in the groups
/// of that scope, so `block_on` still waits for everything spawned under it.
/// What counts is where each member is spawned, not where the group was
/// created: the group itself belongs to no scope, and a member spawned
/// from a plain thread counts in this group alone.
///
/// ```
/// use fastexec::TaskGroup;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let done = Arc::new(AtomicUsize::new(0));
/// let group = TaskGroup::new();
/// for _ in 0..4 {
///     let done = done.clone();
///     group.spawn(async move {
///         // A grandchild, spawned without naming the group, still counts.
///         let done2 = done.clone();
///         fastexec::spawn(async move { done2.fetch_add(1, Ordering::Relaxed) }).detach();
///         done.fetch_add(1, Ordering::Relaxed);
///     })
///     .detach();
/// }
/// fastexec::block_on(group.wait());
/// assert_eq!(done.load(Ordering::Relaxed), 8);
/// assert_eq!(group.active(), 0);
/// ```
pub struct TaskGroup {
    inner: Arc<GroupInner>,
}

impl TaskGroup {
    /// An empty group.
    pub fn new() -> TaskGroup {
        TaskGroup {
            inner: GroupInner::with_cancel(true),
        }
    }

    /// Spawns `future` as a member of this group (and of the groups of the
    /// current scope), on the current executor: inside a task or a
    /// `block_on`, that one; elsewhere the global executor.
    ///
    /// ```
    /// let executor = fastexec::Executor::builder().threads(2).build().unwrap();
    /// let group = fastexec::TaskGroup::new();
    /// let handles = executor.block_on(async {
    ///     (0..3u32).map(|i| group.spawn(async move { i * i })).collect::<Vec<_>>()
    /// });
    /// assert!(group.is_empty(), "block_on waited for its members");
    /// let squares: Vec<u32> = handles.into_iter().map(|h| executor.block_on(h).unwrap()).collect();
    /// assert_eq!(squares, [0, 1, 4]);
    /// ```
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let current = context::membership();
        let membership = match current {
            Some(m) if m.contains(&self.inner) => Some(m),
            parent => Some(Membership::new(self.inner.clone(), parent)),
        };
        crate::executor::spawn_with_membership(future, membership)
    }

    /// Resolves when every member and every descendant of a member has
    /// finished (completed, panicked or been cancelled).
    ///
    /// Tasks spawned into the group after `wait` resolved are not waited for
    /// by that call; call `wait` again.
    ///
    /// # Panics
    ///
    /// When polled by a member of the group or one of its descendants
    /// (including inside a `block_on` they run): the waiter counts itself, so
    /// the wait could never end. Wait from outside the group instead.
    ///
    /// Not when polled while a member's future is dropped because this
    /// group was cancelled: that destructor runs outside the group (see
    /// [`cancel`](Self::cancel)), but the member still counts until it
    /// returns, so a wait there does not panic and cannot end before it
    /// does: a `block_on` of it in that destructor never returns.
    ///
    /// ```
    /// let group = fastexec::TaskGroup::new();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// // Outside any task: on the global executor, running at once.
    /// group.spawn(async move { tx.send("member ran").unwrap() }).detach();
    /// fastexec::block_on(group.wait());
    /// assert_eq!(rx.try_recv(), Ok("member ran"));
    /// ```
    pub async fn wait(&self) {
        if context::membership().is_some_and(|m| m.contains(&self.inner)) {
            panic!(
                "fastexec: TaskGroup::wait polled by one of its own members, \
                 which would wait for itself forever"
            );
        }
        self.inner.wait().await
    }

    /// Cancels every member and every descendant of a member: each ends at
    /// its next poll (a parked one is woken for it) without running further,
    /// its future is dropped, its handle reports a cancelled
    /// [`JoinError`](crate::JoinError), and [`wait`](Self::wait) returns once
    /// all are gone. A member in the middle of a poll ends when that poll
    /// returns. A dependent ([`spawn_after`](crate::spawn_after)) still
    /// waiting for its dependencies is dropped unstarted, its completion
    /// cancelled, without waiting for them. A
    /// [`spawn_blocking`](crate::spawn_blocking) job counted in the group
    /// that has not started never starts (a running one runs to its end).
    /// Tasks spawned into the group
    /// afterwards end at once, except those a member's destructor spawns as
    /// the cancel drops it: they run, in the member's other groups (an
    /// enclosing `block_on` still waits for them). Cancelling twice is
    /// harmless.
    ///
    /// ```
    /// let group = fastexec::TaskGroup::new();
    /// let handle = group.spawn(std::future::pending::<()>());
    /// group.cancel();
    /// fastexec::block_on(group.wait());
    /// assert!(fastexec::block_on(handle).unwrap_err().is_cancelled());
    /// ```
    pub fn cancel(&self) {
        self.inner.cancel();
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }

    /// How many members (descendants included) are still alive.
    ///
    /// A member that completed counts until the thread that ran it has
    /// stored its output and let go of its place, a moment after its
    /// handle resolves: read right after awaiting a member's handle, this
    /// may still count that member. [`wait`](Self::wait) resolves only once
    /// every place is let go of.
    pub fn active(&self) -> usize {
        self.inner.active()
    }

    /// Whether no member is alive.
    pub fn is_empty(&self) -> bool {
        self.active() == 0
    }
}

impl Default for TaskGroup {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for TaskGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskGroup")
            .field("active", &self.active())
            .finish()
    }
}

/// The bare group counter, and a `block_on` scope counted by its
/// membership's references, for the loom models in `loom-tests/`.
#[cfg(loom)]
pub mod loom_api {
    use super::{GroupInner, MemberGuard, Membership};
    use crate::sync::Arc;

    /// One group's counter and completion event.
    #[derive(Clone)]
    pub struct GroupCounter(Arc<GroupInner>);

    impl GroupCounter {
        /// An empty group.
        pub fn new() -> Self {
            GroupCounter(GroupInner::new())
        }

        /// Counts one member in (what spawning does).
        pub fn enter(&self) {
            self.0.enter();
        }

        /// Counts one member out (what dropping its future does).
        pub fn leave(&self) {
            self.0.leave();
        }

        /// Live members.
        pub fn active(&self) -> usize {
            self.0.active()
        }

        /// Resolves when no member is left.
        pub async fn wait(&self) {
            self.0.wait().await
        }
    }

    impl Default for GroupCounter {
        fn default() -> Self {
            Self::new()
        }
    }

    /// A `block_on` scope: its group and its owner's reference to the
    /// scope's membership, as `block_on` makes them.
    pub struct Scope {
        group: Arc<GroupInner>,
        owner: Option<Arc<Membership>>,
    }

    /// A member task's place in a scope: its guard, which leaves on drop
    /// (what dropping the task's future does).
    pub struct Member(MemberGuard);

    impl Scope {
        /// A scope whose owner holds its membership.
        pub fn new() -> Self {
            let group = GroupInner::new();
            let owner = Some(Membership::new(group.clone(), None));
            Scope { group, owner }
        }

        /// Counts in a task spawned by the owner (the root future).
        pub fn spawn(&self) -> Member {
            let membership = self.owner.clone().expect("the owner has let go");
            Member(MemberGuard::enter(Some(membership)))
        }

        /// The owner lets go of the membership, as `block_on` does once its
        /// root future completed, before it waits.
        pub fn let_go(&mut self) {
            self.owner = None;
        }

        /// Live memberships of the scope's group (0 or 1).
        pub fn active(&self) -> usize {
            self.group.active()
        }

        /// Resolves when the group is empty.
        pub async fn wait(&self) {
            self.group.wait().await
        }
    }

    impl Default for Scope {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Member {
        /// Counts in a task this member spawns (it inherits the membership).
        pub fn spawn(&self) -> Member {
            Member(MemberGuard::enter(self.0.membership().cloned()))
        }
    }
}
