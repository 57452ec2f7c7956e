//! `RunHandle::pause` on a running task waits for its checkpoint, with a
//! timeout in the timer queue of the executor the pause was first polled
//! on. If that executor shuts down before the pause settles, the pause fails
//! with `GraphError::PauseUnsettled` rather than claiming the task paused,
//! and the run is cancelled with `CancelReason::ExecutorShutdown`.

mod support;

use std::error::Error;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::{mpsc, Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use fastexec::graph::{
    CancelReason, Graph, GraphError, RunHandle, SchedulerConfig, Task, TaskError, TaskState,
};
use fastexec::{Executor, JoinError};
use support::{within, Gate, TIMEOUT};

type Pause = Pin<Box<dyn Future<Output = Result<(), GraphError>> + Send>>;

/// A run on `executor` whose one task, `busy`, runs until `never` opens,
/// and a pause of it polled once on `executor` (pending: the task has not
/// reached its checkpoint).
fn a_pause_pending_on(executor: &Executor) -> (RunHandle<u32>, Pause, Gate) {
    // A pause timeout that never expires during the test.
    let config = SchedulerConfig::new().with_pause_timeout(Duration::from_secs(3600));
    let mut g = Graph::<u32>::with_config(config);
    let (started, never) = (Gate::new(), Gate::new());
    let (s, n) = (started.clone(), never.clone());
    g.add(Task::new("busy", move |inp| {
        let (s, n) = (s.clone(), n.clone());
        async move {
            s.open();
            n.wait().await;
            inp.checkpoint().await?;
            Ok(1)
        }
    }))
    .unwrap();
    // Started from a task of `executor`: its runners and drivers run there.
    let run = fastexec::block_on(executor.spawn(async move { g.start() })).unwrap();
    started.wait_blocking();
    assert_eq!(run.state("busy"), Some(TaskState::Running));

    // The pause's first poll, on `executor`: its timeout registers in
    // `executor`'s timer queue.
    let r = run.clone();
    let mut pause: Pause = Box::pin(async move { r.pause("busy").await });
    let first_poll = executor.spawn(async move {
        let pending = poll_fn(|cx| Poll::Ready(pause.as_mut().poll(cx).is_pending())).await;
        (pending, pause)
    });
    let (pending, pause) = fastexec::block_on(first_poll).unwrap();
    assert!(
        pending,
        "a running task without a checkpoint cannot pause at once"
    );
    (run, pause, never)
}

/// The pause is unsettled, and the run was cancelled by the shutdown.
fn assert_unsettled_by_shutdown(run: &RunHandle<u32>, err: &GraphError) {
    assert!(
        matches!(err, GraphError::PauseUnsettled { ref id, .. } if id.as_str() == "busy"),
        "{err:?}"
    );
    let report = fastexec::block_on(run.wait_all());
    assert!(matches!(
        report.task("busy").unwrap().error,
        Some(TaskError::Cancelled(CancelReason::ExecutorShutdown))
    ));
    assert_eq!(run.state("busy"), Some(TaskState::Cancelled));
}

#[test]
fn a_pause_whose_watcher_was_dropped_with_its_executor_is_an_error() {
    within(30, || {
        let executor = Executor::builder().threads(1).build().unwrap();
        let (run, pause, never) = a_pause_pending_on(&executor);

        // Its executor goes, and the watcher with it, undecided.
        drop(executor);
        let err = fastexec::block_on(pause).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the pause of task `busy` is unsettled: the task waiting for its checkpoint ended first"
        );
        let source = err.source().expect("the watcher's JoinError");
        let join = source
            .downcast_ref::<JoinError>()
            .expect("the source is a JoinError");
        assert!(join.is_cancelled());
        assert_unsettled_by_shutdown(&run, &err);
        drop(never);
    });
}

/// Dropped from one of its own tasks, the executor is also the current
/// executor of the thread shutting it down, so the timeout it wakes finds
/// that queue closed too and cannot wait anywhere: it must be dropped (the
/// timeout does not apply), not wake itself again while it is being polled,
/// which used to re-lock the timer's own mutex on the same thread and hang
/// the shutdown.
#[test]
fn an_executor_dropped_from_its_own_task_with_a_pause_pending_shuts_down() {
    within(30, || {
        let executor = Executor::builder().threads(1).build().unwrap();
        let (run, pause, never) = a_pause_pending_on(&executor);

        let slot = Arc::new(Mutex::new(Some(executor)));
        let (dropped_tx, dropped_rx) = mpsc::channel();
        let s = Arc::clone(&slot);
        let dropper = slot.lock().unwrap().as_ref().unwrap().spawn(async move {
            let executor = s.lock().unwrap().take();
            drop(executor);
            dropped_tx.send(()).unwrap();
        });
        drop(dropper);
        dropped_rx
            .recv_timeout(TIMEOUT)
            .expect("the executor's drop on its own worker returned");

        let err = fastexec::block_on(pause).unwrap_err();
        assert_unsettled_by_shutdown(&run, &err);
        drop(never);
    });
}
