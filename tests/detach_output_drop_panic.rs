//! A task's output whose destructor panics. async-task drops the output of
//! a task that completes detached (no handle to take it) under an
//! abort-on-panic guard, so before the fix such a task aborted the whole
//! process (the test binary died with SIGABRT). Now the panic is caught
//! (the panic hook still reports it): the worker survives, other tasks
//! run, and the destructor runs exactly once. A handle that awaits the
//! task gets the output unchanged, and dropping the handle of a task that
//! already finished does not unwind into the caller either.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use support::{executor, with_timeout, DropCounter, Gate, PanicOnDrop};

#[test]
fn a_detached_task_whose_output_panics_on_drop_does_not_abort() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let (go, guard) = (Gate::new(), drops.guard());
        let wait = go.clone();
        // Detached before it completes: async-task drops the output itself.
        ex.spawn(async move {
            wait.wait().await;
            PanicOnDrop::with_value(1, guard)
        })
        .detach();
        go.open();
        assert_eq!(drops.wait_for(1), 1, "the output was dropped, once");
        // The only worker is still alive.
        assert_eq!(ex.block_on(ex.spawn(async { 5 })).unwrap(), 5);
        // And so are many detached tasks after it.
        let more = DropCounter::new();
        for value in 0..100 {
            let guard = more.guard();
            ex.spawn(async move { PanicOnDrop::with_value(value, guard) })
                .detach();
        }
        assert_eq!(more.wait_for(100), 100);
        assert_eq!(ex.block_on(ex.spawn(async { 6 })).unwrap(), 6);
    })
}

#[test]
fn a_detached_blocking_job_whose_output_panics_on_drop_does_not_abort() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let (go, guard) = (Gate::new(), drops.guard());
        let wait = go.clone();
        ex.spawn_blocking(move || {
            wait.wait_blocking();
            PanicOnDrop::with_value(1, guard)
        })
        .detach();
        go.open();
        assert_eq!(drops.wait_for(1), 1, "the output was dropped, once");
        assert_eq!(ex.block_on(ex.spawn_blocking(|| 5)).unwrap(), 5);
    })
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
