//! A blocking job the pool drops without running it (it was spawned after
//! the pool shut down), holding a value whose destructor panics. async-task
//! drops a task's future under an abort-on-panic guard, so before the fix
//! the whole process aborted; now the destructor's panic is caught (the
//! panic hook reports it) and the job reports cancellation.
//!
//! The same guard covers what a detached job (its `BlockingTask` dropped)
//! leaves when it ends: its value, or the payload of its panic. Before the
//! fix, one whose destructor panicked aborted the process too.

mod support;

use std::time::Duration;

use fastexec::blocking::{BlockingError, BlockingPool};
use support::{quiet_panics, DropCounter, PanicOnDrop, PANIC_ON_DROP};

#[test]
fn a_job_dropped_unrun_whose_capture_panics_on_drop_is_cancelled() {
    quiet_panics(PANIC_ON_DROP);
    let pool = BlockingPool::new(1, Duration::from_secs(1), "drop-panic");
    pool.shutdown();
    let drops = DropCounter::new();
    let guard = PanicOnDrop::new(drops.guard());
    let job = pool.spawn(move || drop(guard));
    assert_eq!(drops.count(), 1, "the job was dropped unrun");
    let outcome = fastexec::block_on(job);
    assert!(matches!(outcome, Err(BlockingError::Cancelled)));
}

#[test]
fn a_detached_jobs_value_that_panics_on_drop_does_not_abort() {
    quiet_panics(PANIC_ON_DROP);
    let pool = BlockingPool::new(1, Duration::from_secs(1), "drop-panic");
    let drops = DropCounter::new();
    let guard = drops.guard();
    drop(pool.spawn(move || PanicOnDrop::new(guard)));
    assert_eq!(drops.wait_for(1), 1, "the value was dropped once");
    pool.shutdown();
}

#[test]
fn a_detached_jobs_panic_whose_payload_panics_on_drop_does_not_abort() {
    quiet_panics(PANIC_ON_DROP);
    let pool = BlockingPool::new(1, Duration::from_secs(1), "drop-panic");
    let drops = DropCounter::new();
    let guard = drops.guard();
    drop(pool.spawn(move || std::panic::panic_any(PanicOnDrop::new(guard))));
    assert_eq!(drops.wait_for(1), 1, "the payload was dropped once");
    pool.shutdown();
}
