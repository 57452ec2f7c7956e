//! Pausing a running task of a stopped run. A stop lets running tasks
//! finish, and cancels paused ones, since nothing would resume them; so a
//! running task can no longer pause: `pause` returns `GraphError::Stopped`,
//! and a pause requested before the stop and not yet reached at a
//! checkpoint is withdrawn (`Stopped` too, or `TaskEnded` if the task has
//! completed by the time the pause looks). Before, the task paused after
//! the stop and `wait_all` waited for a resume that never came.

mod support;

use fastexec::graph::{Graph, GraphError, Report, RunHandle, TaskState};
use support::{checkpointed_task, within, Gate};

/// Starts a graph of one task, `w`, that opens `started`, waits for
/// `proceed`, reaches a checkpoint and returns 1.
fn start(started: &Gate, proceed: &Gate) -> RunHandle<u32> {
    let mut g = Graph::<u32>::new();
    g.add(checkpointed_task("w", started, proceed)).unwrap();
    g.start()
}

/// `w` ran to its end: the stop let it finish.
fn assert_finished(report: &Report<u32>) {
    assert_eq!(report.task("w").unwrap().state, TaskState::Completed);
    assert_eq!(report.output("w"), Some(&1));
}

fn assert_stopped(paused: Result<(), GraphError>) {
    assert!(
        matches!(&paused, Err(GraphError::Stopped { id }) if id.as_str() == "w"),
        "{paused:?}"
    );
}

#[test]
fn a_pause_requested_before_the_stop_is_withdrawn_and_the_task_finishes() {
    let (started, proceed) = (Gate::new(), Gate::new());
    let run = start(&started, &proceed);
    let report = within(30, move || {
        started.wait_blocking();
        fastexec::block_on(async move {
            let stop_then_go = async {
                // `pause` is polled first: its request is in.
                run.stop();
                proceed.open();
            };
            let (paused, ()) = fastexec::join!(run.pause("w"), stop_then_go);
            // The task, no longer asked to pause, may complete before the
            // pause's watcher looks: then it reports that instead.
            let completed_first = matches!(
                &paused,
                Err(GraphError::TaskEnded {
                    state: TaskState::Completed,
                    ..
                })
            );
            if !completed_first {
                assert_stopped(paused);
            }
            run.wait_all().await
        })
    });
    assert_finished(&report);
}

#[test]
fn a_running_task_of_a_stopped_run_cannot_be_paused() {
    let (started, proceed) = (Gate::new(), Gate::new());
    let run = start(&started, &proceed);
    let report = within(30, move || {
        started.wait_blocking();
        run.stop();
        fastexec::block_on(async move {
            assert_stopped(run.pause("w").await);
            assert_eq!(run.state("w"), Some(TaskState::Running));
            proceed.open();
            run.wait_all().await
        })
    });
    assert_finished(&report);
}
