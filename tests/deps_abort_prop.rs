//! Property test of completions under aborts: random DAGs built with
//! `spawn_after` (on 1, 2 and 3 workers), whose tasks wait a little (not at
//! all, yields, a timer) and sometimes panic, while some of their
//! completions are aborted at random moments: right after the spawn, from
//! another task after a pause, or from a plain thread. Whatever wins each
//! race (an abort and a task's end race through "the first finisher
//! wins"), the outcomes must be consistent:
//!
//! * a task starts at most once, only after every dependency succeeded and
//!   ended, and never after its own completion failed;
//! * `Ok` means its body ran to the end and gave its output; `Panicked`
//!   that it panicked; `Cancelled` only for an aborted task;
//!   `UpstreamFailed` names one of its dependencies whose completion
//!   failed, with the root cause (a panic or a cancellation) as cause, and
//!   then the task never started;
//! * a task that was not aborted ends `Ok` or `Panicked` if its
//!   dependencies succeeded, `UpstreamFailed` otherwise;
//! * task 0 waits for a gate that opens only after every task was spawned,
//!   so a task aborted right after its spawn that depends on task 0
//!   (directly or not) cannot have started: it never runs and ends
//!   `Cancelled` (or `UpstreamFailed`, if another dependency failed first);
//! * some tasks, once started, wait until every abort has been made: such
//!   a task that was aborted never reaches its end, and ends `Cancelled`
//!   (or `UpstreamFailed` if it never started);
//! * `block_on` returns only once every task has an outcome.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use fastexec::deps::CompletionError;
use fastexec::task::Builder;
use fastexec::Completion;
use proptest::prelude::*;
use support::pause::{pause, wait_out, Pause};

/// Who aborts a task's completion, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Abort {
    Never,
    /// The spawning code, right after `spawn_after` returned.
    AtSpawn,
    /// A task spawned for it, after its pause.
    FromTask(Pause),
    /// A plain thread started for it.
    FromThread,
}

#[derive(Debug, Clone)]
struct Node {
    deps: Vec<usize>,
    panics: bool,
    pause: Pause,
    abort: Abort,
    /// Once started, waits until every abort has been made.
    held: bool,
}

fn abort() -> impl Strategy<Value = Abort> {
    prop_oneof![
        6 => Just(Abort::Never),
        1 => Just(Abort::AtSpawn),
        2 => pause().prop_map(Abort::FromTask),
        1 => Just(Abort::FromThread),
    ]
}

fn dag() -> impl Strategy<Value = Vec<Node>> {
    (1usize..30).prop_flat_map(|n| {
        (0..n)
            .map(|i| {
                (
                    proptest::sample::subsequence((0..i).collect::<Vec<_>>(), 0..=i.min(3)),
                    proptest::bool::weighted(0.1),
                    pause(),
                    abort(),
                    proptest::bool::weighted(0.2),
                )
                    .prop_map(|(deps, panics, pause, abort, held)| Node {
                        deps,
                        panics,
                        pause,
                        abort,
                        held,
                    })
            })
            .collect::<Vec<_>>()
            .prop_map(|mut nodes| {
                // Task 0 is the gate: it neither panics nor is aborted.
                nodes[0].panics = false;
                nodes[0].abort = Abort::Never;
                nodes
            })
    })
}

/// Which tasks depend on task 0, directly or not.
fn gated(nodes: &[Node]) -> Vec<bool> {
    let mut gated = vec![false; nodes.len()];
    for (i, node) in nodes.iter().enumerate().skip(1) {
        gated[i] = node.deps.iter().any(|&d| d == 0 || gated[d]);
    }
    gated
}

/// A task's body as it ran: how often it started and ended, and the
/// logical times of its start and end.
#[derive(Default, Clone, Copy, Debug)]
struct Entry {
    starts: u32,
    ends: u32,
    start: u64,
    end: u64,
}

type Outcome = Result<Arc<usize>, CompletionError>;

fn run(nodes: &[Node], threads: usize) -> (Vec<Outcome>, Vec<Entry>) {
    let n = nodes.len();
    let clock = Arc::new(AtomicU64::new(1));
    let log = Arc::new(Mutex::new(vec![Entry::default(); n]));
    let executor = support::shared_executor(threads);
    let (nodes, run_log) = (nodes.to_vec(), Arc::clone(&log));
    let (gate, aborted) = (support::Gate::new(), support::Gate::new());
    let outcomes = support::with_timeout(move || {
        executor.block_on(async move {
            let mut tasks: Vec<Completion<usize>> = Vec::with_capacity(n);
            let mut aborters = Vec::new();
            let mut threads = Vec::new();
            for (i, node) in nodes.iter().enumerate() {
                let deps: Vec<_> = node.deps.iter().map(|&d| tasks[d].clone()).collect();
                let task = Builder::new()
                    .name(i.to_string())
                    .spawn_after(deps, body(i, node, &clock, &run_log, [&gate, &aborted]));
                match node.abort {
                    Abort::Never => {}
                    Abort::AtSpawn => task.abort(),
                    Abort::FromTask(pause) => {
                        let task = task.clone();
                        aborters.push(fastexec::spawn(async move {
                            wait_out(pause).await;
                            task.abort();
                        }));
                    }
                    Abort::FromThread => {
                        let task = task.clone();
                        threads.push(std::thread::spawn(move || task.abort()));
                    }
                }
                tasks.push(task);
            }
            gate.open();
            for aborter in aborters {
                aborter.await.expect("an aborting task succeeds");
            }
            for thread in threads {
                thread.join().expect("an aborting thread succeeds");
            }
            aborted.open();
            let mut outcomes = Vec::with_capacity(n);
            for task in tasks {
                outcomes.push(task.await);
            }
            outcomes
        })
    });
    let log = log.lock().unwrap().clone();
    (outcomes, log)
}

