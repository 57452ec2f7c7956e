//! A `Notify` holding a waker the executor did not make must drop it
//! outside its lock: the waker's drop may notify the same `Notify` (a
//! foreign executor's waker may own a task that does).

mod support;

use std::sync::Arc;

use fastexec::signal::Notify;
use futures::task::noop_waker;
use support::{poll_with, within, CallbackWaker};

/// A registered waiter dropped before it is notified drops its waker,
/// whose drop notifies: the permit it leaves is there for the next waiter.
#[test]
fn a_dropped_waiters_waker_is_dropped_outside_the_lock() {
    within(10, || {
        let notify = Arc::new(Notify::new());
        let notifier = notify.clone();
        let waker = CallbackWaker::on_drop(move || notifier.notify_one());
        let mut notified = notify.notified();
        assert!(poll_with(&mut notified, &waker).is_pending());
        // The waiter list holds the only clone now.
        drop(waker);
        drop(notified);
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
        let notifier = notify.clone();
        let waker = CallbackWaker::on_drop(move || notifier.notify_one());
        let mut notified = notify.notified();
        assert!(poll_with(&mut notified, &waker).is_pending());
        drop(waker);
        assert!(poll_with(&mut notified, &noop_waker()).is_pending());
        assert!(poll_with(&mut notified, &noop_waker()).is_ready());
    })
}
