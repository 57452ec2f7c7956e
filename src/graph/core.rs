//! The graph's state machine, without any executor: nodes, counters, states
//! and the transitions between them. `run.rs` holds it behind a mutex and
//! turns its [`Effects`] into spawns, aborts and wake-ups.
//!
//! Every node's dependencies have smaller indices than the node (batches are
//! inserted in topological order, and dependencies must already exist), so
//! index order is a topological order; the report relies on it.

use std::collections::HashMap;
use std::mem;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::lane::Lane;
use super::report::AttemptOutcome as Outcome;
use super::task::{Body, Task};
use super::validate::{validate, Dep};
use super::{CancelReason, GraphError, RetryPolicy, TaskError, TaskId, TaskState};
use crate::JoinHandle;

pub(crate) struct Node<T> {
    pub(crate) id: TaskId,
    pub(crate) deps: Box<[u32]>,
    pub(crate) dependents: Vec<u32>,
    /// Dependencies not yet completed; meaningful while `Pending`.
    unmet: u32,
    pub(crate) state: TaskState,
    pub(crate) attempts: u32,
    pub(crate) start: Option<Instant>,
    pub(crate) end: Option<Instant>,
    pub(crate) error: Option<TaskError>,
    pub(crate) output: Option<Arc<T>>,
    body: Body<T>,
    retry: RetryPolicy,
    timeout: Option<Duration>,
    /// The spawned driver, kept to abort it when the task is cancelled.
    handle: Option<JoinHandle<()>>,
    /// Index in `Core::spans` of the attempt in progress.
    open_span: Option<u32>,
}

/// One attempt of one task.
pub(crate) struct Span {
    pub(crate) node: u32,
    pub(crate) attempt: u32,
    pub(crate) start: Instant,
    pub(crate) end: Option<Instant>,
    pub(crate) lane: Lane,
    pub(crate) outcome: Outcome,
}

/// What the caller must do after a transition, outside the lock.
#[derive(Default)]
#[must_use]
pub(crate) struct Effects {
    /// Nodes that became ready: spawn them.
    pub(crate) ready: Vec<u32>,
    /// Drivers of cancelled running tasks: abort them.
    pub(crate) abort: Vec<JoinHandle<()>>,
    /// Some node reached a terminal state: wake waiters for tasks.
    pub(crate) changed: bool,
    /// Every node is now terminal: wake waiters for the whole run.
    pub(crate) finished: bool,
}

/// Everything an attempt needs, taken under the lock.
pub(crate) struct AttemptStart<T> {
    pub(crate) id: TaskId,
    pub(crate) attempt: u32,
    pub(crate) body: Body<T>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) inputs: Vec<(TaskId, Arc<T>)>,
}

/// What a driver does after a failed attempt.
pub(crate) enum AfterFailure {
    Retry(Duration),
    Done(Effects),
}

pub(crate) struct Core<T> {
    pub(crate) nodes: Vec<Node<T>>,
    index: HashMap<TaskId, u32>,
    /// Nodes not in a terminal state.
    live: usize,
    stopped: bool,
    pub(crate) fail_fast: bool,
    pub(crate) spans: Vec<Span>,
    pub(crate) finished_at: Option<Instant>,
}

impl<T> Default for Core<T> {
    fn default() -> Self {
        Core {
            nodes: Vec::new(),
            index: HashMap::new(),
            live: 0,
            stopped: false,
            fail_fast: false,
            spans: Vec::new(),
            finished_at: None,
        }
    }
}

impl<T> Core<T> {
    pub(crate) fn lookup(&self, id: &str) -> Result<u32, GraphError> {
        self.index
            .get(id)
            .copied()
            .ok_or_else(|| GraphError::UnknownTask(id.into()))
    }

    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether every node is terminal.
    pub(crate) fn is_done(&self) -> bool {
        self.live == 0
    }

    pub(crate) fn node(&self, i: u32) -> &Node<T> {
        &self.nodes[i as usize]
    }

    fn node_mut(&mut self, i: u32) -> &mut Node<T> {
        &mut self.nodes[i as usize]
    }

