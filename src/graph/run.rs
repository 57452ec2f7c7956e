//! [`Graph`] (building) and [`RunHandle`] (running): the glue between the
//! state machine in `core.rs` and the executor's public API.

use std::any::Any;
use std::future::Future;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use super::core::{is_unit, AttemptStart, Core, Disarm, Effects, Release, Retry, MAX_BATCH};
use super::slots::{Popped, Recorded, Records, Starts};
use super::task::{Body, BodyFuture, Refill, TaskBody};
use super::TaskState;
use super::{dot, lane, CancelReason, GraphError, Inputs, Report, Task, TaskError};
use super::{Blocked, SchedulerConfig};
use crate::time::ticks::{self, Mark, Timeline};
use crate::time::Sleep;

/// A task graph under construction: add tasks, validate, then run.
///
/// All tasks of a graph share one output type `T`. This keeps outputs
/// statically typed (no downcast that can fail at run time), lets a task's
/// inputs be read as plain `&T`, and matches the distributed mode, whose job
/// files produce one kind of output (serialised bytes). Graphs whose tasks
/// produce different things use an enum as `T`, or `Arc<dyn Any + Send + Sync>`
/// to get the dynamically typed design back.
///
/// Outputs are stored as `Arc<T>` and shared with dependents, waiters and the
/// report, so `T` need not be `Clone` and fan-out copies nothing.
///
/// ```
/// use fastexec::graph::{Graph, Task, TaskState};
///
/// // A diamond: a -> (b, c) -> d.
/// let mut g = Graph::<i64>::new();
/// g.add(Task::new("a", |_| async { Ok(1) })).unwrap();
/// g.add(Task::new("b", |i| async move { Ok(i["a"] + 10) }).after(["a"])).unwrap();
/// g.add(Task::new("c", |i| async move { Ok(i["a"] + 100) }).after(["a"])).unwrap();
/// g.add(Task::new("d", |i| async move { Ok(i.values().sum()) }).after(["b", "c"]))
///     .unwrap();
///
/// let report = g.run_blocking();
/// assert_eq!(report.output("d"), Some(&112));
/// assert_eq!(report.task("d").unwrap().state, TaskState::Completed);
/// println!("{report}");
/// ```
pub struct Graph<T> {
    core: Core<T>,
}

impl<T: Send + Sync + 'static> Default for Graph<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + Sync + 'static> Graph<T> {
    /// An empty graph with the default scheduler settings: every task at
    /// priority 0, no caps (see [`SchedulerConfig::new`]).
    pub fn new() -> Self {
        Self::with_config(SchedulerConfig::new())
    }

    /// An empty graph with the default scheduler settings and room for
    /// `n` tasks: the tables the graph keeps per task (the nodes, the
    /// index of ids, the ready queue, the list of bodies of tasks that
    /// ended) are allocated once, rather than grown (and copied) while
    /// tasks are added. More than `n` tasks may still be added.
    ///
    /// ```
    /// use fastexec::graph::{Graph, Task};
    ///
    /// let mut g = Graph::<u64>::with_capacity(1000);
    /// for n in 0..1000u64 {
    ///     g.add(Task::sync(format!("square-{n}"), move |_| Ok(n * n))).unwrap();
    /// }
    /// assert_eq!(g.len(), 1000);
    /// assert_eq!(g.run_blocking().output("square-7"), Some(&49));
    /// ```
    pub fn with_capacity(n: usize) -> Self {
        let mut g = Self::new();
        g.reserve(n);
        g
    }

    /// Makes room for `additional` more tasks, as
    /// [`with_capacity`](Self::with_capacity) does for a graph made with
    /// [`with_config`](Self::with_config).
    ///
    /// ```
    /// use fastexec::graph::{Graph, SchedulerConfig, Task};
    ///
    /// let mut g = Graph::<u32>::with_config(SchedulerConfig::new().with_cpu_slots(2));
    /// g.reserve(3);
    /// for id in ["a", "b", "c"] {
    ///     g.add(Task::sync(id, |_| Ok(1))).unwrap();
    /// }
    /// assert!(g.run_blocking().is_success());
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.core.reserve(additional);
    }

    /// An empty graph dispatched by `config`: aging of priorities, CPU
    /// slots (a hard cap), RAM and VRAM soft caps, custom resources, the
    /// pause timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fastexec::graph::{Graph, SchedulerConfig, Task};
    ///
    /// let config = SchedulerConfig::new()
    ///     .with_cpu_slots(2)
    ///     .with_ram_soft_cap(1 << 30)
    ///     .with_aging(Duration::from_millis(100), 1);
    /// let mut g = Graph::<u32>::with_config(config);
    /// g.add(Task::new("a", |_| async { Ok(1) }).ram(512 << 20)).unwrap();
    /// assert!(g.run_blocking().is_success());
    /// ```
    pub fn with_config(config: SchedulerConfig) -> Self {
        Graph {
            core: Core::new(&config),
        }
    }

    /// An empty graph configured from the `FASTEXEC_*` environment
    /// variables (see [`SchedulerConfig::from_env`]).
    ///
    /// # Errors
    ///
    /// An [`EnvError`](crate::EnvError) naming the variable and its bad value.
    pub fn from_env() -> Result<Self, crate::EnvError> {
        Ok(Self::with_config(SchedulerConfig::from_env()?))
    }

    /// With fail-fast on, the first task to fail for good cancels every
    /// other unfinished task (running ones are aborted) instead of only its
    /// dependents becoming upstream-failed. Off by default. A task whose
    /// attempt another runner has taken, but whose body it has not called
    /// yet, counts as running: its body may still be called after the
    /// failure, its output is dropped, and the report counts that attempt
    /// as one that did not run (see [`RunHandle::cancel`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use fastexec::graph::{CancelReason, Graph, Task, TaskError, TaskState};
    ///
    /// let mut g = Graph::<u32>::new();
    /// g.fail_fast(true);
    /// g.add(Task::new("bad", |_| async { Err("broken".into()) })).unwrap();
    /// // Would run for an hour; cancelled (dropped at its await) instead.
    /// g.add(Task::new("long", |_| async {
    ///     fastexec::time::sleep(Duration::from_secs(3600)).await;
    ///     Ok(1)
    /// }))
    /// .unwrap();
    /// let report = g.run_blocking();
    /// assert_eq!(report.task("bad").unwrap().state, TaskState::Failed);
    /// let long = report.task("long").unwrap();
    /// assert_eq!(long.state, TaskState::Cancelled);
    /// assert!(matches!(
    ///     &long.error,
    ///     Some(TaskError::Cancelled(CancelReason::FailFast(id))) if id.as_str() == "bad"
    /// ));
    /// ```
    pub fn fail_fast(&mut self, on: bool) -> &mut Self {
        self.core.fail_fast = on;
        self
    }

    /// Adds one task. Its dependencies must already be in the graph. A
    /// task demanding more than a hard cap of the graph's
    /// [`SchedulerConfig`] is refused ([`GraphError::ExceedsCap`]).
    ///
    /// # Errors
    ///
    /// The task is not added, and the error names it:
    /// [`GraphError::EmptyId`], [`GraphError::DuplicateId`],
    /// [`GraphError::MissingDependency`], [`GraphError::Cycle`] (a task that
    /// lists itself as a dependency), [`GraphError::ZeroTimeout`],
    /// [`GraphError::ExceedsCap`] or [`GraphError::UnknownResource`] (a
    /// custom resource the [`SchedulerConfig`] does not declare).
    ///
    /// ```
    /// use fastexec::graph::{Graph, GraphError, Task};
    ///
    /// let mut g = Graph::<()>::new();
    /// let err = g.add(Task::new("b", |_| async { Ok(()) }).after(["a"])).unwrap_err();
    /// assert!(matches!(err, GraphError::MissingDependency { .. }));
    /// ```
    pub fn add(&mut self, task: Task<T>) -> Result<(), GraphError> {
        self.add_batch([task])
    }

    /// Adds tasks that may depend on each other in any order, and on tasks
    /// already in the graph. The batch is validated whole (duplicate ids,
    /// missing dependencies, cycles) and added whole or not at all.
    ///
    /// ```
    /// use fastexec::graph::{Graph, GraphError, Task};
    ///
    /// let mut g = Graph::<u32>::new();
    /// let one = |id: &str| Task::new(id, |_| async { Ok(1) });
    /// // Any order: "test" comes before the "build" it depends on.
    /// g.add_batch([one("test").after(["build"]), one("build")]).unwrap();
    ///
    /// // A bad batch adds nothing, and its error names the ids.
    /// let err = g
    ///     .add_batch([one("lint"), one("docs").after(["publish"]), one("publish").after(["docs"])])
    ///     .unwrap_err();
    /// assert!(matches!(err, GraphError::Cycle(_)));
    /// assert_eq!(err.to_string(), "cycle: docs -> publish -> docs");
    /// let err = g.add_batch([one("lint"), one("ship").after(["sign"])]).unwrap_err();
    /// assert_eq!(err.to_string(), "task `ship` depends on `sign`, which does not exist");
    /// assert_eq!(g.len(), 2);
    /// assert!(!g.contains("lint"));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`add`](Self::add), for the first member found at fault; a
    /// [`GraphError::Cycle`] gives the cycle's path. Nothing of the batch
    /// is added.
    pub fn add_batch(
        &mut self,
        tasks: impl IntoIterator<Item = Task<T>>,
    ) -> Result<(), GraphError> {
        // Ready nodes are spawned by `start`, so the effects are not needed yet.
        self.core
            .add(&mut tasks.into_iter().collect(), false)
            .map(drop)
    }

    /// The number of tasks.
    pub fn len(&self) -> usize {
        self.core.len()
    }

    /// Whether the graph has no task.
    pub fn is_empty(&self) -> bool {
        self.core.len() == 0
    }

    /// Whether a task has this id.
    pub fn contains(&self, id: &str) -> bool {
        self.core.lookup(id).is_ok()
    }

    /// The graph in Graphviz DOT: one node per task, an edge from each
    /// dependency to its dependent (the direction work flows).
    ///
    /// ```
    /// use fastexec::graph::{Graph, Task};
    ///
    /// let mut g = Graph::<()>::new();
    /// g.add(Task::new("a", |_| async { Ok(()) })).unwrap();
    /// g.add(Task::new("b", |_| async { Ok(()) }).after(["a"])).unwrap();
    /// assert!(g.to_dot().contains("\"a\" -> \"b\";"));
    /// ```
    pub fn to_dot(&self) -> String {
        dot::render(self.core.cold.iter().map(|c| {
            let deps = c.deps.iter().map(|&d| self.core.id(d));
            (&c.id, deps, None)
        }))
    }

    /// Starts running the graph on the current executor, in the caller's
    /// task groups (its [`Scope`](crate::Scope): see "Task groups" in the
    /// module docs), and returns a handle to watch and steer it.
    pub fn start(mut self) -> RunHandle<T> {
        let mut fx = Effects::default();
        let t0 = Instant::now();
        self.core.prepare_run(crate::current_threads(), t0, &mut fx);
        let unit = Arc::clone(&self.core.unit);
        let run = RunHandle {
            shared: Arc::new(Shared {
                core: Mutex::new(self.core),
                changed: crate::signal::Notify::new(),
                watchers: AtomicUsize::new(0),
                unit,
                t0,
                started_at: SystemTime::now(),
                scope: crate::Scope::current(),
            }),
        };
        run.shared.apply(fx);
        run
    }

    /// Runs the graph to the end and returns its report.
    pub async fn run(self) -> Report<T> {
        self.start().wait_all().await
    }

    /// Runs the graph to the end, blocking the calling thread (with
    /// [`block_on`](crate::block_on)), and returns its report.
    pub fn run_blocking(self) -> Report<T> {
        crate::block_on(self.run())
    }
}

