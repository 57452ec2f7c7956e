//! Steering a running graph: cancel, stop, adding tasks.

mod support;

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use fastexec::graph::{CancelReason, Graph, GraphError, Task, TaskError, TaskState};
use support::{within, Gate};

/// Sends on a channel when dropped: proves a cancelled task's future is gone.
struct DropSignal(mpsc::Sender<()>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

fn cancel_reason(report: &fastexec::graph::Report<u32>, id: &str) -> CancelReason {
    match &report.task(id).unwrap().error {
        Some(TaskError::Cancelled(r)) => r.clone(),
        other => panic!("{id}: {other:?}"),
    }
}

#[test]
fn cancel_while_running_cancels_dependents_and_drops_the_future() {
    let started = Gate::new();
    let (dropped_tx, dropped) = mpsc::channel();
    let dropped_tx = Mutex::new(dropped_tx);
    let mut g = Graph::<u32>::new();
    let on_start = started.clone();
    g.add(Task::new("long", move |_| {
        let signal = DropSignal(dropped_tx.lock().unwrap().clone());
        on_start.open();
        async move {
            let _signal = signal;
            futures::future::pending::<()>().await;
            Ok(0)
        }
    }))
    .unwrap();
    g.add(Task::new("child", |_| async { Ok(1) }).after(["long"]))
        .unwrap();
    g.add(Task::new("grandchild", |_| async { Ok(2) }).after(["child"]))
        .unwrap();
    g.add(Task::new("independent", |_| async { Ok(3) }))
        .unwrap();

    let run = g.start();
    within(30, move || started.wait_blocking());
    assert_eq!(run.state("long"), Some(TaskState::Running));
    run.cancel("long").unwrap();
    assert_eq!(run.state("long"), Some(TaskState::Cancelled));
    assert!(matches!(
        run.cancel("ghost"),
        Err(GraphError::UnknownTask(_))
    ));

    let r = run.clone();
    let report = within(30, move || fastexec::block_on(r.wait_all()));
    assert_eq!(cancel_reason(&report, "long"), CancelReason::Requested);
    for id in ["child", "grandchild"] {
        assert_eq!(report.task(id).unwrap().state, TaskState::Cancelled);
        assert_eq!(
            cancel_reason(&report, id),
            CancelReason::Upstream("long".into())
        );
    }
    assert_eq!(report.output("independent"), Some(&3));
    let waited = fastexec::block_on(run.wait("child"));
    assert!(
        matches!(waited, Err(GraphError::TaskFailed { .. })),
        "{waited:?}"
    );
    dropped
        .recv_timeout(Duration::from_secs(30))
        .expect("the cancelled task's future was dropped");
    // Cancelling a finished task changes nothing.
    run.cancel("independent").unwrap();
    assert_eq!(run.state("independent"), Some(TaskState::Completed));
}

#[test]
fn stop_lets_running_tasks_finish_and_cancels_the_rest() {
    let started = Gate::new();
    let release = Gate::new();
    let mut g = Graph::<u32>::new();
    let (on_start, held) = (started.clone(), release.clone());
    g.add(Task::new("running", move |_| {
        on_start.open();
        let held = held.clone();
        async move {
            held.wait().await;
            Ok(1)
        }
    }))
    .unwrap();
    // A running task whose failure would normally be retried.
    let (on_start2, held2) = (Gate::new(), release.clone());
    let started2 = on_start2.clone();
    g.add(
        Task::new("retrying", move |_| {
            on_start2.open();
            let held = held2.clone();
            async move {
                held.wait().await;
                Err("failed while stopping".into())
            }
        })
        .retries(5),
    )
    .unwrap();
    g.add(Task::new("waiting", |_| async { Ok(2) }).after(["running"]))
        .unwrap();

    let run = g.start();
    within(30, move || {
        started.wait_blocking();
        started2.wait_blocking();
    });
    run.stop();
    assert_eq!(run.state("waiting"), Some(TaskState::Cancelled));
    assert_eq!(run.state("running"), Some(TaskState::Running));
    // Added after stop: cancelled at once.
    run.add_task(Task::new("late", |_| async { Ok(3) }))
        .unwrap();
    assert_eq!(run.state("late"), Some(TaskState::Cancelled));
    release.open();

    let r = run.clone();
    let report = within(30, move || fastexec::block_on(r.wait_all()));
    assert_eq!(report.output("running"), Some(&1));
    let retrying = report.task("retrying").unwrap();
    assert_eq!(
        (retrying.state, retrying.attempts),
        (TaskState::Failed, 1),
        "no retry after stop"
    );
    assert_eq!(cancel_reason(&report, "waiting"), CancelReason::Stopped);
    assert_eq!(cancel_reason(&report, "late"), CancelReason::Stopped);
    assert!(report.task("waiting").unwrap().start.is_none());
}

#[test]
fn tasks_added_while_running_join_the_run() {
    let release = Gate::new();
    let mut g = Graph::<u32>::new();
    let held = release.clone();
    g.add(Task::new("base", move |_| {
        let held = held.clone();
        async move {
            held.wait().await;
            Ok(20)
        }
    }))
    .unwrap();
    g.add(Task::new("broken", |_| async { Err("no".into()) }))
        .unwrap();
    let run = g.start();
    // Depends on a running task: waits for it.
    run.add_task(Task::new("on-base", |i| async move { Ok(i["base"] + 1) }).after(["base"]))
        .unwrap();
    let r = run.clone();
    within(30, move || fastexec::block_on(r.wait("broken"))).unwrap_err();
    // Depends on a failed task: upstream-failed at once.
    run.add_task(Task::new("on-broken", |_| async { Ok(0) }).after(["broken"]))
        .unwrap();
    assert_eq!(run.state("on-broken"), Some(TaskState::UpstreamFailed));
    let e = run
        .add_task(Task::new("base", |_| async { Ok(0) }))
        .unwrap_err();
    assert!(matches!(e, GraphError::DuplicateId(_)));
    release.open();
    let r = run.clone();
    let report = within(30, move || fastexec::block_on(r.wait_all()));
    assert_eq!(report.output("on-base"), Some(&21));
}
