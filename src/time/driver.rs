//! Which [`TimerQueue`] a timer registers in, and who fires it.
//!
//! # Integration seam
//!
//! [`current_queue`] is the only function the rest of `time` calls to find a
//! queue. Until the executor owns one, it returns a process-wide fallback
//! queue driven by a dedicated thread ([`drive_fallback`]) that parks until
//! [`TimerQueue::next_deadline`] and is woken early by the queue's
//! `on_earlier` hook. The executor replaces the body of [`current_queue`]
//! with "the queue of the executor this thread runs for" (its idle workers
//! park with the next deadline as timeout), keeping the fallback only for
//! threads that belong to no executor, or dropping it.
//!
//! This module uses `std`'s locks directly, not `crate::sync`: the driver
//! needs a timed wait, which loom does not model, and no loom model runs it.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use super::queue::TimerQueue;

/// The timer queue that timers created on this thread register in.
///
/// # Panics
///
/// On its first call in the process, if the fallback driver thread cannot be
/// spawned.
pub(crate) fn current_queue() -> Arc<TimerQueue> {
    static FALLBACK: OnceLock<Arc<TimerQueue>> = OnceLock::new();
    FALLBACK.get_or_init(start_fallback_driver).clone()
}

/// Creates the fallback queue and the thread that fires its timers.
fn start_fallback_driver() -> Arc<TimerQueue> {
    let wakeup = Arc::new(Wakeup::default());
    let hook = Arc::clone(&wakeup);
    let queue = Arc::new(TimerQueue::new(Box::new(move || hook.notify())));
    let driven = Arc::clone(&queue);
    std::thread::Builder::new()
        .name("fastexec-timer".into())
        .spawn(move || drive_fallback(&driven, &wakeup))
        .expect("fastexec: cannot spawn the timer thread");
    queue
}

/// Fires due timers, then parks until the next deadline or until an insert
/// moves the deadline earlier; runs for the life of the process.
fn drive_fallback(queue: &TimerQueue, wakeup: &Wakeup) {
    loop {
        queue.fire_expired(Instant::now());
        wakeup.wait_until(queue.next_deadline());
    }
}

/// A flag plus condvar that the `on_earlier` hook uses to wake the driver.
#[derive(Default)]
struct Wakeup {
    notified: Mutex<bool>,
    condvar: Condvar,
}

impl Wakeup {
    fn notify(&self) {
        *self.lock() = true;
        self.condvar.notify_one();
    }

    /// Returns at `deadline` (`None`: no deadline), when notified, or
    /// spuriously; consumes a notification. A notification sent after the
    /// caller read `deadline` is kept by the flag, so it is never missed.
    fn wait_until(&self, deadline: Option<Instant>) {
        let mut notified = self.lock();
        if !*notified {
            notified = match deadline {
                None => self
                    .condvar
                    .wait(notified)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let timeout = deadline.saturating_duration_since(Instant::now());
                    self.condvar
                        .wait_timeout(notified, timeout)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
        *notified = false;
    }

    fn lock(&self) -> MutexGuard<'_, bool> {
        self.notified.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
