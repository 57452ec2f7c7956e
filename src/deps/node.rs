//! The state behind a [`Completion`](super::Completion): the outcome, the
//! list of what waits for it, and the release of dependents.
//!
//! See the [module docs](super) for the protocol and why it is correct.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use smallvec::SmallVec;

use super::error::{CompletionError, TaskLabel};
use crate::hooks::TaskId;
use crate::sync::{lock, thread_local, AtomicUsize, Mutex, OnceLock};
use crate::task::{Panic, RawTask, Runnable};
use crate::task_group::CancelRegistration;

/// What awaiting a completion gives.
pub(crate) type Outcome<T> = Result<Arc<T>, CompletionError>;

/// An outcome as a node stores it: the error boxed, so that a pending node
/// (where it is only a possibility) stays small, and a `()` output not at
/// all (`None`: see [`stored_output`]).
type Stored<T> = Result<Option<Arc<T>>, Box<CompletionError>>;

fn unstored<T: Send + Sync + 'static>(stored: &Stored<T>) -> Outcome<T> {
    match stored {
        Ok(output) => Ok(handed_out(output)),
        Err(error) => Err((**error).clone()),
    }
}

/// Whether `T` is `()`.
fn is_unit<T: 'static>() -> bool {
    TypeId::of::<T>() == TypeId::of::<()>()
}

/// `value` as a node stores it.
///
/// A `()` output carries nothing, and side-effect tasks (most of a DAG's
/// nodes) give one: the node stores nothing, and every reader gets its
/// thread's shared `Arc<()>` (see [`handed_out`]), so no task allocates an
/// `Arc<()>` or counts references to one in its node. The `Arc` a reader
/// gets thus depends on its thread, not on the completion: only
/// `Arc::ptr_eq` and the reference counts can tell, and the
/// [`Completion`](super::Completion) docs say so.
fn stored_output<T: Send + Sync + 'static>(value: T) -> Option<Arc<T>> {
    (!is_unit::<T>()).then(|| Arc::new(value))
}

/// A stored output as completions hand it out: a clone of the `Arc`, or,
/// for a `()` output, of this thread's shared one.
fn handed_out<T: Send + Sync + 'static>(stored: &Option<Arc<T>>) -> Arc<T> {
    thread_local! {
        static UNIT: Arc<dyn Any + Send + Sync> = Arc::new(());
    }
    match stored {
        Some(output) => output.clone(),
        None => {
            // The cell is gone only during this thread's exit.
            let unit = UNIT.try_with(Arc::clone).unwrap_or_else(|_| Arc::new(()));
            unit.downcast::<T>()
                .unwrap_or_else(|_| unreachable!("only a `()` output is stored as `None`"))
        }
    }
}

/// A dependent task that has not started yet, as a completion sees it.
pub trait Dependent: Send + Sync {
    /// One of its dependencies finished: successfully if `failure` is
    /// `None`. Called once per registration.
    fn dependency_finished(self: Arc<Self>, failure: Option<&CompletionError>);
}

/// A completion as [`spawn_after`](super::spawn_after) registers with it,
/// without its output type.
pub trait Register: Send + Sync {
    /// Adds a reference to the dependent, made by `edge`, to the
    /// completion's list, or, if the completion has an outcome already,
    /// says which without making one.
    fn register(&self, edge: &dyn Fn() -> Arc<dyn Dependent>) -> Registration;
}

/// The result of [`Register::register`].
pub enum Registration {
    /// The completion will call `dependency_finished` when it finishes.
    Waiting,
    /// It had succeeded already.
    Succeeded,
    /// It had failed already, with this error (naming the task by its
    /// current label).
    Failed(CompletionError),
}

/// One completion's shared state.
pub struct Node<T> {
    /// Drawn from the same counter as [`TaskId`]s, so that the task's
    /// [`TaskMeta`](crate::task::TaskMeta), if it gets one, has the same.
    id: TaskId,
    /// Set once, by whoever finishes the task first (its producer, or an
    /// abort); read without a lock.
    outcome: OnceLock<Stored<T>>,
    /// For a dependent: its dependencies not yet succeeded, plus one held
    /// by the spawner until it has registered with all of them (see the
    /// [module docs](super)). Unused by a task spawned at once, and never
    /// decremented for a dependent whose dependencies had all succeeded
    /// when it was spawned (the spawner queues that one itself).
    pub(crate) unmet: AtomicUsize,
    waiting: Mutex<Waiting>,
}

