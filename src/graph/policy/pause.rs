//! Pausing a running task at its checkpoints: [`PauseControl`].
//!
//! # Protocol
//!
//! One `PauseControl` per running task, shared (cloned) between the core,
//! which requests, resumes and cancels, and the body, which awaits
//! [`checkpoint`](PauseControl::checkpoint) where it can stop safely. A
//! mutex guards the phase:
//!
//! ```text
//! Running ──request_pause──▶ Requested ──checkpoint──▶ Paused
//!    ▲                           │                        │
//!    └─────────── resume ────────┴────────────────────────┘
//! any ──cancel, or no checkpoint within the timeout──▶ Cancelled (final)
//! ```
//!
//! Every change of phase happens under the lock and is followed, once the
//! lock is released, by a [`Notify::notify_all`]; a waiter (the body in
//! `checkpoint`, the requester in `acknowledged`) makes its
//! [`Notified`](crate::signal::Notified) *before* it reads the phase under
//! the lock, so a change made after that read reaches it: no wake-up is
//! lost and nothing polls. Wakers are woken with no lock held, neither the
//! switch's nor the notifier's: one the executor did not make may poll a
//! checkpoint again, or read the phase, from inside its `wake`. A graph
//! run changes the phase under its own lock, and wakes the waiters after
//! it (`PauseControl::change_deferred`): a waker may call back into the
//! run, too. The timeout of `acknowledged` is decided
//! under the lock too: if the phase is still `Requested` when the deadline
//! passes, it becomes `Cancelled` there, so a task is never both
//! acknowledged and timed out.
//!
//! A graph run does not use `acknowledged`'s own timeout: its pause
//! timeout is a timer of its own, which makes `Change::TimeOut` with the
//! number of the request it was started for, so that a timer
//! left from an earlier request (paused, resumed, requested again) does
//! not cut the later one short.
//!
//! Pausing a `Pending` or `Ready` task involves no body: the core takes it
//! out of the ready set at once and records a [`PausedFrom`], which resume
//! turns back into the state to restore.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::graph::run::caught;
use crate::graph::TaskState;
use crate::signal::Notify;
use crate::time::timeout_at;

/// The state a paused task was in, which resume restores (but for a task
/// paused while pending whose dependencies have all completed since: it
/// resumes as ready, and [`Blocked::Paused`](crate::graph::Blocked::Paused)
/// says `Ready` for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PausedFrom {
    /// Waiting for dependencies (paused at once).
    Pending,
    /// Ready, waiting for a worker (paused at once; it leaves the ready set).
    Ready,
    /// Running, stopped at a checkpoint (it keeps the budget it holds).
    Running,
}

impl PausedFrom {
    /// The state this names, which resume restores (for `Pending`, only
    /// while a dependency has not completed: see the type's docs).
    ///
    /// ```
    /// use fastexec::graph::{PausedFrom, TaskState};
    ///
    /// let from = PausedFrom::from_state(TaskState::Ready).unwrap();
    /// assert_eq!(from.state(), TaskState::Ready);
    /// assert_eq!(PausedFrom::from_state(TaskState::Completed), None);
    /// ```
    pub fn state(self) -> TaskState {
        match self {
            PausedFrom::Pending => TaskState::Pending,
            PausedFrom::Ready => TaskState::Ready,
            PausedFrom::Running => TaskState::Running,
        }
    }

    /// The `PausedFrom` for a task in `state`, or `None` if a task in that
    /// state cannot be paused (it is finished).
    pub fn from_state(state: TaskState) -> Option<PausedFrom> {
        match state {
            TaskState::Pending => Some(PausedFrom::Pending),
            TaskState::Ready => Some(PausedFrom::Ready),
            TaskState::Running => Some(PausedFrom::Running),
            _ => None,
        }
    }
}

/// A checkpoint found the task cancelled: the body should return (with `?`,
/// it converts into the body's error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the task was cancelled")]
pub struct Cancelled;

