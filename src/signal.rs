//! [`Notify`]: wake one task or all of them, with a stored permit.
//!
//! A `notify_one` with nobody waiting stores a permit (at most one), so a
//! notification sent before the wait is not lost; the next
//! [`Notify::notified`] consumes it at once. Combined with a deadline
//! ([`Notify::notified_until`]) it is a task signal with a timeout: the
//! waiter is told whether the signal or the deadline came first, a signal
//! that raced with the deadline is kept for the next wait, and nothing is
//! woken once the waiter is gone.
//!
//! # Protocol
//!
//! `state` is `EMPTY`, `PERMIT` or `WAITING`; the mutex guards a FIFO list
//! of registered waiters, and `state` is `WAITING` exactly when the list is
//! non-empty. The two common cases are lock-free:
//! storing a permit when nobody waits (`EMPTY`/`PERMIT` → `PERMIT`) and
//! consuming a stored one (`PERMIT` → `EMPTY`). Entering and leaving
//! `WAITING` happens only under the lock, so a thread that holds the lock
//! and sees a state other than `WAITING` can only race with those two
//! lock-free moves, both of which keep the list empty.
//!
//! A waiter chosen by `notify_one` is unlinked and marked, but its slot
//! stays in the slab until the waiter itself completes or is dropped; a
//! waiter dropped while marked hands the notification to the next waiter,
//! or back to the permit. Its waker is dropped with it, never woken later.
//! A waker is woken or dropped only after the lock is released: one the
//! executor did not make may run code that uses this `Notify` again.
//!
//! `notify_all` reaches every [`Notified`] created before it, polled or
//! not, through a generation counter: a `Notified` keeps the count it saw
//! when it was made, and `notify_all` bumps the count under the lock before
//! it marks the registered waiters. A waiter checks the count before a
//! permit and again under the lock when it registers, so it either sees the
//! bump or is in the list the `notify_all` marks. The snapshot is a plain
//! load: a `notify_all` that happens after `notified()` comes later in the
//! counter's modification order, so its bump is a change the waiter sees.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use slab::Slab;

use crate::sync::{lock, AtomicUsize, Mutex, Ordering};
use crate::time::{timeout_at, Timeout};
use crate::waiters::FirstPanic;

/// No permit, no waiter.
const EMPTY: usize = 0;
/// One stored permit, no waiter.
const PERMIT: usize = 1;
/// At least one registered waiter (and so no permit).
const WAITING: usize = 2;

/// Wakes tasks that wait for an event: one at a time with a stored permit,
/// or all at once.
///
/// ```
/// use std::sync::Arc;
/// use fastexec::signal::Notify;
///
/// let notify = Arc::new(Notify::new());
/// let sender = Arc::clone(&notify);
/// std::thread::spawn(move || sender.notify_one());
/// // Whether the notification comes before or after this wait starts,
/// // the wait completes.
/// fastexec::block_on(notify.notified());
/// ```
pub struct Notify {
    state: AtomicUsize,
    /// `notify_all` calls so far (wrapping), changed only under the lock.
    generation: AtomicUsize,
    waiters: Mutex<Waiters>,
}

impl Notify {
    /// A `Notify` without a permit or waiters.
    pub fn new() -> Self {
        Self {
            state: AtomicUsize::new(EMPTY),
            generation: AtomicUsize::new(0),
            waiters: Mutex::new(Waiters::default()),
        }
    }

