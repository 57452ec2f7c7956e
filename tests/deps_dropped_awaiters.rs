//! Awaiters of a completion that go away before it finishes (a completion
//! future polled and dropped, as in a `select!` or under a timeout) leave no
//! slot behind: the next awaiter or dependent takes it.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use fastexec::{Completion, Executor};
use support::{executor, spin_until, with_timeout, CountingWake, Gate};

/// Polls `completion` once with a waker counting its wakes; it must pend.
fn poll_pending(completion: &mut Completion<()>) -> Arc<CountingWake> {
    let wake = Arc::new(CountingWake::default());
    let waker = Waker::from(wake.clone());
    let poll = Pin::new(completion).poll(&mut Context::from_waker(&waker));
    assert!(matches!(poll, Poll::Pending), "the gate is still closed");
    wake
}

/// A task on `ex` that finishes once the gate opens.
fn gated_task(ex: &Executor) -> (Gate, Completion<()>) {
    let gate = Gate::new();
    let opened = gate.clone();
    (
        gate,
        ex.spawn_completion(async move { opened.wait().await }),
    )
}

#[test]
fn polling_and_dropping_awaiters_in_a_loop_keeps_one_slot() {
    with_timeout(|| {
        let ex = executor(1);
        let (gate, task) = gated_task(&ex);
        for _ in 0..10_000 {
            let mut awaiter = task.clone();
            poll_pending(&mut awaiter);
            drop(awaiter);
        }
        assert_eq!(
            task.waiter_slots(),
            1,
            "each dropped awaiter freed its slot"
        );
        gate.open();
        ex.block_on(task.clone()).expect("the task succeeds");
        // The awaiter may see the outcome just before the finisher empties
        // the lists (it stores the outcome first, then takes the lock).
        assert!(
            spin_until(|| task.waiter_slots() == 0),
            "a finished node keeps no waiters"
        );
    });
}

#[test]
fn a_freed_slot_serves_the_next_awaiter_and_dependent() {
    with_timeout(|| {
        let ex = executor(1);
        let (gate, task) = gated_task(&ex);
        let (mut first, mut second, mut third) = (task.clone(), task.clone(), task.clone());
        let first_wakes = poll_pending(&mut first);
        let second_wakes = poll_pending(&mut second);
        drop(first);
        let third_wakes = poll_pending(&mut third);
        drop(second);
        let dependent = ex.spawn_after(&task, |_| async { "released" });
        assert_eq!(
            task.waiter_slots(),
            2,
            "the third awaiter and the dependent reused slots"
        );

        gate.open();
        let output = ex.block_on(dependent).expect("the dependent runs");
        assert_eq!(*output, "released");
        assert!(
            spin_until(|| third_wakes.count() == 1),
            "the live awaiter is woken"
        );
        assert_eq!(
            (first_wakes.count(), second_wakes.count()),
            (0, 0),
            "dropped awaiters are not"
        );
        assert!(matches!(
            Pin::new(&mut third).poll(&mut Context::from_waker(Waker::noop())),
            Poll::Ready(Ok(_))
        ));
    });
}

/// A completion that was polled (so it holds a waker slot) and is then given
/// by value to `spawn_after` frees its slot, as dropping it would: the
/// dependent takes it.
#[test]
fn an_awaiter_given_to_spawn_after_frees_its_slot() {
    with_timeout(|| {
        let ex = executor(1);
        let (gate, task) = gated_task(&ex);
        let mut awaiter = task.clone();
        let wakes = poll_pending(&mut awaiter);
        assert_eq!(task.waiter_slots(), 1);
        let dependent = ex.spawn_after(awaiter, |_| async { "released" });
        assert_eq!(
            task.waiter_slots(),
            1,
            "the dependent took the slot the awaiter left"
        );
        gate.open();
        assert_eq!(
            *ex.block_on(dependent).expect("the dependent runs"),
            "released"
        );
        assert_eq!(wakes.count(), 0, "the given-away awaiter is not woken");
    });
}

/// A waker whose drop reads the label of a completion: foreign code that
/// may run when the node lets go of an awaiter's waker (a hand-written
/// executor's waker is often its task, which owns the task's future and so
/// the completion handles in it).
struct LabelOnDrop(Completion<()>);

impl std::task::Wake for LabelOnDrop {
    fn wake(self: Arc<Self>) {}
}

impl Drop for LabelOnDrop {
    fn drop(&mut self) {
        assert!(self.0.label().name().is_none());
    }
}

/// Polls `awaiter` with a waker holding a clone of `task`; once this
/// returns, the node holds the only reference to that waker.
fn poll_with_label_on_drop(awaiter: &mut Completion<()>, task: &Completion<()>) {
    let waker = Waker::from(Arc::new(LabelOnDrop(task.clone())));
    let poll = Pin::new(awaiter).poll(&mut Context::from_waker(&waker));
    assert!(matches!(poll, Poll::Pending), "the gate is still closed");
}

/// The node drops a waker it lets go of outside its lock: an awaiter that
/// goes away, or polls again with another waker, does not deadlock when
/// the old waker's drop calls back into the completion.
#[test]
fn a_waker_let_go_of_may_call_back_into_the_completion() {
    with_timeout(|| {
        let ex = executor(1);
        let (gate, task) = gated_task(&ex);
        let mut gone = task.clone();
        poll_with_label_on_drop(&mut gone, &task);
        drop(gone);
        let mut repolled = task.clone();
        poll_with_label_on_drop(&mut repolled, &task);
        let wakes = poll_pending(&mut repolled);
        gate.open();
        ex.block_on(task.clone()).expect("the task succeeds");
        assert!(spin_until(|| wakes.count() == 1), "the new waker is woken");
    });
}