/// Something waiting for a node to finish.
enum Waiter {
    /// A dependent to release.
    Dependent(Arc<dyn Dependent>),
    /// An awaiter to wake; its handle remembers the index.
    Waker(Waker),
    /// A free slot, left by an awaiter that went away: the next free one
    /// is at this index, if any.
    Vacant(Option<Key>),
}

/// A waiter's index in its node's list: 32 bits keep a
/// [`Completion`](super::Completion) two words long.
pub(crate) type Key = u32;

/// The storage of [`Waiters`].
type Slots = SmallVec<[Waiter; 2]>;

/// A node's awaiters' wakers and its dependents beyond the two kept in
/// place, in one list (in the node's [`Cold`] part). Few nodes have any,
/// and the first two are stored inline.
///
/// An awaiter's index is its key, so entries never move; the slot of an
/// awaiter that goes away joins a free list and the next waiter takes it.
/// The list is thus as long as the most waiters ever present at once, not
/// as the number of awaiters over the node's life (a loop polling and
/// dropping completion futures, in a `select!` or under a timeout, reuses
/// one slot).
#[derive(Default)]
struct Waiters {
    slots: Slots,
    /// The first vacant slot.
    free: Option<Key>,
}

impl Waiters {
    /// Adds `waiter`, in a vacant slot if there is one; returns its index.
    #[inline(always)]
    fn insert(&mut self, waiter: Waiter) -> Key {
        match self.free {
            None => {
                let key = Key::try_from(self.slots.len()).expect("fewer than 2^32 waiters");
                self.slots.push(waiter);
                key
            }
            Some(key) => self.reuse(key, waiter),
        }
    }

    /// Puts `waiter` in vacant slot `key`, the head of the free list.
    fn reuse(&mut self, key: Key, waiter: Waiter) -> Key {
        let slot = &mut self.slots[key as usize];
        let Waiter::Vacant(next) = *slot else {
            unreachable!("the free list holds only vacant slots")
        };
        self.free = next;
        *slot = waiter;
        key
    }

    /// Frees slot `key` if it holds a waker (an awaiter's, going away),
    /// returning the waker for the caller to drop once it unlocks. After
    /// the node closed the list is empty, and this does nothing.
    fn remove_waker(&mut self, key: Key) -> Option<Waker> {
        let slot = self.slots.get_mut(key as usize)?;
        if !matches!(slot, Waiter::Waker(_)) {
            return None;
        }
        match std::mem::replace(slot, Waiter::Vacant(self.free.replace(key))) {
            Waiter::Waker(waker) => Some(waker),
            _ => unreachable!("matched a waker above"),
        }
    }

    /// The waker in slot `key`, if it holds one.
    fn waker_mut(&mut self, key: Key) -> Option<&mut Waker> {
        match self.slots.get_mut(key as usize) {
            Some(Waiter::Waker(waker)) => Some(waker),
            _ => None,
        }
    }

    /// Empties the list, for the node's closing: its slots, vacant ones
    /// included (the free list goes with them).
    fn take(&mut self) -> Slots {
        self.free = None;
        std::mem::take(&mut self.slots)
    }
}

/// The part of a node that changes while it is pending.
///
/// Kept small: with the rest of the node it fits a 128-byte malloc chunk
/// (glibc's fast bins), which a 10,000-node graph built before it runs
/// allocates and frees once per node. What most nodes never use (a name,
/// awaiters, a third dependent) is in [`Cold`], boxed on first use.
///
/// The node is *closed* once its outcome is stored: read under this lock,
/// the outcome says whether the lists below may still grow (see the
/// [module docs](super)).
#[derive(Default)]
struct Waiting {
    /// A dependent's task while it waits for its dependencies: taken by
    /// whoever settles it, to queue it (the last dependency) or drop it
    /// unpolled (a failure, an abort).
    unstarted: Option<Runnable>,
    /// The task's handle, for `abort`; `None` before the task is built and
    /// after the node is closed. Dropping it cancels the task; finishing
    /// detaches it.
    task: Option<RawTask<()>>,
    /// The first two dependents (a DAG node seldom has more), in place.
    dependents: [Option<Arc<dyn Dependent>>; 2],
    cold: Option<Box<Cold>>,
}

