//! Spawning with options, and the types that describe a spawned task.
//!
//! * [`Builder`] spawns a task with a name (a `tracing` span around each
//!   poll, and the name in the task's [`TaskMeta`] and errors), a
//!   [`Priority`](crate::Priority), and onto a chosen executor. It spawns
//!   the three kinds of task: [`spawn`](Builder::spawn) gives a
//!   [`JoinHandle`], [`spawn_completion`](Builder::spawn_completion) and
//!   [`spawn_after`](Builder::spawn_after) give a
//!   [`Completion`](crate::Completion). Without options they are
//!   [`spawn`](crate::spawn), [`spawn_completion`](crate::spawn_completion)
//!   and [`spawn_after`](crate::spawn_after), at the same cost.
//! * [`JoinHandle`] awaits one task's output, [`detach`](JoinHandle::detach)es
//!   or [`abort`](JoinHandle::abort)s it; awaiting it gives a [`JoinError`]
//!   if the task panicked or was cancelled.
//! * [`TaskMeta`] is what the executor's task hooks
//!   ([`fastexec::Builder::on_task_spawn`](crate::Builder::on_task_spawn)) are given
//!   about a task: its [`TaskId`] and its name.
//!
//! ```
//! use fastexec::{task, Priority};
//!
//! let executor = fastexec::Executor::builder().threads(2).build().unwrap();
//! let urgent = task::Builder::new().name("urgent").priority(Priority::High).on(&executor);
//! let page = urgent.spawn_completion(async { "page" });
//! let words = urgent.spawn_after(&page, |page| async move { page.split(' ').count() });
//! let handle = urgent.spawn(async { 6 * 7 });
//! assert_eq!(*executor.block_on(words).unwrap(), 1);
//! assert_eq!(executor.block_on(handle).unwrap(), 42);
//! ```

// Internal design. A spawned task is an `async-task` allocation whose
// future is the user's future wrapped in `TaskFuture`.
//
// The wrapper does four things around every poll of the user's future:
//
// * it lends the task's group membership to thread-local state, so that
//   tasks spawned from inside join the same groups (on a thread where none
//   is installed, a worker, a membership polled twice in a row stays there
//   as a cache after the poll, so the next task of the same scope only sets
//   a flag);
// * it catches a panic and turns it into the task's output, so a panicking
//   task never unwinds through a worker;
// * on the first `Pending`, it registers the task's waker with the
//   executor's registry of parked tasks, so that dropping the executor can
//   wake (and thereby drop) tasks whose wakers are held elsewhere, and with
//   each cancellable `TaskGroup` it belongs to;
// * before each poll, it ends the task as cancelled if one of its groups
//   was cancelled.
//
// A group counts a task until the task is finished in every observable
// way: future dropped, output stored (or, if detached, dropped), handle
// reporting `is_finished`. async-task drops the future *before* it stores
// the output, so a completing poll hands the group guard to the thread
// running it (through thread-local state: a flag, and the guard itself when
// the task is in some group), which releases it after `Runnable::run`
// returns. The same flag tells the worker that wakes during that `run`
// come from the completion. A task whose group was cancelled completes the
// same way, with a cancelled output: its future is dropped in that poll
// too, before the guard is handed over (a nested `block_on` in the
// future's destructor runs tasks on this thread, whose completions release
// what was handed over). An aborted task's future is dropped
// after the task is marked closed, so there the guard simply drops with the
// future: the fields drop in declaration order, the user's future first.
// A future dropped unfinished (aborted, cancelled, panicked, dropped with
// its executor) is dropped with the membership lent out as for a poll
// (less its cancelled groups), so that a task its destructor spawns joins
// the same groups; a panicked task's, like a cancelled one's, in the poll
// that ends it, before its guard is handed over.

pub(crate) mod builder;
mod join;

use std::any::Any;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

pub use crate::hooks::{TaskId, TaskMeta};
pub use builder::Builder;
pub(crate) use join::RawTask;
pub use join::{JoinError, JoinHandle};

use crate::context;
use crate::executor::Shared;
use crate::registry::{self, Slot};
use crate::task_group::{self, CancelRegistration, MemberGuard, MembershipArc};

/// The runnable half of a task, as queued and run by workers.
pub(crate) type Runnable = async_task::Runnable;

/// async-task's handle of a task spawned from a future: the half of a
/// [`JoinHandle`] (or, made fallible, of a [`RawTask`]).
pub(crate) type RawHandle<T> = async_task::Task<Result<TaskOutput<T>, Failure>>;

/// A panic payload caught from a task.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