    /// Nodes that are `Ready`: at the start of a run, the ones to spawn.
    pub(crate) fn ready_nodes(&self) -> Vec<u32> {
        (0..self.nodes.len() as u32)
            .filter(|&i| self.node(i).state == TaskState::Ready)
            .collect()
    }

    /// Validates and inserts a batch whole, or changes nothing.
    /// `running` says whether a run is under way (then a finished run refuses).
    pub(crate) fn add(
        &mut self,
        tasks: Vec<Task<T>>,
        running: bool,
    ) -> Result<Effects, GraphError> {
        if running && self.is_done() {
            return Err(GraphError::Finished);
        }
        let pairs: Vec<(&TaskId, &[TaskId])> =
            tasks.iter().map(|t| (&t.id, t.deps.as_slice())).collect();
        let plan = validate(&self.index, &pairs)?;
        drop(pairs);
        let mut slots: Vec<Option<Task<T>>> = tasks.into_iter().map(Some).collect();
        let mut node_of = vec![0u32; slots.len()];
        let mut effects = Effects::default();
        for &member in &plan.order {
            let deps = plan.deps[member].iter().map(|d| match *d {
                Dep::Existing(n) => n,
                Dep::Batch(p) => node_of[p],
            });
            let deps: Box<[u32]> = deps.collect();
            let task = slots[member].take().expect("each member is inserted once");
            node_of[member] = self.insert(task, deps, &mut effects);
        }
        Ok(effects)
    }

    fn insert(&mut self, task: Task<T>, deps: Box<[u32]>, effects: &mut Effects) -> u32 {
        let me = u32::try_from(self.nodes.len()).expect("more than u32::MAX tasks");
        let (state, unmet, error) = self.initial_state(&deps);
        for &d in deps.iter() {
            self.node_mut(d).dependents.push(me);
        }
        self.index.insert(task.id.clone(), me);
        self.nodes.push(Node {
            id: task.id,
            deps,
            dependents: Vec::new(),
            unmet,
            state,
            attempts: 0,
            start: None,
            end: None,
            error,
            output: None,
            body: task.body,
            retry: task.retry,
            timeout: task.timeout,
            handle: None,
            open_span: None,
        });
        if state.is_terminal() {
            effects.changed = true;
        } else {
            self.live += 1;
        }
        if state == TaskState::Ready {
            effects.ready.push(me);
        }
        me
    }

    /// The state of a new node, given the states of its dependencies (as in
    /// 000's `addTask`: completed deps count as met, a failed one dooms it).
    fn initial_state(&self, deps: &[u32]) -> (TaskState, u32, Option<TaskError>) {
        if self.stopped {
            let e = TaskError::Cancelled(CancelReason::Stopped);
            return (TaskState::Cancelled, 0, Some(e));
        }
        let mut unmet = 0;
        for &d in deps {
            match self.node(d).state {
                TaskState::Completed => {}
                TaskState::Failed | TaskState::UpstreamFailed => {
                    let e = TaskError::UpstreamFailed(self.failure_root(d));
                    return (TaskState::UpstreamFailed, 0, Some(e));
                }
                TaskState::Cancelled => {
                    let e = TaskError::Cancelled(self.inherited_cancel(d));
                    return (TaskState::Cancelled, 0, Some(e));
                }
                _ => unmet += 1,
            }
        }
        let state = if unmet == 0 {
            TaskState::Ready
        } else {
            TaskState::Pending
        };
        (state, unmet, None)
    }

    /// The task that actually failed, for a node that failed or inherited a failure.
    fn failure_root(&self, i: u32) -> TaskId {
        match &self.node(i).error {
            Some(TaskError::UpstreamFailed(root)) => root.clone(),
            _ => self.node(i).id.clone(),
        }
    }

    /// The reason a dependent of cancelled node `i` is cancelled.
    fn inherited_cancel(&self, i: u32) -> CancelReason {
        match &self.node(i).error {
            Some(TaskError::Cancelled(CancelReason::Upstream(root))) => {
                CancelReason::Upstream(root.clone())
            }
            Some(TaskError::Cancelled(CancelReason::Stopped)) => CancelReason::Stopped,
            Some(TaskError::Cancelled(CancelReason::FailFast(f))) => {
                CancelReason::FailFast(f.clone())
            }
            _ => CancelReason::Upstream(self.node(i).id.clone()),
        }
    }

