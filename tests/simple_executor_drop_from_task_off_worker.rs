//! Under the simple scheduler a task also runs on the thread of a
//! `block_on` (here one called by a blocking job of the executor), not
//! only on the executor's worker thread. Dropping the executor from such
//! a task, once that task has parked (so is registered), must return, as
//! it does from a task on the worker thread
//! (`executor_drop_from_own_task.rs`): the drop must not wait for the
//! future of the very task that runs it.

mod support;

use std::sync::{mpsc, Arc, Mutex};

use fastexec::Executor;
use support::{thread_name, within, DropCounter, Gate, TIMEOUT};

#[test]
fn a_simple_executor_dropped_by_a_task_its_block_on_runs_returns() {
    within(60, || {
        let executor = support::simple_executor(3);
        let counter = DropCounter::new();
        let slot = Arc::new(Mutex::new(None::<Executor>));
        let (done, dropped) = mpsc::channel();
        let (in_job, placed) = (Arc::clone(&slot), Gate::new());
        let go = placed.clone();
        let guard = counter.guard();
        let job = executor.spawn_blocking(move || {
            fastexec::block_on(async move {
                // Parked forever, so registered with the executor.
                fastexec::spawn(async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                })
                .detach();
                fastexec::spawn(async move {
                    // Registered at its first `Pending` (a yield's), then
                    // waits until the executor is in the slot.
                    fastexec::yield_now().await;
                    go.wait().await;
                    let ran_on = thread_name();
                    let executor = in_job.lock().unwrap().take().expect("placed");
                    drop(executor);
                    done.send(ran_on).unwrap();
                })
                .detach();
            });
        });
        *slot.lock().unwrap() = Some(executor);
        placed.open();
        let ran_on = dropped
            .recv_timeout(TIMEOUT)
            .expect("the drop from a task run by the job's block_on returned");
        assert!(ran_on.contains("blocking"), "ran on {ran_on:?}");
        assert_eq!(
            counter.wait_for(1),
            1,
            "the parked task's future was dropped"
        );
        futures::executor::block_on(job).expect("the job finished");
    });
}
