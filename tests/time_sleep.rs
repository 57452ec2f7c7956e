//! `sleep` and `sleep_until`: never early, eventually, and cancelled on drop.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use fastexec::time::{sleep, sleep_until, Sleep};

mod support;
use support::{block_on_guarded, CountingWake, HANG_GUARD};

#[test]
fn sleep_is_send_sync_and_unpin() {
    fn assert_traits<T: Send + Sync + Unpin>() {}
    assert_traits::<Sleep>();
}

#[test]
fn sleep_never_completes_before_its_duration() {
    block_on_guarded(async {
        for millis in [0, 1, 3, 10, 25] {
            let duration = Duration::from_millis(millis);
            let start = Instant::now();
            sleep(duration).await;
            assert!(start.elapsed() >= duration, "{millis} ms sleep was early");
        }
    });
}

#[test]
fn sleep_until_a_past_deadline_is_ready_on_its_first_poll() {
    let waker = Waker::from(Arc::new(CountingWake::default()));
    let mut cx = Context::from_waker(&waker);
    let mut sleep = sleep_until(Instant::now());
    assert!(Pin::new(&mut sleep).poll(&mut cx).is_ready());
    assert!(sleep.is_elapsed());
}

#[test]
fn ten_thousand_concurrent_sleeps_complete_and_none_early() {
    const SLEEPS: u64 = 10_000;
    let lateness = block_on_guarded(async {
        let start = Instant::now();
        let sleeps = (0..SLEEPS).map(|i| async move {
            let deadline = start + Duration::from_micros(i * 7 % 50_000);
            sleep_until(deadline).await;
            let woke = Instant::now();
            assert!(woke >= deadline, "sleep {i} woke early");
            woke - deadline
        });
        futures::future::join_all(sleeps).await
    });
    assert_eq!(lateness.len() as u64, SLEEPS);
    let mut lateness = lateness;
    lateness.sort();
    // Informational only: a test asserts no speed.
    println!(
        "lateness of {SLEEPS} sleeps: p50 {:?}, p99 {:?}",
        lateness[lateness.len() / 2],
        lateness[lateness.len() * 99 / 100]
    );
}

#[test]
fn a_sleep_woken_by_its_timer_completes_on_the_next_poll() {
    let wake = Arc::new(CountingWake::default());
    let waker = Waker::from(Arc::clone(&wake));
    let mut cx = Context::from_waker(&waker);
    let mut sleep = sleep(Duration::from_millis(2));
    assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());

    let guard = Instant::now() + HANG_GUARD;
    while wake.0.load(Ordering::Relaxed) == 0 {
        assert!(Instant::now() < guard, "the timer never fired");
        std::thread::yield_now();
    }
    assert!(sleep.is_elapsed(), "woken before its deadline");
    assert!(Pin::new(&mut sleep).poll(&mut cx).is_ready());
}

#[test]
fn dropping_a_pending_sleep_releases_its_waker() {
    let wake = Arc::new(CountingWake::default());
    let waker = Waker::from(Arc::clone(&wake));
    let mut cx = Context::from_waker(&waker);
    let mut sleep = sleep(Duration::from_secs(3600));
    assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());
    drop(waker);
    assert_eq!(Arc::strong_count(&wake), 2, "the timer queue holds a clone");

    drop(sleep);
    assert_eq!(
        Arc::strong_count(&wake),
        1,
        "the clone was dropped with the timer"
    );
    assert_eq!(wake.0.load(Ordering::Relaxed), 0);
}

#[test]
fn resetting_a_sleep_to_an_earlier_deadline_takes_effect() {
    block_on_guarded(async {
        let mut sleep = sleep(Duration::from_secs(3600));
        let mut polled_once = false;
        // Register the far deadline first, so the reset must replace it.
        std::future::poll_fn(|cx| {
            if !polled_once {
                polled_once = true;
                assert!(Pin::new(&mut sleep).poll(cx).is_pending());
            }
            std::task::Poll::Ready(())
        })
        .await;
        let deadline = Instant::now() + Duration::from_millis(5);
        sleep.reset(deadline);
        assert_eq!(sleep.deadline(), deadline);
        sleep.await;
        assert!(Instant::now() >= deadline);
    });
}
