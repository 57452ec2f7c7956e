//! A sleep that a `block_on` keeps in its queue of last resort (its
//! executor shut down), then awaited by a `block_on` nested in that call's
//! root future: the nested call must fire it, since the outer one cannot
//! run until the nested one returns. With one queue per call, the nested
//! call looked only at its own (empty) queue and the closed executor's,
//! parked with no deadline, and the sleep never fired: the blocking job,
//! and the executor's drop waiting for it, hung.

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
/// polls the sleep again, which now goes to the outer `block_on`'s queue of
/// last resort, then awaits it in a nested `block_on`.
struct Nest {
    sleep: Pin<Box<Sleep>>,
    registered: Option<mpsc::Sender<()>>,
}

impl Future for Nest {
    type Output = bool;

    /// Ready with whether the sleep's deadline had passed when it was done.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        if let Some(registered) = self.registered.take() {
            assert!(self.sleep.as_mut().poll(cx).is_pending());
            registered.send(()).unwrap();
            return Poll::Pending;
        }
        if self.sleep.as_mut().poll(cx).is_pending() {
            fastexec::block_on(self.sleep.as_mut());
        }
        Poll::Ready(Instant::now() >= self.sleep.deadline())
    }
}

#[test]
fn a_sleep_kept_by_an_outer_block_on_fires_in_a_nested_one() {
    with_timeout(|| {
        let executor = support::executor(1);
        let (registered_tx, registered_rx) = mpsc::channel();
        let job = executor.spawn_blocking(move || {
            fastexec::block_on(Nest {
                sleep: Box::pin(sleep(SLEEP)),
                registered: Some(registered_tx),
            })
        });
        registered_rx.recv().unwrap();
        // Closes the timer queue (waking the sleep), then waits for the job.
        drop(executor);
        let slept = futures::executor::block_on(job).unwrap();
        assert!(slept, "the sleep was done before its deadline");
    });
}