    /// Keeps the driver's handle so the task can be aborted; gives it back if
    /// the task was cancelled meanwhile (the caller aborts it). A handle of a
    /// task that already finished is dropped, which detaches it: its driver
    /// may still be releasing dependents and must not be aborted.
    pub(crate) fn attach(&mut self, i: u32, handle: JoinHandle<()>) -> Option<JoinHandle<()>> {
        match self.node(i).state {
            TaskState::Ready | TaskState::Running => {
                self.node_mut(i).handle = Some(handle);
                None
            }
            TaskState::Cancelled => Some(handle),
            _ => None,
        }
    }

    /// Starts the next attempt of node `i` if it is still meant to run;
    /// otherwise says what to do instead. A retry due after `stop` is
    /// cancelled, like a task that was ready when the run stopped.
    pub(crate) fn begin_attempt(
        &mut self,
        i: u32,
        now: Instant,
        lane: Lane,
    ) -> Result<AttemptStart<T>, Effects> {
        let node = self.node(i);
        let retrying = node.state == TaskState::Running;
        if retrying && self.stopped {
            return Err(self.cancel(i, CancelReason::Stopped, now));
        }
        if node.state != TaskState::Ready && !retrying {
            return Err(Effects::default());
        }
        let inputs = node
            .deps
            .iter()
            .map(|&d| {
                let dep = self.node(d);
                let out = dep
                    .output
                    .clone()
                    .expect("a running task's dependencies completed");
                (dep.id.clone(), out)
            })
            .collect();
        let node = self.node_mut(i);
        node.state = TaskState::Running;
        node.attempts += 1;
        node.start.get_or_insert(now);
        let start = AttemptStart {
            id: node.id.clone(),
            attempt: node.attempts,
            body: node.body.clone(),
            timeout: node.timeout,
            inputs,
        };
        self.node_mut(i).open_span = Some(self.spans.len() as u32);
        self.spans.push(Span {
            node: i,
            attempt: start.attempt,
            start: now,
            end: None,
            lane,
            outcome: Outcome::Running,
        });
        Ok(start)
    }

    /// Closes the span of node `i`'s attempt in progress, if any.
    fn close_span(&mut self, i: u32, now: Instant, outcome: Outcome) {
        if let Some(s) = self.node_mut(i).open_span.take() {
            let span = &mut self.spans[s as usize];
            span.end = Some(now);
            span.outcome = outcome;
        }
    }

    /// Moves node `i` into terminal `state`.
    fn settle(
        &mut self,
        i: u32,
        state: TaskState,
        error: Option<TaskError>,
        now: Instant,
        fx: &mut Effects,
    ) {
        let node = self.node_mut(i);
        debug_assert!(!node.state.is_terminal());
        node.state = state;
        node.error = error;
        if node.start.is_some() {
            node.end = Some(now);
        }
        if let Some(h) = node.handle.take() {
            // Our own driver is finishing: detach. Someone else's: abort.
            if state == TaskState::Cancelled {
                fx.abort.push(h);
            }
        }
        self.live -= 1;
        fx.changed = true;
        if self.live == 0 {
            self.finished_at = Some(now);
            fx.finished = true;
        }
    }

    /// The attempt of node `i` produced `output`. Releases dependents by
    /// decrementing their counters: O(out-degree).
    pub(crate) fn complete(&mut self, i: u32, output: T, now: Instant) -> Effects {
        let mut fx = Effects::default();
        if self.node(i).state != TaskState::Running {
            return fx; // cancelled while the attempt ran: the output is dropped
        }
        self.close_span(i, now, Outcome::Completed);
        self.node_mut(i).output = Some(Arc::new(output));
        self.settle(i, TaskState::Completed, None, now, &mut fx);
        let dependents = mem::take(&mut self.node_mut(i).dependents);
        for &d in &dependents {
            let dep = self.node_mut(d);
            if dep.state == TaskState::Pending {
                dep.unmet -= 1;
                if dep.unmet == 0 {
                    dep.state = TaskState::Ready;
                    fx.ready.push(d);
                }
            }
        }
        self.node_mut(i).dependents = dependents;
        fx
    }

