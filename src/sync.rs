//! The one loom shim.
//!
//! Every module that touches shared memory imports its atomics, locks, cells and
//! threads from here. Under `--cfg loom` they are loom's model-checked types; in
//! a normal build they are std's. [`UnsafeCell`] follows loom's closure-based
//! API (`with`, `with_mut`) in both builds so the code that uses it is written
//! once, the way concurrent-queue's `sync.rs` does it. [`OnceLock`] is std's
//! in a normal build and, under loom, a stand-in built from loom's parts (loom
//! has none, and cannot see into std's); [`thread_local!`] is loom's under loom,
//! whose threads share one OS thread.

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering},
    Arc, Condvar, Mutex, MutexGuard,
};

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering},
    Arc, Condvar, Mutex, MutexGuard,
};

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// Lets other threads run, for a short wait on another thread's progress.
#[cfg(loom)]
pub(crate) use loom::thread::yield_now;
#[cfg(not(loom))]
pub(crate) use std::thread::yield_now;

#[cfg(not(loom))]
pub(crate) use std::sync::OnceLock;

#[cfg(loom)]
pub(crate) use once::OnceLock;

#[cfg(not(loom))]
pub(crate) use std::thread_local;

/// loom's `thread_local!`, taking std's `const { .. }` initialiser too (as a
/// plain one: loom's macro does not parse it).
#[cfg(loom)]
macro_rules! loom_thread_local {
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $init:expr };) => {
        loom::thread_local!($(#[$attr])* $vis static $name: $t = $init;);
    };
    ($($rest:tt)*) => {
        loom::thread_local!($($rest)*);
    };
}

#[cfg(loom)]
pub(crate) use loom_thread_local as thread_local;

/// `std::cell::UnsafeCell` behind loom's access API.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// Gives `f` a shared raw pointer to the contents.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Gives `f` an exclusive raw pointer to the contents.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Locks a mutex, ignoring poisoning: every critical section in this crate
/// leaves its data consistent before it can panic, so a poisoned lock holds
/// valid data.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// `std::sync::OnceLock`, as far as the crate uses it (`new`, `get`, `set`),
/// from loom's atomics, mutex and cell, so that the models see every access.
#[cfg(loom)]
mod once {
    use super::Ordering::{Acquire, Relaxed, Release};
    use super::{lock, AtomicBool, Mutex, UnsafeCell};

    /// A cell written at most once, then read without a lock.
    pub(crate) struct OnceLock<T> {
        /// Serialises setters: as with std's, a `set` that loses returns only
        /// once the winner's value is readable.
        setting: Mutex<()>,
        /// Whether `value` holds the value: written once, by the winning
        /// setter, after the value.
        set: AtomicBool,
        value: UnsafeCell<Option<T>>,
    }

    impl<T> OnceLock<T> {
        pub(crate) fn new() -> Self {
            OnceLock {
                setting: Mutex::new(()),
                set: AtomicBool::new(false),
                value: UnsafeCell::new(None),
            }
        }

        /// The value, if it has been set.
        pub(crate) fn get(&self) -> Option<&T> {
            // Acquire, pairing with the Release store in `set`: the value
            // written before that store is visible after this load.
            if !self.set.load(Acquire) {
                return None;
            }
            // SAFETY: `set` is true, so the value was written before the
            // Release store this load synchronised with, and it is never
            // written again (a later `set` finds `set` true under the lock
            // and returns): from here on there are only shared reads, for
            // as long as `&self` lives.
            self.value.with(|value| unsafe { (*value).as_ref() })
        }

        /// Stores `value` unless a value was stored already, in which case
        /// it is handed back.
        pub(crate) fn set(&self, value: T) -> Result<(), T> {
            let _setting = lock(&self.setting);
            // Relaxed: an earlier setter stored `true` before unlocking, and
            // the lock orders that store before this load.
            if self.set.load(Relaxed) {
                return Err(value);
            }
            // SAFETY: setters are serialised by the lock, and no reader
            // touches the cell before it sees `set` true, stored below: this
            // is the only access to the cell at this time.
            self.value.with_mut(|slot| unsafe { *slot = Some(value) });
            // Release, pairing with the Acquire load in `get`: a reader that
            // sees `true` sees the value.
            self.set.store(true, Release);
            Ok(())
        }
    }

    // SAFETY: as for std's `OnceLock`: sharing one hands out `&T` to other
    // threads (so `T: Sync`) and lets another thread move a `T` in, to be
    // dropped by whichever thread drops the cell (so `T: Send`).
    unsafe impl<T: Send + Sync> Sync for OnceLock<T> {}
    // SAFETY: moving the cell moves the `T` it holds (so `T: Send`); the
    // mutex and the atomic are `Send`.
    unsafe impl<T: Send> Send for OnceLock<T> {}
}
