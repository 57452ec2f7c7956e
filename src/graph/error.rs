//! Errors: [`GraphError`] for operations on a graph, [`TaskError`] for why a
//! task has no output.

use std::error::Error;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::{Resource, TaskId, TaskState};
use crate::JoinError;

/// The error type task bodies return (any error converts into it with `?`).
pub type BoxError = Box<dyn Error + Send + Sync + 'static>;

/// A dependency cycle, in execution order: each task must run before the next
/// one, and the last element repeats the first.
///
/// ```
/// use fastexec::graph::{Graph, GraphError, Task};
///
/// let mut g = Graph::<u32>::new();
/// let err = g
///     .add_batch([
///         Task::new("a", |_| async { Ok(1) }).after(["c"]),
///         Task::new("b", |_| async { Ok(2) }).after(["a"]),
///         Task::new("c", |_| async { Ok(3) }).after(["b"]),
///     ])
///     .unwrap_err();
/// assert_eq!(err.to_string(), "cycle: a -> b -> c -> a");
/// assert!(matches!(err, GraphError::Cycle(path) if path.ids().len() == 4));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CyclePath(pub(crate) Vec<TaskId>);

impl CyclePath {
    /// The ids along the cycle; the first one is repeated at the end.
    pub fn ids(&self) -> &[TaskId] {
        &self.0
    }
}

impl fmt::Display for CyclePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, id) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" -> ")?;
            }
            write!(f, "{id}")?;
        }
        Ok(())
    }
}

