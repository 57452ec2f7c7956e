//! Failures: propagation, fail-fast, retries, timeouts, panics.

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fastexec::graph::{
    AttemptOutcome, CancelReason, Graph, RetryPolicy, Task, TaskError, TaskState,
};
use support::{cell, lattice_deps, within};

const N: usize = 10;

/// An N×N lattice where (r, c) depends on (r-1, c) and (r, c-1); (5, 5) fails.
fn lattice() -> Graph<u64> {
    let mut g = Graph::new();
    let mut tasks = Vec::new();
    for r in 0..N {
        for c in 0..N {
            let body = move |inp: fastexec::graph::Inputs<u64>| async move {
                if (r, c) == (5, 5) {
                    return Err("cell 5,5 is broken".into());
                }
                Ok(inp.values().sum::<u64>().max(1))
            };
            tasks.push(Task::new(cell(r, c), body).after(lattice_deps(r, c)));
        }
    }
    g.add_batch(tasks).unwrap();
    g
}

#[test]
fn failure_in_the_middle_of_a_lattice() {
    let report = within(60, || lattice().run_blocking());
    for r in 0..N {
        for c in 0..N {
            let t = report.task(&cell(r, c)).unwrap();
            let expected = match (r, c) {
                (5, 5) => TaskState::Failed,
                _ if r >= 5 && c >= 5 => TaskState::UpstreamFailed,
                _ => TaskState::Completed,
            };
            assert_eq!(t.state, expected, "{r},{c}\n{report}");
            match expected {
                TaskState::UpstreamFailed => {
                    assert!(
                        matches!(&t.error, Some(TaskError::UpstreamFailed(root)) if root.as_str() == "5,5")
                    );
                    assert_eq!(t.attempts, 0);
                    assert_eq!(t.start, None);
                }
                TaskState::Failed => {
                    assert_eq!(t.error.as_ref().unwrap().to_string(), "cell 5,5 is broken");
                }
                _ => assert!(t.error.is_none()),
            }
        }
    }
    // Independent branches went on: the corner (9, 4) counts lattice paths.
    assert_eq!(report.output("9,4"), Some(&715)); // C(13, 4)
    assert_eq!(report.count(TaskState::UpstreamFailed), 24);
}

/// Sends on a channel when dropped: proves a cancelled task's future is gone.
struct DropSignal(std::sync::mpsc::Sender<()>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

#[test]
fn fail_fast_cancels_the_rest() {
    let started = support::Gate::new();
    let (dropped_tx, dropped) = std::sync::mpsc::channel();
    let dropped_tx = std::sync::Mutex::new(dropped_tx);
    let mut g = Graph::<()>::new();
    g.fail_fast(true);
    let hold_started = started.clone();
    g.add(Task::new("hold", move |_| {
        let signal = DropSignal(dropped_tx.lock().unwrap().clone());
        hold_started.open();
        async move {
            let _signal = signal;
            futures::future::pending::<()>().await;
            Ok(())
        }
    }))
    .unwrap();
    g.add(Task::new("after-hold", |_| async { Ok(()) }).after(["hold"]))
        .unwrap();
    g.add(Task::new("bad", move |_| {
        let started = started.clone();
        async move {
            started.wait().await; // fail only once "hold" is running
            Err("bad".into())
        }
    }))
    .unwrap();
    g.add(Task::new("bad-child", |_| async { Ok(()) }).after(["bad"]))
        .unwrap();

    // Without fail-fast this run would never end: "hold" waits forever.
    let report = within(30, move || g.run_blocking());
    let state = |id| report.task(id).unwrap().state;
    assert_eq!(state("bad"), TaskState::Failed);
    // Its dependents are upstream-failed, as without fail-fast...
    assert_eq!(state("bad-child"), TaskState::UpstreamFailed);
    // ...and the independent rest is cancelled, running or not.
    for id in ["hold", "after-hold"] {
        let t = report.task(id).unwrap();
        assert_eq!(t.state, TaskState::Cancelled, "{id}");
        assert!(
            matches!(&t.error, Some(TaskError::Cancelled(CancelReason::FailFast(f))) if f.as_str() == "bad"),
            "{id}: {:?}",
            t.error
        );
    }
    dropped
        .recv_timeout(Duration::from_secs(30))
        .expect("the cancelled running task's future was dropped");
}

#[test]
fn retries_succeed_on_the_third_attempt() {
    let calls = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&calls);
    let mut g = Graph::<u32>::new();
    let policy = RetryPolicy::attempts(5)
        .initial_backoff(Duration::from_millis(20))
        .jitter(0.0);
    g.add(
        Task::new("flaky", move |inp| {
            let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
            assert_eq!(inp.attempt(), n, "attempt number matches the call count");
            async move {
                match n {
                    1 => Err("first".into()),
                    2 => panic!("second"),
                    _ => Ok(n),
                }
            }
        })
        .retry(policy),
    )
    .unwrap();
    g.add(Task::new("after", |i| async move { Ok(i["flaky"] * 10) }).after(["flaky"]))
        .unwrap();
    let report = within(30, move || g.run_blocking());
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    let t = report.task("flaky").unwrap();
    assert_eq!((t.state, t.attempts), (TaskState::Completed, 3));
    assert_eq!(report.output("after"), Some(&30));
    let outcomes: Vec<_> = report
        .attempts()
        .iter()
        .filter(|a| a.task.as_str() == "flaky")
        .map(|a| a.outcome)
        .collect();
    assert_eq!(
        outcomes,
        [
            AttemptOutcome::Failed,
            AttemptOutcome::Panicked,
            AttemptOutcome::Completed
        ]
    );
    // Backoff without jitter: 20 ms, then 40 ms between attempts.
    let a = report.attempts();
    assert!(a[1].start - a[0].end.unwrap() >= Duration::from_millis(20));
    assert!(a[2].start - a[1].end.unwrap() >= Duration::from_millis(40));
}