/// Why a pause request was not acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PauseError {
    /// No checkpoint came within the pause timeout; the task is now
    /// cancelled (the core records it as cancelled by
    /// [`CancelReason::PauseTimedOut`](crate::graph::CancelReason::PauseTimedOut)).
    #[error("no checkpoint within the pause timeout of {0:?}; the task is cancelled")]
    TimedOut(Duration),
    /// The task was cancelled before it reached a checkpoint.
    #[error("the task was cancelled before it reached a checkpoint")]
    Cancelled,
    /// No pause is pending when the requester looks: the task was resumed
    /// (or never asked to pause) before it reached a checkpoint, or it
    /// paused and was resumed again before the requester looked.
    #[error("no pause is pending: the task was resumed before the requester saw it paused")]
    NotPaused,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Requested,
    Paused,
    Cancelled,
}

/// The phase, and how many pauses were requested so far: a pause timeout
/// applies to the request it was started for, not to a later one.
#[derive(Debug)]
struct Switch {
    phase: Phase,
    requests: u64,
}

#[derive(Debug)]
struct Inner {
    switch: Mutex<Switch>,
    /// Notified after every change of `phase`, with the lock released.
    changed: Notify,
}

/// A change of phase, with the phases it may be made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// `Running` to `Requested`: ask the body to pause at its next
    /// checkpoint.
    RequestPause,
    /// `Requested` to `Paused`: a checkpoint takes the pause (for a run,
    /// under its lock, which records the task paused in the same step).
    PauseIfRequested,
    /// `Running` or `Requested` to `Paused`, with no checkpoint: for a task
    /// between two attempts, where no body runs.
    PauseNow,
    /// `Requested` or `Paused` to `Running`: withdraw a request, or let a
    /// paused body go on.
    Resume,
    /// `Requested` to `Running` only: withdraw a request no checkpoint has
    /// reached (a stopped run's running tasks finish), leaving a paused
    /// body as it is.
    Withdraw,
    /// Any phase but `Cancelled` to `Cancelled`.
    Cancel,
    /// `Requested` to `Cancelled`: no checkpoint within the deadline of
    /// [`PauseControl::acknowledged`].
    TimedOut,
    /// `Requested` to `Cancelled` if the request waiting is number
    /// `request` (see [`PauseControl::requests`]): a graph run's pause
    /// timer, so that a timer left from an earlier request (paused,
    /// resumed, requested again) does not cut a later one short.
    TimeOut { request: u64 },
}

impl Change {
    /// The phases the change is made from, and the phase it makes.
    fn rule(self) -> (&'static [Phase], Phase) {
        match self {
            Change::RequestPause => (&[Phase::Running], Phase::Requested),
            Change::PauseIfRequested => (&[Phase::Requested], Phase::Paused),
            Change::PauseNow => (&[Phase::Running, Phase::Requested], Phase::Paused),
            Change::Resume => (&[Phase::Requested, Phase::Paused], Phase::Running),
            Change::Withdraw => (&[Phase::Requested], Phase::Running),
            Change::Cancel => (
                &[Phase::Running, Phase::Requested, Phase::Paused],
                Phase::Cancelled,
            ),
            Change::TimedOut | Change::TimeOut { .. } => (&[Phase::Requested], Phase::Cancelled),
        }
    }
}

/// The waiters of a switch whose phase a graph run changed under its lock
/// ([`PauseControl::change_deferred`]): dropping it wakes them, which the
/// run does once its lock is released. If a waker panics, the panic
/// ([`Notify::notify_all`] re-raises it once every waiter is woken) is
/// dropped here, the panic hook having reported it: the run's transition
/// is made, and a waker is anyone's. Dropped where it should not be (under
/// the lock), it still wakes them: a wake-up is never lost.
#[must_use = "dropping it wakes the waiters: keep it until the run's lock is released"]
pub(crate) struct DeferredWake(PauseControl);

