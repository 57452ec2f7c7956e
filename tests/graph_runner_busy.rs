//! A runner inside a long sync body is busy: a task made ready meanwhile by
//! something other than a runner (an async attempt ending on its own task,
//! a task added, a resume) must get a runner of its own while a worker is
//! free, not wait for that body to return. So must a node made ready by a
//! runner's record when that runner then goes on polling the rest of its
//! batch (after a failure stopped it) rather than taking ready nodes.
//! Before, every runner alive counted as about to take a ready node.

mod support;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use fastexec::graph::{Graph, Task, TaskState};
use support::{executor, within, Gate};

/// How long `long` waits for `after` before giving up: only a guard
/// against a hang, far longer than the test needs.
const GUARD: Duration = Duration::from_secs(20);

/// On two workers: `early` (async) opens `early_polled` and waits for
/// `long_started`, so it goes on in a task of its own and its runner
/// leaves; `long` (sync) waits for `early_polled`, has `long_started`
/// opened, then blocks until `after` has started; `after` depends on `early`.
/// `long` can only return `Ok` if `after` got a runner of its own.
#[test]
fn a_task_made_ready_while_the_only_runner_is_busy_gets_a_runner() {
    if !support::has_two_cores() {
        return;
    }
    let report = within(60, || {
        let ex = executor(2);
        let (early_polled, long_started) = (Gate::new(), Gate::new());
        let (after_tx, after_rx) = mpsc::channel::<()>();
        let after_rx = std::sync::Mutex::new(after_rx);
        let mut g = Graph::<u32>::new();
        let (polled, opened) = (early_polled.clone(), long_started.clone());
        g.add(Task::sync("long", move |_| {
            polled.wait_blocking();
            // From a thread of its own, so that `early`'s driver runs on
            // the other worker at once: woken from this body, it would
            // first wait in this worker's LIFO slot for the watch
            // (`scheduling_lifo_long_poll.rs`), which this test is not
            // about.
            let opened = opened.clone();
            std::thread::spawn(move || opened.open());
            match after_rx.lock().unwrap().recv_timeout(GUARD) {
                Ok(()) => Ok(1),
                Err(e) => Err(format!("`after` did not start: {e}").into()),
            }
        }))
        .unwrap();
        g.add(Task::new("early", move |_| {
            let (polled, started) = (early_polled.clone(), long_started.clone());
            async move {
                polled.open();
                started.wait().await;
                Ok(2)
            }
        }))
        .unwrap();
        g.add(
            Task::sync("after", move |_| {
                let _ = after_tx.send(());
                Ok(3)
            })
            .after(["early"]),
        )
        .unwrap();
        ex.block_on(g.run())
    });
    for id in ["long", "early", "after"] {
        assert_eq!(
            report.task(id).map(|t| t.state),
            Some(TaskState::Completed),
            "{id}: {:?}",
            report
                .task(id)
                .and_then(|t| t.error.as_ref().map(|e| e.to_string()))
        );
    }
}

/// Two workers. `root` makes six tasks ready at once; the runner that ran
/// it takes the first three (`x`, `fail`, `long`) as one batch, and a
/// second runner takes `p`, `q1`, `q2` one by one and leaves. `fail` waits
/// until `q2` has completed (so that the second runner has left: it
/// recorded `q2` and found nothing ready under the same lock), then fails.
/// The batch stops at the failure with `long` still begun; the runner
/// records `x`, which makes `after` ready, and then polls `long`, which
/// waits for `after`.
#[test]
fn a_node_made_ready_before_the_rest_of_a_batch_gets_a_runner() {
    if !support::has_two_cores() {
        return;
    }
    let report = within(60, || {
        let ex = executor(2);
        let (after_tx, after_rx) = mpsc::channel::<()>();
        let after_rx = std::sync::Mutex::new(after_rx);
        let mut g = Graph::<u32>::new();
        g.add(Task::sync("root", |_| Ok(0))).unwrap();
        g.add(Task::sync("x", |_| Ok(1)).after(["root"])).unwrap();
        g.add(
            Task::sync("fail", |inp| {
                let until = Instant::now() + GUARD;
                while inp.run().state("q2") != Some(TaskState::Completed) {
                    assert!(Instant::now() < until, "q2 never completed");
                    std::thread::yield_now();
                }
                Err("fails on purpose".into())
            })
            .after(["root"]),
        )
        .unwrap();
        g.add(
            Task::sync("long", move |_| {
                match after_rx.lock().unwrap().recv_timeout(GUARD) {
                    Ok(()) => Ok(3),
                    Err(e) => Err(format!("`after` did not start: {e}").into()),
                }
            })
            .after(["root"]),
        )
        .unwrap();
        for id in ["p", "q1", "q2"] {
            g.add(Task::sync(id, |_| Ok(4)).after(["root"])).unwrap();
        }
        g.add(
            Task::sync("after", move |_| {
                let _ = after_tx.send(());
                Ok(5)
            })
            .after(["x"]),
        )
        .unwrap();
        ex.block_on(g.run())
    });
    assert_eq!(
        report.task("fail").map(|t| t.state),
        Some(TaskState::Failed)
    );
    for id in ["x", "long", "after", "p", "q1", "q2"] {
        assert_eq!(
            report.task(id).map(|t| t.state),
            Some(TaskState::Completed),
            "{id}: {:?}",
            report
                .task(id)
                .and_then(|t| t.error.as_ref().map(|e| e.to_string()))
        );
    }
}
