//! A sleep that a `block_on` keeps in its queue of last resort (its
//! executor shut down), then awaited by a `block_on` nested in that call's
//! root future, which must see it fire although the outer call cannot run
//! until the nested one returns:
//! - nested `fastexec::block_on` (a `run_parked` too) fires the thread's
//!   queue of last resort. With one queue per call, it looked only at its
//!   own (empty) queue and the closed executor's, and parked for ever;
//! - nested in another, live executor's `block_on` of the simple scheduler,
//!   the sleep moves to that executor's queue. It stayed in the last
//!   resort, which that `block_on` does not fire, and hung.
//!
//! Either way the blocking job, and the executor's drop waiting for it,
//! hung. So did the simple case after a `reset` of the sleep (an
//! interval's tick does one) between the two: the sleep registered again
//! in the last resort it had left, not in the executor polled under.

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
/// last resort, then awaits it in a nested `block_on`: `nested`'s, or
/// `fastexec::block_on`.
struct Nest {
    sleep: Pin<Box<Sleep>>,
    registered: Option<mpsc::Sender<()>>,
    nested: Option<fastexec::Executor>,
    /// Resets the sleep (to its own deadline) before the nested call.
    reset: bool,
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
            if self.reset {
                let deadline = self.sleep.deadline();
                self.sleep.reset(deadline);
            }
            match self.nested.take() {
                Some(nested) => nested.block_on(self.sleep.as_mut()),
                None => fastexec::block_on(self.sleep.as_mut()),
            }
        }
        Poll::Ready(Instant::now() >= self.sleep.deadline())
    }
}

fn sleep_fires_in_a_nested_block_on(nested: Option<fastexec::Executor>, reset: bool) {
    with_timeout(move || {
        let executor = support::executor(1);
        let (registered_tx, registered_rx) = mpsc::channel();
        let job = executor.spawn_blocking(move || {
            fastexec::block_on(Nest {
                sleep: Box::pin(sleep(SLEEP)),
                registered: Some(registered_tx),
                nested,
                reset,
            })
        });
        registered_rx.recv().unwrap();
        // Closes the timer queue (waking the sleep), then waits for the job.
        drop(executor);
        let slept = futures::executor::block_on(job).unwrap();
        assert!(slept, "the sleep was done before its deadline");
    });
}

#[test]
fn a_sleep_kept_by_an_outer_block_on_fires_in_a_nested_one() {
    sleep_fires_in_a_nested_block_on(None, false);
}

#[test]
fn a_sleep_kept_by_an_outer_block_on_fires_in_a_nested_simple_block_on() {
    sleep_fires_in_a_nested_block_on(Some(support::simple_executor(7)), false);
}

#[test]
fn a_sleep_kept_by_an_outer_block_on_and_reset_fires_in_a_nested_simple_block_on() {
    sleep_fires_in_a_nested_block_on(Some(support::simple_executor(7)), true);
}

#[test]
fn a_sleep_kept_by_an_outer_block_on_and_reset_fires_in_a_nested_one() {
    sleep_fires_in_a_nested_block_on(None, true);
}