/// State shared by a run's handles, its runners and its drivers.
pub(crate) struct Shared<T> {
    core: Mutex<Core<T>>,
    /// Notified when the run finishes, and when some task reaches a terminal
    /// state while anyone waits for a single task: waking `wait_all` on
    /// every completion would cost a thread wake-up per task.
    changed: crate::signal::Notify,
    /// How many `wait` calls are in progress.
    watchers: AtomicUsize,
    /// The one output every task shares when outputs carry nothing (see
    /// [`Shared::share`]); the core's `unit`.
    pub(crate) unit: Arc<OnceLock<Arc<T>>>,
    pub(crate) t0: Instant,
    pub(crate) started_at: SystemTime,
    /// Where the run was started: its runners and the tasks that carry on
    /// asynchronous attempts are spawned there, whoever wakes them (a
    /// `resume` or `add_task` from a task of some other group must not put
    /// them in that group, whose cancel would strand the tasks they hold).
    scope: crate::Scope,
}

impl<T> Shared<T> {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Core<T>> {
        // A panic never leaves the core half-updated (bodies run, and user
        // values are dropped, outside the lock: see "User values" in
        // `core.rs`), so a poisoned lock still holds consistent data.
        self.core.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Send + Sync + 'static> Shared<T> {
    /// Carries out transitions' effects, outside the lock. Inlined up to
    /// the common case of a runner's batch, which has nothing to do but
    /// look at the watchers (a call that only found that cost a chain ~50
    /// instructions per task). Returns whether there was anything to do.
    #[inline]
    pub(super) fn apply(self: &Arc<Self>, fx: Effects<T>) -> bool {
        // Relaxed: the core's lock orders this load against the increment
        // in `wait` (`Watching::new`). Our transition was made under the
        // lock, and a watcher increments before it checks the states under
        // the lock: if its check took the lock after us, it saw the
        // transition; if before, its increment happens before our lock
        // acquisition and so before this load, which sees it.
        let notify =
            fx.finished || fx.sweep || (fx.changed && self.watchers.load(Ordering::Relaxed) > 0);
        let work = fx.runners > 0 || !fx.retries.is_empty() || !fx.release.is_empty() || notify;
        if work {
            self.carry_out(fx, notify);
        }
        work
    }

    /// [`Shared::apply`] when there is something to do.
    #[inline(never)]
    fn carry_out(self: &Arc<Self>, fx: Effects<T>, notify: bool) {
        for _ in 0..fx.runners {
            let runner = Member::new(self, Role::Runner);
            self.scope.spawn(run_ready(runner)).detach();
        }
        for (i, failed, delay) in fx.retries {
            self.drive_apart(i, Resume::Backoff(failed, delay), None);
        }
        // Before the wake-ups, so that a waiter woken finds the values
        // dropped. A panic from a destructor fails nothing (the panic hook
        // reports it).
        for release in fx.release {
            match release {
                Release::Abort(mut handle) => handle.abort(),
                Release::Drop(value) => drop_caught(value),
                // Wakes with its own catch (see `DeferredWake`).
                Release::Wake(wake) => drop(wake),
                Release::Arm { at, number } => RunTimer::start_dispatch(self, at, number),
                Release::Disarm(timer) => {
                    if let Some(timer) = timer.upgrade() {
                        timer.disarm();
                    }
                }
            }
        }
        if notify {
            // Waiters' wakers may be anyone's: `Notify` wakes them with no
            // lock held (one may poll its wait again on the spot), and every
            // one of them even if one panics. That panic fails nothing here
            // (the panic hook reports it).
            caught(|| self.changed.notify_all());
        }
    }

    /// An attempt's output in the `Arc` it is shared through, made outside
    /// the core's lock (which keeps the allocation out of the critical
    /// section). Outputs of a type with no size and no drop glue, such as
    /// `()`, are all alike and dropping one does nothing, so they share one
    /// `Arc`, made from the first, and are not counted at all: `None` says
    /// "the shared one" (see `Core::output`). Neither an allocation per task
    /// (which, never freed during the run, always took the allocator's slow
    /// path) nor a reference count on a line every runner writes.
    fn share(&self, output: T) -> Option<Arc<T>> {
        if is_unit::<T>() {
            self.unit.get_or_init(|| Arc::new(output));
            None
        } else {
            Some(Arc::new(output))
        }
    }

    /// Gives node `i`'s body back from an attempt begun at `began` (if not
    /// recorded yet; see [`Core::give_back`]), dropping it outside the lock
    /// if the run has ended meanwhile.
    fn give_back(&self, i: u32, body: Body<T>, began: Option<Instant>) {
        let late = {
            let mut core = self.lock();
            if let Some(at) = began {
                core.began_at(i, at, None);
            }
            core.give_back(i, body);
            core.take_late()
        };
        drop_bodies(late);
    }

    /// Continues node `i` in a task of its own (an attempt that went
    /// asynchronous, begun at `began`, whose body is given back; or a wait
    /// before a retry), kept so cancel can abort it. The body goes back
    /// before the driver exists: once the attempt can end, the run can
    /// end, and the bodies must then all be in the core to be retired.
    fn drive_apart(self: &Arc<Self>, i: u32, resume: Resume<T>, began: Option<(Instant, Body<T>)>) {
        if let Some((at, body)) = began {
            self.give_back(i, body, Some(at));
        }
        let handle = self
            .scope
            .spawn(drive(Member::new(self, Role::Driver(i)), resume));
        let cancelled = self.lock().attach(i, handle);
        if let Some(mut handle) = cancelled {
            handle.abort();
        }
    }
}

/// A timer of the run: a [`Sleep`] polled with this timer's own waker, not
/// by a task, which does its [`Due`] on the thread that fires it. Two
/// kinds:
///
/// * the pause timeout of one pause request of [`RunHandle::pause`]: it
///   waits in the timer queue of the executor the pause was called on and,
///   when due, cancels the task if that request is still waiting for its
///   checkpoint (see [`Core::pause_timed_out`]). No task group holds it, so
///   cancelling one the caller of `pause` is in (which ends the caller, and
///   a watcher spawned from it) does not stop the timeout from applying;
///   neither does dropping the `pause` future. `pause` disarms it when it
///   settles first.
/// * the run's dispatch timer (see "Runners" in `core.rs`), armed by a
///   runner that leaves tasks that aging may let start later
///   ([`Release::Arm`], carried out in [`Shared::apply`]), in the timer
///   queue of that runner's executor: when due, it asks for runners if it
///   still stands ([`Core::dispatch_timer_due`]). The core disarms it when
///   another replaces it, or the run is stopped or finishes.
///
/// The queue's entry holds the timer (through its waker) until it fires or
/// is disarmed; it holds the run only weakly. If that executor shuts down
/// first, the sleep moves to the timer queue of the executor current on
/// the thread that shuts it down (see `Timer::register`); if that queue is
/// closed too (for instance, the executor was dropped from one of its own
/// tasks), the timer does not apply (a dispatch timer is then forgotten,
/// so that a later one can be armed).
///
/// # Polling protocol
///
/// A wake can come from any thread at any time, also from inside the
/// sleep's own poll: a sleep that finds both queues closed wakes its waker
/// before returning, on the polling thread, with the sleep's mutex held.
/// So only one thread polls at a time, and a wake never waits for the
/// poller. `polls` counts the polls owed:
///
/// * 0: no one is polling. A wake that raises it from 0 makes its thread
///   the poller.
/// * 1: a poller is polling. A wake that finds it at 1 or more (another
///   thread's, or a re-entrant one from inside the sleep's poll) only
///   raises it and returns, leaving the poll it asks for to the poller.
/// * After a pending poll the poller lowers it from 1 to 0 and stops; if it
///   is above 1, a wake arrived during that poll, so the poller sets it back
///   to 1 and polls again. No wake is lost: either the poller sees the raise
///   in that exchange, or the waker saw 0 and polls itself.
///
/// The poller also stops when the sleep is done: it fired, was disarmed
/// (taken out of the mutex by [`disarm`](Self::disarm)), or no queue took
/// it (the pending poll left it unregistered; polling it again would only
/// wake again, forever), in which case it is dropped.
struct RunTimer<T> {
    shared: std::sync::Weak<Shared<T>>,
    due: Due,
    /// Polls owed; see "Polling protocol".
    polls: AtomicUsize,
    sleep: Mutex<Option<Sleep>>,
}

/// What a [`RunTimer`] does when due.
enum Due {
    /// Times out pause request `request` on `node` after `timeout`.
    Pause {
        node: u32,
        request: u64,
        timeout: Duration,
    },
    /// Asks for runners, as dispatch timer `number`.
    Dispatch { number: u64 },
}

impl<T: Send + Sync + 'static> RunTimer<T> {
    fn new(shared: &Arc<Shared<T>>, deadline: Instant, due: Due) -> Arc<Self> {
        Arc::new(RunTimer {
            shared: Arc::downgrade(shared),
            due,
            polls: AtomicUsize::new(0),
            sleep: Mutex::new(Some(crate::time::sleep_until(deadline))),
        })
    }

