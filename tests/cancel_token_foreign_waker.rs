//! `CancellationToken::cancelled` polled under a waker the executor did
//! not make: `cancel` wakes it with no lock held, so it may poll (or drop)
//! the wait again on the spot; and a waker whose `wake` panics leaves the
//! rest of the tree cancelled and the other waiters woken.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use fastexec::cancel::CancellationToken;
use support::{
    get, panicking_waker, poll_shared, poll_with, quiet_panics, repolled_on_wake, within,
    CountingWake,
};

#[test]
fn a_waiters_waker_may_poll_the_wait_again_when_woken() {
    within(10, || {
        let token: &'static CancellationToken = Box::leak(Box::new(CancellationToken::new()));
        let (wait, waker) = repolled_on_wake(token.cancelled());
        assert!(poll_shared(&wait, &waker));
        token.cancel();
        assert!(
            wait.lock().unwrap().is_none(),
            "the wait completed in its wake"
        );
    })
}

/// What the waker of the next test panics with.
const WAKE_PANIC: &str = "cancellation waker panics";

#[test]
fn a_panicking_waker_leaves_the_tree_cancelled_and_the_other_waiters_woken() {
    quiet_panics(WAKE_PANIC);
    within(10, || {
        let parent = CancellationToken::new();
        let child = parent.child_token();
        let (woken, panicking) = panicking_waker(WAKE_PANIC);
        let other = std::sync::Arc::new(CountingWake::default());
        let other_waker = std::task::Waker::from(other.clone());
        let mut first = Box::pin(parent.cancelled());
        let mut second = Box::pin(parent.cancelled());
        let mut on_child = Box::pin(child.cancelled());
        assert!(poll_with(&mut first, &panicking).is_pending());
        assert!(poll_with(&mut second, &other_waker).is_pending());
        assert!(poll_with(&mut on_child, &other_waker).is_pending());
        let cancelled = catch_unwind(AssertUnwindSafe(|| parent.cancel()));
        assert!(cancelled.is_err(), "the waker's panic reaches the caller");
        assert_eq!(get(&woken), 1);
        assert!(child.is_cancelled(), "the child was cancelled too");
        assert_eq!(other.count(), 2, "the other waiters were woken");
    })
}
