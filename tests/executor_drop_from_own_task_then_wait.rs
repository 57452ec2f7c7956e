//! A task that drops its own executor and then waits for that executor's
//! parked tasks to end (here: a `TaskGroup` they are in) must not wait for
//! good: the drop wakes them into this very worker's ring, whose worker
//! (the thread the waiting task blocks) would drop them only once the task
//! returns. The drop drops them itself, as it does for a worker that a
//! `block_on` of another executor set aside
//! (`executor_drop_set_aside_worker_descendant.rs`).

mod support;

use std::future::pending;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use fastexec::{Executor, Scheduler, TaskGroup};
use support::{DropCounter, Gate};

fn drop_then_wait_for_a_parked_group(scheduler: Scheduler) {
    let executor = Executor::builder()
        .threads(1)
        .scheduler(scheduler)
        .build()
        .unwrap();
    let counter = DropCounter::new();
    let guard = counter.guard();
    let group = Arc::new(TaskGroup::new());
    let polled = Gate::new();
    let opened = polled.clone();
    let slot = Arc::new(Mutex::new(None::<Executor>));
    let in_task = Arc::clone(&slot);
    let (done, returned) = mpsc::channel();
    let member_group = Arc::clone(&group);
    // Parked for good, a member of `group` (spawned onto `executor` from
    // one of its tasks).
    executor
        .spawn(async move {
            member_group
                .spawn(async move {
                    let _guard = guard;
                    opened.open();
                    pending::<()>().await;
                })
                .detach();
        })
        .detach();
    let placed = Gate::new();
    let go = placed.clone();
    executor
        .spawn(async move {
            go.wait().await;
            polled.wait().await;
            drop(in_task.lock().unwrap().take().expect("placed"));
            // The parked member's future is gone, so its group is empty.
            futures::executor::block_on(group.wait());
            done.send(()).unwrap();
        })
        .detach();
    *slot.lock().unwrap() = Some(executor);
    placed.open();
    returned
        .recv_timeout(support::TIMEOUT)
        .expect("the task that dropped the executor saw its group end");
    assert_eq!(
        counter.wait_for(1),
        1,
        "the parked task's future was dropped"
    );
}

#[test]
fn work_stealing() {
    support::within(60, || {
        drop_then_wait_for_a_parked_group(Scheduler::WorkStealing)
    });
}

#[test]
fn simple_scheduler() {
    support::within(60, || drop_then_wait_for_a_parked_group(Scheduler::Simple));
}
