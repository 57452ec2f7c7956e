//! Run queues: each worker's bounded local queue and its overflow target.
//!
//! The local queue is a fixed-capacity ring with one producer (its worker) and
//! any number of thieves. [`Local`] is the owner's handle: it pushes at the tail
//! and pops at the head. [`Steal`] is the thieves' handle: it takes half of the
//! queue at once, from the head. When the ring is full, the owner moves half of
//! it to an [`Overflow`] target (the executor's overflow queue of batches).

mod local;

pub use local::{local, Local, Overflow, Steal, CAPACITY};
