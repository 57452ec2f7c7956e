//! A `TaskGroup::wait` polled under a foreign waker whose `wake` panics.
//! The member that finishes last wakes it as it leaves its groups; the
//! panic must not stop it from leaving the groups around that one, or those
//! would count the member forever and their waits would never end.

mod support;

use fastexec::TaskGroup;
use support::{executor, panicking_waker, poll_with, spin_until, within, Gate};

#[test]
fn a_panicking_waiter_of_an_inner_group_does_not_keep_the_member_in_the_outer_one() {
    within(10, || {
        let ex = executor(1);
        let outer: &'static TaskGroup = Box::leak(Box::new(TaskGroup::new()));
        let inner: &'static TaskGroup = Box::leak(Box::new(TaskGroup::new()));
        let release = Gate::new();
        let gate = release.clone();
        // The member is spawned in `inner` from a task of `outer`: it
        // belongs to both.
        ex.block_on(outer.spawn(async move {
            inner.spawn(async move { gate.wait().await }).detach();
        }))
        .unwrap();
        // The spawning task's output can be back before its worker has
        // released its place in `outer` (`TaskGroup::active` may lag).
        assert!(spin_until(|| outer.active() <= 1));
        assert_eq!((outer.active(), inner.active()), (1, 1));
        let (woken, waker) = panicking_waker("the waiter's waker panics");
        let mut wait = Box::pin(inner.wait());
        assert!(
            poll_with(&mut wait, &waker).is_pending(),
            "a member is alive"
        );
        release.open();
        assert!(spin_until(|| woken
            .load(std::sync::atomic::Ordering::SeqCst)
            == 1));
        assert!(
            spin_until(|| outer.is_empty() && inner.is_empty()),
            "the member left both groups: outer {}, inner {}",
            outer.active(),
            inner.active()
        );
        ex.block_on(outer.wait());
        // The executor's worker survived the panic: it still runs tasks.
        assert_eq!(ex.block_on(ex.spawn(async { 7 })).unwrap(), 7);
    })
}
