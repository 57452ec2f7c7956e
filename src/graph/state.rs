//! [`TaskState`]: where a task is in its life.

use std::fmt;

/// The state of a task in a run.
///
/// ```text
/// Pending ──deps completed──▶ Ready ──started──▶ Running ──▶ Completed | Failed
///    │                          │                   │
///    └── a dep failed ──▶ UpstreamFailed            │
///    └──────── cancel / stop / fail-fast ───────────┴──▶ Cancelled
///
/// Pending, Ready, Running ──pause──▶ Paused ──resume──▶ the state it left
///                                     │        (Ready for one left Pending
///                                     │         whose deps completed since)
///                                     └──▶ Cancelled | UpstreamFailed | Failed
/// ```
///
/// `Running` covers every attempt of the task and the backoff waits between
/// them; it starts when a runner takes the task's attempt, which can be a
/// little before the body is called. The last four states are terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// Waiting for dependencies.
    Pending,
    /// Every dependency completed; waiting for a worker.
    Ready,
    /// An attempt is running (or the task waits to retry).
    Running,
    /// Paused by [`RunHandle::pause`](super::RunHandle::pause): from
    /// pending or ready at once, from running at its next checkpoint (a
    /// task waiting out the backoff before a retry pauses at once; one
    /// whose attempt fails, to be retried, before it reaches a checkpoint
    /// pauses then).
    /// [`RunHandle::resume`](super::RunHandle::resume) restores the state
    /// it was paused from, but for a task paused while pending whose
    /// dependencies have all completed since: it resumes as ready. A paused
    /// task can still end: cancelled (also by a stop), upstream-failed, or,
    /// paused at a checkpoint, failed when its attempt times out with no
    /// retry left.
    Paused,
    /// Finished with an output.
    Completed,
    /// Its last attempt failed (error, panic or timeout).
    Failed,
    /// Cancelled before finishing.
    Cancelled,
    /// Never ran: a task it depends on failed.
    UpstreamFailed,
}

impl TaskState {
    /// Whether the task will not change state any more.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed
                | TaskState::Failed
                | TaskState::Cancelled
                | TaskState::UpstreamFailed
        )
    }

    /// A short lower-case name, as printed in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::Ready => "ready",
            TaskState::Running => "running",
            TaskState::Paused => "paused",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
            TaskState::UpstreamFailed => "upstream-failed",
        }
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}
