//! The graph's state machine, without any executor: nodes, counters, states,
//! the ready queue and the transitions between them. `run.rs` holds it
//! behind a mutex and turns its [`Effects`] into spawns, aborts and wake-ups.
//!
//! Every node's dependencies have smaller indices than the node (batches are
//! inserted in topological order, and dependencies must already exist), so
//! index order is a topological order; the report relies on it, and
//! releasing a completed node's dependents borrows the nodes after it apart
//! from the node itself.
//!
//! # Layout
//!
//! The nodes are built by the thread that adds tasks and read by runners on
//! other cores, so every cache line a task touches is a transfer between
//! cores. What a run reads and writes for every task is its [`Node`]: 128
//! bytes, aligned to 128 (one pair of lines, which the CPU fetches
//! together). The rest (id, dependencies, and behind one pointer the fields
//! most tasks never set) is its [`Cold`], in a vector of its own at the
//! same index, read on slower paths only (a failure, a cancel, a pause, a
//! ranked queue, the report, and gathering outputs of a `T` that is not
//! unit-like). Kept in the node, those fields made it 256 bytes, and the
//! nodes' vector, grown by doubling as tasks are added, held up to twice
//! that per task. Dispatching a task
//! touches its node's hot lines and the ready queue; recording its end,
//! those, the list of retired bodies (written in order) and its dependents'
//! hot lines. A first attempt that completes writes no attempt record of
//! its own: the node's times and worker are its record (see [`Span`]).
//!
//! # Prefetching
//!
//! Those transfers are misses the runner would take one after the other,
//! each stalling it: in a lattice, a node's second line when it is begun,
//! its body's captures when the body is called, and a dependent's node the
//! first time a completion releases it. So the runner asks for them ahead
//! ([`crate::hint`]), and they arrive while it does other work: when a
//! completion makes a node ready, the node's other line and its body's
//! captures; when a node is begun, its dependents' nodes, which its record
//! will write after its body ran. Only along short lists of dependents (the
//! inline ones, two or fewer): a task that releases thousands at once (a
//! fan-out's root) would ask for more lines than stay in the cache until
//! they are needed, and a fan-out's nodes, contiguous and taken in order,
//! are what the CPU's own prefetcher already follows. A prefetch changes
//! no value, only when a line arrives. (Measured: BENCHMARKS.md,
//! "Prefetching the next nodes".)
//!
//! # Bodies, options and names
//!
//! A node holds its body until it ends. An attempt borrows it: taken under
//! the lock when the attempt begins ([`AttemptStart`]), called outside the
//! lock to make the attempt's future, and given back at the caller's next
//! lock acquisition ([`Core::give_back`], or directly retired by
//! [`Core::attempt_ran`]); a body given back to a node that ended meanwhile
//! is retired. Every path that takes a body gives it back before the
//! attempt can end by itself, so when the last node ends every body is
//! retired and the waiter of the run drops them all
//! ([`Core::sweep_retired`]; while the run goes on, the waiter takes them
//! a chunk at a time, so that what they captured goes as the run goes and
//! their drops overlap the runners' work). Only a cancel can end an
//! attempt while its body is being called (a sync body runs on to its
//! return); if that ended the run, the body comes back late and whoever
//! gives it back drops it ([`Core::take_late`]). A task's options (retry
//! policy, priority, demand) are boxed in its node only if one differs
//! from the default, and the ids its inputs can show ([`Names`]) are made
//! only when a body asks: a plain task allocates nothing but its node, its
//! id and its body.
//!
//! # User values
//!
//! Bodies (and what they captured), outputs and errors are the user's
//! values: their destructors may call into the run (whose lock is not
//! re-entrant) or panic. The core never drops one under the lock, where
//! the first would deadlock and the second would unwind out of a
//! transition half done. It keeps each until the caller has released the
//! lock:
//!
//! * bodies of nodes that ended, also those added to a stopped run (or
//!   after a failed or cancelled dependency), which are terminal from the
//!   start, are retired ([`Core::sweep_retired`]); bodies given back after
//!   the run ended are late ([`Core::take_late`]); whoever takes them
//!   drops each one catching a panic from its destructor (`drop_bodies` in
//!   `run.rs`);
//! * the output or error of an attempt whose task was cancelled while it
//!   ran, and a failed attempt's error once the task's next outcome
//!   replaces it (the next attempt's, or the reason it was cancelled), go
//!   to [`Effects::release`], which the caller drops after the lock,
//!   catching a panic from a destructor;
//! * the tasks of a batch [`Core::add`] refuses are given back with the
//!   error.
//!
//! The wakers of a running task's pause switch are anyone's too (a body may
//! poll its checkpoint under a waker of its own), and one may call back
//! into the run from `wake`: a transition that changes the switch's phase
//! puts its wake-up in [`Effects::release`] ([`Release::Wake`]), which the
//! caller drops after the lock.
//!
//! The outputs of completed nodes stay in the core for the run's life, so
//! an attempt's inputs, which share them, never hold their last reference.
//!
//! # Runners
//!
//! Ready nodes wait in the ready queue until a *runner* (a task of `run.rs`
//! that runs ready nodes one after another) takes them. `runners` counts the
//! runners alive; it only changes under the lock, together with the queue:
//! a runner leaves (decrementing it) only when it finds no ready node that
//! fits the budget, and every push onto the queue, and every release of a
//! budget, is followed by [`Core::wake_runners`], which asks for a new
//! runner per queued node, up to `max_runners` alive, but for one node if
//! the caller is a runner (which takes nodes next). So a node pushed (or
//! made to fit) after a runner left is always seen by a runner alive or
//! asked for. The runners alive other than the caller are not counted on:
//! each may be in a body that takes any time.
//!
//! Time is the one change that is no event: with aging, a task already
//! ready may come to rank first (or within the look-ahead) and fit where
//! the tasks offered before did not (`ready.rs`, "Resource fit, look-ahead
//! and starvation"). So a runner that leaves the ranked set with tasks in
//! it asks [`ReadySet::next_reorder`] when the offer may next differ and,
//! if it may start something then, arms the run's *dispatch timer* for
//! that instant, or [`MIN_DISPATCH_WAIT`] from now if that is later (one
//! per run: [`Release::Arm`], carried out after the
//! lock; an earlier one armed stays, a later one is disarmed), which asks
//! for runners when due ([`Core::dispatch_timer_due`]). A timer whose
//! instant no longer stands (another was armed) does nothing when due; the
//! run disarms its timer when it is stopped or finishes. Neither the FIFO
//! queue, nor a single priority level, nor a run with aging off ever arms
//! one. With nothing else happening, the offer repeats every aging
//! interval (every ready task gains the same per interval), so a chain of
//! firings that has seen one whole interval go by since its first without
//! a task started or runners asked for by anything else stops there
//! (`Core::quiet_since`; a firing whose runner looks after its instant
//! and finds nothing to start, having passed over a window of at least
//! [`MIN_DISPATCH_WAIT`] in which aging lets a task start
//! ([`ReadySet::starts_for`]), has the interval count from that look
//! instead, and arms the timer for that window's return rather than for
//! the next step, so that runners always late by less than
//! [`MIN_DISPATCH_WAIT`] still start the task, if the search finds the
//! window: see below). With an aging interval shorter than
//! [`MIN_DISPATCH_WAIT`] firings see one offer of the interval each, so
//! a runner arms the timer for the first instant, at least
//! [`MIN_DISPATCH_WAIT`] from now, whose offer starts a task
//! ([`ReadySet::first_start`]), and for none if no offer of a whole
//! interval does; such a chain stops after [`MIN_DISPATCH_WAIT`]. So a run
//! waiting for capacity that a task which fits can never be offered (it
//! stays behind [`LOOKAHEAD`](super::LOOKAHEAD) tasks that always outrank
//! it) costs at most one interval of firings, not firings for as long as
//! it waits. Both searches look at no more than 32 steps of the offer
//! (each a peek at the ranked set, under the lock; a set with many
//! priority levels has as many steps per interval), and find nothing past
//! them. So a window further on may be passed over, and so may one with
//! more steps in it than that, even by runners late by less than
//! [`MIN_DISPATCH_WAIT`] (the look back begins [`MIN_DISPATCH_WAIT`]
//! before the firing's instant and finds a window only once it has looked
//! at each step of its first [`MIN_DISPATCH_WAIT`]): that chain stops as
//! above. With an aging interval shorter than [`MIN_DISPATCH_WAIT`], a
//! runner whose search finds nothing arms no timer at all. Either way the
//! task then waits for some other event (a task ending, a task added).

use std::collections::{HashMap, VecDeque};
use std::mem;
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::edges::Edges;
use super::inputs::Outputs;
use super::policy::{Budget, Change, DeferredWake};
use super::report::AttemptOutcome as Outcome;
use super::slots::{StartSlot, Starts};
use super::task::{Body, Task};
use super::validate::{validate, Dep, Plan};
use super::{Blocked, Demand, PauseControl, PauseError, PausedFrom, ReadySet, SchedulerConfig};
use super::{CancelReason, GraphError, RetryPolicy, TaskError, TaskId, TaskState};
use crate::JoinHandle;

/// A task's id and its dependencies' ids, for an attempt's
/// [`Inputs`](super::Inputs): made from the graph the first time a body
/// asks for them ([`Core::names_of`]) and kept in the node for its later
/// attempts, so that a graph whose bodies never ask allocates none.
pub(crate) struct Names {
    pub(crate) id: TaskId,
    /// Dependencies' ids, de-duplicated, in declaration order.
    pub(crate) dep_ids: Box<[TaskId]>,
}

/// A task's options other than its timeout, boxed in its node only when
/// one differs from the default ([`Node::options`]): most tasks have none.
struct Options {
    retry: RetryPolicy,
    priority: i32,
    demand: Demand,
}

impl Options {
    /// `None` if all are the defaults.
    fn of(retry: RetryPolicy, priority: i32, demand: Demand) -> Option<Box<Options>> {
        let plain = retry == RetryPolicy::default() && priority == 0 && demand == Demand::new();
        (!plain).then(|| {
            Box::new(Options {
                retry,
                priority,
                demand,
            })
        })
    }

    fn default_ref() -> &'static Options {
        static DEFAULT: OnceLock<Options> = OnceLock::new();
        DEFAULT.get_or_init(|| Options {
            retry: RetryPolicy::default(),
            priority: 0,
            demand: Demand::new(),
        })
    }
}

/// A task in the graph: what a run touches for every task (state,
/// counters, body, dependents, output, times), in 128 bytes aligned to 128:
/// dispatching a task, releasing its dependents and recording its end touch
/// one aligned pair of cache lines of it (which the CPU fetches together).
/// The rest (id, dependencies, error, handles, pause state) is its
/// [`Cold`], read only by slower paths. Nodes are built by the thread that
/// adds tasks and read by the runners on other cores, so each line touched
/// is a transfer.
#[repr(C, align(128))]
pub(crate) struct Node<T> {
    pub(crate) state: TaskState,
    /// The state a paused task resumes to.
    paused_from: Option<PausedFrom>,
    /// Whether it holds its demand against the budget (while running).
    holds_budget: bool,
    /// Whether its [`Rare`] fields `error`, `handle` or `control` may be
    /// set: ending a task that never had any reads none of them.
    has_extras: bool,
    /// Dependencies not yet completed; meaningful while `Pending`.
    unmet: u32,
    pub(crate) attempts: u32,
    /// Where the record of its attempt in progress is: an index in
    /// `Core::spans`, or one of [`NO_RECORD`], [`RECORD_IN_NODE`],
    /// [`DONE_IN_NODE`] (see [`Span`]). Of a cancelled task, the index of
    /// the record of the attempt the cancel closed, until the attempt's
    /// runner has given it back (see [`Core::close_cancelled`]).
    record: u32,
    /// How many dependencies it has (`deps.len()`, kept here for the inputs).
    n_deps: u32,
    /// The worker that began its first attempt, while that attempt's record
    /// is kept in the node.
    lane: u32,
    /// The body, while the node is not terminal and no attempt borrows it:
    /// an attempt takes it under the lock, calls it outside (to make the
    /// attempt's future) and gives it back with the next lock acquisition
    /// ([`Core::give_back`]). Retired when the node ends (see
    /// [`Core::sweep_retired`]), so that a body and what it captured live no
    /// longer than its run.
    body: Option<Body<T>>,
    /// Each attempt's time limit.
    timeout: Option<Duration>,
    /// The output of a completed task; `None` for a unit-like `T` (see
    /// [`Core::output`]).
    output: Option<Arc<T>>,
    pub(crate) dependents: Edges,
    pub(crate) start: Option<Instant>,
    pub(crate) end: Option<Instant>,
    /// Its options, if any differs from the default (see [`Node::options`]).
    options: Option<Box<Options>>,
}

/// What a run reads of a task only on slower paths (a failure, a cancel, a
/// pause, a ranked queue, the report, inputs asking for ids, outputs to
/// gather): kept apart from the [`Node`]s, in `Core::cold` at the same
/// index, so that a node is its 128 hot bytes and nothing else (see
/// "Layout" in the module docs).
pub(crate) struct Cold {
    pub(crate) id: TaskId,
    /// Dependencies by index, de-duplicated, in declaration order.
    pub(crate) deps: Edges,
    /// What only a task that failed, was cancelled, paused, went
    /// asynchronous or was asked for its ids has; allocated when first
    /// set, while `Node::has_extras` says it may be there.
    rare: Option<Box<Rare>>,
}

