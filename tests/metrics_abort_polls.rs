//! Aborting a parked task makes async-task queue it once more, so that the
//! executor drops its future. `Metrics::polls` counts that run (the
//! executor cannot tell it from a poll before it runs), as its docs say;
//! the latency histogram, which records polls of futures, does not. Before,
//! the docs promised polls only, and the two disagreed without a word.

use std::sync::mpsc;

mod support;
use support::{spin_until, with_timeout};

#[test]
fn an_aborted_tasks_dropping_run_counts_in_polls_but_not_in_latencies() {
    with_timeout(|| {
        let executor = fastexec::Executor::builder()
            .threads(1)
            .latency_histogram(true)
            .build()
            .unwrap();
        let (polled_tx, polled_rx) = mpsc::channel();
        let mut handle = executor.spawn(async move {
            polled_tx.send(()).unwrap();
            std::future::pending::<()>().await
        });
        polled_rx.recv().unwrap();
        assert!(spin_until(|| executor.metrics().polls == 1));
        handle.abort();
        let result = futures::executor::block_on(handle);
        assert!(result.unwrap_err().is_cancelled());
        // The run that dropped the future was counted before it began, and
        // the handle resolved inside it.
        let metrics = executor.metrics();
        let latency = metrics.latency.clone().unwrap();
        assert_eq!((metrics.polls, latency.total()), (2, 1), "{metrics:?}");
    });
}
