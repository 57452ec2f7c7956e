//! A worker's LIFO slot: the one task it runs next, which an idle worker
//! may take from it while its owner is stuck in a long poll.
//!
//! # Protocol
//!
//! The slot is one `AtomicPtr`: null when empty, else an item turned into a
//! pointer ([`Pointer`]). Only the owner makes it non-null; a thief only
//! ever makes a non-null slot null. So:
//!
//! * **put** (owner): a load first. Null means the slot stays empty until
//!   the owner writes it, so a `Release` store of the item suffices;
//!   otherwise a swap, which gives back whatever is still there (null if a
//!   thief took it meanwhile).
//! * **take** (owner): a load first, so an empty slot costs no
//!   read-modify-write; otherwise a swap with null, which only one of owner
//!   and thieves wins. In a slot without thieves ([`solo`](LifoSlot::new),
//!   a lone worker's) a load and a plain store.
//! * **steal** (thief): the same as take, always with the swap.
//!
//! An item moves from the owner's `Release` store or swap that put it to
//! the `Acquire` swap of the thief that takes it; the owner takes back only
//! what it put itself, so its own take needs no ordering. Each item is
//! taken once: every take is a swap that returns it and leaves null, and
//! swaps on one atomic are totally ordered. `loom-tests/tests/lifo.rs`
//! checks this (with the store-if-empty checked as a swap: see
//! [`store_into_empty`]).
//!
//! # Cost
//!
//! The owner pays one read-modify-write per item it takes (a worker's ring
//! pop, a CAS, costs the same), none when it puts into an empty slot, and
//! none at all without thieves.

use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use crate::sync::{
    Arc, AtomicPtr,
    Ordering::{Acquire, Relaxed, Release},
};

/// An owned item that can travel as one pointer and come back.
///
/// # Safety
///
/// `from_ptr(into_ptr(x))` must give back `x`, and a pointer from
/// `into_ptr` must stay valid until it is turned back, whichever thread
/// does so (the item is `Send`).
pub unsafe trait Pointer: Send + Sized {
    /// Gives up the item for a pointer.
    fn into_ptr(self) -> NonNull<()>;

    /// Turns a pointer back into the item.
    ///
    /// # Safety
    ///
    /// `ptr` must come from [`into_ptr`](Self::into_ptr) and be turned
    /// back at most once.
    unsafe fn from_ptr(ptr: NonNull<()>) -> Self;
}

// SAFETY: `Runnable::into_raw` and `from_raw` are inverses, and the task's
// allocation lives while the runnable (here, its pointer) does.
unsafe impl<M: Send + Sync> Pointer for async_task::Runnable<M> {
    fn into_ptr(self) -> NonNull<()> {
        self.into_raw()
    }

    unsafe fn from_ptr(ptr: NonNull<()>) -> Self {
        // SAFETY: the caller passes a pointer from `into_raw`, once.
        unsafe { async_task::Runnable::from_raw(ptr) }
    }
}

// SAFETY: `Box::into_raw` and `from_raw` are inverses; the allocation lives
// until the box is rebuilt.
unsafe impl<U: Send> Pointer for Box<U> {
    fn into_ptr(self) -> NonNull<()> {
        NonNull::from(Box::leak(self)).cast()
    }

    unsafe fn from_ptr(ptr: NonNull<()>) -> Self {
        // SAFETY: the caller passes a pointer from `into_ptr` (a leaked
        // box of `U`), once.
        unsafe { Box::from_raw(ptr.cast::<U>().as_ptr()) }
    }
}

struct Shared<T: Pointer> {
    item: AtomicPtr<()>,
    /// Holds a `T` only as a pointer, which any thread may take out
    /// atomically: `Send` and `Sync` whatever `T` is (always `Send`).
    _holds: PhantomData<fn() -> T>,
}

impl<T: Pointer> Drop for Shared<T> {
    fn drop(&mut self) {
        let item = self.item.swap(ptr::null_mut(), Relaxed);
        // SAFETY: a non-null slot holds an item no one has taken; with the
        // last handle gone, no one else can.
        drop(unsafe { item_from::<T>(item) });
    }
}

/// Turns a slot's pointer back into its item, if there is one.
///
/// # Safety
///
/// `item` is null or a pointer from `T::into_ptr` that the caller took out
/// of the slot (and so owns).
unsafe fn item_from<T: Pointer>(item: *mut ()) -> Option<T> {
    // SAFETY: the caller's contract.
    NonNull::new(item).map(|item| unsafe { T::from_ptr(item) })
}

/// Fills an empty slot (one only its owner fills, read as empty by it).
#[cfg(not(loom))]
#[inline(always)]
fn store_into_empty(slot: &AtomicPtr<()>, item: *mut ()) {
    slot.store(item, Release);
}

