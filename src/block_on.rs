//! `block_on`: drive a future on the calling thread, then wait for every
//! task it spawned.
//!
//! The root future runs inside a fresh task group: while it is polled, and
//! while it is dropped once it is ready, the group's membership is in
//! thread-local state, so every task it spawns (its destructor included),
//! and every task those spawn, counts in the group. `block_on` returns when
//! the root future has completed **and** the group is empty. Called inside
//! a task (or another `block_on`'s root), the new group goes in front of
//! the caller's chain of groups, so its tasks also count in the caller's
//! groups: a [`TaskGroup`](crate::TaskGroup) the caller belongs to counts
//! them and its `cancel` reaches them.
//!
//! On a thread that is not one of the executor's workers, the thread sleeps
//! on a parker between polls. On one of the executor's own workers (a task
//! calling `block_on`), sleeping would take a worker away, and with one
//! worker would deadlock; so the worker keeps running queued tasks between
//! polls and parks through the normal idle protocol, with the root future's
//! waker able to unpark it.
//!
//! If the root future panics, the panic leaves `block_on` at once; the
//! tasks it spawned are not cancelled and run on, detached.
//!
//! On a thread whose thread-local state is being torn down (a `block_on`
//! in a destructor run at thread exit) the executor may not be entered nor
//! the membership installed (each needs its thread-locals): then the root's
//! spawns go to the global executor ([`context::with_executor`] finds
//! none), or are not counted in the group it waits for, and the tasks the
//! simple scheduler runs here are polled as they are, their membership
//! neither lent nor cached (`task/mod.rs`): whatever membership is current
//! on this thread then stays so. No queue of last resort either.

use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use crate::context;
use crate::executor::Shared;
use crate::park::{Parker, Unparker};
use crate::sync::{thread_local, AtomicBool, Mutex, Ordering::*};
use crate::task_group::{GroupInner, Membership, MembershipArc};
use crate::time::queue::TimerQueue;
use crate::worker::Worker;
use std::cell::RefCell;
use std::sync::Arc;

/// See [`crate::block_on`].
pub(crate) fn block_on<F: Future>(shared: &Arc<Shared>, future: F) -> F::Output {
    let group = GroupInner::new();
    // In front of the caller's chain, if any (a `block_on` inside a task):
    // the tasks it spawns then also count in the caller's groups, so that
    // a `TaskGroup` of the caller sees them and its `cancel` reaches them.
    let membership = Membership::new(group.clone(), context::membership());
    let root = async move {
        let output = InScope {
            future: Some(future),
            membership: &membership,
        }
        .await;
        // Let go of the scope's membership: the group empties when the
        // last task holding it finishes (see `task_group.rs`).
        drop(membership);
        group.wait().await;
        output
    };
    if let Some(simple) = &shared.ext.simple {
        return simple.block_on(shared, root);
    }
    match context::worker_of(shared) {
        Some(worker) => {
            // Inside a `block_on` of another executor, which set this
            // worker aside: its own again while this one runs.
            let _own = (!context::is_worker_of(shared.id()))
                .then(|| context::enter_executor(shared.clone()));
            run_on_worker(&worker, root)
        }
        None => {
            let _executor = context::enter_executor(shared.clone());
            run_parked(root, shared)
        }
    }
}

pin_project_lite::pin_project! {
    /// Polls `future` with `membership` installed in thread-local state,
    /// and drops it there once it is ready: a task its destructor spawns
    /// (a clean-up, say) counts in the scope, as for a task's future
    /// (`task/mod.rs`).
    struct InScope<'a, F> {
        #[pin]
        future: Option<F>,
        membership: &'a MembershipArc,
    }
}

impl<F: Future> Future for InScope<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let mut this = self.project();
        // Not on a thread whose thread-local state is being torn down (a
        // `block_on` in a destructor run at thread exit): there is nowhere
        // to install it (see the module docs).
        let _restore = context::can_install_membership().then(|| {
            let outer = context::replace_membership(Some(this.membership.clone()));
            RestoreMembership(Some(outer))
        });
        let future = this
            .future
            .as_mut()
            .as_pin_mut()
            .expect("block_on's root polled after it completed");
        let polled = future.poll(cx);
        if polled.is_ready() {
            this.future.set(None);
        }
        polled
    }
}