    /// The attempt of node `i` failed with `error`: retry or give up.
    pub(crate) fn attempt_failed(
        &mut self,
        i: u32,
        error: TaskError,
        now: Instant,
    ) -> AfterFailure {
        if self.node(i).state != TaskState::Running {
            return AfterFailure::Done(Effects::default());
        }
        self.close_span(i, now, outcome_of(&error));
        let node = self.node(i);
        if node.attempts < node.retry.max_attempts() && !self.stopped {
            let delay = node.retry.jittered_backoff(node.attempts);
            self.node_mut(i).error = Some(error);
            return AfterFailure::Retry(delay);
        }
        AfterFailure::Done(self.fail(i, error, now))
    }

    /// Node `i` failed for good: its dependents, transitively, become
    /// upstream-failed (or, fail-fast, everything else is cancelled).
    fn fail(&mut self, i: u32, error: TaskError, now: Instant) -> Effects {
        let mut fx = Effects::default();
        self.settle(i, TaskState::Failed, Some(error), now, &mut fx);
        let root = self.node(i).id.clone();
        self.doom_dependents(i, now, &mut fx, |_| {
            (
                TaskState::UpstreamFailed,
                TaskError::UpstreamFailed(root.clone()),
            )
        });
        if self.fail_fast {
            self.cancel_all(CancelReason::FailFast(root), now, &mut fx);
        }
        fx
    }

    /// Settles every not-yet-terminal node reachable from `i` through
    /// dependents, iteratively (an explicit stack: a million-long chain must
    /// not overflow the call stack). Each node is visited once: once settled
    /// it is terminal and skipped.
    fn doom_dependents(
        &mut self,
        i: u32,
        now: Instant,
        fx: &mut Effects,
        verdict: impl Fn(u32) -> (TaskState, TaskError),
    ) {
        let mut stack = self.node(i).dependents.clone();
        while let Some(d) = stack.pop() {
            if self.node(d).state.is_terminal() {
                continue;
            }
            let (state, error) = verdict(d);
            if self.node(d).state == TaskState::Running {
                self.close_span(d, now, Outcome::Cancelled);
            }
            self.settle(d, state, Some(error), now, fx);
            stack.extend_from_slice(&self.node(d).dependents);
        }
    }

    /// Cancels node `i` (if not terminal) and its dependents, transitively.
    pub(crate) fn cancel(&mut self, i: u32, reason: CancelReason, now: Instant) -> Effects {
        let mut fx = Effects::default();
        if self.node(i).state.is_terminal() {
            return fx;
        }
        self.cancel_one(i, reason, now, &mut fx);
        let origin = self.inherited_cancel(i);
        self.doom_dependents(i, now, &mut fx, |_| {
            (TaskState::Cancelled, TaskError::Cancelled(origin.clone()))
        });
        fx
    }

    fn cancel_one(&mut self, i: u32, reason: CancelReason, now: Instant, fx: &mut Effects) {
        if self.node(i).state == TaskState::Running {
            self.close_span(i, now, Outcome::Cancelled);
        }
        let error = TaskError::Cancelled(reason);
        self.settle(i, TaskState::Cancelled, Some(error), now, fx);
    }

    fn cancel_all(&mut self, reason: CancelReason, now: Instant, fx: &mut Effects) {
        for i in 0..self.nodes.len() as u32 {
            if !self.node(i).state.is_terminal() {
                self.cancel_one(i, reason.clone(), now, fx);
            }
        }
    }

    /// Stops the run: tasks not yet started are cancelled, running ones
    /// finish (without further retries), tasks added later are cancelled.
    pub(crate) fn stop(&mut self, now: Instant) -> Effects {
        let mut fx = Effects::default();
        self.stopped = true;
        for i in 0..self.nodes.len() as u32 {
            if matches!(self.node(i).state, TaskState::Pending | TaskState::Ready) {
                self.cancel_one(i, CancelReason::Stopped, now, &mut fx);
            }
        }
        fx
    }
}

fn outcome_of(error: &TaskError) -> Outcome {
    match error {
        TaskError::TimedOut(_) => Outcome::TimedOut,
        TaskError::Panicked(_) => Outcome::Panicked,
        TaskError::Cancelled(_) => Outcome::Cancelled,
        _ => Outcome::Failed,
    }
}
