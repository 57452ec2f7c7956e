//! What a completion reports when its task gave no output.

use std::fmt;
use std::sync::Arc;

/// Who a completion belongs to: a number unique in the process and an
/// optional name, shown in every [`CompletionError`] that mentions the task.
///
/// ```
/// let task = fastexec::task::Builder::new().name("fetch").spawn_completion(async { 1 });
/// assert_eq!(task.label().name(), Some("fetch"));
/// assert_eq!(task.label().to_string(), format!("task {} \"fetch\"", task.id()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TaskLabel {
    id: u64,
    name: Option<Arc<str>>,
}

impl TaskLabel {
    pub(crate) fn new(id: u64, name: Option<Arc<str>>) -> TaskLabel {
        TaskLabel { id, name }
    }

    /// The task's number, unique in the process: its
    /// [`TaskId`](crate::task::TaskId), which its hooks'
    /// [`TaskMeta`](crate::task::TaskMeta) and `tracing` span show too.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The task's name, if it was given one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

impl fmt::Display for TaskLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "task {} {name:?}", self.id),
            None => write!(f, "task {}", self.id),
        }
    }
}

/// Why a [`Completion`](crate::Completion) has no output.
///
/// It is `Clone` because every dependent of a failed task receives it.
/// An upstream failure names both the dependency that failed and the failure
/// that started the chain (`cause`, always a panic or a cancellation), so an
/// error stays two levels deep however long the chain of dependents is.
///
/// ```
/// use fastexec::deps::CompletionError;
///
/// let err = fastexec::block_on(async {
///     let fetch = fastexec::task::Builder::new()
///         .name("fetch")
///         .spawn_completion(async { panic!("no network") });
///     let parse = fastexec::spawn_after(fetch, |page: std::sync::Arc<()>| async move { page });
///     parse.await.unwrap_err()
/// });
/// match &err {
///     CompletionError::UpstreamFailed { dependency, cause, .. } => {
///         assert_eq!(dependency.name(), Some("fetch"));
///         assert!(matches!(**cause, CompletionError::Panicked { .. }));
///     }
///     other => panic!("unexpected {other}"),
/// }
/// assert!(err.to_string().contains("no network"));
/// ```
#[derive(Clone, Debug, thiserror::Error)]
pub enum CompletionError {
    /// The task's future panicked.
    #[error("{task} panicked{}", PanicText(.message))]
    Panicked {
        /// The task that panicked.
        task: TaskLabel,
        /// The panic message, when the payload was a string.
        message: Option<Arc<str>>,
    },
    /// The task was cancelled before it finished: aborted, its task group
    /// cancelled, or its executor dropped.
    #[error("{task} was cancelled")]
    Cancelled {
        /// The task that was cancelled.
        task: TaskLabel,
    },
    /// The task never started because one of its dependencies failed.
    #[error("{task} did not run: its dependency {dependency} failed: {cause}")]
    UpstreamFailed {
        /// The task that did not run.
        task: TaskLabel,
        /// Its dependency that failed (itself perhaps by upstream failure).
        dependency: TaskLabel,
        /// The panic or cancellation that started the chain of failures.
        cause: Arc<CompletionError>,
    },
}

impl CompletionError {
    /// The task whose completion reports this error.
    pub fn task(&self) -> &TaskLabel {
        match self {
            CompletionError::Panicked { task, .. }
            | CompletionError::Cancelled { task }
            | CompletionError::UpstreamFailed { task, .. } => task,
        }
    }

    /// Whether the task itself panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self, CompletionError::Panicked { .. })
    }

    /// Whether the task itself was cancelled.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, CompletionError::Cancelled { .. })
    }

    /// The dependency whose failure kept the task from running, if that is
    /// why it has no output.
    pub fn failed_dependency(&self) -> Option<&TaskLabel> {
        match self {
            CompletionError::UpstreamFailed { dependency, .. } => Some(dependency),
            _ => None,
        }
    }

    /// The error a dependent of this task reports: an upstream failure of
    /// `dependent` naming this task, carrying the original cause along.
    pub(crate) fn upstream_of(&self, dependent: TaskLabel) -> CompletionError {
        let cause = match self {
            CompletionError::UpstreamFailed { cause, .. } => cause.clone(),
            original => Arc::new(original.clone()),
        };
        CompletionError::UpstreamFailed {
            task: dependent,
            dependency: self.task().clone(),
            cause,
        }
    }

    /// This error with `task` as the task it belongs to: the same failure,
    /// labelled as the task is named now.
    pub(crate) fn relabelled(mut self, task: TaskLabel) -> CompletionError {
        match &mut self {
            CompletionError::Panicked { task: t, .. }
            | CompletionError::Cancelled { task: t }
            | CompletionError::UpstreamFailed { task: t, .. } => *t = task,
        }
        self
    }

    /// A panic of `task`, keeping the message when the payload is a string.
    pub(crate) fn from_panic(task: TaskLabel, payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| Arc::from(*s))
            .or_else(|| {
                payload
                    .downcast_ref::<String>()
                    .map(|s| Arc::from(s.as_str()))
            });
        CompletionError::Panicked { task, message }
    }
}

/// Formats `": message"` when there is one.
struct PanicText<'a>(&'a Option<Arc<str>>);

impl fmt::Display for PanicText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(message) => write!(f, ": {message}"),
            None => Ok(()),
        }
    }
}