/// What few nodes need, out of line.
#[derive(Default)]
struct Cold {
    name: Option<Arc<str>>,
    /// Awaiters' wakers and dependents beyond the inline two.
    waiters: Waiters,
    /// An unreleased dependent's entries in the cancellable task groups it
    /// counts in, whose `cancel` drops it (see `dependencies.rs`); removed
    /// when the task is taken out of `unstarted`.
    cancel: CancelRegistration,
    /// [`Node::abort`] was called: the forwarder of a shared `JoinHandle`
    /// aborts the task behind it when it is dropped only then.
    abort_requested: bool,
}

/// The waiters a closing node takes out of its lists.
struct Taken {
    dependents: [Option<Arc<dyn Dependent>>; 2],
    waiters: Slots,
}

impl Taken {
    fn is_empty(&self) -> bool {
        self.dependents[0].is_none() && self.waiters.is_empty()
    }
}

impl Waiting {
    fn cold(&mut self) -> &mut Cold {
        self.cold.get_or_insert_with(Box::default)
    }

    /// Takes a dependent's unreleased task, with its registration with its
    /// cancellable groups: the caller drops that after releasing the lock
    /// (dropping it takes the groups' locks).
    fn take_unstarted(&mut self) -> (Option<Runnable>, CancelRegistration) {
        let registration = self
            .cold
            .as_deref_mut()
            .map(|c| std::mem::take(&mut c.cancel))
            .unwrap_or_default();
        (self.unstarted.take(), registration)
    }

    /// Adds a dependent: into a slot an awaiter left, if there is one (so
    /// the lists never outgrow the most waiters present at once), else in
    /// place, else out of line.
    fn add_dependent(&mut self, dependent: Arc<dyn Dependent>) {
        let reusable = self
            .cold
            .as_deref_mut()
            .filter(|c| c.waiters.free.is_some());
        if let Some(cold) = reusable {
            cold.waiters.insert(Waiter::Dependent(dependent));
        } else if let Some(slot) = self.dependents.iter_mut().find(|d| d.is_none()) {
            *slot = Some(dependent);
        } else {
            self.cold().waiters.insert(Waiter::Dependent(dependent));
        }
    }

    /// Empties both lists, for the node's closing. Inline dependents fill
    /// their slots in order, so the first is `None` only if both are.
    fn take_waiters(&mut self) -> Taken {
        Taken {
            dependents: std::mem::take(&mut self.dependents),
            waiters: self
                .cold
                .as_deref_mut()
                .map_or_else(Slots::new, |c| c.waiters.take()),
        }
    }

    fn slots(&self) -> usize {
        let inline = self.dependents.iter().filter(|d| d.is_some()).count();
        inline + self.cold.as_ref().map_or(0, |c| c.waiters.slots.len())
    }
}

impl<T> Node<T> {
    /// Removes a waker left by a dropped awaiter, freeing its slot. The
    /// waker is dropped after unlocking: its drop is foreign code, which
    /// may call back into this node (a hand-written executor's waker may
    /// own the task, and so the handles its future holds).
    pub(crate) fn forget_waker(&self, key: Key) {
        let removed = lock(&self.waiting)
            .cold
            .as_deref_mut()
            .and_then(|cold| cold.waiters.remove_waker(key));
        drop(removed);
    }

    /// How many slots the waiter lists have (live waiters plus free slots):
    /// the most waiters they have held at once. Zero once the finisher has
    /// taken them, just after the outcome is stored.
    pub(crate) fn waiter_slots(&self) -> usize {
        lock(&self.waiting).slots()
    }
}

