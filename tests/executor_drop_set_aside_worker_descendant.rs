//! An executor dropped by its own task inside a `block_on` of another
//! executor, which sets the task's worker aside, while a task that this
//! `block_on`'s root spawned onto the executor is parked: the drop wakes
//! that task into the worker's ring (it enters the executor, which makes
//! the thread its worker again) and does not wait for it, and the ring is
//! drained only when the worker exits, after the task that runs the drop
//! returns. But `block_on` waits for every task its root spawned: it waited
//! for that one, queued in the ring of the very thread it blocks, for good.

mod support;

use std::future::pending;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use fastexec::{Executor, Scheduler};
use support::{DropCounter, Gate};

fn build(scheduler: Scheduler) -> Executor {
    Executor::builder()
        .threads(1)
        .scheduler(scheduler)
        .build()
        .unwrap()
}

fn drop_inside_block_on_with_a_parked_descendant(scheduler: Scheduler) {
    let executor = build(scheduler);
    let other = build(Scheduler::WorkStealing);
    let counter = DropCounter::new();
    let guard = counter.guard();
    let slot = Arc::new(Mutex::new(None::<Executor>));
    let (in_task, placed) = (Arc::clone(&slot), Gate::new());
    let go = placed.clone();
    let (done, returned) = mpsc::channel();
    executor
        .spawn(async move {
            go.wait().await;
            let executor = in_task.lock().unwrap().take().expect("placed");
            other.block_on(async move {
                // Spawned by the root, so the `block_on` waits for it.
                let polled = Gate::new();
                let opened = polled.clone();
                executor
                    .spawn(async move {
                        let _guard = guard;
                        opened.open();
                        pending::<()>().await;
                    })
                    .detach();
                // Runs it here (this thread is the executor's worker again
                // meanwhile) until it has parked, so it is registered.
                executor.block_on(polled.wait());
                drop(executor);
            });
            done.send(()).unwrap();
        })
        .detach();
    *slot.lock().unwrap() = Some(executor);
    placed.open();
    returned
        .recv_timeout(support::TIMEOUT)
        .expect("the block_on that dropped the executor returned");
    assert_eq!(
        counter.wait_for(1),
        1,
        "the parked task's future was dropped"
    );
}

#[test]
fn work_stealing() {
    support::within(60, || {
        drop_inside_block_on_with_a_parked_descendant(Scheduler::WorkStealing)
    });
}

#[test]
fn simple_scheduler() {
    support::within(60, || {
        drop_inside_block_on_with_a_parked_descendant(Scheduler::Simple)
    });
}
