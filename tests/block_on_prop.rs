//! Property test of `block_on`'s promise over random spawn trees: it
//! returns only once every task its future spawned, transitively, has
//! finished, however the tasks were spawned (one by one, in batches, as
//! completions, from a blocking job), whatever happened to their handles
//! (awaited, dropped, detached), and however long each waited first
//! (not at all, yields, a timer), and from where they were spawned (the
//! task, a blocking job, a plain thread through the task's `Scope`). Every
//! task runs exactly once, and an awaited handle gives its task's output. A
//! `TaskGroup`'s `wait` inside the tree keeps the same promise for the
//! tasks spawned under it.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use fastexec::{Executor, TaskGroup};
use proptest::prelude::*;
use support::pause::{pause, wait_out, Pause};

/// How a parent spawns a child and what it does with the child's handle.
#[derive(Debug, Clone, Copy)]
enum Spawned {
    /// `spawn`, the handle awaited by the parent (its output counted).
    Awaited,
    /// `spawn`, the handle dropped at once.
    Dropped,
    /// `spawn`, the handle detached.
    Detached,
    /// `spawn_many` with the parent's other such children, the handles dropped.
    Batch,
    /// `detach_many` with the parent's other such children.
    DetachedBatch,
    /// `spawn_completion`, the completion dropped.
    Completion,
}

/// Where a task spawns its children from.
#[derive(Debug, Clone, Copy)]
enum Spawner {
    /// The task itself.
    Task,
    /// A `spawn_blocking` job the task starts and does not wait for (an
    /// `Awaited` child is then dropped instead: a closure cannot await).
    Blocking,
    /// A member of a new `TaskGroup` the task spawns; the task then waits
    /// for the group, and checks that the whole subtree has finished.
    Group,
    /// A plain thread, in no group, given the task's `Scope`: it spawns
    /// the children through it and sends the handles back (batches and
    /// completions are single spawns there); the task awaits the
    /// `Awaited` ones.
    Scope,
}

#[derive(Debug, Clone)]
struct Node {
    spawned: Spawned,
    pause: Pause,
    spawner: Spawner,
    children: Vec<Node>,
}

/// A node with its index in the pre-order numbering, which is where its
/// run is counted; its subtree is `index..=last`.
struct Planned {
    index: usize,
    last: usize,
    spawned: Spawned,
    pause: Pause,
    spawner: Spawner,
    children: Vec<Arc<Planned>>,
}

fn spawned() -> impl Strategy<Value = Spawned> {
    prop_oneof![
        Just(Spawned::Awaited),
        Just(Spawned::Dropped),
        Just(Spawned::Detached),
        Just(Spawned::Batch),
        Just(Spawned::DetachedBatch),
        Just(Spawned::Completion),
    ]
}

fn spawner() -> impl Strategy<Value = Spawner> {
    prop_oneof![
        6 => Just(Spawner::Task),
        1 => Just(Spawner::Blocking),
        1 => Just(Spawner::Group),
        1 => Just(Spawner::Scope),
    ]
}

/// One task of a tree as generated: its parent's index (below its own;
/// the root has none) and how it is spawned, waits and spawns.
type Generated = (usize, Spawned, Pause, Spawner);

/// Trees of 1 to 150 tasks, in two shapes: each task's parent any earlier
/// task (wide and shallow), or one of the three before it (deep: chains of
/// tasks spawning tasks).
fn tree() -> impl Strategy<Value = Node> {
    (1usize..150, any::<bool>()).prop_flat_map(|(n, deep)| {
        let tasks: Vec<_> = (0..n)
            .map(|i| {
                let lowest = if deep { i.saturating_sub(3) } else { 0 };
                (lowest..i.max(1), spawned(), pause(), spawner())
            })
            .collect();
        tasks.prop_map(|tasks| build(&tasks, 0))
    })
}

/// The tree rooted at task `index` of `tasks`.
fn build(tasks: &[Generated], index: usize) -> Node {
    let (_, spawned, pause, spawner) = tasks[index];
    let children = (index + 1..tasks.len())
        .filter(|&child| tasks[child].0 == index)
        .map(|child| build(tasks, child))
        .collect();
    Node {
        spawned,
        pause,
        spawner,
        children,
    }
}

fn plan(node: &Node, next: &mut usize) -> Arc<Planned> {
    let index = *next;
    *next += 1;
    let children = node.children.iter().map(|c| plan(c, next)).collect();
    Arc::new(Planned {
        index,
        last: *next - 1,
        spawned: node.spawned,
        pause: node.pause,
        spawner: node.spawner,
        children,
    })
}

/// What a task's output must be: one for itself plus its awaited
/// children's outputs.
fn expected_output(node: &Planned) -> usize {
    let awaits = !matches!(node.spawner, Spawner::Blocking);
    1 + node
        .children
        .iter()
        .filter(|c| awaits && matches!(c.spawned, Spawned::Awaited))
        .map(|c| expected_output(c))
        .sum::<usize>()
}

/// What the tasks of one tree record.
struct Record {
    /// How many times each task has finished.
    runs: Vec<AtomicU32>,
    /// Tasks under a `Spawner::Group` task still unfinished when its
    /// group's `wait` returned.
    early_group_waits: Mutex<Vec<usize>>,
}

impl Record {
    /// The tasks of `range` that have not finished.
    fn unfinished(&self, range: std::ops::RangeInclusive<usize>) -> Vec<usize> {
        range
            .filter(|&i| self.runs[i].load(Ordering::Relaxed) == 0)
            .collect()
    }
}

type Runs = Arc<Record>;
type Task = Pin<Box<dyn Future<Output = usize> + Send>>;