/// Why a task ended without a value of its own making.
pub(crate) enum Failure {
    /// Its future panicked.
    Panic(CaughtPanic),
    /// One of its task groups was cancelled.
    Cancelled,
}

impl Failure {
    /// A task's failure from the payload of its panic (a function, for the
    /// blocking pool's `on_panic`).
    pub(crate) fn panic(payload: Panic) -> Self {
        Failure::Panic(CaughtPanic(ManuallyDrop::new(payload)))
    }
}

/// A panic payload caught from a task, whose destructor runs under
/// `catch_unwind` if the payload is dropped rather than taken: async-task
/// drops the failure of a task that ends detached under an abort-on-panic
/// guard, as it does an output (see [`TaskOutput`]), and a payload is any
/// value given to `panic_any`, whose `Drop` may panic. Such a panic is
/// reported by the panic hook and otherwise discarded. A handle that
/// awaits the task takes the payload ([`into_inner`](Self::into_inner)) as
/// it was.
///
/// Laid out as the box (`ManuallyDrop` keeps its niche, so `Failure` and
/// async-task's `Option<Result<..>>` around it keep their tags); only a
/// failed task's drop glue reaches the wrapper's drop.
pub(crate) struct CaughtPanic(ManuallyDrop<Panic>);

impl CaughtPanic {
    /// The payload, for the handle that awaited the task.
    pub(crate) fn into_inner(self) -> Panic {
        // The wrapper's own drop must not run: the payload leaves it.
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this.0` holds the payload (only this function and the
        // wrapper's drop take it out, and both consume the wrapper), and
        // `this` is never used or dropped again, so it is read once.
        unsafe { ManuallyDrop::take(&mut this.0) }
    }
}

impl Drop for CaughtPanic {
    fn drop(&mut self) {
        drop_output_caught(&mut self.0);
    }
}

/// Drops a panic payload no one will take, catching a panic from its
/// destructor (each such panic is reported by the panic hook). That panic
/// has a payload of its own, whose destructor may panic too: each one is
/// dropped the same way, until one drops quietly.
#[cold]
#[inline(never)]
pub(crate) fn drop_panic(payload: Panic) {
    let mut payload = payload;
    while let Err(next) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        payload = next;
    }
}

/// The user's future plus the executor's bookkeeping (see module docs).
///
/// The fields sit in a `ManuallyDrop`, dropped by this type's own drop only
/// when something there needs dropping: a task that completed without ever
/// parking, in no group (nearly every task), then drops nothing, and its
/// drop is a call that tests four words (9 instructions). Each of those
/// fields' drops is a test too, but the compiler's drop glue ran them one by
/// one after the type's own drop, in an out-of-line function that saved
/// registers first (32 instructions a task on `chained_spawn`; BENCHMARKS.md,
/// branch `spawn`). The drop stays one opaque
/// call in async-task's `run`: inlined there, it made the compiler copy the
/// output in 8-byte pieces read back as 16 bytes, a store-forwarding stall
/// that cost more time than the instructions saved.
pub(crate) struct TaskFuture<F>(ManuallyDrop<Inner<F>>);

impl<F> Drop for TaskFuture<F> {
    #[inline(never)]
    fn drop(&mut self) {
        if self.0.needs_drop() {
            drop_inner(&mut self.0);
        }
    }
}

/// The drop of a [`TaskFuture`] that holds something to drop (cold: a task
/// dropped unfinished, one that parked, one in a group).
#[cold]
#[inline(never)]
fn drop_inner<F>(inner: &mut ManuallyDrop<Inner<F>>) {
    // SAFETY: called once, from `TaskFuture`'s drop, which owns `inner`
    // and never touches it afterwards; `inner` is dropped in place (never
    // moved: see `TaskFuture::poll`). A drop skipped by the caller, when
    // `needs_drop` says no, skips only drops that would do nothing.
    unsafe { ManuallyDrop::drop(inner) }
}

pin_project_lite::pin_project! {
    /// What a [`TaskFuture`] holds.
    struct Inner<F> {
        #[pin]
        stage: Stage<F>,
        // The executor whose registry of parked tasks holds this task's
        // waker, at `stage`'s slot; `None` until the task first parks.
        registered_with: Option<Arc<Shared>>,
        cancel_registration: CancelRegistration,
        member: MemberGuard,
    }

    impl<F> PinnedDrop for Inner<F> {
        /// Drops the user's future, if still there, before the member guard
        /// (as the module docs require), catching a panic from its
        /// destructor: async-task drops a task's future under an
        /// abort-on-panic guard, so a future whose `Drop` panics when it is
        /// aborted, cancelled or dropped with its executor would otherwise
        /// abort the process. Such a panic is reported by the panic hook and
        /// otherwise discarded: the task ends cancelled either way. The
        /// task's membership is lent out meanwhile ([`drop_lent`]). (A
        /// completed future was already dropped inside its last poll.)
        /// Then takes the task's waker out of the registry.
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            let mut stage = this.stage;
            if stage.is_live() {
                drop_lent(this.member, stage.as_mut());
            }
            if let Some(executor) = this.registered_with.take() {
                executor.registry().deregister(stage.slot());
            }
        }
    }
}

pin_project_lite::pin_project! {
    /// The user's future until it completes (`Live`), and where the task's
    /// waker sits in the registry of parked tasks in either stage.
    ///
    /// The slot is here rather than beside the executor's reference because
    /// here it costs nothing: it fills the bytes after the tag, which an
    /// `Option<F>` would leave empty. With the slot apart the task of
    /// `benches/pending_memory.rs` is a 112-byte allocation; with it here,
    /// 104.
    #[project = StageProj]
    enum Stage<F> {
        Live { #[pin] future: F, slot: Slot },
        // Dropped inside its last poll (`poll_then_drop`), or while the task
        // is dropped (`drop_caught`).
        Done { slot: Slot },
    }
}

impl<F> Stage<F> {
    fn is_live(&self) -> bool {
        matches!(self, Stage::Live { .. })
    }

    fn slot(&self) -> Slot {
        match self {
            Stage::Live { slot, .. } | Stage::Done { slot } => *slot,
        }
    }

    fn set_slot(self: Pin<&mut Self>, to: Slot) {
        match self.project() {
            StageProj::Live { slot, .. } | StageProj::Done { slot } => *slot = to,
        }
    }

    /// Drops the future in place, keeping the slot. Should the future's
    /// destructor panic, the assignment still leaves `Done` in place as the
    /// panic unwinds, so the future is never dropped twice.
    fn finish(self: Pin<&mut Self>) {
        let slot = self.slot();
        let mut this = self;
        this.set(Stage::Done { slot });
    }
}

/// A task's output as async-task holds it: the value, whose destructor runs
/// under `catch_unwind` if the value is dropped rather than taken. async-task
/// drops the output of a task that completes detached (no handle left to
/// take it) under an abort-on-panic guard, so an output whose `Drop` panics
/// would otherwise abort the process. Such a panic is reported by the panic
/// hook and otherwise discarded, as for a task future's destructor. A handle
/// that takes the output ([`into_inner`](Self::into_inner)) gets it as it
/// was.
///
/// Laid out as `T` (a `ManuallyDrop`, not an `Option`, which would change
/// the tags async-task's `Option<Result<..>>` of the output tests on every
/// detach: +6 instructions per task on `spawn_many_local`); for a type
/// without drop glue the wrapper's drop does nothing, so the common `()`
/// output costs nothing.
pub(crate) struct TaskOutput<T>(ManuallyDrop<T>);

impl<T> TaskOutput<T> {
    #[inline(always)]
    pub(crate) fn new(value: T) -> Self {
        TaskOutput(ManuallyDrop::new(value))
    }

    /// The value, for the handle that awaited it.
    #[inline(always)]
    pub(crate) fn into_inner(self) -> T {
        // The wrapper's own drop must not run: the value leaves it.
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this.0` holds a value (only this function and the
        // wrapper's drop take it out, and both consume the wrapper), and
        // `this` is never used or dropped again, so the value is read once.
        unsafe { ManuallyDrop::take(&mut this.0) }
    }
}

impl<T> Drop for TaskOutput<T> {
    #[inline(always)]
    fn drop(&mut self) {
        if std::mem::needs_drop::<T>() {
            drop_output_caught(&mut self.0);
        }
    }
}

/// Drops an output (or a panic payload) no one took, catching a panic from
/// its destructor (cold: only outputs of detached tasks, or of handles
/// dropped unawaited, get here).
///
/// The output of a task that completes detached is dropped by async-task
/// as the task completes, after its poll: the task's membership, held for
/// release until then, is lent out meanwhile, so that a task the output's
/// destructor spawns joins the task's groups, as one its poll spawned
/// would ([`context::take_finished`]). The guard is held here meanwhile,
/// and handed back after, so the task counts in its groups until its
/// output is dropped, even if the destructor runs other tasks (in a
/// `block_on`) on this thread.
#[cold]
#[inline(never)]
fn drop_output_caught<T>(output: &mut ManuallyDrop<T>) {
    let finished = context::take_finished();
    let outer = finished
        .as_ref()
        .and_then(MemberGuard::membership)
        .map(|m| context::replace_membership(Some(m.clone())));
    // SAFETY: called once, from the drop of the wrapper holding `output`
    // (`TaskOutput` or `CaughtPanic`), while it still holds its value (their
    // `into_inner` does not run the wrapper's drop); the wrapper is gone
    // after this, so the dropped value is never used. If the
    // destructor panics, the value counts as dropped all the same (its
    // fields' drop glue still runs during the unwind), and the unwind stops
    // here.
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| unsafe { ManuallyDrop::drop(output) })) {
        drop_panic(panic);
    }
    if let Some(outer) = outer {
        drop(context::replace_membership(outer));
    }
    if let Some(finished) = finished {
        context::stash_finished(finished);
    }
}

