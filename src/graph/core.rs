//! The graph's state machine, without any executor: nodes, counters, states,
//! the ready queue and the transitions between them. `run.rs` holds it
//! behind a mutex and turns its [`Effects`] into spawns, aborts and wake-ups.
//!
//! Every node's dependencies have smaller indices than the node (batches are
//! inserted in topological order, and dependencies must already exist), so
//! index order is a topological order; the report relies on it.
//!
//! # Runners
//!
//! Ready nodes wait in the ready queue until a *runner* (a task of `run.rs`
//! that runs ready nodes one after another) takes them. `runners` counts the
//! runners alive; it only changes under the lock, together with the queue:
//! a runner leaves (decrementing it) only when it finds the queue empty, and
//! every push onto the queue is followed by [`Core::wake_runners`], which
//! asks for new runners while the queue holds more nodes than there are
//! runners, up to `max_runners`. So a node pushed while the queue looked
//! empty to a leaving runner is always seen by a runner alive or asked for.

use std::collections::{HashMap, VecDeque};
use std::mem;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::edges::Edges;
use super::inputs::Outputs;
use super::report::AttemptOutcome as Outcome;
use super::task::{Body, Task};
use super::validate::{validate, Dep};
use super::{CancelReason, GraphError, RetryPolicy, TaskError, TaskId, TaskState};
use crate::JoinHandle;

/// What a task is, fixed once added: shared (one reference count) with each
/// attempt's [`Inputs`](super::Inputs), so starting an attempt copies nothing.
pub(crate) struct Spec<T> {
    pub(crate) id: TaskId,
    /// Dependencies' ids, de-duplicated, in declaration order.
    pub(crate) dep_ids: Box<[TaskId]>,
    pub(crate) body: Body<T>,
    pub(crate) retry: RetryPolicy,
    pub(crate) timeout: Option<Duration>,
}

pub(crate) struct Node<T> {
    pub(crate) id: TaskId,
    /// Dropped when the node ends (outside the lock, see [`Effects`]), so
    /// that a body and what it captured live no longer than its task.
    spec: Option<Arc<Spec<T>>>,
    /// Dependencies by index, in the order of `spec.dep_ids`.
    pub(crate) deps: Edges,
    pub(crate) dependents: Edges,
    /// Dependencies not yet completed; meaningful while `Pending`.
    unmet: u32,
    pub(crate) state: TaskState,
    pub(crate) attempts: u32,
    pub(crate) start: Option<Instant>,
    pub(crate) end: Option<Instant>,
    pub(crate) error: Option<TaskError>,
    pub(crate) output: Option<Arc<T>>,
    /// The task driving an attempt that went asynchronous (or a backoff
    /// wait), kept to abort it when the node is cancelled. Attempts that
    /// finish within their first poll never get one.
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
    /// The worker thread that started it (see `lane.rs`).
    pub(crate) lane: u32,
    pub(crate) outcome: Outcome,
}

/// What the caller must do after transitions, outside the lock.
#[derive(Default)]
#[must_use]
pub(crate) struct Effects {
    /// How many runners to spawn (already counted in `Core::runners`).
    pub(crate) runners: u32,
    /// A node whose attempt failed and is due for a retry after this wait.
    pub(crate) retry: Option<(u32, Duration)>,
    /// Drivers of cancelled running tasks: abort them.
    pub(crate) abort: Vec<JoinHandle<()>>,
    /// Some node reached a terminal state: wake waiters for tasks.
    pub(crate) changed: bool,
    /// Every node is now terminal: wake waiters for the whole run.
    pub(crate) finished: bool,
}

/// Everything an attempt needs, taken under the lock.
pub(crate) struct AttemptStart<T> {
    pub(crate) node: u32,
    pub(crate) spec: Arc<Spec<T>>,
    pub(crate) attempt: u32,
    pub(crate) outputs: Outputs<T>,
}

/// The graph-level ready set, behind the two operations dispatch needs, so a
/// policy (priorities, budgets) can replace it without touching the rest.
/// With default settings it is a FIFO: ready nodes run in the order they
/// became ready. Entries of nodes cancelled while queued are skipped by
/// [`Core::pop_ready`] rather than searched for and removed.
#[derive(Default)]
struct ReadyQueue {
    fifo: VecDeque<u32>,
}

impl ReadyQueue {
    fn push_ready(&mut self, node: u32) {
        self.fifo.push_back(node);
    }

    fn pop_ready(&mut self, _now: Instant) -> Option<u32> {
        self.fifo.pop_front()
    }

    fn len(&self) -> usize {
        self.fifo.len()
    }
}

