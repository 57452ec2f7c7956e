//! Sleeping, timeouts and intervals.
//!
//! [`sleep`] and [`sleep_until`] wait, [`timeout`] and [`timeout_at`] bound
//! another future, [`interval`] and [`interval_at`] tick at a fixed period.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use fastexec::time::{sleep, timeout};
//!
//! fastexec::block_on(async {
//!     let start = Instant::now();
//!     sleep(Duration::from_millis(5)).await;
//!     assert!(start.elapsed() >= Duration::from_millis(5));
//!
//!     let never = std::future::pending::<()>();
//!     assert!(timeout(Duration::from_millis(5), never).await.is_err());
//! });
//! ```
//!
//! # Which executor drives a timer
//!
//! A timer future registers on its first poll that finds its deadline
//! still ahead, with the executor it is polled under, and stays with it
//! (see below for shutdown): in a task or a `block_on` of an
//! [`Executor`](crate::Executor), that executor; anywhere else (a thread of
//! your own, another runtime) the global executor, which starts on first
//! use (and panics if it cannot, as [`spawn`](crate::spawn) does). A
//! deadline that has already passed completes on the first poll without
//! registering, so `sleep(Duration::ZERO)` is ready at once.
//!
//! There is no timer thread. An idle worker sleeps until the nearest
//! deadline, a busy worker fires due timers between tasks (every 61 polls,
//! when it also takes in work from outside), and a thread waiting in
//! `block_on` fires its executor's due timers when it wakes.
//!
//! # When a timer fires
//!
//! Never before its deadline. While a worker of the executor is idle,
//! within one wheel tick (65.536 µs) plus the thread wake-up latency after
//! it. While **every** worker is busy, at the next check of one of them:
//! up to 61 polls later, so with polls of 2 ms up to 122 ms late; and a
//! worker fires nothing in the middle of a poll, so a long poll on every
//! worker (a blocking call in a task, a busy loop; on a one-worker
//! executor, any long poll) delays timers until one returns. The woken task
//! then waits its turn behind the tasks ready before it. Timers due in the
//! same tick are woken in no particular order.
//!
//! A duration too large for an [`Instant`] (such as [`Duration::MAX`])
//! waits about 30 years instead of overflowing.
//!
//! # Dropping and shutdown
//!
//! Dropping a timer future cancels its timer and frees its waker at once:
//! creating and dropping timers leaves nothing behind. Dropping an
//! executor drops its tasks and the timer futures they own. A timer future
//! that outlives its executor (polled under it, then moved elsewhere) is
//! woken as the executor shuts down and registers again, on its next poll,
//! with the executor it is polled under then, keeping its deadline. If that
//! executor has shut down too (a sleep in a blocking job of an executor
//! being dropped, whose drop waits for the job), a `block_on` on a thread
//! of your own or of the blocking pool keeps the timer itself, sleeping
//! until its deadline.
//!
//! # Wakers the executor did not make
//!
//! A timer keeps whatever waker it was last polled with (a sleep polled by
//! hand, or under another runtime). The timer queue wakes and drops such
//! wakers outside its lock, so a waker's `wake` or drop may use timers of
//! the same executor. A panic in a timer's `wake` is caught where the
//! timer fires (a worker, a `block_on`, the executor's drop): the panic
//! hook reports it, and the firing thread goes on with the other timers.

pub(crate) mod driver;
pub(crate) mod queue;
pub(crate) mod ticks;

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use pin_project_lite::pin_project;

use self::queue::TimerKey;
pub(crate) use self::queue::TimerQueue;

/// Stands in for "never" when a deadline does not fit in an [`Instant`]:
/// about 30 years, as far as any process will wait.
const FAR_FUTURE: Duration = Duration::from_secs(60 * 60 * 24 * 365 * 30);

