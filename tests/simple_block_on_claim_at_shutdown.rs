//! Under the simple scheduler, a `block_on` that starts waiting for
//! ownership while the executor is being dropped by the owner (here the
//! `block_on` of one blocking job, whose root drops the executor, and the
//! `block_on` of another job, which the drop joins) must not wait for
//! ownership the dropping thread never gives back: no task runs after
//! shutdown, and a `block_on` that is not a task's finishes its root as on
//! a plain thread (as `simple_blocking_job_block_on_at_shutdown.rs` shows
//! for one that owned). The work-stealing scheduler is the control.

mod support;

use fastexec::Executor;
use support::{spawn_parked, within, Gate};

/// A second blocking job calls `block_on` once the drop (by the first
/// job's `block_on`) has begun dropping tasks; gives its output.
fn block_on_during_a_drop_by_a_job(executor: Executor) -> u32 {
    let dropping = Gate::new();
    // Dropped by the executor's drop, which opens the gate.
    spawn_parked(&executor, dropping.opened_on_drop()).detach();
    let late = executor.spawn_blocking(move || {
        dropping.wait_blocking();
        fastexec::block_on(async { 5 })
    });
    support::drop_from_a_blocking_jobs_block_on(executor);
    futures::executor::block_on(late).expect("the late block_on returned")
}

#[test]
fn work_stealing_control() {
    within(60, || {
        assert_eq!(block_on_during_a_drop_by_a_job(support::executor(1)), 5);
    });
}

#[test]
fn simple_scheduler_block_on_does_not_wait_for_the_dropping_owner() {
    within(60, || {
        assert_eq!(
            block_on_during_a_drop_by_a_job(support::simple_executor(13)),
            5
        );
    });
}