impl Drop for DeferredWake {
    fn drop(&mut self) {
        caught(|| self.0.inner.changed.notify_all());
    }
}

/// The pause switch of one running task: the core requests, resumes and
/// cancels; the body awaits [`checkpoint`](Self::checkpoint).
///
/// ```
/// use std::time::Duration;
/// use fastexec::graph::PauseControl;
///
/// let control = PauseControl::new();
/// let body_side = control.clone();
/// fastexec::block_on(async move {
///     control.request_pause();
///     let body = fastexec::spawn(async move {
///         body_side.checkpoint().await // waits here until resumed
///     });
///     control.acknowledged(Duration::from_secs(10)).await.unwrap();
///     assert!(control.is_paused());
///     control.resume();
///     assert_eq!(body.await.unwrap(), Ok(()));
/// });
/// ```
#[derive(Debug, Clone)]
pub struct PauseControl {
    inner: Arc<Inner>,
}

impl Default for PauseControl {
    fn default() -> Self {
        PauseControl::new()
    }
}

impl PauseControl {
    /// A control for a task that is running, with no pause requested.
    pub fn new() -> PauseControl {
        PauseControl {
            inner: Arc::new(Inner {
                switch: Mutex::new(Switch {
                    phase: Phase::Running,
                    requests: 0,
                }),
                changed: Notify::new(),
            }),
        }
    }

    fn switch(&self) -> MutexGuard<'_, Switch> {
        self.inner.switch.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn phase(&self) -> Phase {
        self.switch().phase
    }

    /// Makes `change` if the phase allows it, and returns whether it did;
    /// wakes no one (see [`apply`](Self::apply) and
    /// [`change_deferred`](Self::change_deferred)).
    fn change(&self, change: Change) -> bool {
        let (from, to) = change.rule();
        let mut switch = self.switch();
        if !from.contains(&switch.phase) {
            return false;
        }
        if let Change::TimeOut { request } = change {
            if switch.requests != request {
                return false;
            }
        }
        if to == Phase::Requested {
            switch.requests += 1;
        }
        switch.phase = to;
        true
    }

    /// Makes `change` and, if it did, wakes the waiters once the switch's
    /// lock is released. Returns whether it changed the phase.
    fn apply(&self, change: Change) -> bool {
        let changed = self.change(change);
        if changed {
            self.inner.changed.notify_all();
        }
        changed
    }

    /// Makes `change` for a graph run, which calls it under its own lock:
    /// the waiters are not woken here but when the returned
    /// [`DeferredWake`] is dropped, which the run does after its lock (a
    /// waker may be anyone's, and one that calls back into the run from
    /// `wake` would deadlock under it). `None` if the phase did not change.
    pub(crate) fn change_deferred(&self, change: Change) -> Option<DeferredWake> {
        self.change(change).then(|| DeferredWake(self.clone()))
    }

    /// Asks the body to pause at its next checkpoint. Returns `false` (and
    /// changes nothing) unless the task was running without a request.
    pub fn request_pause(&self) -> bool {
        self.apply(Change::RequestPause)
    }

    /// How many pauses were requested so far: the number of the latest
    /// request, for [`Change::TimeOut`].
    pub(crate) fn requests(&self) -> u64 {
        self.switch().requests
    }

    /// A checkpoint's first step, without waiting: pauses if a pause is
    /// requested, and says whether it did.
    fn pause_if_requested(&self) -> bool {
        self.apply(Change::PauseIfRequested)
    }

    /// Withdraws a pause request, or lets a paused body go on. Returns
    /// whether there was one of the two.
    pub fn resume(&self) -> bool {
        self.apply(Change::Resume)
    }

    /// Cancels: the next (or current) checkpoint returns `Err(Cancelled)`.
    /// Idempotent; returns whether this call cancelled.
    pub fn cancel(&self) -> bool {
        self.apply(Change::Cancel)
    }