/// The instant `duration` after now, or [`FAR_FUTURE`] after now if that
/// does not fit in an [`Instant`].
fn deadline_after(duration: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(duration)
        .unwrap_or_else(|| now + FAR_FUTURE)
}

/// Waits until `duration` has elapsed.
///
/// The deadline is taken when `sleep` is called, not when the future is
/// first polled. A `duration` too large for an [`Instant`] sleeps for about
/// 30 years.
///
/// ```
/// use std::time::{Duration, Instant};
///
/// fastexec::block_on(async {
///     let start = Instant::now();
///     fastexec::time::sleep(Duration::from_millis(2)).await;
///     assert!(start.elapsed() >= Duration::from_millis(2));
/// });
/// ```
pub fn sleep(duration: Duration) -> Sleep {
    sleep_until(deadline_after(duration))
}

/// Waits until `deadline`; completes on its first poll if `deadline` has
/// passed.
///
/// ```
/// use std::time::{Duration, Instant};
///
/// fastexec::block_on(async {
///     let deadline = Instant::now() + Duration::from_millis(2);
///     fastexec::time::sleep_until(deadline).await;
///     assert!(Instant::now() >= deadline);
/// });
/// ```
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        timer: Timer::default(),
    }
}

/// The future of [`sleep`] and [`sleep_until`].
///
/// `Send`, `Sync` and `Unpin`; dropping it cancels its timer.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct Sleep {
    deadline: Instant,
    timer: Timer,
}

