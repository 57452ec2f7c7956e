//! An async graph body's future is dropped as soon as its attempt is over,
//! whether it gave its result or panicked, so what it holds (a guard, a
//! channel's sender, a buffer) is released before the attempt is recorded
//! and before any later task starts.
//!
//! A runner polls each attempt's first poll inline and keeps the box of
//! the last future for the next body (see `BodyFuture`). Before the fix the
//! future itself stayed in that box until the runner called its next async
//! body or left, so a sync task the same runner ran next still saw it
//! alive: a future that is not an `async` block (here `poll_fn`, whose
//! closure is kept) held its captures past its own end.
//!
//! The future is dropped under `catch_unwind`: a destructor that panics
//! after the body panicked or ran out of time fails nothing more. Before
//! the fix, such a panic unwound out of the driver task that polled the
//! attempt, and the task was reported cancelled instead of failed.

mod support;

use std::future::{poll_fn, Future};
use std::task::Poll;
use std::time::Duration;

use fastexec::graph::{BoxError, Graph, Task, TaskError, TaskState};
use support::{within, DropCounter};

/// A body's future that holds a guard of `drops` in its closure and, on its
/// first poll, gives `1` or panics.
fn holding(drops: &DropCounter, panics: bool) -> impl Future<Output = Result<u32, BoxError>> {
    let guard = drops.guard();
    poll_fn(move |_| {
        let _held = &guard;
        if panics {
            panic!("the body panics while it holds the guard");
        }
        Poll::Ready(Ok(1))
    })
}

/// Runs `g` on one worker, so that one runner polls every first attempt in
/// the order the tasks became ready.
fn run_on_one_worker(g: Graph<u32>) -> fastexec::graph::Report<u32> {
    within(30, move || {
        let executor = fastexec::Executor::builder().threads(1).build().unwrap();
        executor.block_on(g.run())
    })
}

#[test]
fn a_finished_future_is_dropped_before_its_dependent_starts() {
    let drops = DropCounter::new();
    let mut g = Graph::<u32>::new();
    let made = drops.clone();
    g.add(Task::new("holder", move |_| holding(&made, false)))
        .unwrap();
    let seen = drops.clone();
    g.add(Task::sync("dependent", move |_| Ok(seen.count() as u32)).after(["holder"]))
        .unwrap();
    let report = run_on_one_worker(g);
    assert!(report.is_success(), "{report}");
    assert_eq!(
        report.output("dependent"),
        Some(&1),
        "the holder's future was still alive when its dependent ran"
    );
}

#[test]
fn a_panicked_future_is_dropped_before_the_next_task_starts() {
    let drops = DropCounter::new();
    let mut g = Graph::<u32>::new();
    let made = drops.clone();
    g.add(Task::new("holder", move |_| holding(&made, true)))
        .unwrap();
    // Ready at the start too, after the holder: the same runner takes both
    // and, the holder having failed, records that before it calls this one.
    let seen = drops.clone();
    g.add(Task::sync("next", move |_| Ok(seen.count() as u32)))
        .unwrap();
    let report = run_on_one_worker(g);
    let holder = report.task("holder").unwrap();
    assert_eq!(holder.state, TaskState::Failed, "{report}");
    assert!(
        matches!(holder.error, Some(TaskError::Panicked(_))),
        "{report}"
    );
    assert_eq!(
        report.output("next"),
        Some(&1),
        "the holder's future was still alive when the next task ran"
    );
}

/// How the attempt of [`drop_panics_graph`]'s task `bad` ends.
#[derive(Clone, Copy, PartialEq)]
enum End {
    /// It panics in its first poll, which a runner makes inline.
    PanicAtOnce,
    /// It panics in its second poll, which a driver task makes.
    PanicLater,
    /// It never finishes and runs out of time.
    TimeOut,
    /// It gives its output in its first poll.
    GiveAtOnce,
    /// It gives its output in its second poll, which a driver task makes.
    GiveLater,
}

/// A graph whose task `bad` returns a future that holds a value whose
/// destructor panics, and ends as `end` says; and two tasks of their own.
fn drop_panics_graph(end: End) -> Graph<u32> {
    struct PanicsOnDrop;
    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            if !std::thread::panicking() {
                panic!("the future's destructor panics");
            }
        }
    }
    let mut g = Graph::<u32>::new();
    let bad = Task::new("bad", move |_| {
        let held = PanicsOnDrop;
        let mut polls = 0;
        poll_fn(move |cx| -> Poll<Result<u32, BoxError>> {
            let _held = &held;
            polls += 1;
            match end {
                End::PanicLater | End::GiveLater if polls == 1 => {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
                End::TimeOut => Poll::Pending,
                End::GiveAtOnce | End::GiveLater => Poll::Ready(Ok(1)),
                _ => panic!("the body panics"),
            }
        })
    });
    g.add(bad.timeout(Duration::from_millis(5))).unwrap();
    g.add(Task::sync("other", |_| Ok(3))).unwrap();
    g.add(Task::sync("after", |_| Ok(2)).after(["other"]))
        .unwrap();
    g
}

fn check_drop_panics(end: End) {
    let report = run_on_one_worker(drop_panics_graph(end));
    let bad = report.task("bad").unwrap();
    assert_eq!(bad.state, TaskState::Failed, "{report}");
    match end {
        End::TimeOut => assert!(
            matches!(bad.error, Some(TaskError::TimedOut(_))),
            "{report}"
        ),
        // The output given is dropped: the destructor's panic is the
        // attempt's, as it is a spawned task's (see `Task::new`).
        End::GiveAtOnce | End::GiveLater => assert!(
            matches!(&bad.error, Some(TaskError::Panicked(msg))
                if msg == "the future's destructor panics"),
            "{report}"
        ),
        _ => assert!(
            matches!(&bad.error, Some(TaskError::Panicked(msg)) if msg == "the body panics"),
            "{report}"
        ),
    }
    assert_eq!(report.output("other"), Some(&3), "{report}");
    assert_eq!(report.output("after"), Some(&2), "{report}");
}

#[test]
fn a_future_whose_drop_panics_after_its_first_poll_panicked_fails_only_its_task() {
    check_drop_panics(End::PanicAtOnce);
}

#[test]
fn a_future_whose_drop_panics_after_a_later_poll_panicked_fails_only_its_task() {
    check_drop_panics(End::PanicLater);
}

#[test]
fn a_future_whose_drop_panics_after_it_timed_out_fails_only_its_task() {
    check_drop_panics(End::TimeOut);
}

#[test]
fn a_future_whose_drop_panics_after_it_gave_its_output_at_once_fails_only_its_task() {
    check_drop_panics(End::GiveAtOnce);
}

#[test]
fn a_future_whose_drop_panics_after_it_gave_its_output_later_fails_only_its_task() {
    check_drop_panics(End::GiveLater);
}
