//! A finish hook runs as part of dropping a task's future, so a panic in it
//! is a panic in that future's destructor (`src/hooks.rs`): a completed
//! task reports it as its panic, an aborted one stays cancelled, and the
//! worker goes on running tasks.

mod support;

use fastexec::Executor;

fn executor_whose_finish_hook_panics() -> Executor {
    support::quiet_panics("finish hook failed");
    Executor::builder()
        .threads(1)
        .on_task_finish(|_| panic!("finish hook failed"))
        .build()
        .expect("the executor builds")
}

#[test]
fn a_completed_task_reports_its_finish_hooks_panic() {
    let executor = executor_whose_finish_hook_panics();
    let outcome = support::within(30, move || {
        let outcome = executor.block_on(executor.spawn(async { 42 }));
        drop(executor);
        outcome
    });
    let err = outcome.expect_err("the hook's panic replaces the output");
    assert!(err.is_panic(), "{err:?}");
    let payload = err.into_panic();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"finish hook failed"));
}

#[test]
fn an_aborted_task_stays_cancelled_and_the_worker_goes_on() {
    let executor = executor_whose_finish_hook_panics();
    let (aborted, next) = support::within(30, move || {
        let mut pending = executor.spawn(std::future::pending::<u32>());
        pending.abort();
        let aborted = executor.block_on(pending);
        // Its own hook panics too, once it is dropped after its last poll.
        let next = executor.block_on(executor.spawn(async { 7 }));
        drop(executor);
        (aborted, next)
    });
    assert!(aborted.expect_err("aborted").is_cancelled());
    assert!(next.expect_err("its hook panicked").is_panic());
}
