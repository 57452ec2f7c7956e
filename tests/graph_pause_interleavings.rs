//! Pause, resume and cancel in the orders a user may call them: each has a
//! documented outcome and none hangs.
//! - two pauses of one running task at once both return `Ok` at its
//!   checkpoint;
//! - resuming a running task that is not paused, or resuming twice, does
//!   nothing;
//! - cancelling a task paused at its checkpoint ends it and frees its
//!   budget; pausing or resuming it afterwards is `TaskEnded`.

mod support;

use fastexec::graph::{Graph, GraphError, SchedulerConfig, Task, TaskState};
use support::{within, Gate};

/// A task that opens `started`, waits for `go`, then reaches a checkpoint.
fn at_checkpoint_after(id: &str, started: &Gate, go: &Gate) -> Task<u32> {
    let (started, go) = (started.clone(), go.clone());
    Task::new(id, move |inp| {
        let (started, go) = (started.clone(), go.clone());
        async move {
            started.open();
            go.wait().await;
            inp.checkpoint().await?;
            Ok(1)
        }
    })
}

fn ended(result: Result<(), GraphError>, state: TaskState) {
    assert!(
        matches!(result, Err(GraphError::TaskEnded { state: s, .. }) if s == state),
        "{result:?}"
    );
}

#[test]
fn pause_resume_and_cancel_in_any_order_end_as_documented() {
    within(60, || {
        let mut g = Graph::<u32>::with_config(SchedulerConfig::new().with_cpu_slots(1));
        let (started, go) = (Gate::new(), Gate::new());
        g.add(at_checkpoint_after("worker", &started, &go).priority(1))
            .unwrap();
        // Needs the slot "worker" holds, paused or not.
        g.add(Task::new("next", |_| async { Ok(2) })).unwrap();
        fastexec::block_on(async {
            let run = g.start();
            started.wait().await;
            // Resuming a running task that is not paused does nothing.
            run.resume("worker").unwrap();
            assert_eq!(run.state("worker"), Some(TaskState::Running));

            // Two pauses at once (each requested in its first poll): both
            // settle at the one checkpoint.
            let mut first = std::pin::pin!(run.pause("worker"));
            let mut second = std::pin::pin!(run.pause("worker"));
            assert!(futures::poll!(first.as_mut()).is_pending());
            assert!(futures::poll!(second.as_mut()).is_pending());
            go.open();
            let (first, second) = futures::join!(first, second);
            first.unwrap();
            second.unwrap();
            assert_eq!(run.state("worker"), Some(TaskState::Paused));
            // Pausing a paused task does nothing.
            run.pause("worker").await.unwrap();
            assert_eq!(run.state("next"), Some(TaskState::Ready));

            // Cancel it while paused: it ends, and "next" gets the slot.
            run.cancel("worker").unwrap();
            run.cancel("worker").unwrap(); // idempotent
            assert_eq!(*run.wait("next").await.unwrap(), 2);
            ended(run.pause("worker").await, TaskState::Cancelled);
            ended(run.resume("worker"), TaskState::Cancelled);
            let report = run.wait_all().await;
            assert_eq!(report.task("worker").unwrap().state, TaskState::Cancelled);
        });
    });
}