/// Spawns `children` from the current task or blocking job, each as its
/// `spawned` says, and returns the handles to await.
fn spawn_children(children: &[Arc<Planned>], runs: &Runs) -> Vec<fastexec::JoinHandle<usize>> {
    let mut awaited = Vec::new();
    let mut batch = Vec::new();
    let mut detached_batch = Vec::new();
    for child in children {
        let task = run(child.clone(), runs.clone());
        match child.spawned {
            Spawned::Awaited => awaited.push(fastexec::spawn(task)),
            Spawned::Dropped => drop(fastexec::spawn(task)),
            Spawned::Detached => fastexec::spawn(task).detach(),
            Spawned::Batch => batch.push(task),
            Spawned::DetachedBatch => detached_batch.push(task),
            Spawned::Completion => drop(fastexec::spawn_completion(task)),
        }
    }
    let mut dropped = Vec::new();
    fastexec::spawn_many(batch, &mut dropped);
    drop(dropped);
    fastexec::detach_many(detached_batch);
    awaited
}

/// Spawns `children` through `scope`, as a thread outside the executor
/// would, and returns the handles to await.
fn spawn_through(
    scope: &fastexec::Scope,
    children: &[Arc<Planned>],
    runs: &Runs,
) -> Vec<fastexec::JoinHandle<usize>> {
    let mut awaited = Vec::new();
    for child in children {
        let handle = scope.spawn(run(child.clone(), runs.clone()));
        match child.spawned {
            Spawned::Awaited => awaited.push(handle),
            Spawned::Detached | Spawned::DetachedBatch => handle.detach(),
            Spawned::Dropped | Spawned::Batch | Spawned::Completion => drop(handle),
        }
    }
    awaited
}

fn run(node: Arc<Planned>, runs: Runs) -> Task {
    Box::pin(async move {
        wait_out(node.pause).await;
        let mut output = 1;
        match node.spawner {
            Spawner::Task => {
                for handle in spawn_children(&node.children, &runs) {
                    output += handle.await.expect("an awaited child succeeds");
                }
            }
            Spawner::Blocking => {
                let (children, runs) = (node.clone(), runs.clone());
                drop(fastexec::spawn_blocking(move || {
                    // Handles of `Awaited` children are dropped here.
                    drop(spawn_children(&children.children, &runs));
                }));
            }
            Spawner::Group => {
                let group = TaskGroup::new();
                let (children, member_runs) = (node.clone(), runs.clone());
                let member = group.spawn(async move {
                    let mut sum = 0;
                    for handle in spawn_children(&children.children, &member_runs) {
                        sum += handle.await.expect("an awaited child succeeds");
                    }
                    sum
                });
                group.wait().await;
                let early = runs.unfinished(node.index + 1..=node.last);
                runs.early_group_waits.lock().unwrap().extend(early);
                output += member.await.expect("the group's member succeeds");
            }
            Spawner::Scope => {
                let scope = fastexec::Scope::current();
                let (children, relay_runs) = (node.clone(), runs.clone());
                let (send, handles) = futures::channel::oneshot::channel();
                std::thread::spawn(move || {
                    let _ = send.send(spawn_through(&scope, &children.children, &relay_runs));
                });
                for handle in handles.await.expect("the relay thread sends the handles") {
                    output += handle.await.expect("an awaited child succeeds");
                }
            }
        }
        runs.runs[node.index].fetch_add(1, Ordering::Relaxed);
        output
    })
}

/// Runs the tree under `block_on` (the given executor's, or the free
/// function's on the global executor) and checks, as soon as it returns,
/// that every task of the tree has run exactly once.
fn check(tree: &Node, executor: Option<&'static Executor>) -> Result<(), TestCaseError> {
    let mut count = 0;
    let root = plan(tree, &mut count);
    let expected = expected_output(&root);
    let runs: Runs = Arc::new(Record {
        runs: (0..count).map(|_| AtomicU32::new(0)).collect(),
        early_group_waits: Mutex::new(Vec::new()),
    });
    let (task_root, task_runs) = (root.clone(), runs.clone());
    let (output, after) = support::with_timeout(move || {
        let task = run(task_root, task_runs.clone());
        let output = match executor {
            Some(executor) => executor.block_on(task),
            None => fastexec::block_on(task),
        };
        // Read at once: a task still running would be counted late.
        let after: Vec<u32> = task_runs
            .runs
            .iter()
            .map(|r| r.load(Ordering::Relaxed))
            .collect();
        (output, after)
    });
    let unfinished: Vec<usize> = (0..count).filter(|&i| after[i] == 0).collect();
    let repeated: Vec<usize> = (0..count).filter(|&i| after[i] > 1).collect();
    prop_assert!(
        unfinished.is_empty(),
        "block_on returned before {} of {count} tasks finished, first {:?}",
        unfinished.len(),
        &unfinished[..unfinished.len().min(10)]
    );
    prop_assert!(repeated.is_empty(), "tasks {repeated:?} ran more than once");
    let early = runs.early_group_waits.lock().unwrap().clone();
    prop_assert!(
        early.is_empty(),
        "a group's wait returned before tasks {early:?} finished"
    );
    prop_assert_eq!(output, expected);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn block_on_waits_for_every_descendant_one_worker(tree in tree()) {
        check(&tree, Some(support::shared_executor(1)))?;
    }

    #[test]
    fn block_on_waits_for_every_descendant_two_workers(tree in tree()) {
        check(&tree, Some(support::shared_executor(2)))?;
    }

    #[test]
    fn block_on_waits_for_every_descendant_three_workers(tree in tree()) {
        check(&tree, Some(support::shared_executor(3)))?;
    }

    #[test]
    fn free_block_on_waits_for_every_descendant(tree in tree()) {
        check(&tree, None)?;
    }
}
