//! A task blocked in a nested `block_on` when its executor is dropped ends
//! with the documented panic (its handle reports a panic, not a
//! cancellation), and the drop does not hang.

mod support;

use std::future::pending;
use std::sync::mpsc;

use support::{executor, with_timeout, TIMEOUT};

#[test]
fn a_task_blocked_in_block_on_ends_with_a_panic_at_shutdown() {
    with_timeout(|| {
        let ex = executor(1);
        let (started_tx, started_rx) = mpsc::channel();
        let handle = ex.spawn(async move {
            fastexec::block_on(async move {
                started_tx.send(()).unwrap();
                pending::<()>().await
            })
        });
        started_rx.recv_timeout(TIMEOUT).expect("task blocked");
        drop(ex);
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.is_panic(), "{err}");
        assert!(err.to_string().contains("shut down"), "{err}");
    })
}

/// The same with a task spawned in that `block_on` that keeps waking
/// itself: the worker must still see the shutdown (before, it ran that
/// task over and over and the executor's drop never returned).
#[test]
fn a_task_that_keeps_waking_itself_does_not_hold_a_nested_block_on_past_shutdown() {
    with_timeout(|| {
        let ex = executor(1);
        let (started_tx, started_rx) = mpsc::channel();
        let handle = ex.spawn(async move {
            fastexec::block_on(async move {
                fastexec::spawn(async move {
                    started_tx.send(()).unwrap();
                    loop {
                        fastexec::yield_now().await;
                    }
                })
                .detach();
            })
        });
        started_rx
            .recv_timeout(TIMEOUT)
            .expect("the looping task runs");
        drop(ex);
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.is_panic(), "{err}");
        assert!(err.to_string().contains("shut down"), "{err}");
    })
}
