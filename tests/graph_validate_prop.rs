//! Property test of building a graph: a batch of random members, each
//! depending on any of them (itself included) and on tasks already in the
//! graph, with dependencies listed in any order, some twice, against an
//! oracle (a depth-first search for a cycle among the members).
//!
//! What the docs promise, checked on every case:
//!
//! * a batch with a cycle is refused with [`GraphError::Cycle`], whose path
//!   is a cycle of the batch in execution order (each task depends on the
//!   one before it), each member once and the first repeated at the end
//!   (`CyclePath`), and nothing of the batch is added (`Graph::add_batch`);
//! * a batch without one is added whole, and runs: every task's inputs are
//!   its dependencies' outputs in declaration order, an id listed twice
//!   counting once (`Task::after`), read alike by position, by id and by
//!   `iter` (`Inputs`), for sync and async bodies.

mod support;

use fastexec::graph::{Graph, GraphError, Task};
use proptest::prelude::*;

/// Tasks already in the graph before the batch.
const EXISTING: usize = 2;

/// Member `i`'s dependencies: indices below `EXISTING` are the existing
/// tasks, the others the batch's members (`EXISTING + m` is member `m`).
#[derive(Debug, Clone)]
struct Case {
    deps: Vec<Vec<usize>>,
    sync: Vec<bool>,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..8).prop_flat_map(|n| {
        let deps = proptest::collection::vec(proptest::collection::vec(0..EXISTING + n, 0..5), n);
        let sync = proptest::collection::vec(proptest::bool::ANY, n);
        // Half the batches keep only edges to earlier members: acyclic.
        (deps, sync, proptest::bool::ANY).prop_map(|(mut deps, sync, acyclic)| {
            if acyclic {
                for (m, d) in deps.iter_mut().enumerate() {
                    d.retain(|&k| k < EXISTING + m);
                }
            }
            Case { deps, sync }
        })
    })
}

/// The id of node `k` (an existing task or a member, see [`Case`]), with
/// characters the reports must escape: validation takes any non-empty id.
fn id(k: usize) -> String {
    if k < EXISTING {
        format!("old \"{k}\"")
    } else {
        format!("new\n{}", k - EXISTING)
    }
}

/// The node `id` names.
fn node(id: &str) -> usize {
    match id.strip_prefix("old \"") {
        Some(rest) => rest.trim_end_matches('"').parse().unwrap(),
        None => EXISTING + id["new\n".len()..].parse::<usize>().unwrap(),
    }
}

/// Node `k`'s output.
fn output(k: usize) -> usize {
    100 + k
}

/// `deps` without repeats, in the order of first mention.
fn distinct(deps: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for &d in deps {
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// Whether the members' dependencies have a cycle (existing tasks cannot
/// be on one).
fn cyclic(deps: &[Vec<usize>]) -> bool {
    fn visit(m: usize, deps: &[Vec<usize>], state: &mut [u8]) -> bool {
        state[m] = 1;
        for d in deps[m].iter().filter_map(|&d| d.checked_sub(EXISTING)) {
            if state[d] == 1 || (state[d] == 0 && visit(d, deps, state)) {
                return true;
            }
        }
        state[m] = 2;
        false
    }
    let mut state = vec![0u8; deps.len()];
    (0..deps.len()).any(|m| state[m] == 0 && visit(m, deps, &mut state))
}

/// What a body checks of its inputs (read alike by position, by id and by
/// `iter`) against `expected`, the distinct dependencies in declaration
/// order; `Err` says what differs.
fn check_inputs(inp: &fastexec::graph::Inputs<usize>, expected: &[usize]) -> Result<(), String> {
    let want: Vec<usize> = expected.iter().map(|&d| output(d)).collect();
    let by_position: Vec<usize> = (0..inp.len()).map(|n| inp[n]).collect();
    let by_id: Vec<Option<usize>> = expected.iter().map(|&d| inp.get(&id(d)).copied()).collect();
    let pairs: Vec<(usize, usize)> = inp.iter().map(|(d, v)| (node(d.as_str()), *v)).collect();
    let want_pairs: Vec<(usize, usize)> = expected.iter().map(|&d| (d, output(d))).collect();
    let values: Vec<usize> = inp.values().copied().collect();
    if by_position != want
        || values != want
        || pairs != want_pairs
        || by_id.iter().any(Option::is_none)
        || by_id.iter().flatten().copied().collect::<Vec<_>>() != want
    {
        return Err(format!(
            "inputs {by_position:?} / {values:?} / {pairs:?} / {by_id:?}, expected {want_pairs:?}"
        ));
    }
    Ok(())
}

fn member(m: usize, case: &Case) -> Task<usize> {
    let k = EXISTING + m;
    let expected = distinct(&case.deps[m]);
    let task = if case.sync[m] {
        Task::sync(id(k), move |inp| {
            check_inputs(inp, &expected)?;
            Ok(output(k))
        })
    } else {
        Task::new(id(k), move |inp| {
            let checked = check_inputs(&inp, &expected);
            async move {
                fastexec::yield_now().await;
                checked?;
                Ok(output(k))
            }
        })
    };
    task.after(case.deps[m].iter().map(|&d| id(d)))
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let mut g = Graph::<usize>::new();
    for k in 0..EXISTING {
        g.add(Task::sync(id(k), move |_| Ok(output(k)))).unwrap();
    }
    let batch = (0..case.deps.len()).map(|m| member(m, case));
    match g.add_batch(batch) {
        Err(GraphError::Cycle(path)) => {
            prop_assert!(cyclic(&case.deps), "refused an acyclic batch: {path}");
            prop_assert_eq!(g.len(), EXISTING, "a refused batch added tasks");
            let nodes: Vec<usize> = path.ids().iter().map(|i| node(i.as_str())).collect();
            prop_assert!(
                nodes.len() >= 2 && nodes.first() == nodes.last(),
                "{nodes:?}"
            );
            for pair in nodes.windows(2) {
                let (before, after) = (pair[0], pair[1]);
                prop_assert!(
                    after >= EXISTING && case.deps[after - EXISTING].contains(&before),
                    "{nodes:?}: {after} does not depend on {before}"
                );
            }
            let mut members = nodes[1..].to_vec();
            members.sort_unstable();
            members.dedup();
            prop_assert_eq!(
                members.len(),
                nodes.len() - 1,
                "not a simple cycle: {:?}",
                nodes
            );
        }
        Err(e) => prop_assert!(false, "unexpected error: {e}"),
        Ok(()) => {
            prop_assert!(!cyclic(&case.deps), "added a batch with a cycle");
            prop_assert_eq!(g.len(), EXISTING + case.deps.len());
            let report = support::shared_executor(2).block_on(g.run());
            prop_assert!(report.is_success(), "{report}");
            for k in 0..EXISTING + case.deps.len() {
                prop_assert_eq!(report.output(&id(k)), Some(&output(k)));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn a_batch_is_added_whole_and_runs_or_refused_with_a_true_cycle(case in case()) {
        check(&case)?;
    }
}
