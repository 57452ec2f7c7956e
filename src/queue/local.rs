//! The bounded single-producer, multi-consumer ring behind every worker.
//!
//! # Protocol
//!
//! The ring has `CAPACITY` slots and two positions, both free-running `u32`
//! counters reduced modulo `CAPACITY` to index a slot:
//!
//! * `tail`, written only by the owner: the next slot to push into.
//! * `head`, one `AtomicU64` packing two counters, `steal` in the high half and
//!   `real` in the low half. `real` is the next slot to pop. `steal` trails
//!   `real` while a thief is copying slots out: the slots in `steal..real` are
//!   claimed by that thief but not yet copied, so the owner may not overwrite
//!   them. When no thief is active, `steal == real`.
//!
//! Operations:
//!
//! * **push** (owner): if `tail - steal < CAPACITY`, write the slot at `tail`
//!   and publish it with a `Release` store of `tail + 1`. Otherwise the ring is
//!   full: if no thief is active the owner claims the older half by moving both
//!   counters forward with one CAS, hands that half to the overflow target and
//!   pushes the new item into the room it made; if a thief is active, only the
//!   new item goes there (the thief is about to free half the ring anyway).
//!   The half is moved out of its slots before the target is called, so
//!   the target may run anything that pushes to the ring (a destructor that
//!   spawns) into the slots the ring already counts free. Such a push moves
//!   the tail, so the push that overflowed reads it again.
//! * **push many** (owner): if `tail + n - steal <= CAPACITY`, write the `n`
//!   slots from `tail` on and publish them all with one `Release` store of
//!   `tail + n`; otherwise push them one by one. The in-order variant
//!   instead fills the room there is, publishes it with one store, and
//!   overflows the older half as the in-order push does, until all are in.
//! * **pop** (owner): CAS `real` forward by one (and `steal` with it when they
//!   were equal), then read the slot. The CAS races only with thieves.
//!   In a ring without thieves ([`solo`], below) a load and a plain store.
//! * **steal half** (thief): CAS `real` forward by half of `tail - real`,
//!   leaving `steal` behind, which marks the thief active; copy the claimed
//!   slots into the thief's own ring; then CAS `steal` up to `real` to release
//!   the slots. A second thief that sees `steal != real` backs off.
//!
//! Every slot moves from the owner's write, through the `Release` store of
//! `tail`, to the `Acquire` load of `tail` by whoever pops or steals it; and
//! from a thief's copy, through its `AcqRel` CAS that releases the slots, to
//! the owner's `Acquire` load of `head` before it writes into a freed slot.
//! Each claim is a successful CAS on `head`, and CAS successes on one atomic
//! are totally ordered, so no slot is ever claimed twice: every pushed item is
//! popped, stolen or overflowed exactly once (the loom models in `loom-tests/`
//! check this conservation).
//!
//! # A ring without thieves
//!
//! [`solo`] makes a ring whose [`Steal`] handle never steals: its steals
//! find nothing (it still reports the length). Only the owner then ever
//! writes `head` (its pops and its overflow), so `steal == real` always
//! and the owner's pop needs no CAS: a `Relaxed` load of `head`, the
//! check against `tail`, a `Relaxed` store of `real + 1`. No other thread
//! claims a slot, so the owner's sequential order alone keeps every claim
//! unique. The mode is fixed when the ring is made, in a field beside
//! `head`, so a pop branches once on a field that never changes.
//! The executor makes its worker's ring this way when it has one worker
//! (no other worker exists to steal from it; `executor.rs`).

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use crate::sync::{Arc, AtomicU32, AtomicU64, Ordering::*, UnsafeCell};

/// Slots in one worker's ring. Small under loom, so that models reach the
/// overflow path in a few steps.
#[cfg(not(loom))]
pub const CAPACITY: usize = 256;
/// Slots in one worker's ring. Small under loom, so that models reach the
/// overflow path in a few steps.
#[cfg(loom)]
pub const CAPACITY: usize = 4;

const MASK: u32 = CAPACITY as u32 - 1;
const HALF: u32 = CAPACITY as u32 / 2;

/// Where a full ring sends its older half.
pub trait Overflow<T> {
    /// Takes a batch, oldest first: the older half of a full ring, or an item
    /// that did not fit while a thief was copying out the other half. The
    /// ring has moved every item of the batch out of its slots before the
    /// call, so what the target runs (an item's destructor that spawns, say)
    /// may push to that ring.
    fn push_batch(&self, batch: impl Iterator<Item = T>);
}