/// Under loom, a swap that checks the slot was empty: loom can show a plain
/// store racing another thread's swap histories the memory model forbids
/// (tokio-rs/loom#254), and the swap checks the very invariant the store
/// relies on.
#[cfg(loom)]
fn store_into_empty(slot: &AtomicPtr<()>, item: *mut ()) {
    let previous = slot.swap(item, Release);
    assert!(
        previous.is_null(),
        "a slot its owner read as empty was filled"
    );
}

/// The owner's handle: puts and takes. Lives with its worker (not `Sync`:
/// put's store-if-empty relies on a single putter).
pub struct LifoSlot<T: Pointer> {
    shared: Arc<Shared<T>>,
    /// No thieves: takes need no swap.
    solo: bool,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

/// A thief's handle.
pub struct LifoSteal<T: Pointer>(Arc<Shared<T>>);

impl<T: Pointer> LifoSlot<T> {
    /// An empty slot and its thieves' handle. With `solo`, the caller
    /// promises that the thieves' handle is never used to steal (a lone
    /// worker's slot).
    pub fn new(solo: bool) -> (LifoSlot<T>, LifoSteal<T>) {
        let shared = Arc::new(Shared {
            item: AtomicPtr::new(ptr::null_mut()),
            _holds: PhantomData,
        });
        let steal = LifoSteal(Arc::clone(&shared));
        let slot = LifoSlot {
            shared,
            solo,
            _not_sync: PhantomData,
        };
        (slot, steal)
    }

    /// Puts `item` in the slot; gives back the item it held, if any.
    #[inline]
    pub fn put(&self, item: T) -> Option<T> {
        let item = item.into_ptr().as_ptr();
        let slot = &self.shared.item;
        if slot.load(Relaxed).is_null() {
            // Release: pairs with a thief's Acquire swap (module docs).
            // Null stays null until this owner writes it.
            store_into_empty(slot, item);
            return None;
        }
        // Release: as above. The item given back is one this owner put.
        let previous = slot.swap(item, Release);
        // SAFETY: the swap took it out of the slot, so this thread owns it.
        unsafe { item_from(previous) }
    }

    /// Takes the item in the slot, if any.
    #[inline]
    pub fn take(&self) -> Option<T> {
        let slot = &self.shared.item;
        let item = slot.load(Relaxed);
        if item.is_null() {
            return None;
        }
        let item = if self.solo {
            // No thief: no one else writes the slot.
            slot.store(ptr::null_mut(), Relaxed);
            item
        } else {
            // Relaxed: the item, if still there, is one this owner put;
            // the swap only decides who gets it.
            slot.swap(ptr::null_mut(), Relaxed)
        };
        // SAFETY: taken out of the slot (by the swap, or alone), so owned.
        unsafe { item_from(item) }
    }

    /// Whether the slot holds an item. Only the owner fills it, so a
    /// thief can only make this stale towards empty.
    #[inline]
    pub fn is_occupied(&self) -> bool {
        !self.shared.item.load(Relaxed).is_null()
    }
}

impl<T: Pointer> LifoSteal<T> {
    /// Takes the item in the slot, if any.
    pub fn steal(&self) -> Option<T> {
        let slot = &self.0.item;
        if slot.load(Relaxed).is_null() {
            return None;
        }
        // Acquire: pairs with the owner's Release store or swap that put
        // the item.
        let item = slot.swap(ptr::null_mut(), Acquire);
        // SAFETY: the swap took it out of the slot, so this thread owns it.
        unsafe { item_from(item) }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::LifoSlot;

    #[test]
    fn put_gives_back_the_previous_item_and_take_empties() {
        let (slot, steal) = LifoSlot::<Box<u32>>::new(false);
        assert!(slot.put(Box::new(1)).is_none());
        assert_eq!(slot.put(Box::new(2)).map(|b| *b), Some(1));
        assert!(slot.is_occupied());
        assert_eq!(steal.steal().map(|b| *b), Some(2));
        assert!(slot.take().is_none() && steal.steal().is_none());
        assert!(slot.put(Box::new(3)).is_none());
        assert_eq!(slot.take().map(|b| *b), Some(3));
        assert!(!slot.is_occupied());
    }

    #[test]
    fn a_solo_slot_puts_and_takes() {
        let (slot, _steal) = LifoSlot::<Box<u32>>::new(true);
        assert!(slot.put(Box::new(4)).is_none());
        assert_eq!(slot.take().map(|b| *b), Some(4));
        assert!(slot.take().is_none());
    }

    #[test]
    fn an_item_left_in_the_slot_is_dropped_with_it() {
        let item = std::sync::Arc::new(());
        let (slot, steal) = LifoSlot::<Box<std::sync::Arc<()>>>::new(false);
        assert!(slot.put(Box::new(item.clone())).is_none());
        drop(slot);
        assert_eq!(
            std::sync::Arc::strong_count(&item),
            2,
            "the thief's handle keeps it"
        );
        drop(steal);
        assert_eq!(std::sync::Arc::strong_count(&item), 1);
    }
}
