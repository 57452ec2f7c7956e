//! Ties between tasks made ready at the same instant (the members of one
//! batch, or the dependents one completion releases): the module docs
//! ("Scheduling policies") and `Task::priority` break them by the smaller
//! id. The ranked ready set does (any priority other than 0, or a cap).
//! With every task at priority 0 and no caps (`Graph::new`), the ready
//! queue is a FIFO of the order the tasks were made ready in, which puts
//! such ties in insertion order, not by id: a known discrepancy, kept as
//! an ignored test until the docs or the FIFO change (found while writing
//! `graph_policy_prop`, which checks the order only with the ranked set).
//!
//! One worker: one runner, which starts the tasks in the order it takes
//! them.

mod support;

use fastexec::graph::{Graph, SchedulerConfig, Task};
use support::within;

/// The order the first attempts started in, of a graph of one worker:
/// "b" then "a" added in one batch, and "root" whose dependents "y" then
/// "x" it releases together, plus `extra` tasks.
fn order(extra: Vec<Task<()>>) -> Vec<String> {
    let mut g = Graph::<()>::with_config(SchedulerConfig::new());
    g.add_batch([Task::sync("b", |_| Ok(())), Task::sync("a", |_| Ok(()))])
        .unwrap();
    g.add(Task::sync("root", |_| Ok(()))).unwrap();
    g.add_batch([
        Task::sync("y", |_| Ok(())).after(["root"]),
        Task::sync("x", |_| Ok(())).after(["root"]),
    ])
    .unwrap();
    g.add_batch(extra).unwrap();
    let report = within(30, move || {
        support::shared_executor(1).block_on(async move { g.start().wait_all().await })
    });
    assert!(report.is_success(), "{report}");
    report
        .attempts()
        .iter()
        .map(|a| a.task.to_string())
        .filter(|id| ["a", "b", "x", "y"].contains(&id.as_str()))
        .collect()
}

#[test]
fn the_ranked_set_breaks_same_instant_ties_by_id() {
    // One task at another priority makes the ready set ranked.
    let low = Task::sync("low", |_| Ok(())).priority(-1);
    assert_eq!(order(vec![low]), ["a", "b", "x", "y"]);
}

#[test]
#[ignore = "known discrepancy: the FIFO of Graph::new keeps same-instant ties in insertion order, \
            not by id as the docs say"]
fn the_fifo_breaks_same_instant_ties_by_id() {
    assert_eq!(order(Vec::new()), ["a", "b", "x", "y"]);
}
