//! Wakers of tasks waiting for a condition that a notifier makes true, once
//! or repeatedly: [`WaitList`], behind `TaskGroup::wait` (the group is
//! empty) and `CancellationToken::cancelled` (the token is cancelled).
//!
//! A waker may be anyone's (a future polled by hand or by another runtime),
//! and its `wake` or drop may run any code, such as polling, dropping or
//! creating a waiter of the same list. So the list wakes and drops wakers
//! only after releasing its lock, and a panic in a `wake` does not keep the
//! wakers after it from being woken: it is re-raised once all are.
//!
//! # Protocol
//!
//! A waiter registers its waker, then checks the condition; a notifier makes
//! the condition true, then calls [`WaitList::wake_all`]. Registering stores
//! the number of registered wakers (under the lock) and then issues a
//! `SeqCst` fence; `wake_all` issues a `SeqCst` fence, then reads that
//! number. One of the two fences comes first in their total order, so either
//! the waiter's check sees the condition or the notifier sees the waker (the
//! store-buffering shape, fenced on both sides). A notifier that sees no
//! waker takes no lock. One that does takes every waker out under the lock
//! and bumps the list's generation: a waiter's [`Slot`] remembers the
//! generation it registered in, so a slot whose waker was taken is never
//! mistaken for a newer waiter's at the same index.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::task::{Context, Poll, Waker};

use slab::Slab;

use crate::sync::{fence, lock, AtomicUsize, Mutex, Ordering};
use crate::task::Panic;

/// The wakers of the tasks waiting for one condition.
pub(crate) struct WaitList {
    /// How many wakers `list` holds, written under its lock and read
    /// without it by [`wake_all`](Self::wake_all).
    registered: AtomicUsize,
    list: Mutex<List>,
}

#[derive(Default)]
struct List {
    wakers: Slab<Waker>,
    /// Bumped by each `wake_all` that takes the wakers.
    generation: u64,
}

/// A waiter's place in a [`WaitList`]: its index there and the generation
/// it registered in, if it registered.
#[derive(Debug, Default)]
pub(crate) struct Slot(Option<(usize, u64)>);

impl WaitList {
    /// An empty list.
    pub(crate) fn new() -> Self {
        WaitList {
            registered: AtomicUsize::new(0),
            list: Mutex::new(List::default()),
        }
    }

    /// Makes `waker` the one the next [`wake_all`](Self::wake_all) wakes
    /// for this waiter: registers it, or replaces the waker `slot` holds if
    /// that one was not taken since. The caller checks its condition after
    /// this returns (see the module docs).
    pub(crate) fn register(&self, slot: &mut Slot, waker: &Waker) {
        let replaced = {
            let mut list = lock(&self.list);
            let generation = list.generation;
            match slot.0 {
                Some((key, registered_in)) if registered_in == generation => {
                    let stored = &mut list.wakers[key];
                    (!stored.will_wake(waker)).then(|| std::mem::replace(stored, waker.clone()))
                }
                _ => {
                    slot.0 = Some((list.wakers.insert(waker.clone()), generation));
                    // Relaxed: the fence below orders it (module docs).
                    self.registered.store(list.wakers.len(), Ordering::Relaxed);
                    None
                }
            }
        };
        // After unlocking: the old waker's drop may use this list.
        drop(replaced);
        // SeqCst: pairs with the fence in `wake_all` (module docs). It must
        // order the count's store before the caller's later read of the
        // condition, which no Acquire/Release/AcqRel fence does.
        fence(Ordering::SeqCst);
    }

    /// A waiter's poll: ready once `done()` holds; otherwise registers the
    /// waker of `cx` and checks `done()` again after the registration (see
    /// the module docs), pending if it still does not hold.
    pub(crate) fn poll_until(
        &self,
        slot: &mut Slot,
        cx: &Context<'_>,
        done: impl Fn() -> bool,
    ) -> Poll<()> {
        if !done() {
            self.register(slot, cx.waker());
            if !done() {
                return Poll::Pending;
            }
        }
        self.unregister(slot);
        Poll::Ready(())
    }

    /// Removes the waker of `slot`, unless a `wake_all` took it already.
    pub(crate) fn unregister(&self, slot: &mut Slot) {
        let Some((key, registered_in)) = slot.0.take() else {
            return;
        };
        let removed = {
            let mut list = lock(&self.list);
            if list.generation != registered_in {
                return;
            }
            let removed = list.wakers.try_remove(key);
            // Relaxed: a smaller count only lets a notifier skip the lock
            // when no one waits.
            self.registered.store(list.wakers.len(), Ordering::Relaxed);
            removed
        };
        // After unlocking, as in `register`.
        drop(removed);
    }

    /// Wakes every registered waker; called after the condition was made
    /// true. A panic in a `wake` is kept in `panic` (if it is the first)
    /// while the others are woken; the caller re-raises it.
    pub(crate) fn wake_all(&self, panic: &mut FirstPanic) {
        // SeqCst: pairs with the fence in `register` (module docs). It must
        // order the caller's write of the condition before this read of the
        // count, which no Acquire/Release/AcqRel fence does.
        fence(Ordering::SeqCst);
        // Relaxed: the fences order it (module docs).
        if self.registered.load(Ordering::Relaxed) == 0 {
            return;
        }
        let wakers = {
            let mut list = lock(&self.list);
            list.generation = list.generation.wrapping_add(1);
            // Relaxed: written under the lock, as in `register`.
            self.registered.store(0, Ordering::Relaxed);
            std::mem::take(&mut list.wakers)
        };
        for (_, waker) in wakers {
            panic.catch(move || waker.wake());
        }
    }
}

/// The first panic of several pieces of user code that must all run (the
/// wakes of a notification), for the caller to re-raise after the last.
#[derive(Default)]
pub(crate) struct FirstPanic(Option<Panic>);

impl FirstPanic {
    /// Runs `f`, keeping its panic if it is the first; a later one's
    /// payload is dropped (its own `Drop` under `catch_unwind`).
    pub(crate) fn catch(&mut self, f: impl FnOnce()) {
        if let Err(panic) = catch_unwind(AssertUnwindSafe(f)) {
            match self.0 {
                None => self.0 = Some(panic),
                Some(_) => crate::task::drop_panic(panic),
            }
        }
    }

    /// Drops the panic kept, if any (the panic hook reported it when it
    /// happened), for a caller that is the executor rather than user code:
    /// re-raised there, it would unwind through the executor's bookkeeping.
    pub(crate) fn discard(self) {
        if let Some(panic) = self.0 {
            crate::task::drop_panic(panic);
        }
    }

    /// Re-raises the panic kept, if any.
    pub(crate) fn resume(self) {
        if let Some(panic) = self.0 {
            resume_unwind(panic);
        }
    }
}
