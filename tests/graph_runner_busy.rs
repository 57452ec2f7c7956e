//! A runner inside a long sync body is busy: a task made ready meanwhile by
//! something other than a runner (an async attempt ending on its own task,
//! a task added, a resume) must get a runner of its own while a worker is
//! free, not wait for that body to return.

mod support;

use std::sync::mpsc;
use std::time::Duration;

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
