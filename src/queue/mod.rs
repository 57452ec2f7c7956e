//! Run queues: each worker's bounded local queue and its overflow target.
//!
//! The local queue is a fixed-capacity ring with one producer (its worker) and
//! any number of thieves. [`Local`] is the owner's handle: it pushes at the tail
//! and pops at the head. [`Steal`] is the thieves' handle: it takes half of the
//! queue at once, from the head. When the ring is full, the owner moves half of
//! it to an [`Overflow`] target (the executor's overflow queue of batches).
//! [`Posting`] is the same ring owned by the first thread outside the
//! executor that posts work to it. A ring made by [`solo`] has no thieves
//! (its [`Steal`] handle only reports the length), and its owner pops
//! without a CAS: a lone worker's ring. [`LifoSlot`] holds the one task a
//! worker runs next; [`LifoSteal`] lets an idle worker take it while its
//! owner is stuck in a long poll.

mod local;
mod posting;
mod slot;
#[cfg(all(test, not(loom)))]
mod tests;

pub use local::{local, solo, Local, Overflow, Steal, CAPACITY};
pub use posting::Posting;
pub use slot::{LifoSlot, LifoSteal};
