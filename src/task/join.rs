//! Handles to a spawned task's output.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use super::{Failure, Panic, RawHandle, TaskOutput};

type Output<T> = Option<Result<TaskOutput<T>, Failure>>;

/// The async-task handle inside a live [`JoinHandle`].
pub(crate) type RawTask<T> = async_task::FallibleTask<Result<TaskOutput<T>, Failure>>;

/// An owned permission to await a task's output.
///
/// Awaiting gives `Ok(output)`, or a [`JoinError`] if the task panicked or
/// was cancelled. Dropping the handle **detaches** the task: it runs on, and
/// its output is dropped when it finishes. [`abort`](JoinHandle::abort)
/// cancels it instead.
///
/// # Panics
///
/// Polling the handle again after it gave its result panics, as for any
/// completed future (awaiting it once, or `wait!`, never does).
///
/// ```
/// let sum = fastexec::block_on(async {
///     let a = fastexec::spawn(async { 20 });
///     let b = fastexec::spawn(async { 22 });
///     a.await.unwrap() + b.await.unwrap()
/// });
/// assert_eq!(sum, 42);
/// ```
#[must_use = "dropping a JoinHandle detaches the task; call `.detach()` to mean that"]
pub struct JoinHandle<T> {
    /// The task, while it may still be running and was not aborted. Kept
    /// apart from the rarer states so that dropping or finishing a handle
    /// (every detached spawn, every awaited one) tests one pointer instead
    /// of running the whole enum's drop glue.
    live: Option<RawTask<T>>,
    /// Where an aborted handle stands; empty while live or once the output
    /// was taken.
    aborted: AbortedSlot<T>,
}

/// An `Option<Box<Aborted>>` whose drop tests the pointer inline: the glue
/// of the bare `Option` is an out-of-line call that every dropped handle
/// would pay.
struct AbortedSlot<T>(Option<Box<Aborted<T>>>);

impl<T> Drop for AbortedSlot<T> {
    #[inline]
    fn drop(&mut self) {
        if let Some(aborted) = self.0.take() {
            drop_aborted(aborted);
        }
    }
}

#[inline(never)]
fn drop_aborted<T>(aborted: Box<Aborted<T>>) {
    drop(aborted);
}

/// An aborted handle's state behind a mutex, so that
/// [`is_finished`](JoinHandle::is_finished), which takes `&self`, can poll
/// the cancellation to learn whether the task's future is gone (a cold
/// path: only aborted handles have one).
struct Aborted<T>(Mutex<AbortedState<T>>);

enum AbortedState<T> {
    /// Waiting until the task's future has been dropped. `awaiter` is the
    /// waker of the last poll of the handle, if any: async-task keeps one
    /// waker per task, so a poll from `is_finished` must pass that one on
    /// rather than replace it with a no-op one (a lost wake-up).
    Waiting {
        cancel: Pin<Box<dyn Future<Output = Output<T>> + Send>>,
        awaiter: Option<Waker>,
    },
    /// The task's future is gone; this is what it left (`None` once taken,
    /// or if it was cancelled).
    Ready(Output<T>),
}

impl<T> AbortedState<T> {
    /// Polls a waiting cancellation once for the handle's awaiter (`cx`), or
    /// with the last awaiter's waker when `cx` is `None`, keeping what it
    /// gives.
    fn poll_done(&mut self, cx: Option<&mut Context<'_>>) -> Poll<&mut Output<T>> {
        if let AbortedState::Waiting { cancel, awaiter } = self {
            if let Some(cx) = &cx {
                if !awaiter.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *awaiter = Some(cx.waker().clone());
                }
            }
            let waker = awaiter
                .as_ref()
                .unwrap_or(futures_util::task::noop_waker_ref());
            let output = std::task::ready!(cancel.as_mut().poll(&mut Context::from_waker(waker)));
            *self = AbortedState::Ready(output);
        }
        match self {
            AbortedState::Ready(output) => Poll::Ready(output),
            AbortedState::Waiting { .. } => unreachable!("just made ready"),
        }
    }
}

impl<T: Send + 'static> JoinHandle<T> {
    pub(crate) fn new(task: RawHandle<T>) -> Self {
        JoinHandle {
            live: Some(task.fallible()),
            aborted: AbortedSlot(None),
        }
    }

    /// Cancels the task: it is not polled again (if it is running, the
    /// current poll finishes), and its future is dropped by the executor,
    /// which an idle task is scheduled for: not inside this call, so what
    /// the future holds is released a moment later, on a worker (on a
    /// single worker, only once the caller's own poll has returned).
    /// Awaiting the handle waits for that drop and then gives a cancelled
    /// [`JoinError`]. If the task had already finished, awaiting still
    /// gives its output; if it completes in the poll the abort interrupted,
    /// its output is dropped and awaiting gives the cancelled error.
    /// Aborting twice is harmless.
    ///
    /// ```
    /// let err = fastexec::block_on(async {
    ///     let mut handle = fastexec::spawn(std::future::pending::<()>());
    ///     handle.abort();
    ///     handle.await.unwrap_err()
    /// });
    /// assert!(err.is_cancelled());
    /// ```
    pub fn abort(&mut self) {
        let Some(task) = self.live.take() else {
            return;
        };
        // `cancel` is an async fn: nothing happens until it is polled.
        // One poll marks the task cancelled (and schedules it, so the
        // executor drops its future) right now, not when awaited.
        let mut state = AbortedState::Waiting {
            cancel: Box::pin(task.cancel()),
            awaiter: None,
        };
        let _ = state.poll_done(None);
        self.aborted = AbortedSlot(Some(Box::new(Aborted(Mutex::new(state)))));
    }
}

