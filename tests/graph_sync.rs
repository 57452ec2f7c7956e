//! Sync bodies (`Task::sync`): outputs and inputs, mixing with async
//! bodies, failures and their propagation, panics, retries, timeouts,
//! fail-fast, cancel, pause and stop while a body runs, subflows and the
//! report.

mod support;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fastexec::graph::{
    AttemptOutcome, CancelReason, Graph, GraphError, Inputs, Report, SchedulerConfig, Task,
    TaskError, TaskState,
};
use support::{cell, lattice_deps, within, Gate};

const N: usize = 12;

/// An N×N lattice of sync bodies where (r, c) depends on (r-1, c) and
/// (r, c-1) and outputs the number of monotone paths from (0, 0) to it.
fn paths_lattice() -> Graph<u64> {
    let mut tasks = Vec::new();
    for r in 0..N {
        for c in 0..N {
            tasks.push(
                Task::sync(cell(r, c), |inp| Ok(inp.values().sum::<u64>().max(1)))
                    .after(lattice_deps(r, c)),
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
fn an_input_index_out_of_range_fails_the_task_naming_the_index() {
    let mut g = Graph::<u32>::new();
    g.add(Task::sync("a", |_| Ok(1))).unwrap();
    g.add(Task::sync("one-past", |inp| Ok(inp[1])).after(["a"]))
        .unwrap();
    g.add(Task::sync("max", |inp| Ok(inp[usize::MAX])).after(["a"]))
        .unwrap();
    let report = within(60, || g.run_blocking());
    for (id, index) in [("one-past", 1), ("max", usize::MAX)] {
        let t = report.task(id).unwrap();
        let expected = format!("task `{id}` has 1 dependency: index {index} is out of range");
        assert!(
            matches!(&t.error, Some(TaskError::Panicked(m)) if *m == expected),
            "{id}: {:?}",
            t.error
        );
    }
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
        .timeout(limit)
        // The retry runs in a driver task: judged there too.
        .retries(1),
    )
    .unwrap();
    g.add(Task::sync("after-slow", |_| Ok(1)).after(["always-slow"]))
        .unwrap();
    let report = within(60, || g.run_blocking());

    assert_eq!(report.output("slow-first"), Some(&2));
    assert_eq!(
        outcomes(&report, "slow-first"),
        [AttemptOutcome::TimedOut, AttemptOutcome::Completed]
    );

    let slow = report.task("always-slow").unwrap();
    assert_eq!(slow.state, TaskState::Failed);
    assert!(matches!(slow.error, Some(TaskError::TimedOut(d)) if d == limit));
    assert_eq!(slow.output, None);
    let timed_out = [AttemptOutcome::TimedOut; 2];
    assert_eq!(outcomes(&report, "always-slow"), timed_out);
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
    assert_failed_fast(&report, "bad", "waiting");
}

/// Task `failed` failed and, fail-fast, `cancelled` was cancelled for it.
fn assert_failed_fast<T>(report: &Report<T>, failed: &str, cancelled: &str) {
    assert_eq!(report.task(failed).unwrap().state, TaskState::Failed);
    let t = report.task(cancelled).unwrap();
    assert_eq!(t.state, TaskState::Cancelled);
    assert!(matches!(
        &t.error,
        Some(TaskError::Cancelled(CancelReason::FailFast(root))) if root.as_str() == failed
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

#[test]
fn a_panic_or_failure_leaves_nothing_of_its_inputs_to_the_next_sync_body_of_the_runner() {
    // One worker, one runner: every body borrows the same reused inputs.
    // "p" fetches its ids and panics, "e" fails; the bodies after them must
    // see their own id, attempt and dependencies, not the last ones'.
    let mut g = Graph::<String>::new();
    g.add(Task::sync("a", |_| Ok("a".into()))).unwrap();
    g.add(
        Task::sync("p", |inp| {
            assert_eq!(inp.task_id().as_str(), "p");
            panic!("p after {}", &inp["a"])
        })
        .after(["a"]),
    )
    .unwrap();
    g.add(
        Task::sync("e", |inp| Err(format!("{} failed", inp.task_id()).into()))
            .after(["a"])
            .retries(1),
    )
    .unwrap();
    let describe = |inp: &Inputs<String>| {
        let deps: Vec<String> = inp.iter().map(|(id, out)| format!("{id}={out}")).collect();
        Ok(format!(
            "{}#{}[{}]",
            inp.task_id(),
            inp.attempt(),
            deps.join(",")
        ))
    };
    g.add(Task::sync("lone", describe)).unwrap();
    g.add(Task::sync("after-a", describe).after(["a"])).unwrap();
    g.add(Task::sync("after-lone", describe).after(["lone", "a"]))
        .unwrap();
    let ex = support::executor(1);
    let report = within(60, move || ex.block_on(g.run()));
    let p = report.task("p").unwrap();
    assert!(matches!(&p.error, Some(TaskError::Panicked(m)) if m == "p after a"));
    let e = report.task("e").unwrap();
    assert_eq!(e.attempts, 2);
    assert!(matches!(&e.error, Some(TaskError::Failed(m)) if m.to_string() == "e failed"));
    assert_eq!(report.output("lone").unwrap(), "lone#1[]");
    assert_eq!(report.output("after-a").unwrap(), "after-a#1[a=a]");
    assert_eq!(
        report.output("after-lone").unwrap(),
        "after-lone#1[lone=lone#1[],a=a]"
    );
}

#[test]
fn fail_fast_stops_the_rest_of_a_batch_of_sync_bodies_from_being_called() {
    // One worker: the runner takes the fan in one batch. Its first body
    // panics; no other body of the batch may be called after that.
    let called = Arc::new(AtomicU32::new(0));
    let mut g = Graph::<u32>::new();
    g.fail_fast(true);
    g.add(Task::sync("root", |_| Ok(0))).unwrap();
    for n in 0..20u32 {
        let called = Arc::clone(&called);
        let body = move |_: &Inputs<u32>| {
            called.fetch_add(1, Ordering::SeqCst);
            if n == 0 {
                panic!("first of the batch")
            }
            Ok(n)
        };
        g.add(Task::sync(format!("t{n}"), body).after(["root"]))
            .unwrap();
    }
    let ex = support::executor(1);
    let report = within(60, move || ex.block_on(g.run()));
    assert_eq!(called.load(Ordering::SeqCst), 1, "{report}");
    assert_failed_fast(&report, "t0", "t1");
}

/// A sync task that opens `started`, then blocks its worker until
/// `release` opens, then returns `output`; counts its calls in `calls`.
fn blocking(
    id: &str,
    (started, release): (&Gate, &Gate),
    calls: &Arc<AtomicU32>,
    output: Result<u32, &'static str>,
) -> Task<u32> {
    let (started, release, calls) = (started.clone(), release.clone(), Arc::clone(calls));
    Task::sync(id, move |_| {
        calls.fetch_add(1, Ordering::SeqCst);
        started.open();
        release.wait_blocking();
        output.map_err(Into::into)
    })
}

/// A sync task after `dep` that counts its calls in `calls`.
fn counted_after(id: &str, dep: &str, calls: &Arc<AtomicU32>) -> Task<u32> {
    let calls = Arc::clone(calls);
    let body = move |_: &Inputs<u32>| {
        calls.fetch_add(1, Ordering::SeqCst);
        Ok(2)
    };
    Task::sync(id, body).after([dep])
}

/// A graph of "slow", a sync task that blocks its worker (see [`blocking`])
/// and may retry `retries` times, and "child", after it; with the gates
/// and each one's count of calls.
struct SlowAndChild {
    g: Graph<u32>,
    started: Gate,
    release: Gate,
    slow_calls: Arc<AtomicU32>,
    child_calls: Arc<AtomicU32>,
}

fn slow_and_child(
    config: SchedulerConfig,
    output: Result<u32, &'static str>,
    retries: u32,
) -> SlowAndChild {
    let (started, release) = (Gate::new(), Gate::new());
    let (slow_calls, child_calls) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let mut g = Graph::<u32>::with_config(config);
    let slow = blocking("slow", (&started, &release), &slow_calls, output);
    g.add(slow.retries(retries)).unwrap();
    g.add(counted_after("child", "slow", &child_calls)).unwrap();
    SlowAndChild {
        g,
        started,
        release,
        slow_calls,
        child_calls,
    }
}

/// Runs `steer` on an executor of four workers (one for the blocked body,
/// others for the test) and returns its result once the executor is gone:
/// every runner has then recorded what its bodies returned.
fn steer<R: Send + 'static>(steer: impl std::future::Future<Output = R> + Send + 'static) -> R {
    within(60, move || {
        let ex = support::executor(4);
        let r = ex.block_on(steer);
        drop(ex);
        r
    })
}

#[test]
fn a_cancel_while_a_sync_body_runs_ends_the_task_at_once_and_drops_its_output() {
    let SlowAndChild {
        g,
        started,
        release,
        slow_calls,
        child_calls,
    } = slow_and_child(SchedulerConfig::new(), Ok(1), 2);
    let report = steer(async move {
        let run = g.start();
        started.wait().await;
        run.cancel("slow").unwrap();
        // Ended while its body still runs: waiters need not wait for it.
        assert_eq!(run.state("slow"), Some(TaskState::Cancelled));
        assert_eq!(run.state("child"), Some(TaskState::Cancelled));
        assert!(run.is_finished(), "the run ends without the body");
        let waited = run.wait("slow").await;
        assert!(matches!(waited, Err(GraphError::TaskFailed { .. })));
        release.open();
        run.wait_all().await
    });
    let slow = report.task("slow").unwrap();
    assert_eq!((slow.state, slow.attempts), (TaskState::Cancelled, 1));
    assert!(matches!(
        slow.error,
        Some(TaskError::Cancelled(CancelReason::Requested))
    ));
    assert_eq!(report.output("slow"), None, "the late output is dropped");
    assert_eq!(slow_calls.load(Ordering::SeqCst), 1, "no retry");
    assert_eq!(child_calls.load(Ordering::SeqCst), 0);
}

#[test]
fn a_pause_while_a_sync_body_runs_lets_it_complete_within_the_pause_timeout() {
    let SlowAndChild {
        g,
        started,
        release,
        slow_calls,
        child_calls,
    } = slow_and_child(
        SchedulerConfig::new().with_pause_timeout(Duration::from_secs(30)),
        Ok(1),
        0,
    );
    let report = steer(async move {
        let run = g.start();
        started.wait().await;
        let mut pause = std::pin::pin!(run.pause("slow"));
        // The request is made in the first poll; no checkpoint can answer it.
        assert!(futures::poll!(pause.as_mut()).is_pending());
        assert_eq!(run.state("slow"), Some(TaskState::Running));
        release.open();
        // Completing answers the pause request: the task ended unpaused.
        assert!(matches!(
            pause.await,
            Err(GraphError::TaskEnded {
                state: TaskState::Completed,
                ..
            })
        ));
        run.wait_all().await
    });
    assert!(report.is_success(), "{report}");
    assert_eq!(report.output("slow"), Some(&1));
    assert_eq!(report.output("child"), Some(&2));
    assert_eq!(child_calls.load(Ordering::SeqCst), 1);
    assert_eq!(slow_calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_pause_a_sync_body_outlasts_cancels_it_and_drops_its_output() {
    let timeout = Duration::from_millis(20);
    let SlowAndChild {
        g,
        started,
        release,
        slow_calls,
        child_calls,
    } = slow_and_child(SchedulerConfig::new().with_pause_timeout(timeout), Ok(1), 0);
    let report = steer(async move {
        let run = g.start();
        started.wait().await;
        // The body is held until the pause has timed out.
        let paused = run.pause("slow").await;
        assert!(
            matches!(paused, Err(GraphError::PauseTimedOut { timeout: t, .. }) if t == timeout),
            "{paused:?}"
        );
        release.open();
        run.wait_all().await
    });
    let slow = report.task("slow").unwrap();
    assert_eq!(slow.state, TaskState::Cancelled);
    assert!(matches!(
        slow.error,
        Some(TaskError::Cancelled(CancelReason::PauseTimedOut(t))) if t == timeout
    ));
    assert_eq!(report.output("slow"), None);
    assert_eq!(child_calls.load(Ordering::SeqCst), 0);
    assert_eq!(slow_calls.load(Ordering::SeqCst), 1);
    assert_eq!(report.task("child").unwrap().state, TaskState::Cancelled);
}

#[test]
fn a_stop_while_a_sync_body_runs_lets_it_finish_without_a_retry() {
    let SlowAndChild {
        g,
        started,
        release,
        slow_calls,
        child_calls,
    } = slow_and_child(SchedulerConfig::new(), Err("late"), 3);
    let report = steer(async move {
        let run = g.start();
        started.wait().await;
        run.stop();
        assert_eq!(run.state("slow"), Some(TaskState::Running));
        assert_eq!(run.state("child"), Some(TaskState::Cancelled));
        release.open();
        run.wait_all().await
    });
    let slow = report.task("slow").unwrap();
    assert_eq!((slow.state, slow.attempts), (TaskState::Failed, 1));
    assert!(matches!(&slow.error, Some(TaskError::Failed(e)) if e.to_string() == "late"));
    assert_eq!(slow_calls.load(Ordering::SeqCst), 1);
    let child = report.task("child").unwrap();
    assert!(matches!(
        child.error,
        Some(TaskError::Cancelled(CancelReason::Stopped))
    ));
    assert_eq!(child_calls.load(Ordering::SeqCst), 0);
}

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_sync_body_cancelled_while_it_runs_is_dropped_once_it_returns_not_with_the_report() {
    let dropped = Arc::new(AtomicBool::new(false));
    let captured = DropFlag(Arc::clone(&dropped));
    let (started, release) = (Gate::new(), Gate::new());
    let (s, r) = (started.clone(), release.clone());
    let mut g = Graph::<u32>::new();
    g.add(Task::sync("slow", move |_| {
        let _captured = &captured;
        s.open();
        r.wait_blocking();
        Ok(1)
    }))
    .unwrap();
    let report = steer(async move {
        let run = g.start();
        started.wait().await;
        run.cancel("slow").unwrap();
        // The run has ended (its waiter took the retired bodies) while
        // the body still runs.
        let report = run.wait_all().await;
        release.open();
        report
    });
    assert_eq!(report.task("slow").unwrap().state, TaskState::Cancelled);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the body (and what it captured) lives no longer than its run"
    );
}