    /// Whether the body is stopped at a checkpoint.
    pub fn is_paused(&self) -> bool {
        self.phase() == Phase::Paused
    }

    /// Whether a pause was requested and no checkpoint has come yet.
    pub fn is_pause_requested(&self) -> bool {
        self.phase() == Phase::Requested
    }

    /// Whether the task was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.phase() == Phase::Cancelled
    }

    /// Where a body may stop: returns at once unless a pause is requested;
    /// then marks the task paused, tells the requester, and waits for
    /// [`resume`](Self::resume) (`Ok`) or [`cancel`](Self::cancel)
    /// (`Err(Cancelled)`).
    ///
    /// # Errors
    ///
    /// [`Cancelled`] if the task is (or gets, while paused) cancelled.
    pub async fn checkpoint(&self) -> Result<(), Cancelled> {
        loop {
            // Made before the phase is read: reached by every change after.
            let changed = self.inner.changed.notified();
            match self.phase() {
                Phase::Running => return Ok(()),
                Phase::Cancelled => return Err(Cancelled),
                // Pauses (telling the requester), then waits as paused,
                // unless something changed in between.
                Phase::Requested => {
                    self.pause_if_requested();
                }
                Phase::Paused => changed.await,
            }
        }
    }

    /// What a graph task's checkpoint ([`Inputs::checkpoint`]) waits on,
    /// once the run has taken (and recorded) any pause requested until
    /// then: waits while paused, and returns `Ok(true)` once running,
    /// `Ok(false)` if a pause is requested (it came after the run's check:
    /// the caller takes it under the run's lock, so that the run records
    /// the task paused, and waits again). Unlike
    /// [`checkpoint`](Self::checkpoint), it never pauses by itself, which
    /// would leave the run's state of the task `Running`.
    ///
    /// [`Inputs::checkpoint`]: crate::graph::Inputs::checkpoint
    pub(crate) async fn wait_while_paused(&self) -> Result<bool, Cancelled> {
        loop {
            // Made before the phase is read: reached by every change after.
            let changed = self.inner.changed.notified();
            match self.phase() {
                Phase::Running => return Ok(true),
                Phase::Requested => return Ok(false),
                Phase::Cancelled => return Err(Cancelled),
                Phase::Paused => changed.await,
            }
        }
    }

    /// For the requester, after [`request_pause`](Self::request_pause):
    /// resolves `Ok` once the body is paused at a checkpoint. If none comes
    /// within `timeout`, cancels the task and returns
    /// [`PauseError::TimedOut`]; in a graph run, the core then aborts the
    /// body and records the cancel
    /// ([`CancelReason::PauseTimedOut`](crate::graph::CancelReason::PauseTimedOut)).
    /// A control used on its own only marks the task cancelled: its body
    /// sees it at its next checkpoint.
    ///
    /// # Errors
    ///
    /// [`PauseError`]: timed out (the task is now cancelled), cancelled by
    /// someone else, or resumed before the requester saw it paused.
    pub async fn acknowledged(&self, timeout: Duration) -> Result<(), PauseError> {
        // A timeout too long for an `Instant` (such as `Duration::MAX`,
        // "wait as long as it takes") means no deadline.
        let deadline = Instant::now().checked_add(timeout);
        loop {
            // Made before the phase is read: reached by every change after.
            let changed = self.inner.changed.notified();
            match self.phase() {
                Phase::Paused => return Ok(()),
                Phase::Cancelled => return Err(PauseError::Cancelled),
                Phase::Running => return Err(PauseError::NotPaused),
                Phase::Requested => {}
            }
            let Some(deadline) = deadline else {
                changed.await;
                continue;
            };
            if timeout_at(deadline, changed).await.is_err() && self.apply(Change::TimedOut) {
                return Err(PauseError::TimedOut(timeout));
            }
            // Woken, or the deadline raced with a change: read the phase again.
        }
    }
}
