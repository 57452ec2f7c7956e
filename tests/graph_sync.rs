//! Sync bodies (`Task::sync`): outputs and inputs, mixing with async
//! bodies, failures and their propagation, panics, retries, timeouts,
//! fail-fast, subflows and the report.

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fastexec::graph::{
    AttemptOutcome, CancelReason, Graph, Inputs, Report, Task, TaskError, TaskState,
};
use support::within;

const N: usize = 12;

fn cell(r: usize, c: usize) -> String {
    format!("{r},{c}")
}

/// An N×N lattice of sync bodies where (r, c) depends on (r-1, c) and
/// (r, c-1) and outputs the number of monotone paths from (0, 0) to it.
fn paths_lattice() -> Graph<u64> {
    let mut tasks = Vec::new();
    for r in 0..N {
        for c in 0..N {
            let deps = [
                (r > 0).then(|| cell(r - 1, c)),
                (c > 0).then(|| cell(r, c - 1)),
            ];
            tasks.push(
                Task::sync(cell(r, c), |inp| Ok(inp.values().sum::<u64>().max(1)))
                    .after(deps.into_iter().flatten()),
            );
        }
    }
    let mut g = Graph::new();
    g.add_batch(tasks).unwrap();
    g
}

/// The outcomes of task `id`'s attempts, in order.
fn outcomes<T>(report: &Report<T>, id: &str) -> Vec<AttemptOutcome> {
    let attempts = report.attempts().iter().filter(|a| a.task.as_str() == id);
    attempts.map(|a| a.outcome).collect()
}

fn binomial(n: u64, k: u64) -> u64 {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

#[test]
fn a_lattice_of_sync_bodies_computes_its_outputs_from_its_inputs() {
    let report = within(60, || paths_lattice().run_blocking());
    assert!(report.is_success(), "{report}");
    for r in 0..N {
        for c in 0..N {
            let expected = binomial((r + c) as u64, r as u64);
            assert_eq!(report.output(&cell(r, c)), Some(&expected), "{r},{c}");
            let t = report.task(&cell(r, c)).unwrap();
            assert_eq!(t.attempts, 1);
            assert!(t.start.is_some() && t.end.is_some());
        }
    }
}

#[test]
fn a_sync_body_reads_its_ids_attempt_and_inputs_by_id() {
    let mut g = Graph::<String>::new();
    g.add(Task::sync("a", |_| Ok("x".to_string()))).unwrap();
    g.add(Task::new("b", |_| async { Ok("y".to_string()) }))
        .unwrap();
    g.add(
        Task::sync("join", |inp| {
            assert_eq!(inp.task_id().as_str(), "join");
            assert_eq!(inp.attempt(), 1);
            assert_eq!(inp.len(), 2);
            assert_eq!(inp.get("c"), None);
            let pairs: Vec<String> = inp.iter().map(|(id, out)| format!("{id}={out}")).collect();
            Ok(format!("{}|{}|{}", pairs.join(","), &inp["b"], &inp[0]))
        })
        .after(["a", "b"]),
    )
    .unwrap();
    // An async dependent of a sync task sees its output too.
    let after = |inp: Inputs<String>| async move { Ok(inp["join"].to_uppercase()) };
    g.add(Task::new("after", after).after(["join"])).unwrap();
    let report = within(60, || g.run_blocking());
    assert_eq!(report.output("join").unwrap(), "a=x,b=y|y|x");
    assert_eq!(report.output("after").unwrap(), "A=X,B=Y|Y|X");
}

#[test]
fn a_failing_sync_body_dooms_its_dependents_and_not_the_rest() {
    let mut g = Graph::<u32>::new();
    g.add(Task::sync("bad", |_| Err("broken".into()))).unwrap();
    g.add(Task::sync("child", |inp| Ok(inp[0] + 1)).after(["bad"]))
        .unwrap();
    g.add(Task::new("grandchild", |inp| async move { Ok(inp[0] + 1) }).after(["child"]))
        .unwrap();
    g.add(Task::sync("other", |_| Ok(7))).unwrap();
    let report = within(60, || g.run_blocking());
    let bad = report.task("bad").unwrap();
    assert_eq!(bad.state, TaskState::Failed);
    assert!(matches!(&bad.error, Some(TaskError::Failed(e)) if e.to_string() == "broken"));
    for id in ["child", "grandchild"] {
        let t = report.task(id).unwrap();
        assert_eq!(t.state, TaskState::UpstreamFailed, "{id}");
        assert!(
            matches!(&t.error, Some(TaskError::UpstreamFailed(root)) if root.as_str() == "bad")
        );
        assert_eq!(t.attempts, 0);
    }
    assert_eq!(report.output("other"), Some(&7));
    assert!(!report.is_success());
}

#[test]
fn a_panicking_sync_body_fails_its_task() {
    let mut g = Graph::<u32>::new();
    g.add(Task::sync("boom", |_| panic!("sync boom"))).unwrap();
    g.add(Task::sync("fine", |_| Ok(1))).unwrap();
    let report = within(60, || g.run_blocking());
    let t = report.task("boom").unwrap();
    assert_eq!(t.state, TaskState::Failed);
    assert!(matches!(&t.error, Some(TaskError::Panicked(m)) if m == "sync boom"));
    assert_eq!(report.output("fine"), Some(&1));
}

#[test]
fn a_sync_body_is_retried_until_it_succeeds() {
    let calls = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&calls);
    let mut g = Graph::<u32>::new();
    let flaky = Task::sync("flaky", move |inp| {
        seen.fetch_add(1, Ordering::SeqCst);
        match inp.attempt() {
            1 => Err("first".into()),
            2 => panic!("second"),
            n => Ok(n),
        }
    });
    g.add(flaky.retries(2)).unwrap();
    g.add(Task::sync("next", |inp| Ok(inp["flaky"] * 10)).after(["flaky"]))
        .unwrap();
    let report = within(60, || g.run_blocking());
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(report.output("flaky"), Some(&3));
    assert_eq!(report.output("next"), Some(&30));
    assert_eq!(report.task("flaky").unwrap().attempts, 3);
    let outcomes = outcomes(&report, "flaky");
    use AttemptOutcome::{Completed, Failed, Panicked};
    assert_eq!(outcomes, [Failed, Panicked, Completed]);
}