/// The fields of a [`Cold`] that most tasks never set, boxed together.
#[derive(Default)]
struct Rare {
    error: Option<TaskError>,
    /// Its ids for inputs, once a body asked (see [`Names`]).
    names: Option<Arc<Names>>,
    /// The task driving an attempt that went asynchronous (or a backoff
    /// wait), kept to abort it when the node is cancelled. Attempts that
    /// finish within their first poll never get one.
    handle: Option<JoinHandle<()>>,
    /// When it last became ready, kept once the ready queue is ranked (the
    /// FIFO keeps it in the queue): a task paused while ready resumes with
    /// the priority it had aged to (see `paused_at`).
    ready_since: Option<Instant>,
    /// When it was paused while ready: resumed, it is ready since
    /// `ready_since` plus the time it was paused, so that the pause does
    /// not count as waiting (it neither loses nor gains priority).
    paused_at: Option<Instant>,
    /// Its pause switch, made when a pause is first requested while it runs
    /// (the body reaches it through `Inputs::checkpoint`).
    control: Option<PauseControl>,
    /// When its next attempt is due, while it waits out a backoff (`None`
    /// past what an `Instant` holds); for `why`.
    retry_at: Option<Instant>,
}

impl Cold {
    /// Its rare fields, if any was set.
    fn rare(&self) -> Option<&Rare> {
        self.rare.as_deref()
    }

    /// Its rare fields, allocated on first use.
    fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// The error it ended with, if any.
    pub(crate) fn error(&self) -> Option<&TaskError> {
        self.rare()?.error.as_ref()
    }
}

impl<T> Node<T> {
    fn options(&self) -> &Options {
        match &self.options {
            Some(options) => options,
            None => Options::default_ref(),
        }
    }

    /// Whether its attempt in progress (if any) still counts: running, or
    /// paused at a checkpoint of that attempt.
    fn attempt_counts(&self) -> bool {
        self.state == TaskState::Running
            || (self.state == TaskState::Paused && self.paused_from == Some(PausedFrom::Running))
    }
}

/// `Node::record`: no attempt in progress.
const NO_RECORD: u32 = u32::MAX;
/// `Node::record`: the first attempt is in progress and its record is kept
/// in the node (`start`, `lane`), not yet in `Core::spans`.
const RECORD_IN_NODE: u32 = u32::MAX - 1;
/// `Node::record`: the task completed in its first attempt, whose record is
/// the node's `start`, `end` and `lane`.
const DONE_IN_NODE: u32 = u32::MAX - 2;

/// One attempt of one task. A task's first attempt is not written here
/// when it begins: its node holds its start and worker, and only if it
/// ends otherwise than by completing on a runner's short path (it fails,
/// is cancelled, goes asynchronous and ends later, ...) is it written here
/// then ([`Core::open_record`]). A task that completes at its first attempt
/// (the common case) so writes no record at all, and the report makes
/// that attempt's from the node ([`Core::attempt_records`]).
///
/// The record of an attempt cancelled while it was running stays reachable
/// from its node (whose `record` keeps its index here, see
/// [`Core::close_cancelled`]) until the runner that took the attempt gives
/// it back and says whether, and when, it called the body
/// ([`Core::cancelled_attempt_reported`]).
#[derive(Clone)]
pub(crate) struct Span {
    pub(crate) node: u32,
    pub(crate) attempt: u32,
    pub(crate) start: Instant,
    pub(crate) end: Option<Instant>,
    /// The worker thread that started it (see `lane.rs`).
    pub(crate) lane: u32,
    pub(crate) outcome: Outcome,
    /// Whether its body was called while it counted: `false` for an
    /// attempt cancelled before its runner called the body (or called it
    /// only after the cancel), which then starts and ends at the cancel.
    pub(crate) ran: bool,
}

/// What the caller must do after transitions, outside the lock.
#[must_use]
pub(crate) struct Effects<T> {
    /// How many runners to spawn (already counted in `Core::runners`).
    pub(crate) runners: u32,
    /// Set by a runner for the transitions it makes at the lock (recording
    /// its batch) when it takes ready nodes itself right after: one fewer
    /// to ask a runner for (see [`Core::wake_runners`]). Not when it goes
    /// on with attempts of its batch first, which may take any time.
    pub(crate) runner_here: bool,
    /// Nodes whose attempt failed at this instant, due for a retry after
    /// this wait from then.
    pub(crate) retries: Vec<(u32, Instant, Duration)>,
    /// What the transitions let go of: drivers of cancelled running tasks
    /// to abort, and user values to drop (see "User values" in the module
    /// docs). One list for both, so that the test for work to do after a
    /// transition costs no more than it did with the drivers alone.
    pub(crate) release: Vec<Release<T>>,
    /// Some node reached a terminal state: wake waiters for tasks.
    pub(crate) changed: bool,
    /// Every node is now terminal: wake waiters for the whole run.
    pub(crate) finished: bool,
    /// Enough bodies retired for the run's waiter to drop (see
    /// [`Core::sweep_retired`]): wake it.
    pub(crate) sweep: bool,
}

impl<T> Default for Effects<T> {
    fn default() -> Self {
        Effects {
            runners: 0,
            runner_here: false,
            retries: Vec::new(),
            release: Vec::new(),
            changed: false,
            finished: false,
            sweep: false,
        }
    }
}

/// Something a transition let go of, for the caller to act on after the
/// lock (see [`Effects::release`]).
pub(crate) enum Release<T> {
    /// The driver of a cancelled running task: abort it.
    Abort(JoinHandle<()>),
    /// A user value, whose destructor must not run under the lock (see
    /// "User values" in the module docs): drop it.
    Drop(Dropped<T>),
    /// The waiters of a task's pause switch, whose phase the transition
    /// changed: drop it to wake them (their wakers are anyone's, and one
    /// may call back into the run from `wake`).
    Wake(DeferredWake),
    /// Arm the run's dispatch timer (see "Runners" in the module docs) for
    /// `at`, as timer number `number`, and hand it to the core
    /// ([`Core::dispatch_timer_made`]). Made outside the lock: a timer may
    /// be due as it is first polled, and then takes the lock.
    Arm { at: Instant, number: u64 },
    /// A dispatch timer no longer wanted: disarm it (its sleep leaves the
    /// executor's timer queue; that takes the queue's lock, not under
    /// ours).
    Disarm(Weak<dyn Disarm>),
}

/// A timer of the run (`RunTimer` in `run.rs`) that can be taken out of
/// its executor's timer queue before it is due.
pub(crate) trait Disarm: Send + Sync {
    /// Drops the timer's sleep: it will not fire.
    fn disarm(&self);
}

/// The run's dispatch timer as the core knows it (see "Runners" in the
/// module docs).
struct DispatchTimer {
    /// When it is due.
    at: Instant,
    /// Its number: a timer due finds whether it still stands by it.
    number: u64,
    /// The timer itself, once made ([`Core::dispatch_timer_made`]).
    timer: Option<Weak<dyn Disarm>>,
}

