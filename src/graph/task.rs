//! [`Task`]: a task's id, dependencies, body and options, before it is added
//! to a graph.

use std::any::Any;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::{BoxError, Demand, Inputs, RetryPolicy, TaskId};

/// A re-runnable task body, boxed: one dynamic call per attempt, for both
/// kinds ([`Task::new`]'s async bodies and [`Task::sync`]'s plain
/// functions). Boxed rather than `Arc`ed: a closure capturing nothing then
/// costs no allocation.
pub(crate) type Body<T> = Box<dyn TaskBody<T>>;

/// What a runner calls for an attempt. `inputs` is the runner's own,
/// refilled for every attempt: a sync body borrows it for the call (no
/// reference count on the run, nothing built or dropped), an async one
/// takes the outputs out of it into inputs of its own, which its future
/// may keep past the call.
pub(crate) trait TaskBody<T>: Send + Sync {
    /// Runs the attempt as far as it goes in one call: an async body makes
    /// its future, boxed in `slot` (see [`BodyFuture`]), and polls it once;
    /// `Ready` leaves the box in the slot for the next call, `Pending`
    /// leaves the future there, to be taken and polled again (no move of
    /// the future once boxed). A sync body returns `Ready`.
    fn call(
        &self,
        inputs: &mut Inputs<T>,
        slot: &mut Option<BodyFuture<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, BoxError>>;

    /// Whether the body is a plain function, which no timeout can
    /// interrupt (asked only of tasks with a timeout, see [`Task::sync`]).
    fn is_sync(&self) -> bool;
}

/// [`Task::new`]'s body: a function making a future per attempt.
struct AsyncBody<F, Fut>(F, PhantomData<fn() -> Fut>);

impl<T, F, Fut> TaskBody<T> for AsyncBody<F, Fut>
where
    T: Send + Sync + 'static,
    F: Fn(Inputs<T>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<T, BoxError>> + Send + 'static,
{
    #[inline]
    fn call(
        &self,
        inputs: &mut Inputs<T>,
        slot: &mut Option<BodyFuture<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, BoxError>> {
        start((self.0)(inputs.take_owned()), slot, cx)
    }

    fn is_sync(&self) -> bool {
        false
    }
}

/// [`Task::sync`]'s body: a plain function of the borrowed inputs.
struct SyncBody<F>(F);

impl<T, F> TaskBody<T> for SyncBody<F>
where
    F: Fn(&Inputs<T>) -> Result<T, BoxError> + Send + Sync,
{
    #[inline]
    fn call(
        &self,
        inputs: &mut Inputs<T>,
        _: &mut Option<BodyFuture<T>>,
        _: &mut Context<'_>,
    ) -> Poll<Result<T, BoxError>> {
        Poll::Ready((self.0)(inputs))
    }

    fn is_sync(&self) -> bool {
        true
    }
}

/// The future of one attempt, boxed. The future is dropped as soon as the
/// attempt is over (its poll gave the result, or panicked), so what it held
/// is released before the attempt is recorded; the box stays. A runner
/// keeps the box of an attempt that finished and offers it to the next
/// body it calls: if that body's future has the same type (tasks made by
/// one closure, the common case of a generated graph), it moves into that
/// box instead of a new one, and an allocation and a free per task are
/// saved.
pub(crate) type BodyFuture<T> = Pin<Box<dyn Refill<T>>>;

/// A box that holds a body's future until the attempt is over, and can then
/// take another future of the same type. Implemented by `Option<Fut>`:
/// `None` once the attempt is over.
pub(crate) trait Refill<T>: Send {
    /// Polls the future held; if it is done, drops it (the output is
    /// returned). Not called again once it returned `Ready`.
    fn poll_held(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, BoxError>>;

    /// Drops the future held, if any: after a poll of it panicked.
    fn empty(self: Pin<&mut Self>);

    /// Moves the future out of `next` (an `Option` of this type) into this
    /// box, dropping the one here, and polls it once, if `next` has this
    /// type; `None` if not. One dynamic call for both.
    fn refill_and_poll(
        self: Pin<&mut Self>,
        next: &mut dyn Any,
        cx: &mut Context<'_>,
    ) -> Option<Poll<Result<T, BoxError>>>;
}

impl<T, Fut> Refill<T> for Option<Fut>
where
    Fut: Future<Output = Result<T, BoxError>> + Send + 'static,
{
    #[inline]
    fn poll_held(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T, BoxError>> {
        let fut = self
            .as_mut()
            .as_pin_mut()
            .expect("an attempt's future polled after it was over");
        let polled = fut.poll(cx);
        if polled.is_ready() {
            self.set(None);
        }
        polled
    }

    fn empty(mut self: Pin<&mut Self>) {
        self.set(None);
    }

    fn refill_and_poll(
        mut self: Pin<&mut Self>,
        next: &mut dyn Any,
        cx: &mut Context<'_>,
    ) -> Option<Poll<Result<T, BoxError>>> {
        let fut = next.downcast_mut::<Option<Fut>>().and_then(Option::take)?;
        self.set(Some(fut));
        Some(self.poll_held(cx))
    }
}

/// Puts `fut` in `slot` (in the box there if it takes it, otherwise in a
/// new one, replacing it) and polls it once (see [`TaskBody::call`]).
/// Always inlined into [`AsyncBody`]'s call: as a call of its own it cost
/// ~19 instructions per task.
#[inline(always)]
fn start<T, Fut>(
    fut: Fut,
    slot: &mut Option<BodyFuture<T>>,
    cx: &mut Context<'_>,
) -> Poll<Result<T, BoxError>>
where
    Fut: Future<Output = Result<T, BoxError>> + Send + 'static,
{
    let mut next = Some(fut);
    if let Some(boxed) = slot {
        if let Some(polled) = boxed.as_mut().refill_and_poll(&mut next, cx) {
            return polled;
        }
    }
    let fut = next.expect("a box that refused the future left it");
    slot.insert(Box::pin(Some(fut))).as_mut().poll_held(cx)
}

/// A task to add to a [`Graph`](super::Graph): an id, the ids it depends on,
/// a body, and options (retries, timeout).
///
/// The body is a function called once per attempt (so a failed attempt can be
/// retried with fresh state) with the task's [`Inputs`]: its dependencies'
/// outputs. With [`Task::new`] it returns a future resolving to `Ok(output)`
/// or an error; with [`Task::sync`] it returns that result itself. Any error
/// type converts with `?`, and strings with `.into()`.
///
/// The output type `T` is usually inferred from the graph the task is
/// added to. A body that calls a method on one of its inputs needs it
/// earlier: the compiler then asks for a type annotation (and its
/// suggestion, `Inputs<T>`, is no help). Name the type in the constructor
/// or on the closure's argument:
///
/// ```
/// use fastexec::graph::{Graph, Inputs, Task};
///
/// let mut g = Graph::<String>::new();
/// g.add(Task::new("name", |_| async { Ok(" fastexec ".to_string()) })).unwrap();
/// g.add(Task::<String>::new("upper", |inp| async move { Ok(inp["name"].trim().to_uppercase()) })
///     .after(["name"]))
///     .unwrap();
/// g.add(Task::sync("len", |inp: &Inputs<String>| Ok(inp["upper"].len().to_string()))
///     .after(["upper"]))
///     .unwrap();
/// assert_eq!(g.run_blocking().output("len").unwrap(), "8");
/// ```
///
/// A task maps one to one onto a job-file entry of the distributed mode:
/// `id`, `dependencies`, `retries`/`timeout_ms` are plain data here, and the
/// entry's `type` + `input` select and parameterise the body.
///
/// ```
/// use std::time::Duration;
/// use fastexec::graph::{Graph, Task};
///
/// let mut g = Graph::<u64>::new();
/// g.add(Task::new("fetch", |_| async { Ok(20) })).unwrap();
/// g.add(
///     Task::new("double", |inp| async move { Ok(inp["fetch"] * 2) })
///         .after(["fetch"])
///         .retries(2)
///         .timeout(Duration::from_secs(5)),
/// )
/// .unwrap();
/// let report = g.run_blocking();
/// assert_eq!(report.output("double"), Some(&40));
/// ```
pub struct Task<T> {
    pub(crate) id: TaskId,
    pub(crate) deps: Vec<TaskId>,
    pub(crate) body: Body<T>,
    pub(crate) retry: RetryPolicy,
    pub(crate) timeout: Option<Duration>,
    pub(crate) priority: i32,
    pub(crate) demand: Demand,
}

impl<T: Send + Sync + 'static> Task<T> {
    /// A task named `id` running `body`, with no dependencies, one attempt and
    /// no timeout.
    ///
    /// `body` is called once per attempt and its future polled until the
    /// attempt ends. The future is dropped as soon as the attempt ends
    /// (it gave its result, panicked, or ran out of time), before the
    /// attempt is recorded: what it holds (a guard, a channel's sender) is
    /// released before the task's state changes and before any dependent
    /// starts. A panic from its destructor is caught: after the future
    /// panicked or ran out of time it fails nothing more; after the future
    /// gave its result, the attempt fails with that panic
    /// ([`TaskError::Panicked`](super::TaskError::Panicked); retried if
    /// retries remain) and the result is dropped, as a spawned task's
    /// future whose destructor panics makes that panic the task's.
    ///
    /// `body` itself, and what it captured, is kept until the task ends
    /// (a retry calls it again), then dropped by the run's waiter
    /// ([`RunHandle::wait_all`](super::RunHandle::wait_all), which
    /// [`Graph::run`](super::Graph::run) awaits) a chunk at a time while
    /// the run goes on, or when it ends.
    pub fn new<F, Fut>(id: impl Into<TaskId>, body: F) -> Self
    where
        F: Fn(Inputs<T>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, BoxError>> + Send + 'static,
    {
        Task::with_body(id.into(), Box::new(AsyncBody(body, PhantomData)))
    }

    /// A task named `id` whose body is a plain function: called once per
    /// attempt with its inputs borrowed for the call, it returns the output
    /// or an error. No dependencies, one attempt and no timeout.
    ///
    /// For synchronous work (computing, parsing, the nodes of a taskflow
    /// graph), this is the cheaper kind: the runner calls the function
    /// directly, with no future, no box and no reference count per attempt.
    /// The work runs on the worker thread that runs the task, like the
    /// first poll of an async body; work that blocks on I/O for long
    /// belongs in [`spawn_blocking`](crate::spawn_blocking) awaited from an
    /// async body instead.
    ///
    /// Retries, failure propagation, cancel-on-fail-fast and the report
    /// behave as for [`Task::new`] (a panic fails the attempt). What
    /// differs, since the body never suspends:
    ///
    /// - a [`timeout`](Task::timeout) cannot stop it: an attempt that
    ///   returns after its time limit counts as timed out
    ///   ([`TaskError::TimedOut`](super::TaskError::TimedOut), retried if
    ///   retries remain) and its output (or error) is dropped, a panic from
    ///   its destructor caught;
    /// - a cancel cannot stop it either: the task is cancelled at once (its
    ///   state, its dependents, anyone waiting on it, and the run, which may
    ///   end meanwhile), while the call runs on to its return and what it
    ///   returns is dropped;
    /// - it has no checkpoint ([`Inputs::checkpoint`] is async), so a
    ///   [`pause`](super::RunHandle::pause) requested while it runs does
    ///   not pause it: it completes if it returns within the pause timeout,
    ///   and is cancelled otherwise
    ///   ([`CancelReason::PauseTimedOut`](super::CancelReason::PauseTimedOut)),
    ///   as any task that reaches no checkpoint;
    /// - it can add tasks to the run ([`Inputs::add_task`], a subflow) but
    ///   not wait for them: make the follow-up work their dependent.
    ///
    /// ```
    /// use fastexec::graph::{Graph, Task};
    ///
    /// let mut g = Graph::<u64>::new();
    /// g.add(Task::sync("two", |_| Ok(2))).unwrap();
    /// g.add(Task::sync("three", |_| Ok(3))).unwrap();
    /// g.add(Task::sync("product", |inp| Ok(inp.values().product())).after(["two", "three"]))
    ///     .unwrap();
    /// // The kinds mix: an async task may depend on sync ones and the reverse.
    /// g.add(Task::new("square", |inp| async move { Ok(inp["product"] * inp["product"]) })
    ///     .after(["product"]))
    ///     .unwrap();
    /// g.add(Task::sync("check", |inp| {
    ///     if inp["square"] == 36 { Ok(1) } else { Err("wrong square".into()) }
    /// })
    /// .after(["square"]))
    /// .unwrap();
    /// let report = g.run_blocking();
    /// assert_eq!(report.output("product"), Some(&6));
    /// assert_eq!(report.output("check"), Some(&1));
    /// ```
    pub fn sync<F>(id: impl Into<TaskId>, body: F) -> Self
    where
        F: Fn(&Inputs<T>) -> Result<T, BoxError> + Send + Sync + 'static,
    {
        Task::with_body(id.into(), Box::new(SyncBody(body)))
    }

    fn with_body(id: TaskId, body: Body<T>) -> Self {
        Task {
            id,
            deps: Vec::new(),
            body,
            retry: RetryPolicy::default(),
            timeout: None,
            priority: 0,
            demand: Demand::new(),
        }
    }
}

impl<T> Task<T> {
    /// Adds dependencies: this task runs only after all of them completed, and
    /// receives their outputs in this order. Listing an id twice counts once.
    pub fn after<I>(mut self, deps: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<TaskId>,
    {
        self.deps.extend(deps.into_iter().map(Into::into));
        self
    }

    /// Allows `n` retries after a failed attempt (an error, a panic or a
    /// timeout), with the default backoff of [`RetryPolicy::attempts`].
    pub fn retries(mut self, n: u32) -> Self {
        self.retry = RetryPolicy::attempts(n.saturating_add(1));
        self
    }

    /// Sets the full retry policy.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Limits each attempt to `d`; an attempt running longer is dropped and
    /// counts as failed ([`TaskError::TimedOut`](super::TaskError::TimedOut)).
    /// The limit is enforced where the attempt suspends: it is not polled
    /// again after its deadline, so an attempt woken only then (its timer
    /// fired late, every worker being busy) times out even if its body
    /// would now be done. A body that never suspends
    /// ([`Task::sync`]) is judged when it returns. The limit is on the
    /// attempt's wall-clock time: a pause at a checkpoint
    /// ([`RunHandle::pause`](super::RunHandle::pause)) does not stop it,
    /// so an attempt paused past its deadline times out (if retries are
    /// left, the next attempt then waits for the resume).
    ///
    /// A zero limit is refused when the task is added
    /// ([`GraphError::ZeroTimeout`](super::GraphError::ZeroTimeout)): it
    /// would fail every sync attempt (judged on return, always late) and
    /// no async attempt done in its first poll (never judged), so the same
    /// setting would mean opposite things for the two kinds. A task with
    /// no limit has no timeout at all (the default).
    ///
    /// ```
    /// use std::time::Duration;
    /// use fastexec::graph::{Graph, GraphError, Task};
    ///
    /// let mut g = Graph::<u32>::new();
    /// let err = g.add(Task::sync("now", |_| Ok(1)).timeout(Duration::ZERO)).unwrap_err();
    /// assert!(matches!(err, GraphError::ZeroTimeout { ref task } if task.as_str() == "now"));
    /// assert!(g.is_empty());
    /// ```
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = Some(d);
        self
    }

    /// Sets the base priority (0 by default; higher runs first). Among
    /// ready tasks the highest effective priority is dispatched first:
    /// `base + floor(wait / aging_interval) * aging_boost` (see
    /// [`SchedulerConfig`](super::SchedulerConfig)), ties broken by the
    /// earlier ready time, then the id. (While every task is at priority 0
    /// with no budget or pause, ties of the same instant go in the order
    /// the tasks were added instead: see "Scheduling policies" in the
    /// [module docs](super).)
    ///
    /// ```
    /// use fastexec::graph::{Graph, SchedulerConfig, Task};
    ///
    /// // One CPU slot: tasks run one at a time, the urgent one first.
    /// let mut g = Graph::<u32>::with_config(SchedulerConfig::new().with_cpu_slots(1));
    /// g.add(Task::new("routine", |_| async { Ok(1) })).unwrap();
    /// g.add(Task::new("urgent", |_| async { Ok(2) }).priority(10)).unwrap();
    /// let report = g.run_blocking();
    /// assert_eq!(report.attempts()[0].task.as_str(), "urgent");
    /// ```
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Sets what the task needs while it runs (one CPU slot by default).
    /// A task demanding more of a hard-capped resource than the graph's
    /// [`SchedulerConfig`](super::SchedulerConfig) allows is refused when
    /// added ([`GraphError::ExceedsCap`](super::GraphError::ExceedsCap)).
    ///
    /// The task holds its demand until it ends (also while paused at a
    /// checkpoint). A ready task that does not
    /// fit may be passed by a task ranked after it that does (one of the
    /// next `LOOKAHEAD - 1`, see [`LOOKAHEAD`](super::LOOKAHEAD)), at most
    /// [`MAX_BYPASS`](super::MAX_BYPASS) times; then the capacity drains to
    /// it. So a task that awaits other tasks of its own graph in
    /// its body (a joined subflow) while it holds budget can deadlock when
    /// it needs more than `MAX_BYPASS` of them while a bigger task waits:
    /// give such a parent no demand (`Demand::new().cpu_slots(0)`), or add
    /// the follow-up work as its dependents instead of awaiting it.
    ///
    /// ```
    /// use fastexec::graph::{Demand, Graph, GraphError, SchedulerConfig, Task};
    ///
    /// let mut g = Graph::<()>::with_config(SchedulerConfig::new().with_cpu_slots(4));
    /// let big = Task::new("big", |_| async { Ok(()) }).demand(Demand::new().cpu_slots(8));
    /// let err = g.add(big).unwrap_err();
    /// assert!(matches!(err, GraphError::ExceedsCap { ref task, .. } if task.as_str() == "big"));
    /// ```
    pub fn demand(mut self, demand: Demand) -> Self {
        self.demand = demand;
        self
    }

    /// Shorthand: the task needs `slots` CPU slots (see [`Task::demand`]).
    pub fn cpu(mut self, slots: u64) -> Self {
        self.demand = self.demand.cpu_slots(slots);
        self
    }

    /// Shorthand: the task needs `bytes` of RAM (a soft cap; see [`Task::demand`]).
    pub fn ram(mut self, bytes: u64) -> Self {
        self.demand = self.demand.ram_bytes(bytes);
        self
    }

    /// Shorthand: the task needs `bytes` of VRAM (a soft cap; see [`Task::demand`]).
    pub fn vram(mut self, bytes: u64) -> Self {
        self.demand = self.demand.vram_bytes(bytes);
        self
    }

    /// The task's id.
    pub fn id(&self) -> &TaskId {
        &self.id
    }

    /// The ids it depends on, as given.
    pub fn deps(&self) -> &[TaskId] {
        &self.deps
    }
}

impl<T> std::fmt::Debug for Task<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task")
            .field("id", &self.id)
            .field("deps", &self.deps)
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .field("priority", &self.priority)
            .field("demand", &self.demand)
            .finish_non_exhaustive()
    }
}
