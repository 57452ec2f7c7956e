//! Thread-local state: which worker this thread is, which executor a
//! `block_on` on this thread belongs to, and the task-group membership of
//! whatever is being polled right now.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::executor::Shared;
use crate::task_group::{MemberGuard, Membership};
use crate::worker::Worker;
use std::sync::Arc;

thread_local! {
    /// Set for the whole life of a worker thread.
    static WORKER: RefCell<Option<Rc<Worker>>> = const { RefCell::new(None) };
    /// Set while `block_on` runs on a thread that is not a worker.
    static EXECUTOR: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
    /// The membership of the task (or `block_on` root) being polled.
    static MEMBERSHIP: Cell<Option<Arc<Membership>>> = const { Cell::new(None) };
    /// Whether `MEMBERSHIP` is set. Having no destructor, it is read without
    /// the registration check `MEMBERSHIP` costs, so the common case (a
    /// task in no group, polled where no membership is installed) skips
    /// `MEMBERSHIP` altogether.
    static HAS_MEMBERSHIP: Cell<bool> = const { Cell::new(false) };
    /// The group guard of a task that completed on a thread that is not a
    /// worker (the simple scheduler runs tasks on `block_on`'s thread),
    /// released by [`release_finished`].
    static FINISHED: Cell<Option<MemberGuard>> = const { Cell::new(None) };
}

/// Hands the group guard of a task that completed in this poll to the worker
/// running it, which releases it once `Runnable::run` has stored (or dropped)
/// the output.
pub(crate) fn stash_finished(guard: MemberGuard) {
    with_worker(|worker| match worker {
        Some(worker) => worker.stash_finished(guard),
        None => drop(FINISHED.with(|f| f.replace(Some(guard)))),
    })
}

/// Releases the guard stashed by the task that just ran on this thread, if
/// it completed: for code that runs tasks outside [`Worker::run_task`]
/// (the simple scheduler), after `Runnable::run` returned.
pub(crate) fn release_finished() {
    with_worker(|worker| match worker {
        Some(worker) => worker.release_finished(),
        None => drop(FINISHED.with(Cell::take)),
    })
}

/// Marks this thread as `worker`'s thread until [`exit_worker`].
pub(crate) fn enter_worker(worker: Rc<Worker>) {
    WORKER.with(|w| *w.borrow_mut() = Some(worker));
}

/// Unmarks a worker thread, before it drains its queue.
pub(crate) fn exit_worker() {
    let worker = WORKER.with(|w| w.borrow_mut().take());
    drop(worker);
}

/// Runs `f` with this thread's worker, if it is one.
#[inline]
pub(crate) fn with_worker<R>(f: impl FnOnce(Option<&Worker>) -> R) -> R {
    WORKER.with(|w| f(w.borrow().as_deref()))
}

/// The worker of this thread if it belongs to `shared`.
pub(crate) fn worker_of(shared: &Shared) -> Option<Rc<Worker>> {
    WORKER.with(|w| {
        w.borrow()
            .as_ref()
            .filter(|w| std::ptr::eq(w.shared(), shared))
            .cloned()
    })
}

/// Runs `f` with the executor this thread spawns onto: the one whose
/// `block_on` is running here, else its worker's; `None` elsewhere. The
/// worker is passed too when the executor is this thread's worker's, so the
/// spawn path need not look it up again.
#[inline]
pub(crate) fn with_executor<R>(f: impl FnOnce(Option<&Arc<Shared>>, Option<&Worker>) -> R) -> R {
    EXECUTOR.with(|e| match &*e.borrow() {
        // Set only on threads that are not this executor's workers.
        Some(shared) => f(Some(shared), None),
        None => WORKER.with(|w| match w.borrow().as_deref() {
            Some(worker) => f(Some(worker.shared_arc()), Some(worker)),
            None => f(None, None),
        }),
    })
}

/// Makes `shared` this thread's executor until the guard drops.
pub(crate) fn enter_executor(shared: Arc<Shared>) -> ExecutorGuard {
    let prev = EXECUTOR.with(|e| e.borrow_mut().replace(shared));
    ExecutorGuard(prev)
}

/// Restores the previous executor of a `block_on` thread.
pub(crate) struct ExecutorGuard(Option<Arc<Shared>>);

impl Drop for ExecutorGuard {
    fn drop(&mut self) {
        let prev = self.0.take();
        EXECUTOR.with(|e| *e.borrow_mut() = prev);
    }
}

/// A clone of the current membership.
#[inline]
pub(crate) fn membership() -> Option<Arc<Membership>> {
    if !has_membership() {
        return None;
    }
    MEMBERSHIP.with(|m| {
        let current = m.take();
        let copy = current.clone();
        m.set(current);
        copy
    })
}

/// Installs `membership` and returns the previous one.
#[inline]
pub(crate) fn replace_membership(membership: Option<Arc<Membership>>) -> Option<Arc<Membership>> {
    if membership.is_none() && !has_membership() {
        return None;
    }
    HAS_MEMBERSHIP.with(|h| h.set(membership.is_some()));
    MEMBERSHIP.with(|m| m.replace(membership))
}

/// Whether a membership is installed on this thread.
#[inline]
fn has_membership() -> bool {
    HAS_MEMBERSHIP.with(Cell::get)
}