/// The user values of [`Release::Drop`], held only to be dropped: nothing
/// reads them.
pub(crate) enum Dropped<T> {
    /// The output of an attempt whose task was cancelled while it ran.
    Output(#[allow(dead_code)] Arc<T>),
    /// The error of a failed attempt, replaced by the task's next outcome
    /// (another attempt's, or the reason it was cancelled); or the error of
    /// an attempt whose task was cancelled while it ran.
    Error(#[allow(dead_code)] TaskError),
}

impl<T> Release<T> {
    fn error(error: TaskError) -> Self {
        Release::Drop(Dropped::Error(error))
    }
}

/// Everything an attempt needs, taken under the lock. Its `body` is lent:
/// whoever calls it gives it back ([`Core::give_back`]) at its next lock
/// acquisition. A runner's batch keeps its attempts field by field in
/// slots instead ([`Starts`], see `slots.rs`); whole `AttemptStart`s are
/// what a retry, a hand-off and the slots' slow paths move.
///
/// Laid out by hand (`repr(C)`): an attempt is moved whole, in 16-byte
/// pieces, and then read field by field; a 16-byte read across two of
/// those pieces cannot be served from the pending stores and waits for
/// them (with a stalled tuple in `poll_batch`, ~11 ns per attempt of a
/// chain, see BENCHMARKS.md). In this order the two-word
/// fields (the outputs' payload, the body, the timeout) each sit in one
/// piece (see the layout test).
#[repr(C)]
pub(crate) struct AttemptStart<T> {
    pub(crate) node: u32,
    pub(crate) attempt: u32,
    pub(crate) outputs: Outputs<T>,
    pub(crate) body: Body<T>,
    pub(crate) timeout: Option<Duration>,
}

/// What a body at a checkpoint does (see [`Core::checkpoint`]).
pub(crate) enum Checkpoint {
    /// Go on: no pause was ever requested for the task.
    Go,
    /// Wait on the task's pause switch while it is paused (it may have
    /// paused just now), then go on, or stop if cancelled.
    Wait(PauseControl),
    /// Stop: the body's attempt is over.
    Over,
}

/// What a driver that waited out a backoff does next (see
/// [`Core::retry_attempt`]).
pub(crate) enum Retry<T> {
    /// The next attempt.
    Start(AttemptStart<T>),
    /// Nothing yet: the task was paused between attempts. Wait at this
    /// control's checkpoint for the resume (or the cancel), then ask again.
    Paused(PauseControl),
    /// No attempt: the task has ended (or just did, with these effects).
    Over(Effects<T>),
}

/// Makes `change` on a task's pause switch, under the core's lock, with the
/// wake-up of its waiters left in `fx` for after the lock (see "User
/// values" in the module docs). Returns whether the phase changed.
fn switch<T>(control: &PauseControl, change: Change, fx: &mut Effects<T>) -> bool {
    let wake = control.change_deferred(change);
    let changed = wake.is_some();
    fx.release.extend(wake.map(Release::Wake));
    changed
}

/// Whether every value of `T` is alike and dropping one does nothing (as
/// `()`): then all tasks share one output (see [`Core::output`]).
pub(crate) fn is_unit<T>() -> bool {
    mem::size_of::<T>() == 0 && !mem::needs_drop::<T>()
}

/// The ready tasks. Until some task has a priority other than 0, a budget
/// is set or a task is paused, every ready task has the same effective
/// priority at any instant (aging adds the same to all, and more to the
/// older), so the ranked order is the ready order, but for tasks made
/// ready at the same instant: the ranked set puts those by id, the FIFO in
/// the order they were pushed (insertion order, as the module docs say).
/// A FIFO gives that order for a push and a pop, with no id to copy; it
/// keeps each node's ready time (moved to the node when the queue becomes
/// ranked), so that making a node ready writes nothing to the node but its
/// state. Nodes cancelled while queued stay in the FIFO and are skipped
/// when popped. After that the policy's [`ReadySet`] ranks them
/// (priorities with aging, within the budget).
enum Ready {
    Fifo(VecDeque<(u32, Instant)>),
    Ranked(ReadySet),
}

impl Ready {
    /// Queues `node`, node `i`, ready since `since`. (Always inlined up
    /// to the FIFO, into the release of dependents: as a call it cost ~15
    /// instructions per task.)
    #[inline(always)]
    fn push<T>(&mut self, i: u32, node: &Node<T>, cold: &mut [Cold], since: Instant) {
        match self {
            Ready::Fifo(queue) => queue.push_back((i, since)),
            Ready::Ranked(set) => Self::rank_in(set, i, node, cold, since),
        }
    }

    /// [`Ready::push`] into the ranked set.
    #[inline(never)]
    fn rank_in<T>(set: &mut ReadySet, i: u32, node: &Node<T>, cold: &mut [Cold], since: Instant) {
        let cold = &mut cold[i as usize];
        cold.rare_mut().ready_since = Some(since);
        set.insert(i, cold.id.clone(), node.options().priority, since);
    }

    fn len(&self) -> usize {
        match self {
            Ready::Fifo(queue) => queue.len(),
            Ready::Ranked(set) => set.len(),
        }
    }
}

pub(crate) struct Core<T> {
    pub(crate) nodes: Vec<Node<T>>,
    /// Each node's slow-path part, at the node's index (see [`Cold`]).
    pub(crate) cold: Vec<Cold>,
    /// Shared with reports taken after the run (copied on write if a task
    /// is added while a report holds it).
    pub(crate) index: Arc<HashMap<TaskId, u32>>,
    /// Ready tasks, behind `push_ready`/`pop_ready` (see [`Ready`]).
    ready: Ready,
    /// The aging settings, for when the ready queue becomes ranked.
    aging: (Duration, u32),
    budget: Budget,
    /// Whether any cap is set: without one, dispatch skips the budget.
    budgeted: bool,
    pub(crate) pause_timeout: Duration,
    /// Runners alive (see the module docs) and the most there may be.
    runners: u32,
    max_runners: u32,
    /// The dispatch timer armed (see "Runners" in the module docs), and how
    /// many were armed so far.
    dispatch_timer: Option<DispatchTimer>,
    dispatch_timers: u64,
    /// When the dispatch timers firing one after the other began, if
    /// nothing has asked for runners or started a task since: then the
    /// offer has only moved with time, which repeats it every aging
    /// interval, so a chain that has seen a whole interval go by without
    /// starting anything stops (see "Runners" in the module docs).
    quiet_since: Option<Instant>,
    /// How many nodes [`Core::reserve`] made room for, so that the ranked
    /// ready set, made later ([`Core::rank`]), makes room for as many.
    reserved: usize,
    /// The instant the last timer of that chain to fire was armed for: a
    /// runner that looks later may have passed over offers.
    quiet_fired: Option<Instant>,
    /// Nodes not in a terminal state.
    live: usize,
    stopped: bool,
    pub(crate) fail_fast: bool,
    pub(crate) spans: Vec<Span>,
    pub(crate) finished_at: Option<Instant>,
    /// Bodies of nodes that ended. Dropped by the run's waiter, a chunk at
    /// a time while the run goes on and the rest when it ends
    /// ([`Core::sweep_retired`]), outside the lock (dropping a body runs
    /// its captures' destructors, which may call into the run), and not
    /// one by one on the workers: they were allocated by the thread that
    /// built the graph (most often the waiter's), and freeing memory of
    /// another thread's arena costs the allocator several times a local
    /// free; nor on the runners' critical path at all.
    retired: Vec<Body<T>>,
    /// An empty list with room, for the waiter's exchanges of lists
    /// ([`Core::sweep_retired`]): made as the run starts
    /// ([`Core::prepare_run`]), so that the first exchange allocates
    /// nothing under the lock, and where the waiter leaves its list once
    /// the run has ended ([`Core::leave_list`]). So the waiter frees
    /// neither list on its way out: they go with the run, or when its
    /// report is first read ([`Core::take_empty_lists`]). Freeing a big
    /// block makes glibc's allocator first merge every small block freed
    /// since (the bodies the waiter just dropped), which took 26–212 µs
    /// (median 106) after the 100×100 lattice's last task, and 3.3–6.6 ms
    /// after a million-task chain's (BENCHMARKS.md).
    spare: Vec<Body<T>>,
    /// Bodies given back after the run ended, which its waiter can no
    /// longer take (see [`Core::give_back`]): the giver drops them, outside
    /// the lock ([`Core::take_late`]).
    late: Vec<Body<T>>,
    /// How many retired bodies make the run's waiter come for them
    /// ([`Core::sweep_retired`]); `usize::MAX` while no waiter is due.
    sweep_at: usize,
    /// The one output every completed task shares when `T` is unit-like
    /// ([`is_unit`]): set by the first to complete, and shared with the
    /// runners (which set it) and every attempt's inputs.
    pub(crate) unit: Arc<OnceLock<Arc<T>>>,
}

impl<T> Core<T> {
    pub(crate) fn new(config: &SchedulerConfig) -> Self {
        let budgeted = config.cpu_slots().is_some()
            || config.ram_soft_cap().is_some()
            || config.vram_soft_cap().is_some()
            || !config.resources().is_empty();
        let mut core = Core {
            nodes: Vec::new(),
            cold: Vec::new(),
            index: Arc::default(),
            ready: Ready::Fifo(VecDeque::new()),
            aging: (config.aging_interval(), config.aging_boost()),
            budget: Budget::new(config),
            budgeted,
            pause_timeout: config.pause_timeout(),
            runners: 0,
            max_runners: default_runners(),
            dispatch_timer: None,
            dispatch_timers: 0,
            quiet_since: None,
            reserved: 0,
            quiet_fired: None,
            live: 0,
            stopped: false,
            fail_fast: false,
            spans: Vec::new(),
            finished_at: None,
            retired: Vec::new(),
            spare: Vec::new(),
            late: Vec::new(),
            sweep_at: usize::MAX,
            unit: Arc::default(),
        };
        if budgeted {
            core.rank();
        }
        core
    }
}

/// The most attempts a runner begins per lock acquisition (see
/// [`Core::next_attempts`]). Bigger batches share the lock, the clock
/// reading under it and the loop around them among more tasks (32 rather
/// than 8: ~30 instructions less per lattice node); a batch that runs long
/// hands its rest off anyway (see `run.rs`).
pub(crate) const MAX_BATCH: usize = 32;

/// The shortest wait the dispatch timer is armed for (see "Runners" in the
/// module docs): it bounds its firings to 1,000 a second however short the
/// aging interval. With an aging interval of at least this, a window
/// shorter than this in which aging alone lets a task start may be passed
/// over by firings on time, and with nothing else happening the task then
/// waits for some other event: the chain of firings stops after one
/// interval, and firings on time pass over the same windows each interval.
/// With a shorter aging interval, the timer is armed for a window's start,
/// and a window whose firing's runner comes after its end is passed over
/// likewise; so, with either, is a window past the 32 steps a runner's
/// search looks at (see "Runners").
const MIN_DISPATCH_WAIT: Duration = Duration::from_millis(1);

/// How many retired bodies the run's waiter takes at a time while the run
/// goes on (see [`Core::sweep_retired`]). Each sweep costs the runner that
/// asks for it a wake-up of the waiter, most often asleep: 10–12 µs of the
/// runner's time on a VM whose idle vCPUs halt (one IPI through the
/// hypervisor), ~10 ns per body at 1024 a chunk. At 4096 the lattice
/// and the chain ran 10–12 ns per node faster (BENCHMARKS.md); a waiter then
/// holds up to two chunks of bodies, and drops up to one after the run.
pub(crate) const SWEEP_CHUNK: usize = 4096;

/// One runner per core until the run starts, when [`Core::prepare_run`]
/// learns how many workers its executor has.
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

    /// The slow-path part of node `i` (see [`Cold`]).
    pub(crate) fn cold(&self, i: u32) -> &Cold {
        &self.cold[i as usize]
    }

    /// The rare fields of node `i`, allocated on first use.
    fn rare_mut(&mut self, i: u32) -> &mut Rare {
        self.cold[i as usize].rare_mut()
    }

    /// The id of node `i`.
    pub(crate) fn id(&self, i: u32) -> &TaskId {
        &self.cold(i).id
    }

    /// Validates and inserts a batch whole (taking the tasks out of
    /// `tasks`), or changes nothing. `running` says whether a run is under
    /// way (then a finished run refuses, and ready nodes get runners). A
    /// refused batch stays in `tasks`, for the caller to drop outside the
    /// lock (see "User values" in the module docs).
    pub(crate) fn add(
        &mut self,
        tasks: &mut Vec<Task<T>>,
        running: bool,
    ) -> Result<Effects<T>, GraphError> {
        let plan = self.check(tasks, running)?;
        if tasks.iter().any(|t| t.priority != 0) {
            self.rank();
        }
        let tasks = mem::take(tasks);
        let mut slots: Vec<Option<Task<T>>> = tasks.into_iter().map(Some).collect();
        let mut node_of = vec![0u32; slots.len()];
        let mut effects = Effects::default();
        self.nodes.reserve(slots.len());
        self.cold.reserve(slots.len());
        if let Ready::Ranked(set) = &mut self.ready {
            set.reserve_nodes(self.nodes.len() + slots.len());
        }
        let now = Instant::now();
        Arc::make_mut(&mut self.index).reserve(slots.len());
        for &member in &plan.order {
            let deps = plan.deps[member].iter().map(|d| match *d {
                Dep::Existing(n) => n,
                Dep::Batch(p) => node_of[p],
            });
            let deps: Edges = deps.collect();
            let task = slots[member].take().expect("each member is inserted once");
            node_of[member] = self.insert(task, deps, now, &mut effects);
        }
        if running {
            self.wake_runners(&mut effects);
        }
        Ok(effects)
    }

    /// Whether a batch may be added (see [`Core::add`]): its plan, or why
    /// not.
    fn check(&self, tasks: &[Task<T>], running: bool) -> Result<Plan, GraphError> {
        if running && self.is_done() {
            return Err(GraphError::Finished);
        }
        let pairs: Vec<(&TaskId, &[TaskId])> =
            tasks.iter().map(|t| (&t.id, t.deps.as_slice())).collect();
        let plan = validate(&self.index, &pairs)?;
        if let Some(task) = tasks.iter().find(|t| t.timeout == Some(Duration::ZERO)) {
            return Err(GraphError::ZeroTimeout {
                task: task.id.clone(),
            });
        }
        for task in tasks {
            self.budget.check_submission(&task.id, &task.demand)?;
        }
        Ok(plan)
    }

    /// Reserves room for `additional` more nodes in the tables that grow
    /// with the graph: the nodes, their slow-path parts, the index of ids,
    /// the ready queue, and the bodies retired at the end.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.nodes.reserve(additional);
        self.cold.reserve(additional);
        Arc::make_mut(&mut self.index).reserve(additional);
        match &mut self.ready {
            Ready::Fifo(queue) => queue.reserve(additional),
            Ready::Ranked(set) => set.reserve_nodes(self.nodes.len() + additional),
        }
        self.retired.reserve(self.nodes.len() + additional);
        self.reserved = self.reserved.max(self.nodes.len() + additional);
    }

    fn insert(
        &mut self,
        task: Task<T>,
        deps: Edges,
        now: Instant,
        effects: &mut Effects<T>,
    ) -> u32 {
        let me = u32::try_from(self.nodes.len()).expect("more than u32::MAX tasks");
        let (state, unmet, error) = self.initial_state(&deps);
        for &d in deps.iter() {
            self.node_mut(d).dependents.push(me);
        }
        Arc::make_mut(&mut self.index).insert(task.id.clone(), me);
        let has_extras = error.is_some();
        let rare = error.map(|error| {
            Box::new(Rare {
                error: Some(error),
                ..Rare::default()
            })
        });
        let body = if state.is_terminal() {
            // Retired, as the body of a node that ended: not dropped here,
            // under the lock, halfway through the insertion.
            self.retired.push(task.body);
            None
        } else {
            Some(task.body)
        };
        self.nodes.push(Node {
            body,
            timeout: task.timeout,
            options: Options::of(task.retry, task.priority, task.demand),
            n_deps: u32::try_from(deps.len()).expect("fewer than u32::MAX dependencies"),
            dependents: Edges::default(),
            unmet,
            state,
            attempts: 0,
            start: None,
            end: None,
            has_extras,
            output: None,
            record: NO_RECORD,
            lane: 0,
            holds_budget: false,
            paused_from: None,
        });
        self.cold.push(Cold {
            id: task.id,
            deps,
            rare,
        });
        if state.is_terminal() {
            effects.changed = true;
        } else {
            self.live += 1;
        }
        if state == TaskState::Ready {
            self.push_ready(me, now);
        }
        me
    }

