//! Validation of a batch of tasks against the graph they join: duplicate ids,
//! missing dependencies and cycles, all found before anything is changed.

use std::collections::{HashMap, HashSet};

use super::{CyclePath, GraphError, TaskId};

/// Where a dependency of a batch member lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dep {
    /// A node already in the graph, by index.
    Existing(u32),
    /// Another member of the batch, by position in the batch.
    Batch(usize),
}

/// A validated batch: a topological order of its members and, per member,
/// its de-duplicated dependencies in declaration order.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) order: Vec<usize>,
    pub(crate) deps: Vec<Vec<Dep>>,
}

/// Checks a batch given as `(id, dependencies)` pairs against the ids
/// already in the graph.
pub(crate) fn validate(
    existing: &HashMap<TaskId, u32>,
    batch: &[(&TaskId, &[TaskId])],
) -> Result<Plan, GraphError> {
    let positions = index_batch(existing, batch)?;
    let deps = resolve_deps(existing, &positions, batch)?;
    // A task added alone is in a cycle only if it depends on itself, so
    // tasks added one at a time (the common way to build big graphs) skip
    // the sort and its allocations.
    let order = if let [only] = deps.as_slice() {
        if only.contains(&Dep::Batch(0)) {
            return Err(GraphError::Cycle(CyclePath(vec![
                batch[0].0.clone(),
                batch[0].0.clone(),
            ])));
        }
        vec![0]
    } else {
        topological_order(&deps).map_err(|stuck| cycle_error(stuck, &deps, batch))?
    };
    Ok(Plan { order, deps })
}

/// Positions of the batch members by id. A batch of one, the common case of
/// adding tasks one at a time, needs no map.
enum Positions<'a> {
    One(&'a TaskId),
    Many(HashMap<&'a TaskId, usize>),
}

impl Positions<'_> {
    fn get(&self, id: &TaskId) -> Option<usize> {
        match self {
            Positions::One(only) => (*only == id).then_some(0),
            Positions::Many(map) => map.get(id).copied(),
        }
    }
}

/// Maps each batch id to its position, rejecting empty ids and ids seen
/// before.
fn index_batch<'a>(
    existing: &HashMap<TaskId, u32>,
    batch: &[(&'a TaskId, &[TaskId])],
) -> Result<Positions<'a>, GraphError> {
    if let Some(position) = batch.iter().position(|(id, _)| id.as_str().is_empty()) {
        return Err(GraphError::EmptyId { position });
    }
    if let [(id, _)] = batch {
        if existing.contains_key(*id) {
            return Err(GraphError::DuplicateId((*id).clone()));
        }
        return Ok(Positions::One(id));
    }
    let mut positions = HashMap::with_capacity(batch.len());
    for (pos, (id, _)) in batch.iter().enumerate() {
        if existing.contains_key(*id) || positions.insert(*id, pos).is_some() {
            return Err(GraphError::DuplicateId((*id).clone()));
        }
    }
    Ok(Positions::Many(positions))
}

fn resolve_deps(
    existing: &HashMap<TaskId, u32>,
    positions: &Positions<'_>,
    batch: &[(&TaskId, &[TaskId])],
) -> Result<Vec<Vec<Dep>>, GraphError> {
    batch
        .iter()
        .map(|(id, deps)| {
            let mut resolved = Vec::with_capacity(deps.len());
            for dep in unique(deps) {
                resolved.push(if let Some(pos) = positions.get(dep) {
                    Dep::Batch(pos)
                } else if let Some(&node) = existing.get(dep) {
                    Dep::Existing(node)
                } else {
                    return Err(GraphError::MissingDependency {
                        task: (*id).clone(),
                        dependency: dep.clone(),
                    });
                });
            }
            Ok(resolved)
        })
        .collect()
}

/// The ids in order, each once. Short lists (the usual case) are checked
/// pairwise, which beats hashing them.
fn unique(ids: &[TaskId]) -> Vec<&TaskId> {
    if ids.len() <= 16 {
        let mut out: Vec<&TaskId> = Vec::with_capacity(ids.len());
        for id in ids {
            if !out.contains(&id) {
                out.push(id);
            }
        }
        return out;
    }
    let mut seen = HashSet::with_capacity(ids.len());
    ids.iter().filter(|id| seen.insert(*id)).collect()
}

