//! A value whose destructor panics, left for the executor to drop: a
//! task's output, or the payload (`std::panic::panic_any`) of its panic.
//! async-task drops the output or failure of a task that ends detached (no
//! handle to take it) under an abort-on-panic guard, so before the fixes
//! such a task aborted the whole process (the test binary died with
//! SIGABRT). Now the destructor's panic is caught (the panic hook still
//! reports it): the worker survives, other tasks run, and the value is
//! dropped exactly once. A handle that awaits the task gets the output, or
//! the payload, unchanged, and dropping the handle of a task that already
//! finished does not unwind into the caller either.

mod support;

use std::panic::{catch_unwind, panic_any, AssertUnwindSafe};

use support::{executor, with_timeout, DropCounter, DropGuard, Gate, PanicOnDrop};

/// Panics with a [`PanicOnDrop`] carrying `value`.
fn panic_with(value: u32, counted: DropGuard) -> ! {
    panic_any(PanicOnDrop::with_value(value, counted))
}

/// A detached task ends with `end(value, guard)`, which leaves a value
/// whose destructor panics for async-task to drop; then many more.
fn a_detached_task_survives<T: Send + 'static>(end: fn(u32, DropGuard) -> T) {
    with_timeout(move || {
        let ex = executor(1);
        let drops = DropCounter::new();
        let (go, guard) = (Gate::new(), drops.guard());
        let wait = go.clone();
        // Detached before it ends: async-task drops what it leaves itself.
        ex.spawn(async move {
            wait.wait().await;
            end(1, guard)
        })
        .detach();
        go.open();
        assert_eq!(drops.wait_for(1), 1, "the value was dropped, once");
        // The only worker is still alive.
        assert_eq!(ex.block_on(ex.spawn(async { 5 })).unwrap(), 5);
        // And so it is after many more.
        let more = DropCounter::new();
        for value in 0..100 {
            let guard = more.guard();
            ex.spawn(async move { end(value, guard) }).detach();
        }
        assert_eq!(more.wait_for(100), 100);
        assert_eq!(ex.block_on(ex.spawn(async { 6 })).unwrap(), 6);
    })
}

/// The same for a detached blocking job.
fn a_detached_blocking_job_survives<T: Send + 'static>(end: fn(u32, DropGuard) -> T) {
    with_timeout(move || {
        let ex = executor(1);
        let drops = DropCounter::new();
        let (go, guard) = (Gate::new(), drops.guard());
        let wait = go.clone();
        ex.spawn_blocking(move || {
            wait.wait_blocking();
            end(1, guard)
        })
        .detach();
        go.open();
        assert_eq!(drops.wait_for(1), 1, "the value was dropped, once");
        assert_eq!(ex.block_on(ex.spawn_blocking(|| 5)).unwrap(), 5);
    })
}

#[test]
fn a_detached_task_whose_output_panics_on_drop_does_not_abort() {
    a_detached_task_survives(PanicOnDrop::with_value);
}

#[test]
fn a_detached_blocking_job_whose_output_panics_on_drop_does_not_abort() {
    a_detached_blocking_job_survives(PanicOnDrop::with_value);
}

#[test]
fn a_detached_task_panicking_with_a_payload_that_panics_on_drop_does_not_abort() {
    a_detached_task_survives(|value, guard| -> () { panic_with(value, guard) });
}

#[test]
fn a_detached_blocking_job_panicking_with_such_a_payload_does_not_abort() {
    a_detached_blocking_job_survives(|value, guard| -> () { panic_with(value, guard) });
}

#[test]
fn an_awaited_output_is_given_unchanged() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let guard = drops.guard();
        let output = ex
            .block_on(ex.spawn(async move { PanicOnDrop::with_value(42, guard) }))
            .unwrap();
        assert_eq!(output.value, 42);
        assert_eq!(drops.count(), 0, "not dropped on its way out");
        // Its destructor is the taker's: it panics here, where it is dropped.
        let dropped = catch_unwind(AssertUnwindSafe(|| drop(output)));
        assert!(dropped.is_err());
        assert_eq!(drops.count(), 1);
        let words = ex.block_on(ex.spawn(async { vec!["a", "b"] })).unwrap();
        assert_eq!(words, ["a", "b"]);
    })
}

#[test]
fn dropping_the_handle_of_a_finished_task_drops_its_output_without_unwinding() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let guard = drops.guard();
        let handle = ex.spawn(async move { PanicOnDrop::with_value(3, guard) });
        // Wait until it finished: its output waits in the task for the handle.
        ex.block_on(ex.spawn(async {})).unwrap();
        assert!(handle.is_finished());
        drop(handle);
        assert_eq!(drops.count(), 1, "dropped with the handle, once");
        assert_eq!(ex.block_on(ex.spawn(async { 5 })).unwrap(), 5);
    })
}

#[test]
fn an_awaited_handle_gives_the_payload_itself() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let guard = drops.guard();
        let error = ex
            .block_on(ex.spawn(async move { panic_with(42, guard) }))
            .unwrap_err();
        assert!(error.is_panic());
        let payload = error.into_panic();
        let payload = payload
            .downcast::<PanicOnDrop>()
            .unwrap_or_else(|_| panic!("the payload is the task's own"));
        assert_eq!(payload.value, 42);
        assert_eq!(drops.count(), 0, "not dropped on its way out");
        // Its destructor is the taker's: it panics here, where it is dropped.
        let dropped = catch_unwind(AssertUnwindSafe(|| drop(payload)));
        assert!(dropped.is_err());
        assert_eq!(drops.count(), 1);
        assert_eq!(ex.block_on(ex.spawn(async { 7 })).unwrap(), 7);
    })
}

#[test]
fn dropping_the_handle_of_a_task_that_panicked_so_does_not_unwind() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let guard = drops.guard();
        let handle = ex.spawn(async move { panic_with(3, guard) });
        // Wait until it finished: its failure waits in the task for the handle.
        ex.block_on(ex.spawn(async {})).unwrap();
        assert!(handle.is_finished());
        drop(handle);
        assert_eq!(drops.count(), 1, "dropped with the handle, once");
        // An aborted handle holds the failure apart, and drops it the same way.
        let guard = drops.guard();
        let mut handle = ex.spawn(async move { panic_with(4, guard) });
        ex.block_on(ex.spawn(async {})).unwrap();
        handle.abort();
        drop(handle);
        assert_eq!(drops.count(), 2, "dropped with the aborted handle, once");
        assert_eq!(ex.block_on(ex.spawn(async { 5 })).unwrap(), 5);
    })
}