/// The body of task `i`: records its start, waits its pause (task 0 also
/// for every spawn, a held task for every abort), records its end, then
/// panics or gives `i`.
fn body(
    i: usize,
    node: &Node,
    clock: &Arc<AtomicU64>,
    log: &Arc<Mutex<Vec<Entry>>>,
    [spawned, aborted]: [&support::Gate; 2],
) -> impl FnOnce(Vec<Arc<usize>>) -> std::pin::Pin<Box<dyn std::future::Future<Output = usize> + Send>>
       + Send
       + 'static {
    let (clock, log, pause, panics) = (Arc::clone(clock), Arc::clone(log), node.pause, node.panics);
    let gate = (i == 0).then(|| spawned.clone());
    let held = node.held.then(|| aborted.clone());
    move |_inputs| {
        Box::pin(async move {
            {
                let entry = &mut log.lock().unwrap()[i];
                entry.starts += 1;
                entry.start = clock.fetch_add(1, Ordering::SeqCst);
            }
            if let Some(gate) = gate {
                gate.wait().await;
            }
            if let Some(held) = held {
                held.wait().await;
            }
            wait_out(pause).await;
            {
                let entry = &mut log.lock().unwrap()[i];
                entry.ends += 1;
                entry.end = clock.fetch_add(1, Ordering::SeqCst);
            }
            if panics {
                panic!("task {i} fails");
            }
            i
        })
    }
}

fn check(nodes: &[Node], threads: usize) -> Result<(), TestCaseError> {
    let (outcomes, log) = run(nodes, threads);
    let gated = gated(nodes);
    for (i, node) in nodes.iter().enumerate() {
        if node.held && node.abort != Abort::Never {
            let cancelled = match &outcomes[i] {
                Err(CompletionError::Cancelled { .. }) => true,
                Err(CompletionError::UpstreamFailed { .. }) => log[i].starts == 0,
                _ => false,
            };
            prop_assert!(
                log[i].ends == 0 && cancelled,
                "held task {} finished though aborted: ended {} times, {:?}",
                i,
                log[i].ends,
                outcomes[i].as_ref().map(|v| **v)
            );
        }
        if gated[i] && node.abort == Abort::AtSpawn {
            let cancelled_or_upstream = matches!(
                outcomes[i],
                Err(CompletionError::Cancelled { .. } | CompletionError::UpstreamFailed { .. })
            );
            prop_assert!(
                log[i].starts == 0 && cancelled_or_upstream,
                "task {} aborted before it could start: started {} times, {:?}",
                i,
                log[i].starts,
                outcomes[i].as_ref().map(|v| **v)
            );
        }
        let (entry, outcome) = (log[i], &outcomes[i]);
        prop_assert!(
            entry.starts <= 1,
            "task {} started {} times",
            i,
            entry.starts
        );
        let deps_ok = node.deps.iter().all(|&d| outcomes[d].is_ok());
        if entry.starts == 1 {
            prop_assert!(deps_ok, "task {} started though a dependency failed", i);
            for &d in &node.deps {
                prop_assert!(
                    log[d].end < entry.start,
                    "task {} started before {} ended",
                    i,
                    d
                );
            }
        }
        match outcome {
            Ok(output) => {
                prop_assert_eq!(**output, i);
                prop_assert!(
                    entry.ends == 1 && !node.panics,
                    "task {} Ok without its body's end",
                    i
                );
            }
            Err(CompletionError::Panicked { .. }) => {
                prop_assert!(
                    node.panics && entry.ends == 1,
                    "task {} panicked unplanned",
                    i
                );
            }
            Err(CompletionError::Cancelled { .. }) => {
                prop_assert!(
                    node.abort != Abort::Never,
                    "task {} cancelled but never aborted",
                    i
                );
            }
            Err(CompletionError::UpstreamFailed {
                dependency, cause, ..
            }) => {
                prop_assert_eq!(
                    entry.starts,
                    0,
                    "task {} failed upstream after it started",
                    i
                );
                let d: usize = dependency.name().unwrap().parse().unwrap();
                prop_assert!(
                    node.deps.contains(&d),
                    "task {} blames {}, not a dependency",
                    i,
                    d
                );
                prop_assert!(
                    outcomes[d].is_err(),
                    "task {} blames {}, which succeeded",
                    i,
                    d
                );
                prop_assert!(
                    cause.is_panic() || cause.is_cancelled(),
                    "task {}: the cause is not the root: {}",
                    i,
                    cause
                );
            }
        }
        if node.abort == Abort::Never {
            match (deps_ok, outcome) {
                (true, Ok(_)) => {}
                (true, Err(e)) => prop_assert!(e.is_panic() && node.panics, "task {}: {}", i, e),
                (false, Err(e)) => {
                    prop_assert!(e.failed_dependency().is_some(), "task {}: {}", i, e)
                }
                (false, Ok(_)) => {
                    prop_assert!(false, "task {} succeeded after a failed dependency", i)
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn aborted_dags_stay_consistent_one_worker(nodes in dag()) {
        check(&nodes, 1)?;
    }

    #[test]
    fn aborted_dags_stay_consistent_two_workers(nodes in dag()) {
        check(&nodes, 2)?;
    }

    #[test]
    fn aborted_dags_stay_consistent_three_workers(nodes in dag()) {
        check(&nodes, 3)?;
    }
}