struct Inner<T> {
    /// `steal` in the high 32 bits, `real` in the low 32 bits.
    head: AtomicU64,
    /// Made by [`solo`]: thieves' steals find nothing, so only the owner
    /// writes `head`. Fixed before the handles exist.
    solo: bool,
    tail: AtomicU32,
    /// An array, not a slice: a position reduced by `MASK` then needs no
    /// bounds check.
    slots: Box<[UnsafeCell<MaybeUninit<T>>; CAPACITY]>,
}

/// The owner's handle: push and pop. Not `Sync` and not `Clone`, so exactly
/// one thread at a time can push, which is what the protocol relies on.
pub struct Local<T> {
    inner: Arc<Inner<T>>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

/// A thief's handle: steal half into another ring.
pub struct Steal<T>(Arc<Inner<T>>);

/// Creates an empty ring and its two handles.
pub fn local<T>() -> (Local<T>, Steal<T>) {
    ring(false)
}

/// Creates an empty ring whose [`Steal`] handle never takes anything (it
/// reports the length, and its steals find nothing), so that the owner's
/// pop needs no CAS (module docs, "A ring without thieves"). For a worker
/// that no other worker can steal from.
pub fn solo<T>() -> (Local<T>, Steal<T>) {
    ring(true)
}

fn ring<T>(solo: bool) -> (Local<T>, Steal<T>) {
    let slots: Box<[_]> = (0..CAPACITY)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let Ok(slots) = slots.try_into() else {
        unreachable!("CAPACITY slots were collected")
    };
    let inner = Arc::new(Inner {
        head: AtomicU64::new(0),
        solo,
        tail: AtomicU32::new(0),
        slots,
    });
    let local = Local {
        inner: inner.clone(),
        _not_sync: PhantomData,
    };
    (local, Steal(inner))
}

fn pack(steal: u32, real: u32) -> u64 {
    (u64::from(steal) << 32) | u64::from(real)
}

fn unpack(head: u64) -> (u32, u32) {
    ((head >> 32) as u32, head as u32)
}

impl<T> Inner<T> {
    /// Moves the item out of a slot.
    ///
    /// # Safety
    ///
    /// The caller has claimed `pos` through a successful CAS on `head` (or
    /// owns it as the tail of its own ring), and the slot holds an item
    /// published by a `Release` store of `tail` that the caller acquired.
    unsafe fn take(&self, pos: u32) -> T {
        self.slots[(pos & MASK) as usize].with(|slot| {
            // SAFETY: the caller's claim gives it the only access to this slot,
            // and the slot was initialised by the push the caller acquired.
            unsafe { slot.read().assume_init() }
        })
    }

    /// Moves an item into a slot.
    ///
    /// # Safety
    ///
    /// Only the ring's owner writes, and only at `pos` with
    /// `pos - steal < CAPACITY` for a `steal` it acquired, so no one reads the
    /// slot until the owner publishes it: a thief that claimed the slot moved
    /// `steal` past it only once it had copied it, and the owner's own pops
    /// and overflows read a slot they claimed before its next push (an
    /// overflow moves its whole half out before it calls the target).
    unsafe fn put(&self, pos: u32, item: T) {
        self.slots[(pos & MASK) as usize].with_mut(|slot| {
            // SAFETY: the slot is free (caller's contract), so writing does not
            // overwrite a live item and no reader can observe the write early.
            unsafe { slot.write(MaybeUninit::new(item)) }
        })
    }

    /// `tail - head`. The owner's reading never wraps: its `tail` is the
    /// newest, and no `head` passes it.
    fn len(&self) -> u32 {
        // Relaxed: a length is a hint for victim choice, batch sizing and the
        // parking worker's last look; the operations that move items re-read
        // with proper ordering.
        let (_, real) = unpack(self.head.load(Relaxed));
        self.tail.load(Relaxed).wrapping_sub(real)
    }
}

// Under loom these handles are exported to the models (`crate::__loom`), where
// clippy asks for an `is_empty` beside `len`; nothing here needs one.
#[cfg_attr(loom, allow(clippy::len_without_is_empty))]
impl<T> Local<T> {
    /// The number of items in the ring (exact for the owner, up to concurrent
    /// steals).
    pub fn len(&self) -> usize {
        self.inner.len() as usize
    }