pub(crate) struct Core<T> {
    pub(crate) nodes: Vec<Node<T>>,
    /// Shared with reports taken after the run (copied on write if a task
    /// is added while a report holds it).
    pub(crate) index: Arc<HashMap<TaskId, u32>>,
    ready: ReadyQueue,
    /// Runners alive (see the module docs) and the most there may be.
    runners: u32,
    max_runners: u32,
    /// Nodes not in a terminal state.
    live: usize,
    stopped: bool,
    pub(crate) fail_fast: bool,
    pub(crate) spans: Vec<Span>,
    pub(crate) finished_at: Option<Instant>,
    /// Specs of nodes that ended. Dropped together by whoever sees the run
    /// end ([`Core::take_retired`]), outside the lock (dropping a body runs
    /// its captures' destructors, which may call into the run), and not one
    /// by one on the workers: they were allocated by the thread that built
    /// the graph, and freeing memory of another thread's arena costs the
    /// allocator several times a local free.
    retired: Vec<Arc<Spec<T>>>,
}

impl<T> Default for Core<T> {
    fn default() -> Self {
        Core {
            nodes: Vec::new(),
            index: Arc::default(),
            ready: ReadyQueue::default(),
            runners: 0,
            max_runners: default_runners(),
            live: 0,
            stopped: false,
            fail_fast: false,
            spans: Vec::new(),
            finished_at: None,
            retired: Vec::new(),
        }
    }
}

