//! An executor kept in a `thread_local!` (a runtime per thread) and used on
//! that thread is dropped by that thread-local's destructor when the thread
//! exits, which may come after the crate's own thread-locals were torn
//! down (those registered later are destroyed first): the drop must still
//! shut the executor down, dropping its parked tasks, rather than panic
//! on a destroyed thread-local (a panic in a thread-local's destructor
//! aborts the process; before the fix, both tests aborted).

mod support;

use std::cell::RefCell;
use std::future::pending;
use std::thread;

use fastexec::{Executor, Scheduler};
use support::{within, DropCounter};

thread_local! {
    static RUNTIME: RefCell<Option<Executor>> = const { RefCell::new(None) };
}

/// On a new thread: registers `RUNTIME` first, then builds an executor of
/// `scheduler`, uses it there (which registers the crate's thread-locals),
/// parks a task on it, and leaves it in `RUNTIME` for the thread's exit to
/// drop. Returns once the thread has exited.
fn drop_at_thread_exit(scheduler: Scheduler, counter: &DropCounter) {
    let guard = counter.guard();
    thread::spawn(move || {
        RUNTIME.with(|runtime| assert!(runtime.borrow().is_none()));
        let executor = Executor::builder()
            .threads(1)
            .scheduler(scheduler)
            .build()
            .unwrap();
        // Outside the `block_on`, which would wait for it.
        executor
            .spawn(async move {
                let _guard = guard;
                pending::<()>().await;
            })
            .detach();
        let answer = executor.block_on(async { fastexec::spawn(async { 42 }).await.unwrap() });
        assert_eq!(answer, 42);
        RUNTIME.with(|runtime| *runtime.borrow_mut() = Some(executor));
    })
    .join()
    .expect("the thread exited cleanly");
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