    /// Wakes the longest-registered waiter, or, if none is registered,
    /// stores a permit for the next wait (a permit already stored stays the
    /// only one).
    ///
    /// Everything done before `notify_one` is visible to the waiter it
    /// completes.
    ///
    /// ```
    /// let notify = fastexec::signal::Notify::new();
    /// notify.notify_one();
    /// notify.notify_one();
    /// // One permit: the first wait completes at once, a second would wait.
    /// fastexec::block_on(notify.notified());
    /// ```
    pub fn notify_one(&self) {
        // Relaxed: only a hint for the first compare_exchange below.
        let mut current = self.state.load(Ordering::Relaxed);
        while current != WAITING {
            // Release: pairs with the Acquire compare_exchange in
            // `take_permit`, so the consumer of the permit sees what
            // preceded this call (also when a permit was already stored:
            // the read-modify-write joins the release sequence).
            match self.state.compare_exchange_weak(
                current,
                PERMIT,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
        let waker = self.notify_one_locked(&mut lock(&self.waiters));
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Wakes every waiter: each [`Notified`] made before this call, whether
    /// it has been polled yet or not. Stores no permit.
    ///
    /// If a waiter's waker panics when woken, the others are woken all the
    /// same, and then this call panics with that panic.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    ///
    /// let notify = fastexec::signal::Notify::new();
    /// let ready = AtomicBool::new(false);
    /// fastexec::block_on(async {
    ///     fastexec::join!(
    ///         async {
    ///             // Made before the check, so a notify_all between the
    ///             // check and the first poll is not missed.
    ///             let wait = notify.notified();
    ///             if !ready.load(Ordering::Acquire) {
    ///                 wait.await;
    ///             }
    ///         },
    ///         async {
    ///             ready.store(true, Ordering::Release);
    ///             notify.notify_all();
    ///         },
    ///     );
    /// });
    /// ```
    pub fn notify_all(&self) {
        let wakers = {
            let mut waiters = lock(&self.waiters);
            // Relaxed: read and written under the lock, apart from the
            // snapshot in `notified`, for which coherence suffices (see the
            // module docs).
            let generation = self.generation.load(Ordering::Relaxed);
            self.generation
                .store(generation.wrapping_add(1), Ordering::Relaxed);
            // Relaxed: WAITING is entered and left only under the lock.
            if self.state.load(Ordering::Relaxed) != WAITING {
                return;
            }
            let wakers = waiters.mark_all(Notification::All);
            // Relaxed: WAITING is left only under the lock, and this store
            // publishes no data (the lock does).
            self.state.store(EMPTY, Ordering::Relaxed);
            wakers
        };
        // Every waiter is woken even if a waker panics; the first panic is
        // re-raised after.
        let mut panic = FirstPanic::default();
        for waker in wakers {
            panic.catch(move || waker.wake());
        }
        panic.resume();
    }

    /// A future that completes when this waiter is notified, or at once by
    /// consuming a stored permit.
    ///
    /// A `notify_all` made after this call completes it even before its
    /// first poll; a `notify_one` reaches it once it has been polled (it
    /// registers then). Dropping it unregisters it; if a `notify_one` had
    /// already chosen it, the notification goes to the next waiter or back
    /// to the permit, so it is never lost.
    ///
    /// ```
    /// let notify = fastexec::signal::Notify::new();
    /// notify.notify_one();
    /// fastexec::block_on(notify.notified());
    /// ```
    pub fn notified(&self) -> Notified<'_> {
        Notified {
            notify: self,
            state: WaitState::Unregistered,
            // Relaxed: see the module docs (coherence orders this load
            // before any later notify_all's bump).
            generation: self.generation.load(Ordering::Relaxed),
        }
    }

    /// Waits for a notification until `deadline`: `Ok(())` if notified
    /// first, `Err(Elapsed)` if the deadline passed first.
    ///
    /// The notification is checked before the clock, so a notification that
    /// arrived by the time the waiter runs wins. If the deadline wins and a
    /// notification raced with it, the notification is not lost: dropping
    /// the future hands it to the next waiter or stores it as the permit.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use fastexec::signal::Notify;
    ///
    /// let notify = Notify::new();
    /// fastexec::block_on(async {
    ///     let deadline = Instant::now() + Duration::from_millis(2);
    ///     assert!(notify.notified_until(deadline).await.is_err());
    ///     notify.notify_one();
    ///     assert!(notify.notified_until(deadline).await.is_ok());
    /// });
    /// ```
    pub fn notified_until(&self, deadline: Instant) -> Timeout<Notified<'_>> {
        timeout_at(deadline, self.notified())
    }

    /// Consumes a stored permit; true if there was one.
    fn take_permit(&self) -> bool {
        // Acquire: pairs with the Release compare_exchange in `notify_one`
        // and the Release store in `notify_one_locked`.
        self.state
            .compare_exchange(PERMIT, EMPTY, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Marks the first waiter and returns its waker, or stores the permit.
    fn notify_one_locked(&self, waiters: &mut Waiters) -> Option<Waker> {
        match waiters.pop_front() {
            Some(index) => {
                if waiters.is_empty() {
                    // Relaxed: WAITING is left only under the lock.
                    self.state.store(EMPTY, Ordering::Relaxed);
                }
                waiters.mark(index, Notification::One)
            }
            None => {
                // The state is EMPTY or PERMIT and, under the lock, cannot
                // become WAITING: PERMIT is right in both cases. Release:
                // pairs with the Acquire compare_exchange in `take_permit`.
                self.state.store(PERMIT, Ordering::Release);
                None
            }
        }
    }

    /// Whether a `notify_all` came after the snapshot `generation`.
    fn notified_all_since(&self, generation: usize) -> bool {
        // Relaxed: see the module docs; under the lock (in `register`) the
        // load also sees every bump made before the lock was taken.
        self.generation.load(Ordering::Relaxed) != generation
    }

    /// Registers a waiter unless a `notify_all` came after `generation` or
    /// a permit can be taken; returns its slot.
    fn register(&self, waker: &Waker, generation: usize) -> Option<usize> {
        let mut waiters = lock(&self.waiters);
        if self.notified_all_since(generation) {
            return None;
        }
        // Relaxed: a hint for the compare_exchange; WAITING is stable
        // under the lock.
        let mut current = self.state.load(Ordering::Relaxed);
        loop {
            match current {
                PERMIT if self.take_permit() => return None,
                // Relaxed: entering WAITING publishes nothing; notifiers
                // that see it take the lock.
                EMPTY => match self.state.compare_exchange(
                    EMPTY,
                    WAITING,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break,
                    Err(actual) => current = actual,
                },
                WAITING => break,
                _ => current = self.state.load(Ordering::Relaxed),
            }
        }
        Some(waiters.push_back(waker.clone()))
    }

    /// Unregisters the waiter in `index`; returns a waker to wake if the
    /// waiter held a `notify_one` that had to be passed on, and the
    /// waiter's own waker if it still held one, for the caller to drop
    /// (both after unlocking: a foreign waker's drop may use this `Notify`).
    fn unregister(&self, index: usize) -> (Option<Waker>, Option<Waker>) {
        let mut waiters = lock(&self.waiters);
        let (notification, own) = waiters.remove(index);
        let next = match notification {
            Some(Notification::One) => self.notify_one_locked(&mut waiters),
            Some(Notification::All) => None,
            None => {
                if waiters.is_empty() {
                    // Relaxed: WAITING is left only under the lock.
                    self.state.store(EMPTY, Ordering::Relaxed);
                }
                None
            }
        };
        (next, own)
    }
}

impl Default for Notify {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a snapshot for display only.
        let state = match self.state.load(Ordering::Relaxed) {
            EMPTY => "empty",
            PERMIT => "permit",
            _ => "waiting",
        };
        f.debug_struct("Notify").field("state", &state).finish()
    }
}

/// The future of [`Notify::notified`].
#[must_use = "futures do nothing unless polled"]
pub struct Notified<'a> {
    notify: &'a Notify,
    state: WaitState,
    /// The `notify_all` count when this was made.
    generation: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitState {
    Unregistered,
    /// Registered in this slab slot.
    Registered(usize),
    Done,
}

impl Future for Notified<'_> {
    type Output = ();

    /// # Panics
    ///
    /// If polled again after it completed.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let done = match this.state {
            WaitState::Unregistered => {
                if this.notify.notified_all_since(this.generation) || this.notify.take_permit() {
                    true
                } else {
                    match this.notify.register(cx.waker(), this.generation) {
                        Some(index) => {
                            this.state = WaitState::Registered(index);
                            false
                        }
                        None => true,
                    }
                }
            }
            WaitState::Registered(index) => {
                let mut replaced = None;
                let done = lock(&this.notify.waiters).take_notification_or_update(
                    index,
                    cx.waker(),
                    &mut replaced,
                );
                // After unlocking: a foreign waker's drop may use this
                // `Notify`.
                drop(replaced);
                done
            }
            WaitState::Done => panic!("fastexec: Notified polled after completion"),
        };
        if done {
            this.state = WaitState::Done;
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        if let WaitState::Registered(index) = self.state {
            let (next, own) = self.notify.unregister(index);
            drop(own);
            if let Some(waker) = next {
                waker.wake();
            }
        }
    }
}

