//! `Notify`: permits, one/all, leaving waiters, and the race of a signal
//! with the deadline of `notified_until`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use fastexec::signal::{Notified, Notify};

mod support;
use support::{block_on_guarded, Probe, HANG_GUARD};

/// Whether a fresh wait completes at once, i.e. a permit is stored. A
/// successful check consumes the permit.
fn permit_stored(notify: &Notify) -> bool {
    Probe::new().poll(&mut notify.notified()).is_ready()
}

#[test]
fn notify_and_notified_are_send_and_sync() {
    fn assert_traits<T: Send + Sync + Unpin>() {}
    assert_traits::<Notify>();
    assert_traits::<Notified<'static>>();
}

#[test]
fn a_permit_stored_before_the_wait_is_consumed_by_it() {
    let notify = Notify::new();
    notify.notify_one();
    assert!(permit_stored(&notify));
    assert!(!permit_stored(&notify), "the permit was consumed");
}

#[test]
fn at_most_one_permit_is_stored() {
    let notify = Notify::new();
    notify.notify_one();
    notify.notify_one();
    notify.notify_one();
    assert!(permit_stored(&notify));
    assert!(!permit_stored(&notify));
}

#[test]
fn notify_one_wakes_the_first_registered_waiter_only() {
    let notify = Notify::new();
    let (first, second) = (Probe::new(), Probe::new());
    let mut first_wait = notify.notified();
    let mut second_wait = notify.notified();
    assert!(first.poll(&mut first_wait).is_pending());
    assert!(second.poll(&mut second_wait).is_pending());

    notify.notify_one();
    assert_eq!((first.wakes(), second.wakes()), (1, 0));
    assert!(first.poll(&mut first_wait).is_ready());
    assert!(second.poll(&mut second_wait).is_pending());
    assert!(
        !permit_stored(&notify),
        "a notification went to a waiter, not the permit"
    );
}

#[test]
fn notify_all_wakes_every_registered_waiter_and_stores_no_permit() {
    let notify = Notify::new();
    let probes: Vec<_> = (0..5).map(|_| Probe::new()).collect();
    let mut waits: Vec<_> = probes.iter().map(|_| notify.notified()).collect();
    for (probe, wait) in probes.iter().zip(&mut waits) {
        assert!(probe.poll(wait).is_pending());
    }
    notify.notify_all();
    for (probe, wait) in probes.iter().zip(&mut waits) {
        assert_eq!(probe.wakes(), 1);
        assert!(probe.poll(wait).is_ready());
    }
    assert!(!permit_stored(&notify));
}

#[test]
fn notify_all_completes_a_waiter_made_before_it_but_not_yet_polled() {
    let notify = Notify::new();
    let probe = Probe::new();
    let mut wait = notify.notified();
    notify.notify_all();
    assert!(probe.poll(&mut wait).is_ready());
    assert!(!permit_stored(&notify), "notify_all stores no permit");
}

#[test]
fn notify_all_does_not_complete_a_waiter_made_after_it() {
    let notify = Notify::new();
    let probe = Probe::new();
    notify.notify_all();
    let mut wait = notify.notified();
    assert!(probe.poll(&mut wait).is_pending());
    notify.notify_all();
    assert_eq!(probe.wakes(), 1);
    assert!(probe.poll(&mut wait).is_ready());
}

#[test]
fn a_dropped_waiter_is_never_woken_and_the_notification_becomes_the_permit() {
    let notify = Notify::new();
    let probe = Probe::new();
    let mut wait = notify.notified();
    assert!(probe.poll(&mut wait).is_pending());
    drop(wait);
    assert_eq!(probe.wakers_held(), 0, "only the probe holds the waker");

    notify.notify_one();
    assert_eq!(probe.wakes(), 0);
    assert!(permit_stored(&notify));
}

#[test]
fn a_chosen_waiter_that_leaves_passes_the_notification_on() {
    let notify = Notify::new();
    let (leaving, staying) = (Probe::new(), Probe::new());
    let mut leaving_wait = notify.notified();
    let mut staying_wait = notify.notified();
    assert!(leaving.poll(&mut leaving_wait).is_pending());
    assert!(staying.poll(&mut staying_wait).is_pending());

    notify.notify_one();
    assert_eq!(leaving.wakes(), 1);
    drop(leaving_wait);
    assert_eq!(staying.wakes(), 1, "the notification moved on");
    assert!(staying.poll(&mut staying_wait).is_ready());
    assert!(!permit_stored(&notify));
}

