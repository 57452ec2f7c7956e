//! A graph task's body that panics with a payload (`std::panic::panic_any`)
//! whose own destructor panics. The body's panic is caught and fails its
//! task (`TaskError::Panicked`); before the fix, the payload was dropped
//! after that, outside any `catch_unwind`, so its destructor's panic
//! unwound out of the run's own task (the runner that called a body, the
//! driver that polled an attempt that went asynchronous), which cancelled
//! the whole run, every other task with it, as though a task group the run
//! was started in had been cancelled. Now that second panic is caught too
//! (the panic hook reports it) and fails nothing more than the first.

mod support;

use std::panic::panic_any;

use fastexec::graph::{BoxError, Graph, Task, TaskError, TaskState};
use support::{within, DropCounter, DropGuard, PanicOnDrop};

/// Panics with a [`PanicOnDrop`] counted by `guard`.
fn fail(guard: DropGuard) -> Result<u32, BoxError> {
    panic_any(PanicOnDrop::new(guard))
}

/// A graph with a task `bad` whose body panics with a [`PanicOnDrop`] (at
/// once, a sync body, called by a runner; or after a first `Pending`, an
/// async one, carried on by a driver), a dependent of it, and tasks of
/// their own before and after it.
fn graph(drops: &DropCounter, after_pending: bool) -> Graph<u32> {
    let mut g = Graph::<u32>::new();
    g.add(Task::sync("first", |_| Ok(1))).unwrap();
    let drops = drops.clone();
    let bad = if after_pending {
        Task::new("bad", move |_| {
            let guard = drops.guard();
            async move {
                fastexec::yield_now().await;
                fail(guard)
            }
        })
    } else {
        Task::sync("bad", move |_| fail(drops.guard()))
    };
    g.add(bad.after(["first"])).unwrap();
    g.add(Task::sync("dependent", |_| Ok(2)).after(["bad"]))
        .unwrap();
    g.add(Task::sync("apart", |_| Ok(3)).after(["first"]))
        .unwrap();
    g.add(Task::sync("last", |_| Ok(4)).after(["apart"]))
        .unwrap();
    g
}

fn check(after_pending: bool) {
    let drops = DropCounter::new();
    let g = graph(&drops, after_pending);
    let report = within(10, move || fastexec::block_on(g.run()));
    assert_eq!(drops.count(), 1, "the payload was dropped, once");
    let bad = report.task("bad").unwrap();
    assert_eq!(bad.state, TaskState::Failed, "{report}");
    assert!(
        matches!(bad.error, Some(TaskError::Panicked(_))),
        "{report}"
    );
    let dependent = report.task("dependent").unwrap();
    assert!(
        matches!(&dependent.error, Some(TaskError::UpstreamFailed(id)) if id.as_str() == "bad"),
        "{report}"
    );
    for id in ["first", "apart", "last"] {
        assert_eq!(
            report.task(id).unwrap().state,
            TaskState::Completed,
            "{id}: {report}"
        );
    }
}

#[test]
fn a_sync_body_panicking_with_such_a_payload_fails_only_its_task() {
    check(false);
}

#[test]
fn an_async_body_panicking_with_such_a_payload_fails_only_its_task() {
    check(true);
}