    /// Starts the timeout of request `request` on node `i`; `None` when
    /// `timeout` is too long for an `Instant` (no limit).
    fn start_pause(
        shared: &Arc<Shared<T>>,
        node: u32,
        request: u64,
        timeout: Duration,
    ) -> Option<std::sync::Weak<Self>> {
        let deadline = Instant::now().checked_add(timeout)?;
        let due = Due::Pause {
            node,
            request,
            timeout,
        };
        let timer = RunTimer::new(shared, deadline, due);
        let weak = Arc::downgrade(&timer);
        timer.poll();
        Some(weak)
    }

    /// Carries out [`Release::Arm`]: makes dispatch timer `number`, due
    /// `at`, hands it to the core and starts it, unless it no longer
    /// stands.
    fn start_dispatch(shared: &Arc<Shared<T>>, at: Instant, number: u64) {
        let timer = RunTimer::new(shared, at, Due::Dispatch { number });
        let weak: std::sync::Weak<dyn Disarm> = Arc::downgrade(&timer) as _;
        if shared.lock().dispatch_timer_made(number, weak) {
            timer.poll();
        }
    }

    /// Asks for a poll of the sleep (registering this timer's waker), and
    /// polls it unless another poll is under way (see "Polling protocol");
    /// fires if it is due.
    fn poll(self: &Arc<Self>) {
        // AcqRel: the Release half pairs with the Acquire of the poller's
        // exchange (or swap) below, so that the poll it does for this wake
        // sees what this thread did before waking; the Acquire half pairs
        // with the poller's Release lowering to 0, when this thread becomes
        // the next poller.
        if self.polls.fetch_add(1, Ordering::AcqRel) != 0 {
            return; // the poller polls again for us
        }
        let waker = std::task::Waker::from(Arc::clone(self));
        let fired = loop {
            let mut slot = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
            let Some(sleep) = slot.as_mut() else {
                break false; // fired or disarmed
            };
            if Pin::new(&mut *sleep)
                .poll(&mut Context::from_waker(&waker))
                .is_ready()
            {
                *slot = None;
                break true;
            }
            if !sleep.is_registered() {
                // No queue took it: the timeout does not apply.
                *slot = None;
                break false;
            }
            drop(slot);
            // Release: pairs with the Acquire half of the next waker's
            // `fetch_add`. Acquire on failure: pairs with the Release half
            // of the `fetch_add`s that raised it during this poll.
            match self
                .polls
                .compare_exchange(1, 0, Ordering::Release, Ordering::Acquire)
            {
                Ok(_) => return,
                // Woken during the poll: once more. Acquire as above, for a
                // wake raising it between the exchange and here.
                Err(_) => self.polls.swap(1, Ordering::Acquire),
            };
        };
        // Done with the sleep (the slot is empty): later wakes find nothing
        // to poll. Release: pairs with the Acquire half of their `fetch_add`.
        self.polls.store(0, Ordering::Release);
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let fx = match self.due {
            Due::Pause {
                node,
                request,
                timeout,
            } if fired => shared
                .lock()
                .pause_timed_out(node, request, timeout, Instant::now()),
            Due::Pause { .. } => return,
            Due::Dispatch { number } => {
                let mut fx = Effects::default();
                shared.lock().dispatch_timer_due(number, fired, &mut fx);
                fx
            }
        };
        shared.apply(fx);
    }

    /// Disarms the timer `timer` refers to, if it is still there.
    fn disarm_weak(timer: &Option<std::sync::Weak<Self>>) {
        if let Some(timer) = timer.as_ref().and_then(std::sync::Weak::upgrade) {
            timer.disarm();
        }
    }
}

impl<T: Send + Sync + 'static> Disarm for RunTimer<T> {
    /// Drops the sleep (if it is not done yet), which takes the timer out
    /// of the queue.
    fn disarm(&self) {
        let sleep = self.sleep.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(sleep);
    }
}

impl<T: Send + Sync + 'static> std::task::Wake for RunTimer<T> {
    fn wake(self: Arc<Self>) {
        self.poll();
    }
}

/// One of the run's own tasks (a runner, a hand-off of a runner's batch,
/// the driver of one node), which owns its hold on the run. Armed while
/// the task has work to do; the task disarms it as it returns. Dropped
/// armed, the task was dropped before it finished: a task group the run
/// was started in was cancelled, or the executor shut down (see "Task
/// groups" in the module docs), or the task panicked (a bug of this layer;
/// see [`lost_reason`]). What it held would then be lost for good
/// (an attempt left running, a runner counted that takes no ready task),
/// so the run is cancelled instead ([`Core::abandon`]), and `wait_all`
/// returns. A driver aborted on purpose (its task was cancelled or the run
/// stopped) finds its node ended, and does nothing. A runner or a driver
/// is one of these per task of the executor, not per node: the per-node
/// path does not touch it.
struct Member<T: Send + Sync + 'static> {
    shared: Arc<Shared<T>>,
    role: Role<T>,
    armed: bool,
}

/// What a [`Member`] is to the run.
enum Role<T> {
    /// A runner ([`run_ready`]), counted in the core.
    Runner,
    /// A hand-off ([`run_apart`]), with the attempts it has not taken yet
    /// (begun: their nodes are running, and their bodies are lent).
    Apart(Vec<AttemptStart<T>>),
    /// The driver of this node ([`drive`]), whose body is in the core.
    Driver(u32),
}

impl<T: Send + Sync + 'static> Member<T> {
    #[inline]
    fn new(shared: &Arc<Shared<T>>, role: Role<T>) -> Self {
        Member {
            shared: Arc::clone(shared),
            role,
            armed: true,
        }
    }

    /// The task finished its work: dropping it is no loss.
    #[inline]
    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl<T: Send + Sync + 'static> Drop for Member<T> {
    #[inline]
    fn drop(&mut self) {
        if self.armed {
            self.lost();
        }
    }
}

impl<T: Send + Sync + 'static> Member<T> {
    /// See the type's docs. Bodies lent to a hand-off are given back
    /// first, so that the cancel retires them with the others; the effects
    /// (waking the run's waiters, aborting the other drivers) are carried
    /// out, and this task's own driver handle dropped, outside the lock.
    #[cold]
    #[inline(never)]
    fn lost(&mut self) {
        let (runner, driver, lent) = match &mut self.role {
            Role::Runner => (true, None, Vec::new()),
            Role::Apart(begun) => (false, None, mem::take(begun)),
            Role::Driver(i) => (false, Some(*i), Vec::new()),
        };
        let reason = lost_reason(&self.shared.scope);
        let (fx, own, late) = {
            let mut core = self.shared.lock();
            let nodes: Vec<u32> = lent.iter().map(|start| start.node).collect();
            for start in lent {
                core.give_back(start.node, start.body);
            }
            let (fx, own) = core.abandon(runner, driver, reason, Instant::now());
            // Their bodies were never called.
            for i in nodes {
                core.cancelled_attempt_reported(i, None);
            }
            (fx, own, core.take_late())
        };
        drop(own);
        drop_bodies(late);
        self.shared.apply(fx);
    }
}

/// Why a run whose task (started in `scope`) was dropped before it finished
/// its work is cancelled. The executor's shutdown flag is set before it
/// drops any task, so it is tested first: an executor dropped from a thread
/// that is unwinding drops the run's tasks during that unwinding. Otherwise
/// a task dropped while its thread unwinds is the run's own task that
/// panicked (its future's locals are dropped by the unwinding); a group's
/// cancel drops its tasks while their executor runs, in no unwinding.
#[cold]
fn lost_reason(scope: &crate::Scope) -> CancelReason {
    if scope.executor_has_shut_down() {
        CancelReason::ExecutorShutdown
    } else if std::thread::panicking() {
        CancelReason::Internal
    } else {
        CancelReason::GroupCancelled
    }
}

/// Attempts a runner starts before it yields to the executor, so that the
/// other tasks of its worker (timers, waiters, other runners) get a turn.
const RUNNER_BUDGET: usize = 128;

/// How long a runner may spend on one batch before it hands the attempts
/// it has not polled yet to a task of their own, which an idle worker can
/// steal: a batch must not hold short tasks back behind a long one.
const HAND_OFF_AFTER: Duration = Duration::from_micros(50);

/// A runner's attempts: begun and not yet polled, polled to their end and
/// not yet recorded, the box of the last one that finished, kept for the
/// next body (see [`BodyFuture`]), and the runner's inputs, refilled for
/// each attempt.
struct Batch<T> {
    begun: Starts<T>,
    ran: Records<T>,
    /// Where each async body makes its future (see [`TaskBody::call`]); it keeps the box
    /// of the last attempt that finished, for the next.
    slot: Option<BodyFuture<T>>,
    /// The inputs of the attempt being begun, lent to a sync body, their
    /// outputs moved out for an async one (see [`TaskBody`]). Their run
    /// handle is the runner's own: an async attempt counts a reference to
    /// it, on a line of the runner's, rather than to the run, whose count
    /// every runner would write for every task (a line moving between
    /// cores, next to the run's lock).
    inputs: Inputs<T>,
    /// Bodies given back after the run ended (see [`Core::take_late`]),
    /// dropped with the batch ([`drop_bodies`]), outside the lock: a runner
    /// whose run has ended leaves.
    late: Vec<Body<T>>,
    /// The clock of the attempts polled since the last record: ticks per
    /// attempt, exact marks at the locks around them (see
    /// [`crate::time::ticks`]).
    timeline: Timeline,
}

impl<T> Drop for Batch<T> {
    fn drop(&mut self) {
        drop_bodies(mem::take(&mut self.late));
    }
}