    /// Room left, as the owner sees it: slots claimed by an active thief are
    /// not free yet.
    pub fn remaining(&self) -> usize {
        // Acquire: pairs with the thief's AcqRel CAS that releases its slots.
        let (steal, _) = unpack(self.inner.head.load(Acquire));
        CAPACITY - self.tail_unsync().wrapping_sub(steal) as usize
    }

    fn tail_unsync(&self) -> u32 {
        // Relaxed: only the owner stores `tail`, and this is the owner.
        self.inner.tail.load(Relaxed)
    }

    /// Writes `item` at `tail` (the owner's) and publishes it, if the ring
    /// has room as of `steal`, read with `Acquire` by the caller; gives `item`
    /// back if it has none.
    #[inline(always)]
    fn put_if_room(&self, tail: u32, steal: u32, item: T) -> Result<(), T> {
        if tail.wrapping_sub(steal) >= CAPACITY as u32 {
            return Err(item);
        }
        // SAFETY: `tail - steal < CAPACITY`, so the slot at `tail` is not
        // claimed by anyone nor holds an item not read yet (`put`), and only
        // the owner writes.
        unsafe { self.inner.put(tail, item) };
        // Release: publishes the slot to the Acquire loads of `tail` in `pop`
        // and the steals.
        self.inner.tail.store(tail.wrapping_add(1), Release);
        Ok(())
    }

    /// Pushes at the tail; when the ring is full, first moves its older half
    /// to `overflow`. While a thief is copying out half of a full ring,
    /// `item` goes to `overflow` alone (ahead of older items still in the
    /// ring; see [`push_back_in_order`](Self::push_back_in_order)).
    pub fn push_back(&self, item: T, overflow: &impl Overflow<T>) {
        let tail = self.tail_unsync();
        // Acquire: pairs with the thief's AcqRel CAS that releases the slots
        // it copied, before we write into them again.
        let (steal, _) = unpack(self.inner.head.load(Acquire));
        if let Err(item) = self.put_if_room(tail, steal, item) {
            self.push_loop::<false>(tail, item, overflow);
        }
    }

    /// Pushes at the tail, keeping the ring's order across an overflow:
    /// when the ring is full, its older half goes to `overflow` and `item`
    /// into the freed room, so everything in `overflow` from this ring is
    /// older than everything still in it (for a ring whose order is a
    /// promise: the outside poster's, `posting.rs`). Unlike
    /// [`push_back`](Self::push_back), it waits for a thief that is copying
    /// out half the ring to finish.
    pub fn push_back_in_order(&self, item: T, overflow: &impl Overflow<T>) {
        self.push_loop::<true>(self.tail_unsync(), item, overflow);
    }

    /// The loop of both pushes; with `IN_ORDER`, it waits for a thief
    /// rather than send `item` to `overflow` alone. Out of line for
    /// [`push_back`](Self::push_back), which calls it only for a ring that
    /// looked full (the common push stays a few instructions with no loop).
    #[inline(never)]
    fn push_loop<const IN_ORDER: bool>(
        &self,
        mut tail: u32,
        mut item: T,
        overflow: &impl Overflow<T>,
    ) {
        loop {
            // Acquire: pairs with the thief's AcqRel CAS that releases the
            // slots it copied, before we write into them again.
            let (steal, real) = unpack(self.inner.head.load(Acquire));
            item = match self.put_if_room(tail, steal, item) {
                Ok(()) => return,
                Err(item) => item,
            };
            if steal != real {
                // A thief is copying out half the ring right now; it
                // releases the slots when done.
                if IN_ORDER {
                    crate::sync::yield_now();
                    continue;
                }
                overflow.push_batch(std::iter::once(item));
                return;
            }
            // Full and no thief: send the older half on, then retry (a
            // thief that moved `head` first makes the claim fail; the next
            // look finds room or tries again).
            self.overflow_half(real, overflow);
            // The overflow target may have pushed here meanwhile (a closed
            // queue drops the half, and a destructor may spawn): the tail
            // read before is stale.
            tail = self.tail_unsync();
        }
    }

