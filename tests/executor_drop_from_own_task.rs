//! Dropping an executor from one of its own tasks, under either scheduler,
//! while that task and others are parked (registered) and others queued:
//! the drop returns (it must not wait for the futures of the task that runs
//! it), and every other task's future is dropped. Also when the task drops
//! it inside a `block_on` of another executor, which sets its worker aside
//! meanwhile: the thread is still one of the executor's workers, whose ring
//! the wakes of the parked tasks reach; waiting for them to be dropped there
//! hung the drop before the fix. And under the simple scheduler, when the
//! task is run by a `block_on` on a thread that is not the worker (a
//! blocking job's): the drop waited for the task's own future, which had
//! parked once (so was registered) and was running the drop.

mod support;

use std::future::{pending, poll_fn};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

use fastexec::{Executor, Scheduler};
use support::{DropCounter, Gate};

fn build(scheduler: Scheduler, threads: usize) -> Executor {
    Executor::builder()
        .threads(threads)
        .scheduler(scheduler)
        .build()
        .unwrap()
}

fn drop_from_own_task(scheduler: Scheduler, threads: usize) {
    drop_from_own_task_in(scheduler, threads, None);
}

/// As [`drop_from_own_task`], the drop run inside `other.block_on` if
/// `other` is given.
fn drop_from_own_task_in(scheduler: Scheduler, threads: usize, other: Option<Executor>) {
    let executor = build(scheduler, threads);
    let counter = DropCounter::new();
    // Parked forever, so registered with the executor.
    for _ in 0..8 {
        let guard = counter.guard();
        executor
            .spawn(async move {
                let _guard = guard;
                pending::<()>().await;
            })
            .detach();
    }
    let slot = Arc::new(Mutex::new(None::<Executor>));
    let (done, dropped) = mpsc::channel();
    let (in_task, placed) = (Arc::clone(&slot), Gate::new());
    let go = placed.clone();
    executor
        .spawn(async move {
            // Parks until the executor is in the slot, so that this task is
            // registered too.
            go.wait().await;
            let executor = in_task.lock().unwrap().take().expect("placed");
            match other {
                Some(other) => other.block_on(async move { drop(executor) }),
                None => drop(executor),
            }
            done.send(()).unwrap();
        })
        .detach();
    *slot.lock().unwrap() = Some(executor);
    placed.open();
    dropped
        .recv_timeout(support::TIMEOUT)
        .expect("the drop from the executor's own task returned");
    assert_eq!(
        counter.wait_for(8),
        8,
        "the parked tasks' futures were dropped"
    );
}

#[test]
fn work_stealing_one_worker() {
    support::within(60, || drop_from_own_task(Scheduler::WorkStealing, 1));
}

#[test]
fn work_stealing_two_workers() {
    support::within(60, || drop_from_own_task(Scheduler::WorkStealing, 2));
}

#[test]
fn simple_scheduler() {
    support::within(60, || drop_from_own_task(Scheduler::Simple, 1));
}

#[test]
fn work_stealing_inside_a_block_on_of_another_executor() {
    support::within(60, || {
        drop_from_own_task_in(
            Scheduler::WorkStealing,
            1,
            Some(build(Scheduler::WorkStealing, 1)),
        )
    });
}

#[test]
fn work_stealing_two_workers_inside_a_block_on_of_another_executor() {
    support::within(60, || {
        drop_from_own_task_in(
            Scheduler::WorkStealing,
            2,
            Some(build(Scheduler::WorkStealing, 1)),
        )
    });
}

#[test]
fn simple_scheduler_inside_a_block_on_of_another_executor() {
    support::within(60, || {
        drop_from_own_task_in(
            Scheduler::Simple,
            1,
            Some(build(Scheduler::WorkStealing, 1)),
        )
    });
}

#[test]
fn simple_scheduler_from_a_task_run_by_a_blocking_jobs_block_on() {
    support::within(60, || {
        let executor = Arc::new(build(Scheduler::Simple, 1));
        let counter = DropCounter::new();
        let guard = counter.guard();
        let mine = Arc::clone(&executor);
        let (parked_tx, parked) = mpsc::channel::<Waker>();
        let (done, dropped) = mpsc::channel();
        executor
            .spawn_blocking(move || {
                // Owns the simple scheduler on this pool thread, so it runs
                // the task it spawns here.
                fastexec::block_on(async move {
                    fastexec::spawn(async move {
                        let _guard = guard;
                        // Parks once (so it is registered), its waker handed
                        // out.
                        let mut parked_tx = Some(parked_tx);
                        poll_fn(|cx| match parked_tx.take() {
                            Some(tx) => {
                                tx.send(cx.waker().clone()).unwrap();
                                Poll::Pending
                            }
                            None => Poll::Ready(()),
                        })
                        .await;
                        drop(mine);
                        done.send(()).unwrap();
                    })
                    .detach();
                })
            })
            .detach();
        let waker = parked
            .recv_timeout(support::TIMEOUT)
            .expect("the task parked");
        drop(executor);
        waker.wake();
        dropped
            .recv_timeout(support::TIMEOUT)
            .expect("the drop from the executor's own task returned");
        assert_eq!(counter.wait_for(1), 1, "the task's future was dropped");
    });
}
