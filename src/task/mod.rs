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
// come from the completion. A cancelled task's future is dropped after the
// task is marked closed, so there the guard simply drops with the future:
// the fields drop in declaration order, the user's future first.

pub(crate) mod builder;
mod join;

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

pub use crate::hooks::{TaskId, TaskMeta};
pub use builder::Builder;
pub(crate) use join::RawTask;
pub use join::{JoinError, JoinHandle};

use crate::context;
use crate::registry::Registration;
use crate::task_group::{CancelRegistration, MemberGuard, MembershipArc};

/// The runnable half of a task, as queued and run by workers.
pub(crate) type Runnable = async_task::Runnable;

/// A panic payload caught from a task.
pub(crate) type Panic = Box<dyn Any + Send + 'static>;

/// Why a task ended without a value of its own making.
pub(crate) enum Failure {
    /// Its future panicked.
    Panic(Panic),
    /// One of its task groups was cancelled.
    Cancelled,
}

pin_project_lite::pin_project! {
    /// The user's future plus the executor's bookkeeping (see module docs).
    pub(crate) struct TaskFuture<F> {
        // The user's future; `None` once it completed (dropped inside its
        // last poll) or while the task is dropped (see `PinnedDrop`).
        #[pin]
        future: Option<F>,
        registration: Option<Registration>,
        cancel_registration: CancelRegistration,
        member: MemberGuard,
    }

    impl<F> PinnedDrop for TaskFuture<F> {
        /// Drops the user's future, if still there, before the member guard
        /// (as the module docs require), catching a panic from its
        /// destructor: async-task drops a task's future under an
        /// abort-on-panic guard, so a future whose `Drop` panics when it is
        /// aborted, cancelled or dropped with its executor would otherwise
        /// abort the process. Such a panic is reported by the panic hook and
        /// otherwise discarded: the task ends cancelled either way. (A
        /// completed future was already dropped inside its last poll.)
        fn drop(this: Pin<&mut Self>) {
            let mut future = this.project().future;
            if future.is_some() {
                drop_caught(future.as_mut());
            }
        }
    }
}

/// Drops a task's future, catching a panic from its destructor (cold: only
/// a task that did not complete gets here with its future).
#[cold]
#[inline(never)]
fn drop_caught<F>(future: Pin<&mut Option<F>>) {
    let mut future = future;
    let _ = catch_unwind(AssertUnwindSafe(|| future.set(None)));
}

/// Polls the user's future and, once it is ready, drops it, still inside the
/// caller's `catch_unwind`: a panic from its destructor then becomes the
/// task's panic (the output is lost with the unwinding) instead of
/// unwinding out of async-task's drop of the task, which aborts the
/// process. A dropped `async` block is just its state word, so the
/// early drop costs next to nothing.
#[inline(always)]
fn poll_then_drop<F: Future>(
    mut future: Pin<&mut Option<F>>,
    cx: &mut Context<'_>,
) -> Poll<F::Output> {
    // Present until ready: async-task never polls a completed task again.
    let Some(inner) = future.as_mut().as_pin_mut() else {
        unreachable!("a task polled after it completed")
    };
    let polled = inner.poll(cx);
    if polled.is_ready() {
        future.set(None);
    }
    polled
}

impl<F: Future> TaskFuture<F> {
    /// Wraps `future`, counting it into every group of `membership`.
    pub(crate) fn new(future: F, membership: Option<MembershipArc>) -> Self {
        TaskFuture {
            future: Some(future),
            registration: None,
            cancel_registration: CancelRegistration::default(),
            member: MemberGuard::enter(membership),
        }
    }
}

impl<F: Future> Future for TaskFuture<F> {
    type Output = Result<F::Output, Failure>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let future = this.future;
        let polled = match this.member.membership() {
            // In no group, polled where no membership is installed (the
            // common case): there is nothing to lend out and take back, and
            // no group that could have been cancelled.
            None if !context::has_membership() => {
                catch_unwind(AssertUnwindSafe(|| poll_then_drop(future, cx)))
            }
            None => poll_lent(this.member, future, cx),
            Some(_) if this.member.is_cancelled() => {
                return Poll::Ready(Err(Failure::Cancelled));
            }
            // In some group, polled where none is installed (a worker), and
            // installed as the thread's cache, which the next task of the
            // same scope finds in place.
            Some(membership) if !context::has_membership() && context::enter_cached(membership) => {
                let polled = catch_unwind(AssertUnwindSafe(|| poll_then_drop(future, cx)));
                context::leave_cached();
                polled
            }
            Some(_) => poll_lent(this.member, future, cx),
        };
        match polled {
            Ok(Poll::Ready(output)) => {
                context::stash_finished(this.member.take_guard());
                Poll::Ready(Ok(output))
            }
            Err(panic) => {
                context::stash_finished(this.member.take_guard());
                Poll::Ready(Err(Failure::Panic(panic)))
            }
            Ok(Poll::Pending) => {
                if this.registration.is_none() {
                    *this.registration = Registration::register(cx.waker());
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
#[inline(never)]
fn poll_lent<F: Future>(
    member: &mut MemberGuard,
    future: Pin<&mut Option<F>>,
    cx: &mut Context<'_>,
) -> std::thread::Result<Poll<F::Output>> {
    let outer = context::replace_membership(member.take());
    let polled = catch_unwind(AssertUnwindSafe(|| poll_then_drop(future, cx)));
    member.restore(context::replace_membership(outer));
    polled
}
