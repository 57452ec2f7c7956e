//! Retry policies with very long waits (up to `Duration::MAX`): computing
//! the wait never panics, and a task waiting that long holds up nothing
//! else.

mod support;

use std::time::Duration;

use fastexec::graph::{Graph, RetryPolicy, Task, TaskState};
use support::within;

#[test]
fn backoff_accepts_any_duration() {
    let capped = RetryPolicy::attempts(200).max_backoff(Duration::MAX);
    assert_eq!(capped.backoff(1), Duration::from_millis(10));
    // 10 ms * 2^149 is past any Duration: the cap, exactly.
    assert_eq!(capped.backoff(150), Duration::MAX);
    assert_eq!(capped.backoff(u32::MAX), Duration::MAX);

    let huge = RetryPolicy::attempts(3)
        .initial_backoff(Duration::MAX)
        .max_backoff(Duration::MAX);
    assert_eq!(huge.backoff(1), Duration::MAX);
    assert_eq!(huge.backoff(2), Duration::MAX);

    let capped_lower = RetryPolicy::attempts(3)
        .initial_backoff(Duration::MAX)
        .max_backoff(Duration::from_secs(1));
    assert_eq!(capped_lower.backoff(1), Duration::from_secs(1));

    // No wait stays no wait, however many retries.
    let none = RetryPolicy::attempts(5000).initial_backoff(Duration::ZERO);
    assert_eq!(none.backoff(1), Duration::ZERO);
    assert_eq!(none.backoff(4000), Duration::ZERO);
}

/// The failure of a task whose next wait is `Duration::MAX` is recorded in
/// the same batch as other tasks' results: computing the wait used to panic
/// there (converting the wait, rounded up as an `f64`, back to a
/// `Duration`), which lost the whole batch and left its tasks running for
/// ever.
#[test]
fn a_failure_with_the_longest_backoff_loses_no_other_task() {
    within(30, || {
        let executor = support::executor(1);
        let mut g = Graph::<u32>::new();
        let longest = RetryPolicy::attempts(2)
            .initial_backoff(Duration::MAX)
            .max_backoff(Duration::MAX);
        g.add(Task::sync("no-jitter", |_| Err("fails".into())).retry(longest.jitter(0.0)))
            .unwrap();
        g.add(Task::sync("jitter", |_| Err("fails".into())).retry(longest.jitter(0.5)))
            .unwrap();
        for n in 0..4 {
            g.add(Task::sync(format!("ok-{n}"), move |_| Ok(n)))
                .unwrap();
        }
        g.add(Task::sync("after", |_| Ok(9)).after(["no-jitter"]))
            .unwrap();
        executor.block_on(async move {
            let run = g.start();
            for n in 0..4 {
                assert_eq!(*run.wait(&format!("ok-{n}")).await.unwrap(), n);
            }
            // Failed once, now waiting to retry.
            assert_eq!(run.state("no-jitter"), Some(TaskState::Running));
            assert_eq!(run.state("jitter"), Some(TaskState::Running));
            assert_eq!(run.state("after"), Some(TaskState::Pending));
            run.cancel("no-jitter").unwrap();
            run.cancel("jitter").unwrap();
            let report = run.wait_all().await;
            for id in ["no-jitter", "jitter", "after"] {
                assert_eq!(report.task(id).unwrap().state, TaskState::Cancelled, "{id}");
            }
            assert_eq!(report.task("no-jitter").unwrap().attempts, 1);
            assert_eq!(report.count(TaskState::Completed), 4);
        });
    });
}