impl<T> Batch<T> {
    fn new(shared: &Arc<Shared<T>>, begun: Vec<AttemptStart<T>>) -> Self {
        Batch {
            ran: Records::with_capacity(begun.len().max(MAX_BATCH)),
            begun: Starts::from_vec(begun, MAX_BATCH),
            slot: None,
            inputs: Inputs::new(Arc::new(RunHandle {
                shared: Arc::clone(shared),
            })),
            late: Vec::new(),
            timeline: Timeline::default(),
        }
    }
}

/// A runner: takes a batch of ready nodes per lock acquisition (see
/// `Core::next_attempts`) and polls each attempt inline. An attempt done
/// in its first poll (the common case of a short body) costs no task of its
/// own, and finishing a batch, releasing its dependents and taking the next
/// batch share one lock acquisition. An attempt that returns `Pending`
/// moves to a task of its own ([`drive`]) and the runner goes on. It leaves
/// when no node is ready (see `core.rs` for why no ready node is then
/// forgotten).
async fn run_ready<T: Send + Sync + 'static>(mut runner: Member<T>) {
    let shared = &runner.shared;
    let mut batch = Batch::new(shared, Vec::with_capacity(MAX_BATCH));
    let mut budget = RUNNER_BUDGET;
    loop {
        // A runner takes ready nodes after this record only if it has no
        // attempts of its batch left to poll (after a failure stopped it)
        // and has not used up its budget (then it yields first).
        let mut fx = Effects {
            runner_here: batch.begun.is_empty() && budget > 0,
            ..Effects::default()
        };
        let (now, more) = {
            let mut core = shared.lock();
            // Read under the lock: a runner descheduled between a clock
            // read and the lock would otherwise start its next attempt at a
            // stale time, earlier than transitions other runners recorded
            // meanwhile (a task's start before its dependency's end).
            let now = record(&mut core, &mut batch, Instant::now(), &mut fx);
            let more = if !batch.begun.is_empty() {
                Some(true)
            } else if budget > 0 {
                Some(core.next_attempts(now, lane::current(), &mut batch.begun, &mut fx))
            } else {
                None
            };
            (now, more)
        };
        // Effects carried out (user values dropped, tasks spawned, waiters
        // woken) take time that is not the next attempt's: read again, so
        // that its start and its time limit count from its call.
        let now = if shared.apply(fx) {
            Instant::now()
        } else {
            now
        };
        match more {
            None => {
                budget = RUNNER_BUDGET;
                crate::yield_now().await;
            }
            Some(false) => break,
            Some(true) => {
                budget = budget.saturating_sub(batch.begun.len());
                in_context(|cx| poll_batch(shared, &mut batch, now, cx)).await;
            }
        }
    }
    // Left with no node ready, no longer counted (see `next_attempts`).
    runner.disarm();
}

/// Polls each begun attempt of `batch` (begun at `start`) once, in order,
/// into `batch.ran`; those not done move to drivers. It stops after an
/// attempt that failed, so that the failure is recorded (and, fail-fast,
/// cancels the rest) before the next attempt starts, as without batches.
/// If the batch has run longer than [`HAND_OFF_AFTER`], the attempts left
/// go to a task of their own. A plain function taking the caller's context (not an `async fn`):
/// it spawns [`run_apart`], which calls it, and a recursive `async fn`
/// would not be provably `Send`.
///
/// The clock between attempts is the batch's [`Timeline`]: one tick
/// reading per attempt boundary (an attempt's end and the next one's
/// start), turned into instants by [`record`]. An attempt with a time limit
/// takes exact marks at its start and, if its body is sync, its end, so
/// that its limit and its record count from the same readings; so does
/// one whose `tracing` span is made (see [`begin`]). A batch of one
/// attempt (a chain's) reads no ticks: it starts at `now` (its caller's
/// reading) and ends at its record's.
fn poll_batch<T: Send + Sync + 'static>(
    shared: &Arc<Shared<T>>,
    batch: &mut Batch<T>,
    now: Instant,
    cx: &mut Context<'_>,
) {
    let Batch {
        begun: to_poll,
        ran,
        slot,
        inputs,
        timeline,
        ..
    } = batch;
    // Several attempts: a mark to interpolate their readings from (read
    // after `now`, which is never stale).
    let start = if to_poll.len() > 1 {
        Mark::now()
    } else {
        Mark::coarse(now)
    };
    timeline.start(start);
    // Made at the second attempt: a batch of one, as a chain's, asks for
    // no tick reading and no hand-off.
    let mut hand_off_ticks = None;
    let mut now = start.ticks;
    let mut first = true;
    while !to_poll.is_empty() {
        if !first {
            now = timeline.tick();
            if let Some(ended) = ran.last_ended() {
                ended.get_or_insert(now);
            }
            let limit = *hand_off_ticks.get_or_insert_with(|| ticks::ticks_in(HAND_OFF_AFTER));
            if past_hand_off(timeline, now, limit) {
                let rest = to_poll.take_all();
                let apart = Member::new(shared, Role::Apart(rest));
                shared.scope.spawn(run_apart(apart)).detach();
                return;
            }
        }
        first = false;
        let Some(Popped {
            node: i,
            body,
            timeout,
        }) = to_poll.pop_front_into(inputs)
        else {
            break;
        };
        // The reading a sync body's time limit was judged by, if it has one.
        let mut judged = None;
        let mut began = now;
        let begun = if timeout.is_none() && !spans_wanted() {
            // No limit to count from the start, no span: the tick will do.
            let called = panic::catch_unwind(AssertUnwindSafe(|| body.call(inputs, slot, cx)));
            // (Without a limit, `outcome` reads no instant: the start's
            // stands in.)
            let limit = (start.instant, None);
            outcome(called, &*body, slot, limit, None, &mut judged)
        } else {
            let mut mark = Mark::now();
            let begun = begin(&*body, inputs, (&mut mark, timeout), slot, cx, &mut judged);
            began = timeline.push(mark).ticks;
            begun
        };
        match begun {
            Begun::Over(result) => {
                let failed = result.is_err();
                // A sync body's limit was judged by a reading after it
                // returned: its record ends there.
                let ended = judged.map(|end| timeline.push(end).ticks);
                let result = result.map(|out| shared.share(out)).map_err(Box::new);
                ran.push(i, body, result, (began, ended));
                if failed {
                    // Rare: the rest waits (in `to_poll`) for the failure
                    // to be recorded.
                    return;
                }
            }
            Begun::Pending(attempt) => {
                // Its driver records it: its start as an instant now,
                // between the marks so far and one taken now.
                timeline.mark();
                let began = timeline.instant_now(began);
                shared.drive_apart(i, Resume::Attempt(attempt), Some((began, body)));
            }
        }
    }
}

/// Whether the batch whose timeline this is has run longer than
/// [`HAND_OFF_AFTER`] at reading `now`: by the ticks (`hand_off_ticks`,
/// the limit in ticks once their rate is known), confirmed by an exact
/// mark.
#[inline]
fn past_hand_off(timeline: &mut Timeline, now: u64, hand_off_ticks: Option<u64>) -> bool {
    if let Some(limit) = hand_off_ticks {
        if now - timeline.first().ticks < limit {
            return false;
        }
    }
    let began = timeline.first().instant;
    timeline.mark().instant > began + HAND_OFF_AFTER
}

/// Whether a subscriber may want an attempt's debug span (one relaxed
/// load): see [`begin`].
#[inline(always)]
fn spans_wanted() -> bool {
    tracing::level_enabled!(tracing::Level::DEBUG)
}

/// Runs attempts a runner handed off (see [`poll_batch`]) and records them.
/// (It holds its attempts in `apart` until first polled, so that if it is
/// dropped unpolled they go back to the run; see [`Member`].) It runs them
/// all in its first poll, on one thread, which their records name instead
/// of the runner's that began them: a hand-off costs one more lock.
async fn run_apart<T: Send + Sync + 'static>(mut apart: Member<T>) {
    let begun = match &mut apart.role {
        Role::Apart(begun) => mem::take(begun),
        _ => unreachable!("a hand-off's member holds its attempts"),
    };
    let shared = &apart.shared;
    {
        let lane = lane::current();
        let mut core = shared.lock();
        for start in &begun {
            core.run_on(start.node, lane);
        }
    }
    let mut batch = Batch::new(shared, begun);
    while !batch.begun.is_empty() {
        in_context(|cx| poll_batch(shared, &mut batch, Instant::now(), cx)).await;
        let mut fx = Effects::default();
        record(&mut shared.lock(), &mut batch, Instant::now(), &mut fx);
        shared.apply(fx);
    }
    apart.disarm();
}

