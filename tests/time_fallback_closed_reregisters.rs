//! A sleep that a `block_on` kept in its thread's queue of last resort
//! (its executor shut down), still pending when that `block_on` returned:
//! the call's end closed the queue, which woke the sleep early. Awaited
//! again (in a new `block_on` of the same blocking job, still under the
//! executor that shut down), it must register somewhere and fire.
//!
//! It hung: the entry the close removed left its key behind; the next poll
//! asked to leave the last resort (no live executor took it) and took
//! that stale key for a new registration, so it registered nowhere, and
//! the blocking job, and the executor's drop waiting for it, hung.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use fastexec::time::{sleep, Sleep};

mod support;
use support::with_timeout;

const SLEEP: Duration = Duration::from_millis(300);

/// First poll: registers the sleep (in the executor's queue) and reports
/// it. Second poll (the executor's drop woke it as it closed its queue):
/// polls the sleep again, which goes to the `block_on`'s queue of last
/// resort, and is ready, leaving the sleep pending there.
struct LeavePending<'a> {
    sleep: Pin<&'a mut Sleep>,
    registered: Option<mpsc::Sender<()>>,
}

impl Future for LeavePending<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        assert!(self.sleep.as_mut().poll(cx).is_pending());
        match self.registered.take() {
            Some(registered) => {
                registered.send(()).unwrap();
                Poll::Pending
            }
            None => Poll::Ready(()),
        }
    }
}

#[test]
fn a_sleep_left_in_a_closed_last_resort_fires_when_awaited_again() {
    with_timeout(|| {
        let executor = support::executor(1);
        let (registered_tx, registered_rx) = mpsc::channel();
        let job = executor.spawn_blocking(move || {
            let mut sleep = Box::pin(sleep(SLEEP));
            fastexec::block_on(LeavePending {
                sleep: sleep.as_mut(),
                registered: Some(registered_tx),
            });
            // That call's end closed its queue of last resort, waking the
            // sleep early: it is pending, in no queue.
            fastexec::block_on(sleep.as_mut());
            Instant::now() >= sleep.deadline()
        });
        registered_rx.recv().unwrap();
        // Closes the timer queue (waking the sleep), then waits for the job.
        drop(executor);
        let slept = futures::executor::block_on(job).unwrap();
        assert!(slept, "the sleep was done before its deadline");
    });
}
