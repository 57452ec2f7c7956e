//! `RunHandle::wait` polled under a waker the executor did not make, one
//! that polls the wait again from inside its `wake` (as an executor that
//! polls inline on wake does). The run wakes its waiters with no lock held,
//! so that poll proceeds; before the fix the run's `event_listener::Event`
//! called the waker while holding the event's own lock, and the poll
//! deadlocked on it.

mod support;

use fastexec::graph::{Graph, Task};
use fastexec::TaskGroup;
use support::{executor, poll_shared, repolled_on_wake, spin_until, within, Gate};

#[test]
fn a_waiters_waker_may_poll_the_wait_again_when_woken() {
    within(10, || {
        let ex = executor(1);
        let group: &'static TaskGroup = Box::leak(Box::new(TaskGroup::new()));
        let release = Gate::new();
        let gate = release.clone();
        let mut g = Graph::<u32>::new();
        g.add(Task::new("held", move |_| {
            let gate = gate.clone();
            async move {
                gate.wait().await;
                Ok(1)
            }
        }))
        .unwrap();
        // Started in an explicit group, so that this block_on does not wait
        // for the run.
        let run = ex.block_on(group.spawn(async move { g.start() })).unwrap();
        let watched = run.clone();
        let (wait, waker) = repolled_on_wake(async move {
            assert_eq!(*watched.wait("held").await.unwrap(), 1);
        });
        assert!(poll_shared(&wait, &waker), "the task is held");
        release.open();
        assert!(
            spin_until(|| wait.lock().unwrap().is_none()),
            "the wait, polled again by its waker, completed"
        );
        ex.block_on(run.wait_all());
    })
}