impl Sleep {
    /// The instant this sleep completes at (or just after).
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the deadline has passed.
    pub fn is_elapsed(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Moves the deadline, earlier or later, as if the sleep had been
    /// created with `deadline`, also after it completed (it can then be
    /// awaited again). The old registration is cancelled at once and the
    /// next poll registers the new deadline: a task that resets a sleep it
    /// awaits must poll it again to be woken.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// fastexec::block_on(async {
    ///     let mut sleep = fastexec::time::sleep(Duration::from_secs(3600));
    ///     for _ in 0..2 {
    ///         let soon = Instant::now() + Duration::from_millis(1);
    ///         sleep.reset(soon);
    ///         (&mut sleep).await;
    ///         assert!(Instant::now() >= soon);
    ///     }
    /// });
    /// ```
    pub fn reset(&mut self, deadline: Instant) {
        self.deadline = deadline;
        self.timer.cancel();
    }

    /// Whether the last poll left the sleep waiting in a timer queue. False
    /// after a pending poll only when no queue would take it (the one it
    /// waited in and the current executor's both closed, see
    /// `Timer::register`): nothing will wake it for its deadline.
    pub(crate) fn is_registered(&self) -> bool {
        self.timer.key.is_some()
    }

    /// A sleep that registers in `queue` rather than the current one.
    #[cfg(test)]
    pub(crate) fn with_queue(deadline: Instant, queue: Arc<TimerQueue>) -> Self {
        Self {
            deadline,
            timer: Timer {
                queue: Some(queue),
                ..Timer::default()
            },
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if this.is_elapsed() {
            this.timer.cancel();
            return Poll::Ready(());
        }
        this.timer.register(this.deadline, cx);
        Poll::Pending
    }
}

/// A sleep's entry in a timer queue, removed when dropped.
#[derive(Default)]
struct Timer {
    /// The queue of the first registration; later ones reuse it.
    queue: Option<Arc<TimerQueue>>,
    /// The pending entry, if any.
    key: Option<TimerKey>,
    /// `queue` is a thread's queue of last resort (`block_on::fallback_timers`).
    last_resort: bool,
}

impl Timer {
    /// Makes sure the context's waker is woken at `deadline`.
    fn register(&mut self, deadline: Instant, cx: &Context<'_>) {
        let queue = self.queue.get_or_insert_with(driver::current_queue);
        let still_pending = self
            .key
            .is_some_and(|key| queue.reset_waker(key, cx.waker()));
        if still_pending {
            if self.last_resort {
                self.leave_last_resort(deadline, cx);
            }
            return;
        }
        // Reset since it was put in the last resort (or woken early, as its
        // queue closed): register where `leave_last_resort` would move it,
        // if that queue takes it. (Not `self.key`: the key of an entry that
        // fired or was closed stays until replaced.)
        if self.last_resort && self.leave_last_resort(deadline, cx) {
            return;
        }
        let queue = self.queue.as_ref().expect("set above");
        // First poll, or the entry fired between the caller's clock read
        // and now: (re-)insert; a due entry fires at once.
        self.key = queue.insert(deadline, cx.waker());
        if self.key.is_none() {
            // The queue's executor has shut down (it woke this timer as it
            // closed the queue): move to the executor polled under now.
            let current = driver::current_queue();
            self.key = current.insert(deadline, cx.waker());
            self.queue = Some(current);
            self.last_resort = false;
            if self.key.is_none() {
                // That one is shut down too. In a `block_on` that sleeps
                // on a parker (a blocking job of that executor, which its
                // drop waits for), the call's own queue; elsewhere the
                // future is about to be dropped: until then, poll again
                // rather than never.
                if let Some(fallback) = crate::block_on::fallback_timers() {
                    self.key = fallback.insert(deadline, cx.waker());
                    self.queue = Some(fallback);
                    self.last_resort = true;
                }
            }
            if self.key.is_none() {
                cx.waker().wake_by_ref();
            }
        }
    }

    /// Moves a timer pending in a thread's queue of last resort to the
    /// queue of the executor it is polled under, if that one takes it:
    /// only a `block_on` that sleeps on a parker fires the last resort, and
    /// another executor's `block_on` nested in it (the simple scheduler's)
    /// would wait for the timer for ever. Never starts the global executor.
    /// Also for a timer with no pending entry (reset since): it registers
    /// there. Returns whether it moved.
    #[cold]
    fn leave_last_resort(&mut self, deadline: Instant, cx: &Context<'_>) -> bool {
        let current =
            crate::context::with_executor(|shared, _| shared.map(|s| Arc::clone(s.timers())));
        let Some(current) = current else { return false };
        let Some(key) = current.insert(deadline, cx.waker()) else {
            return false;
        };
        if let (Some(queue), Some(old)) = (self.queue.replace(current), self.key.replace(key)) {
            queue.cancel(old);
        }
        self.last_resort = false;
        true
    }

    fn cancel(&mut self) {
        if let (Some(queue), Some(key)) = (&self.queue, self.key.take()) {
            queue.cancel(key);
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.cancel();
    }
}

impl fmt::Debug for Timer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timer")
            .field("registered", &self.key.is_some())
            .finish()
    }
}

/// The error of a [`Timeout`] whose deadline passed first.
///
/// ```
/// use std::time::Duration;
///
/// let result = fastexec::block_on(fastexec::time::timeout(
///     Duration::from_millis(1),
///     std::future::pending::<()>(),
/// ));
/// let elapsed = result.unwrap_err();
/// assert_eq!(elapsed.to_string(), "deadline has elapsed");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("deadline has elapsed")]
pub struct Elapsed(());

/// Runs `future` for at most `duration`.
///
/// See [`timeout_at`]. A `duration` too large for an [`Instant`] allows
/// about 30 years.
///
/// ```
/// use std::time::Duration;
/// use fastexec::time::timeout;
///
/// fastexec::block_on(async {
///     assert_eq!(timeout(Duration::from_secs(5), async { 7 }).await, Ok(7));
/// });
/// ```
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    timeout_at(deadline_after(duration), future)
}