#[test]
fn a_sync_body_out_of_retries_fails_with_its_last_error() {
    let mut g = Graph::<u32>::new();
    let attempt = |n: u32| format!("attempt {n}");
    g.add(Task::sync("never", move |inp| Err(attempt(inp.attempt()).into())).retries(1))
        .unwrap();
    let report = within(60, || g.run_blocking());
    let t = report.task("never").unwrap();
    assert_eq!((t.state, t.attempts), (TaskState::Failed, 2));
    assert!(matches!(&t.error, Some(TaskError::Failed(e)) if e.to_string() == "attempt 2"));
}

/// Busy until `d` has passed since the body began: a body that runs
/// longer than its limit, without sleeping.
fn spin_for(d: Duration) {
    let began = Instant::now();
    while began.elapsed() <= d {
        std::hint::spin_loop();
    }
}

#[test]
fn a_sync_body_returning_after_its_timeout_counts_as_timed_out_and_is_retried() {
    let limit = Duration::from_millis(2);
    let mut g = Graph::<u32>::new();
    let slow_first = Task::sync("slow-first", move |inp| {
        if inp.attempt() == 1 {
            spin_for(limit * 2);
        }
        Ok(inp.attempt())
    });
    g.add(slow_first.timeout(limit).retries(1)).unwrap();
    g.add(
        Task::sync("always-slow", move |_| {
            spin_for(limit * 2);
            Ok(0)
        })
        .timeout(limit),
    )
    .unwrap();
    g.add(Task::sync("after-slow", |_| Ok(1)).after(["always-slow"]))
        .unwrap();
    let report = within(60, || g.run_blocking());

    assert_eq!(report.output("slow-first"), Some(&2));
    let outcomes = outcomes(&report, "slow-first");
    assert_eq!(
        outcomes,
        [AttemptOutcome::TimedOut, AttemptOutcome::Completed]
    );

    let slow = report.task("always-slow").unwrap();
    assert_eq!(slow.state, TaskState::Failed);
    assert!(matches!(slow.error, Some(TaskError::TimedOut(d)) if d == limit));
    assert_eq!(slow.output, None);
    assert_eq!(
        report.task("after-slow").unwrap().state,
        TaskState::UpstreamFailed
    );
}

#[test]
fn a_sync_body_within_its_timeout_completes() {
    let mut g = Graph::<u32>::new();
    g.add(Task::sync("quick", |_| Ok(5)).timeout(Duration::from_secs(60)))
        .unwrap();
    let report = within(60, || g.run_blocking());
    assert_eq!(report.output("quick"), Some(&5));
}

#[test]
fn fail_fast_cancels_the_rest_after_a_sync_failure() {
    let never = Arc::new(fastexec::signal::Notify::new());
    let mut g = Graph::<u32>::new();
    g.fail_fast(true);
    g.add(Task::sync("bad", |_| Err("no".into()))).unwrap();
    // Waits forever unless cancelled (whether it started or not).
    g.add(Task::new("waiting", move |_| {
        let never = Arc::clone(&never);
        async move {
            never.notified().await;
            Ok(1)
        }
    }))
    .unwrap();
    let report = within(60, || g.run_blocking());
    assert_eq!(report.task("bad").unwrap().state, TaskState::Failed);
    let waiting = report.task("waiting").unwrap();
    assert_eq!(waiting.state, TaskState::Cancelled);
    assert!(matches!(
        &waiting.error,
        Some(TaskError::Cancelled(CancelReason::FailFast(root))) if root.as_str() == "bad"
    ));
}

#[test]
fn a_sync_body_adds_a_subflow_that_runs_after_it() {
    let mut g = Graph::<u32>::new();
    g.add(Task::sync("parent", |inp| {
        for n in 1..=3u32 {
            // Children may be sync or async.
            inp.add_task(Task::sync(format!("child-{n}"), move |_| Ok(n)))?;
        }
        let join = Task::new("join", |inp| async move { Ok(inp.values().sum()) });
        inp.add_task(join.after(["parent", "child-1", "child-2", "child-3"]))?;
        Ok(100)
    }))
    .unwrap();
    let report = within(60, || g.run_blocking());
    assert!(report.is_success(), "{report}");
    assert_eq!(report.tasks().len(), 5);
    assert_eq!(report.output("join"), Some(&106));
    let parent_end = report.task("parent").unwrap().end.unwrap();
    assert!(report.task("join").unwrap().start.unwrap() >= parent_end);
}

#[test]
fn many_sync_tasks_run_once_each_on_several_workers() {
    let ran = Arc::new(AtomicU32::new(0));
    let mut g = Graph::<()>::new();
    for i in 0..5_000u32 {
        let ran = Arc::clone(&ran);
        g.add(Task::sync(i.to_string(), move |_| {
            ran.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }))
        .unwrap();
    }
    let ex = support::executor(2);
    let report = within(60, move || ex.block_on(g.run()));
    assert_eq!(ran.load(Ordering::Relaxed), 5_000);
    assert_eq!(report.count(TaskState::Completed), 5_000);
}