/// Puts the outer membership back, also when the poll panics.
struct RestoreMembership(Option<Option<MembershipArc>>);

impl Drop for RestoreMembership {
    fn drop(&mut self) {
        if let Some(outer) = self.0.take() {
            // Our clone comes back and is dropped here.
            drop(context::replace_membership(outer));
        }
    }
}

/// Wakes a thread that sleeps in `run_parked`.
struct ThreadWaker(Unparker);

impl Wake for ThreadWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` whenever woken, sleeping in between; the sleep lasts no
/// longer than the nearest timer of the executor, or of this thread's
/// queue of last resort ([`fallback_timers`]), which it then fires.
pub(crate) fn run_parked<F: Future>(future: F, shared: &Shared) -> F::Output {
    // A parker per call: a nested `block_on` must not consume the outer
    // one's wake-ups.
    let parker = Parker::new();
    let waker = Waker::from(std::sync::Arc::new(ThreadWaker(parker.unparker())));
    let _fallback = FallbackScope::enter(parker.unparker());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        let fallback = FallbackScope::queue();
        let own = fallback.as_ref().and_then(|queue| queue.next_deadline());
        match earlier(shared.timers().next_deadline(), own) {
            Some(deadline) => {
                parker.park_timeout(deadline.saturating_duration_since(Instant::now()));
                shared.fire_due_timers();
                if let Some(queue) = fallback {
                    queue.fire_expired(Instant::now());
                }
            }
            None => parker.park(),
        }
    }
}

fn earlier(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// This thread's `run_parked` calls and its timer queue of last resort.
#[derive(Default)]
struct Fallback {
    /// The unparkers of the `run_parked` calls under way on this thread,
    /// innermost last.
    calls: Vec<Unparker>,
    /// The queue, made on first use, and the innermost call's unparker,
    /// which the queue's hook wakes (an insert from another thread, of a
    /// sleep polled here and then moved, must shorten its park).
    queue: Option<(Arc<TimerQueue>, Arc<Mutex<Unparker>>)>,
}

thread_local! {
    static FALLBACK: RefCell<Fallback> = RefCell::new(Fallback::default());
}

/// A queue for a timer that has nowhere else to go, if the calling thread
/// is inside a `block_on` that sleeps on a parker: the thread's own, made
/// on first use, which the innermost such call fires as it fires its
/// executor's. One per thread, not per call: a nested call (a sleep's
/// owner awaiting it in a `block_on` of its own, say) must fire the
/// timers an outer call put there, since the outer call cannot run until
/// it returns.
///
/// A timer goes there when the executor it is polled under has shut down
/// and closed its queue: a `block_on(sleep(..))` in a blocking job of an
/// executor being dropped, whose drop waits for that job. Anywhere else
/// (`None`) it can only ask to be polled again.
pub(crate) fn fallback_timers() -> Option<Arc<TimerQueue>> {
    FALLBACK
        .try_with(|fallback| {
            let mut fallback = fallback.borrow_mut();
            let innermost = fallback.calls.last()?.clone();
            let (queue, _) = fallback.queue.get_or_insert_with(|| {
                let innermost = Arc::new(Mutex::new(innermost));
                let woken = Arc::clone(&innermost);
                let hook = move || woken.lock().unwrap_or_else(|e| e.into_inner()).unpark();
                (Arc::new(TimerQueue::new(Box::new(hook))), innermost)
            });
            Some(Arc::clone(queue))
        })
        .ok()
        .flatten()
}

/// A `run_parked` call's entry in [`FALLBACK`], removed when the call
/// returns or unwinds. When the outermost call ends, the thread's queue,
/// if one was made, is closed: the timers still in it are woken and
/// register again, on their next poll, wherever they are polled then (as
/// when an executor shuts down).
///
/// On a thread whose thread-local state is being torn down there is no
/// entry (`false`) and no queue: a timer with nowhere else to go asks to
/// be polled again.
struct FallbackScope(bool);

impl FallbackScope {
    fn enter(unparker: Unparker) -> Self {
        let entered = FALLBACK.try_with(|fallback| {
            let mut fallback = fallback.borrow_mut();
            if let Some((_, innermost)) = &fallback.queue {
                *innermost.lock().unwrap_or_else(|e| e.into_inner()) = unparker.clone();
            }
            fallback.calls.push(unparker);
        });
        FallbackScope(entered.is_ok())
    }

    /// The thread's queue, if a timer made it.
    fn queue() -> Option<Arc<TimerQueue>> {
        FALLBACK
            .try_with(|fallback| fallback.borrow().queue.as_ref().map(|(q, _)| Arc::clone(q)))
            .ok()
            .flatten()
    }
}

impl Drop for FallbackScope {
    fn drop(&mut self) {
        if !self.0 {
            return;
        }
        let closed = FALLBACK.with(|fallback| {
            let mut fallback = fallback.borrow_mut();
            fallback.calls.pop();
            match (fallback.calls.last(), &fallback.queue) {
                (Some(outer), Some((_, innermost))) => {
                    *innermost.lock().unwrap_or_else(|e| e.into_inner()) = outer.clone();
                    None
                }
                (Some(_), None) => None,
                (None, _) => fallback.queue.take(),
            }
        });
        // Outside the borrow: closing wakes the timers' wakers.
        if let Some((queue, _)) = closed {
            queue.close();
        }
    }
}

/// Wakes a worker that runs a nested `block_on`.
struct WorkerWaker {
    woken: AtomicBool,
    unparker: Unparker,
}

impl Wake for WorkerWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        // Release: pairs with the Acquire swap in `run_on_worker`, so the
        // poll that follows sees what the waker's caller did.
        self.woken.store(true, Release);
        self.unparker.unpark();
    }
}

/// Polls `future` whenever woken, running the worker's tasks in between:
/// one task after each poll at least, so that a future that wakes itself
/// (a `yield_now` loop waiting for another task) does not keep the worker
/// from the task it waits for. Like the worker's own loop, it looks for a
/// shutdown before every task: a task that keeps waking itself must not
/// hold the worker (and the executor's drop) here.
fn run_on_worker<F: Future>(worker: &Worker, future: F) -> F::Output {
    let shared = worker.shared();
    let signal = std::sync::Arc::new(WorkerWaker {
        woken: AtomicBool::new(true),
        unparker: shared.unparker(worker.index()).clone(),
    });
    let waker = Waker::from(signal.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        // Acquire: pairs with the Release store in `wake_by_ref`.
        if signal.woken.swap(false, Acquire) {
            // The root's poll is work found, as a task is for `run_task`: a
            // search `next_task` began must end before it. Counted as
            // searching through a long poll after `block_on` returns, the
            // worker would keep every notifier quiet and, with two workers,
            // the other from searching.
            worker.end_search_if_searching();
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return output;
            }
        }
        if shared.is_shutdown() {
            panic!("fastexec: the executor shut down while a task was blocked in block_on");
        }
        if let Some(task) = worker.next_task() {
            worker.run_task(task);
            continue;
        }
        // Relaxed: only a hint (woken while polled: poll again rather
        // than park); the swap above synchronises with the waker.
        if signal.woken.load(Relaxed) {
            continue;
        }
        let held_timers = worker.park();
        // Relaxed: only a hint; the swap at the top of the loop is what
        // synchronises with the waker.
        if held_timers && signal.woken.load(Relaxed) {
            // Woken for the root future, which may now complete and hand
            // this worker back to the task that called `block_on`, perhaps
            // for a long poll. The role was given back on waking, and the
            // other workers may all sleep with no timeout: without a
            // hand-off no one would fire the pending timers until that poll
            // returns.
            shared.hand_off_timer_role();
        }
    }
}
