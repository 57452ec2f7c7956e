//! `timeout` and `timeout_at`.

use std::error::Error;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use fastexec::time::{sleep, timeout, timeout_at, Elapsed, Timeout};

mod support;
use support::block_on_guarded;

#[test]
fn timeout_is_send_and_unpin_for_such_futures() {
    fn assert_traits<T: Send + Unpin>() {}
    assert_traits::<Timeout<std::future::Ready<u8>>>();
}

#[test]
fn elapsed_is_a_typed_error() {
    fn assert_error<E: Error + Send + Sync + 'static>() {}
    assert_error::<Elapsed>();
}

#[test]
fn a_future_that_finishes_first_gives_its_output() {
    let output = block_on_guarded(timeout(Duration::from_secs(3600), async {
        sleep(Duration::from_millis(1)).await;
        "done"
    }));
    assert_eq!(output, Ok("done"));
}

#[test]
fn a_pending_future_times_out_never_before_the_deadline() {
    block_on_guarded(async {
        let deadline = Instant::now() + Duration::from_millis(10);
        let result = timeout_at(deadline, std::future::pending::<()>()).await;
        assert!(result.is_err());
        assert!(Instant::now() >= deadline, "timed out early");
    });
}

#[test]
fn a_ready_output_wins_over_a_passed_deadline() {
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut timeout = timeout(Duration::ZERO, std::future::ready(5));
    assert_eq!(Pin::new(&mut timeout).poll(&mut cx), Poll::Ready(Ok(5)));
}

#[test]
fn into_inner_returns_the_future() {
    let timeout = timeout(Duration::from_secs(1), std::future::ready(9));
    assert!(timeout.deadline() > Instant::now());
    assert_eq!(futures::executor::block_on(timeout.into_inner()), 9);
}