impl<T: Send + Sync + 'static> Node<T> {
    /// A pending node with a fresh number, waiting for `unmet` dependencies
    /// (plus the spawner's token: see [`Node::unmet`]).
    pub(crate) fn new(name: Option<Arc<str>>, unmet: usize) -> Node<T> {
        Node {
            id: TaskId::next(),
            outcome: OnceLock::new(),
            unmet: AtomicUsize::new(unmet),
            waiting: Mutex::new(Waiting {
                cold: name.map(|name| {
                    Box::new(Cold {
                        name: Some(name),
                        ..Cold::default()
                    })
                }),
                ..Waiting::default()
            }),
        }
    }

    pub(crate) fn id(&self) -> TaskId {
        self.id
    }

    pub(crate) fn label(&self) -> TaskLabel {
        let name = lock(&self.waiting)
            .cold
            .as_ref()
            .and_then(|c| c.name.clone());
        TaskLabel::new(self.id.get(), name)
    }

    pub(crate) fn set_name(&self, name: Arc<str>) {
        lock(&self.waiting).cold().name = Some(name);
    }

    pub(crate) fn outcome(&self) -> Option<Outcome<T>> {
        self.outcome.get().map(unstored)
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.outcome.get().is_some()
    }

    /// The output of a node known to have succeeded.
    pub(crate) fn output(&self) -> Arc<T> {
        match self.outcome.get() {
            Some(Ok(output)) => handed_out(output),
            _ => unreachable!("a dependent starts only after its dependencies succeeded"),
        }
    }

    /// Records the outcome and releases every waiter. Only the first call
    /// has an effect: a task that finishes after it was aborted, or an abort
    /// after the task finished, changes nothing. A dependent's task that
    /// had not started is dropped unpolled.
    pub(crate) fn finish(&self, outcome: Result<T, CompletionError>) {
        let failure = outcome.as_ref().err().cloned();
        let stored = outcome.map(stored_output).map_err(Box::new);
        if self.outcome.set(stored).is_err() {
            return;
        }
        // Closed from here on: whoever takes the lock next sees the outcome.
        let (waiters, task, (unstarted, registration)) = {
            let mut waiting = lock(&self.waiting);
            let task = waiting.task.take();
            (waiting.take_waiters(), task, waiting.take_unstarted())
        };
        drop(registration);
        // Dropping a task that never ran drops its future, whose guard
        // finds the node finished and does nothing. Its drop glue is user
        // code, which may wait for a failure it causes to reach its
        // dependents: run it with this thread's release queue set aside.
        if let Some(unstarted) = unstarted {
            outside_release_loop(|| drop(unstarted));
        }
        if let Some(task) = task {
            task.detach();
        }
        if !waiters.is_empty() {
            release(Released { waiters, failure });
        }
    }

    /// Gives the node its task: the handle (for `abort`) and, for a
    /// dependent, the task itself until it is released. A dependent's
    /// spawner calls it before the task can run; if the node was finished
    /// meanwhile (a dependency failed while the spawner registered), the
    /// task is dropped unpolled. A task spawned at once may have run and
    /// finished before this call: then its handle is detached.
    pub(crate) fn set_task(&self, task: Option<RawTask<()>>, unstarted: Option<Runnable>) {
        let mut waiting = lock(&self.waiting);
        if self.is_closed(&waiting) {
            drop(waiting);
            drop(unstarted);
            // Finished already (the task itself, or a failed dependency):
            // let it be.
            if let Some(task) = task {
                task.detach();
            }
            return;
        }
        waiting.task = task;
        waiting.unstarted = unstarted;
    }

    /// Takes a dependent's task for launching, unless the node finished
    /// (failed or aborted) first.
    pub(crate) fn take_unstarted(&self) -> Option<Runnable> {
        let (task, registration) = lock(&self.waiting).take_unstarted();
        drop(registration);
        task
    }

    /// Keeps an unreleased dependent's registration with its cancellable
    /// groups until the task is released or dropped; drops it at once if
    /// that happened already.
    pub(crate) fn keep_cancel_registration(&self, registration: CancelRegistration) {
        let mut waiting = lock(&self.waiting);
        if waiting.unstarted.is_some() {
            waiting.cold().cancel = registration;
        } else {
            drop(waiting);
            drop(registration);
        }
    }

    /// Cancels a dependent's task that waits unreleased, as `abort` does;
    /// nothing once it was released (a queued or running task of a
    /// cancelled group ends at its next poll) or the node finished. What a
    /// cancelled task group does to the dependents it counts, and a
    /// shutting-down executor to those in its registry of parked tasks.
    pub(crate) fn abort_unstarted(&self) {
        let (task, (unstarted, registration)) = {
            let mut waiting = lock(&self.waiting);
            if waiting.unstarted.is_none() {
                return;
            }
            (waiting.task.take(), waiting.take_unstarted())
        };
        drop(registration);
        drop(unstarted);
        drop(task);
    }

    /// Cancels the node's task: a running one is aborted (its producer then
    /// finishes the node as cancelled when its future is dropped); a
    /// dependent's task that has not started is dropped unpolled, which
    /// finishes the node as cancelled at once.
    pub(crate) fn abort(&self) {
        let (task, (unstarted, registration)) = {
            let mut waiting = lock(&self.waiting);
            if self.is_closed(&waiting) {
                return;
            }
            // Set before the task's handle goes, under the lock the
            // forwarder reads it with (see `abort_requested`).
            waiting.cold().abort_requested = true;
            (waiting.task.take(), waiting.take_unstarted())
        };
        drop(registration);
        // An unreleased task is dropped first, so that its guard (not the
        // cancellation) finishes the node; dropping the handle cancels a
        // queued or running task, whose guard then does.
        drop(unstarted);
        drop(task);
    }

    /// Whether [`abort`](Self::abort) was called on an unfinished node. A
    /// forwarder dropped after the abort dropped its handle reads this
    /// under the lock the abort set it under, so it sees it.
    pub(crate) fn abort_requested(&self) -> bool {
        lock(&self.waiting)
            .cold
            .as_ref()
            .is_some_and(|c| c.abort_requested)
    }

    /// Polls for the outcome, keeping the waker in slot `key`.
    pub(crate) fn poll_outcome(&self, key: &mut Option<Key>, cx: &Context<'_>) -> Poll<Outcome<T>> {
        if let Some(stored) = self.outcome.get() {
            return Poll::Ready(unstored(stored));
        }
        let mut waiting = lock(&self.waiting);
        if self.is_closed(&waiting) {
            drop(waiting);
            return Poll::Ready(unstored(self.closed_outcome()));
        }
        // A handle frees its slot only when it drops, so slot `key` is
        // still this handle's.
        let waiters = &mut waiting.cold().waiters;
        let replaced = match key.and_then(|k| waiters.waker_mut(k)) {
            Some(waker) if waker.will_wake(cx.waker()) => None,
            Some(waker) => Some(std::mem::replace(waker, cx.waker().clone())),
            None => {
                *key = Some(waiters.insert(Waiter::Waker(cx.waker().clone())));
                None
            }
        };
        // The old waker goes after unlocking (see `forget_waker`).
        drop(waiting);
        drop(replaced);
        Poll::Pending
    }

    /// Whether the node is closed, read under its lock (`_locked` proves
    /// it is held): its outcome is stored before the finisher takes the
    /// lock to empty the lists, so one seen unset here means the finisher
    /// will find, under the lock, whatever is added before unlocking.
    fn is_closed(&self, _locked: &Waiting) -> bool {
        self.outcome.get().is_some()
    }

    /// The outcome of a node seen closed under the lock.
    fn closed_outcome(&self) -> &Stored<T> {
        self.outcome
            .get()
            .expect("the outcome is stored before the node is closed")
    }
}

