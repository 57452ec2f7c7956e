//! Timers registered with a waker the executor did not make (a sleep
//! polled by hand, or under another executor's `block_on`): the timer
//! queue must not drop such a waker under its lock, and a panic in its
//! `wake` must not escape into the thread that fires it (a worker, or the
//! executor's drop).

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

use fastexec::time::{sleep, Sleep};
use futures::task::noop_waker;
use support::{
    executor, get, panicking_waker, poll_with, quiet_panics, spin_until, within, CallbackWaker,
    TIMEOUT,
};

/// What the wakers of these tests panic with.
const WAKE_PANIC: &str = "timer waker panics";

/// A sleep of `duration` registered, by a task of `ex`, in `ex`'s timer
/// queue with `waker`, and handed back to the test thread unfired.
fn registered_sleep(ex: &fastexec::Executor, duration: Duration, waker: std::task::Waker) -> Sleep {
    let (tx, rx) = mpsc::channel();
    ex.spawn(async move {
        let mut sleep = sleep(duration);
        assert!(poll_with(&mut sleep, &waker).is_pending());
        tx.send(sleep).unwrap();
    })
    .detach();
    rx.recv_timeout(TIMEOUT)
        .expect("the task registered the sleep")
}

/// A sleep polled again with another waker drops the old one; that waker's
/// drop registers a timer in the same queue (a foreign executor's waker may
/// own a task whose futures do), which must not find the queue locked.
#[test]
fn a_replaced_timer_waker_is_dropped_outside_the_queue_lock() {
    within(10, || {
        let ex = executor(1);
        ex.block_on(async {
            let mut sleep = sleep(Duration::from_secs(3600));
            let first = CallbackWaker::on_drop(|| {
                let mut other = fastexec::time::sleep(Duration::from_secs(3600));
                assert!(poll_with(&mut other, &noop_waker()).is_pending());
            });
            assert!(poll_with(&mut sleep, &first).is_pending());
            // The queue holds the only clone now.
            drop(first);
            assert!(poll_with(&mut sleep, &noop_waker()).is_pending());
        });
    })
}

/// A worker that fires a timer whose waker panics goes on running tasks.
#[test]
fn a_panicking_timer_waker_leaves_the_worker_running() {
    quiet_panics(WAKE_PANIC);
    within(20, || {
        let ex = executor(1);
        let (woken, waker) = panicking_waker(WAKE_PANIC);
        // Nothing on this thread fires timers meanwhile: the worker does.
        let sleep = registered_sleep(&ex, Duration::from_millis(1), waker);
        assert!(
            spin_until(|| get(&woken) == 1),
            "the worker fired the timer"
        );
        assert_eq!(ex.block_on(ex.spawn(async { 7 })).unwrap(), 7);
        drop(sleep);
    })
}

/// Dropping an executor wakes the timers still registered with it; a
/// panicking waker among them must not make the drop panic (and skip the
/// rest of the shutdown).
#[test]
fn dropping_an_executor_with_a_panicking_timer_waker_does_not_panic() {
    quiet_panics(WAKE_PANIC);
    within(20, || {
        let ex = executor(1);
        let (woken, waker) = panicking_waker(WAKE_PANIC);
        let sleep = registered_sleep(&ex, Duration::from_secs(3600), waker);
        let dropped = catch_unwind(AssertUnwindSafe(|| drop(ex)));
        assert_eq!(get(&woken), 1, "the drop woke the timer");
        assert!(
            dropped.is_ok(),
            "the waker's panic escaped the executor's drop"
        );
        drop(sleep);
    })
}
