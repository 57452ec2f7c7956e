//! A task's future whose destructor panics: when the task completes, is
//! aborted, or is dropped with its executor. async-task drops futures under
//! an abort-on-panic guard, so before the fix each case aborted the whole
//! process (the test binary died with SIGABRT). Now the panic is caught:
//! the worker survives, other tasks run, the destructor runs exactly once,
//! and the handle reports a panic (a completed future is dropped inside its
//! last poll) or, for a task that did not complete, cancellation.

mod support;

use support::{executor, spawn_parked, with_timeout, DropCounter, PanicOnDrop, ReadyNow};

#[test]
fn panic_in_drop_after_completion_is_the_tasks_panic() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let handle = ex.spawn(ReadyNow(PanicOnDrop::new(drops.guard())));
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.is_panic());
        assert!(err.to_string().contains(support::PANIC_ON_DROP), "{err}");
        assert_eq!(drops.count(), 1, "dropped exactly once");
        // The only worker is still alive.
        assert_eq!(ex.block_on(ex.spawn(async { 5 })).unwrap(), 5);
    })
}

#[test]
fn panic_in_drop_of_an_aborted_task_gives_cancelled() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let mut handle = spawn_parked(&ex, PanicOnDrop::new(drops.guard()));
        handle.abort();
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(drops.wait_for(1), 1, "dropped exactly once");
        assert_eq!(ex.block_on(ex.spawn(async { 5 })).unwrap(), 5);
    })
}

#[test]
fn panic_in_drop_while_the_executor_drops_its_tasks() {
    with_timeout(|| {
        let ex = executor(2);
        let drops = DropCounter::new();
        let handles: Vec<_> = (0..10)
            .map(|_| spawn_parked(&ex, PanicOnDrop::new(drops.guard())))
            .collect();
        drop(ex);
        assert_eq!(drops.count(), 10, "every future dropped, once");
        for handle in handles {
            assert!(futures::executor::block_on(handle)
                .unwrap_err()
                .is_cancelled());
        }
    })
}

/// Panics, when dropped, with a payload whose own `Drop` panics (a
/// [`PanicOnDrop`]).
struct PanicsWithABomb(DropCounter);

impl Drop for PanicsWithABomb {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            std::panic::panic_any(PanicOnDrop::new(self.0.guard()));
        }
    }
}

/// The payload of the destructor's panic is dropped under `catch_unwind`
/// too: before, its drop's panic unwound out of the task's drop, under
/// async-task's abort-on-panic guard (SIGABRT).
#[test]
fn a_destructor_panic_whose_payload_panics_when_dropped_does_not_abort() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let handle = spawn_parked(&ex, PanicsWithABomb(drops.clone()));
        drop(ex);
        assert_eq!(drops.count(), 1, "the payload was dropped, once");
        assert!(futures::executor::block_on(handle)
            .unwrap_err()
            .is_cancelled());
    })
}
