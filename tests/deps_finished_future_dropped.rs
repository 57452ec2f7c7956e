//! A completion is finished only once its task's future is gone, as a
//! `JoinHandle` is: an awaiter woken by the outcome (or a dependent it
//! releases, on another worker) finds what the future held released, as
//! `Arc::try_unwrap` or a lock the future's captures held would need.
//!
//! The task's future holds a guard until it is dropped (as an `async`
//! block holds what it captures without moving it). The test awaits the
//! completion with a waker that, when the outcome wakes it, records how
//! many guards were dropped by then: the wake comes from the thread
//! finishing the task, so this needs no timing.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use fastexec::Completion;
use support::{
    executor, quiet_panics, spin_until, within, CallbackWaker, DropCounter, DropGuard, Gate,
    PanicOnDrop, ReadyNow, PANIC_ON_DROP,
};

/// Gives 7 once `gate` opens; holds `_held` until it is dropped.
struct Holding {
    gate: Pin<Box<dyn Future<Output = ()> + Send>>,
    _held: DropGuard,
}

impl Holding {
    fn new(gate: &Gate, held: DropGuard) -> Self {
        let gate = gate.clone();
        Holding {
            gate: Box::pin(async move { gate.wait().await }),
            _held: held,
        }
    }
}

impl Future for Holding {
    type Output = i32;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<i32> {
        std::task::ready!(self.gate.as_mut().poll(cx));
        Poll::Ready(7)
    }
}

/// Not recorded yet.
const UNSEEN: usize = usize::MAX;

/// Awaits `task` with a waker recording `drops.count()` when woken, opens
/// `gate` (on which the task's future waits), and returns what the waker
/// recorded; checks the task's output.
fn guards_dropped_at_wake(task: Completion<i32>, gate: &Gate, drops: &DropCounter) -> usize {
    let seen = Arc::new(AtomicUsize::new(UNSEEN));
    let waker = {
        let (seen, drops) = (seen.clone(), drops.clone());
        CallbackWaker::on_wake(move || {
            let _ =
                seen.compare_exchange(UNSEEN, drops.count(), Ordering::SeqCst, Ordering::SeqCst);
        })
    };
    let mut awaiting = task.clone();
    let polled = Pin::new(&mut awaiting).poll(&mut Context::from_waker(&waker));
    assert!(
        polled.is_pending(),
        "the task finished before the gate opened"
    );
    gate.open();
    assert!(
        spin_until(|| seen.load(Ordering::SeqCst) != UNSEEN),
        "the awaiter was never woken"
    );
    assert_eq!(*fastexec::block_on(task).unwrap(), 7);
    seen.load(Ordering::SeqCst)
}

#[test]
fn an_awaiter_woken_by_a_completion_finds_its_tasks_future_dropped() {
    within(30, || {
        let ex = executor(1);
        let (gate, drops) = (Gate::new(), DropCounter::new());
        let task = ex.spawn_completion(Holding::new(&gate, drops.guard()));
        assert_eq!(
            guards_dropped_at_wake(task, &gate, &drops),
            1,
            "the completion was finished while its task's future still held its captures"
        );
    })
}

#[test]
fn an_awaiter_woken_by_a_dependents_completion_finds_its_body_dropped() {
    within(30, || {
        let ex = executor(1);
        let (gate, drops) = (Gate::new(), DropCounter::new());
        let first = ex.spawn_completion(async { 1 });
        let (body_gate, held) = (gate.clone(), drops.guard());
        let task = ex.spawn_after(first, move |_| Holding::new(&body_gate, held));
        assert_eq!(
            guards_dropped_at_wake(task, &gate, &drops),
            1,
            "the dependent's completion was finished while its body's future still held its captures"
        );
    })
}

/// As for a `JoinHandle` (`panic_in_future_drop.rs`), a panic from the
/// destructor of a future that gave its output is the task's panic: the
/// future is dropped before the outcome is stored.
#[test]
fn a_panic_in_the_destructor_of_a_ready_future_is_the_completions_panic() {
    quiet_panics(PANIC_ON_DROP);
    within(30, || {
        let ex = executor(1);
        let drops = DropCounter::new();
        let task = ex.spawn_completion(ReadyNow(PanicOnDrop::new(drops.guard())));
        let err = ex.block_on(task).unwrap_err();
        assert!(err.is_panic(), "{err}");
        assert!(err.to_string().contains(PANIC_ON_DROP), "{err}");
        assert_eq!(drops.count(), 1);
    })
}
