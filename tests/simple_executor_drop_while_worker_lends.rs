//! Under the simple scheduler, a task on the worker thread that waits in a
//! nested `block_on` with nothing to do lends ownership to a `block_on`
//! caller of another thread. If that caller (here the `block_on` of a
//! blocking job, whose root drops the executor) drops the executor, the
//! drop joins the worker thread: the worker must leave its lending (the
//! executor has shut down, so its task's `block_on` ends with the shutdown
//! panic, as the crate docs say) rather than wait for ownership that the
//! dropping thread, waiting for it, never gives back. The work-stealing
//! scheduler is the control.

mod support;

use std::sync::mpsc;

use fastexec::Executor;
use support::{within, TIMEOUT};

/// A task waits in a nested `block_on`; then a blocking job's `block_on`
/// drops the executor. Gives the waiting task's outcome.
fn drop_while_a_task_waits_nested(executor: Executor) -> Result<(), fastexec::JoinError> {
    let (nested_tx, nested) = mpsc::channel();
    let waiting = executor.spawn(async move {
        fastexec::block_on(async move {
            nested_tx.send(()).unwrap();
            std::future::pending::<()>().await;
        })
    });
    nested
        .recv_timeout(TIMEOUT)
        .expect("the task's block_on started");
    support::drop_from_a_blocking_jobs_block_on(executor);
    futures::executor::block_on(waiting)
}

#[test]
fn work_stealing_control() {
    within(60, || {
        let err = drop_while_a_task_waits_nested(support::executor(1)).unwrap_err();
        assert!(err.is_panic(), "{err:?}");
    });
}

#[test]
fn simple_scheduler_worker_lending_ownership_does_not_hang_the_drop() {
    within(60, || {
        let err = drop_while_a_task_waits_nested(support::simple_executor(11)).unwrap_err();
        assert!(err.is_panic(), "{err:?}");
    });
}
