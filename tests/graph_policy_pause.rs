//! `PauseControl`: a running body pauses at its next checkpoint, resumes,
//! is cancelled while paused, and is cancelled when no checkpoint comes
//! within the pause timeout. Real bodies on the executor; every wait is on
//! the control or a `Notify`, bounded by `support::TIMEOUT`.

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fastexec::graph::{Cancelled, PauseControl, PauseError};
use fastexec::signal::Notify;
use support::{with_timeout, TIMEOUT};

#[test]
fn checkpoint_without_a_request_returns_at_once() {
    with_timeout(|| {
        let control = PauseControl::new();
        fastexec::block_on(async {
            for _ in 0..3 {
                assert_eq!(control.checkpoint().await, Ok(()));
            }
        });
        assert!(!control.is_paused());
    });
}

/// A body that waits for `go`, then passes `rounds` checkpoints, counting
/// them (Relaxed: the test reads the count after `acknowledged`, whose
/// mutex orders it after the body's increments).
fn counting_body(
    control: PauseControl,
    go: Arc<Notify>,
    passed: Arc<AtomicU32>,
    rounds: u32,
) -> fastexec::JoinHandle<Result<u32, Cancelled>> {
    fastexec::spawn(async move {
        go.notified().await;
        for _ in 0..rounds {
            control.checkpoint().await?;
            passed.fetch_add(1, Ordering::Relaxed);
            fastexec::yield_now().await;
        }
        Ok(passed.load(Ordering::Relaxed))
    })
}

#[test]
fn a_running_body_pauses_at_its_next_checkpoint_and_resumes() {
    with_timeout(|| {
        fastexec::block_on(async {
            let control = PauseControl::new();
            let (go, passed) = (Arc::new(Notify::new()), Arc::new(AtomicU32::new(0)));
            let body = counting_body(control.clone(), go.clone(), passed.clone(), 5);
            assert!(control.request_pause());
            assert!(!control.request_pause(), "already requested");
            go.notify_one();
            assert_eq!(control.acknowledged(TIMEOUT).await, Ok(()));
            assert!(control.is_paused());
            // Paused at the first checkpoint: it passed none.
            assert_eq!(passed.load(Ordering::Relaxed), 0);
            assert!(control.resume());
            assert_eq!(body.await.unwrap(), Ok(5));
        });
    });
}

#[test]
fn cancel_wakes_a_paused_body_with_an_error_and_is_idempotent() {
    with_timeout(|| {
        fastexec::block_on(async {
            let control = PauseControl::new();
            let (go, passed) = (Arc::new(Notify::new()), Arc::new(AtomicU32::new(0)));
            let body = counting_body(control.clone(), go.clone(), passed.clone(), 5);
            control.request_pause();
            go.notify_one();
            control.acknowledged(TIMEOUT).await.unwrap();
            assert!(control.cancel());
            assert!(!control.cancel(), "cancel is idempotent");
            assert_eq!(body.await.unwrap(), Err(Cancelled));
            assert!(control.is_cancelled());
            assert!(!control.resume(), "a cancelled task does not resume");
            assert_eq!(control.checkpoint().await, Err(Cancelled));
        });
    });
}

#[test]
fn no_checkpoint_within_the_timeout_cancels_the_task() {
    with_timeout(|| {
        fastexec::block_on(async {
            let control = PauseControl::new();
            let release = Arc::new(Notify::new());
            let body = {
                let (control, release) = (control.clone(), release.clone());
                fastexec::spawn(async move {
                    // Busy without checkpoints until the test releases it.
                    release.notified().await;
                    control.checkpoint().await
                })
            };
            control.request_pause();
            let timeout = Duration::from_millis(20);
            assert_eq!(
                control.acknowledged(timeout).await,
                Err(PauseError::TimedOut(timeout))
            );
            assert!(control.is_cancelled());
            release.notify_one();
            assert_eq!(body.await.unwrap(), Err(Cancelled));
        });
    });
}

#[test]
fn resume_before_the_checkpoint_withdraws_the_request() {
    with_timeout(|| {
        fastexec::block_on(async {
            let control = PauseControl::new();
            control.request_pause();
            assert!(control.is_pause_requested());
            assert!(control.resume());
            assert_eq!(
                control.acknowledged(TIMEOUT).await,
                Err(PauseError::NotPaused)
            );
            assert_eq!(control.checkpoint().await, Ok(()), "not paused");
        });
    });
}

#[test]
fn a_waiting_requester_learns_of_a_cancel() {
    with_timeout(|| {
        fastexec::block_on(async {
            let control = PauseControl::new();
            control.request_pause();
            let canceller = {
                let control = control.clone();
                fastexec::spawn(async move { control.cancel() })
            };
            let ack = control.acknowledged(TIMEOUT).await;
            assert!(canceller.await.unwrap());
            assert_eq!(ack, Err(PauseError::Cancelled));
        });
    });
}
