//! An async attempt whose body becomes ready only after its deadline has
//! passed, while no worker was free to notice the deadline, still times
//! out: the docs of `Task::timeout` say the attempt "is not polled again
//! after its deadline", so its late result must not count. (It used to:
//! the body was polled before the deadline was looked at, so an attempt
//! woken late completed however long it had run.)

mod support;

use std::time::{Duration, Instant};

use fastexec::graph::{AttemptOutcome, Graph, TaskError, TaskState};
use support::{gated_task, within, Gate};

#[test]
fn an_attempt_ready_only_after_its_deadline_times_out() {
    let limit = Duration::from_millis(5);
    let report = within(30, move || {
        // One worker: while the blocker below occupies it, neither the
        // attempt's timer nor its wake-up can be handled.
        let executor = support::executor(1);
        let (started, release) = (Gate::new(), Gate::new());
        let mut g = Graph::<u32>::new();
        g.add(gated_task("late", &started, &release).timeout(limit))
            .unwrap();
        let on = &executor;
        executor.block_on(async move {
            let run = g.start();
            started.wait().await;
            // The attempt began before its body opened `started`, so its
            // deadline is before `limit` from now.
            let past_deadline = Instant::now() + limit + Duration::from_millis(1);
            // Occupies the only worker past the deadline, having released
            // the body: when the worker is free again, the attempt's wake-up
            // and its deadline are both due.
            let blocker = on.spawn(async move {
                release.open();
                while Instant::now() < past_deadline {
                    std::thread::sleep(past_deadline.saturating_duration_since(Instant::now()));
                }
            });
            blocker.await.unwrap();
            run.wait_all().await
        })
    });
    let late = report.task("late").unwrap();
    assert_eq!(late.state, TaskState::Failed, "{report}");
    assert!(
        matches!(late.error, Some(TaskError::TimedOut(d)) if d == limit),
        "{:?}",
        late.error
    );
    assert_eq!(report.attempts()[0].outcome, AttemptOutcome::TimedOut);
}
