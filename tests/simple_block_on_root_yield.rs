//! Under the simple scheduler, the thread in `block_on` owns the scheduler
//! and runs the tasks its root spawns, between polls of the root; the
//! executor's worker does not run while it owns. A root that waits for a
//! spawned task by yielding (`yield_now` in a loop, as the crate docs of
//! `yield_now` allow: "behind everything that was waiting") wakes itself
//! in each poll; it must still let that task run, as a task's `block_on`
//! on a worker does (one task after each poll at least). Before, the
//! woken root was polled again at once, for ever. The work-stealing
//! scheduler (one worker) is the control.

mod support;

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;

use fastexec::Executor;
use support::within;

/// Spawns a task and yields until it has run.
async fn yield_until_a_spawned_task_ran() {
    let ran = Arc::new(AtomicBool::new(false));
    let flag = ran.clone();
    fastexec::spawn(async move { flag.store(true, SeqCst) }).detach();
    while !ran.load(SeqCst) {
        fastexec::yield_now().await;
    }
}

/// A `block_on` whose root yields until a task it spawned has run.
fn root_yields_for_its_task(executor: Executor) {
    executor.block_on(yield_until_a_spawned_task_ran());
}

#[test]
fn work_stealing_control() {
    within(30, || root_yields_for_its_task(support::executor(1)));
}

#[test]
fn simple_scheduler_root_yielding_lets_its_task_run() {
    within(30, || {
        root_yields_for_its_task(support::simple_executor(19))
    });
}

/// The same from a task's `block_on` (nested, on the thread that runs the
/// task).
#[test]
fn simple_scheduler_nested_root_yielding_lets_its_task_run() {
    within(30, || {
        let executor = support::simple_executor(23);
        executor.block_on(async {
            fastexec::spawn(async { fastexec::block_on(yield_until_a_spawned_task_ran()) })
                .await
                .expect("the task returned");
        });
    });
}

/// A task's `block_on` whose root yields for ever (waiting for something
/// that never comes): the executor's drop joins the worker that runs it,
/// so that `block_on` must end with the shutdown panic, as the crate docs
/// say, though its root is woken at each poll. Gives the task's outcome.
fn drop_while_a_tasks_root_yields(executor: Executor) -> Result<(), fastexec::JoinError> {
    let (started_tx, started) = std::sync::mpsc::channel();
    let task = executor.spawn(async move {
        fastexec::block_on(async move {
            started_tx.send(()).unwrap();
            loop {
                fastexec::yield_now().await;
            }
        })
    });
    started
        .recv_timeout(support::TIMEOUT)
        .expect("the task's block_on started");
    drop(executor);
    futures::executor::block_on(task)
}

#[test]
fn work_stealing_control_at_shutdown() {
    support::quiet_panics("fastexec: the executor shut down");
    within(30, || {
        let err = drop_while_a_tasks_root_yields(support::executor(1)).unwrap_err();
        assert!(err.is_panic(), "{err:?}");
    });
}

#[test]
fn simple_scheduler_tasks_yielding_root_ends_at_shutdown() {
    support::quiet_panics("fastexec: the executor shut down");
    within(30, || {
        let err = drop_while_a_tasks_root_yields(support::simple_executor(29)).unwrap_err();
        assert!(err.is_panic(), "{err:?}");
    });
}
