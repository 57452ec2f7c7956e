//! An async attempt whose body becomes ready only after its deadline has
//! passed, while no worker was free to notice the deadline, still times
//! out: the docs of `Task::timeout` say the attempt "is not polled again
//! after its deadline", so its late result must not count. (It used to:
//! the body was polled before the deadline was looked at, so an attempt
//! woken late completed however long it had run.)

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fastexec::graph::{AttemptOutcome, Graph, Task, TaskError, TaskState};
use support::{within, Gate};

#[test]
fn an_attempt_ready_only_after_its_deadline_times_out() {
    let limit = Duration::from_millis(5);
    let report = within(30, move || {
        // One worker: while the blocker below occupies it, neither the
        // attempt's timer nor its wake-up can be handled.
        let executor = support::executor(1);
        let (started, release) = (Gate::new(), Gate::new());
        let entered = Arc::new(Mutex::new(None));
        let mut g = Graph::<u32>::new();
        let (body_started, body_release, body_entered) =
            (started.clone(), release.clone(), Arc::clone(&entered));
        g.add(
            Task::new("late", move |_| {
                *body_entered.lock().unwrap() = Some(Instant::now());
                body_started.open();
                let release = body_release.clone();
                async move {
                    release.wait().await;
                    Ok(1)
                }
            })
            .timeout(limit),
        )
        .unwrap();
        let on = &executor;
        executor.block_on(async move {
            let run = g.start();
            started.wait().await;
            let entry = entered.lock().unwrap().expect("the body was entered");
            // The attempt began no later than its body was entered, so its
            // deadline is at most `entry + limit`.
            let past_deadline = entry + limit + Duration::from_millis(1);
            // Occupies the only worker past the deadline, having released
            // the body: when the worker is free again, the attempt's wake-up
            // and its deadline are both due.
            let blocker = on.spawn(async move {
                release.open();
                while Instant::now() < past_deadline {
                    std::thread::sleep(past_deadline - Instant::now());
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
