//! `Executor::drop` closes the timer queue and only then waits for the
//! blocking jobs. A `fastexec::block_on(sleep(..))` in such a job, woken
//! by the close, finds its executor's queue closed and nowhere else to
//! register: that `block_on` then keeps the timer in a queue of its own,
//! and sleeps until the deadline. Before, the timer asked to be polled
//! again at once, and the job's thread spun a core (millions of polls)
//! until the deadline while the executor's drop waited for it.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use fastexec::time::sleep;

mod support;
use support::with_timeout;

/// Counts the polls of a future and reports the first one.
struct Counted<F> {
    inner: F,
    polls: Arc<AtomicUsize>,
    first: Option<mpsc::Sender<()>>,
}

impl<F: Future + Unpin> Future for Counted<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let output = Pin::new(&mut self.inner).poll(cx);
        if let Some(first) = self.first.take() {
            first.send(()).unwrap();
        }
        output
    }
}

const SLEEP: Duration = Duration::from_millis(300);

#[test]
fn a_blocking_jobs_sleep_does_not_spin_while_the_executor_shuts_down() {
    with_timeout(|| {
        let executor = support::executor(1);
        let polls = Arc::new(AtomicUsize::new(0));
        let (registered_tx, registered_rx) = mpsc::channel();
        let job = {
            let polls = polls.clone();
            executor.spawn_blocking(move || {
                let started = Instant::now();
                fastexec::block_on(Counted {
                    inner: sleep(SLEEP),
                    polls,
                    first: Some(registered_tx),
                });
                started.elapsed()
            })
        };
        registered_rx.recv().unwrap();
        // The drop closes the timer queue (waking the sleep) and then waits
        // for the blocking job.
        drop(executor);
        let slept = futures::executor::block_on(job).unwrap();
        assert!(slept >= SLEEP, "woken early: {slept:?}");
        let polls = polls.load(Ordering::SeqCst);
        assert!(
            polls < 100,
            "the sleep was polled {polls} times in {slept:?}: its thread spun \
             while the executor shut down"
        );
    });
}
