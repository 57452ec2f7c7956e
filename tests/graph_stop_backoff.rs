//! `RunHandle::stop` while a task waits out the backoff before a retry: the
//! retry would be cancelled when due, so stop cancels it at once instead of
//! leaving the run to wait out the backoff.

mod support;

use std::time::Duration;

use fastexec::graph::{CancelReason, Graph, Task, TaskError, TaskState};
use support::{fixed_backoff, wait_for_first_failure, within};

#[test]
fn stop_cancels_a_task_waiting_to_retry_at_once() {
    let mut g = Graph::<u32>::new();
    let an_hour = fixed_backoff(3, Duration::from_secs(3600));
    g.add(Task::new("flaky", |_| async { Err("down".into()) }).retry(an_hour))
        .unwrap();
    g.add(Task::new("after", |_| async { Ok(1) }).after(["flaky"]))
        .unwrap();
    let run = g.start();
    wait_for_first_failure(&run, "flaky");

    run.stop();
    assert_eq!(run.state("flaky"), Some(TaskState::Cancelled));
    // Guards against the old behaviour: the run waited out the hour.
    let report = within(30, move || fastexec::block_on(run.wait_all()));
    let flaky = report.task("flaky").unwrap();
    assert_eq!(flaky.attempts, 1);
    assert!(
        matches!(
            flaky.error,
            Some(TaskError::Cancelled(CancelReason::Stopped))
        ),
        "{:?}",
        flaky.error
    );
    assert_eq!(report.task("after").unwrap().state, TaskState::Cancelled);
}