/// Why adding tasks or asking about a task was refused.
///
/// Validation errors (`EmptyId`, `DuplicateId`, `MissingDependency`,
/// `Cycle`, `ZeroTimeout`) leave the graph unchanged: a batch is added
/// whole or not at all.
///
/// Each cause is told once, as the Rust API guidelines ask: a variant
/// that names its cause in its message does not also return it as its
/// [`source`](Error::source), so that a reporter walking the chain
/// (anyhow's `{:#}`, tracing) repeats nothing. [`TaskFailed`] says why the
/// task failed in its message and returns, as its source, the cause of
/// that reason if it has one (the source of the body's error), just as
/// [`TaskError::Failed`] is transparent.
///
/// ```
/// use std::error::Error;
/// use fastexec::graph::{Graph, Task};
///
/// // A body's error with a cause of its own.
/// #[derive(Debug)]
/// struct Fetch(std::io::Error);
/// impl std::fmt::Display for Fetch {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("fetching the sources failed")
///     }
/// }
/// impl Error for Fetch {
///     fn source(&self) -> Option<&(dyn Error + 'static)> {
///         Some(&self.0)
///     }
/// }
///
/// let mut g = Graph::<u32>::new();
/// g.add(Task::new("fetch", |_| async {
///     Err(Fetch(std::io::Error::other("connection refused")).into())
/// }))
/// .unwrap();
/// let run = g.start();
/// let err = fastexec::block_on(run.wait("fetch")).unwrap_err();
/// let mut chain = vec![err.to_string()];
/// let mut next = err.source();
/// while let Some(e) = next {
///     chain.push(e.to_string());
///     next = e.source();
/// }
/// assert_eq!(
///     chain,
///     ["task `fetch` did not complete: fetching the sources failed", "connection refused"]
/// );
/// ```
///
/// [`TaskFailed`]: GraphError::TaskFailed
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum GraphError {
    /// A task with this id already exists (in the graph or earlier in the batch).
    DuplicateId(TaskId),
    /// A task's id is the empty string, which reports, DOT and traces could
    /// not show. `position` is the task's place in the batch (0 for
    /// [`Graph::add`](super::Graph::add)).
    EmptyId {
        /// The task's index in the batch.
        position: usize,
    },
    /// `task` depends on an id that is neither in the graph nor in the batch.
    MissingDependency {
        /// The task being added.
        task: TaskId,
        /// The dependency that could not be found.
        dependency: TaskId,
    },
    /// The batch's dependencies form a cycle.
    Cycle(CyclePath),
    /// `task` has a zero [`timeout`](super::Task::timeout). No attempt can
    /// finish in no time, but only a sync body is judged when it returns:
    /// an async body done in its first poll never meets its deadline, so
    /// the same limit would fail one kind always and the other never. A
    /// task without a limit has no timeout at all (the default).
    ZeroTimeout {
        /// The task being added.
        task: TaskId,
    },
    /// No task has this id.
    UnknownTask(TaskId),
    /// The waited-for task ended without an output. Its message tells
    /// why (`source`'s message); its [`Error::source`] is the cause of
    /// that, if any (see the type's docs): the field is not repeated.
    TaskFailed {
        /// The task waited for.
        id: TaskId,
        /// Why it has no output.
        source: TaskError,
    },
    /// `task` demands more of a hard-capped resource (CPU slots, a hard
    /// custom resource) than its cap: it could never run.
    ExceedsCap {
        /// The task being added.
        task: TaskId,
        /// The resource.
        resource: Resource,
        /// How much the task demands.
        demand: u64,
        /// The cap.
        cap: u64,
    },
    /// `task` demands a custom resource the scheduler config does not declare.
    UnknownResource {
        /// The task being added.
        task: TaskId,
        /// The undeclared resource's name.
        resource: Arc<str>,
    },
    /// The task has ended (`state`): it can no longer be paused or resumed.
    TaskEnded {
        /// The task.
        id: TaskId,
        /// The terminal state it is in.
        state: TaskState,
    },
    /// The running task did not reach a checkpoint within the pause
    /// timeout; it was cancelled with
    /// [`CancelReason::PauseTimedOut`] (not [`TaskError::TimedOut`], which
    /// is the task's own timeout).
    PauseTimedOut {
        /// The task.
        id: TaskId,
        /// The pause timeout.
        timeout: Duration,
    },
    /// The task that waits for a running task's checkpoint on behalf of
    /// [`RunHandle::pause`](super::RunHandle::pause) ended without telling
    /// how the pause went: it was dropped (its executor shut down, or a
    /// [`TaskGroup`](crate::TaskGroup) it joined with the caller was
    /// cancelled), or it panicked. The
    /// pause request may still be pending: the task pauses (and is recorded
    /// as paused) at its next checkpoint, and the pause timeout still
    /// applies (it is a timer, not a task), unless the executor `pause` was
    /// called on shut down; [`resume`](super::RunHandle::resume) withdraws
    /// the request, [`cancel`](super::RunHandle::cancel) ends the task. If
    /// the executor that shut down is the run's own, the run itself is
    /// cancelled, every unfinished task with
    /// [`CancelReason::ExecutorShutdown`]. Its source is the watcher's
    /// [`JoinError`].
    PauseUnsettled {
        /// The task.
        id: TaskId,
        /// How the watcher ended.
        watcher: Arc<JoinError>,
    },
    /// The run is over (every task reached a terminal state): nothing can be added.
    Finished,
    /// The run was stopped ([`RunHandle::stop`](super::RunHandle::stop)):
    /// its running tasks finish, and none of them can be paused any more.
    /// A pause requested before the stop that no checkpoint had reached is
    /// withdrawn, and its [`RunHandle::pause`](super::RunHandle::pause)
    /// returns this too (or [`TaskEnded`](Self::TaskEnded), if the task,
    /// no longer held, has ended by the time the pause looks).
    Stopped {
        /// The running task that was to pause.
        id: TaskId,
    },
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::DuplicateId(id) => write!(f, "duplicate task id `{id}`"),
            GraphError::EmptyId { position } => {
                write!(f, "task {position} of the batch has an empty id")
            }
            GraphError::MissingDependency { task, dependency } => write!(
                f,
                "task `{task}` depends on `{dependency}`, which does not exist"
            ),
            GraphError::Cycle(path) => write!(f, "cycle: {path}"),
            GraphError::ZeroTimeout { task } => write!(
                f,
                "task `{task}` has a zero timeout; give it a positive one, or none"
            ),
            GraphError::UnknownTask(id) => write!(f, "no task `{id}`"),
            GraphError::TaskFailed { id, source } => {
                write!(f, "task `{id}` did not complete: {source}")
            }
            GraphError::ExceedsCap {
                task,
                resource,
                demand,
                cap,
            } => write!(
                f,
                "task `{task}` demands {}, more than the cap of {cap}",
                resource.amount(*demand)
            ),
            GraphError::UnknownResource { task, resource } => write!(
                f,
                "task `{task}` demands resource `{resource}`, which the scheduler config does not declare"
            ),
            GraphError::TaskEnded { id, state } => write!(
                f,
                "task `{id}` has ended ({state}); it cannot be paused or resumed"
            ),
            GraphError::PauseTimedOut { id, timeout } => write!(
                f,
                "task `{id}` reached no checkpoint within the pause timeout of {timeout:?}; it was cancelled"
            ),
            GraphError::PauseUnsettled { id, .. } => write!(
                f,
                "the pause of task `{id}` is unsettled: the task waiting for its checkpoint ended first"
            ),
            GraphError::Finished => f.write_str("the run has finished; tasks can no longer be added"),
            GraphError::Stopped { id } => write!(
                f,
                "task `{id}` cannot be paused: the run was stopped, and its running tasks finish"
            ),
        }
    }
}

