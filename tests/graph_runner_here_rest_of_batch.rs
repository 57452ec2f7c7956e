//! A runner that records its batch and then goes on polling the rest of
//! it (after a failure stopped the batch) does not take ready nodes next:
//! a node that record made ready must get a runner of its own while a
//! worker is free. Before, every record counted its runner as about to
//! take one, and the node waited for the rest of the batch, here a long
//! sync body that waits for it.

mod support;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use fastexec::graph::{Graph, Task, TaskState};
use support::{executor, within};

/// How long `long` waits for `after` before giving up.
const GUARD: Duration = Duration::from_secs(10);

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
