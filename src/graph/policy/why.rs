//! [`Blocked`]: why a task is not running.

use std::fmt;
use std::time::Duration;

use super::budget::BudgetFull;
use super::pause::PausedFrom;
use crate::graph::{CancelReason, TaskId, TaskState};

/// Why a task is not running right now. The core fills it in for any task
/// that is not `Running`, and for a running one waiting out the backoff
/// before a retry.
///
/// ```
/// use fastexec::graph::{Blocked, PausedFrom, TaskId, TaskState};
///
/// let why = Blocked::WaitingOn(vec![TaskId::from("fetch"), TaskId::from("parse")]);
/// assert_eq!(why.to_string(), "waiting on 2 dependencies: `fetch`, `parse`");
/// let why = Blocked::Paused { from: PausedFrom::Ready };
/// assert_eq!(why.to_string(), "paused; resumes as ready");
/// assert_eq!(
///     Blocked::Finished(TaskState::Completed).to_string(),
///     "not running: finished (completed)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Blocked {
    /// The run has not started. [`RunHandle::why`](crate::graph::RunHandle::why)
    /// never gives it: a run's handle exists only once the run has started
    /// ([`Graph::start`](crate::graph::Graph::start)), and a [`Graph`](crate::graph::Graph)
    /// not yet started has no `why`. It is there for code that explains
    /// tasks of a graph it has not started yet in the same terms.
    NotStarted,
    /// Dependencies that have not completed yet.
    WaitingOn(Vec<TaskId>),
    /// Ready, but a budget cannot fit its demand.
    BudgetFull(BudgetFull),
    /// Ready, and this many ready tasks rank above it. With none (`by` is
    /// 0), it is next in line and waits for a runner: all of them are busy
    /// (running other tasks' bodies), or one is on its way.
    Outranked {
        /// How many ready tasks go first.
        by: usize,
    },
    /// Paused; resume restores the state it was paused from, but for a
    /// task paused while pending whose dependencies have all completed
    /// since, which resumes as ready (and `from` says so). A task paused
    /// while running still holds its budget (it is released when the task
    /// ends), and its text says so.
    Paused {
        /// The state resume restores: the one it was paused from, or
        /// [`PausedFrom::Ready`] for a task paused while pending whose
        /// dependencies have all completed.
        from: PausedFrom,
    },
    /// Running, but between two attempts: its last attempt failed and it
    /// waits out the backoff of its [`RetryPolicy`](crate::graph::RetryPolicy)
    /// (the error of that attempt is in the run's report).
    Retrying {
        /// The attempt it waits to start (2 for the first retry).
        next_attempt: u32,
        /// How long until it is due (`Duration::MAX`: longer than the
        /// clock can tell).
        due_in: Duration,
    },
    /// It reached a terminal state (other than cancelled, see
    /// [`Blocked::Cancelled`]).
    Finished(TaskState),
    /// It was cancelled, for this reason: on request, after a task it
    /// depends on, by a stop or fail-fast, or because it reached no
    /// checkpoint within the pause timeout.
    Cancelled(CancelReason),
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::NotStarted => f.write_str("the run has not started"),
            Blocked::WaitingOn(ids) => {
                let noun = if ids.len() == 1 {
                    "dependency"
                } else {
                    "dependencies"
                };
                write!(f, "waiting on {} {noun}: ", ids.len())?;
                for (i, id) in ids.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{id}`")?;
                }
                Ok(())
            }
            Blocked::BudgetFull(full) => write!(f, "ready, but {full}"),
            Blocked::Outranked { by: 0 } => f.write_str("ready, next in line: waiting for a runner"),
            Blocked::Outranked { by } => {
                let noun = if *by == 1 { "task" } else { "tasks" };
                write!(f, "ready, outranked by {by} ready {noun}")
            }
            Blocked::Paused {
                from: PausedFrom::Running,
            } => f.write_str(
                "paused while running (at a checkpoint, or between two attempts), holding its budget; resumes as running",
            ),
            Blocked::Paused { from } => write!(f, "paused; resumes as {}", from.state()),
            Blocked::Retrying {
                next_attempt,
                due_in,
            } => write!(
                f,
                "waiting to retry: attempt {next_attempt} is due in {due_in:?}"
            ),
            Blocked::Finished(state) => write!(f, "not running: finished ({state})"),
            Blocked::Cancelled(reason) => write!(f, "not running: cancelled ({reason})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Resource;

    #[test]
    fn every_reason_reads_as_a_sentence() {
        let cases = [
            (Blocked::NotStarted, "the run has not started"),
            (
                Blocked::WaitingOn(vec![TaskId::from("a")]),
                "waiting on 1 dependency: `a`",
            ),
            (
                Blocked::BudgetFull(BudgetFull {
                    resource: Resource::Ram,
                    demand: 300,
                    in_use: 800,
                    cap: 1000,
                }),
                "ready, but budget full: needs 300 bytes of RAM, 800 in use of 1000",
            ),
            (
                Blocked::Outranked { by: 0 },
                "ready, next in line: waiting for a runner",
            ),
            (
                Blocked::Outranked { by: 1 },
                "ready, outranked by 1 ready task",
            ),
            (
                Blocked::Outranked { by: 7 },
                "ready, outranked by 7 ready tasks",
            ),
            (
                Blocked::Paused {
                    from: PausedFrom::Running,
                },
                "paused while running (at a checkpoint, or between two attempts), holding its budget; resumes as running",
            ),
            (
                Blocked::Finished(TaskState::UpstreamFailed),
                "not running: finished (upstream-failed)",
            ),
            (
                Blocked::Cancelled(CancelReason::PauseTimedOut(Duration::from_millis(50))),
                "not running: cancelled (pause requested, but no checkpoint came within the pause timeout of 50ms)",
            ),
        ];
        for (why, text) in cases {
            assert_eq!(why.to_string(), text);
        }
    }
}