impl Error for GraphError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            // The reason is in the message; what caused it comes next.
            GraphError::TaskFailed { source, .. } => source.source(),
            GraphError::PauseUnsettled { watcher, .. } => Some(&**watcher),
            _ => None,
        }
    }
}

/// Why a task was cancelled.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancelReason {
    /// [`RunHandle::cancel`](super::RunHandle::cancel) was called on this task.
    Requested,
    /// A task it depends on (directly or not), named here, was cancelled.
    Upstream(TaskId),
    /// [`RunHandle::stop`](super::RunHandle::stop) was called before it
    /// started (or it was added after), while it was paused (also at a
    /// checkpoint), or while it waited out the backoff before a retry.
    Stopped,
    /// The run is fail-fast and the named task failed.
    FailFast(TaskId),
    /// [`RunHandle::pause`](super::RunHandle::pause) asked it to pause
    /// while it ran, and it reached no checkpoint within the pause timeout
    /// of the graph's [`SchedulerConfig`](super::SchedulerConfig) (given
    /// here). Distinct from [`TaskError::TimedOut`], the task's own limit.
    PauseTimedOut(Duration),
    /// A task of the run itself (a runner, or the task carrying on an
    /// attempt that went asynchronous or waits to retry) was dropped before
    /// it had finished its work while the run's executor was still running:
    /// a [`TaskGroup`](crate::TaskGroup) the run was started in was
    /// cancelled. The whole run is then cancelled: every task not yet ended
    /// gets this reason (see "Task groups" in the [module docs](super)).
    GroupCancelled,
    /// A task of the run itself was dropped before it had finished its work
    /// because the executor the run was started on shut down (its
    /// [`Executor`](crate::Executor) was dropped while the run went on).
    /// The whole run is cancelled as for
    /// [`GroupCancelled`](Self::GroupCancelled), with this reason. The one
    /// that counts is the state of the executor when the first of the run's
    /// tasks is lost: a group cancelled just before its executor shut down,
    /// whose tasks the shutdown dropped before they were polled again, gives
    /// this reason too.
    ExecutorShutdown,
    /// A task of the run itself panicked, and was dropped as the panic
    /// unwound before it had finished its work: a bug in fastexec's graph
    /// layer (a body's panic is caught, and is that task's
    /// [`TaskError::Panicked`]); please report it. The whole run is
    /// cancelled as for [`GroupCancelled`](Self::GroupCancelled), with this
    /// reason. If the run's executor had begun to shut down by then,
    /// [`ExecutorShutdown`](Self::ExecutorShutdown) is given instead: an
    /// executor dropped from a thread that is itself unwinding drops the
    /// run's tasks during that unwinding, which is no fault of the run.
    Internal,
}

impl fmt::Display for CancelReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CancelReason::Requested => f.write_str("cancel requested"),
            CancelReason::Upstream(id) => write!(f, "upstream task `{id}` was cancelled"),
            CancelReason::Stopped => f.write_str("run stopped"),
            CancelReason::FailFast(id) => write!(f, "fail-fast after `{id}` failed"),
            CancelReason::PauseTimedOut(d) => {
                write!(
                    f,
                    "pause requested, but no checkpoint came within the pause timeout of {d:?}"
                )
            }
            CancelReason::GroupCancelled => f.write_str("the run's task group was cancelled"),
            CancelReason::ExecutorShutdown => f.write_str("the run's executor shut down"),
            CancelReason::Internal => f.write_str(
                "a task of the run itself panicked: a bug in fastexec's graph layer, please report it",
            ),
        }
    }
}

/// Why a task ended without an output. Cheap to clone (shared with every
/// waiter and the report).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The body returned an error (on its last attempt). Transparent: it
    /// displays as that error, and its [`source`](Error::source) is that
    /// error's, so a reporter walking the chain sees every cause once.
    #[error(transparent)]
    Failed(Arc<dyn Error + Send + Sync + 'static>),
    /// The last attempt exceeded the task's own timeout
    /// ([`Task::timeout`](super::Task::timeout)). A pause that timed out
    /// is a cancel instead ([`CancelReason::PauseTimedOut`]).
    #[error("timed out after {0:?}")]
    TimedOut(Duration),
    /// The body panicked (on its last attempt); the panic message, if any.
    #[error("panicked: {0}")]
    Panicked(String),
    /// The task was cancelled.
    #[error("cancelled ({0})")]
    Cancelled(CancelReason),
    /// A task it depends on, directly or transitively (named here: the one
    /// that actually failed), failed.
    #[error("upstream task `{0}` failed")]
    UpstreamFailed(TaskId),
}

impl From<BoxError> for TaskError {
    fn from(e: BoxError) -> Self {
        TaskError::Failed(Arc::from(e))
    }
}
