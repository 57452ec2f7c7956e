//! The one loom shim.
//!
//! Every module that touches shared memory imports its atomics, locks, cells and
//! threads from here. Under `--cfg loom` they are loom's model-checked types; in
//! a normal build they are std's. [`UnsafeCell`] follows loom's closure-based
//! API (`with`, `with_mut`) in both builds so the code that uses it is written
//! once, the way concurrent-queue's `sync.rs` does it.

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering},
    Arc, Condvar, Mutex, MutexGuard,
};

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering},
    Arc, Condvar, Mutex, MutexGuard,
};

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

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