/// One runner per core: a runner keeps one worker busy, and the graph layer
/// cannot ask the executor how many workers it has (public API only), so it
/// assumes one per core, as the default executor has. Extra runners on a
/// smaller executor only take turns.
fn default_runners() -> u32 {
    static RUNNERS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *RUNNERS.get_or_init(|| {
        std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(64))
    })
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

    /// Validates and inserts a batch whole, or changes nothing.
    /// `running` says whether a run is under way (then a finished run
    /// refuses, and ready nodes get runners).
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
        self.nodes.reserve(slots.len());
        Arc::make_mut(&mut self.index).reserve(slots.len());
        for &member in &plan.order {
            let deps = plan.deps[member].iter().map(|d| match *d {
                Dep::Existing(n) => n,
                Dep::Batch(p) => node_of[p],
            });
            let deps: Edges = deps.collect();
            let task = slots[member].take().expect("each member is inserted once");
            node_of[member] = self.insert(task, deps, &mut effects);
        }
        if running {
            self.wake_runners(&mut effects);
        }
        Ok(effects)
    }

    fn insert(&mut self, task: Task<T>, deps: Edges, effects: &mut Effects) -> u32 {
        let me = u32::try_from(self.nodes.len()).expect("more than u32::MAX tasks");
        let (state, unmet, error) = self.initial_state(&deps);
        let dep_ids = deps.iter().map(|&d| self.node(d).id.clone());
        let spec = Arc::new(Spec {
            dep_ids: dep_ids.collect(),
            id: task.id,
            body: task.body,
            retry: task.retry,
            timeout: task.timeout,
        });
        for &d in deps.iter() {
            self.node_mut(d).dependents.push(me);
        }
        Arc::make_mut(&mut self.index).insert(spec.id.clone(), me);
        self.nodes.push(Node {
            id: spec.id.clone(),
            spec: (!state.is_terminal()).then_some(spec),
            deps,
            dependents: Edges::default(),
            unmet,
            state,
            attempts: 0,
            start: None,
            end: None,
            error,
            output: None,
            handle: None,
            open_span: None,
        });
        if state.is_terminal() {
            effects.changed = true;
        } else {
            self.live += 1;
        }
        if state == TaskState::Ready {
            self.ready.push_ready(me);
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

    /// The specs of the nodes that ended since the last call, for the caller
    /// to drop outside the lock.
    pub(crate) fn take_retired(&mut self) -> Vec<Arc<Spec<T>>> {
        mem::take(&mut self.retired)
    }

    /// Called once as the run starts: sizes the per-run records for the
    /// tasks there are, so they do not grow (and copy) while tasks run.
    pub(crate) fn prepare_run(&mut self, fx: &mut Effects) {
        self.spans.reserve(self.nodes.len());
        self.retired.reserve(self.nodes.len());
        self.wake_runners(fx);
    }

    /// Asks for runners while ready nodes outnumber them (see the module docs).
    pub(crate) fn wake_runners(&mut self, fx: &mut Effects) {
        let queued = u32::try_from(self.ready.len()).unwrap_or(u32::MAX);
        let wanted = queued.min(self.max_runners).saturating_sub(self.runners);
        self.runners += wanted;
        fx.runners += wanted;
    }

    /// For a runner: the next ready node's attempt, begun. `None` means the
    /// queue is empty and the runner must leave (it is no longer counted).
    pub(crate) fn next_attempt(&mut self, now: Instant, lane: u32) -> Option<AttemptStart<T>> {
        while let Some(i) = self.ready.pop_ready(now) {
            // Nodes cancelled while queued stay in the queue: skip them.
            if self.node(i).state == TaskState::Ready {
                return Some(self.start_attempt(i, now, lane));
            }
        }
        self.runners -= 1;
        None
    }

    /// Keeps the driver's handle so the task can be aborted; gives it back if
    /// the task was cancelled meanwhile (the caller aborts it). A handle of a
    /// task that already finished is dropped, which detaches it: its driver
    /// may still be releasing dependents and must not be aborted.
    pub(crate) fn attach(&mut self, i: u32, handle: JoinHandle<()>) -> Option<JoinHandle<()>> {
        match self.node(i).state {
            TaskState::Running => {
                self.node_mut(i).handle = Some(handle);
                None
            }
            TaskState::Cancelled => Some(handle),
            _ => None,
        }
    }

    /// Starts the next attempt of node `i`, which waited to retry, if it is
    /// still meant to run; otherwise says what to do instead. A retry due
    /// after `stop` is cancelled, like a task that was ready when the run
    /// stopped.
    pub(crate) fn retry_attempt(
        &mut self,
        i: u32,
        now: Instant,
        lane: u32,
    ) -> Result<AttemptStart<T>, Effects> {
        if self.node(i).state != TaskState::Running {
            return Err(Effects::default());
        }
        if self.stopped {
            return Err(self.cancel(i, CancelReason::Stopped, now));
        }
        Ok(self.start_attempt(i, now, lane))
    }

    /// Marks node `i` running, opens its attempt's span and gathers its inputs.
    fn start_attempt(&mut self, i: u32, now: Instant, lane: u32) -> AttemptStart<T> {
        let node = self.node(i);
        let outputs = Outputs::gather(
            node.deps.len(),
            node.deps.iter().map(|&d| {
                let out = self.node(d).output.as_ref();
                Arc::clone(out.expect("a running task's dependencies completed"))
            }),
        );
        let span = u32::try_from(self.spans.len()).expect("more than u32::MAX attempts");
        let node = self.node_mut(i);
        node.state = TaskState::Running;
        node.attempts += 1;
        node.start.get_or_insert(now);
        node.open_span = Some(span);
        let spec = node
            .spec
            .as_ref()
            .expect("a node that is not terminal has its spec");
        let start = AttemptStart {
            node: i,
            spec: Arc::clone(spec),
            attempt: node.attempts,
            outputs,
        };
        self.spans.push(Span {
            node: i,
            attempt: start.attempt,
            start: now,
            end: None,
            lane,
            outcome: Outcome::Running,
        });
        start
    }

    /// Records how an attempt of node `i` ended. Returns the wait before the
    /// next attempt if the node is to be retried.
    pub(crate) fn finish_attempt(
        &mut self,
        i: u32,
        result: Result<T, TaskError>,
        now: Instant,
        fx: &mut Effects,
    ) -> Option<Duration> {
        match result {
            Ok(output) => {
                self.complete(i, output, now, fx);
                None
            }
            Err(error) => self.attempt_failed(i, error, now, fx),
        }
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
        if let Some(spec) = node.spec.take() {
            self.retired.push(spec);
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
    fn complete(&mut self, i: u32, output: T, now: Instant, fx: &mut Effects) {
        if self.node(i).state != TaskState::Running {
            return; // cancelled while the attempt ran: the output is dropped
        }
        self.close_span(i, now, Outcome::Completed);
        self.node_mut(i).output = Some(Arc::new(output));
        self.settle(i, TaskState::Completed, None, now, fx);
        let dependents = mem::take(&mut self.node_mut(i).dependents);
        for &d in dependents.iter() {
            let dep = self.node_mut(d);
            if dep.state == TaskState::Pending {
                dep.unmet -= 1;
                if dep.unmet == 0 {
                    dep.state = TaskState::Ready;
                    self.ready.push_ready(d);
                }
            }
        }
        self.node_mut(i).dependents = dependents;
        self.wake_runners(fx);
    }

    /// The attempt of node `i` failed with `error`: retry or give up.
    fn attempt_failed(
        &mut self,
        i: u32,
        error: TaskError,
        now: Instant,
        fx: &mut Effects,
    ) -> Option<Duration> {
        if self.node(i).state != TaskState::Running {
            return None;
        }
        self.close_span(i, now, outcome_of(&error));
        let node = self.node(i);
        let retry = &node
            .spec
            .as_ref()
            .expect("a running node has its spec")
            .retry;
        if node.attempts < retry.max_attempts() && !self.stopped {
            let delay = retry.jittered_backoff(node.attempts);
            self.node_mut(i).error = Some(error);
            return Some(delay);
        }
        self.fail(i, error, now, fx);
        None
    }

    /// Node `i` failed for good: its dependents, transitively, become
    /// upstream-failed (or, fail-fast, everything else is cancelled).
    fn fail(&mut self, i: u32, error: TaskError, now: Instant, fx: &mut Effects) {
        self.settle(i, TaskState::Failed, Some(error), now, fx);
        let root = self.node(i).id.clone();
        self.doom_dependents(i, now, fx, |_| {
            (
                TaskState::UpstreamFailed,
                TaskError::UpstreamFailed(root.clone()),
            )
        });
        if self.fail_fast {
            self.cancel_all(CancelReason::FailFast(root), now, fx);
        }
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
        let mut stack = self.node(i).dependents.to_vec();
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
