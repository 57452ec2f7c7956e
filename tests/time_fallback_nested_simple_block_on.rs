//! As `time_fallback_nested_block_on.rs`, but the nested `block_on` is
//! another, live executor's, of the simple scheduler: the sleep, pending in
//! the thread's queue of last resort, must move to that executor's queue,
//! which its `block_on` fires. It stayed in the last resort, which only a
//! `run_parked` call fires, and the queue's hook unparked the outer call,
//! which cannot run until the nested one returns: the nested call, the
//! blocking job, and the executor's drop waiting for it, hung.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use fastexec::time::{sleep, Sleep};

mod support;
use support::with_timeout;

const SLEEP: Duration = Duration::from_millis(300);

struct Nest {
    sleep: Pin<Box<Sleep>>,
    registered: Option<mpsc::Sender<()>>,
    nested: Option<fastexec::Executor>,
}

impl Future for Nest {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        if let Some(registered) = self.registered.take() {
            assert!(self.sleep.as_mut().poll(cx).is_pending());
            registered.send(()).unwrap();
            return Poll::Pending;
        }
        if self.sleep.as_mut().poll(cx).is_pending() {
            // Now in the thread's queue of last resort.
            let nested = self.nested.take().unwrap();
            nested.block_on(self.sleep.as_mut());
        }
        Poll::Ready(Instant::now() >= self.sleep.deadline())
    }
}

#[test]
fn a_sleep_kept_by_an_outer_block_on_fires_in_a_nested_simple_block_on() {
    with_timeout(|| {
        let executor = support::executor(1);
        let (registered_tx, registered_rx) = mpsc::channel();
        let job = executor.spawn_blocking(move || {
            fastexec::block_on(Nest {
                sleep: Box::pin(sleep(SLEEP)),
                registered: Some(registered_tx),
                nested: Some(support::simple_executor(7)),
            })
        });
        registered_rx.recv().unwrap();
        drop(executor);
        let slept = futures::executor::block_on(job).unwrap();
        assert!(slept, "the sleep was done before its deadline");
    });
}