/// Calls `f` once with the current task's context.
async fn in_context<R>(f: impl FnOnce(&mut Context<'_>) -> R) -> R {
    let mut f = Some(f);
    std::future::poll_fn(|cx| Poll::Ready(f.take().expect("polled once")(cx))).await
}

/// Records the attempts a runner polled to their end (the last ended at
/// `now`, which closes the batch's timeline): their outputs or failures,
/// and the retries due, and gives their bodies back. Then drops the begun
/// attempts of tasks that ended meanwhile (cancelled, or fail-fast after a
/// failure of the batch): they do not start, their records say they did
/// not run, and their bodies go back to be retired (or, if the run has
/// ended, to the batch, see [`Batch::late`]). Gives the instant the
/// caller's next step counts from: `now`, or the later end mark read here.
/// (`now` goes in and out by value: behind a reference, an `Instant` is
/// stored as two fields and loaded as one, a load that waits.)
fn record<T>(
    core: &mut Core<T>,
    batch: &mut Batch<T>,
    mut now: Instant,
    fx: &mut Effects<T>,
) -> Instant {
    if !batch.ran.is_empty() {
        if batch.timeline.read_nothing() {
            // One attempt with nothing read but its start (a chain's
            // batch): it ran from the first mark to `now`. (Spared the
            // conversion, whose marks, copied by value, cost the chain a
            // stalled load per batch.)
            let began = batch.timeline.first().instant;
            for r in batch.ran.take_all() {
                debug_assert!(r.ended.is_none(), "an end read, not kept");
                ran_at(core, r, (began, now), fx);
            }
        } else {
            // The end of the batch's timeline: `now`, or, if it read
            // ticks, a mark to interpolate them from, read now (under the
            // lock too), whose instant is then the caller's `now`, so that
            // what starts next starts no earlier than this batch's last
            // attempt ended.
            let end = if batch.timeline.interpolates() {
                let end = Mark::now();
                now = end.instant;
                end
            } else {
                Mark::coarse(now)
            };
            let mut at = batch.timeline.instants(end);
            for r in batch.ran.take_all() {
                // In the order read: `at` only goes forward.
                let times = (at.at(r.began), r.ended.map_or(end.instant, |t| at.at(t)));
                ran_at(core, r, times, fx);
            }
        }
        core.wake_runners(fx);
        core.ask_sweep(fx);
    }
    if !batch.begun.is_empty() {
        for start in batch.begun.take_all() {
            if core.still_running(start.node) {
                batch.begun.push(start);
            } else {
                // Cancelled before its body was called: it did not run.
                core.cancelled_attempt_reported(start.node, None);
                core.give_back(start.node, start.body);
            }
        }
    }
    if core.has_late() {
        keep_late(core, batch);
    }
    now
}

/// Records attempt `r`, which ran over `times`, and the retry it is due.
#[inline(always)]
fn ran_at<T>(core: &mut Core<T>, r: Recorded<T>, times: (Instant, Instant), fx: &mut Effects<T>) {
    if let Some(delay) = core.attempt_ran(r.node, r.body, times, r.result, fx) {
        fx.retries.push((r.node, times.1, delay));
    }
}

/// Moves the bodies given back after the run ended into `batch`, to drop
/// outside the lock (see [`Batch::late`]).
#[cold]
#[inline(never)]
fn keep_late<T>(core: &mut Core<T>, batch: &mut Batch<T>) {
    batch.late.extend(core.take_late());
}

/// Begins an attempt at `began` (with its time limit): calls `body` with
/// `inputs` (the attempt's); an async body makes its future in `slot` and
/// polls it once with `cx` (see [`TaskBody`]). Gives the result if the
/// attempt is over (done, or it panicked), or the attempt to poll again.
/// The caller keeps the body, to give back (see [`AttemptStart`]).
///
/// `began` is the caller's clock reading, a few instructions before the
/// call; if a span is made first, which can take any time (a subscriber's
/// code, and the run's lock for the task's id), it is read again after
/// it. So it says when the body was called: an attempt whose task was
/// cancelled before then did not run (`Core::cancelled_attempt_reported`).
/// A sync body with a time limit that returned leaves in `judged` the
/// reading its limit was judged by (see [`overran`]), for the attempt's
/// record to end at.
#[inline(always)]
fn begin<T: Send + Sync + 'static>(
    body: &dyn TaskBody<T>,
    inputs: &mut Inputs<T>,
    (began, timeout): (&mut Mark, Option<Duration>),
    slot: &mut Option<BodyFuture<T>>,
    cx: &mut Context<'_>,
    judged: &mut Option<Mark>,
) -> Begun<T> {
    // With no subscriber that could want a debug span (one relaxed load),
    // no span is made, kept or dropped: the plain path holds none at all.
    if spans_wanted() {
        return begin_in_span(body, inputs, (began, timeout), slot, cx, judged);
    }
    let called = panic::catch_unwind(AssertUnwindSafe(|| body.call(inputs, slot, cx)));
    outcome(called, body, slot, (began.instant, timeout), None, judged)
}

/// [`begin`] when a subscriber may want the attempt's `tracing` span: the
/// call and the attempt run in it (the task's id is fetched for it).
#[cold]
#[inline(never)]
fn begin_in_span<T: Send + Sync + 'static>(
    body: &dyn TaskBody<T>,
    inputs: &mut Inputs<T>,
    (began, timeout): (&mut Mark, Option<Duration>),
    slot: &mut Option<BodyFuture<T>>,
    cx: &mut Context<'_>,
    judged: &mut Option<Mark>,
) -> Begun<T> {
    let span = tracing::debug_span!("graph_task", id = %inputs.task_id(), attempt = inputs.attempt);
    let span = Some(span).filter(|s| !s.is_disabled()).map(Box::new);
    *began = Mark::now();
    let limit = (began.instant, timeout);
    let mut call = || panic::catch_unwind(AssertUnwindSafe(|| body.call(inputs, slot, cx)));
    let called = match span.as_deref() {
        Some(span) => span.in_scope(call),
        None => call(),
    };
    outcome(called, body, slot, limit, span, judged)
}

/// What the first call of an attempt's `body` (begun at `began`, with its
/// time limit) made of it: over (done, or it panicked), or under way, its
/// future taken from `slot` with the attempt's span; for a sync body with
/// a limit, the reading the limit was judged by in `judged`. (Always
/// inlined: as a call it cost the plain path more than the span it
/// spares.)
#[inline(always)]
fn outcome<T>(
    called: std::thread::Result<Poll<Result<T, super::BoxError>>>,
    body: &dyn TaskBody<T>,
    slot: &mut Option<BodyFuture<T>>,
    (began, timeout): (Instant, Option<Duration>),
    span: Option<Box<tracing::Span>>,
    judged: &mut Option<Mark>,
) -> Begun<T> {
    match called {
        Ok(Poll::Ready(result)) => match timeout {
            Some(limit) if overran(body, began, limit, judged) => {
                Begun::Over(Err(too_late(result, limit)))
            }
            _ => Begun::Over(result.map_err(TaskError::from)),
        },
        Ok(Poll::Pending) => Begun::Pending(Attempt {
            body: slot
                .take()
                .expect("a pending body left its future in the slot"),
            deadline: Deadline::new(began, timeout),
            span,
        }),
        Err(payload) => {
            // The future that panicked, if the body made one: what it
            // holds is released now, not when the slot is next filled.
            if let Some(held) = slot {
                empty_quietly(held.as_mut());
            }
            Begun::Over(Err(panic_error(payload)))
        }
    }
}

/// Whether an attempt of `body` begun at `began`, which just returned,
/// ran past its time limit where nothing could stop it: a sync body (see
/// [`Task::sync`]), judged by a reading left in `judged`, which the
/// attempt's record then ends at (a completed attempt is never recorded
/// longer than its limit, nor a timed-out one shorter). An async body's
/// limit applies where it suspends (see [`Deadline`]). Out of line: only
/// tasks with a timeout call it.
#[inline(never)]
fn overran<T>(
    body: &dyn TaskBody<T>,
    began: Instant,
    limit: Duration,
    judged: &mut Option<Mark>,
) -> bool {
    if !body.is_sync() {
        return false;
    }
    let end = *judged.insert(Mark::now());
    end.instant.saturating_duration_since(began) > limit
}

/// The error of a sync attempt that returned `result` past its time limit
/// (`limit`), which is dropped, quietly: a panic from its destructor must
/// not unwind out of the runner.
#[cold]
#[inline(never)]
fn too_late<T>(result: Result<T, super::BoxError>, limit: Duration) -> TaskError {
    drop_caught(result);
    TaskError::TimedOut(limit)
}

/// What [`begin`] gives.
enum Begun<T> {
    /// The attempt is over: done in its first poll, or it panicked.
    Over(Result<T, TaskError>),
    /// The attempt is under way.
    Pending(Attempt<T>),
}

/// Where a driver picks node `i` up.
enum Resume<T> {
    /// An attempt under way.
    Attempt(Attempt<T>),
    /// An attempt that failed at this instant, to retry after this wait
    /// from then (not from when the driver first runs, which a busy worker
    /// may delay: the two waits would add up).
    Backoff(Instant, Duration),
}

/// Runs the node of `driver` from `resume` on: the attempt, then retries
/// with backoff, and the final transition.
async fn drive<T: Send + Sync + 'static>(mut driver: Member<T>, resume: Resume<T>) {
    let Role::Driver(i) = driver.role else {
        unreachable!("a driver's member names its node")
    };
    drive_node(&driver.shared, i, resume).await;
    driver.disarm();
}

/// [`drive`]'s work: returns once node `i` needs its driver no more.
async fn drive_node<T: Send + Sync + 'static>(
    shared: &Arc<Shared<T>>,
    i: u32,
    mut resume: Resume<T>,
) {
    loop {
        // The reading a retried sync body's time limit was judged by, if it
        // has one: the attempt ends there (see `overran`).
        let mut judged = None;
        let result = match resume {
            Resume::Attempt(attempt) => attempt.await.map(|out| shared.share(out)),
            Resume::Backoff(failed, delay) => {
                match failed.checked_add(delay) {
                    Some(due) => crate::time::sleep_until(due).await,
                    // Too far for an `Instant`: as long as `sleep` waits.
                    None => crate::time::sleep(delay).await,
                }
                let (now, start) = loop {
                    let (now, begun) = {
                        let mut core = shared.lock();
                        // Under the lock, as in `run_ready`. (A mark for
                        // `begin`: no tick is read here.)
                        let now = Mark::coarse(Instant::now());
                        (now, core.retry_attempt(i, now.instant, lane::current()))
                    };
                    match begun {
                        Retry::Start(start) => break (now, start),
                        Retry::Over(fx) => {
                            shared.apply(fx);
                            return;
                        }
                        // Paused between attempts: the next one waits for
                        // the resume; a cancel ends the driver.
                        Retry::Paused(control) => {
                            if control.checkpoint().await.is_err() {
                                return;
                            }
                        }
                    }
                };
                let mut inputs = Inputs::new(Arc::new(RunHandle {
                    shared: Arc::clone(shared),
                }));
                let mut outputs = start.outputs;
                inputs.refill(i, start.attempt, &mut outputs);
                let body = start.body;
                let mut began = now;
                let limit = (&mut began, start.timeout);
                let begun =
                    in_context(|cx| begin(&*body, &mut inputs, limit, &mut None, cx, &mut judged))
                        .await;
                // Given back before the attempt can end (see
                // `Shared::drive_apart`), with when its body was called: a
                // retry cancelled before that did not run.
                shared.give_back(i, body, Some(began.instant));
                let result = match begun {
                    Begun::Over(result) => result,
                    Begun::Pending(attempt) => attempt.await,
                };
                result.map(|out| shared.share(out))
            }
        };
        let mut fx = Effects::default();
        let (ended, retry) = {
            let mut core = shared.lock();
            // Under the lock, as in `run_ready`; a limit's reading, taken
            // before, is no later than transitions recorded since (they
            // happened after the attempt ended).
            let ended = judged.map_or_else(Instant::now, |end: Mark| end.instant);
            (ended, core.finish_attempt(i, result, ended, &mut fx))
        };
        shared.apply(fx);
        match retry {
            Some(delay) => resume = Resume::Backoff(ended, delay),
            None => return,
        }
    }
}

