//! A `Notify` holding a waker the executor did not make must drop it
//! outside its lock: the waker's drop may notify the same `Notify` (a
//! foreign executor's waker may own a task that does); and a waker whose
//! `wake` panics must not keep `notify_all` from waking the others.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use fastexec::signal::{Notified, Notify};
use futures::task::noop_waker;
use support::{poll_with, quiet_panics, within, CallbackWaker, CountingWake};

/// What the waker of the last test panics with.
const WAKE_PANIC: &str = "notified waker panics";

/// A waiter of `notify` registered with a waker whose drop calls
/// `notify_one`; the waiter list holds the only clone of that waker.
fn waiter_with_notifying_waker(notify: &Arc<Notify>) -> Notified<'_> {
    let notifier = notify.clone();
    let waker = CallbackWaker::on_drop(move || notifier.notify_one());
    let mut notified = notify.notified();
    assert!(poll_with(&mut notified, &waker).is_pending());
    notified
}

/// A registered waiter dropped before it is notified drops its waker,
/// whose drop notifies: the permit it leaves is there for the next waiter.
#[test]
fn a_dropped_waiters_waker_is_dropped_outside_the_lock() {
    within(10, || {
        let notify = Arc::new(Notify::new());
        drop(waiter_with_notifying_waker(&notify));
        let mut next = notify.notified();
        assert!(poll_with(&mut next, &noop_waker()).is_ready());
    })
}

/// A waiter polled again with another waker drops the old one, whose drop
/// notifies: the notification reaches that waiter.
#[test]
fn a_replaced_waiters_waker_is_dropped_outside_the_lock() {
    within(10, || {
        let notify = Arc::new(Notify::new());
        let mut notified = waiter_with_notifying_waker(&notify);
        assert!(poll_with(&mut notified, &noop_waker()).is_pending());
        assert!(poll_with(&mut notified, &noop_waker()).is_ready());
    })
}

/// `notify_all` wakes every waiter even if one waker panics; the panic
/// reaches its caller afterwards.
#[test]
fn a_panicking_waker_leaves_the_other_waiters_woken_by_notify_all() {
    quiet_panics(WAKE_PANIC);
    within(10, || {
        let notify = Notify::new();
        let panicking = CallbackWaker::on_wake(|| panic!("{WAKE_PANIC}"));
        let other = Arc::new(CountingWake::default());
        let other_waker = std::task::Waker::from(other.clone());
        let mut first = notify.notified();
        let mut second = notify.notified();
        assert!(poll_with(&mut first, &panicking).is_pending());
        assert!(poll_with(&mut second, &other_waker).is_pending());
        let notified = catch_unwind(AssertUnwindSafe(|| notify.notify_all()));
        assert!(notified.is_err(), "the waker's panic reaches the caller");
        assert_eq!(other.count(), 1, "the other waiter was woken");
        assert!(poll_with(&mut second, &other_waker).is_ready());
    })
}
