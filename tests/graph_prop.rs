//! Property test over random DAGs: every task that runs does so after all of
//! its dependencies ended, exactly once, and every task ends in the terminal
//! state its dependencies' states call for. Bodies are async (yielding once,
//! so that attempts interleave) or sync, at random.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use fastexec::graph::{Graph, Task, TaskState};
use proptest::prelude::*;

/// A random DAG: node i depends on a subset of 0..i; some nodes fail; some
/// have a sync body.
#[derive(Debug, Clone)]
struct Dag {
    deps: Vec<Vec<usize>>,
    fails: Vec<bool>,
    sync: Vec<bool>,
}

fn dag() -> impl Strategy<Value = (Dag, Vec<usize>)> {
    (1usize..40)
        .prop_flat_map(|n| {
            let deps = (0..n)
                .map(|i| proptest::sample::subsequence((0..i).collect::<Vec<_>>(), 0..=i.min(4)))
                .collect::<Vec<_>>();
            let fails = proptest::collection::vec(proptest::bool::weighted(0.15), n);
            let sync = proptest::collection::vec(proptest::bool::ANY, n);
            let order = Just((0..n).collect::<Vec<_>>()).prop_shuffle();
            (deps, fails, sync, order)
        })
        .prop_map(|(deps, fails, sync, order)| (Dag { deps, fails, sync }, order))
}

/// Per task: how often it started, and the logical times of its start and end.
#[derive(Default)]
struct Log {
    runs: Vec<u32>,
    start: Vec<u64>,
    end: Vec<u64>,
}

fn run(dag: &Dag, order: &[usize]) -> (fastexec::graph::Report<usize>, Log) {
    let n = dag.deps.len();
    let clock = Arc::new(AtomicU64::new(1));
    let log = Arc::new(Mutex::new(Log {
        runs: vec![0; n],
        start: vec![0; n],
        end: vec![0; n],
    }));
    // One batch, members in a random order: validation must sort it out.
    let tasks = order.iter().map(|&i| {
        let (clock, log, fails) = (Arc::clone(&clock), Arc::clone(&log), dag.fails[i]);
        let began = move |log: &Mutex<Log>, clock: &AtomicU64| {
            let mut l = log.lock().unwrap();
            l.runs[i] += 1;
            l.start[i] = clock.fetch_add(1, Ordering::SeqCst);
        };
        let ended = move |log: &Mutex<Log>, clock: &AtomicU64| {
            log.lock().unwrap().end[i] = clock.fetch_add(1, Ordering::SeqCst);
            if fails {
                Err("planned failure".into())
            } else {
                Ok(i)
            }
        };
        let task = if dag.sync[i] {
            Task::sync(i.to_string(), move |_| {
                began(&log, &clock);
                ended(&log, &clock)
            })
        } else {
            Task::new(i.to_string(), move |_| {
                let (clock, log) = (Arc::clone(&clock), Arc::clone(&log));
                async move {
                    began(&log, &clock);
                    fastexec::yield_now().await;
                    ended(&log, &clock)
                }
            })
        };
        task.after(dag.deps[i].iter().map(|d| d.to_string()))
    });
    let mut g = Graph::new();
    g.add_batch(tasks).expect("a DAG validates");
    let report = support::within(60, move || g.run_blocking());
    let log = Arc::try_unwrap(log).ok().unwrap().into_inner().unwrap();
    (report, log)
}

fn expected_states(dag: &Dag) -> Vec<TaskState> {
    let mut states: Vec<TaskState> = Vec::with_capacity(dag.deps.len());
    for (i, deps) in dag.deps.iter().enumerate() {
        let doomed = deps.iter().any(|&d| states[d] != TaskState::Completed);
        states.push(match (doomed, dag.fails[i]) {
            (true, _) => TaskState::UpstreamFailed,
            (false, true) => TaskState::Failed,
            (false, false) => TaskState::Completed,
        });
    }
    states
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_dags_respect_dependencies((dag, order) in dag()) {
        let (report, log) = run(&dag, &order);
        let expected = expected_states(&dag);
        for (i, deps) in dag.deps.iter().enumerate() {
            let t = report.task(&i.to_string()).unwrap();
            prop_assert_eq!(t.state, expected[i], "task {}", i);
            let ran = matches!(t.state, TaskState::Completed | TaskState::Failed);
            prop_assert_eq!(log.runs[i], u32::from(ran), "task {} ran {} times", i, log.runs[i]);
            prop_assert_eq!(t.attempts, u32::from(ran));
            if ran {
                for &d in deps {
                    prop_assert!(log.end[d] < log.start[i], "task {} started before dep {} ended", i, d);
                }
            }
            if t.state == TaskState::Completed {
                prop_assert_eq!(report.output(&i.to_string()), Some(&i));
            }
        }
    }
}