impl fmt::Debug for Notified<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notified")
            .field("state", &self.state)
            .finish()
    }
}

/// How a waiter was notified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Notification {
    /// By `notify_one`: passed on if the waiter leaves without consuming it.
    One,
    /// By `notify_all`.
    All,
}

/// End of a list.
const NIL: usize = usize::MAX;

/// A registered waiter.
struct Waiter {
    waker: Option<Waker>,
    /// Set (and the waiter unlinked) when notified.
    notification: Option<Notification>,
    prev: usize,
    next: usize,
}

/// The waiters, in registration order: a doubly linked list in a slab.
/// Notified waiters are unlinked but keep their slot until they leave.
struct Waiters {
    slab: Slab<Waiter>,
    head: usize,
    tail: usize,
}

impl Default for Waiters {
    fn default() -> Self {
        Self {
            slab: Slab::new(),
            head: NIL,
            tail: NIL,
        }
    }
}

impl Waiters {
    /// Whether no un-notified waiter is linked.
    fn is_empty(&self) -> bool {
        self.head == NIL
    }

    fn push_back(&mut self, waker: Waker) -> usize {
        let index = self.slab.insert(Waiter {
            waker: Some(waker),
            notification: None,
            prev: self.tail,
            next: NIL,
        });
        match self.tail {
            NIL => self.head = index,
            tail => self.slab[tail].next = index,
        }
        self.tail = index;
        index
    }

