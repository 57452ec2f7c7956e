//! A blocking job the pool drops without running it (it was spawned after
//! the pool shut down), holding a value whose destructor panics. async-task
//! drops a task's future under an abort-on-panic guard, so before the fix
//! the whole process aborted; now the destructor's panic is caught (the
//! panic hook reports it) and the job reports cancellation.

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