/// Drops a task's future, catching a panic from its destructor (cold: only
/// a task that did not complete gets here with its future).
#[cold]
#[inline(never)]
fn drop_caught<F>(stage: Pin<&mut Stage<F>>) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| stage.finish())) {
        drop_panic(panic);
    }
}

/// Drops a task's future that did not complete ([`drop_caught`]) with the
/// task's membership lent out to thread-local state, as for a poll, less
/// the groups that were cancelled ([`task_group::for_destructor`]): a task
/// its destructor spawns (a clean-up, say) joins the task's groups, so an
/// enclosing `block_on` or `TaskGroup::wait` waits for it, rather than
/// joining whatever groups the dropping thread is in (on a worker dropping
/// an aborted task: none). The task's guard, and so its place in its
/// groups, is held meanwhile.
///
/// On a thread whose thread-local state is being torn down (a task
/// dropped from another thread-local's destructor) there is nowhere to
/// lend it: the future is dropped as it is.
#[cold]
#[inline(never)]
fn drop_lent<F>(member: &MemberGuard, stage: Pin<&mut Stage<F>>) {
    if !context::can_install_membership() {
        return drop_caught(stage);
    }
    let outer = context::replace_membership(task_group::for_destructor(member.membership()));
    drop_caught(stage);
    drop(context::replace_membership(outer));
}

