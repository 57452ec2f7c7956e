//! Floors under a graph layer: the same shape run by one thread in a plain loop, with no lock,
//! no executor and no state machine. The graph bench prints them next to the graph so that the
//! gap is measured, not guessed. Two loops:
//!
//! * [`Floor::run`] does it all on one thread: one `Instant::now` per task and every body
//!   dropped, timed. A graph run does not: its worker reads the time-stamp counter rather than
//!   the clock (`src/time/ticks.rs`), and its waiting thread drops the bodies while the worker
//!   runs tasks, so a graph's span from its first task's start to its last one's end can come
//!   in under this loop.
//! * [`Floor::run_bare`] does only what no worker can skip: the body called through its box,
//!   its outcome recorded, its dependents' counters released. No clock at all, and the bodies
//!   handed back for the caller to drop untimed. That is a lower bound for the span of any
//!   graph layer's worker, without its wake-ups.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use super::dag::DagShape;

/// A task's body, boxed as the graph boxes one: a closure that may fail.
pub type Body = Box<dyn Fn() -> Result<(), String> + Send + Sync>;

/// What the report keeps of a task: its state, attempts and times.
#[derive(Default)]
pub struct Record {
    started: Option<Instant>,
    ended: Option<Instant>,
    attempts: u32,
    ok: bool,
}

/// A shape ready to run: each node's body (which counts itself in `ran`, as the graph bench's
/// bodies do), its count of unfinished predecessors and its record; the ready queue and the
/// list of bodies that ran, with room for every node (a graph's tables, too, are made as it
/// is built, before it runs).
pub struct Floor {
    bodies: Vec<Option<Body>>,
    unmet: Vec<u32>,
    records: Vec<Record>,
    ready: VecDeque<usize>,
    retired: Vec<Body>,
    ran: Arc<AtomicUsize>,
}

impl Floor {
    /// Builds shape `S` (untimed, as the graph bench builds its graph untimed).
    pub fn build<S: DagShape>() -> Floor {
        let ran = Arc::new(AtomicUsize::new(0));
        let bodies = (0..S::NODES)
            .map(|_| {
                let ran = Arc::clone(&ran);
                let body: Body = Box::new(move || {
                    ran.fetch_add(1, Relaxed);
                    Ok(())
                });
                Some(body)
            })
            .collect();
        Floor {
            bodies,
            unmet: (0..S::NODES).map(|i| S::preds(i) as u32).collect(),
            records: (0..S::NODES).map(|_| Record::default()).collect(),
            ready: VecDeque::with_capacity(S::NODES),
            retired: Vec::with_capacity(S::NODES),
            ran,
        }
    }

    /// Runs every node once, dependencies first, and checks that each ran. Per task: one clock
    /// reading (its end, which is also the next task's start), the body called through its
    /// box, the task's record written, its dependents' counters released into a FIFO; the
    /// bodies are dropped at the end, as a run drops its bodies.
    /// Returns the records, for the caller to drop untimed (as the graph bench keeps its
    /// report).
    pub fn run<S: DagShape>(self) -> Vec<Record> {
        let (records, retired) = self.run_loop::<S, true>();
        drop(retired);
        records
    }

    /// [`Floor::run`] without the clock (no times recorded) and without dropping the bodies:
    /// returns them with the records, for the caller to drop untimed (see the module docs).
    pub fn run_bare<S: DagShape>(self) -> (Vec<Record>, Vec<Body>) {
        self.run_loop::<S, false>()
    }

    /// The loop of both: with `CLOCK`, one `Instant::now` per task.
    fn run_loop<S: DagShape, const CLOCK: bool>(self) -> (Vec<Record>, Vec<Body>) {
        let Floor {
            mut bodies,
            mut unmet,
            mut records,
            mut ready,
            mut retired,
            ran,
        } = self;
        ready.extend((0..S::NODES).filter(|&i| unmet[i] == 0));
        let mut now = CLOCK.then(Instant::now);
        while let Some(i) = ready.pop_front() {
            let body = bodies[i].take().expect("each node runs once");
            let record = &mut records[i];
            record.started = now;
            record.attempts += 1;
            record.ok = body().is_ok();
            now = CLOCK.then(Instant::now);
            record.ended = now;
            retired.push(body);
            S::successors(i, |next| {
                unmet[next] -= 1;
                if unmet[next] == 0 {
                    ready.push_back(next);
                }
            });
        }
        assert_eq!(ran.load(Relaxed), S::NODES, "not every node ran");
        assert!(records
            .iter()
            .all(|r| r.ok && r.attempts == 1 && r.ended.is_some() == CLOCK));
        (records, retired)
    }
}