    /// The state of a new node, given the states of its dependencies
    /// (completed deps count as met, a failed one dooms it).
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
        match self.cold(i).error() {
            Some(TaskError::UpstreamFailed(root)) => root.clone(),
            _ => self.id(i).clone(),
        }
    }

    /// The reason a dependent of cancelled node `i` is cancelled.
    fn inherited_cancel(&self, i: u32) -> CancelReason {
        match self.cold(i).error() {
            Some(TaskError::Cancelled(CancelReason::Upstream(root))) => {
                CancelReason::Upstream(root.clone())
            }
            Some(TaskError::Cancelled(CancelReason::Stopped)) => CancelReason::Stopped,
            Some(TaskError::Cancelled(CancelReason::FailFast(f))) => {
                CancelReason::FailFast(f.clone())
            }
            _ => CancelReason::Upstream(self.id(i).clone()),
        }
    }

    /// Gives the run's waiter (`RunHandle::wait_all`) the bodies retired so
    /// far, to drop outside the lock while the run goes on, in exchange
    /// for `spare` (its list emptied, to fill next; on its first call, the
    /// core's own [`Core::spare`]), and has it called back
    /// ([`Effects::sweep`]) once a runner records a batch with
    /// [`SWEEP_CHUNK`] or more retired (see [`Core::ask_sweep`]). Once the
    /// run has ended, it takes every body, and hands its list back with
    /// [`Core::leave_list`] once it has dropped them. Bodies retired with
    /// no waiter armed wait for the next call.
    pub(crate) fn sweep_retired(&mut self, mut spare: Vec<Body<T>>) -> Vec<Body<T>> {
        debug_assert!(spare.is_empty());
        if spare.capacity() == 0 {
            spare = mem::take(&mut self.spare);
        }
        if self.live == 0 {
            self.sweep_at = usize::MAX;
        } else {
            if spare.capacity() == 0 {
                // A second waiter's first call.
                spare.reserve(self.exchange_room());
            }
            self.sweep_at = SWEEP_CHUNK;
        }
        mem::replace(&mut self.retired, spare)
    }

    /// The room a list the waiter hands over needs: a chunk, and what
    /// retires while the waiter drops the one before it.
    fn exchange_room(&self) -> usize {
        self.live.min(2 * SWEEP_CHUNK)
    }

    /// The waiter's list, emptied, once the run has ended (see
    /// [`Core::spare`]): the core keeps the larger of it and its own spare
    /// list, and returns the other (most often one that never had room),
    /// for the caller to drop outside the lock.
    pub(crate) fn leave_list(&mut self, mut list: Vec<Body<T>>) -> Vec<Body<T>> {
        debug_assert!(list.is_empty());
        if list.capacity() > self.spare.capacity() {
            mem::swap(&mut list, &mut self.spare);
        }
        list
    }

    /// Asks the waiter to come for the retired bodies if enough have
    /// piled up since it last took them (see [`Core::sweep_retired`]).
    #[inline]
    pub(crate) fn ask_sweep(&mut self, fx: &mut Effects<T>) {
        if self.retired.len() >= self.sweep_at {
            self.sweep_at = usize::MAX;
            fx.sweep = true;
        }
    }

    /// The lists of retired bodies, if the run has ended and they are
    /// empty (its waiter has dropped every body): for its report to free
    /// when it is first read (see [`Core::spare`]).
    pub(crate) fn take_empty_lists(&mut self) -> Option<[Vec<Body<T>>; 2]> {
        let ended = self.live == 0 && self.retired.is_empty();
        ended.then(|| [mem::take(&mut self.retired), mem::take(&mut self.spare)])
    }

    /// Whether a body was given back after the run ended (see
    /// [`Core::take_late`]).
    #[inline]
    pub(crate) fn has_late(&self) -> bool {
        !self.late.is_empty()
    }

    /// The bodies given back after the run ended (see [`Core::give_back`]),
    /// for the caller to drop outside the lock. (Empty, and no allocation,
    /// but for attempts cancelled while their body was being called.)
    #[inline]
    pub(crate) fn take_late(&mut self) -> Vec<Body<T>> {
        mem::take(&mut self.late)
    }

    /// The ids of node `i` and its dependencies, for an attempt's inputs
    /// (see [`Names`]).
    pub(crate) fn names_of(&mut self, i: u32) -> Arc<Names> {
        if let Some(names) = self.cold(i).rare().and_then(|r| r.names.as_ref()) {
            return Arc::clone(names);
        }
        let cold = self.cold(i);
        let names = Arc::new(Names {
            id: cold.id.clone(),
            dep_ids: cold.deps.iter().map(|&d| self.id(d).clone()).collect(),
        });
        self.rare_mut(i).names = Some(Arc::clone(&names));
        names
    }

    /// The output of node `i`, if it completed.
    pub(crate) fn output(&self, i: u32) -> Option<&Arc<T>> {
        let node = self.node(i);
        match &node.output {
            Some(out) => Some(out),
            None if node.state == TaskState::Completed => self.unit.get(),
            None => None,
        }
    }

    /// Gives back the body lent to an attempt of node `i` (see
    /// [`AttemptStart`]); retired if the node ended meanwhile. A body given
    /// back after the whole run ended (its task was cancelled while the
    /// body was being called, as a sync body can be to its return) is
    /// late: the run's waiter may have taken the retired bodies already,
    /// and it would otherwise live as long as the run's report.
    #[inline]
    pub(crate) fn give_back(&mut self, i: u32, body: Body<T>) {
        let node = self.node_mut(i);
        if node.state.is_terminal() {
            if self.live == 0 {
                self.late.push(body);
            } else {
                self.retired.push(body);
            }
        } else {
            debug_assert!(node.body.is_none(), "one attempt at a time");
            node.body = Some(body);
        }
    }

    /// Called once as the run starts, on an executor of `workers` worker
    /// threads (`None`: unknown): allows one runner per worker and per core
    /// (a runner keeps one worker busy; more would only take turns on the
    /// same workers and meet on the lock), and sizes the list of retired
    /// bodies for the tasks there are, so that it does not grow (and copy)
    /// while tasks run, and the spare list the waiter takes in exchange
    /// for the first bodies retired ([`Core::spare`]). (`spans` is not
    /// sized: most tasks write no record there.) A run with no task
    /// finishes as it starts, at `t0`: no task's end will say when.
    pub(crate) fn prepare_run(&mut self, workers: Option<usize>, t0: Instant, fx: &mut Effects<T>) {
        if self.live == 0 {
            self.finished_at = Some(t0);
        }
        if let Some(workers) = workers {
            let workers = u32::try_from(workers).unwrap_or(u32::MAX).max(1);
            self.max_runners = self.max_runners.min(workers);
        }
        self.retired.reserve(self.nodes.len());
        self.spare.reserve(self.exchange_room());
        self.wake_runners(fx);
    }

    /// Puts node `i` in the ready queue, ready since `since`.
    #[inline]
    fn push_ready(&mut self, i: u32, since: Instant) {
        self.ready
            .push(i, &self.nodes[i as usize], &mut self.cold, since);
    }

    /// The ready node to start next, if one fits the budget; with a FIFO
    /// queue, the oldest one still ready.
    fn pop_ready(&mut self, now: Instant) -> Option<u32> {
        match &mut self.ready {
            Ready::Fifo(queue) => {
                let nodes = &self.nodes;
                std::iter::from_fn(|| queue.pop_front())
                    .map(|(i, _)| i)
                    .find(|&i| nodes[i as usize].state == TaskState::Ready)
            }
            Ready::Ranked(set) => {
                let (nodes, budget, budgeted) = (&self.nodes, &self.budget, self.budgeted);
                let fits =
                    |n: u32| !budgeted || budget.check(&nodes[n as usize].options().demand).is_ok();
                set.pop_best(now, fits)
            }
        }
    }

    /// Takes node `i` out of the ready queue (a FIFO skips it when popped).
    /// From the ranked set, it also asks for runners: tasks behind it may
    /// now be offered (one ranked past the lookahead, or held back by a
    /// reservation for it), and the runners may all have left, having found
    /// nothing to offer.
    fn unready(&mut self, i: u32, fx: &mut Effects<T>) {
        if let Ready::Ranked(set) = &mut self.ready {
            set.remove(i);
            self.wake_runners(fx);
        }
    }

    /// Moves to the ranked ready set, for good: the first task with a
    /// priority other than 0, a budget, or a pause (a resumed task keeps its
    /// aged priority) needs it.
    fn rank(&mut self) {
        let Ready::Fifo(queue) = &mut self.ready else {
            return;
        };
        let queue = mem::take(queue);
        let mut set = ReadySet::new(self.aging.0, self.aging.1);
        set.reserve_nodes(self.nodes.len().max(self.reserved));
        for (i, since) in queue {
            let node = &self.nodes[i as usize];
            if node.state == TaskState::Ready {
                let cold = &mut self.cold[i as usize];
                cold.rare_mut().ready_since = Some(since);
                set.insert(i, cold.id.clone(), node.options().priority, since);
            }
        }
        self.ready = Ready::Ranked(set);
    }

    /// Asks for a runner per ready node that no runner is about to take,
    /// while fewer than `max_runners` are alive (see the module docs).
    ///
    /// Only a runner at the lock ([`Effects::runner_here`]) is about to
    /// take one: it takes ready nodes next. Every other runner alive is
    /// polling a batch, and a body may take any time, so it counts as busy.
    /// (Counting it as one that will come back left a node made ready by a
    /// driver, say, waiting for a long sync body on one worker while
    /// another was idle.) A runner asked for that finds nothing, because a
    /// runner came back first, only leaves.
    #[inline]
    pub(crate) fn wake_runners(&mut self, fx: &mut Effects<T>) {
        // Something changed: the dispatch timers look for a whole interval
        // again.
        self.quiet_since = None;
        let queued = u32::try_from(self.ready.len()).unwrap_or(u32::MAX);
        let unclaimed = queued.saturating_sub(u32::from(fx.runner_here));
        let wanted = unclaimed.min(self.max_runners.saturating_sub(self.runners));
        self.runners += wanted;
        fx.runners += wanted;
    }

    /// For a runner: begins the attempts of the next ready nodes into
    /// `batch` (see [`MAX_BATCH`]). Returns `false` if none is ready (that
    /// fits the budget): the runner must leave, and is no longer counted;
    /// if aging may start one of those left later, the dispatch timer is
    /// armed for then, in `fx` (see "Runners" in the module docs).
    ///
    /// With the FIFO queue a runner takes its share of the queue, up to
    /// [`MAX_BATCH`], so that two runners do not meet on the lock for every
    /// node; the ranked set gives one node at a time, since each pick
    /// depends on the budget left and on tasks that become ready meanwhile.
    pub(crate) fn next_attempts(
        &mut self,
        now: Instant,
        lane: u32,
        batch: &mut Starts<T>,
        fx: &mut Effects<T>,
    ) -> bool {
        if let Ready::Fifo(queue) = &mut self.ready {
            // The FIFO (never with a budget: see `Core::new`) in a loop of
            // its own, which borrows the queue, the nodes and the records
            // apart, so that the queue is not read again from the core
            // after each attempt begun.
            let share = (queue.len() / self.runners.max(1) as usize).clamp(1, MAX_BATCH);
            let (nodes, cold, spans) = (&mut self.nodes, &self.cold, &mut self.spans);
            while batch.len() < share {
                let Some((i, _)) = queue.pop_front() else {
                    break;
                };
                // Nodes cancelled while queued are skipped.
                if nodes[i as usize].state == TaskState::Ready {
                    batch.push_with(|slot| begin_attempt(nodes, cold, spans, i, now, lane, slot));
                }
            }
            if batch.is_empty() {
                self.runners -= 1;
            }
            return !batch.is_empty();
        }
        // The ranked set: one node at a time.
        while batch.is_empty() {
            let Some(i) = self.pop_ready(now) else { break };
            debug_assert_eq!(self.node(i).state, TaskState::Ready);
            if self.budgeted {
                let demand = &self.nodes[i as usize].options().demand;
                let taken = self.budget.try_acquire(demand);
                taken.expect("it fit a moment ago, under the same lock");
                self.node_mut(i).holds_budget = true;
            }
            let start = self.start_attempt(i, now, lane);
            batch.push(start);
            self.quiet_since = None;
        }
        if batch.is_empty() {
            self.runners -= 1;
            if self.aging.1 > 0 && self.ready.len() > 0 {
                self.arm_dispatch_timer(now, fx);
            }
        }
        !batch.is_empty()
    }

    /// Nothing in the ranked set could start at `now`: arms the dispatch
    /// timer for when aging may change that, unless one armed is due by
    /// then (see "Runners" in the module docs).
    #[cold]
    #[inline(never)]
    fn arm_dispatch_timer(&mut self, now: Instant, fx: &mut Effects<T>) {
        let Ready::Ranked(set) = &self.ready else {
            return;
        };
        let (nodes, budget, budgeted) = (&self.nodes, &self.budget, self.budgeted);
        let fits = |n: u32| !budgeted || budget.check(&nodes[n as usize].options().demand).is_ok();
        let Some(at) = set.next_reorder(now, fits) else {
            return;
        };
        // Not sooner than this: with a tiny aging interval the offer can
        // change every few nanoseconds, and each firing takes the lock.
        let Some(soonest) = now.checked_add(MIN_DISPATCH_WAIT) else {
            return;
        };
        // A firing whose runner looks after the instant it was armed for
        // may have passed over a window of `MIN_DISPATCH_WAIT` or more in
        // which aging lets a task start (the firing may fall late in it,
        // the runner later still): it comes back within an interval from
        // now. Not with an interval shorter than that: the offer repeats
        // every interval, so a window lasting a whole one lasts for ever
        // (the runner would not have passed it over), and looking for one
        // would peek at every step of `MIN_DISPATCH_WAIT`, under the lock.
        let mut passed = None;
        if let (Some(_), Some(fired)) = (self.quiet_since, self.quiet_fired) {
            let until = fired.checked_add(self.aging.0).map_or(now, |u| u.min(now));
            if self.aging.0 >= MIN_DISPATCH_WAIT && now > fired {
                passed = set.starts_for(fired, until, MIN_DISPATCH_WAIT, fits);
            }
        }
        let at = if let Some(began) = passed {
            // Aim at the window's return, not at the next step: a runner
            // that comes as late as this one each time could otherwise pass
            // over it every interval. It lasts `MIN_DISPATCH_WAIT` from
            // there, so a runner less late than that starts the task.
            self.quiet_since = Some(now);
            let wait = soonest.saturating_duration_since(began).as_nanos();
            let intervals = wait.div_ceil(self.aging.0.as_nanos());
            let back = u32::try_from(intervals)
                .ok()
                .and_then(|k| self.aging.0.checked_mul(k))
                .and_then(|d| began.checked_add(d));
            let Some(at) = back else {
                return;
            };
            at
        } else if self.aging.0 < MIN_DISPATCH_WAIT {
            // Firings that far apart see one offer of the interval each
            // (the same one each time if the interval divides the wait):
            // aim at the first that starts a task; none if no offer of a
            // whole interval does, so time alone never will (or none of
            // the first steps looked at does: see `first_start`).
            let until = soonest.checked_add(self.aging.0).unwrap_or(soonest);
            let Some(at) = set.first_start(soonest, until, fits) else {
                return;
            };
            at
        } else {
            at.max(soonest)
        };
        // A chain of firings that has seen every offer time alone makes
        // (one aging interval) start nothing would see them again (but for
        // a window passed over, aimed at above). With a shorter interval,
        // a chain aims at windows (above), shorter than
        // `MIN_DISPATCH_WAIT`: it stops after one such wait.
        let period_end = self
            .quiet_since
            .and_then(|since| since.checked_add(self.aging.0.max(MIN_DISPATCH_WAIT)));
        if passed.is_none() && period_end.is_some_and(|end| at >= end) {
            return;
        }
        if self.dispatch_timer.as_ref().is_some_and(|t| t.at <= at) {
            return; // the runners it asks for look again first
        }
        self.dispatch_timers += 1;
        let number = self.dispatch_timers;
        let armed = DispatchTimer {
            at,
            number,
            timer: None,
        };
        self.disarm_dispatch_timer(fx);
        self.dispatch_timer = Some(armed);
        fx.release.push(Release::Arm { at, number });
    }

    /// Dispatch timer `number`, armed by [`Release::Arm`], is made: keeps
    /// it if it still stands and returns `true`; `false` if it no longer
    /// does (another was armed, or the run was stopped or finished
    /// meanwhile), and the caller drops it unarmed.
    pub(crate) fn dispatch_timer_made(&mut self, number: u64, timer: Weak<dyn Disarm>) -> bool {
        match &mut self.dispatch_timer {
            Some(armed) if armed.number == number => {
                armed.timer = Some(timer);
                true
            }
            _ => false,
        }
    }

    /// Dispatch timer `number` is due (`fired`), or no timer queue took it:
    /// if it still stands, it is forgotten and, if due, asks for runners
    /// (they find what aging changed).
    pub(crate) fn dispatch_timer_due(&mut self, number: u64, fired: bool, fx: &mut Effects<T>) {
        if self
            .dispatch_timer
            .as_ref()
            .is_some_and(|t| t.number == number)
        {
            let armed = self.dispatch_timer.take().map(|t| t.at);
            if fired {
                let quiet_since = self.quiet_since.or(armed);
                self.wake_runners(fx);
                self.quiet_since = quiet_since;
                self.quiet_fired = armed;
            }
        }
    }

    /// Forgets the dispatch timer, disarming it after the lock (in `fx`).
    fn disarm_dispatch_timer(&mut self, fx: &mut Effects<T>) {
        let timer = self.dispatch_timer.take().and_then(|t| t.timer);
        fx.release.extend(timer.map(Release::Disarm));
    }

    /// The last node ended, at `at`: the run finished.
    #[cold]
    #[inline(never)]
    fn finish(&mut self, at: Instant, fx: &mut Effects<T>) {
        self.finished_at = Some(at);
        fx.finished = true;
        self.disarm_dispatch_timer(fx);
    }

    /// Whether node `i`'s attempt in progress still counts (it was not
    /// cancelled meanwhile).
    pub(crate) fn still_running(&self, i: u32) -> bool {
        self.node(i).attempt_counts()
    }

    /// The attempt in progress of node `i` actually began at `at`: a runner
    /// begins a batch of attempts under the lock and polls them one after
    /// the other. `ended`: when the body's call returned, if the runner
    /// polled the attempt to its end. If the task was cancelled meanwhile,
    /// settles the attempt's record (see
    /// [`Core::cancelled_attempt_reported`]).
    #[inline]
    pub(crate) fn began_at(&mut self, i: u32, at: Instant, ended: Option<Instant>) {
        let node = self.node_mut(i);
        let record = node.record;
        if record == NO_RECORD || record == DONE_IN_NODE {
            return;
        }
        if node.state == TaskState::Cancelled {
            self.cancelled_attempt_reported(i, Some((at, ended)));
            return;
        }
        if node.attempts == 1 {
            node.start = Some(at);
        }
        if record != RECORD_IN_NODE {
            self.spans[record as usize].start = at;
        }
    }

    /// The attempt in progress of node `i` is run by the thread of `lane`
    /// rather than the runner that began it: a hand-off (see `run.rs`).
    /// Its record names the thread that runs it, so that a worker's row
    /// of the timeline holds only what that worker ran.
    pub(crate) fn run_on(&mut self, i: u32, lane: u32) {
        let node = self.node_mut(i);
        match node.record {
            NO_RECORD | DONE_IN_NODE => {}
            RECORD_IN_NODE => node.lane = lane,
            s => self.spans[s as usize].lane = lane,
        }
    }

    /// The index in `spans` of the record of node `i`'s attempt in
    /// progress, if any, writing it there first if the node kept it.
    fn open_record(&mut self, i: u32) -> Option<u32> {
        let node = self.node(i);
        match node.record {
            NO_RECORD | DONE_IN_NODE => None,
            RECORD_IN_NODE => {
                let s = u32::try_from(self.spans.len()).expect("more than u32::MAX attempts");
                let span = Span {
                    node: i,
                    attempt: node.attempts,
                    start: node.start.expect("an attempt in progress has begun"),
                    end: None,
                    lane: node.lane,
                    outcome: Outcome::Running,
                    ran: true,
                };
                self.spans.push(span);
                self.node_mut(i).record = s;
                Some(s)
            }
            s => Some(s),
        }
    }

    /// Every attempt's record, in the order the attempts began: those in
    /// `spans` and those kept in the nodes (see [`Span`]).
    pub(crate) fn attempt_records(&self) -> Vec<Span> {
        let mut records = self.spans.clone();
        for (node, i) in self.nodes.iter().zip(0..) {
            let (end, outcome) = match node.record {
                DONE_IN_NODE => (node.end, Outcome::Completed),
                RECORD_IN_NODE => (None, Outcome::Running),
                _ => continue,
            };
            records.push(Span {
                node: i,
                attempt: 1,
                start: node.start.expect("an attempt that began has a start"),
                end,
                lane: node.lane,
                outcome,
                ran: true,
            });
        }
        // Stable: records of attempts that began at the same instant keep
        // the order they were written in.
        records.sort_by_key(|r| r.start);
        records
    }

    /// Keeps the driver's handle so the task can be aborted; gives it back if
    /// the task was cancelled meanwhile (the caller aborts it). A handle of a
    /// task that already finished is dropped, which detaches it: its driver
    /// may still be releasing dependents and must not be aborted.
    pub(crate) fn attach(&mut self, i: u32, handle: JoinHandle<()>) -> Option<JoinHandle<()>> {
        match self.node(i).state {
            TaskState::Running | TaskState::Paused => {
                self.node_mut(i).has_extras = true;
                self.rare_mut(i).handle = Some(handle);
                None
            }
            TaskState::Cancelled => Some(handle),
            _ => None,
        }
    }

    /// Starts the next attempt of node `i`, which waited to retry, if it is
    /// still meant to run; otherwise says what to do instead. A retry due
    /// after `stop` is cancelled, like a task that was ready when the run
    /// stopped; one due while the task is paused (it was paused between
    /// attempts, see [`Core::pause`]) waits for its resume.
    pub(crate) fn retry_attempt(&mut self, i: u32, now: Instant, lane: u32) -> Retry<T> {
        let node = self.node(i);
        if node.state == TaskState::Paused && node.paused_from == Some(PausedFrom::Running) {
            if let Some(control) = self.control(i) {
                return Retry::Paused(control);
            }
        }
        if node.state != TaskState::Running {
            return Retry::Over(Effects::default());
        }
        if self.stopped {
            return Retry::Over(self.cancel(i, CancelReason::Stopped, now));
        }
        Retry::Start(self.start_attempt(i, now, lane))
    }

    /// Marks node `i` running, opens its attempt's span and gathers its
    /// inputs (see [`begin_attempt`]).
    #[inline(always)]
    fn start_attempt(&mut self, i: u32, now: Instant, lane: u32) -> AttemptStart<T> {
        let mut slot = StartSlot::empty();
        begin_attempt(
            &mut self.nodes,
            &self.cold,
            &mut self.spans,
            i,
            now,
            lane,
            &mut slot,
        );
        slot.take()
    }

    /// Records how an attempt of node `i` ended. Returns the wait before the
    /// next attempt if the node is to be retried.
    /// An `Ok(None)` is the output of a unit-like `T`, which the runner
    /// put in [`Core::unit`].
    #[inline]
    pub(crate) fn finish_attempt(
        &mut self,
        i: u32,
        result: Result<Option<Arc<T>>, TaskError>,
        now: Instant,
        fx: &mut Effects<T>,
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
    #[inline]
    fn close_span(&mut self, i: u32, now: Instant, outcome: Outcome) {
        if let Some(s) = self.open_record(i) {
            self.node_mut(i).record = NO_RECORD;
            let span = &mut self.spans[s as usize];
            span.end = Some(now);
            span.outcome = outcome;
        }
    }

    /// Closes the record of node `i`'s attempt in progress, if any, at its
    /// cancel (`now`). The record counts the attempt from when it was taken
    /// (or from the body's call, if its runner has said when that was), but
    /// its runner may not have called the body yet (a runner takes a batch
    /// of attempts and calls their bodies one after the other), and may
    /// call it only after the cancel: the node keeps the record's index
    /// for [`Core::cancelled_attempt_reported`] to settle it when the runner
    /// gives the attempt back. (The `record` of a node that ended otherwise
    /// is [`NO_RECORD`] or [`DONE_IN_NODE`].)
    fn close_cancelled(&mut self, i: u32, now: Instant) {
        if let Some(s) = self.open_record(i) {
            let span = &mut self.spans[s as usize];
            span.end = Some(now);
            span.outcome = Outcome::Cancelled;
        }
    }

    /// The runner that took the attempt of node `i` gives it back after
    /// the task was cancelled ([`Core::close_cancelled`]), saying when it
    /// called the body and when that call returned (if it did), or `None`:
    /// it never called it. An attempt whose body was called before the
    /// cancel counts from the call to the cancel (or to the call's return,
    /// if earlier). One whose body was never called, or only after the
    /// cancel, did not run: it takes no time (it starts and ends at the
    /// cancel) and `ran` is false; a task whose first attempt it was has
    /// no start and no end, as a task that never started. Nothing to do if
    /// the record was settled already. (An attempt that no runner holds,
    /// or one gone asynchronous after its runner said when it called the
    /// body, is never reported: its record stays as the cancel closed it.
    /// A retry's driver reports when it called the body, as a runner does.)
    #[cold]
    pub(crate) fn cancelled_attempt_reported(
        &mut self,
        i: u32,
        called: Option<(Instant, Option<Instant>)>,
    ) {
        let node = &mut self.nodes[i as usize];
        let s = node.record;
        if node.state != TaskState::Cancelled || s >= DONE_IN_NODE {
            return;
        }
        node.record = NO_RECORD;
        let span = &mut self.spans[s as usize];
        let cancelled_at = span.end.expect("closed at the cancel");
        match called {
            Some((began, ended)) if began < cancelled_at => {
                span.start = began;
                span.end = Some(ended.map_or(cancelled_at, |e| e.min(cancelled_at)));
                if span.attempt == 1 {
                    node.start = Some(began);
                }
            }
            _ => {
                span.start = cancelled_at;
                span.ran = false;
                if span.attempt == 1 {
                    node.start = None;
                    node.end = None;
                }
            }
        }
    }

    /// Moves node `i` into terminal `state`.
    #[inline]
    fn settle(
        &mut self,
        i: u32,
        state: TaskState,
        error: Option<TaskError>,
        now: Instant,
        fx: &mut Effects<T>,
    ) {
        if self.node(i).state == TaskState::Ready {
            self.unready(i, fx);
        }
        let released = self.release_budget(i);
        let (node, cold) = (&mut self.nodes[i as usize], &mut self.cold[i as usize]);
        debug_assert!(!node.state.is_terminal());
        if node.has_extras || error.is_some() {
            // (Without extras, the rare fields hold no error, handle or
            // control.)
            let rare = cold.rare_mut();
            if let Some(control) = rare.control.take() {
                // Wakes a body waiting at a checkpoint (its driver is aborted too).
                switch(&control, Change::Cancel, fx);
            }
            if let Some(h) = rare.handle.take() {
                // Our own driver is finishing: detach. Someone else's: abort.
                if state == TaskState::Cancelled {
                    fx.release.push(Release::Abort(h));
                }
            }
            let replaced = mem::replace(&mut rare.error, error);
            fx.release.extend(replaced.map(Release::error));
            node.has_extras = true;
        }
        node.paused_from = None;
        node.state = state;
        if node.start.is_some() {
            node.end = Some(now);
        }
        let body = node.body.take();
        self.retired.extend(body);
        self.live -= 1;
        fx.changed = true;
        if self.live == 0 {
            self.finish(now, fx);
        }
        if released {
            self.wake_runners(fx);
        }
    }

    /// Gives back node `i`'s demand if it holds one; says whether it did.
    #[inline]
    fn release_budget(&mut self, i: u32) -> bool {
        let node = &mut self.nodes[i as usize];
        if !std::mem::take(&mut node.holds_budget) {
            return false;
        }
        self.budget.release(&node.options().demand);
        true
    }

    /// The attempt of node `i` produced `output`. Releases dependents by
    /// decrementing their counters: O(out-degree).
    #[inline]
    fn complete(&mut self, i: u32, output: Option<Arc<T>>, now: Instant, fx: &mut Effects<T>) {
        if !self.node(i).attempt_counts() {
            // Cancelled while the attempt ran: the output is dropped, by
            // the caller.
            let output = output.map(|out| Release::Drop(Dropped::Output(out)));
            fx.release.extend(output);
            return;
        }
        self.close_span(i, now, Outcome::Completed);
        debug_assert!(output.is_some() || self.unit.get().is_some());
        self.node_mut(i).output = output;
        self.settle(i, TaskState::Completed, None, now, fx);
        self.release_dependents(i, now);
        self.wake_runners(fx);
    }

    /// Node `i` completed: decrements its dependents' counters of unmet
    /// dependencies and queues those that reach zero. (Always inlined, as
    /// `start_attempt`: as a call it cost ~30 instructions per task.)
    #[inline(always)]
    fn release_dependents(&mut self, i: u32, now: Instant) {
        // Dependents come after `i` (see the module docs): borrowing the
        // two sides apart reads `i`'s list in place.
        let (done, later) = self.nodes.split_at_mut(i as usize + 1);
        let (ready, cold) = (&mut self.ready, &mut self.cold);
        // The inline list (most tasks' two or fewer) read without making
        // a slice of it.
        match &done[i as usize].dependents {
            Edges::Inline { len, ids } => {
                if *len > 0 {
                    release_one::<true, T>(later, ready, cold, i, ids[0], now);
                    if *len > 1 {
                        release_one::<true, T>(later, ready, cold, i, ids[1], now);
                    }
                }
            }
            Edges::Heap(ids) => {
                for &d in ids {
                    release_one::<false, T>(later, ready, cold, i, d, now);
                }
            }
        }
    }

    /// Records an attempt of node `i` that a runner polled to its end,
    /// begun at `began` and ended at `ended`: gives its body back and
    /// finishes it (see [`Core::finish_attempt`]). The common case, the
    /// attempt completed and the node, running, never had a budget, an
    /// error, a driver or a pause switch, takes a short path that does
    /// what `complete` and `settle` would, reading only the node's hot
    /// lines, its span and its dependents, and leaves asking for runners
    /// for the dependents it made ready to the caller ([`Core::wake_runners`],
    /// once for all the attempts it records under one lock acquisition).
    #[inline]
    pub(crate) fn attempt_ran(
        &mut self,
        i: u32,
        body: Body<T>,
        (began, ended): (Instant, Instant),
        result: Result<Option<Arc<T>>, Box<TaskError>>,
        fx: &mut Effects<T>,
    ) -> Option<Duration> {
        let node = self.node(i);
        let plain = node.state == TaskState::Running && !node.has_extras && !node.holds_budget;
        match result {
            Ok(output) if plain => {
                self.completed_plain(i, body, (began, ended), output, fx);
                None
            }
            result => self.attempt_ran_slow(i, body, (began, ended), result.map_err(|e| *e), fx),
        }
    }

    /// [`Core::attempt_ran`] off its short path: the attempt failed, or
    /// the node has a budget, extras, or was cancelled or paused meanwhile.
    #[inline(never)]
    fn attempt_ran_slow(
        &mut self,
        i: u32,
        body: Body<T>,
        (began, ended): (Instant, Instant),
        result: Result<Option<Arc<T>>, TaskError>,
        fx: &mut Effects<T>,
    ) -> Option<Duration> {
        self.give_back(i, body);
        self.began_at(i, began, Some(ended));
        self.finish_attempt(i, result, ended, fx)
    }

    /// The short path of [`Core::attempt_ran`].
    #[inline]
    fn completed_plain(
        &mut self,
        i: u32,
        body: Body<T>,
        (began, ended): (Instant, Instant),
        output: Option<Arc<T>>,
        fx: &mut Effects<T>,
    ) {
        debug_assert!(output.is_some() || self.unit.get().is_some());
        let node = self.node_mut(i);
        debug_assert!(node.paused_from.is_none() && !node.has_extras);
        if node.attempts == 1 {
            node.start = Some(began);
        }
        node.end = Some(ended);
        node.output = output;
        node.state = TaskState::Completed;
        let record = node.record;
        // One store: the record stays in the node (see `Span`), or is
        // closed in `spans` below.
        node.record = if record == RECORD_IN_NODE {
            DONE_IN_NODE
        } else {
            NO_RECORD
        };
        self.retired.push(body);
        if record != RECORD_IN_NODE && record != NO_RECORD {
            let span = &mut self.spans[record as usize];
            span.start = began;
            span.end = Some(ended);
            span.outcome = Outcome::Completed;
        }
        self.live -= 1;
        fx.changed = true;
        if self.live == 0 {
            self.finish(ended, fx);
        }
        // The caller asks for runners once for the whole batch it records.
        self.release_dependents(i, ended);
    }

    /// The attempt of node `i` failed with `error`: retry or give up.
    fn attempt_failed(
        &mut self,
        i: u32,
        error: TaskError,
        now: Instant,
        fx: &mut Effects<T>,
    ) -> Option<Duration> {
        if !self.node(i).attempt_counts() {
            fx.release.push(Release::error(error));
            return None;
        }
        self.close_span(i, now, outcome_of(&error));
        let node = self.node(i);
        let retry = &node.options().retry;
        if node.attempts < retry.max_attempts() && !self.stopped {
            let delay = retry.jittered_backoff(node.attempts);
            self.node_mut(i).has_extras = true;
            let rare = self.rare_mut(i);
            let replaced = rare.error.replace(error);
            fx.release.extend(replaced.map(Release::error));
            rare.retry_at = now.checked_add(delay);
            // A pause requested during the attempt, which ended with no
            // checkpoint: between attempts it takes effect at once (see
            // `Core::pause`), rather than waiting for the next attempt's
            // first checkpoint, perhaps past the pause timeout.
            let paused = rare
                .control
                .as_ref()
                .is_some_and(|c| switch(c, Change::PauseIfRequested, fx));
            if paused {
                self.mark_paused_between_attempts(i);
            }
            return Some(delay);
        }
        self.fail(i, error, now, fx);
        None
    }

    /// Node `i` failed for good: its dependents, transitively, become
    /// upstream-failed (or, fail-fast, everything else is cancelled).
    fn fail(&mut self, i: u32, error: TaskError, now: Instant, fx: &mut Effects<T>) {
        self.settle(i, TaskState::Failed, Some(error), now, fx);
        let root = self.id(i).clone();
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
        fx: &mut Effects<T>,
        verdict: impl Fn(u32) -> (TaskState, TaskError),
    ) {
        let mut stack = self.node(i).dependents.to_vec();
        while let Some(d) = stack.pop() {
            if self.node(d).state.is_terminal() {
                continue;
            }
            let (state, error) = verdict(d);
            self.close_span(d, now, Outcome::Cancelled);
            self.settle(d, state, Some(error), now, fx);
            stack.extend_from_slice(&self.node(d).dependents);
        }
    }

    /// Cancels node `i` (if not terminal) and its dependents, transitively.
    /// Idempotent: cancelling a task that has ended does nothing.
    pub(crate) fn cancel(&mut self, i: u32, reason: CancelReason, now: Instant) -> Effects<T> {
        let mut fx = Effects::default();
        if self.node(i).state.is_terminal() {
            return fx;
        }
        self.close_cancelled(i, now);
        let error = TaskError::Cancelled(reason);
        self.settle(i, TaskState::Cancelled, Some(error), now, &mut fx);
        let origin = self.inherited_cancel(i);
        self.doom_dependents(i, now, &mut fx, |_| {
            (TaskState::Cancelled, TaskError::Cancelled(origin.clone()))
        });
        fx
    }

    fn cancel_one(&mut self, i: u32, reason: CancelReason, now: Instant, fx: &mut Effects<T>) {
        self.close_cancelled(i, now);
        let error = TaskError::Cancelled(reason);
        self.settle(i, TaskState::Cancelled, Some(error), now, fx);
    }

    fn cancel_all(&mut self, reason: CancelReason, now: Instant, fx: &mut Effects<T>) {
        for i in 0..self.nodes.len() as u32 {
            if !self.node(i).state.is_terminal() {
                self.cancel_one(i, reason.clone(), now, fx);
            }
        }
    }

    /// Stops the run: tasks not yet started are cancelled, running ones
    /// finish (without further retries), tasks added later are cancelled.
    /// Paused tasks are cancelled too: nothing would resume them. So are
    /// tasks waiting out a backoff before a retry (running, with no
    /// attempt open): the retry would be cancelled when due, and the run
    /// need not wait for it (their drivers are aborted).
    pub(crate) fn stop(&mut self, now: Instant) -> Effects<T> {
        let mut fx = Effects::default();
        self.stopped = true;
        for i in 0..self.nodes.len() as u32 {
            if self.waiting_to_retry(i)
                || matches!(
                    self.node(i).state,
                    TaskState::Pending | TaskState::Ready | TaskState::Paused
                )
            {
                self.cancel_one(i, CancelReason::Stopped, now, &mut fx);
            } else if self.node(i).state == TaskState::Running {
                self.withdraw_pause(i, &mut fx);
            }
        }
        self.disarm_dispatch_timer(&mut fx);
        fx
    }

    /// Withdraws a pause requested of running node `i` that no checkpoint
    /// has reached yet: after a stop the task finishes, as running tasks
    /// do, rather than pause where nothing would resume it (its
    /// [`RunHandle::pause`](super::RunHandle::pause) returns
    /// [`GraphError::Stopped`], see [`Core::pause_result`]).
    fn withdraw_pause(&mut self, i: u32, fx: &mut Effects<T>) {
        if let Some(control) = self.cold(i).rare().and_then(|r| r.control.as_ref()) {
            switch(control, Change::Withdraw, fx);
        }
    }

    /// A task of the run (a runner, a hand-off, a driver) was dropped before
    /// it finished its work: its task group was cancelled, its executor
    /// shut down, or it panicked. Cancels the whole run, for good, with
    /// `reason` ([`CancelReason::GroupCancelled`],
    /// [`CancelReason::ExecutorShutdown`] or [`CancelReason::Internal`]):
    /// every task not yet ended (running ones' drivers are aborted, as by
    /// `cancel`), and, as after `stop`, any added later. `runner` says the lost task was a runner, still
    /// counted; `driver` is the node whose driver it was, whose handle is
    /// given back to be dropped (detached) rather than aborted: that task
    /// is the one being dropped. A driver of a node that has ended was
    /// aborted on purpose (a cancel, a stop): that is no loss, and nothing
    /// happens.
    #[cold]
    pub(crate) fn abandon(
        &mut self,
        runner: bool,
        driver: Option<u32>,
        reason: CancelReason,
        now: Instant,
    ) -> (Effects<T>, Option<JoinHandle<()>>) {
        let mut fx = Effects::default();
        if runner {
            self.runners = self.runners.saturating_sub(1);
        }
        let own = match driver {
            Some(i) if self.node(i).state.is_terminal() => return (fx, None),
            Some(i) => self.cold[i as usize]
                .rare
                .as_mut()
                .and_then(|r| r.handle.take()),
            None => None,
        };
        self.stopped = true;
        self.cancel_all(reason, now, &mut fx);
        // Every task has ended: none is left for the runners a released
        // budget asked for.
        self.runners = self.runners.saturating_sub(mem::take(&mut fx.runners));
        (fx, own)
    }

    /// Pauses node `i` at `now`: a pending or ready task at once; for a
    /// running one, requests a pause at its next checkpoint and returns its
    /// control, on which the caller awaits the acknowledgement (outside the
    /// lock).
    pub(crate) fn pause(
        &mut self,
        i: u32,
        now: Instant,
        fx: &mut Effects<T>,
    ) -> Result<Option<PauseControl>, GraphError> {
        let state = self.node(i).state;
        match state {
            TaskState::Pending | TaskState::Ready => {
                self.rank();
                if state == TaskState::Ready {
                    self.unready(i, fx);
                    self.rare_mut(i).paused_at = Some(now);
                }
                let node = self.node_mut(i);
                node.paused_from = PausedFrom::from_state(state);
                node.state = TaskState::Paused;
                Ok(None)
            }
            TaskState::Running if self.stopped => Err(GraphError::Stopped {
                id: self.id(i).clone(),
            }),
            TaskState::Running => {
                self.node_mut(i).has_extras = true;
                let control = self
                    .rare_mut(i)
                    .control
                    .get_or_insert_with(PauseControl::new);
                let control = control.clone();
                if self.waiting_to_retry(i) {
                    // No body runs, so it pauses at once, as at a
                    // checkpoint; its driver holds the next attempt until
                    // the resume (see `retry_attempt`).
                    switch(&control, Change::PauseNow, fx);
                    self.mark_paused_between_attempts(i);
                    return Ok(None);
                }
                switch(&control, Change::RequestPause, fx);
                Ok(Some(control))
            }
            TaskState::Paused => Ok(None),
            _ => Err(self.ended(i)),
        }
    }

    /// The body of node `i`'s attempt number `attempt` reached a
    /// checkpoint. If that attempt is over (the task was cancelled, or the
    /// attempt timed out and the body's inputs outlived it), the body
    /// should stop. Otherwise, if a pause is requested, it pauses, and the
    /// task is recorded as paused in the same step, under the lock (so no
    /// watcher is needed to record it, and no resume can come in between):
    /// the body waits on the control.
    pub(crate) fn checkpoint(&mut self, i: u32, attempt: u32, fx: &mut Effects<T>) -> Checkpoint {
        let node = self.node(i);
        let in_progress =
            node.attempts == attempt && node.record != NO_RECORD && node.attempt_counts();
        if !in_progress {
            return Checkpoint::Over;
        }
        let Some(control) = self.control(i) else {
            return Checkpoint::Go;
        };
        if switch(&control, Change::PauseIfRequested, fx)
            && self.node(i).state == TaskState::Running
        {
            // It keeps `holds_budget` while paused (see `RunHandle::pause`).
            let node = self.node_mut(i);
            node.state = TaskState::Paused;
            node.paused_from = Some(PausedFrom::Running);
        }
        Checkpoint::Wait(control)
    }

    /// The pause timeout of request number `request` on node `i` (see
    /// [`PauseControl::requests`]) has passed: if that request is still
    /// waiting for a checkpoint, the task is cancelled
    /// ([`CancelReason::PauseTimedOut`], told apart from the task's own
    /// timeout), under the lock, so a task is never both paused and
    /// timed out.
    pub(crate) fn pause_timed_out(
        &mut self,
        i: u32,
        request: u64,
        timeout: Duration,
        now: Instant,
    ) -> Effects<T> {
        let timed_out = self
            .control(i)
            .and_then(|c| c.change_deferred(Change::TimeOut { request }));
        match timed_out {
            Some(wake) => {
                let mut fx = self.cancel(i, CancelReason::PauseTimedOut(timeout), now);
                fx.release.push(Release::Wake(wake));
                fx
            }
            None => Effects::default(),
        }
    }

    /// What [`RunHandle::pause`](super::RunHandle::pause) on running node
    /// `i` returns once its request settled with `outcome`: paused, or
    /// withdrawn by a resume (`Ok`); cancelled by the pause timeout
    /// ([`GraphError::PauseTimedOut`]); or ended otherwise (completed,
    /// failed, cancelled) before a checkpoint ([`GraphError::TaskEnded`], as
    /// for a task that had ended before the pause).
    pub(crate) fn pause_result(
        &self,
        i: u32,
        outcome: Result<(), PauseError>,
    ) -> Result<(), GraphError> {
        match outcome {
            // Withdrawn by the stop (or by a resume the stop came after).
            Err(PauseError::NotPaused) if self.stopped => Err(GraphError::Stopped {
                id: self.id(i).clone(),
            }),
            Ok(()) | Err(PauseError::NotPaused) => Ok(()),
            Err(_) => match self.cold(i).error() {
                Some(TaskError::Cancelled(CancelReason::PauseTimedOut(timeout))) => {
                    Err(GraphError::PauseTimedOut {
                        id: self.id(i).clone(),
                        timeout: *timeout,
                    })
                }
                _ if self.node(i).state.is_terminal() => Err(self.ended(i)),
                _ => Ok(()),
            },
        }
    }

    /// Resumes node `i` into the state it was paused from (a task paused
    /// while pending whose dependencies completed meanwhile becomes ready;
    /// one paused while ready keeps the priority it had aged to). On a
    /// running task it withdraws a pause request not yet acknowledged.
    pub(crate) fn resume(&mut self, i: u32, now: Instant) -> Result<Effects<T>, GraphError> {
        let mut fx = Effects::default();
        let (node, cold) = (&mut self.nodes[i as usize], &self.cold[i as usize]);
        let rare = cold.rare();
        let control = rare.and_then(|r| r.control.as_ref());
        match node.state {
            TaskState::Paused => match node.paused_from.take() {
                Some(PausedFrom::Pending) if node.unmet > 0 => node.state = TaskState::Pending,
                Some(PausedFrom::Pending) => {
                    node.state = TaskState::Ready;
                    self.push_ready(i, now);
                    self.wake_runners(&mut fx);
                }
                Some(PausedFrom::Ready) => {
                    node.state = TaskState::Ready;
                    // The time paused is not time waited.
                    let since = rare
                        .and_then(|r| {
                            let paused = now.saturating_duration_since(r.paused_at?);
                            r.ready_since?.checked_add(paused)
                        })
                        .map_or(now, |since| since.min(now));
                    self.push_ready(i, since);
                    self.wake_runners(&mut fx);
                }
                Some(PausedFrom::Running) | None => {
                    node.state = TaskState::Running;
                    if let Some(control) = control {
                        switch(control, Change::Resume, &mut fx);
                    }
                }
            },
            TaskState::Running => {
                if let Some(control) = control {
                    switch(control, Change::Resume, &mut fx);
                }
            }
            TaskState::Pending | TaskState::Ready => {}
            _ => return Err(self.ended(i)),
        }
        Ok(fx)
    }

    /// Whether running node `i` is between attempts, waiting out the
    /// backoff before a retry: running, with no attempt open.
    fn waiting_to_retry(&self, i: u32) -> bool {
        let node = self.node(i);
        node.state == TaskState::Running && node.record == NO_RECORD
    }

    /// Marks node `i`, waiting to retry, paused: its driver holds the next
    /// attempt until the resume (see `retry_attempt`).
    fn mark_paused_between_attempts(&mut self, i: u32) {
        let node = self.node_mut(i);
        node.state = TaskState::Paused;
        node.paused_from = Some(PausedFrom::Running);
    }

    /// The pause switch of running node `i`, if a pause was ever requested.
    pub(crate) fn control(&self, i: u32) -> Option<PauseControl> {
        self.cold(i).rare()?.control.clone()
    }

    /// Why node `i` is not running; `None` if it is.
    pub(crate) fn why(&self, i: u32, now: Instant) -> Option<Blocked> {
        let node = self.node(i);
        Some(match node.state {
            TaskState::Running if self.waiting_to_retry(i) => Blocked::Retrying {
                next_attempt: node.attempts + 1,
                due_in: match self.cold(i).rare().and_then(|r| r.retry_at) {
                    Some(at) => at.saturating_duration_since(now),
                    None => Duration::MAX,
                },
            },
            TaskState::Running => return None,
            TaskState::Pending => {
                let waiting = self.cold(i).deps.iter().copied();
                let waiting = waiting.filter(|&d| self.node(d).state != TaskState::Completed);
                Blocked::WaitingOn(waiting.map(|d| self.id(d).clone()).collect())
            }
            TaskState::Paused => Blocked::Paused {
                from: match node.paused_from {
                    // Its dependencies completed while it was paused: it
                    // resumes as ready (see `Core::resume`).
                    Some(PausedFrom::Pending) if node.unmet == 0 => PausedFrom::Ready,
                    from => from.unwrap_or(PausedFrom::Running),
                },
            },
            TaskState::Ready => match self.budget.check(&node.options().demand) {
                Err(full) if self.budgeted => Blocked::BudgetFull(full),
                _ => Blocked::Outranked {
                    by: self.outranked_by(i, now),
                },
            },
            TaskState::Cancelled => match self.cold(i).error() {
                Some(TaskError::Cancelled(reason)) => Blocked::Cancelled(reason.clone()),
                _ => Blocked::Finished(TaskState::Cancelled),
            },
            state => Blocked::Finished(state),
        })
    }

    /// How many ready nodes go before ready node `i`.
    fn outranked_by(&self, i: u32, now: Instant) -> usize {
        match &self.ready {
            Ready::Fifo(queue) => queue
                .iter()
                .take_while(|&&(n, _)| n != i)
                .filter(|&&(n, _)| self.node(n).state == TaskState::Ready)
                .count(),
            Ready::Ranked(set) => set.outranked_by(i, now),
        }
    }

    fn ended(&self, i: u32) -> GraphError {
        GraphError::TaskEnded {
            id: self.id(i).clone(),
            state: self.node(i).state,
        }
    }
}