    /// Claims the older half of a full ring and sends it to the overflow
    /// target; does nothing if a thief moved `head` since it was read.
    // Out of line: its batch (half a ring of items, on the stack) would
    // otherwise widen the frame of every push that may overflow, and the
    // in-order pushes always go through `push_loop`.
    #[inline(never)]
    fn overflow_half(&self, real: u32, overflow: &impl Overflow<T>) {
        let claimed_to = real.wrapping_add(HALF);
        let expected = pack(real, real);
        // AcqRel: Acquire pairs with a thief's release of slots it copied;
        // Release is not needed by anyone reading these slots (we read them
        // ourselves) but keeps every head CAS uniform.
        if self
            .inner
            .head
            .compare_exchange(expected, pack(claimed_to, claimed_to), AcqRel, Relaxed)
            .is_err()
        {
            return;
        }
        let inner: &Inner<T> = &self.inner;
        // Every slot is read before the target runs anything: what it runs
        // may push to this ring, into the slots the CAS freed.
        let batch: [T; HALF as usize] = std::array::from_fn(|i| {
            // SAFETY: the CAS above claimed `real..real + HALF` for the owner
            // and moved `real` past them, so no pop, steal or overflow of the
            // ring claims them again; those slots were pushed by this thread,
            // which pushes nothing into them until this has read them all.
            unsafe { inner.take(real.wrapping_add(i as u32)) }
        });
        overflow.push_batch(batch.into_iter());
    }

    /// Pushes every item of `items` at the tail, oldest first, and publishes
    /// them with one store when they all fit; otherwise pushes them one by
    /// one (overflowing as [`push_back`](Local::push_back) does).
    pub fn push_many<I>(&self, items: I, overflow: &impl Overflow<T>)
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut items = items.into_iter();
        let tail = self.tail_unsync();
        // Acquire: pairs with the thief's AcqRel CAS that releases the slots
        // it copied, before we write into them again.
        let (steal, _) = unpack(self.inner.head.load(Acquire));
        let used = tail.wrapping_sub(steal) as usize;
        let n = items.len();
        if n <= CAPACITY - used {
            let mut pos = tail;
            // `take`: a length that lied can never write past the room.
            for item in items.by_ref().take(n) {
                // SAFETY: `pos - steal < used + n <= CAPACITY`, so the slot
                // is not claimed by anyone nor holds an item not read yet
                // (`put`), and only the owner writes.
                unsafe { self.inner.put(pos, item) };
                pos = pos.wrapping_add(1);
            }
            // Release: publishes the slots to the Acquire loads of `tail` in
            // `pop` and `steal_into`.
            self.inner.tail.store(pos, Release);
        }
        for item in items {
            self.push_back(item, overflow);
        }
    }

