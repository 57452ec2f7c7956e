//! An attempt paused at a checkpoint keeps its time limit (see
//! `Task::timeout`): paused past its deadline it times out. With no retry
//! left the paused task fails (and its dependents are upstream-failed);
//! with one left it stays paused, and its next attempt waits for the
//! resume (see `TaskState::Paused`).

mod support;

use std::time::Duration;

use fastexec::graph::{AttemptOutcome, Graph, GraphError, RunHandle, Task, TaskError, TaskState};
use support::{checkpointed_task, fixed_backoff, spin_until, within, Gate};

/// Long enough for the pause to reach the checkpoint first on a loaded machine.
const LIMIT: Duration = Duration::from_millis(200);

/// Starts `task` (a [`checkpointed_task`] on `started` and `proceed`) with
/// a dependent, `after`, and pauses it at its checkpoint.
fn paused_at_checkpoint(task: Task<u32>, started: &Gate, proceed: &Gate) -> RunHandle<u32> {
    let mut g = Graph::<u32>::new();
    g.add(task).unwrap();
    g.add(Task::new("after", |inp| async move { Ok(inp[0] + 1) }).after(["t"]))
        .unwrap();
    let run = g.start();
    started.wait_blocking();
    // The request is made in `pause`'s first poll, before the body may
    // go on to its checkpoint.
    let go = async { proceed.open() };
    fastexec::block_on(async { fastexec::join!(run.pause("t"), go).0 }).unwrap();
    assert_eq!(run.state("t"), Some(TaskState::Paused));
    run
}

#[test]
fn a_task_paused_past_its_deadline_with_no_retry_left_fails() {
    within(30, || {
        let (started, proceed) = (Gate::new(), Gate::new());
        let task = checkpointed_task("t", &started, &proceed).timeout(LIMIT);
        let run = paused_at_checkpoint(task, &started, &proceed);
        let err = fastexec::block_on(run.wait("t")).unwrap_err();
        assert!(
            matches!(err, GraphError::TaskFailed { source: TaskError::TimedOut(d), .. } if d == LIMIT),
            "{err}"
        );
        let report = fastexec::block_on(run.wait_all());
        assert_eq!(report.task("t").unwrap().state, TaskState::Failed);
        assert_eq!(report.attempts()[0].outcome, AttemptOutcome::TimedOut);
        let after = report.task("after").unwrap();
        assert_eq!(after.state, TaskState::UpstreamFailed);
        assert!(
            matches!(&after.error, Some(TaskError::UpstreamFailed(root)) if root.as_str() == "t")
        );
    });
}

#[test]
fn a_task_paused_past_its_deadline_with_a_retry_left_stays_paused_until_resumed() {
    within(30, || {
        let (started, proceed) = (Gate::new(), Gate::new());
        let task = checkpointed_task("t", &started, &proceed)
            .timeout(LIMIT)
            .retry(fixed_backoff(2, Duration::from_millis(1)));
        let run = paused_at_checkpoint(task, &started, &proceed);
        // The first attempt times out while paused.
        assert!(spin_until(|| run
            .report()
            .attempts()
            .first()
            .is_some_and(|a| a.end.is_some())));
        assert_eq!(run.report().attempts()[0].outcome, AttemptOutcome::TimedOut);
        assert_eq!(run.state("t"), Some(TaskState::Paused));
        assert_eq!(
            run.report().task("t").unwrap().attempts,
            1,
            "no retry taken"
        );
        run.resume("t").unwrap();
        let report = fastexec::block_on(run.wait_all());
        let t = report.task("t").unwrap();
        assert_eq!((t.state, t.attempts), (TaskState::Completed, 2));
        assert_eq!(report.output("after"), Some(&2));
    });
}