/// Node `i` completed: decrements the counter of unmet dependencies of
/// its dependent `d` (in `later`, the nodes after `i`) and queues it if
/// that reaches zero (see [`Core::release_dependents`]).
///
/// With `PREFETCH`, a node it queues has the rest of its lines and its
/// body's captures fetched now, so that they are in the runner's cache when
/// the node is begun and its body called, rather than missed then one by
/// one: built by another thread, they are in that core's cache or beyond.
/// Only for nodes with a short list of dependents (see "Prefetching" in
/// the module docs): a node that releases thousands at once would ask for
/// more lines than the cache keeps until they are begun.
#[inline(always)]
fn release_one<const PREFETCH: bool, T>(
    later: &mut [Node<T>],
    ready: &mut Ready,
    cold: &mut [Cold],
    i: u32,
    d: u32,
    now: Instant,
) {
    let dep = &mut later[(d - i - 1) as usize];
    if dep.state == TaskState::Pending {
        dep.unmet -= 1;
        if dep.unmet == 0 {
            dep.state = TaskState::Ready;
            if PREFETCH {
                crate::hint::prefetch_pair(dep);
                if let Some(body) = &dep.body {
                    crate::hint::prefetch(&**body);
                }
            }
            ready.push(d, dep, cold, now);
        }
    } else if dep.paused_from == Some(PausedFrom::Pending) {
        // A paused one becomes ready when it is resumed.
        dep.unmet -= 1;
    }
}

