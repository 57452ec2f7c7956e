//! The timeout of a pending `RunHandle::pause` waits in the timer queue of
//! the executor the pause was called on. When that executor shuts down, it
//! wakes the timeout, which moves to the executor of the thread doing the
//! shutdown. If that is the same executor (dropped from one of its own
//! tasks), its queue is closed too, so the timeout cannot wait anywhere:
//! it must be dropped (the timeout does not apply), not wake itself again
//! while it is being polled, which used to re-lock the timer's own mutex on
//! the same thread and hang the shutdown.

mod support;

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::{mpsc, Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use fastexec::graph::{
    CancelReason, Graph, GraphError, SchedulerConfig, Task, TaskError, TaskState,
};
use fastexec::Executor;
use support::{within, Gate, TIMEOUT};

#[test]
fn an_executor_dropped_from_its_own_task_with_a_pause_pending_shuts_down() {
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
        let run = fastexec::block_on(executor.spawn(async move { g.start() })).unwrap();
        started.wait_blocking();
        assert_eq!(run.state("busy"), Some(TaskState::Running));

        // The pause's first poll, on `executor`: its timeout registers in
        // `executor`'s timer queue.
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

        // `executor` is dropped on its own worker, where it is also the
        // current executor: closing its timer queue wakes the timeout there.
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

        // The watcher went with the executor: the pause is unsettled.
        let err = fastexec::block_on(pause).unwrap_err();
        assert!(
            matches!(err, GraphError::PauseUnsettled { ref id, .. } if id.as_str() == "busy"),
            "{err:?}"
        );
        // The task's driver goes with the executor too (as the worker that
        // dropped it exits), which cancels the run.
        let report = fastexec::block_on(run.wait_all());
        assert!(matches!(
            report.task("busy").unwrap().error,
            Some(TaskError::Cancelled(CancelReason::ExecutorShutdown))
        ));
        assert_eq!(run.state("busy"), Some(TaskState::Cancelled));
        drop(never);
    });
}