/// Polls the user's future and, once it is ready, drops it, still inside the
/// caller's `catch_unwind`: a panic from its destructor then becomes the
/// task's panic (the output is lost with the unwinding) instead of
/// unwinding out of async-task's drop of the task, which aborts the
/// process. A dropped `async` block is just its state word, so the
/// early drop costs next to nothing.
#[inline(always)]
fn poll_then_drop<F: Future>(
    mut stage: Pin<&mut Stage<F>>,
    cx: &mut Context<'_>,
) -> Poll<F::Output> {
    // Live until ready: async-task never polls a completed task again.
    let StageProj::Live { future, .. } = stage.as_mut().project() else {
        unreachable!("a task polled after it completed")
    };
    let polled = future.poll(cx);
    if polled.is_ready() {
        stage.finish();
    }
    polled
}

impl<F> Inner<F> {
    /// Whether dropping this does anything: the future is still there, or
    /// the task is registered as parked, with a cancellable group, or still
    /// counted in a group (a completed task's guard was handed to its
    /// worker, so only a task dropped unfinished still has one).
    #[inline(always)]
    fn needs_drop(&self) -> bool {
        self.stage.is_live()
            | self.registered_with.is_some()
            | !self.cancel_registration.is_empty()
            | !self.member.is_empty()
    }
}

impl<F: Future> TaskFuture<F> {
    /// Wraps `future`, counting it into every group of `membership`.
    pub(crate) fn new(future: F, membership: Option<MembershipArc>) -> Self {
        TaskFuture(ManuallyDrop::new(Inner {
            stage: Stage::Live {
                future,
                slot: Slot::default(),
            },
            registered_with: None,
            cancel_registration: CancelRegistration::default(),
            member: MemberGuard::enter(membership),
        }))
    }
}

