//! `RunHandle::pause` on a running task waits for its checkpoint in a
//! task of its own. If that task ends without telling how the pause went
//! (its executor shut down), the pause fails with
//! `GraphError::PauseUnsettled`, whose source is the watcher's
//! `JoinError`, rather than claiming the task paused.

mod support;

use std::error::Error;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use fastexec::graph::{
    CancelReason, Graph, GraphError, SchedulerConfig, Task, TaskError, TaskState,
};
use fastexec::{Executor, JoinError};
use support::{within, Gate};

#[test]
fn a_pause_whose_watcher_was_dropped_with_its_executor_is_an_error() {
    within(30, || {
        let executor = Executor::builder().threads(1).build().unwrap();
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

        // The pause's first poll, on `executor`, spawns its watcher there.
        let r = run.clone();
        let mut pause: Pin<Box<dyn Future<Output = Result<(), GraphError>> + Send>> =
            Box::pin(async move { r.pause("busy").await });
        let first_poll = executor.spawn(async move {
            let pending = poll_fn(|cx| Poll::Ready(pause.as_mut().poll(cx).is_pending())).await;
            (pending, pause)
        });
        let (pending, pause) = fastexec::block_on(first_poll).unwrap();
        assert!(
            pending,
            "a running task without a checkpoint cannot pause at once"
        );

        // Its executor goes, and the watcher with it, undecided.
        drop(executor);
        let err = fastexec::block_on(pause).unwrap_err();
        assert!(
            matches!(err, GraphError::PauseUnsettled { ref id, .. } if id.as_str() == "busy"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "the pause of task `busy` is unsettled: the task waiting for its checkpoint ended first"
        );
        let source = err.source().expect("the watcher's JoinError");
        let join = source
            .downcast_ref::<JoinError>()
            .expect("the source is a JoinError");
        assert!(join.is_cancelled());
        // The pause was not recorded. The task's driver went with the
        // executor too, which cancels the run (see `graph_group_cancel`).
        assert_eq!(run.state("busy"), Some(TaskState::Cancelled));
        let report = fastexec::block_on(run.wait_all());
        assert!(matches!(
            report.task("busy").unwrap().error,
            Some(TaskError::Cancelled(CancelReason::ExecutorShutdown))
        ));
        drop(never);
    });
}
