//! An executor kept in a `thread_local!` (a runtime per thread) and used on
//! that thread is dropped by that thread-local's destructor when the thread
//! exits, which may come after the crate's own thread-locals were torn
//! down (those registered later are destroyed first): the drop must still
//! shut the executor down, dropping its parked tasks, rather than panic
//! on a destroyed thread-local (a panic in a thread-local's destructor
//! aborts the process; before the fix, both tests aborted).

mod support;

use fastexec::{Executor, Scheduler};
use support::{within, DropCounter};

/// Parks a task holding a guard of `counter` on an executor of `scheduler`
/// used on a new thread and kept in a thread-local there, which drops it
/// at thread exit (see [`support::drop_executor_at_thread_exit`]).
fn drop_at_thread_exit(scheduler: Scheduler, counter: &DropCounter) {
    support::drop_executor_at_thread_exit(scheduler, counter.guard(), |executor: &Executor| {
        let answer = executor.block_on(async { fastexec::spawn(async { 42 }).await.unwrap() });
        assert_eq!(answer, 42);
    });
}

#[test]
fn a_work_stealing_executor_dropped_at_thread_exit() {
    within(60, || {
        let counter = DropCounter::new();
        drop_at_thread_exit(Scheduler::WorkStealing, &counter);
        assert_eq!(counter.count(), 1, "the parked task's future was dropped");
    });
}

#[test]
fn a_simple_scheduler_executor_dropped_at_thread_exit() {
    within(60, || {
        let counter = DropCounter::new();
        drop_at_thread_exit(Scheduler::Simple, &counter);
        assert_eq!(counter.count(), 1, "the parked task's future was dropped");
    });
}