    fn pop_front(&mut self) -> Option<usize> {
        let index = self.head;
        if index == NIL {
            return None;
        }
        self.unlink(index);
        Some(index)
    }

    fn unlink(&mut self, index: usize) {
        let Waiter { prev, next, .. } = self.slab[index];
        match prev {
            NIL => self.head = next,
            prev => self.slab[prev].next = next,
        }
        match next {
            NIL => self.tail = prev,
            next => self.slab[next].prev = prev,
        }
    }

    /// Marks an unlinked waiter as notified and takes its waker.
    fn mark(&mut self, index: usize, notification: Notification) -> Option<Waker> {
        let waiter = &mut self.slab[index];
        waiter.notification = Some(notification);
        waiter.waker.take()
    }

    /// Unlinks and marks every linked waiter; returns their wakers.
    fn mark_all(&mut self, notification: Notification) -> Vec<Waker> {
        let mut wakers = Vec::new();
        while let Some(index) = self.pop_front() {
            wakers.extend(self.mark(index, notification));
        }
        wakers
    }

    /// Frees a waiter's slot, unlinking it if it was not notified; returns
    /// how it was notified, and its waker if it still held one (for the
    /// caller to drop after unlocking).
    fn remove(&mut self, index: usize) -> (Option<Notification>, Option<Waker>) {
        let notification = self.slab[index].notification;
        if notification.is_none() {
            self.unlink(index);
        }
        (notification, self.slab.remove(index).waker)
    }

    /// If the waiter was notified, frees its slot and returns true;
    /// otherwise makes `waker` the one to wake, putting the one it replaces
    /// in `replaced` (for the caller to drop after unlocking).
    fn take_notification_or_update(
        &mut self,
        index: usize,
        waker: &Waker,
        replaced: &mut Option<Waker>,
    ) -> bool {
        let waiter = &mut self.slab[index];
        if waiter.notification.is_some() {
            self.slab.remove(index);
            return true;
        }
        match &waiter.waker {
            Some(stored) if stored.will_wake(waker) => {}
            _ => *replaced = waiter.waker.replace(waker.clone()),
        }
        false
    }
}
