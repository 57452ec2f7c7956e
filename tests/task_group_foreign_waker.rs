//! A `TaskGroup::wait` polled under a waker the executor did not make: the
//! waker is woken, by the member that finishes last, with no lock of the
//! group held, so it may poll (or drop) the wait again on the spot.

mod support;

use fastexec::TaskGroup;
use support::{executor, poll_shared, repolled_on_wake, spin_until, within, Gate};

#[test]
fn a_waiters_waker_may_poll_the_wait_again_when_woken() {
    within(10, || {
        let ex = executor(1);
        let group: &'static TaskGroup = Box::leak(Box::new(TaskGroup::new()));
        let release = Gate::new();
        let gate = release.clone();
        ex.block_on(ex.spawn(async move {
            group.spawn(async move { gate.wait().await }).detach();
        }))
        .unwrap();
        let (wait, waker) = repolled_on_wake(group.wait());
        assert!(poll_shared(&wait, &waker), "a member is alive");
        release.open();
        assert!(
            spin_until(|| wait.lock().unwrap().is_none()),
            "the wait, polled again by its waker, completed"
        );
    })
}
