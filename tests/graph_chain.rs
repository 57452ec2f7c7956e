//! A million-task chain: runs in order, and a failure at its head reaches its
//! tail without recursion.

mod support;

use fastexec::graph::{Graph, Task, TaskError, TaskState};
use support::within;

const LEN: u64 = 1_000_000;

fn chain(fail_head: bool) -> Graph<u64> {
    let mut g = Graph::new();
    g.add(Task::new("0", move |_| async move {
        if fail_head {
            Err("head failed".into())
        } else {
            Ok(0)
        }
    }))
    .unwrap();
    for i in 1..LEN {
        let t = Task::new(i.to_string(), |inp| async move { Ok(inp[0] + 1) });
        g.add(t.after([(i - 1).to_string()])).unwrap();
    }
    g
}

#[test]
fn million_task_chain_runs_to_the_end() {
    let report = within(600, || chain(false).run_blocking());
    assert_eq!(report.output(&(LEN - 1).to_string()), Some(&(LEN - 1)));
    assert_eq!(report.count(TaskState::Completed), LEN as usize);
    assert_eq!(report.critical_path().len(), LEN as usize);
}

#[test]
fn failure_at_the_head_of_a_million_task_chain() {
    let report = within(600, || chain(true).run_blocking());
    assert_eq!(report.task("0").unwrap().state, TaskState::Failed);
    assert_eq!(report.count(TaskState::UpstreamFailed), LEN as usize - 1);
    let tail = report.task(&(LEN - 1).to_string()).unwrap();
    assert!(matches!(&tail.error, Some(TaskError::UpstreamFailed(root)) if root.as_str() == "0"));
}