/// [`Core::start_attempt`] on the core's parts, borrowed apart (see
/// [`Core::next_attempts`]): marks node `i` running, opens its attempt's
/// span and gathers its inputs, into `slot`, field by field (see
/// `slots.rs` for why in place). (Always inlined: with two callers, a
/// plain `#[inline]` left it a call, which cost the runner's dispatch ~26
/// instructions per task.)
#[inline(always)]
fn begin_attempt<T>(
    nodes: &mut [Node<T>],
    cold: &[Cold],
    spans: &mut Vec<Span>,
    i: u32,
    now: Instant,
    lane: u32,
    slot: &mut StartSlot<T>,
) {
    let node = &nodes[i as usize];
    slot.outputs = if is_unit::<T>() {
        // Nothing to gather: the inputs read the shared output.
        Outputs::Unit(node.n_deps as usize)
    } else {
        let deps = &cold[i as usize].deps;
        Outputs::gather(
            deps.len(),
            deps.iter().map(|&d| {
                let out = nodes[d as usize].output.as_ref();
                Arc::clone(out.expect("a running task's dependencies completed"))
            }),
        )
    };
    // Its dependents' nodes, which its record will write, fetched while
    // its body runs (the inline list only: see `release_one`).
    if let Edges::Inline { len, ids } = &nodes[i as usize].dependents {
        for &d in &ids[..*len as usize] {
            if let Some(dep) = nodes.get(d as usize) {
                crate::hint::prefetch(dep);
            }
        }
    }
    let node = &mut nodes[i as usize];
    node.state = TaskState::Running;
    node.attempts += 1;
    node.start.get_or_insert(now);
    let attempt = node.attempts;
    slot.node = i;
    slot.attempt = attempt;
    slot.body = Some(node.body.take().expect("a body lent is given back"));
    slot.timeout = node.timeout;
    if attempt == 1 {
        // Kept in the node (see `Span`).
        node.record = RECORD_IN_NODE;
        node.lane = lane;
    } else {
        node.record = u32::try_from(spans.len()).expect("more than u32::MAX attempts");
        spans.push(Span {
            node: i,
            attempt,
            start: now,
            end: None,
            lane,
            outcome: Outcome::Running,
            ran: true,
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_run_touches_per_task_is_in_the_first_128_bytes_of_a_node() {
        type N = Node<Vec<u8>>;
        assert_eq!(mem::align_of::<N>(), 128);
        let hot_end = mem::offset_of!(N, options) + mem::size_of::<Option<Box<Options>>>();
        assert!(hot_end <= 128, "the hot fields end at {hot_end}");
        // Nothing else: the slow-path fields live in `Core::cold`.
        assert_eq!(mem::size_of::<N>(), 128);
    }

    #[test]
    fn an_attempt_start_keeps_each_two_word_field_inside_one_16_byte_piece() {
        type A = AttemptStart<Vec<u8>>;
        assert_eq!(mem::size_of::<A>(), 64);
        assert_eq!(mem::size_of::<Outputs<Vec<u8>>>(), 24);
        assert_eq!(mem::offset_of!(A, outputs) % 16, 8);
        assert_eq!(mem::offset_of!(A, body) % 16, 0);
        assert_eq!(mem::offset_of!(A, timeout) % 16, 0);
    }

    #[test]
    fn reserve_sizes_every_table_that_grows_with_the_graph() {
        let mut core = Core::<u32>::new(&SchedulerConfig::new());
        core.reserve(100);
        assert!(core.nodes.capacity() >= 100);
        assert!(core.cold.capacity() >= 100);
        assert!(core.index.capacity() >= 100);
        assert!(core.retired.capacity() >= 100);
        assert!(matches!(&core.ready, Ready::Fifo(queue) if queue.capacity() >= 100));
    }

    #[test]
    fn the_waiter_swaps_lists_with_the_run_leaves_it_the_larger_one_and_the_report_frees_them() {
        let mut core = Core::<u32>::new(&SchedulerConfig::new());
        let mut tasks: Vec<_> = (0..3)
            .map(|n| Task::sync(format!("t{n}").as_str(), move |_| Ok(n)))
            .collect();
        let _ = core
            .add(&mut tasks, false)
            .map_err(|e| e.to_string())
            .unwrap();
        let t0 = Instant::now();
        core.prepare_run(Some(1), t0, &mut Effects::default());
        let spare_room = core.spare.capacity();
        assert!(spare_room >= 3, "room for every task, up to two chunks");
        // While the run goes on, the waiter's first exchange takes what was
        // retired (nothing yet) and gives the runners the spare list.
        let first = core.sweep_retired(Vec::new());
        assert!(first.is_empty() && first.capacity() >= 3);
        assert_eq!(core.retired.capacity(), spare_room);
        assert_eq!(core.spare.capacity(), 0, "taken, not copied");
        // Every task ends (stopped before it started): the last exchange
        // takes every body, and keeps the waiter's list in the run.
        drop(core.stop(t0));
        assert!(core.take_empty_lists().is_none(), "bodies not dropped yet");
        let mut last = core.sweep_retired(first);
        assert_eq!(last.len(), 3, "every body retired");
        last.clear();
        let room = last.capacity();
        let given_back = core.leave_list(last);
        assert_eq!(
            core.spare.capacity(),
            room,
            "the run keeps the list with room"
        );
        assert_eq!(given_back.capacity(), 0, "the waiter frees no list");
        assert!(core.retired.capacity() >= 3);
        // The report, read for the first time, frees them.
        let lists = core.take_empty_lists().expect("every body dropped");
        assert!(lists[0].capacity() >= 3 && lists[1].capacity() == room);
        assert_eq!(core.retired.capacity() + core.spare.capacity(), 0);
    }

    #[test]
    fn room_reserved_before_the_ready_set_is_ranked_is_made_in_it_when_it_is() {
        // `Graph::with_capacity`: no budget, so the FIFO is reserved; a
        // task with a priority then ranks the ready set.
        let mut core = Core::<u32>::new(&SchedulerConfig::new());
        core.reserve(100);
        let mut tasks = vec![Task::sync("p", |_| Ok(1)).priority(1)];
        let _ = core
            .add(&mut tasks, false)
            .map_err(|e| e.to_string())
            .unwrap();
        let Ready::Ranked(set) = &core.ready else {
            panic!("a priority ranks the ready set");
        };
        assert!(set.room() >= 100, "room for {} nodes", set.room());
    }

    /// The dispatch timer armed in `fx`, if any.
    fn armed(fx: &Effects<u32>) -> Option<(Instant, u64)> {
        fx.release.iter().find_map(|r| match r {
            Release::Arm { at, number } => Some((*at, *number)),
            _ => None,
        })
    }

    #[test]
    fn dispatch_timers_stop_after_an_interval_in_which_time_alone_started_nothing() {
        // Two cpu slots, one held by `hold`. The bigs need both and always
        // outrank `small` (10 apart and ready as early), which fits but,
        // behind `LOOKAHEAD` of them, is never offered.
        let interval = Duration::from_millis(100);
        let (mut core, task) = (two_slots(interval), sized);
        let mut tasks = vec![task("hold".into(), 1000, 1), task("small".into(), 0, 1)];
        let bigs =
            (0..super::super::LOOKAHEAD as i32).map(|n| task(format!("big-{n}"), 10 * (n + 1), 2));
        tasks.extend(bigs);
        let t0 = Instant::now();
        let mut fx = Effects::default();
        let _ = core
            .add(&mut tasks, false)
            .map_err(|e| e.to_string())
            .unwrap();
        core.prepare_run(Some(2), t0, &mut fx);
        let mut batch = Starts::with_capacity(1);
        assert!(
            core.next_attempts(t0, 0, &mut batch, &mut fx),
            "`hold` starts"
        );
        let (mut now, mut arms) = (t0, 0);
        let mut fx = Effects::default();
        while !core.next_attempts(now, 0, &mut Starts::with_capacity(1), &mut fx) {
            let Some((at, number)) = armed(&fx) else {
                break;
            };
            assert!(at > now, "armed for later");
            arms += 1;
            assert!(arms <= 3, "still armed after {:?}", at - t0);
            (now, fx) = (at, Effects::default());
            core.dispatch_timer_due(number, true, &mut fx);
            fx = Effects::default();
        }
        assert!(arms >= 1, "armed once at least: `small` fits");
        // Something that changes the offer (here a task made ready) has the
        // timers look for a whole interval again.
        let mut more = vec![task("later".into(), 5, 2)];
        let _ = core
            .add(&mut more, true)
            .map_err(|e| e.to_string())
            .unwrap();
        let mut fx = Effects::default();
        assert!(!core.next_attempts(now, 0, &mut Starts::with_capacity(1), &mut fx));
        assert!(armed(&fx).is_some(), "armed again after the change");
    }

    #[test]
    fn a_dispatch_timer_handled_late_does_not_end_the_timers_before_the_window_comes_back() {
        // 1 s interval; `late` ranks first (and starts) only in the first
        // 2 ms of each. The first firing's runner looks 3 ms late, past
        // the window (a busy executor); the next ones on time. The window
        // comes back one interval later.
        let ms = Duration::from_millis;
        let (mut core, r) = late_behind_bigs(ms(1000), ms(2), &[]);
        let lateness = |n: usize| if n == 0 { ms(3) } else { Duration::ZERO };
        assert_eq!(drive(&mut core, r + ms(2), 4, lateness), Ok("late".into()));
    }

    #[test]
    fn dispatch_timers_with_an_interval_shorter_than_their_shortest_wait_do_not_stop_after_one() {
        // 300 us interval; `late` ranks first only in the first 150 us of
        // each. The first look falls outside the window; firings come at
        // least `MIN_DISPATCH_WAIT` apart, on time, and one must reach it.
        let us = Duration::from_micros;
        let (mut core, r) = late_behind_bigs(us(300), us(150), &[]);
        let on_time = |_| Duration::ZERO;
        assert_eq!(drive(&mut core, r + us(175), 5, on_time), Ok("late".into()));
    }

    /// Moves ready node `i` of `core`'s ranked set to ready since `since`.
    fn ready_at(core: &mut Core<u32>, i: u32, since: Instant) {
        let Ready::Ranked(set) = &mut core.ready else {
            panic!("the ready set is ranked");
        };
        let cold = &mut core.cold[i as usize];
        cold.rare_mut().ready_since = Some(since);
        let priority = core.nodes[i as usize].options().priority;
        set.insert(i, cold.id.clone(), priority, since);
    }

    /// A core with two cpu slots, aging by 1 every `interval`.
    fn two_slots(interval: Duration) -> Core<u32> {
        let config = SchedulerConfig::new()
            .with_cpu_slots(2)
            .with_aging(interval, 1);
        Core::new(&config)
    }

    /// A sync task `id` of priority `priority` needing `cpu` slots.
    fn sized(id: String, priority: i32, cpu: u64) -> Task<u32> {
        Task::sync(id, |_| Ok(0)).priority(priority).cpu(cpu)
    }

    /// `hold` (started, holding one of two cpu slots), `late` (fits), the
    /// `LOOKAHEAD` bigs (need both slots) and `others` (need both, far
    /// below, each on a priority level of its own, so that all can be
    /// offered); `late` ready at `r`, the bigs at `r + window` (so `late`
    /// ranks first, and starts, only for the first `window` of every
    /// interval after the first), the others at the given instants.
    fn late_behind_bigs(
        interval: Duration,
        window: Duration,
        others: &[Duration],
    ) -> (Core<u32>, Instant) {
        let (mut core, task) = (two_slots(interval), sized);
        let mut tasks = vec![task("hold".into(), 1000, 1), task("late".into(), 0, 1)];
        let bigs = (0..super::super::LOOKAHEAD as i32).map(|n| task(format!("big-{n}"), 1, 2));
        tasks.extend(bigs);
        let others_at = (0..others.len() as i32).map(|n| task(format!("other-{n}"), -1000 - n, 2));
        tasks.extend(others_at);
        let _ = core
            .add(&mut tasks, false)
            .map_err(|e| e.to_string())
            .unwrap();
        let (mut fx, mut batch) = (Effects::default(), Starts::with_capacity(1));
        let r = Instant::now();
        core.prepare_run(Some(2), r, &mut fx);
        assert!(core.next_attempts(r, 0, &mut batch, &mut fx));
        assert_eq!(core.id(batch.take_all()[0].node).as_str(), "hold");
        ready_at(&mut core, 1, r);
        for big in 0..super::super::LOOKAHEAD as u32 {
            ready_at(&mut core, 2 + big, r + window);
        }
        for (n, &at) in others.iter().enumerate() {
            let other = 2 + super::super::LOOKAHEAD as u32 + n as u32;
            ready_at(&mut core, other, r + at);
        }
        (core, r)
    }

    /// Drives the dispatch timers of `core` by hand from a runner that
    /// looks at `now` and finds nothing, each firing's runner looking
    /// `lateness(n)` after the instant its timer (the `n`th) was armed
    /// for, up to `firings` firings: the name of the task a runner started,
    /// or why none did.
    fn drive(
        core: &mut Core<u32>,
        mut now: Instant,
        firings: usize,
        lateness: impl Fn(usize) -> Duration,
    ) -> Result<String, String> {
        let mut fx = Effects::default();
        assert!(!core.next_attempts(now, 0, &mut Starts::with_capacity(1), &mut fx));
        for n in 0..firings {
            let Some((at, number)) = armed(&fx) else {
                return Err(format!("no timer armed after {n} firings"));
            };
            fx = Effects::default();
            core.dispatch_timer_due(number, true, &mut fx);
            now = at + lateness(n);
            let (mut fx2, mut batch) = (Effects::default(), Starts::with_capacity(1));
            if core.next_attempts(now, 0, &mut batch, &mut fx2) {
                return Ok(core.id(batch.take_all()[0].node).to_string());
            }
            fx = fx2;
        }
        Err(format!("still armed after {firings} firings"))
    }

    /// Whether [`drive`] ended with the chain of timers stopped.
    fn stopped(ended: &Result<String, String>) -> bool {
        ended
            .as_ref()
            .is_err_and(|e| e.starts_with("no timer armed"))
    }

    #[test]
    fn a_dispatch_timer_handled_less_than_min_dispatch_wait_late_does_not_pass_over_a_longer_window_for_good(
    ) {
        // 10 ms interval; `late` starts only in the first 1.5 ms of each
        // (a window longer than MIN_DISPATCH_WAIT); `other-0` steps at
        // 9.9 ms. A runner leaving at 15 ms arms for 19.9 ms (on time:
        // nothing), then for 20.9 ms (inside the window), whose runner
        // looks 0.7 ms late, at 21.6 ms, past the window. The window comes
        // back at 30 ms.
        let ms = |m: f64| Duration::from_secs_f64(m / 1000.0);
        let (mut core, r) = late_behind_bigs(ms(10.0), ms(1.5), &[ms(9.9)]);
        let lateness = |n: usize| if n == 1 { ms(0.7) } else { Duration::ZERO };
        assert_eq!(
            drive(&mut core, r + ms(15.0), 8, lateness),
            Ok("late".into())
        );
    }

    #[test]
    fn dispatch_timers_with_an_interval_dividing_their_shortest_wait_reach_every_window() {
        // 500 us interval; `late` starts only in the first 200 us of each.
        // The firings, MIN_DISPATCH_WAIT (two intervals) apart, must not
        // all fall on the same instant of the interval, outside the window.
        let us = Duration::from_micros;
        let (mut core, r) = late_behind_bigs(us(500), us(200), &[]);
        let on_time = |_| Duration::ZERO;
        assert_eq!(
            drive(&mut core, r + us(5300), 50, on_time),
            Ok("late".into())
        );
    }

    #[test]
    fn dispatch_timers_with_an_interval_shorter_than_their_shortest_wait_stop_when_nothing_can_start(
    ) {
        // As `dispatch_timers_stop_after_an_interval_in_which_time_alone_started_nothing`,
        // with a 500 us interval: `small` fits but is never offered, and
        // `hold` may run for hours; the run must not take the lock 1,000
        // times a second all that time.
        let (mut core, task) = (two_slots(Duration::from_micros(500)), sized);
        let mut tasks = vec![task("hold".into(), 1000, 1), task("small".into(), 0, 1)];
        let bigs =
            (0..super::super::LOOKAHEAD as i32).map(|n| task(format!("big-{n}"), 10 * (n + 1), 2));
        tasks.extend(bigs);
        let _ = core
            .add(&mut tasks, false)
            .map_err(|e| e.to_string())
            .unwrap();
        let t0 = Instant::now();
        let (mut fx, mut batch) = (Effects::default(), Starts::with_capacity(1));
        core.prepare_run(Some(2), t0, &mut fx);
        assert!(core.next_attempts(t0, 0, &mut batch, &mut fx));
        let on_time = |_| Duration::ZERO;
        let ended = drive(&mut core, t0, 10, on_time);
        assert!(stopped(&ended), "{ended:?}");
    }

    #[test]
    fn dispatch_timers_stop_when_their_runners_always_come_after_a_window_shorter_than_min_dispatch_wait(
    ) {
        // `late` starts only in the first 50 us of every 10 ms, or the first
        // 200 us of every 500 us; each runner looks 300 us after its timer's
        // instant, past the window. Such windows may be passed over (see
        // MIN_DISPATCH_WAIT): the chain must not fire for as long as the
        // run waits.
        let us = Duration::from_micros;
        for (interval, window) in [(us(10_000), us(50)), (us(500), us(200))] {
            let (mut core, r) = late_behind_bigs(interval, window, &[]);
            let ended = drive(&mut core, r + interval * 10 + us(250), 40, |_| us(300));
            assert!(stopped(&ended), "{interval:?}: {ended:?}");
        }
    }

    #[test]
    fn a_late_runner_with_an_aging_interval_far_shorter_than_min_dispatch_wait_does_not_scan_every_step_of_that_wait(
    ) {
        // 1 us interval; `late` starts only in the first 300 ns of each;
        // 300 others (need both slots), one per priority level far below,
        // ready 1 ns apart, so each interval has some 300 steps. The timer's
        // runner looks 500 ns late, past the window. No window of such an
        // interval lasts MIN_DISPATCH_WAIT (one that lasted a whole
        // interval would last for ever), yet looking for one must not take
        // a peek at each of the 300,000 steps of the MIN_DISPATCH_WAIT
        // before its instant, under the lock.
        // The same with a 2 ms interval (the late-runner scan) and its
        // others 1 us apart: each look scans a bounded number of steps
        // (`MAX_SCAN_STEPS` in ready.rs).
        let ns = Duration::from_nanos;
        let cases = [
            (ns(1000), ns(300), ns(500), 1),
            (ns(2_000_000), ns(1_000_000), ns(1_500_000), 1000),
        ];
        for (interval, window, lateness, spacing) in cases {
            let fillers: Vec<_> = (0..300).map(|n| window + ns(100 + n * spacing)).collect();
            let (mut core, r) = late_behind_bigs(interval, window, &fillers);
            let ended = drive(&mut core, r + interval * 10 + window + ns(200), 2, |_| {
                lateness
            });
            let Ready::Ranked(set) = &core.ready else {
                panic!("the ready set is ranked");
            };
            let peeks = set.peeks();
            assert!(peeks <= 200, "{interval:?}: {peeks} peeks ({ended:?})");
        }
    }

    #[test]
    fn dispatch_timers_whose_runners_are_always_a_little_late_reach_a_window_longer_than_min_dispatch_wait(
    ) {
        // 10 ms interval; `late` starts only in the first 1.2 ms of each;
        // `other-0` steps at 9.5 ms. Every runner looks 0.4 ms after its
        // timer's instant (a timer queue of 1 ms ticks is late by up to
        // that). A runner leaving at 15 ms arms for 19.5 ms, whose runner
        // looks at 19.9 ms, before the window, and arms for MIN_DISPATCH_WAIT
        // later, 20.9 ms, whose runner looks at 21.3 ms, past it; and so on
        // every interval.
        let ms = |m: f64| Duration::from_secs_f64(m / 1000.0);
        let (mut core, r) = late_behind_bigs(ms(10.0), ms(1.2), &[ms(9.5)]);
        assert_eq!(
            drive(&mut core, r + ms(15.0), 40, |_| ms(0.4)),
            Ok("late".into())
        );
    }

    #[test]
    fn the_slow_path_part_of_a_node_boxes_what_most_tasks_never_set() {
        // An id, the dependencies, one pointer: the rare fields (error,
        // names, driver, ready time, pause switch) are allocated on first use.
        assert!(mem::size_of::<Cold>() <= 48, "{}", mem::size_of::<Cold>());
        let mut cold = Cold {
            id: "a".into(),
            deps: Edges::default(),
            rare: None,
        };
        assert!(cold.rare().is_none() && cold.error().is_none());
        cold.rare_mut().error = Some(TaskError::TimedOut(Duration::from_secs(1)));
        assert!(matches!(cold.error(), Some(TaskError::TimedOut(_))));
    }
}
