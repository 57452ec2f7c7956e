//! A pause whose checkpoint does not come within the pause timeout cancels
//! the task for that reason (`CancelReason::PauseTimedOut`), which the
//! report, the error's text and `why` tell apart from the task's own
//! timeout (`TaskError::TimedOut`).

mod support;

use std::time::Duration;

use fastexec::graph::{
    AttemptOutcome, Blocked, CancelReason, Graph, GraphError, SchedulerConfig, Task, TaskError,
    TaskState,
};
use support::{gated_task, within, Gate};

#[test]
fn a_pause_that_times_out_is_a_cancel_for_that_reason_not_the_tasks_own_timeout() {
    let pause_timeout = Duration::from_millis(40);
    let own_timeout = Duration::from_millis(30);
    let config = SchedulerConfig::new().with_pause_timeout(pause_timeout);
    let mut g = Graph::<u32>::with_config(config);
    let (started, never) = (Gate::new(), Gate::new());
    // Its own limit is an hour: only the pause can end it.
    g.add(gated_task("paused", &started, &never).timeout(Duration::from_secs(3600)))
        .unwrap();
    g.add(Task::new("child", |_| async { Ok(2) }).after(["paused"]))
        .unwrap();
    // For contrast, a task that runs past its own limit.
    g.add(gated_task("slow", &Gate::new(), &never).timeout(own_timeout))
        .unwrap();
    let run = g.start();
    let report = within(30, move || {
        started.wait_blocking();
        fastexec::block_on(async move {
            let err = run.pause("paused").await.unwrap_err();
            assert!(
                matches!(err, GraphError::PauseTimedOut { ref id, timeout } if id.as_str() == "paused" && timeout == pause_timeout),
                "{err}"
            );
            let why = run.why("paused").unwrap().unwrap();
            assert_eq!(
                why,
                Blocked::Cancelled(CancelReason::PauseTimedOut(pause_timeout))
            );
            assert_eq!(
                why.to_string(),
                "not running: cancelled (pause requested, but no checkpoint came within the pause timeout of 40ms)"
            );
            run.wait_all().await
        })
    });

    let paused = report.task("paused").unwrap();
    assert_eq!(paused.state, TaskState::Cancelled);
    let error = paused.error.clone().unwrap();
    assert!(
        matches!(error, TaskError::Cancelled(CancelReason::PauseTimedOut(t)) if t == pause_timeout),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "cancelled (pause requested, but no checkpoint came within the pause timeout of 40ms)"
    );
    let child = report.task("child").unwrap();
    assert!(matches!(
        &child.error,
        Some(TaskError::Cancelled(CancelReason::Upstream(id))) if id.as_str() == "paused"
    ));

    // The task's own timeout reads differently everywhere.
    let slow = report.task("slow").unwrap();
    assert_eq!(slow.state, TaskState::Failed);
    assert!(matches!(slow.error, Some(TaskError::TimedOut(t)) if t == own_timeout));
    assert_eq!(
        slow.error.as_ref().unwrap().to_string(),
        "timed out after 30ms"
    );

    // The attempts: the pause's is cancelled, the own limit's timed out.
    let outcome = |id: &str| {
        let attempts = report.attempts();
        let attempt = attempts.iter().find(|a| a.task.as_str() == id).unwrap();
        attempt.outcome
    };
    assert_eq!(outcome("paused"), AttemptOutcome::Cancelled);
    assert_eq!(outcome("slow"), AttemptOutcome::TimedOut);

    // And the table says which is which.
    let table = report.to_string();
    let line = |id: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("no line for {id} in\n{table}"))
            .to_string()
    };
    assert!(
        line("paused").contains("no checkpoint came within the pause timeout of 40ms"),
        "{table}"
    );
    assert!(line("slow").contains("timed out after 30ms"), "{table}");
    assert!(!line("paused").contains("timed out"), "{table}");
}
