//! Property test over random DAGs built with `spawn_after`: every task that
//! runs does so once, after all its dependencies ended, with their outputs
//! in order; a task with a failed dependency never runs and names a failed
//! dependency; the others succeed, or panic when told to.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use fastexec::deps::CompletionError;
use fastexec::task::Builder;
use fastexec::{Completion, Executor};
use proptest::prelude::*;

/// A random DAG: node i depends on a subset of 0..i; some nodes panic.
#[derive(Debug, Clone)]
struct Dag {
    deps: Vec<Vec<usize>>,
    panics: Vec<bool>,
}

fn dag() -> impl Strategy<Value = Dag> {
    (1usize..40).prop_flat_map(|n| {
        let deps = (0..n)
            .map(|i| proptest::sample::subsequence((0..i).collect::<Vec<_>>(), 0..=i.min(4)))
            .collect::<Vec<_>>();
        let panics = proptest::collection::vec(proptest::bool::weighted(0.15), n);
        (deps, panics).prop_map(|(deps, panics)| Dag { deps, panics })
    })
}

/// One task's record: how often it started, and the logical times of its
/// (last) start and end.
#[derive(Default, Clone, Copy)]
struct Entry {
    runs: u32,
    start: u64,
    end: u64,
}

fn executor() -> &'static Executor {
    static EXECUTOR: OnceLock<Executor> = OnceLock::new();
    EXECUTOR.get_or_init(|| support::executor(2))
}

type Outcomes = Vec<Result<Arc<usize>, CompletionError>>;

fn run(dag: &Dag) -> (Outcomes, Vec<Entry>) {
    let n = dag.deps.len();
    let clock = Arc::new(AtomicU64::new(1));
    let log = Arc::new(Mutex::new(vec![Entry::default(); n]));
    let dag2 = dag.clone();
    let (clock2, log2) = (clock.clone(), log.clone());
    let outcomes = support::with_timeout(move || {
        let ex = executor();
        ex.block_on(async move {
            let mut tasks: Vec<Completion<usize>> = Vec::with_capacity(n);
            for i in 0..n {
                let deps: Vec<_> = dag2.deps[i].iter().map(|&d| tasks[d].clone()).collect();
                let (clock, log, panics) = (clock2.clone(), log2.clone(), dag2.panics[i]);
                let expected = dag2.deps[i].clone();
                let task = Builder::new().name(i.to_string()).spawn_after(
                    deps,
                    move |inputs: Vec<Arc<usize>>| async move {
                        {
                            let entry = &mut log.lock().unwrap()[i];
                            entry.runs += 1;
                            entry.start = clock.fetch_add(1, Ordering::SeqCst);
                        }
                        let got: Vec<usize> = inputs.iter().map(|x| **x).collect();
                        assert_eq!(got, expected, "outputs out of dependency order");
                        fastexec::yield_now().await;
                        log.lock().unwrap()[i].end = clock.fetch_add(1, Ordering::SeqCst);
                        if panics {
                            panic!("task {i} fails");
                        }
                        i
                    },
                );
                tasks.push(task);
            }
            let mut outcomes = Vec::with_capacity(n);
            for task in tasks {
                outcomes.push(task.await);
            }
            outcomes
        })
    });
    let log = Arc::try_unwrap(log)
        .ok()
        .expect("tasks done")
        .into_inner()
        .unwrap();
    (outcomes, log)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_dags_respect_dependencies_and_failures(dag in dag()) {
        let (outcomes, log) = run(&dag);
        let n = dag.deps.len();
        let mut failed = vec![false; n];
        for i in 0..n {
            let upstream_failed = dag.deps[i].iter().any(|&d| failed[d]);
            failed[i] = upstream_failed || dag.panics[i];
            if upstream_failed {
                prop_assert_eq!(log[i].runs, 0, "task {} ran after a failed dependency", i);
                let err = outcomes[i].as_ref().unwrap_err();
                let dep: usize = err.failed_dependency().unwrap().name().unwrap().parse().unwrap();
                prop_assert!(dag.deps[i].contains(&dep) && failed[dep], "task {} blames {}", i, dep);
                match err {
                    CompletionError::UpstreamFailed { cause, .. } => prop_assert!(cause.is_panic()),
                    other => prop_assert!(false, "task {}: {}", i, other),
                }
                continue;
            }
            prop_assert_eq!(log[i].runs, 1, "task {} ran {} times", i, log[i].runs);
            for &d in &dag.deps[i] {
                prop_assert!(log[d].end < log[i].start, "task {} started before {} ended", i, d);
            }
            match &outcomes[i] {
                Ok(output) => prop_assert!(!dag.panics[i] && **output == i),
                Err(err) => {
                    prop_assert!(dag.panics[i] && err.is_panic(), "task {}: {}", i, err);
                    let name = i.to_string();
                    prop_assert_eq!(err.task().name(), Some(name.as_str()));
                }
            }
        }
    }
}
