//! The executor's list of parked tasks, kept so that shutdown can drop them.
//!
//! A task that is queued is reachable from a queue, and a task that is
//! running will return to its worker; only a task parked on a waker held
//! elsewhere (a channel, a timer, another task's future) is out of the
//! executor's reach. To drop such tasks on shutdown, a task registers a clone
//! of its waker the first time it returns `Pending`, and deregisters when its
//! future is dropped. Tasks that finish in their first poll (most small
//! tasks) never touch the registry. A dependent spawned with
//! [`spawn_after`](crate::spawn_after) that waits for its dependencies is
//! out of reach too, held by its completion's node before its first poll:
//! it registers a waker that drops it from there ([`register_on`]), and
//! deregisters when its first poll starts it or its future is dropped.
//!
//! The registry is sharded per worker (the shard of the worker that first
//! parked the task; a task first parked on a `block_on` thread, where the
//! simple scheduler runs tasks, goes to a shard picked by that thread),
//! each shard a mutex-protected [`Pages`] of wakers, so registration takes an
//! uncontended lock; there is no global lock on the spawn or completion path.
//! On shutdown, [`Registry::close`] takes every waker; waking them schedules
//! the tasks, and the closed executor drops their runnables, which drops
//! their futures.
//!
//! A shard's wakers sit in fixed-size pages rather than one doubling vector,
//! so that the registry's memory follows the number of parked tasks within
//! a page or two per shard, whatever their split between the shards (with
//! one vector per shard, a million tasks split 524,289 to 475,711 cost a
//! doubling, 8 MB, more than an even split).

use std::task::Waker;

use slab::Slab;

use crate::context;
use crate::executor::Shared;
use crate::sync::{lock, Mutex};
use crate::worker::Worker;
use std::sync::Arc;

/// Aligns a shard to its own cache lines, so that workers registering in
/// their own shards do not contend on one line.
#[repr(align(128))]
struct Padded<T>(T);

struct Shard {
    closed: bool,
    wakers: Pages<Waker>,
    /// After [`Registry::close`]: the tasks that were registered then and
    /// whose futures have not been dropped yet (each drop deregisters once;
    /// a dependent's first poll does too).
    outstanding: usize,
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
                    wakers: Pages::new(),
                    outstanding: 0,
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

    fn insert(&self, shard: usize, waker: Waker) -> Option<u32> {
        let mut shard = lock(&self.shards[shard].0);
        if shard.closed {
            drop(shard);
            // Outside the lock: a waker's drop may release its task.
            drop(waker);
            return None;
        }
        Some(shard.wakers.insert(waker))
    }

    fn remove(&self, shard: usize, key: u32) {
        let waker = {
            let mut shard = lock(&self.shards[shard].0);
            if shard.closed {
                // Its waker was taken by `close`: only count the drop.
                shard.outstanding -= 1;
                return;
            }
            shard.wakers.remove(key)
        };
        // Dropped outside the lock: a waker's drop may release its task.
        drop(waker);
    }

    /// Closes every shard and returns all registered wakers; from then on
    /// [`outstanding`](Self::outstanding) counts the futures of those tasks
    /// not dropped yet.
    pub(crate) fn close(&self) -> Vec<Waker> {
        let mut all = Vec::new();
        for shard in self.shards.iter() {
            let mut shard = lock(&shard.0);
            shard.closed = true;
            shard.outstanding = shard.wakers.len();
            shard.wakers.drain_into(&mut all);
        }
        all
    }

    /// After [`close`](Self::close): how many of the tasks registered then
    /// still have their futures.
    pub(crate) fn outstanding(&self) -> usize {
        self.shards.iter().map(|s| lock(&s.0).outstanding).sum()
    }

    /// Parked tasks currently registered.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(&s.0).wakers.len()).sum()
    }
}

/// Where a parked task's waker sits in the registry: its shard, and its key
/// in that shard's [`Pages`].
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
        let slot = register_on(shared, worker, waker.clone())?;
        Some((shared.clone(), slot))
    })
}

/// Registers `waker` with `shared`'s registry: in `worker`'s shard (a
/// worker of `shared`, if the caller is one), else in a shard picked by
/// this thread. Returns where, or `None` after shutdown. The caller gives
/// the slot back to [`Registry::deregister`] of that executor once, when
/// the task it stands for is dropped (or, for a dependent, starts).
pub(crate) fn register_on(shared: &Shared, worker: Option<&Worker>, waker: Waker) -> Option<Slot> {
    let shard = match worker {
        Some(worker) => worker.index(),
        None => shared.registry().shard_of_this_thread(),
    };
    let key = shared.registry().insert(shard, waker)?;
    Some(Slot {
        // Fits: an executor has at most 65,535 workers, hence shards.
        shard: u16::try_from(shard).expect("at most 65,535 registry shards"),
        key,
    })
}

