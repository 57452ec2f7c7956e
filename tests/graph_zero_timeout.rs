//! A zero timeout is refused when the task is added, for both kinds of
//! body: judged on return, a sync body would always overrun it, while an
//! async body done in its first poll would never be judged at all.

mod support;

use std::time::Duration;

use fastexec::graph::{Graph, GraphError, Task};
use support::within;

fn refused(err: GraphError, id: &str) {
    assert!(
        matches!(err, GraphError::ZeroTimeout { ref task } if task.as_str() == id),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("task `{id}` has a zero timeout; give it a positive one, or none")
    );
}

#[test]
fn a_zero_timeout_is_refused_for_a_sync_and_an_async_body_alike() {
    let mut g = Graph::<u32>::new();
    let sync = Task::sync("sync", |_| Ok(1)).timeout(Duration::ZERO);
    refused(g.add(sync).unwrap_err(), "sync");
    let ready = Task::new("async", |_| async { Ok(2) }).timeout(Duration::ZERO);
    refused(g.add(ready).unwrap_err(), "async");
    assert!(g.is_empty());

    // In a batch: nothing of the batch is added.
    let err = g
        .add_batch([
            Task::sync("fine", |_| Ok(3)),
            Task::new("zero", |_| async { Ok(4) })
                .timeout(Duration::ZERO)
                .after(["fine"]),
        ])
        .unwrap_err();
    refused(err, "zero");
    assert!(g.is_empty());

    // The smallest positive limit is a limit: the task is added and runs.
    g.add(Task::new("tiny", |_| async { Ok(5) }).timeout(Duration::from_nanos(1)))
        .unwrap();
    g.add(Task::sync("roomy", |_| Ok(6)).timeout(Duration::from_secs(60)))
        .unwrap();
    let report = within(30, move || g.run_blocking());
    assert_eq!(report.output("roomy"), Some(&6));
}

#[test]
fn a_zero_timeout_is_refused_for_a_task_added_while_the_graph_runs() {
    let mut g = Graph::<u32>::new();
    g.add(Task::new("plan", |inp| async move {
        let sub = Task::sync("sub", |_| Ok(1)).timeout(Duration::ZERO);
        match inp.add_task(sub) {
            Err(GraphError::ZeroTimeout { task }) if task.as_str() == "sub" => Ok(1),
            other => Err(format!("expected a refusal, got {other:?}").into()),
        }
    }))
    .unwrap();
    let report = within(30, move || g.run_blocking());
    assert!(report.is_success(), "{report}");
    assert!(report.task("sub").is_none());
}