    /// Pushes every item of `items` at the tail, oldest first, keeping the
    /// ring's order across overflows as
    /// [`push_back_in_order`](Self::push_back_in_order) does: the items that
    /// fit are written and published with one `Release` store of `tail`;
    /// when the ring is full its older half goes to `overflow` (after a
    /// thief copying out half of it is done), and the next items go into
    /// the freed room, published again with one store. For the outside
    /// poster's batches (`posting.rs`). Stops early if `items` yields fewer
    /// items than its length said.
    pub fn push_many_in_order<I>(&self, items: I, overflow: &impl Overflow<T>)
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut items = items.into_iter();
        let mut tail = self.tail_unsync();
        while items.len() > 0 {
            // Acquire: pairs with the thief's AcqRel CAS that releases the
            // slots it copied, before we write into them again.
            let (steal, real) = unpack(self.inner.head.load(Acquire));
            let room = CAPACITY - tail.wrapping_sub(steal) as usize;
            if room > 0 {
                let n = room.min(items.len());
                let start = tail;
                for item in items.by_ref().take(n) {
                    // SAFETY: `tail - steal < CAPACITY` for every slot
                    // written here (at most `room` of them), so no one has
                    // claimed it nor left an item in it not read yet
                    // (`put`), and only the owner writes.
                    unsafe { self.inner.put(tail, item) };
                    tail = tail.wrapping_add(1);
                }
                // Release: publishes the slots to the Acquire loads of
                // `tail` in `pop` and the steals.
                self.inner.tail.store(tail, Release);
                if tail.wrapping_sub(start) as usize != n {
                    return; // the iterator's length was too large
                }
            } else if steal != real {
                // A thief is copying out half the ring; it releases the
                // slots when done (as in `push_loop`).
                crate::sync::yield_now();
            } else {
                // Full and no thief: send the older half on (a thief that
                // moved `head` first makes the claim fail; the next look
                // finds room or tries again).
                self.overflow_half(real, overflow);
                // Pushes the overflow target made here meanwhile moved the
                // tail (as in `push_loop`).
                tail = self.tail_unsync();
            }
        }
    }

    /// Pops the oldest item.
    #[inline]
    pub fn pop(&self) -> Option<T> {
        // `solo` sits beside `head`, which either pop reads next.
        if self.inner.solo {
            return self.pop_solo();
        }
        self.pop_shared()
    }

    /// [`pop`](Self::pop) in a ring without thieves: no CAS (module docs,
    /// "A ring without thieves").
    #[inline(always)]
    fn pop_solo(&self) -> Option<T> {
        // Relaxed: in a solo ring only the owner (this thread) writes `head`;
        // no thief's claim or release exists to acquire.
        let (_, real) = unpack(self.inner.head.load(Relaxed));
        if real == self.tail_unsync() {
            return None;
        }
        let next = real.wrapping_add(1);
        // Relaxed: nobody else acts on `head` in a solo ring; `len` readers
        // take it as a hint. `steal == real` always holds here, since only
        // a thief ever lets them differ.
        self.inner.head.store(pack(next, next), Relaxed);
        // SAFETY: `real` is below `tail`, so the owner pushed it; no thief
        // can claim a slot of a solo ring (its steals return before touching
        // `head`), and the owner moved `real` past this slot above, so no
        // later pop or overflow of the owner's reads it again.
        Some(unsafe { self.inner.take(real) })
    }

    /// [`pop`](Self::pop) in a ring that thieves may steal from.
    #[inline]
    fn pop_shared(&self) -> Option<T> {
        // Acquire: pairs with a thief's CAS, so a claim it made is seen.
        let mut head = self.inner.head.load(Acquire);
        let pos = loop {
            let (steal, real) = unpack(head);
            if real == self.tail_unsync() {
                return None;
            }
            let next_real = real.wrapping_add(1);
            let next = if steal == real {
                pack(next_real, next_real)
            } else {
                pack(steal, next_real)
            };
            // AcqRel: the CAS orders our claim against thieves' claims on
            // `head`; Acquire on failure re-reads their claim.
            match self
                .inner
                .head
                .compare_exchange(head, next, AcqRel, Acquire)
            {
                Ok(_) => break real,
                Err(actual) => head = actual,
            }
        };
        // SAFETY: the CAS claimed `pos`, and the owner itself pushed it.
        Some(unsafe { self.inner.take(pos) })
    }
}

impl<T> Drop for Local<T> {
    fn drop(&mut self) {
        // Items left in the ring are owned by nobody else: drop them here
        // rather than leaking them with the slots.
        while self.pop().is_some() {}
    }
}

#[cfg_attr(loom, allow(clippy::len_without_is_empty))]
impl<T> Steal<T> {
    /// The number of items in the victim's ring (a racy hint, at most
    /// [`CAPACITY`]).
    pub fn len(&self) -> usize {
        // A thief's two loads may pair a `head` with a `tail` older than it
        // (weak memory; x86 keeps them in order), and the difference wraps.
        // Read as a full ring, not an empty one: a worker about to park must
        // look again rather than miss work. (The owner's own `tail` is never
        // older than a `head` it reads, so `Local::len` needs no bound.)
        (self.0.len() as usize).min(CAPACITY)
    }

    /// Steals half of the victim's items (rounded up) into `dst`, returning
    /// one of them to run at once and how many it took, that one included.
    /// `dst` must have room for half a ring. (The count cannot be read off
    /// `dst` afterwards: once published there, the stolen items may be
    /// stolen again before the thief looks.)
    pub fn steal_into(&self, dst: &Local<T>) -> Option<(T, usize)> {
        if dst.remaining() < HALF as usize {
            return None;
        }
        let dst_tail = dst.tail_unsync();
        let n = self.steal_into_ring(dst, dst_tail, HALF);
        if n == 0 {
            return None;
        }
        let last = dst_tail.wrapping_add(n - 1);
        // SAFETY: `last` was written by `steal_into_ring` into the thief's own
        // ring and is not yet published, so only this thread can see it.
        let item = unsafe { dst.inner.take(last) };
        if n > 1 {
            // Release: publishes the copied slots to whoever pops or steals
            // from `dst` (their Acquire loads of `tail`).
            dst.inner.tail.store(last, Release);
        }
        Some((item, n as usize))
    }

