//! Aborting a parked task makes async-task queue it once more, so that the
//! executor drops its future. `Metrics::polls` counts that run (the
//! executor cannot tell it from a poll before it runs), as its docs say;
//! the latency histogram, which records polls of futures, does not. Before,
//! the docs promised polls only, and the two disagreed without a word.

mod support;
use support::with_timeout;

#[test]
fn an_aborted_tasks_dropping_run_counts_in_polls_but_not_in_latencies() {
    with_timeout(|| {
        let executor = fastexec::Executor::builder()
            .threads(1)
            .latency_histogram(true)
            .build()
            .unwrap();
        let target = executor.spawn(std::future::pending::<()>());
        // Posted after `target` from the same thread: on one worker it runs
        // after `target`'s first poll has returned (an abort during that
        // poll would drop the future in the same run, with no second one).
        let aborter = executor.spawn(async move {
            let mut target = target;
            target.abort();
            target.await
        });
        let result = futures::executor::block_on(aborter).unwrap();
        assert!(result.unwrap_err().is_cancelled());
        // Every run was counted before it began, and the handles resolved
        // inside the runs: one run polled no future.
        let metrics = executor.metrics();
        let latency = metrics.latency.clone().unwrap();
        assert_eq!(metrics.polls, latency.total() + 1, "{metrics:?}");
    });
}
