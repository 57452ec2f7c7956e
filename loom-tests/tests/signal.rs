//! Loom models of `Notify`'s permit and hand-over protocol: a permit is
//! consumed exactly once, and a `notify_one` racing with a waiter that
//! leaves is passed on or stored, never lost; a `notify_all` reaches a
//! waiter made before it even if its first poll races with it. A lost notification shows up
//! as a deadlock (a `block_on` nobody wakes) or a failed assertion.
#![cfg(loom)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};

use fastexec::signal::{Notified, Notify};
use loom::future::block_on;
use loom::sync::Arc;
use loom::thread;

struct NoopWake;

impl Wake for NoopWake {
    fn wake(self: std::sync::Arc<Self>) {}
}

fn poll_once(notified: &mut Notified<'_>) -> Poll<()> {
    let waker = Waker::from(std::sync::Arc::new(NoopWake));
    Pin::new(notified).poll(&mut Context::from_waker(&waker))
}

/// Consumes a stored permit if there is one.
fn take_stored_permit(notify: &Notify) -> bool {
    poll_once(&mut notify.notified()).is_ready()
}

#[test]
fn a_permit_stored_before_the_wait_is_consumed() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let sender = Arc::clone(&notify);
        thread::spawn(move || sender.notify_one()).join().unwrap();

        block_on(notify.notified());
        assert!(!take_stored_permit(&notify), "the permit was used once");
    });
}

#[test]
fn a_permit_racing_with_the_wait_completes_it() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let sender = Arc::clone(&notify);
        let sending = thread::spawn(move || sender.notify_one());

        block_on(notify.notified());
        sending.join().unwrap();
        assert!(!take_stored_permit(&notify));
    });
}

#[test]
fn a_notify_racing_with_the_drop_of_the_waiter_is_never_lost() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let sender = Arc::clone(&notify);
        let sending = thread::spawn(move || sender.notify_one());

        // The first poll may take a permit, or register and be chosen, or
        // register and be left; then the waiter gives up.
        let mut waiter = notify.notified();
        let completed = poll_once(&mut waiter).is_ready();
        drop(waiter);
        sending.join().unwrap();

        let kept = take_stored_permit(&notify);
        assert!(
            completed != kept,
            "delivered {completed}, kept {kept}: exactly one"
        );
    });
}

#[test]
fn a_chosen_waiter_that_leaves_hands_the_notification_to_the_next() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let mut leaving = notify.notified();
        assert!(poll_once(&mut leaving).is_pending());

        let staying_notify = Arc::clone(&notify);
        let staying = thread::spawn(move || block_on(staying_notify.notified()));
        let sender = Arc::clone(&notify);
        let sending = thread::spawn(move || sender.notify_one());

        drop(leaving);
        sending.join().unwrap();
        // Deadlocks if the notification died with the leaving waiter.
        staying.join().unwrap();
        assert!(!take_stored_permit(&notify));
    });
}

#[test]
fn a_notify_all_racing_with_the_first_poll_of_an_earlier_waiter_completes_it() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let waiter_made = notify.notified();
        let sender = Arc::clone(&notify);
        let sending = thread::spawn(move || sender.notify_all());

        // Whether the first poll comes before, during or after the
        // notify_all, the waiter completes (block_on would deadlock if not).
        block_on(waiter_made);
        sending.join().unwrap();
        assert!(!take_stored_permit(&notify), "notify_all stores no permit");
    });
}