impl Registry {
    /// Removes the waker that [`register`] put at `slot` in this registry.
    pub(crate) fn deregister(&self, slot: Slot) {
        self.remove(usize::from(slot.shard), slot.key);
    }
}

/// Entries in a full page: 16 KiB of wakers.
///
/// Large enough that the pages' own bookkeeping (a [`Page`] is 48 bytes) is
/// 0.05 bytes per entry; small enough that a shard's slack, a partly filled
/// page and a spare one (32 KiB at most), is nothing beside a million parked
/// tasks (16 MB of wakers) and small beside an executor's threads.
const PAGE: usize = 1024;

/// The end of a list of pages.
const NONE: u32 = u32::MAX;

/// A slab in pages: values under `u32` keys, stored in pages of `P`
/// entries, each page a [`Slab`] that is allocated as values arrive and
/// freed when its last value leaves.
///
/// Every operation is O(1). A page's slab grows by doubling up to `P` (a
/// power of two, and a page with `P` values takes no more), so a shard with
/// a few parked tasks holds a few entries; a page that empties is freed,
/// except that the largest emptied slab is kept for the next page opened,
/// so that a count going back and forth over a page boundary does not
/// allocate each time. Memory is thus at most the pages holding a value,
/// one spare page, and 48 bytes of bookkeeping per page ever opened (the
/// vector of pages does not shrink).
struct Pages<T, const P: usize = PAGE> {
    pages: Vec<Page<T>>,
    /// Head of the list of open pages with a vacant entry, linked through
    /// [`Page::prev`] and [`Page::next`] so that a page is taken out in O(1)
    /// when it fills or empties.
    with_room: u32,
    /// Head of the list of released pages (no entries allocated), linked
    /// through [`Page::next`]: their indices are reused before new ones.
    released: u32,
    /// The slab of an emptied page, cleared, for the next page opened.
    spare: Slab<T>,
    len: usize,
}

struct Page<T> {
    /// Holds at least one value while the page is open; empty and
    /// unallocated while it is released.
    slots: Slab<T>,
    prev: u32,
    next: u32,
}

impl<T, const P: usize> Pages<T, P> {
    /// Keys are `page * P + offset`, below `MAX_PAGES * P`, which is at
    /// most `u32::MAX`.
    const MAX_PAGES: usize = {
        assert!(
            P.is_power_of_two(),
            "a slab that doubles stops at exactly P entries"
        );
        u32::MAX as usize / P
    };