impl<T> JoinHandle<T> {
    /// Lets the task run on without a handle; the same as dropping it, said
    /// out loud. An enclosing `block_on` or `TaskGroup` still waits for it.
    ///
    /// ```
    /// fastexec::block_on(async {
    ///     fastexec::spawn(async { /* runs to completion */ }).detach();
    /// });
    /// ```
    pub fn detach(self) {
        drop(self);
    }

    /// async-task's handle, for a completion's node to keep (a word, where
    /// a `JoinHandle` takes three): dropping it cancels the task, `detach`
    /// lets it run. `None` once aborted or awaited.
    pub(crate) fn into_raw(mut self) -> Option<RawTask<T>> {
        self.live.take()
    }

    /// Whether the task has finished: completed, panicked or been cancelled.
    /// An aborted task has finished once its future has been dropped, not
    /// while a poll of it is still running.
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let executor = fastexec::Executor::builder().threads(1).build().unwrap();
    /// let go = Arc::new(fastexec::signal::Notify::new());
    /// let wait = go.clone();
    /// let handle = executor.spawn(async move {
    ///     wait.notified().await;
    ///     5
    /// });
    /// assert!(!handle.is_finished());
    /// go.notify_one();
    /// assert_eq!(executor.block_on(handle).unwrap(), 5);
    /// ```
    pub fn is_finished(&self) -> bool {
        if let Some(task) = &self.live {
            return task.is_finished();
        }
        match self.aborted.0.as_deref() {
            Some(Aborted(state)) => {
                let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
                state.poll_done(None).is_ready()
            }
            // Awaited to the end.
            None => true,
        }
    }
}

impl<T> JoinHandle<T> {
    /// The task's outcome, without waiting: `None` while it runs (or its
    /// future is still being dropped), or once the handle gave it. For the
    /// forwarder of a shared completion, dropped before it awaited it.
    pub(crate) fn try_take(&mut self) -> Option<Result<T, JoinError>> {
        let given = self.live.is_none() && self.aborted.0.is_none();
        if given || !self.is_finished() {
            return None;
        }
        let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
        match Pin::new(self).poll(&mut cx) {
            Poll::Ready(outcome) => Some(outcome),
            Poll::Pending => None,
        }
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let output = if let Some(task) = &mut self.live {
            let output = std::task::ready!(Pin::new(task).poll(cx));
            self.live = None;
            output
        } else {
            let output = match self.aborted.0.as_deref_mut() {
                Some(Aborted(state)) => {
                    let state = state.get_mut().unwrap_or_else(|e| e.into_inner());
                    std::task::ready!(state.poll_done(Some(cx))).take()
                }
                None => panic!("JoinHandle polled after it returned the output"),
            };
            self.aborted = AbortedSlot(None);
            output
        };
        Poll::Ready(match output {
            Some(Ok(value)) => Ok(value.into_inner()),
            Some(Err(Failure::Panic(panic))) => Err(JoinError::panic(panic.into_inner())),
            Some(Err(Failure::Cancelled)) | None => Err(JoinError::cancelled()),
        })
    }
}

impl<T> Unpin for JoinHandle<T> {}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        // async-task cancels a task whose handle is dropped; ours detaches.
        if let Some(task) = self.live.take() {
            task.detach();
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}

/// Why a task gave no output: it panicked, or it was cancelled.
///
/// Its `Display` names the cause, with the panic message when the payload
/// is a string; [`into_panic`](JoinError::into_panic) gives the payload
/// back, to resume the panic or to inspect it.
///
/// ```
/// let err = fastexec::block_on(async {
///     fastexec::spawn(async { panic!("disk full") }).await.unwrap_err()
/// });
/// assert!(err.is_panic() && !err.is_cancelled());
/// assert_eq!(err.to_string(), "task panicked: disk full");
/// assert_eq!(err.into_panic().downcast_ref::<&str>(), Some(&"disk full"));
/// ```
#[derive(thiserror::Error)]
#[error("{}", self.describe())]
pub struct JoinError {
    repr: Repr,
}

enum Repr {
    Cancelled,
    /// A `Mutex` makes the `Send`-only payload shareable, so that `JoinError`
    /// is `Sync` as error types are expected to be.
    Panic {
        message: Option<String>,
        payload: Mutex<Panic>,
    },
}

impl JoinError {
    fn cancelled() -> JoinError {
        JoinError {
            repr: Repr::Cancelled,
        }
    }

    fn panic(payload: Panic) -> JoinError {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned());
        JoinError {
            repr: Repr::Panic {
                message,
                payload: Mutex::new(payload),
            },
        }
    }

    /// Whether the task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic { .. })
    }

    /// Whether the task was cancelled: aborted, its task group cancelled, or
    /// its executor shut down (except a task blocked in a nested
    /// [`block_on`](crate::block_on) then, which ends with a panic).
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// The panic payload, for `std::panic::resume_unwind`.
    ///
    /// # Panics
    ///
    /// If the task was cancelled rather than panicked.
    pub fn into_panic(self) -> Box<dyn std::any::Any + Send + 'static> {
        self.try_into_panic()
            .unwrap_or_else(|_| panic!("JoinError::into_panic on a cancelled task"))
    }

    /// The panic payload, or the error itself if the task was cancelled.
    ///
    /// # Errors
    ///
    /// The error itself, unchanged, if the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn std::any::Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic { payload, .. } => {
                Ok(payload.into_inner().unwrap_or_else(|e| e.into_inner()))
            }
            Repr::Cancelled => Err(self),
        }
    }

    fn describe(&self) -> String {
        match &self.repr {
            Repr::Cancelled => "task was cancelled".to_string(),
            Repr::Panic {
                message: Some(m), ..
            } => format!("task panicked: {m}"),
            Repr::Panic { message: None, .. } => "task panicked".to_string(),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JoinError({})", self.describe())
    }
}
