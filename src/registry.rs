//! The executor's list of parked tasks, kept so that shutdown can drop them.
//!
//! A task that is queued is reachable from a queue, and a task that is
//! running will return to its worker; only a task parked on a waker held
//! elsewhere (a channel, a timer, another task's future) is out of the
//! executor's reach. To drop such tasks on shutdown, a task registers a clone
//! of its waker the first time it returns `Pending`, and deregisters when its
//! future is dropped. Tasks that finish in their first poll (most small
//! tasks) never touch the registry.
//!
//! The registry is sharded per worker (the shard of the worker that first
//! parked the task; a task first parked on a `block_on` thread, where the
//! simple scheduler runs tasks, goes to a shard picked by that thread),
//! each shard a mutex-protected slab, so registration takes an uncontended
//! lock; there is no global lock on the spawn or completion path. On
//! shutdown, [`Registry::close`] takes every waker; waking them schedules
//! the tasks, and the closed executor drops their runnables, which drops
//! their futures.

use std::task::Waker;

use slab::Slab;

use crate::context;
use crate::executor::Shared;
use crate::sync::{lock, Mutex};
use std::sync::Arc;

/// Aligns a shard to its own cache lines, so that workers registering in
/// their own shards do not contend on one line.
#[repr(align(128))]
struct Padded<T>(T);

struct Shard {
    closed: bool,
    wakers: Slab<Waker>,
}

/// Sharded registry of parked tasks' wakers.
pub(crate) struct Registry {
    shards: Box<[Padded<Mutex<Shard>>]>,
}

impl Registry {
    pub(crate) fn new(shards: usize) -> Registry {
        let shards = (0..shards.max(1))
            .map(|_| {
                Padded(Mutex::new(Shard {
                    closed: false,
                    wakers: Slab::new(),
                }))
            })
            .collect();
        Registry { shards }
    }

    /// The shard a thread that is not a worker registers in: any shard is
    /// correct; keying it by thread spreads such threads over the shards.
    fn shard_of_this_thread(&self) -> usize {
        (context::thread_key() % self.shards.len() as u64) as usize
    }

    fn insert(&self, shard: usize, waker: &Waker) -> Option<usize> {
        let mut shard = lock(&self.shards[shard].0);
        (!shard.closed).then(|| shard.wakers.insert(waker.clone()))
    }

    fn remove(&self, shard: usize, key: usize) {
        let mut shard = lock(&self.shards[shard].0);
        if !shard.closed {
            shard.wakers.try_remove(key);
        }
    }

    /// Closes every shard and returns all registered wakers.
    pub(crate) fn close(&self) -> Vec<Waker> {
        let mut all = Vec::new();
        for shard in self.shards.iter() {
            let mut shard = lock(&shard.0);
            shard.closed = true;
            all.extend(shard.wakers.drain());
        }
        all
    }

    /// Parked tasks currently registered.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(&s.0).wakers.len()).sum()
    }
}

/// Where a parked task's waker sits in the registry: its shard, and its key
/// in that shard's slab.
///
/// Six bytes aligned to two, so that a task keeps it in the bytes its
/// stage's tag leaves free (`task::Stage`) and the executor's reference
/// beside it is the only word registering costs a task. Valid only while
/// the task holds that reference: [`register`] hands both out, and the task
/// gives the slot back to [`Registry::deregister`] of that executor.
#[derive(Clone, Copy, Default)]
#[repr(C, packed(2))]
pub(crate) struct Slot {
    key: u32,
    shard: u16,
}

/// Registers the waker of the task being polled on this thread: a worker's
/// (in the worker's shard), or a `block_on` thread's, where the simple
/// scheduler runs tasks too (in a shard picked by the thread). Returns the
/// executor whose registry now holds the waker, and where; `None` where no
/// executor is current and after shutdown.
pub(crate) fn register(waker: &Waker) -> Option<(Arc<Shared>, Slot)> {
    context::with_executor(|shared, worker| {
        let shared = shared?;
        let shard = match worker {
            Some(worker) => worker.index(),
            None => shared.registry().shard_of_this_thread(),
        };
        let key = shared.registry().insert(shard, waker)?;
        let slot = Slot {
            // Fits: an executor has at most 65,535 workers, hence shards.
            shard: u16::try_from(shard).expect("at most 65,535 registry shards"),
            // Slab keys past u32 would mean four billion parked tasks.
            key: u32::try_from(key).expect("fewer than 2^32 parked tasks per shard"),
        };
        Some((shared.clone(), slot))
    })
}

impl Registry {
    /// Removes the waker that [`register`] put at `slot` in this registry.
    pub(crate) fn deregister(&self, slot: Slot) {
        self.remove(usize::from(slot.shard), slot.key as usize);
    }
}