impl<F: Future> Future for TaskFuture<F> {
    type Output = Result<TaskOutput<F::Output>, Failure>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: pinning projects to the `ManuallyDrop`'s content: it is
        // never moved out (the only access by value is its drop in place,
        // in `TaskFuture`'s drop), so it stays where it was pinned.
        let inner = unsafe { self.map_unchecked_mut(|task| &mut *task.0) };
        let this = inner.project();
        let mut stage = this.stage;
        let polled = match this.member.membership() {
            // In no group, polled where no membership is installed (the
            // common case): there is nothing to lend out and take back, and
            // no group that could have been cancelled.
            None if !context::has_membership() => {
                catch_unwind(AssertUnwindSafe(|| poll_then_drop(stage.as_mut(), cx)))
            }
            None => poll_lent(this.member, stage.as_mut(), cx),
            Some(_) if this.member.is_cancelled() => {
                // A completion like the others: the future dropped here
                // first (a nested `block_on` in its destructor may run
                // tasks, and release what they stashed, on this thread),
                // with the membership lent out as for a poll, then the guard
                // goes to the thread running the task, released once
                // async-task has stored this output.
                drop_lent(this.member, stage.as_mut());
                context::stash_finished(this.member.take_guard());
                return Poll::Ready(Err(Failure::Cancelled));
            }
            // In some group, polled where none is installed (a worker), and
            // installed as the thread's cache, which the next task of the
            // same scope finds in place.
            Some(membership) if !context::has_membership() && context::enter_cached(membership) => {
                let polled = catch_unwind(AssertUnwindSafe(|| poll_then_drop(stage.as_mut(), cx)));
                context::leave_cached();
                polled
            }
            Some(_) => poll_lent(this.member, stage.as_mut(), cx),
        };
        match polled {
            Ok(Poll::Ready(output)) => {
                context::stash_finished(this.member.take_guard());
                Poll::Ready(Ok(TaskOutput::new(output)))
            }
            Err(panic) => {
                // What the unwinding left of the future (a hand-written
                // future's fields) is dropped here, in the task's groups, as
                // for a cancelled task, before the guard is handed over.
                if stage.is_live() {
                    drop_lent(this.member, stage.as_mut());
                }
                context::stash_finished(this.member.take_guard());
                Poll::Ready(Err(Failure::panic(panic)))
            }
            Ok(Poll::Pending) => {
                if this.registered_with.is_none() {
                    if let Some((executor, slot)) = registry::register(cx.waker()) {
                        stage.set_slot(slot);
                        *this.registered_with = Some(executor);
                    }
                    *this.cancel_registration = this.member.register_for_cancel(cx.waker());
                }
                Poll::Pending
            }
        }
    }
}

/// Polls a task with its membership lent out to thread-local state and the
/// outer one put back afterwards: for a task polled inside another
/// membership's scope (run by a `block_on` inside a task or root future),
/// or in a scope the thread does not cache.
///
/// On a thread whose thread-local state is being torn down (a `block_on`
/// in a destructor run at thread exit that runs tasks here, the simple
/// scheduler's) there is nowhere to lend it: the task is polled as it is.
#[inline(never)]
fn poll_lent<F: Future>(
    member: &mut MemberGuard,
    stage: Pin<&mut Stage<F>>,
    cx: &mut Context<'_>,
) -> std::thread::Result<Poll<F::Output>> {
    if !context::can_install_membership() {
        return catch_unwind(AssertUnwindSafe(|| poll_then_drop(stage, cx)));
    }
    let outer = context::replace_membership(member.take());
    let polled = catch_unwind(AssertUnwindSafe(|| poll_then_drop(stage, cx)));
    member.restore(context::replace_membership(outer));
    polled
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    /// `size_of::<TaskFuture<F>>()` and `size_of::<Option<F>>()` for the
    /// type of `future` (a value, since an `async` block's type is unnamed).
    fn sizes<F: Future>(future: F) -> (usize, usize) {
        drop(future);
        (size_of::<TaskFuture<F>>(), size_of::<Option<F>>())
    }

    /// A caught payload is laid out as its bare box (`Failure` as an
    /// `Option` of it), so the output async-task holds is as large as with
    /// a bare box, whatever the value.
    #[test]
    fn a_caught_panic_keeps_the_niche_of_its_box() {
        assert_eq!(size_of::<CaughtPanic>(), size_of::<Panic>());
        assert_eq!(size_of::<Failure>(), size_of::<Option<Panic>>());
        assert_eq!(
            size_of::<Option<Result<TaskOutput<()>, Failure>>>(),
            size_of::<Option<Result<(), Option<Panic>>>>()
        );
        assert_eq!(
            size_of::<Option<Result<TaskOutput<u64>, Failure>>>(),
            size_of::<Option<Result<u64, Option<Panic>>>>()
        );
    }

    /// A task's bookkeeping is three words beside an `Option` of its future
    /// (rounded up to a word): where its waker is registered rides in the
    /// stage's spare bytes (a field of its own made it four).
    #[test]
    fn the_bookkeeping_is_three_words_beside_an_option_of_the_future() {
        let held = Arc::new(7_u64);
        let word = size_of::<usize>();
        let (task, option) = sizes(async move {
            std::future::ready(()).await;
            *held
        });
        assert_eq!(task, option.next_multiple_of(word) + 3 * word);
        let (task, option) = sizes(std::future::ready(0_u8));
        assert_eq!(task, option.next_multiple_of(word) + 3 * word);
    }
}
