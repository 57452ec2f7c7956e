//! Dropping an executor drops the future of every unfinished task that the
//! scheduling policies hold: tasks queued by priority (high and low queues)
//! and the simple scheduler's ready tasks, whether they never ran or are
//! parked forever. The executor is dropped from a task that blocks its only
//! worker, so the queued tasks can never have started.

mod support;

use std::future::pending;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc;

use fastexec::{task, Executor, Priority};
use support::{counter, get, with_timeout, DropCounter, TIMEOUT};

const PER_PRIORITY: usize = 100;
const PRIORITIES: [Priority; 3] = [Priority::High, Priority::Normal, Priority::Low];

/// Parks `PER_PRIORITY` tasks of each priority forever (each has run once),
/// then blocks the only worker with a task that drops the executor, queues
/// `PER_PRIORITY` more of each priority behind it, and lets it drop the
/// executor. Every guard must be dropped, and no queued task may start.
fn drop_from_blocked_worker_drops_everything(ex: Executor) {
    let (drops, started) = (DropCounter::new(), counter());
    let (parked_tx, parked_rx) = mpsc::channel();
    for priority in PRIORITIES {
        for _ in 0..PER_PRIORITY {
            let (guard, parked_tx) = (drops.guard(), parked_tx.clone());
            task::Builder::new()
                .priority(priority)
                .on(&ex)
                .spawn(async move {
                    let _guard = guard;
                    parked_tx.send(()).unwrap();
                    pending::<()>().await;
                })
                .detach();
        }
    }
    for _ in 0..3 * PER_PRIORITY {
        parked_rx.recv_timeout(TIMEOUT).expect("every task parked");
    }
    let (release_tx, release_rx) = mpsc::channel::<Executor>();
    let (blocked_tx, blocked_rx) = mpsc::channel();
    let (dropped_tx, dropped_rx) = mpsc::channel();
    ex.spawn(async move {
        blocked_tx.send(()).unwrap();
        drop(release_rx.recv().unwrap());
        dropped_tx.send(()).unwrap();
    })
    .detach();
    blocked_rx
        .recv_timeout(TIMEOUT)
        .expect("the worker is blocked");
    for priority in PRIORITIES {
        for _ in 0..PER_PRIORITY {
            let (guard, started) = (drops.guard(), started.clone());
            task::Builder::new()
                .priority(priority)
                .on(&ex)
                .spawn(async move {
                    let _guard = guard;
                    started.fetch_add(1, SeqCst);
                })
                .detach();
        }
    }
    release_tx.send(ex).unwrap();
    dropped_rx.recv_timeout(TIMEOUT).expect("executor dropped");
    let all = 6 * PER_PRIORITY;
    assert_eq!(drops.wait_for(all), all);
    assert_eq!(get(&started), 0, "a queued task started after shutdown");
}

#[test]
fn drop_with_priority_tasks_queued_and_parked() {
    with_timeout(|| {
        drop_from_blocked_worker_drops_everything(Executor::builder().threads(1).build().unwrap())
    })
}

#[test]
fn drop_with_simple_scheduler_tasks_ready_and_parked() {
    with_timeout(|| drop_from_blocked_worker_drops_everything(support::simple_executor(11)))
}

/// A task whose first `Pending` happens on a `block_on` thread of the simple
/// scheduler (which runs tasks there, not on a worker) is still dropped
/// with the executor. It is spawned from another thread, so it belongs to
/// no group and `block_on` does not wait for it; it then parks on `park`,
/// which only the executor's drop can end.
fn drop_with_simple_task_parked_on_block_on_thread<P>(park: P)
where
    P: std::future::Future + Send + 'static,
{
    with_timeout(move || {
        let ex = support::simple_executor(5);
        let drops = DropCounter::new();
        let (started_tx, started_rx) = futures::channel::oneshot::channel();
        let guard = drops.guard();
        let parked_on = ex.block_on(async {
            std::thread::scope(|s| {
                s.spawn(|| {
                    ex.spawn(async move {
                        let _guard = guard;
                        started_tx.send(std::thread::current().id()).ok();
                        park.await;
                    })
                    .detach()
                });
            });
            started_rx.await.expect("the task started")
        });
        assert_eq!(
            parked_on,
            std::thread::current().id(),
            "the task ran on the block_on thread (the case under test)"
        );
        assert_eq!(drops.count(), 0);
        drop(ex);
        assert_eq!(drops.count(), 1, "the parked task's future was dropped");
    })
}

#[test]
fn drop_with_simple_task_parked_on_a_channel_from_block_on_thread() {
    let (never_tx, never_rx) = futures::channel::oneshot::channel::<()>();
    drop_with_simple_task_parked_on_block_on_thread(async move {
        let _ = never_rx.await;
    });
    drop(never_tx);
}

/// The timer queue holds the task's waker and the executor holds the timer
/// queue: unless the executor drops the task, the two keep each other alive.
#[test]
fn drop_with_simple_task_asleep_from_block_on_thread() {
    drop_with_simple_task_parked_on_block_on_thread(fastexec::time::sleep(
        std::time::Duration::from_secs(3600),
    ));
}
