//! Hand-written counter-release DAGs, the floor a task-graph layer is measured against: every
//! node has a counter of unfinished predecessors, and the task that finishes a node's last
//! predecessor spawns it (O(out-degree) per node, no future per edge). One implementation per
//! shape, run on any [`Rt`] or on rayon.

use super::{CountDown, Rt};
use rayon::{Scope, ThreadPool};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering::AcqRel, Ordering::Relaxed};
use std::sync::Arc;

/// A DAG whose only source is node 0 and whose only sink is node `NODES - 1`, which therefore
/// runs last. Edges are computed, not stored, so the bench measures scheduling, not lookups.
pub trait DagShape: Send + Sync + 'static {
    const NODES: usize;
    /// How many predecessors node `idx` has.
    fn preds(idx: usize) -> usize;
    /// Calls `f` with each successor of node `idx`.
    fn successors(idx: usize, f: impl FnMut(usize));
}

/// Side of the lattice: node (i, j) runs after (i-1, j) and (i, j-1).
pub const SIDE: usize = 100;

/// The 100×100 lattice, row-major.
pub struct Lattice;

impl DagShape for Lattice {
    const NODES: usize = SIDE * SIDE;

    fn preds(idx: usize) -> usize {
        usize::from(idx >= SIDE) + usize::from(idx % SIDE > 0)
    }

    fn successors(idx: usize, mut f: impl FnMut(usize)) {
        if idx + SIDE < SIDE * SIDE {
            f(idx + SIDE);
        }
        if (idx + 1) % SIDE != 0 {
            f(idx + 1);
        }
    }
}

/// A chain of a million nodes, each after the previous one.
pub struct Chain;

impl DagShape for Chain {
    const NODES: usize = 1_000_000;

    fn preds(idx: usize) -> usize {
        usize::from(idx > 0)
    }

    fn successors(idx: usize, mut f: impl FnMut(usize)) {
        if idx + 1 < Self::NODES {
            f(idx + 1);
        }
    }
}

/// Width of [`FanOutIn`].
pub const WIDTH: usize = 10_000;

/// One node, then 10,000 independent ones after it, then one after all of them.
pub struct FanOutIn;

impl DagShape for FanOutIn {
    const NODES: usize = WIDTH + 2;

    fn preds(idx: usize) -> usize {
        match idx {
            0 => 0,
            i if i <= WIDTH => 1,
            _ => WIDTH,
        }
    }

    fn successors(idx: usize, mut f: impl FnMut(usize)) {
        match idx {
            0 => (1..=WIDTH).for_each(f),
            i if i <= WIDTH => f(WIDTH + 1),
            _ => {}
        }
    }
}

/// One run of shape `S`: the counters, and a latch the sink fires.
pub struct CounterDag<S> {
    /// Unfinished predecessors per node.
    pending: Vec<AtomicUsize>,
    ran: AtomicUsize,
    /// Fired by the sink, which runs only after every other node.
    done: Arc<CountDown>,
    shape: PhantomData<S>,
}

impl<S: DagShape> CounterDag<S> {
    pub fn new() -> Self {
        CounterDag {
            pending: (0..S::NODES)
                .map(|i| AtomicUsize::new(S::preds(i)))
                .collect(),
            ran: AtomicUsize::new(0),
            done: CountDown::new(1),
            shape: PhantomData,
        }
    }

    /// Marks node `idx` finished and hands each successor it released to `spawn`.
    fn finish(&self, idx: usize, mut spawn: impl FnMut(usize)) {
        self.ran.fetch_add(1, Relaxed);
        S::successors(idx, |next| {
            // AcqRel as a real task graph needs: the node sees its predecessors' writes.
            if self.pending[next].fetch_sub(1, AcqRel) == 1 {
                spawn(next);
            }
        });
        if idx == S::NODES - 1 {
            self.done.count_down();
        }
    }

    fn check(&self) {
        assert_eq!(self.ran.load(Relaxed), S::NODES);
    }
}

/// Runs shape `S` once on `rt`, one detached task per node, and checks every node ran.
pub fn run_counter_dag<S: DagShape, R: Rt>(rt: &R) {
    let dag = Arc::new(CounterDag::<S>::new());
    let (here, root) = (rt.here(), dag.clone());
    rt.detach(async move { counter_node::<S, R>(&here, root, 0) });
    dag.done.wait();
    dag.check();
}

/// Runs shape `S` once on a rayon pool, one scoped closure per node.
pub fn run_counter_dag_rayon<S: DagShape>(pool: &ThreadPool) {
    let dag = CounterDag::<S>::new();
    pool.scope(|s| rayon_node(s, &dag, 0));
    dag.check();
}

fn counter_node<S: DagShape, R: Rt>(here: &R::Here, dag: Arc<CounterDag<S>>, idx: usize) {
    dag.finish(idx, |next| {
        let (spawner, dag) = (here.clone(), dag.clone());
        R::detach_here(
            here,
            async move { counter_node::<S, R>(&spawner, dag, next) },
        );
    });
}

fn rayon_node<'s, S: DagShape>(s: &Scope<'s>, dag: &'s CounterDag<S>, idx: usize) {
    dag.finish(idx, |next| s.spawn(move |s| rayon_node(s, dag, next)));
}
