//! A task woken by the running task goes into its worker's LIFO slot, to
//! run as soon as that poll returns. If the poll is long (a blocking call,
//! a long computation), an idle worker must take it within about one watch
//! interval, as it takes a task alone in the ring (`worker.rs`, "the
//! watch"). Before, nothing but the owner could take a task from the slot,
//! and the woken task waited for the whole poll.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::time::Duration;

use futures::channel::oneshot;
use support::{executor, with_timeout};

/// How long the long poll waits for the woken task before giving up: a
/// guard against a hang, far longer than a watch interval.
const PATIENCE: Duration = Duration::from_secs(10);

/// On two workers: `waiter` parks on a oneshot; `waker` sends on it (a
/// wake from the running task: the LIFO slot) and then blocks until
/// `waiter` has run. Returns whether it ran while `waker` blocked.
fn woken_task_runs_during_the_long_poll(rounds: usize) -> bool {
    with_timeout(move || {
        let ex = executor(2);
        (0..rounds).all(|_| {
            let (wake_tx, mut wake_rx) = oneshot::channel::<()>();
            let (parked_tx, parked_rx) = mpsc::channel::<()>();
            let (ran_tx, ran_rx) = mpsc::channel::<()>();
            let waiter = ex.spawn(async move {
                // Says so once its waker is registered with the oneshot.
                std::future::poll_fn(|cx| {
                    let polled = Pin::new(&mut wake_rx).poll(cx);
                    let _ = parked_tx.send(());
                    polled
                })
                .await
                .ok();
                let _ = ran_tx.send(());
            });
            parked_rx.recv().expect("the waiter is polled");
            let waker = ex.spawn(async move {
                let _ = wake_tx.send(());
                ran_rx.recv_timeout(PATIENCE).is_ok()
            });
            let ran = ex.block_on(waker).expect("the long poll does not panic");
            ex.block_on(waiter).expect("the woken task does not panic");
            ran
        })
    })
}

#[test]
fn a_task_woken_before_a_long_poll_is_taken_by_an_idle_worker() {
    assert!(
        woken_task_runs_during_the_long_poll(3),
        "the woken task waited in the LIFO slot for the long poll to end"
    );
}