#[test]
fn a_chosen_waiter_that_leaves_alone_restores_the_permit() {
    let notify = Notify::new();
    let probe = Probe::new();
    let mut wait = notify.notified();
    assert!(probe.poll(&mut wait).is_pending());
    notify.notify_one();
    drop(wait);
    assert!(permit_stored(&notify));
}

#[test]
fn a_waiter_woken_by_notify_all_that_leaves_creates_no_permit() {
    let notify = Notify::new();
    let probe = Probe::new();
    let mut wait = notify.notified();
    assert!(probe.poll(&mut wait).is_pending());
    notify.notify_all();
    drop(wait);
    assert!(!permit_stored(&notify));
}

#[test]
fn signal_before_the_deadline_is_reported_as_the_signal() {
    let notify = Arc::new(Notify::new());
    let sender = Arc::clone(&notify);
    let result = block_on_guarded(async move {
        let deadline = Instant::now() + HANG_GUARD;
        let sending = std::thread::spawn(move || sender.notify_one());
        let result = notify.notified_until(deadline).await;
        sending.join().unwrap();
        result
    });
    assert!(result.is_ok());
}

#[test]
fn deadline_first_is_reported_as_elapsed_never_early_and_a_later_signal_is_kept() {
    let notify = Arc::new(Notify::new());
    let waiting = Arc::clone(&notify);
    block_on_guarded(async move {
        let deadline = Instant::now() + Duration::from_millis(5);
        assert!(waiting.notified_until(deadline).await.is_err());
        assert!(Instant::now() >= deadline, "timed out early");
    });
    notify.notify_one();
    assert!(
        permit_stored(&notify),
        "the signal after the timeout waits for the next wait"
    );
}

/// The signal and the deadline of `notified_until` land together.
/// Whichever the waiter is told came first, the signal is counted exactly
/// once: either as the wait's result or as the stored permit.
#[test]
fn a_signal_racing_the_deadline_is_reported_or_kept_never_lost() {
    let (mut signalled, mut elapsed) = (0, 0);
    for round in 0..300u64 {
        let notify = Arc::new(Notify::new());
        let deadline = Instant::now() + Duration::from_micros(200 + round % 7 * 50);
        let sender = Arc::clone(&notify);
        let sending = std::thread::spawn(move || {
            while Instant::now() < deadline {
                std::hint::spin_loop();
            }
            sender.notify_one();
        });
        let waiting = Arc::clone(&notify);
        let result = block_on_guarded(async move { waiting.notified_until(deadline).await });
        sending.join().unwrap();
        let kept = permit_stored(&notify);
        match result {
            Ok(()) => {
                signalled += 1;
                assert!(!kept, "round {round}: the signal was delivered twice");
            }
            Err(_) => {
                elapsed += 1;
                assert!(
                    kept,
                    "round {round}: the signal that raced the deadline was lost"
                );
            }
        }
    }
    println!("signal won {signalled}, deadline won {elapsed}");
}

#[test]
fn ping_pong_between_threads_loses_no_notification() {
    const ROUNDS: usize = 5_000;
    let ping = Arc::new(Notify::new());
    let pong = Arc::new(Notify::new());
    let (their_ping, their_pong) = (Arc::clone(&ping), Arc::clone(&pong));
    let responder = std::thread::spawn(move || {
        futures::executor::block_on(async {
            for _ in 0..ROUNDS {
                their_ping.notified().await;
                their_pong.notify_one();
            }
        });
    });
    let rounds = block_on_guarded(async move {
        for _ in 0..ROUNDS {
            ping.notify_one();
            pong.notified().await;
        }
        ROUNDS
    });
    responder.join().unwrap();
    assert_eq!(rounds, ROUNDS);
}

#[test]
#[should_panic(expected = "polled after completion")]
fn polling_a_completed_wait_panics() {
    let notify = Notify::new();
    notify.notify_one();
    let probe = Probe::new();
    let mut wait = notify.notified();
    assert!(probe.poll(&mut wait).is_ready());
    let _ = probe.poll(&mut wait);
}
