//! A checkpoint reached once the body's attempt is over returns
//! `Err(Cancelled)`, so that the body stops: after its task was cancelled
//! while the body ran between two checkpoints, and from inputs that
//! outlived their attempt (kept by a task the body spawned) while a later
//! attempt runs. Before, both returned `Ok` unless a pause had ever been
//! requested of the task, and a cancelled body ran on to its end.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use fastexec::graph::{Cancelled, Graph, Task, TaskState};
use support::{fixed_backoff, within, Gate};

/// Opens its gate when dropped: the body has ended, one way or the other.
struct OpenOnDrop(Gate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

#[test]
fn a_checkpoint_after_a_cancel_returns_cancelled() {
    let (started, proceed, ended) = (Gate::new(), Gate::new(), Gate::new());
    let chunks_after_cancel = Arc::new(AtomicUsize::new(0));
    let mut g = Graph::<u32>::new();
    let (s, p, e, c) = (
        started.clone(),
        proceed.clone(),
        ended.clone(),
        chunks_after_cancel.clone(),
    );
    g.add(Task::new("long", move |inp| {
        let (s, p, e, c) = (s.clone(), p.clone(), e.clone(), c.clone());
        async move {
            let _ended = OpenOnDrop(e);
            for chunk in 0..1000u32 {
                inp.checkpoint().await?;
                if chunk == 0 {
                    // A chunk of work without a suspension point, during
                    // which the test cancels the task.
                    s.open();
                    p.wait_blocking();
                } else {
                    c.fetch_add(1, Ordering::SeqCst);
                }
            }
            Ok(1)
        }
    }))
    .unwrap();
    let run = g.start();
    let report = within(30, move || {
        started.wait_blocking();
        run.cancel("long").unwrap();
        assert_eq!(run.state("long"), Some(TaskState::Cancelled));
        proceed.open();
        ended.wait_blocking();
        fastexec::block_on(run.wait_all())
    });
    assert_eq!(chunks_after_cancel.load(Ordering::SeqCst), 0);
    assert_eq!(report.task("long").unwrap().state, TaskState::Cancelled);
}

#[test]
fn a_checkpoint_of_an_attempt_that_timed_out_returns_cancelled() {
    let (second_started, stale_go, finish) = (Gate::new(), Gate::new(), Gate::new());
    let (stale_result, checked) = mpsc::channel::<Result<(), Cancelled>>();
    let mut g = Graph::<u32>::new();
    let (s, go, f) = (second_started.clone(), stale_go.clone(), finish.clone());
    let task = Task::new("t", move |inp| {
        let (s, go, f, stale_result) = (s.clone(), go.clone(), f.clone(), stale_result.clone());
        async move {
            if inp.attempt() == 1 {
                // These inputs outlive the attempt, in a task of their own,
                // and reach a checkpoint while the second attempt runs.
                fastexec::spawn(async move {
                    go.wait().await;
                    stale_result.send(inp.checkpoint().await).unwrap();
                })
                .detach();
                // Runs into the time limit.
                return std::future::pending().await;
            }
            s.open();
            f.wait().await;
            Ok(2)
        }
    })
    .timeout(Duration::from_millis(50))
    .retry(fixed_backoff(2, Duration::from_millis(1)));
    g.add(task).unwrap();
    let run = g.start();
    let (stale, report) = within(30, move || {
        second_started.wait_blocking();
        stale_go.open();
        let stale = checked.recv().unwrap();
        assert_eq!(run.state("t"), Some(TaskState::Running));
        finish.open();
        (stale, fastexec::block_on(run.wait_all()))
    });
    assert_eq!(stale, Err(Cancelled));
    let t = report.task("t").unwrap();
    assert_eq!((t.state, t.attempts), (TaskState::Completed, 2));
    assert_eq!(report.output("t"), Some(&2));
}