/// Kahn's algorithm over the edges inside the batch (existing nodes can never
/// depend on new ones, so a cycle lies wholly inside the batch). On failure
/// returns the members left with unmet in-batch dependencies.
fn topological_order(deps: &[Vec<Dep>]) -> Result<Vec<usize>, Vec<bool>> {
    let n = deps.len();
    let mut unmet = vec![0usize; n];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (member, member_deps) in deps.iter().enumerate() {
        for dep in member_deps {
            if let Dep::Batch(pos) = *dep {
                unmet[member] += 1;
                dependents[pos].push(member);
            }
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&m| unmet[m] == 0).collect();
    let mut next = 0;
    while next < order.len() {
        for &d in &dependents[order[next]] {
            unmet[d] -= 1;
            if unmet[d] == 0 {
                order.push(d);
            }
        }
        next += 1;
    }
    if order.len() == n {
        Ok(order)
    } else {
        Err(unmet.iter().map(|&u| u > 0).collect())
    }
}

/// Extracts one cycle from the stuck members: each has an unmet dependency
/// that is itself stuck, so following such dependencies must revisit a member.
fn cycle_error(stuck: Vec<bool>, deps: &[Vec<Dep>], batch: &[(&TaskId, &[TaskId])]) -> GraphError {
    let stuck_dep = |m: usize| {
        deps[m].iter().find_map(|d| match *d {
            Dep::Batch(p) if stuck[p] => Some(p),
            _ => None,
        })
    };
    let mut visited_at = HashMap::new();
    let mut walk = Vec::new();
    let mut at = stuck.iter().position(|&s| s).expect("a stuck member");
    while let std::collections::hash_map::Entry::Vacant(v) = visited_at.entry(at) {
        v.insert(walk.len());
        walk.push(at);
        at = stuck_dep(at).expect("a stuck member has a stuck dependency");
    }
    // `walk` follows "depends on" edges; reverse it to read in execution
    // order, then start at the earliest batch member for a stable message.
    let mut cycle: Vec<usize> = walk[visited_at[&at]..].iter().rev().copied().collect();
    let first = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
    cycle.rotate_left(first);
    cycle.push(cycle[0]);
    let path = cycle.iter().map(|&m| batch[m].0.clone()).collect();
    GraphError::Cycle(CyclePath(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<TaskId> {
        v.iter().map(|s| TaskId::from(*s)).collect()
    }

    fn check(existing: &[&str], batch: &[(&str, &[&str])]) -> Result<Plan, GraphError> {
        let existing: HashMap<TaskId, u32> = existing
            .iter()
            .enumerate()
            .map(|(i, s)| (TaskId::from(*s), i as u32))
            .collect();
        let owned: Vec<(TaskId, Vec<TaskId>)> = batch
            .iter()
            .map(|(id, d)| (TaskId::from(*id), ids(d)))
            .collect();
        let borrowed: Vec<(&TaskId, &[TaskId])> =
            owned.iter().map(|(id, d)| (id, d.as_slice())).collect();
        validate(&existing, &borrowed)
    }

    #[test]
    fn orders_a_batch_given_in_any_order() {
        let plan = check(&["x"], &[("c", &["b", "x"]), ("b", &["a"]), ("a", &[])]).unwrap();
        assert_eq!(plan.order, vec![2, 1, 0]);
        assert_eq!(plan.deps[0], vec![Dep::Batch(1), Dep::Existing(0)]);
    }

    #[test]
    fn duplicate_dependencies_count_once() {
        let plan = check(&["x"], &[("a", &["x", "x"])]).unwrap();
        assert_eq!(plan.deps[0], vec![Dep::Existing(0)]);
        // Long lists take the hashing path.
        let many: Vec<String> = (0..40).map(|i| format!("d{}", i % 20)).collect();
        let existing: Vec<&str> = many[..20].iter().map(String::as_str).collect();
        let deps: Vec<&str> = many.iter().map(String::as_str).collect();
        let plan = check(&existing, &[("a", &deps)]).unwrap();
        assert_eq!(plan.deps[0], (0..20).map(Dep::Existing).collect::<Vec<_>>());
    }

    #[test]
    fn rejects_duplicates_in_graph_and_batch() {
        let e = check(&["a"], &[("a", &[])]).unwrap_err();
        assert!(
            matches!(e, GraphError::DuplicateId(ref id) if id.as_str() == "a"),
            "{e}"
        );
        let e = check(&[], &[("b", &[]), ("b", &[])]).unwrap_err();
        assert_eq!(e.to_string(), "duplicate task id `b`");
    }

    #[test]
    fn rejects_missing_dependency_naming_both() {
        let e = check(&["a"], &[("b", &["a", "zz"])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "task `b` depends on `zz`, which does not exist"
        );
    }

    #[test]
    fn reports_the_cycle_path_in_execution_order() {
        // a runs before b, b before c, c before a.
        let e = check(&[], &[("a", &["c"]), ("b", &["a"]), ("c", &["b"])]).unwrap_err();
        assert_eq!(e.to_string(), "cycle: a -> b -> c -> a");
    }

    #[test]
    fn a_task_added_alone_may_not_depend_on_itself() {
        let e = check(&["x"], &[("s", &["x", "s"])]).unwrap_err();
        assert_eq!(e.to_string(), "cycle: s -> s");
    }

    #[test]
    fn reports_a_self_loop_and_ignores_acyclic_parts() {
        let e = check(&[], &[("ok", &[]), ("s", &["ok", "s"])]).unwrap_err();
        assert_eq!(e.to_string(), "cycle: s -> s");
    }

    #[test]
    fn cycle_behind_a_tail_names_only_the_cycle() {
        // t depends on the cycle p <-> q but is not part of it.
        let e = check(&[], &[("t", &["p"]), ("p", &["q"]), ("q", &["p"])]).unwrap_err();
        assert_eq!(e.to_string(), "cycle: p -> q -> p");
    }
}