    const fn new() -> Self {
        Pages {
            pages: Vec::new(),
            with_room: NONE,
            released: NONE,
            spare: Slab::new(),
            len: 0,
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Stores `value` and returns its key.
    fn insert(&mut self, value: T) -> u32 {
        let p = match self.with_room {
            NONE => self.open_page(),
            p => p,
        };
        let slots = &mut self.pages[p as usize].slots;
        // Below P: a page with room has fewer than P values.
        let offset = slots.insert(value) as u32;
        if slots.len() == P {
            self.unlink(p);
        }
        self.len += 1;
        p * P as u32 + offset
    }

    /// Takes the value stored under `key`, if any.
    fn remove(&mut self, key: u32) -> Option<T> {
        let (p, offset) = (key / P as u32, key % P as u32);
        let slots = &mut self.pages.get_mut(p as usize)?.slots;
        let value = slots.try_remove(offset as usize)?;
        let left = slots.len();
        self.len -= 1;
        if left == P - 1 {
            self.link(p);
        }
        if left == 0 {
            self.release(p);
        }
        Some(value)
    }

    /// Moves every value into `out` and frees every page.
    fn drain_into(&mut self, out: &mut Vec<T>) {
        out.reserve(self.len);
        for mut page in std::mem::take(&mut self.pages) {
            out.extend(page.slots.drain());
        }
        *self = Pages::new();
    }

    /// Opens a page with room: a released one if any, else a new one, with
    /// the spare slab if any.
    fn open_page(&mut self) -> u32 {
        let slots = std::mem::take(&mut self.spare);
        let p = match self.released {
            NONE => {
                let p = self.pages.len();
                assert!(
                    p < Self::MAX_PAGES,
                    "fewer than 2^32 parked tasks per shard"
                );
                self.pages.push(Page {
                    slots,
                    prev: NONE,
                    next: NONE,
                });
                p as u32
            }
            p => {
                let page = &mut self.pages[p as usize];
                self.released = page.next;
                page.slots = slots;
                p
            }
        };
        self.link(p);
        p
    }

    /// Frees an emptied page's slab, or keeps it as the spare when it is
    /// larger than the spare.
    fn release(&mut self, p: u32) {
        self.unlink(p);
        let page = &mut self.pages[p as usize];
        let mut slots = std::mem::take(&mut page.slots);
        page.next = self.released;
        self.released = p;
        if slots.capacity() > self.spare.capacity() {
            // Empty already; clearing resets its vacant list, keeping the
            // allocation.
            slots.clear();
            self.spare = slots;
        }
    }

    /// Puts page `p` at the head of the list of pages with room.
    fn link(&mut self, p: u32) {
        let head = self.with_room;
        let page = &mut self.pages[p as usize];
        page.prev = NONE;
        page.next = head;
        if head != NONE {
            self.pages[head as usize].prev = p;
        }
        self.with_room = p;
    }

    /// Takes page `p` out of the list of pages with room.
    fn unlink(&mut self, p: u32) {
        let Page { prev, next, .. } = self.pages[p as usize];
        match prev {
            NONE => self.with_room = next,
            prev => self.pages[prev as usize].next = next,
        }
        if next != NONE {
            self.pages[next as usize].prev = prev;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Page, Pages, Registry, NONE};
    use proptest::prelude::*;
    use std::collections::{HashMap, HashSet};
    use std::mem::size_of;
    use std::sync::Arc;
    use std::task::{Wake, Waker};

    impl<T, const P: usize> Pages<T, P> {
        /// Checks every invariant, and returns the entries allocated.
        fn check(&self) -> usize {
            let mut with_room = HashSet::new();
            let mut prev = NONE;
            let mut p = self.with_room;
            while p != NONE {
                let page = &self.pages[p as usize];
                assert_eq!(page.prev, prev, "list of pages with room mislinked");
                assert!(with_room.insert(p), "page {p} twice in the list");
                (prev, p) = (p, page.next);
            }
            let mut released = HashSet::new();
            let mut p = self.released;
            while p != NONE {
                assert!(released.insert(p), "page {p} released twice");
                p = self.pages[p as usize].next;
            }
            let mut len = 0;
            let mut allocated = self.spare.capacity();
            assert!(self.spare.is_empty());
            for (p, page) in self.pages.iter().enumerate() {
                let p = p as u32;
                let used = page.slots.len();
                allocated += page.slots.capacity();
                assert!(page.slots.capacity() <= P, "a page outgrew its size");
                len += used;
                if released.contains(&p) {
                    assert_eq!(page.slots.capacity(), 0, "a released page holds memory");
                    assert!(!with_room.contains(&p));
                    continue;
                }
                assert!(used > 0, "an open page is empty");
                assert_eq!(with_room.contains(&p), used < P, "page {p}'s room");
            }
            assert_eq!(len, self.len);
            allocated
        }
    }

    #[test]
    fn a_page_is_its_slab_and_two_links() {
        assert_eq!(size_of::<Page<Waker>>(), 48, "PAGE's doc");
    }

    #[test]
    fn insert_remove_and_reuse_a_key() {
        let mut pages = Pages::<u64, 4>::new();
        let a = pages.insert(10);
        let b = pages.insert(11);
        assert_ne!(a, b);
        assert_eq!(pages.remove(a), Some(10));
        assert_eq!(pages.remove(a), None, "removed twice");
        assert_eq!(pages.len(), 1);
        assert_eq!(pages.insert(12), a, "the vacated key is reused");
        assert_eq!(pages.remove(b), Some(11));
        assert_eq!(pages.remove(a), Some(12));
        assert_eq!(pages.len(), 0);
        assert_eq!(pages.remove(1 << 20), None, "a key past every page");
        pages.check();
    }

    #[test]
    fn keys_span_pages_and_an_emptied_page_is_freed() {
        let mut pages = Pages::<u64, 4>::new();
        let keys: Vec<u32> = (0..12).map(|v| pages.insert(v)).collect();
        assert_eq!(keys.iter().collect::<HashSet<_>>().len(), 12);
        assert_eq!(pages.pages.len(), 3);
        assert_eq!(pages.check(), 12, "three full pages");
        // Emptying two pages keeps one as the spare and frees the other.
        for &key in &keys[..8] {
            assert_eq!(pages.remove(key), Some(u64::from(key)));
        }
        assert_eq!(pages.check(), 8, "one page holding values, one spare");
        assert_eq!(pages.len(), 4);
        // Refilling reuses the released pages' keys, the spare first.
        let again: HashSet<u32> = (0..8).map(|v| pages.insert(v)).collect();
        assert_eq!(again, keys[..8].iter().copied().collect());
        assert_eq!(pages.check(), 12);
    }

    #[test]
    fn a_count_crossing_a_page_boundary_keeps_its_memory() {
        let mut pages = Pages::<u64, 4>::new();
        for v in 0..4 {
            pages.insert(v);
        }
        let before = pages.check();
        for v in 0..100 {
            let key = pages.insert(v);
            assert_eq!(pages.remove(key), Some(v));
            assert_eq!(
                pages.check(),
                before + 4,
                "the spare holds the emptied page"
            );
        }
    }

    #[test]
    fn a_page_grows_by_doubling_up_to_its_size() {
        let mut pages = Pages::<u64, 1024>::new();
        pages.insert(0);
        assert_eq!(pages.check(), 4);
        for v in 1..1025 {
            pages.insert(v);
        }
        assert_eq!(pages.check(), 1024 + 4, "a full page and a small one");
    }

    #[test]
    fn drain_takes_every_value_and_frees_every_page() {
        let mut pages = Pages::<u64, 4>::new();
        let keys: Vec<u32> = (0..10).map(|v| pages.insert(v)).collect();
        pages.remove(keys[3]);
        let mut out = Vec::new();
        pages.drain_into(&mut out);
        out.sort_unstable();
        assert_eq!(out, [0, 1, 2, 4, 5, 6, 7, 8, 9]);
        assert_eq!(pages.len(), 0);
        assert_eq!(pages.check(), 0);
        assert_eq!(pages.remove(keys[0]), None);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert,
        /// Removes the live key at this index (modulo), or a stale key when
        /// there is none.
        Remove(usize),
        RemoveStale(u32),
        Drain,
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            10 => Just(Op::Insert),
            8 => any::<usize>().prop_map(Op::Remove),
            1 => (0u32..64).prop_map(Op::RemoveStale),
            1 => Just(Op::Drain),
        ];
        proptest::collection::vec(op, 0..400)
    }

    proptest! {
        // A few cases under Miri (`scripts/miri`), where each takes seconds.
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]
        #[test]
        fn pages_behave_as_a_map(ops in ops()) {
            let mut pages = Pages::<u64, 4>::new();
            let mut model: HashMap<u32, u64> = HashMap::new();
            let mut next = 0u64;
            let mut peak_pages = 0;
            for op in ops {
                match op {
                    Op::Insert => {
                        next += 1;
                        let key = pages.insert(next);
                        prop_assert!(model.insert(key, next).is_none(), "key {} handed out twice", key);
                    }
                    Op::Remove(i) => {
                        let mut keys: Vec<u32> = model.keys().copied().collect();
                        keys.sort_unstable();
                        if let Some(&key) = keys.get(i % keys.len().max(1)) {
                            prop_assert_eq!(pages.remove(key), model.remove(&key));
                        }
                    }
                    Op::RemoveStale(key) => {
                        prop_assert_eq!(pages.remove(key), model.remove(&key));
                    }
                    Op::Drain => {
                        let mut out = Vec::new();
                        pages.drain_into(&mut out);
                        out.sort_unstable();
                        let mut expected: Vec<u64> = model.drain().map(|(_, v)| v).collect();
                        expected.sort_unstable();
                        prop_assert_eq!(out, expected);
                    }
                }
                prop_assert_eq!(pages.len(), model.len());
                let allocated = pages.check();
                // Memory: the pages holding a value, and one spare.
                let holding: HashSet<u32> = model.keys().map(|key| key / 4).collect();
                prop_assert!(allocated <= (holding.len() + 1) * 4);
                peak_pages = peak_pages.max(holding.len());
                prop_assert!(pages.pages.len() <= peak_pages + 1);
            }
        }
    }

    struct Count;

    impl Wake for Count {
        fn wake(self: Arc<Self>) {}
    }

    #[test]
    fn close_returns_every_waker_of_every_shard() {
        let count = Arc::new(Count);
        let waker = Waker::from(count.clone());
        let registry = Registry::new(3);
        let keys: Vec<(usize, u32)> = (0..3000)
            .map(|i| (i % 3, registry.insert(i % 3, waker.clone()).expect("open")))
            .collect();
        for &(shard, key) in keys.iter().step_by(2) {
            registry.remove(shard, key);
        }
        assert_eq!(registry.len(), 1500);
        assert_eq!(Arc::strong_count(&count), 1502);
        let wakers = registry.close();
        assert_eq!(wakers.len(), 1500);
        assert_eq!(registry.len(), 0);
        assert!(registry.insert(0, waker.clone()).is_none(), "closed");
        drop(wakers);
        assert_eq!(Arc::strong_count(&count), 2, "a waker left in the registry");
    }
}
