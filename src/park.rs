//! Putting one thread to sleep until another wakes it.
//!
//! A [`Parker`] belongs to one thread; its [`Unparker`] can be shared. The
//! state machine is the classic three-state one:
//!
//! ```text
//!   EMPTY --park--> PARKED --unpark--> NOTIFIED --(park returns)--> EMPTY
//!   EMPTY --unpark--> NOTIFIED --park (returns at once)--> EMPTY
//! ```
//!
//! An `unpark` before `park` is remembered as `NOTIFIED`, so a wake-up sent
//! between a thread's last check for work and its call to `park` is never lost.
//! Several `unpark`s collapse into one, which is all the executor needs: a
//! woken thread re-checks everything before it parks again.
//!
//! Workers park with a timeout in two roles (`worker.rs`): the timer holder
//! sleeps until the nearest timer deadline, and the watcher (`idle.rs`)
//! for at most the watch interval; either way it looks at every queue when
//! it wakes, as after an `unpark`.
//!
//! The sleeper blocks on a condition variable under a mutex; `unpark` takes
//! the same mutex (briefly, and only when the state was `PARKED`) before
//! signalling, so the signal cannot fall between the sleeper's check of the
//! state and its wait.

use std::time::Duration;

use crate::sync::{lock, Arc, AtomicUsize, Condvar, Mutex, Ordering::*};

const EMPTY: usize = 0;
const PARKED: usize = 1;
const NOTIFIED: usize = 2;

struct Inner {
    state: AtomicUsize,
    lock: Mutex<()>,
    cvar: Condvar,
}

/// The sleeping side; owned by one thread.
pub struct Parker {
    inner: Arc<Inner>,
}

/// The waking side; cheap to clone and share.
#[derive(Clone)]
pub struct Unparker {
    inner: Arc<Inner>,
}

impl Parker {
    /// A parker with no pending notification.
    pub fn new() -> Parker {
        Parker {
            inner: Arc::new(Inner {
                state: AtomicUsize::new(EMPTY),
                lock: Mutex::new(()),
                cvar: Condvar::new(),
            }),
        }
    }

    /// The handle that wakes this parker.
    pub fn unparker(&self) -> Unparker {
        Unparker {
            inner: self.inner.clone(),
        }
    }

    /// Blocks until [`Unparker::unpark`] is called, or returns at once if it
    /// was called since the last `park`.
    pub fn park(&self) {
        self.park_inner(None);
    }

    /// Like [`park`](Self::park), but returns after `timeout` at the latest.
    /// Returns whether a notification was consumed. (The timer driver's
    /// park; timeouts are not modelled under loom.)
    pub fn park_timeout(&self, timeout: Duration) -> bool {
        self.park_inner(Some(timeout))
    }

    fn park_inner(&self, timeout: Option<Duration>) -> bool {
        let inner = &*self.inner;
        // Acquire: pairs with the Release swap in `unpark`, so everything the
        // waker did before notifying is visible once we return.
        if inner
            .state
            .compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed)
            .is_ok()
        {
            return true;
        }
        let mut guard = lock(&inner.lock);
        // Acquire: as above, for a notification that arrived just now.
        if let Err(actual) = inner
            .state
            .compare_exchange(EMPTY, PARKED, Acquire, Acquire)
        {
            debug_assert_eq!(actual, NOTIFIED);
            // A swap, not a store: a second `unpark` may have landed since
            // the CAS read NOTIFIED, and reading its write is what makes
            // its Release (and what it published) visible to us. A plain
            // store would consume that notification without synchronizing
            // with it (loom found this).
            let _ = inner.state.swap(EMPTY, Acquire);
            return true;
        }
        loop {
            guard = match timeout {
                None => inner.cvar.wait(guard).unwrap_or_else(|e| e.into_inner()),
                Some(t) => wait_timeout(&inner.cvar, guard, t),
            };
            // Acquire: pairs with the Release swap in `unpark`.
            if inner
                .state
                .compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed)
                .is_ok()
            {
                return true;
            }
            if timeout.is_some() {
                // Timed out (or woke spuriously, which we treat alike): leave
                // PARKED unless a notification raced in.
                return inner.state.swap(EMPTY, Acquire) == NOTIFIED;
            }
        }
    }
}

/// Waits on `cvar` for at most `timeout`, ignoring poisoning (see
/// [`lock`]).
#[cfg(not(loom))]
pub(crate) fn wait_timeout<'a, T>(
    cvar: &Condvar,
    guard: crate::sync::MutexGuard<'a, T>,
    timeout: Duration,
) -> crate::sync::MutexGuard<'a, T> {
    match cvar.wait_timeout(guard, timeout) {
        Ok((guard, _)) => guard,
        Err(poisoned) => poisoned.into_inner().0,
    }
}

#[cfg(loom)]
pub(crate) fn wait_timeout<'a, T>(
    _: &Condvar,
    _: crate::sync::MutexGuard<'a, T>,
    _: Duration,
) -> crate::sync::MutexGuard<'a, T> {
    unreachable!("timeouts are not modelled under loom")
}

impl Default for Parker {
    fn default() -> Self {
        Self::new()
    }
}

impl Unparker {
    /// Wakes the parker, or makes its next `park` return at once.
    pub fn unpark(&self) {
        let inner = &*self.inner;
        // Release: pairs with the Acquire in `park`, publishing what we did
        // before waking the sleeper.
        if inner.state.swap(NOTIFIED, Release) == PARKED {
            // The sleeper holds the lock from its state check until it waits;
            // taking it here means it is already waiting when we signal.
            drop(lock(&inner.lock));
            inner.cvar.notify_one();
        }
    }
}
