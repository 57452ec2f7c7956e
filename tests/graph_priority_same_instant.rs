//! Ties between tasks made ready at the same instant (the members of one
//! batch, or the dependents one completion releases). The ranked ready set
//! (any priority other than 0, or a cap) breaks them by the smaller id, as
//! `Task::priority` says. With every task at priority 0 and no caps
//! (`Graph::new`), the ready queue is a FIFO and keeps them in the order
//! the tasks were added, as the module docs ("Scheduling policies") say.
//! (Found while writing `graph_policy_prop`, which checks the order only
//! with the ranked set; the docs said "by id" for both until then.)
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
fn the_fifo_keeps_same_instant_ties_in_insertion_order() {
    assert_eq!(order(Vec::new()), ["b", "a", "y", "x"]);
}
