//! The ring of the one thread outside the executor that posts to it first.
//!
//! Work from outside the executor goes to its injector, a queue any number
//! of threads push to: every push and every pop there is a locked
//! read-modify-write on lines that the other side writes too (the queue's
//! tail, the slot's state), and every 31 tasks a block allocated by the
//! poster is freed by a worker. A program that feeds its executor from
//! outside nearly always does so from one thread (a main loop, an acceptor),
//! so that thread gets a ring of its own instead: the same single-producer
//! ring a worker owns ([`Local`]), where a push is a slot write and a
//! `Release` store of `tail`, and a worker takes half of it with one claim
//! ([`Steal::steal_batch_into`]), oldest first.
//!
//! The first thread that posts claims the ring, by its
//! [`thread_key`](crate::context::thread_key), for the life of the
//! executor; every other thread posts to the injector as before. The owner
//! never does (but after shutdown): a full ring sends its older half to the
//! executor's overflow queue. Keys are never reused, so only the
//! claiming thread ever reaches the owner's handle: that is the whole of
//! the `Sync` argument below. (If the owner exits, workers take what it
//! left in the ring, which then stays empty, and outside work goes through
//! the injector.)
//!
//! Where the work goes, and why order and wake-ups hold, is the executor's
//! business (`executor.rs`, `worker.rs`): a push here is followed by the
//! same wake-up check as a push to the injector, and workers look here
//! wherever they look at the injector.

use super::{local, Local, Overflow, Steal};
use crate::sync::{AtomicU64, Ordering::Relaxed};

/// A ring owned by the first outside thread that posts.
pub struct Posting<T> {
    /// The owner's thread key, or 0 before the first post.
    owner: AtomicU64,
    /// Pushed and popped only by the owner (the thread whose key is in
    /// `owner`).
    local: Local<T>,
    steal: Steal<T>,
}

impl<T> Posting<T> {
    /// An empty ring that no thread owns yet.
    pub fn new() -> Self {
        let (local, steal) = local();
        Posting {
            owner: AtomicU64::new(0),
            local,
            steal,
        }
    }

    /// Whether the thread with key `key` (never 0) owns the ring, claiming
    /// it if no thread does.
    #[inline]
    fn owned_by(&self, key: u64) -> bool {
        // Relaxed: `owner` is written once, from 0 to a key; only the
        // thread with that key can read it back equal to its own key (a
        // stale 0 only sends it to the CAS, which then fails), and nothing
        // else is published through it.
        let owner = self.owner.load(Relaxed);
        owner == key
            || (owner == 0
                && self
                    .owner
                    .compare_exchange(0, key, Relaxed, Relaxed)
                    .is_ok())
    }

    /// Pushes `item` if the thread with key `key` owns the ring (or claims
    /// it now); otherwise gives it back. A full ring sends its older half
    /// to `overflow` first, so what this ring sent there is always older
    /// than what it holds ([`Local::push_back_in_order`]).
    #[inline]
    pub fn try_push(&self, key: u64, item: T, overflow: &impl Overflow<T>) -> Result<(), T> {
        if !self.owned_by(key) {
            return Err(item);
        }
        self.local.push_back_in_order(item, overflow);
        Ok(())
    }

    /// Pushes every item of `items`, oldest first, if the thread with key
    /// `key` owns the ring (or claims it now), publishing each run that
    /// fits with one store ([`Local::push_many_in_order`]), and returns
    /// `true`; otherwise leaves `items` as it was and returns `false`.
    pub fn try_push_many(&self, key: u64, items: &mut Vec<T>, overflow: &impl Overflow<T>) -> bool {
        if !self.owned_by(key) {
            return false;
        }
        self.local.push_many_in_order(items.drain(..), overflow);
        true
    }

    /// Pops every item as the owner (an owner that finds its executor shut
    /// down after a push takes back what it pushed). Does nothing for any
    /// other thread.
    pub fn drain_as(&self, key: u64, mut each: impl FnMut(T)) {
        if !self.owned_by(key) {
            return;
        }
        while let Some(item) = self.local.pop() {
            each(item);
        }
    }

    /// The thieves' handle: workers take half of the ring at a time.
    pub fn stealer(&self) -> &Steal<T> {
        &self.steal
    }

    /// The number of items in the ring (a racy hint).
    pub fn len(&self) -> usize {
        self.steal.len()
    }
}

impl<T> Default for Posting<T> {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: the only non-`Sync` part is `local`, the owner's handle, and it is
// used only by the thread whose key won the CAS in `owned_by`: keys are
// unique for the life of the process, so no two threads ever both pass that
// check. Items cross threads through the ring as in a worker's, hence
// `T: Send`.
unsafe impl<T: Send> Sync for Posting<T> {}
