//! Which [`TimerQueue`] a timer registers in, and who fires it.
//!
//! Every executor owns a timer queue. A timer registers, on its first poll,
//! in the queue of the executor the polling thread belongs to: its worker's,
//! or the one whose `block_on` runs there; on any other thread, the global
//! executor's.
//!
//! No thread polls for timers. Three things fire them:
//!
//! * the **timer holder**, one parked worker at a time, which sleeps with
//!   the nearest deadline as its park timeout and is unparked when an
//!   earlier deadline is inserted (see `Worker::park`); the role moves to
//!   whichever worker parks next (a holder woken for the future of a
//!   `block_on` running on it, which may return it to a long poll, wakes a
//!   sleeper to take the role);
//! * **busy workers**, which check the nearest deadline every 61 ticks
//!   (`GLOBAL_INTERVAL`), so timers fire even when no worker is idle, late
//!   by up to that many polls (the public docs in `time/mod.rs` say so);
//! * a **`block_on` on a non-worker thread**, which sleeps no longer than
//!   the nearest deadline and fires what is due when it wakes; it also
//!   keeps a queue per thread for timers whose executor has shut down
//!   (`block_on::fallback_timers`).

use std::sync::Arc;

use super::queue::TimerQueue;

/// The timer queue that timers created on this thread register in.
///
/// # Panics
///
/// When the global executor is needed and cannot start (see
/// [`spawn`](crate::spawn)).
pub(crate) fn current_queue() -> Arc<TimerQueue> {
    crate::executor::with_current(|shared| shared.timers().clone())
}