/// An attempt under way (its body's future was not done in its first
/// poll): the future, with panics caught and the timeout applied. `Unpin`
/// and movable, so that a runner can hand it to a driver task.
struct Attempt<T> {
    body: BodyFuture<T>,
    deadline: Deadline,
    /// The `tracing` span of this attempt, entered while it is polled
    /// (`None` if no subscriber wants it).
    span: Option<Box<tracing::Span>>,
}

/// An attempt's time limit: when it expires and its length, and the timer,
/// made when a poll first finds the body not done (an attempt done in its
/// first poll, the common case, never makes one).
struct Deadline {
    expires: Option<(Instant, Duration)>,
    timer: Option<Box<Sleep>>,
}

impl Deadline {
    /// The limit of an attempt begun at `began` (none if `timeout` is none,
    /// or too long for an `Instant`: such an attempt never times out).
    #[inline]
    fn new(began: Instant, timeout: Option<Duration>) -> Self {
        let expires = match timeout {
            None => None,
            Some(d) => began.checked_add(d).map(|at| (at, d)),
        };
        Deadline {
            expires,
            timer: None,
        }
    }

    /// The limit, if the attempt has run out of time (a clock reading,
    /// only for attempts with a limit; no timer is made).
    #[inline]
    fn passed(&self) -> Option<Duration> {
        let (at, d) = self.expires?;
        (Instant::now() >= at).then_some(d)
    }

    /// Whether the attempt has run out of time; if not, the timer will
    /// wake the task polling it when it does.
    fn poll_expired(&mut self, cx: &mut Context<'_>) -> Option<Duration> {
        let (at, d) = self.expires?;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::new(crate::time::sleep_until(at)));
        Pin::new(&mut **timer).poll(cx).is_ready().then_some(d)
    }
}

impl<T> Future for Attempt<T> {
    type Output = Result<T, TaskError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Attempt {
            body,
            deadline,
            span,
        } = self.get_mut();
        let _entered = span.as_deref().map(tracing::Span::enter);
        // The deadline first: an attempt woken after it (every worker was
        // busy when its timer or its wake-up came due) is not polled again,
        // so a result it would give now does not count (see `Task::timeout`).
        if let Some(d) = deadline.passed() {
            return Poll::Ready(Err(timed_out(body.as_mut(), d)));
        }
        match panic::catch_unwind(AssertUnwindSafe(|| body.as_mut().poll_held(cx))) {
            Ok(Poll::Ready(result)) => return Poll::Ready(result.map_err(TaskError::from)),
            Ok(Poll::Pending) => {}
            Err(payload) => {
                empty_quietly(body.as_mut());
                return Poll::Ready(Err(panic_error(payload)));
            }
        }
        match deadline.poll_expired(cx) {
            Some(d) => Poll::Ready(Err(timed_out(body.as_mut(), d))),
            None => Poll::Pending,
        }
    }
}

/// The error of an attempt that ran out of time (`limit`), its future
/// dropped first, quietly (see [`Task::new`](super::Task::new)).
#[cold]
fn timed_out<T>(held: Pin<&mut dyn Refill<T>>, limit: Duration) -> TaskError {
    empty_quietly(held);
    TaskError::TimedOut(limit)
}

fn panic_error(payload: Box<dyn Any + Send>) -> TaskError {
    let msg = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    };
    // A payload is any value given to `panic_any`, whose `Drop` may panic:
    // caught here (the panic hook reports it), that panic fails no more
    // than the body's own did, where it would otherwise unwind out of the
    // runner or driver and cancel the whole run. That panic's own payload
    // may panic when dropped in turn: dropped the same way, until one drops
    // quietly.
    drop_quietly(payload);
    TaskError::Panicked(msg)
}

/// Drops `payload`, catching a panic from its destructor, and from that
/// panic's payload in turn, until one drops quietly (the panic hook reports
/// each).
fn drop_quietly(payload: Box<dyn Any + Send>) {
    let mut payload = payload;
    while let Err(next) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        payload = next;
    }
}

/// Runs user code `f` (a destructor, a waker's `wake`), catching its panic
/// (and one from that panic's payload: see [`drop_quietly`]), which would
/// otherwise unwind out of the runner or driver, or out of a call on the
/// run in the middle of its work. The panic hook reports it.
pub(super) fn caught(f: impl FnOnce()) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(f)) {
        drop_quietly(payload);
    }
}

/// Drops `value`, a user value (see `core::Dropped`) the run lets go of,
/// with [`caught`].
fn drop_caught<V>(value: V) {
    caught(move || drop(value));
}

/// Drops task bodies the run is done with, each with [`drop_caught`]: what a
/// body captured is the user's, and a panic from its destructor must
/// neither keep the other bodies from being dropped nor unwind out of the
/// caller (`wait_all`, whose report would be lost; a runner or driver,
/// which may be unwinding already).
fn drop_bodies<T>(mut bodies: Vec<Body<T>>) {
    drop_bodies_keeping(&mut bodies);
}

/// [`drop_bodies`], keeping the list's room for more.
fn drop_bodies_keeping<T>(bodies: &mut Vec<Body<T>>) {
    bodies.drain(..).for_each(drop_caught);
}

/// Drops the future of an attempt whose poll panicked (keeping its box),
/// catching a panic from its destructor: the attempt has failed already,
/// and that panic must not unwind out of the runner or driver.
#[cold]
fn empty_quietly<T>(held: Pin<&mut dyn Refill<T>>) {
    caught(|| held.empty());
}

/// A running graph: query and steer it, wait for tasks, add tasks. Cloneable;
/// every clone refers to the same run.
///
/// ```
/// use fastexec::graph::{Graph, Task, TaskState};
///
/// let mut g = Graph::<u32>::new();
/// g.add(Task::new("one", |_| async { Ok(1) })).unwrap();
/// let run = g.start();
/// let one = fastexec::block_on(run.wait("one")).unwrap();
/// assert_eq!(*one, 1);
/// assert_eq!(run.state("one"), Some(TaskState::Completed));
/// let report = fastexec::block_on(run.wait_all());
/// assert!(report.is_success());
/// ```
pub struct RunHandle<T> {
    pub(crate) shared: Arc<Shared<T>>,
}

impl<T> Clone for RunHandle<T> {
    fn clone(&self) -> Self {
        RunHandle {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> std::fmt::Debug for RunHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunHandle").finish_non_exhaustive()
    }
}

impl<T: Send + Sync + 'static> RunHandle<T> {
    /// The current state of a task, or `None` if no task has this id.
    pub fn state(&self, id: &str) -> Option<TaskState> {
        let core = self.shared.lock();
        core.lookup(id).ok().map(|i| core.node(i).state)
    }

    /// Cancels a task and, transitively, its dependents. A running task's
    /// future is dropped at its next suspension point (a paused one at
    /// once); a running sync body ([`Task::sync`]) runs on to its return,
    /// and what it returns is dropped. A task is running from the moment a
    /// runner takes its attempt, which can be a little before the runner
    /// calls its body (a runner takes up to a batch of ready tasks at
    /// once), so a body may still be called after its task was cancelled;
    /// its output is dropped then too, and the report counts that attempt
    /// as one that did not run ([`Attempt::ran`](super::Attempt::ran)).
    /// Cancelling a finished (or already
    /// cancelled) task does nothing: cancel is idempotent.
    ///
    /// # Errors
    ///
    /// [`GraphError::UnknownTask`] if no task has this id.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fastexec::graph::{Graph, Task, TaskState};
    ///
    /// let mut g = Graph::<u32>::new();
    /// g.add(Task::new("download", |_| async {
    ///     fastexec::time::sleep(Duration::from_secs(3600)).await;
    ///     Ok(1)
    /// }))
    /// .unwrap();
    /// g.add(Task::new("unpack", |_| async { Ok(2) }).after(["download"])).unwrap();
    /// g.add(Task::new("other", |_| async { Ok(3) })).unwrap();
    /// fastexec::block_on(async {
    ///     let run = g.start();
    ///     run.cancel("download").unwrap();
    ///     let report = run.wait_all().await;
    ///     assert_eq!(report.task("download").unwrap().state, TaskState::Cancelled);
    ///     assert_eq!(report.task("unpack").unwrap().state, TaskState::Cancelled);
    ///     assert_eq!(report.output("other"), Some(&3));
    /// });
    /// ```
    pub fn cancel(&self, id: &str) -> Result<(), GraphError> {
        let fx = {
            let mut core = self.shared.lock();
            let i = core.lookup(id)?;
            core.cancel(i, CancelReason::Requested, Instant::now())
        };
        self.shared.apply(fx);
        Ok(())
    }

