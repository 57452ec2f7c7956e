//! A timer future registered under an executor that has since been dropped
//! still completes: the executor wakes it as it shuts down, and it registers
//! again with the executor it is polled under next.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use fastexec::time::{sleep, timeout};

mod support;
use support::{block_on_guarded, CountingWake};

/// Polls `future` once under `executor`, so that its timer registers there.
fn poll_once_under<F: Future + Unpin>(executor: &fastexec::Executor, future: &mut F) -> bool {
    executor.block_on(std::future::poll_fn(|cx| {
        Poll::Ready(Pin::new(&mut *future).poll(cx).is_pending())
    }))
}

#[test]
fn a_sleep_moved_out_of_a_dropped_executor_still_completes() {
    let duration = Duration::from_millis(20);
    let started = Instant::now();
    let mut pending = sleep(duration);
    let executor = support::executor(1);
    assert!(poll_once_under(&executor, &mut pending));
    drop(executor);
    // No fastexec context here: the sleep moves to the global executor.
    block_on_guarded(pending);
    assert!(started.elapsed() >= duration, "woken early");
}

#[test]
fn a_timeout_moved_out_of_a_dropped_executor_still_elapses() {
    let mut pending = timeout(Duration::from_millis(5), std::future::pending::<()>());
    let executor = support::executor(1);
    assert!(poll_once_under(&executor, &mut pending));
    drop(executor);
    assert!(block_on_guarded(pending).is_err());
}

#[test]
fn shutting_down_wakes_a_timer_that_outlives_its_executor() {
    let wake = Arc::new(CountingWake::default());
    let waker = Waker::from(Arc::clone(&wake));
    let mut pending = sleep(Duration::from_secs(3600));
    let executor = support::executor(1);
    executor.block_on(async {
        assert!(Pin::new(&mut pending)
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
    });
    assert_eq!(wake.count(), 0);
    drop(executor);
    assert_eq!(wake.count(), 1, "woken so that it can register elsewhere");
    assert!(!pending.is_elapsed());
}
