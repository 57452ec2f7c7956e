//! What a blocking job leaves to drop is dropped in its spawner's executor
//! and groups, as a task's future and output are: a task the destructor
//! spawns (a clean-up, say) goes to the job's executor and counts in the
//! enclosing `block_on`, which waits for it. That holds for a job aborted
//! before it started (what it captured) and for the value of a detached
//! job.

mod support;

use std::sync::mpsc;

use fastexec::Executor;
use support::{within, Gate, SpawnsWhenDropped};

#[test]
fn an_aborted_jobs_clean_up_runs_on_its_executor_before_block_on_returns() {
    let ran_on = within(30, || {
        let ex = Executor::builder()
            .threads(1)
            .max_blocking_threads(1)
            .thread_name("jobs")
            .build()
            .unwrap();
        let (ran_on_tx, ran_on) = mpsc::channel();
        ex.block_on(async move {
            // The pool's one thread is busy with `first` until `release`
            // opens, so `second` is still queued when it is aborted.
            let release = Gate::new();
            let busy = release.clone();
            let _open = release.opened_on_drop();
            let first = fastexec::spawn_blocking(move || busy.wait_blocking());
            let clean_up = SpawnsWhenDropped(ran_on_tx);
            let mut second = fastexec::spawn_blocking(move || drop(clean_up));
            second.abort();
            release.open();
            first.await.unwrap();
        });
        ran_on.try_recv()
    });
    let ran_on = ran_on.expect("block_on returned before the clean-up task ran");
    assert!(ran_on.starts_with("jobs-"), "ran on {ran_on:?}");
}

/// Before the fix the value was dropped on the pool thread after the job
/// had left its executor: the clean-up task went to the global executor.
#[test]
fn a_detached_jobs_value_is_dropped_in_its_executor() {
    let ran_on = within(30, || {
        let ex = Executor::builder()
            .threads(1)
            .thread_name("jobs")
            .build()
            .unwrap();
        let (ran_on_tx, ran_on) = mpsc::channel();
        ex.block_on(async move {
            fastexec::spawn_blocking(move || SpawnsWhenDropped(ran_on_tx)).detach();
        });
        ran_on.try_recv()
    });
    let ran_on = ran_on.expect("block_on returned before the clean-up task ran");
    assert!(ran_on.starts_with("jobs-"), "ran on {ran_on:?}");
}