impl<T: Send + Sync + 'static> Register for Node<T> {
    fn register(&self, edge: &dyn Fn() -> Arc<dyn Dependent>) -> Registration {
        // A failure read now names the task as it is named now: the stored
        // error keeps the label it had when the task failed, and the
        // dependent's error, made from this one, is created after any
        // `Completion::named` since.
        let registered = |outcome: &Stored<T>| match outcome {
            Ok(_) => Registration::Succeeded,
            Err(e) => Registration::Failed((**e).clone().relabelled(self.label())),
        };
        if let Some(outcome) = self.outcome.get() {
            return registered(outcome);
        }
        let mut waiting = lock(&self.waiting);
        if !self.is_closed(&waiting) {
            waiting.add_dependent(edge());
            return Registration::Waiting;
        }
        drop(waiting);
        registered(self.closed_outcome())
    }
}

/// The waiters of a node that just finished, and how it finished.
struct Released {
    waiters: Taken,
    failure: Option<CompletionError>,
}

thread_local! {
    /// While this thread releases dependents: releases triggered meanwhile
    /// (a dependent that fails finishes its own node), run by the outer loop
    /// instead of recursing.
    static QUEUED: RefCell<Option<Vec<Released>>> = const { RefCell::new(None) };
}

/// Wakes the awaiters and hands each dependent its dependency's outcome,
/// iteratively: a failure that propagates down a chain of a million
/// dependents queues one batch per link here instead of nesting a million
/// calls.
///
/// A success skips the queue: it decrements counters and queues tasks,
/// which finishes no node, so nothing nests. (Only a task queued onto an
/// executor already shut down is dropped, and finished, on the spot; that
/// release is the outermost of its own.)
fn release(first: Released) {
    if first.failure.is_none() {
        let mut panic = None;
        hand_over_all(first.waiters, None, &mut panic);
        if let Some(p) = panic {
            resume_unwind(p);
        }
        return;
    }
    let mut first = Some(first);
    // During thread exit the queue may be gone: then release inline (a
    // recursion only possible in that corner).
    let nested = QUEUED.try_with(|q| {
        let mut q = q.borrow_mut();
        match q.as_mut() {
            Some(queue) => queue.extend(first.take()),
            None => *q = Some(Vec::new()),
        }
    });
    let Some(first) = first else { return };
    let outermost = nested.is_ok();
    let mut panic = None;
    let mut next = Some(first);
    while let Some(batch) = next {
        hand_over_all(batch.waiters, batch.failure.as_ref(), &mut panic);
        next = QUEUED
            .try_with(|q| q.borrow_mut().as_mut().and_then(Vec::pop))
            .ok()
            .flatten();
    }
    if outermost {
        let _ = QUEUED.try_with(|q| q.borrow_mut().take());
    }
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

/// Runs `f`, user code a failure's release calls (a dependent's drop glue,
/// an awaiter's `wake`, a panic payload's drop), with this thread's release
/// queue set aside: a failure finished inside it (a clean-up `block_on` in
/// a destructor runs tasks, and waits for their dependents) is released
/// there, as the outermost release of its own, instead of being queued
/// behind the very call that may be waiting for it. The queue is put back
/// afterwards, also if `f` unwinds, so the outer loop still runs what it
/// held: a failed chain stays iterative, since only user code nests.
fn outside_release_loop<R>(f: impl FnOnce() -> R) -> R {
    let _restore = SetAside(QUEUED.try_with(|q| q.borrow_mut().take()).ok().flatten());
    f()
}

/// The release queue [`outside_release_loop`] set aside, put back on drop.
struct SetAside(Option<Vec<Released>>);

impl Drop for SetAside {
    fn drop(&mut self) {
        let Some(saved) = self.0.take() else { return };
        let _ = QUEUED.try_with(|q| {
            let mut q = q.borrow_mut();
            match q.as_mut() {
                // Not left by an inner release, which takes its own queue
                // when it ends; merged rather than lost all the same.
                Some(current) => current.extend(saved),
                None => *q = Some(saved),
            }
        });
    }
}

/// Hands the outcome to every waiter taken from a closing node.
fn hand_over_all(taken: Taken, failure: Option<&CompletionError>, panic: &mut Option<Panic>) {
    let [first, second] = taken.dependents;
    if let Some(dependent) = first {
        hand_over_dependent(dependent, failure, panic);
    }
    if let Some(dependent) = second {
        hand_over_dependent(dependent, failure, panic);
    }
    for waiter in taken.waiters {
        match waiter {
            Waiter::Dependent(dependent) => hand_over_dependent(dependent, failure, panic),
            Waiter::Waker(waker) => wake_awaiter(waker, failure.is_some(), panic),
            Waiter::Vacant(_) => {}
        }
    }
}

/// Wakes an awaiter, keeping the first panic. A failure's release runs it
/// outside the release loop; a success's release runs no loop (nor inside
/// one: only user code that a failure's release calls could finish a
/// node there, and that runs outside it), so it wakes directly.
fn wake_awaiter(waker: Waker, failing: bool, panic: &mut Option<Panic>) {
    if failing {
        keeping_first_panic(panic, || outside_release_loop(|| waker.wake()));
    } else {
        keeping_first_panic(panic, || waker.wake());
    }
}

/// Hands `dependent` the outcome, keeping the first panic for after the
/// others are released.
fn hand_over_dependent(
    dependent: Arc<dyn Dependent>,
    failure: Option<&CompletionError>,
    panic: &mut Option<Panic>,
) {
    keeping_first_panic(panic, || dependent.dependency_finished(failure));
}

/// Runs `f`, keeping its panic in `panic` if it is the first.
///
/// A release calls user code: a dependent's drop glue, an awaiter's
/// `Waker::wake`. A panic there must not leave the waiters after it
/// unreleased, nor unwind out of [`release`]'s loop, which would leave the
/// releases queued for it on this thread stranded (and every later failure
/// released on this thread queued behind them, never run). A later panic's
/// payload is dropped under `catch_unwind` for the same reason: its own
/// `Drop` may panic.
fn keeping_first_panic(panic: &mut Option<Panic>, f: impl FnOnce()) {
    if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
        match panic {
            None => *panic = Some(p),
            Some(_) => outside_release_loop(|| crate::task::drop_panic(p)),
        }
    }
}

#[cfg(all(test, not(loom), target_pointer_width = "64"))]
mod tests {
    use super::Node;

    /// A node with its `Arc` counts fits a 128-byte malloc chunk (120
    /// usable bytes), glibc's largest fast-bin size.
    #[test]
    fn a_node_fits_a_128_byte_chunk() {
        assert!(std::mem::size_of::<Node<()>>() + 16 <= 120);
        assert!(std::mem::size_of::<Node<String>>() + 16 <= 120);
    }
}