    /// Steals half of the victim's items (rounded up) into the back of
    /// `dst`, oldest first, and returns how many; fewer (the oldest) if
    /// `dst` has less room than that, none if it has none. Unlike [`steal_into`](Self::steal_into),
    /// which hands back the newest of them to run at once, this keeps the
    /// victim's order: the caller pops them from its own ring (the outside
    /// poster's ring, whose order is a promise; `posting.rs`).
    pub fn steal_batch_into(&self, dst: &Local<T>) -> usize {
        // At most `HALF`: the ring holds no more than `CAPACITY` items.
        let room = dst.remaining().min(HALF as usize) as u32;
        if room == 0 {
            return 0;
        }
        let dst_tail = dst.tail_unsync();
        let n = self.steal_into_ring(dst, dst_tail, room);
        if n > 0 {
            // Release: publishes the copied slots to whoever pops or steals
            // from `dst` (their Acquire loads of `tail`).
            dst.inner.tail.store(dst_tail.wrapping_add(n), Release);
        }
        n as usize
    }

    /// Claims, copies and releases up to half the victim's items, and no
    /// more than `room`, which `dst` must have free (at most `HALF`).
    /// Returns how many were copied into `dst` starting at `dst_tail` (not
    /// yet published).
    fn steal_into_ring(&self, dst: &Local<T>, dst_tail: u32, room: u32) -> u32 {
        let src = &*self.0;
        if src.solo {
            // Nothing is ever stolen from a solo ring: its owner pops
            // without a CAS (module docs, "A ring without thieves").
            return 0;
        }
        // Acquire: pairs with other CASes on `head`.
        let mut head = src.head.load(Acquire);
        let (first, n, claimed) = loop {
            let (steal, real) = unpack(head);
            if steal != real {
                return 0; // another thief is active
            }
            // Acquire: pairs with the owner's Release store of `tail`, making
            // the slots below it readable.
            let tail = src.tail.load(Acquire);
            let available = tail.wrapping_sub(real);
            let n = (available - available / 2).min(room);
            if n == 0 || available > CAPACITY as u32 {
                return 0; // empty, or a stale snapshot: try elsewhere
            }
            let claimed = pack(steal, real.wrapping_add(n));
            // AcqRel: orders this claim against the owner's pops and other
            // thieves; Acquire on failure re-reads their progress.
            match src.head.compare_exchange(head, claimed, AcqRel, Acquire) {
                Ok(_) => break (real, n, claimed),
                Err(actual) => head = actual,
            }
        };
        for i in 0..n {
            // SAFETY: the CAS claimed `first..first + n`; the owner published
            // them before the `tail` we acquired.
            let item = unsafe { src.take(first.wrapping_add(i)) };
            // SAFETY: `dst` is the caller's own ring with at least `room`
            // free slots (checked by the callers), and `n <= room`.
            unsafe { dst.inner.put(dst_tail.wrapping_add(i), item) };
        }
        self.release_claim(claimed);
        n
    }

    /// Moves `steal` up to `real`, handing the copied slots back to the owner.
    fn release_claim(&self, mut head: u64) {
        loop {
            let (_, real) = unpack(head);
            // AcqRel: Release pairs with the owner's Acquire load of `head`
            // in `push_back`, ordering our slot reads before its next writes.
            match self
                .0
                .head
                .compare_exchange(head, pack(real, real), AcqRel, Acquire)
            {
                Ok(_) => return,
                // The owner popped meanwhile (moving `real` only); retry.
                Err(actual) => head = actual,
            }
        }
    }
}

impl<T> Clone for Steal<T> {
    fn clone(&self) -> Self {
        Steal(self.0.clone())
    }
}

impl<T> fmt::Debug for Local<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Local").field("len", &self.len()).finish()
    }
}

impl<T> fmt::Debug for Steal<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Steal").field("len", &self.len()).finish()
    }
}

// SAFETY: items move between threads through the ring, so `T: Send` is
// required and sufficient; the slots are only accessed under the claim
// protocol above.
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: shared access to `Inner` is mediated by the atomics; no `&T` is ever
// handed out, so `T: Sync` is not needed.
unsafe impl<T: Send> Sync for Inner<T> {}