/// Runs `future` until `deadline`: `Ok(output)` if it completes first,
/// `Err(Elapsed)` otherwise.
///
/// Each poll polls `future` before looking at the clock, so an output that
/// is ready when the deadline passes is returned as `Ok`: a completion is
/// never reported as a timeout. On `Err`, `future` is dropped with the
/// `Timeout` (for a [`Notified`](crate::signal::Notified) this hands a
/// notification that raced with the deadline back to its `Notify`).
///
/// ```
/// use std::time::{Duration, Instant};
/// use fastexec::time::timeout_at;
///
/// fastexec::block_on(async {
///     let deadline = Instant::now() + Duration::from_millis(2);
///     let result = timeout_at(deadline, std::future::pending::<()>()).await;
///     assert!(result.is_err());
///     assert!(Instant::now() >= deadline);
/// });
/// ```
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    Timeout {
        future: future.into_future(),
        sleep: sleep_until(deadline),
    }
}

pin_project! {
    /// The future of [`timeout`] and [`timeout_at`].
    #[must_use = "futures do nothing unless polled"]
    #[derive(Debug)]
    pub struct Timeout<F> {
        #[pin]
        future: F,
        sleep: Sleep,
    }
}

impl<F> Timeout<F> {
    /// The deadline.
    pub fn deadline(&self) -> Instant {
        self.sleep.deadline()
    }

    /// The wrapped future.
    pub fn get_ref(&self) -> &F {
        &self.future
    }

    /// Gives back the wrapped future, cancelling the timer.
    pub fn into_inner(self) -> F {
        self.future
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(output) = this.future.poll(cx) {
            return Poll::Ready(Ok(output));
        }
        ready!(Pin::new(this.sleep).poll(cx));
        Poll::Ready(Err(Elapsed(())))
    }
}

/// Ticks every `period`, the first tick at once.
///
/// # Missed ticks
///
/// A tick that comes late (the task was busy or the machine overloaded) is
/// delivered once, and the ticks missed meanwhile are *skipped*: the next
/// deadline is the first point of the original grid (`start + k × period`)
/// that is not in the past. The other choice, a burst of catch-up ticks,
/// adds work exactly when the system is behind, and periodic jobs such as
/// reporting statistics gain nothing from running twice in a row. Ticks stay
/// in phase with the start.
///
/// # Panics
///
/// If `period` is zero.
///
/// ```
/// use std::time::{Duration, Instant};
///
/// fastexec::block_on(async {
///     let period = Duration::from_millis(2);
///     let mut interval = fastexec::time::interval(period);
///     let first = interval.tick().await;
///     let second = interval.tick().await;
///     assert_eq!(second - first, period);
///     assert!(Instant::now() >= second);
/// });
/// ```
pub fn interval(period: Duration) -> Interval {
    interval_at(Instant::now(), period)
}

/// Ticks every `period`, the first tick at `start`; see [`interval`].
///
/// # Panics
///
/// If `period` is zero.
///
/// ```
/// use std::time::{Duration, Instant};
///
/// fastexec::block_on(async {
///     let start = Instant::now() + Duration::from_millis(2);
///     let period = Duration::from_millis(1);
///     let mut interval = fastexec::time::interval_at(start, period);
///     assert_eq!(interval.tick().await, start);
///     assert!(Instant::now() >= start);
/// });
/// ```
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(
        !period.is_zero(),
        "fastexec: an interval needs a non-zero period"
    );
    Interval {
        period,
        sleep: sleep_until(start),
    }
}

/// Ticks at a fixed period; made by [`interval`] and [`interval_at`].
#[derive(Debug)]
pub struct Interval {
    period: Duration,
    /// Sleeps until the next tick's scheduled instant.
    sleep: Sleep,
}