#[test]
fn retries_exhausted_keep_the_last_error() {
    let calls = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&calls);
    let mut g = Graph::<()>::new();
    g.add(
        Task::new("doomed", move |_| {
            let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
            async move { Err(format!("failure #{n}").into()) }
        })
        .retry(RetryPolicy::attempts(3).initial_backoff(Duration::from_millis(1))),
    )
    .unwrap();
    let report = within(30, move || g.run_blocking());
    let t = report.task("doomed").unwrap();
    assert_eq!((t.state, t.attempts), (TaskState::Failed, 3));
    assert_eq!(t.error.as_ref().unwrap().to_string(), "failure #3");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[test]
fn timeout_fails_a_hung_attempt_and_a_retry_can_recover() {
    let mut g = Graph::<&'static str>::new();
    g.add(
        Task::new("hangs", |_| async {
            futures::future::pending::<()>().await;
            Ok("never")
        })
        .timeout(Duration::from_millis(30)),
    )
    .unwrap();
    g.add(
        Task::new("slow-then-fast", |inp| async move {
            if inp.attempt() == 1 {
                futures::future::pending::<()>().await;
            }
            Ok("second attempt")
        })
        .timeout(Duration::from_millis(30))
        .retries(1),
    )
    .unwrap();
    g.add(Task::new("after-hang", |_| async { Ok("unreachable") }).after(["hangs"]))
        .unwrap();
    let report = within(30, move || g.run_blocking());

    let hung = report.task("hangs").unwrap();
    assert_eq!(hung.state, TaskState::Failed);
    assert!(matches!(hung.error, Some(TaskError::TimedOut(d)) if d == Duration::from_millis(30)));
    assert!(hung.duration().unwrap() >= Duration::from_millis(30));
    assert_eq!(
        report.task("after-hang").unwrap().state,
        TaskState::UpstreamFailed
    );

    let recovered = report.task("slow-then-fast").unwrap();
    assert_eq!(
        (recovered.state, recovered.attempts),
        (TaskState::Completed, 2)
    );
    assert_eq!(report.output("slow-then-fast"), Some(&"second attempt"));
    assert_eq!(
        report
            .attempts()
            .iter()
            .filter(|a| a.outcome == AttemptOutcome::TimedOut)
            .count(),
        2
    );
}

#[test]
fn a_panicking_body_fails_only_its_task() {
    let mut g = Graph::<u8>::new();
    g.add(Task::new("boom", |_| async { panic!("kaboom") }))
        .unwrap();
    g.add(Task::new("fine", |_| async { Ok(1) })).unwrap();
    let report = within(30, move || g.run_blocking());
    let boom = report.task("boom").unwrap();
    assert_eq!(boom.state, TaskState::Failed);
    assert!(matches!(&boom.error, Some(TaskError::Panicked(m)) if m == "kaboom"));
    assert_eq!(report.output("fine"), Some(&1));
}