    /// Pauses a task and returns once it is paused. A pending or ready task
    /// pauses at once (a ready one leaves the ready set, keeping the
    /// priority it had aged to: the time it is paused does not count as
    /// waiting). A running task pauses at its next
    /// [`Inputs::checkpoint`]; if none comes within the pause timeout of
    /// the graph's [`SchedulerConfig`], the task is cancelled with
    /// [`CancelReason::PauseTimedOut`] (its dependents with it; the report
    /// and [`why`](Self::why) tell it from the task's own
    /// [`TaskError::TimedOut`]) and this returns
    /// [`GraphError::PauseTimedOut`]. A running task waiting out the
    /// backoff before a retry runs no body: it pauses at once, and its next
    /// attempt starts after the resume (and not before its backoff ends);
    /// so does one whose attempt fails, to be retried, before it reaches a
    /// checkpoint.
    /// Pausing a paused task does nothing.
    ///
    /// A task paused while running keeps its [`Demand`](super::Demand)
    /// (CPU slots, RAM, VRAM, custom resources) until it ends: the budget
    /// it holds is not given to other tasks while it is paused, so that
    /// resuming it never has to wait for capacity. To free the capacity,
    /// cancel it instead.
    ///
    /// The timeout is a timer of the executor this is called on, not a
    /// task, and the checkpoint itself records the task as paused: neither
    /// dropping the returned future nor cancelling a
    /// [`TaskGroup`](crate::TaskGroup) the caller is in stops the timeout
    /// from applying or the pause from being recorded.
    ///
    /// Returns `Ok` once the task is paused, or if a
    /// [`resume`](Self::resume) withdrew the request first.
    ///
    /// # Errors
    ///
    /// [`GraphError::UnknownTask`]; [`GraphError::TaskEnded`] if the task
    /// has reached a terminal state, also if it reaches one (completed,
    /// failed, cancelled) before the checkpoint; [`GraphError::PauseTimedOut`] as
    /// above; [`GraphError::PauseUnsettled`] if the task waiting for the
    /// checkpoint ended before it could tell (its executor shut down, or a
    /// task group it joined with the caller was cancelled);
    /// [`GraphError::Stopped`] if the task is running and the run was
    /// stopped, before this call or before the checkpoint (running tasks
    /// then finish: the request is withdrawn; if the task ends before this
    /// call looks, [`GraphError::TaskEnded`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use fastexec::graph::{Graph, Task, TaskState};
    /// use fastexec::signal::Notify;
    ///
    /// let go = Arc::new(Notify::new());
    /// let gate = go.clone();
    /// let mut g = Graph::<u32>::new();
    /// g.add(Task::new("first", move |_| {
    ///     let gate = gate.clone();
    ///     async move {
    ///         gate.notified().await;
    ///         Ok(1)
    ///     }
    /// }))
    /// .unwrap();
    /// g.add(Task::new("then", |inp| async move { Ok(inp[0] + 1) }).after(["first"]))
    ///     .unwrap();
    /// fastexec::block_on(async {
    ///     let run = g.start();
    ///     run.pause("then").await.unwrap(); // pending: paused at once
    ///     go.notify_one();
    ///     run.wait("first").await.unwrap();
    ///     assert_eq!(run.state("then"), Some(TaskState::Paused));
    ///     run.resume("then").unwrap(); // its dependency completed: now ready
    ///     assert_eq!(*run.wait("then").await.unwrap(), 2);
    /// });
    /// ```
    pub async fn pause(&self, id: &str) -> Result<(), GraphError> {
        let mut fx = Effects::default();
        let paused = {
            let mut core = self.shared.lock();
            let i = core.lookup(id)?;
            let control = core.pause(i, Instant::now(), &mut fx)?;
            control.map(|c| (i, c.requests(), c, core.pause_timeout))
        };
        self.shared.apply(fx);
        let Some((i, request, control, timeout)) = paused else {
            return Ok(());
        };
        // The timeout first: it applies whatever becomes of this future.
        let timer = RunTimer::start_pause(&self.shared, i, request, timeout);
        let shared = Arc::clone(&self.shared);
        let watch = crate::spawn(async move {
            // No deadline here: the timer applies it (and records the
            // cancel); the checkpoint records the pause.
            let outcome = control.acknowledged(Duration::MAX).await;
            shared.lock().pause_result(i, outcome)
        });
        let result = watch.await;
        RunTimer::disarm_weak(&timer);
        match result {
            Ok(result) => result,
            // The watcher did not finish: it was dropped (its executor
            // shut down, or a task group it joined was cancelled), or it
            // panicked (a bug). Whether the task paused is unknown.
            Err(watcher) => Err(GraphError::PauseUnsettled {
                id: id.into(),
                watcher: Arc::new(watcher),
            }),
        }
    }

    /// Resumes a paused task into the state it was paused from: pending
    /// (or ready, if its dependencies completed meanwhile), ready, or
    /// running (its checkpoint returns). On a running task whose pause was
    /// requested but not yet reached, withdraws the request. Does nothing
    /// to a pending or ready task that is not paused.
    ///
    /// # Errors
    ///
    /// [`GraphError::UnknownTask`], or [`GraphError::TaskEnded`] if the
    /// task has reached a terminal state.
    pub fn resume(&self, id: &str) -> Result<(), GraphError> {
        let fx = {
            let mut core = self.shared.lock();
            let i = core.lookup(id)?;
            core.resume(i, Instant::now())?
        };
        self.shared.apply(fx);
        Ok(())
    }

    /// Why a task is not running: the dependencies it waits on, the budget
    /// that is full, how many ready tasks outrank it, that it is paused (a
    /// task paused at a checkpoint still holds its budget, and says so), or
    /// that it has ended, or, between two attempts, which attempt it waits to
    /// retry and when that is due. `None` while an attempt runs.
    ///
    /// # Errors
    ///
    /// [`GraphError::UnknownTask`] if no task has this id.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use fastexec::graph::{Blocked, Graph, PausedFrom, Task};
    /// use fastexec::signal::Notify;
    ///
    /// let go = Arc::new(Notify::new());
    /// let gate = go.clone();
    /// let mut g = Graph::<u32>::new();
    /// g.add(Task::new("a", move |_| {
    ///     let gate = gate.clone();
    ///     async move {
    ///         gate.notified().await;
    ///         Ok(1)
    ///     }
    /// }))
    /// .unwrap();
    /// g.add(Task::new("b", |_| async { Ok(2) }).after(["a"])).unwrap();
    /// fastexec::block_on(async {
    ///     let run = g.start();
    ///     assert_eq!(run.why("b").unwrap(), Some(Blocked::WaitingOn(vec!["a".into()])));
    ///     run.pause("b").await.unwrap();
    ///     let paused = Blocked::Paused { from: PausedFrom::Pending };
    ///     assert_eq!(run.why("b").unwrap(), Some(paused));
    ///     run.resume("b").unwrap();
    ///     go.notify_one();
    ///     assert!(run.wait_all().await.is_success());
    /// });
    /// ```
    pub fn why(&self, id: &str) -> Result<Option<Blocked>, GraphError> {
        let core = self.shared.lock();
        let i = core.lookup(id)?;
        Ok(core.why(i, Instant::now()))
    }

    /// Stops the run: tasks not yet started are cancelled,
    /// running tasks finish their current attempt (without retrying), and
    /// tasks added afterwards are cancelled. A task whose attempt a runner
    /// has already taken counts as running (see [`cancel`](Self::cancel)).
    /// A task waiting out the backoff before a retry is cancelled at once,
    /// as is a paused one. A running task cannot be paused any more: a
    /// pause requested and not yet reached is withdrawn (see
    /// [`pause`](Self::pause)), and its checkpoints let it go on.
    ///
    /// ```
    /// use fastexec::graph::{CancelReason, Graph, Task, TaskError, TaskState};
    /// use fastexec::signal::Notify;
    /// use std::sync::Arc;
    ///
    /// let (started, finish) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    /// let (on_start, gate) = (started.clone(), finish.clone());
    /// let mut g = Graph::<u32>::new();
    /// g.add(Task::new("build", move |_| {
    ///     let (on_start, gate) = (on_start.clone(), gate.clone());
    ///     async move {
    ///         on_start.notify_one();
    ///         gate.notified().await;
    ///         Ok(1)
    ///     }
    /// }))
    /// .unwrap();
    /// g.add(Task::new("deploy", |_| async { Ok(2) }).after(["build"])).unwrap();
    /// fastexec::block_on(async {
    ///     let run = g.start();
    ///     started.notified().await;
    ///     run.stop(); // "build" runs on, "deploy" will not start
    ///     finish.notify_one();
    ///     let report = run.wait_all().await;
    ///     assert_eq!(report.output("build"), Some(&1));
    ///     let deploy = report.task("deploy").unwrap();
    ///     assert!(matches!(deploy.error, Some(TaskError::Cancelled(CancelReason::Stopped))));
    /// });
    /// ```
    pub fn stop(&self) {
        let fx = self.shared.lock().stop(Instant::now());
        self.shared.apply(fx);
    }

    /// Adds a task while the graph runs (for instance from a running task: a
    /// subflow). Validated like [`Graph::add`]; its dependencies may be in any
    /// state (one that already failed or was cancelled makes it
    /// upstream-failed or cancelled at once).
    ///
    /// A task adds to its own run through its [`Inputs`]
    /// ([`Inputs::add_task`], [`Inputs::add_batch`]); the work that needs
    /// the subflow's results is best added as the subflow's dependent, as
    /// here, rather than awaited in the body (see [`wait`](Self::wait)).
    ///
    /// ```
    /// use fastexec::graph::{Graph, Task};
    ///
    /// let mut g = Graph::<u64>::new();
    /// // "plan" finds out at run time how many parts there are.
    /// g.add(Task::new("plan", |inp| async move {
    ///     let parts = 3;
    ///     inp.add_batch((0..parts).map(|n| Task::new(format!("part-{n}"), move |_| async move { Ok(n * 10) })))?;
    ///     let ids: Vec<String> = (0..parts).map(|n| format!("part-{n}")).collect();
    ///     inp.add_task(Task::new("sum", |inp| async move { Ok(inp.values().sum()) }).after(ids))?;
    ///     Ok(parts)
    /// }))
    /// .unwrap();
    /// let report = g.run_blocking();
    /// assert_eq!(report.output("sum"), Some(&30));
    /// assert_eq!(report.tasks().len(), 5);
    /// ```
    ///
    /// # Errors
    ///
    /// [`GraphError::Finished`] once every task is terminal; otherwise as
    /// [`Graph::add`]. The task is not added.
    pub fn add_task(&self, task: Task<T>) -> Result<(), GraphError> {
        self.add_batch([task])
    }

    /// Adds a batch while the graph runs; see [`Graph::add_batch`].
    ///
    /// # Errors
    ///
    /// As [`add_task`](Self::add_task) and [`Graph::add_batch`]: nothing
    /// of the batch is added.
    pub fn add_batch(&self, tasks: impl IntoIterator<Item = Task<T>>) -> Result<(), GraphError> {
        let mut tasks = tasks.into_iter().collect();
        let added = self.shared.lock().add(&mut tasks, true);
        // Refused, the tasks are dropped here, outside the lock: their
        // bodies' captures may call into the run.
        drop(tasks);
        self.shared.apply(added?);
        Ok(())
    }

