//! An attempt cancelled after its runner took it and before the runner
//! called its body did not run, and the report says so: its `Attempt` has
//! `ran == false` and starts and ends at the cancel, a task whose only
//! attempt it was has no start, no end and no duration (so it is on no
//! critical path), and the Chrome trace draws no slice for it. A runner
//! takes a batch of ready tasks at once and calls their bodies one after
//! the other, so this happens whenever a task is cancelled while it waits
//! in a batch (its body may still be called after the cancel, or never).
//! An attempt whose body was called before its task was cancelled counts
//! from that call.
//!
//! Before, such an attempt kept the time its runner took it as its start
//! and the cancel as its end: it claimed time it never ran, was drawn on
//! the runner's row over the attempts the runner really ran (overlapping
//! them partly), and could weigh on the critical path.
//!
//! One worker in each test, so that one runner takes every ready task in
//! one batch, in the order added.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fastexec::graph::{Attempt, AttemptOutcome, Graph, Report, Task, TaskState};
use support::within;

fn attempt<'r>(report: &'r Report<u32>, id: &str) -> &'r Attempt {
    let mut mine = report.attempts().iter().filter(|a| a.task.as_str() == id);
    let a = mine.next().unwrap_or_else(|| panic!("no attempt of {id}"));
    assert!(mine.next().is_none(), "{id} has more than one attempt");
    a
}

/// The task never started as far as the report goes.
fn assert_did_not_run(report: &Report<u32>, id: &str) {
    let t = report.task(id).unwrap();
    assert_eq!(t.state, TaskState::Cancelled, "{report}");
    assert_eq!(t.attempts, 1, "the runner took it:\n{report}");
    assert_eq!((t.start, t.end), (None, None), "{id}:\n{report}");
    assert_eq!(t.duration(), None, "{id}:\n{report}");
    let a = attempt(report, id);
    assert!(!a.ran, "{a:?}");
    assert_eq!(a.outcome, AttemptOutcome::Cancelled, "{a:?}");
    assert_eq!(Some(a.start), a.end, "it claims time: {a:?}");
    assert!(
        report.critical_path().all(|t| t.id.as_str() != id),
        "{id} on the critical path:\n{report}"
    );
    let trace = report.chrome_trace();
    assert!(
        !trace.contains(&format!("\"name\":\"{id}\",\"cat\":\"task\"")),
        "{id} drawn:\n{trace}"
    );
}

/// "b" (second of the batch) cancels "c" (third) from its body; the runner
/// then calls "c"'s body all the same, after the cancel.
#[test]
fn an_attempt_cancelled_before_its_call_did_not_run() {
    let c_called = Arc::new(AtomicBool::new(false));
    let report = within(30, {
        let c_called = Arc::clone(&c_called);
        move || {
            let ex = support::executor(1);
            let mut g = Graph::<u32>::new();
            g.add(Task::sync("a", |_| Ok(1))).unwrap();
            g.add(Task::sync("b", |inp| {
                inp.run().cancel("c").unwrap();
                assert_eq!(inp.run().state("c"), Some(TaskState::Cancelled));
                Ok(2)
            }))
            .unwrap();
            g.add(Task::sync("c", move |_| {
                c_called.store(true, Ordering::SeqCst);
                Ok(3)
            }))
            .unwrap();
            ex.block_on(g.run())
        }
    });
    assert_did_not_run(&report, "c");
    assert!(
        c_called.load(Ordering::SeqCst),
        "the scenario: a body called after its task was cancelled"
    );
    // It lies at the cancel, within "b", which cancelled it.
    let (b, c) = (attempt(&report, "b"), attempt(&report, "c"));
    assert!(b.start <= c.start && c.end <= b.end, "{b:?}\n{c:?}");
    assert_eq!(report.count(TaskState::Completed), 2, "{report}");
}

/// Fail-fast: "a" (first of the batch) fails, which cancels "b" and "c"
/// before the runner calls their bodies; it never does.
#[test]
fn attempts_a_fail_fast_failure_cancels_before_their_call_did_not_run() {
    let called = Arc::new(AtomicBool::new(false));
    let report = within(30, {
        let called = Arc::clone(&called);
        move || {
            let ex = support::executor(1);
            let mut g = Graph::<u32>::new();
            g.fail_fast(true);
            g.add(Task::sync("a", |_| Err("broken".into()))).unwrap();
            for id in ["b", "c"] {
                let called = Arc::clone(&called);
                g.add(Task::sync(id, move |_| {
                    called.store(true, Ordering::SeqCst);
                    Ok(2)
                }))
                .unwrap();
            }
            ex.block_on(g.run())
        }
    });
    assert!(!called.load(Ordering::SeqCst), "{report}");
    assert_eq!(report.task("a").unwrap().state, TaskState::Failed);
    assert_did_not_run(&report, "b");
    assert_did_not_run(&report, "c");
    // They lie at the cancel, at the end of "a", whose failure cancelled
    // them.
    let a = attempt(&report, "a");
    assert_eq!(attempt(&report, "b").start, a.end.unwrap(), "{report:?}");
    let path: Vec<&str> = report.critical_path().map(|t| t.id.as_str()).collect();
    assert_eq!(path, ["a"]);
}

/// "b" (second of the batch) cancels itself from its body: its attempt
/// ran, from its call (after "a" returned, not from when the runner took
/// the batch) to the cancel.
#[test]
fn an_attempt_cancelled_while_its_body_runs_counts_from_its_call() {
    let report = within(30, || {
        let ex = support::executor(1);
        let mut g = Graph::<u32>::new();
        g.add(Task::sync("a", |_| Ok(1))).unwrap();
        g.add(Task::sync("b", |inp| {
            inp.run().cancel("b").unwrap();
            Ok(2)
        }))
        .unwrap();
        ex.block_on(g.run())
    });
    let (a, b) = (attempt(&report, "a"), attempt(&report, "b"));
    assert!(b.ran, "{b:?}");
    assert_eq!(b.outcome, AttemptOutcome::Cancelled, "{b:?}");
    assert!(
        b.start >= a.end.unwrap(),
        "b starts inside a:\n{a:?}\n{b:?}"
    );
    let t = report.task("b").unwrap();
    assert_eq!(t.state, TaskState::Cancelled);
    assert_eq!(t.start, Some(b.start), "{report}");
    assert_eq!(t.end, b.end, "{report}");
}