impl Interval {
    /// Waits for the next tick and returns the instant it was scheduled for
    /// (which is never after the moment it returns).
    ///
    /// Cancel-safe: a `tick` future dropped before it completes (say, the
    /// losing branch of a `select`) consumes no tick.
    pub async fn tick(&mut self) -> Instant {
        std::future::poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// The polling form of [`tick`](Self::tick), for hand-written futures.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        ready!(Pin::new(&mut self.sleep).poll(cx));
        let scheduled = self.sleep.deadline();
        let next = next_tick_after(scheduled, self.period, Instant::now());
        self.sleep.reset(next);
        Poll::Ready(scheduled)
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// Restarts the grid: the next tick comes one period from now.
    pub fn reset(&mut self) {
        self.sleep.reset(deadline_after(self.period));
    }
}

/// The tick after the one scheduled at `scheduled`, skipping the grid
/// points that are already in the past at `now`.
fn next_tick_after(scheduled: Instant, period: Duration, now: Instant) -> Instant {
    let period_nanos = period.as_nanos();
    // Whole periods from `scheduled` to the first grid point at or after
    // `now`, and at least the next one.
    let ahead = now
        .saturating_duration_since(scheduled)
        .as_nanos()
        .div_ceil(period_nanos)
        .max(1);
    let offset = ahead * period_nanos;
    let offset = Duration::new(
        u64::try_from(offset / 1_000_000_000).unwrap_or(u64::MAX),
        (offset % 1_000_000_000) as u32,
    );
    scheduled
        .checked_add(offset)
        .unwrap_or_else(|| now + FAR_FUTURE)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::task::{Wake, Waker};

    struct NoopWake;

    impl Wake for NoopWake {
        fn wake(self: Arc<Self>) {}
    }

    #[test]
    fn dropping_a_registered_sleep_frees_its_entry_and_waker() {
        let queue = Arc::new(TimerQueue::new(Box::new(|| {})));
        let wake = Arc::new(NoopWake);
        let waker = Waker::from(Arc::clone(&wake));
        let mut cx = Context::from_waker(&waker);
        let mut sleep = Sleep::with_queue(Instant::now() + FAR_FUTURE, Arc::clone(&queue));

        assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());
        assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());
        assert_eq!(queue.len(), 1, "re-polling reuses the entry");
        drop(waker);
        assert_eq!(Arc::strong_count(&wake), 2, "the queue holds the waker");

        drop(sleep);
        assert_eq!(queue.len(), 0);
        assert_eq!(Arc::strong_count(&wake), 1, "the waker was freed");
    }

    #[test]
    fn resetting_a_sleep_moves_its_entry() {
        let queue = Arc::new(TimerQueue::new(Box::new(|| {})));
        let waker = Waker::from(Arc::new(NoopWake));
        let mut cx = Context::from_waker(&waker);
        let mut sleep = Sleep::with_queue(Instant::now() + FAR_FUTURE, Arc::clone(&queue));
        assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());

        sleep.reset(Instant::now());
        assert_eq!(queue.len(), 0);
        assert!(Pin::new(&mut sleep).poll(&mut cx).is_ready());
        assert_eq!(queue.len(), 0);
    }

    #[test]
    fn a_late_tick_skips_to_the_next_grid_point() {
        let start = Instant::now();
        let period = Duration::from_millis(10);
        let at = |millis| start + Duration::from_millis(millis);
        assert_eq!(next_tick_after(start, period, at(3)), at(10), "on time");
        assert_eq!(next_tick_after(start, period, at(10)), at(10), "just due");
        assert_eq!(
            next_tick_after(start, period, at(12)),
            at(20),
            "the 10 ms point passed"
        );
        assert_eq!(next_tick_after(start, period, at(35)), at(40), "two missed");
        assert_eq!(
            next_tick_after(start, period, at(40)),
            at(40),
            "a grid point due now is not in the past, as the 10 ms one above"
        );
        assert_eq!(
            next_tick_after(start, period, at(41)),
            at(50),
            "grid point passed"
        );
    }

    #[test]
    fn a_deadline_past_the_end_of_time_saturates() {
        let deadline = deadline_after(Duration::MAX);
        assert!(deadline >= Instant::now() + FAR_FUTURE - Duration::from_secs(1));
    }
}