    /// Waits for one task to end: its output, or why it has none.
    ///
    /// A task must not wait for itself or for a task that depends on it:
    /// that wait never ends.
    ///
    /// # Errors
    ///
    /// [`GraphError::UnknownTask`] if no task has this id (yet), or
    /// [`GraphError::TaskFailed`] with the reason it has no output.
    ///
    /// ```
    /// use fastexec::graph::{Graph, GraphError, Task, TaskError};
    ///
    /// let mut g = Graph::<u32>::new();
    /// g.add(Task::new("ok", |_| async { Ok(1) })).unwrap();
    /// g.add(Task::new("bad", |_| async { Err("no space left".into()) })).unwrap();
    /// g.add(Task::new("after", |_| async { Ok(3) }).after(["bad"])).unwrap();
    /// fastexec::block_on(async {
    ///     let run = g.start();
    ///     assert_eq!(*run.wait("ok").await.unwrap(), 1);
    ///     let err = run.wait("after").await.unwrap_err();
    ///     assert_eq!(err.to_string(), "task `after` did not complete: upstream task `bad` failed");
    ///     assert!(matches!(err, GraphError::TaskFailed { source: TaskError::UpstreamFailed(_), .. }));
    /// });
    /// ```
    pub async fn wait(&self, id: &str) -> Result<Arc<T>, GraphError> {
        let i = self.shared.lock().lookup(id)?;
        let _watching = Watching::new(&self.shared.watchers);
        self.wait_until(|core| {
            let node = core.node(i);
            match node.state {
                TaskState::Completed => Some(Ok(Arc::clone(core.output(i)?))),
                s if s.is_terminal() => Some(Err(GraphError::TaskFailed {
                    id: core.id(i).clone(),
                    source: core.cold(i).error()?.clone(),
                })),
                _ => None,
            }
        })
        .await
    }

    /// Waits until every task is terminal and returns the report. Must not
    /// be awaited by a task of the same graph (it would wait for itself).
    ///
    /// It drops the bodies of tasks that ended (and what they captured),
    /// which the run keeps for retries until then: while it waits, a chunk
    /// at a time (every few thousand), and the rest once the run has
    /// ended. So captures go as the run goes rather than all at its end,
    /// and on this caller's thread, which most often built the graph (its
    /// allocator frees them fastest), while the workers run tasks. A panic
    /// from one of their destructors is caught (the panic hook reports it),
    /// and the report is returned all the same.
    pub async fn wait_all(&self) -> Report<T> {
        // The runners fill this list next while the last one is dropped
        // (from the first sweep on, which takes the core's spare list).
        let mut spare = Vec::new();
        loop {
            // Reached by every `notify_all` from here on, polled or not.
            let changed = self.shared.changed.notified();
            let (done, mut bodies) = {
                let mut core = self.shared.lock();
                (core.is_done(), core.sweep_retired(spare))
            };
            drop_bodies_keeping(&mut bodies);
            if done {
                // The emptied list stays with the run (see `Core::spare`);
                // the one given back is dropped after the lock.
                let other = self.shared.lock().leave_list(bodies);
                drop(other);
                break;
            }
            spare = bodies;
            changed.await;
        }
        self.report()
    }

    /// Whether every task has reached a terminal state.
    pub fn is_finished(&self) -> bool {
        self.shared.lock().is_done()
    }

    /// A report of the run so far (tasks still running have no end time).
    pub fn report(&self) -> Report<T> {
        let core = self.shared.lock();
        if core.is_done() {
            // Nothing changes after the end: the report reads the run itself.
            let index = Arc::clone(&core.index);
            drop(core);
            return Report::finished(Arc::clone(&self.shared), index);
        }
        Report::new(&core, self.shared.t0, self.shared.started_at)
    }

    /// Resolves once `check` returns `Some`, re-checking after each terminal
    /// transition. Making the `Notified` before the second check closes the
    /// race with a notification sent between the two.
    async fn wait_until<R>(&self, check: impl Fn(&Core<T>) -> Option<R>) -> R {
        loop {
            if let Some(r) = self.check(&check) {
                return r;
            }
            // Reached by every `notify_all` from here on, polled or not.
            let changed = self.shared.changed.notified();
            if let Some(r) = self.check(&check) {
                return r;
            }
            changed.await;
        }
    }

    fn check<R>(&self, check: &impl Fn(&Core<T>) -> Option<R>) -> Option<R> {
        check(&self.shared.lock())
    }
}

/// Counts a `wait` in progress for as long as it lives (also when the
/// waiting future is dropped early).
struct Watching<'a>(&'a AtomicUsize);

impl<'a> Watching<'a> {
    fn new(watchers: &'a AtomicUsize) -> Self {
        // Relaxed: made before the waiter's first check of the states under
        // the core's lock, which orders it against the load in
        // `Shared::apply` (see there).
        watchers.fetch_add(1, Ordering::Relaxed);
        Watching(watchers)
    }
}

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        // Relaxed: a stale count only costs a spurious notify.
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run on `executor` of a task whose attempt never ends (a driver
    /// holds it) and a dependent of it, once the first is running.
    fn held_run(executor: &crate::Executor) -> RunHandle<u32> {
        let mut graph = Graph::<u32>::new();
        graph
            .add(Task::new("held", |_| async {
                std::future::pending::<()>().await;
                Ok(1)
            }))
            .unwrap();
        graph
            .add(Task::new("after", |_| async { Ok(2) }).after(["held"]))
            .unwrap();
        let run = executor
            .block_on(executor.spawn(async move { graph.start() }))
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while run.state("held") != Some(TaskState::Running) {
            assert!(Instant::now() < deadline, "the attempt never began");
            std::thread::yield_now();
        }
        run
    }

    /// The reason every task of `run`'s report was cancelled with.
    fn reasons(executor: &crate::Executor, run: &RunHandle<u32>) -> Vec<Option<CancelReason>> {
        let report = executor.block_on(run.wait_all());
        ["held", "after"]
            .iter()
            .map(|id| match &report.task(id).unwrap().error {
                Some(TaskError::Cancelled(reason)) => Some(reason.clone()),
                _ => None,
            })
            .collect()
    }

    /// No hook makes one of the run's own tasks panic (its bodies' panics
    /// are caught), so this drops one of their guards the way such a panic
    /// would: while the thread unwinds (an `async fn`'s locals, the guard
    /// among them, are dropped by a panic unwinding out of its poll). The
    /// run is cancelled with `Internal`, not `GroupCancelled`, whose group
    /// was never cancelled.
    #[test]
    fn a_task_of_the_run_lost_to_a_panic_cancels_it_as_internal() {
        let executor = crate::Executor::builder().threads(1).build().unwrap();
        let run = held_run(&executor);
        let member = Member::new(&run.shared, Role::Apart(Vec::new()));
        let unwound = panic::catch_unwind(AssertUnwindSafe(move || {
            let _member = member;
            panic!("a bug in the graph layer");
        }));
        assert!(unwound.is_err());
        let internal = Some(CancelReason::Internal);
        assert_eq!(reasons(&executor, &run), [internal.clone(), internal]);
    }

    /// A runner took an attempt (on this thread) and handed it off; the
    /// hand-off runs on another thread, whose name the attempt's record
    /// must give: the row of a Chrome trace is the thread that ran it, and
    /// two attempts that thread did not run must not overlap on its row.
    #[test]
    fn a_handed_off_attempt_is_recorded_on_the_thread_that_ran_it() {
        let executor = crate::Executor::builder().threads(1).build().unwrap();
        let run = held_run(&executor);
        // Keep the only worker busy, so that the runner adding `x` spawns
        // does not take it first.
        let (busy_tx, busy_rx) = std::sync::mpsc::channel::<()>();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let blocker = executor.spawn(async move {
            started_tx.send(()).unwrap();
            let _ = busy_rx.recv_timeout(Duration::from_secs(10));
        });
        started_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let ran_on = Arc::new(Mutex::new(None));
        let seen = Arc::clone(&ran_on);
        run.add_task(Task::sync("x", move |_| {
            *seen.lock().unwrap() = std::thread::current().name().map(String::from);
            Ok(7)
        }))
        .unwrap();
        // This thread takes `x`'s attempt, as a runner would...
        let mut begun = Starts::with_capacity(1);
        assert!(run.shared.lock().next_attempts(
            Instant::now(),
            lane::current(),
            &mut begun,
            &mut Effects::default()
        ));
        // ... and another one runs it, as a hand-off stolen by an idle worker.
        let apart = Member::new(&run.shared, Role::Apart(begun.take_all()));
        std::thread::Builder::new()
            .name("hand-off".into())
            .spawn(move || {
                let waker = futures_util::task::noop_waker();
                let mut fut = std::pin::pin!(run_apart(apart));
                let polled = fut.as_mut().poll(&mut Context::from_waker(&waker));
                assert!(polled.is_ready(), "a sync body is done in one poll");
            })
            .unwrap()
            .join()
            .unwrap();
        drop(busy_tx);
        executor.block_on(blocker).unwrap();
        assert_eq!(run.state("x"), Some(TaskState::Completed));
        assert_eq!(ran_on.lock().unwrap().as_deref(), Some("hand-off"));
        let report = run.report();
        let x = report.attempts().iter().find(|a| a.task.as_str() == "x");
        assert_eq!(x.map(|a| &*a.worker_name), Some("hand-off"));
        run.cancel("held").unwrap();
        executor.block_on(run.wait_all());
    }

    /// The same guard dropped with no unwinding: a group's cancel.
    #[test]
    fn a_task_of_the_run_lost_otherwise_cancels_it_as_its_group() {
        let executor = crate::Executor::builder().threads(1).build().unwrap();
        let run = held_run(&executor);
        drop(Member::new(&run.shared, Role::Apart(Vec::new())));
        let group = Some(CancelReason::GroupCancelled);
        assert_eq!(reasons(&executor, &run), [group.clone(), group]);
    }
}
