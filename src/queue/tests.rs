//! The rings with std threads, for Miri (`scripts/miri`): the loom models in
//! `loom-tests/` check the orderings on a 4-slot ring; these run the real
//! 256-slot ring, whose slots Miri checks for uninitialised reads, double
//! moves, leaks and data races. Items are boxes, so an item read twice is a
//! double free and an item never read is a leak, both of which Miri reports.
//! They run (fast) in a normal `cargo test` too.

use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Arc, Mutex};
use std::thread;

use super::{local, Local, Overflow, Posting, Steal, CAPACITY};

const HALF: usize = CAPACITY / 2;

/// Items pushed by the concurrent tests: enough to fill and overflow the
/// ring more than once, fewer under Miri, which runs each step thousands of
/// times slower.
const ITEMS: usize = if cfg!(miri) {
    3 * CAPACITY
} else {
    50 * CAPACITY
};

/// Stands in for the executor's overflow queue. Its items stay boxes (which
/// clippy's `vec_box` would unbox): they are what Miri checks.
#[derive(Default)]
#[allow(clippy::vec_box)]
struct Sink(Mutex<Vec<Box<usize>>>);

impl Overflow<Box<usize>> for Sink {
    fn push_batch(&self, batch: impl Iterator<Item = Box<usize>>) {
        self.0.lock().unwrap().extend(batch);
    }
}

impl Sink {
    fn take(&self) -> Vec<usize> {
        self.0.lock().unwrap().drain(..).map(|b| *b).collect()
    }
}

fn drain(ring: &Local<Box<usize>>) -> Vec<usize> {
    std::iter::from_fn(|| ring.pop()).map(|b| *b).collect()
}

fn assert_each_once(mut got: Vec<usize>, pushed: usize) {
    got.sort_unstable();
    assert_eq!(
        got,
        (0..pushed).collect::<Vec<_>>(),
        "every item exactly once"
    );
}

#[test]
fn pop_is_oldest_first_and_a_dropped_ring_drops_what_it_holds() {
    let sink = Sink::default();
    let (ring, steal) = local();
    for i in 0..10 {
        ring.push_back(Box::new(i), &sink);
    }
    assert_eq!(ring.pop().map(|b| *b), Some(0));
    assert_eq!(ring.len(), 9);
    // The rest are freed by the drop of the owner's handle (Miri reports a
    // leak otherwise), even while a thief's handle lives on.
    drop(ring);
    assert_eq!(steal.len(), 0);
}

#[test]
fn a_full_ring_sends_its_older_half_to_overflow() {
    let sink = Sink::default();
    let (ring, _steal) = local();
    for i in 0..=CAPACITY {
        ring.push_back(Box::new(i), &sink);
    }
    assert_eq!(sink.take(), (0..HALF).collect::<Vec<_>>());
    assert_eq!(drain(&ring), (HALF..=CAPACITY).collect::<Vec<_>>());
    // The slots freed by the overflow and the pops are reused.
    for i in 0..2 * CAPACITY {
        ring.push_back(Box::new(i), &sink);
    }
    let mut got = sink.take();
    got.extend(drain(&ring));
    assert_each_once(got, 2 * CAPACITY);
}

#[test]
fn push_many_writes_in_one_go_or_one_by_one() {
    let sink = Sink::default();
    let (ring, _steal) = local();
    ring.push_many((0..HALF).map(Box::new), &sink);
    assert_eq!(ring.len(), HALF);
    // More than the room left: pushed one by one, overflowing on the way.
    ring.push_many((HALF..2 * CAPACITY).map(Box::new), &sink);
    let mut got = sink.take();
    got.extend(drain(&ring));
    assert_each_once(got, 2 * CAPACITY);
}

#[test]
fn steal_into_takes_half_and_hands_back_the_newest() {
    let sink = Sink::default();
    let (victim, steal) = local();
    let (mine, _) = local();
    for i in 0..9 {
        victim.push_back(Box::new(i), &sink);
    }
    // Half of 9, rounded up: items 0..5, of which the newest is run at once.
    assert_eq!(steal.steal_into(&mine).map(|(b, _)| *b), Some(4));
    assert_eq!(drain(&mine), vec![0, 1, 2, 3]);
    assert_eq!(drain(&victim), vec![5, 6, 7, 8]);
    // One item: stolen, and nothing is published in the thief's ring.
    victim.push_back(Box::new(9), &sink);
    assert_eq!(steal.steal_into(&mine).map(|(b, _)| *b), Some(9));
    assert_eq!(mine.len(), 0);
    assert!(steal.steal_into(&mine).is_none());
    // The count includes the item returned.
    for i in 10..17 {
        victim.push_back(Box::new(i), &sink);
    }
    let (item, taken) = steal.steal_into(&mine).expect("seven to take from");
    assert_eq!((*item, taken), (13, 4));
    assert_eq!(drain(&mine), vec![10, 11, 12]);
}

#[test]
fn steal_batch_into_keeps_the_victims_order() {
    let sink = Sink::default();
    let (victim, steal) = local();
    let (mine, _) = local();
    for i in 0..6 {
        victim.push_back(Box::new(i), &sink);
    }
    assert_eq!(steal.steal_batch_into(&mine), 3);
    assert_eq!(drain(&mine), vec![0, 1, 2]);
    // A thief with room for fewer than half the victim's items takes the
    // oldest that fit; with no room, nothing. (`steal_into` needs room for
    // half a ring.)
    let (mine, _) = local();
    for i in 0..CAPACITY - 1 {
        mine.push_back(Box::new(100 + i), &sink);
    }
    assert!(steal.steal_into(&mine).is_none());
    assert_eq!(steal.steal_batch_into(&mine), 1);
    assert_eq!(steal.steal_batch_into(&mine), 0);
    assert_eq!(drain(&mine).last(), Some(&3));
    assert_eq!(drain(&victim), vec![4, 5]);
}

#[test]
fn push_back_in_order_overflows_the_older_half_first() {
    let sink = Sink::default();
    let (ring, _steal) = local();
    for i in 0..=CAPACITY {
        ring.push_back_in_order(Box::new(i), &sink);
    }
    let mut got = sink.take();
    got.extend(drain(&ring));
    assert_eq!(got, (0..=CAPACITY).collect::<Vec<_>>(), "oldest first");
}

/// A thief: steals into a ring of its own until `done` and the victim is
/// empty, then returns what it got.
fn thief(steal: Steal<Box<usize>>, done: Arc<AtomicBool>) -> thread::JoinHandle<Vec<usize>> {
    thread::spawn(move || {
        let (mine, _) = local();
        let mut got = Vec::new();
        loop {
            // Acquire: pairs with the owner's Release store of `done` after
            // its last push, so the emptiness check below sees every item.
            let finished = done.load(Acquire);
            got.extend(steal.steal_into(&mine).map(|(b, _)| *b));
            got.extend(drain(&mine));
            if finished && steal.len() == 0 {
                return got;
            }
            thread::yield_now();
        }
    })
}

#[test]
fn owner_and_two_thieves_take_every_item_once() {
    let sink = Arc::new(Sink::default());
    let (ring, steal) = local();
    let done = Arc::new(AtomicBool::new(false));
    let thieves = [
        thief(steal.clone(), done.clone()),
        thief(steal, done.clone()),
    ];
    let mut got = Vec::new();
    for i in 0..ITEMS {
        if i % 7 == 0 {
            ring.push_many([Box::new(i)], &*sink);
        } else {
            ring.push_back(Box::new(i), &*sink);
        }
        if i % 3 == 0 {
            got.extend(ring.pop().map(|b| *b));
        }
    }
    // Release: pairs with the thieves' Acquire load of `done`.
    done.store(true, Release);
    got.extend(drain(&ring));
    for thief in thieves {
        got.extend(thief.join().unwrap());
    }
    got.extend(sink.take());
    assert_each_once(got, ITEMS);
}

#[test]
fn only_the_first_poster_owns_the_posting_ring() {
    let sink = Sink::default();
    let posting = Posting::new();
    assert!(posting.try_push(7, Box::new(0), &sink).is_ok());
    let refused = posting.try_push(8, Box::new(1), &sink);
    assert_eq!(refused.map_err(|b| *b), Err(1));
    assert!(posting.try_push(7, Box::new(2), &sink).is_ok());
    let mut drained = Vec::new();
    posting.drain_as(8, |b| drained.push(*b));
    assert!(drained.is_empty(), "not the owner");
    posting.drain_as(7, |b| drained.push(*b));
    assert_eq!(drained, vec![0, 2]);
    // Left in the ring: freed with it.
    assert!(posting.try_push(7, Box::new(3), &sink).is_ok());
}

/// Runs `post` (the items `0..ITEMS`, oldest first, as the ring's owner
/// with key 1) on a poster thread while this thread steals from the
/// poster's ring as a worker does, then checks that the worker's batches
/// and the overflow each come out in the poster's order and together hold
/// every item once.
fn poster_against_a_worker(post: fn(&Posting<Box<usize>>, &Sink)) {
    let sink = Arc::new(Sink::default());
    let posting = Arc::new(Posting::new());
    let done = Arc::new(AtomicBool::new(false));
    let poster = {
        let (sink, posting, done) = (sink.clone(), posting.clone(), done.clone());
        thread::spawn(move || {
            post(&posting, &sink);
            // Release: pairs with the worker's Acquire load of `done`.
            done.store(true, Release);
        })
    };
    let (mine, _) = local();
    let mut stolen = Vec::new();
    loop {
        // Acquire: pairs with the poster's Release store after its last push.
        let finished = done.load(Acquire);
        posting.stealer().steal_batch_into(&mine);
        stolen.extend(drain(&mine));
        if finished && posting.len() == 0 {
            break;
        }
        thread::yield_now();
    }
    poster.join().unwrap();
    assert!(stolen.windows(2).all(|w| w[0] < w[1]), "in order");
    let overflowed = sink.take();
    assert!(overflowed.windows(2).all(|w| w[0] < w[1]), "in order");
    stolen.extend(overflowed);
    assert_each_once(stolen, ITEMS);
}

#[test]
fn a_poster_and_a_worker_keep_the_posters_order() {
    poster_against_a_worker(|posting, sink| {
        for i in 0..ITEMS {
            assert!(posting.try_push(1, Box::new(i), sink).is_ok());
        }
    });
}

#[test]
fn push_many_in_order_overflows_the_older_items_first() {
    let sink = Sink::default();
    let (ring, _steal) = local();
    ring.push_many_in_order((0..2 * CAPACITY + 3).map(Box::new), &sink);
    let mut got = sink.take();
    got.extend(drain(&ring));
    assert_eq!(
        got,
        (0..2 * CAPACITY + 3).collect::<Vec<_>>(),
        "oldest first"
    );
}

#[test]
fn a_batch_poster_and_a_worker_keep_the_posters_order() {
    poster_against_a_worker(|posting, sink| {
        let mut next = 0;
        while next < ITEMS {
            let end = (next + 37).min(ITEMS);
            let mut batch: Vec<_> = (next..end).map(Box::new).collect();
            assert!(posting.try_push_many(1, &mut batch, sink));
            assert!(batch.is_empty());
            next = end;
        }
    });
}

#[test]
fn a_solo_ring_pops_in_order_and_its_stealer_takes_nothing() {
    let sink = Sink::default();
    let (ring, steal) = super::solo();
    let (mine, _) = local();
    for i in 0..=CAPACITY {
        ring.push_back(Box::new(i), &sink);
    }
    // Overflow works as in a shared ring: the older half went on.
    assert_eq!(sink.take(), (0..HALF).collect::<Vec<_>>());
    assert_eq!(steal.len(), HALF + 1);
    assert!(steal.steal_into(&mine).is_none());
    assert_eq!(steal.steal_batch_into(&mine), 0);
    assert_eq!(mine.len(), 0);
    assert_eq!(ring.pop().map(|b| *b), Some(HALF));
    ring.push_many((CAPACITY + 1..CAPACITY + 4).map(Box::new), &sink);
    assert_eq!(
        drain(&ring),
        (HALF + 1..CAPACITY + 4).collect::<Vec<_>>(),
        "oldest first"
    );
    assert_eq!(steal.len(), 0);
    // Pushes and pops past the counters' first lap, then a drop with items
    // left (freed by the owner's handle, or Miri reports a leak).
    for i in 0..3 * CAPACITY {
        ring.push_back(Box::new(i), &sink);
        assert_eq!(ring.pop().map(|b| *b), Some(i));
    }
    ring.push_back(Box::new(0), &sink);
    drop(ring);
    assert!(steal.steal_into(&mine).is_none());
}

/// A solo ring's owner pushes and pops while another thread keeps trying
/// to steal through the ring's handle: nothing is taken from the ring by
/// that thread, and the owner gets every item once (Miri's race detector
/// checks that the CAS-free pop races with nothing).
#[test]
fn a_solo_ring_keeps_every_item_against_would_be_thieves() {
    let sink = Arc::new(Sink::default());
    let (ring, steal) = super::solo();
    let done = Arc::new(AtomicBool::new(false));
    let would_be = {
        let done = done.clone();
        thread::spawn(move || {
            let (mine, _) = local::<Box<usize>>();
            // Acquire: pairs with the owner's Release store of `done`.
            while !done.load(Acquire) {
                assert!(steal.steal_into(&mine).is_none());
                assert_eq!(steal.steal_batch_into(&mine), 0);
                // A hint, racing the owner's Relaxed store of `head`, but
                // never more than the ring holds.
                assert!(steal.len() <= CAPACITY);
                thread::yield_now();
            }
            assert_eq!(mine.len(), 0);
        })
    };
    let mut got = Vec::new();
    for i in 0..ITEMS {
        ring.push_back(Box::new(i), &*sink);
        if i % 3 == 0 {
            got.extend(ring.pop().map(|b| *b));
        }
    }
    got.extend(drain(&ring));
    // Release: pairs with the other thread's Acquire load of `done`.
    done.store(true, Release);
    would_be.join().unwrap();
    got.extend(sink.take());
    assert_each_once(got, ITEMS);
}

/// An overflow target that, as the executor's closed overflow queue may
/// (dropping tasks whose destructors spawn), pushes to the ring it overflows
/// from: `pushes` more items into that ring, after it has taken the batch
/// or (`first`) before it takes any of it.
struct PushesBack<'a> {
    ring: &'a Local<Box<usize>>,
    sink: Sink,
    next: std::cell::Cell<usize>,
    pushes: usize,
    first: bool,
}

impl PushesBack<'_> {
    fn push_into_ring(&self) {
        for _ in 0..self.pushes {
            let item = self.next.get();
            self.next.set(item + 1);
            self.ring.push_back(Box::new(item), &self.sink);
        }
    }
}

impl Overflow<Box<usize>> for PushesBack<'_> {
    fn push_batch(&self, batch: impl Iterator<Item = Box<usize>>) {
        if self.first {
            self.push_into_ring();
        }
        self.sink.push_batch(batch);
        if !self.first {
            self.push_into_ring();
        }
    }
}

/// How [`overflow_target_pushing_back`] fills the ring.
#[derive(Clone, Copy)]
enum Push {
    Back,
    BackInOrder,
    ManyInOrder,
}

/// Pushes from the overflow target during an overflow move the tail: the
/// push that overflowed puts its items after theirs, overwriting none.
fn overflow_target_pushing_back(pushes: usize, push: Push, first: bool) {
    let (ring, _steal) = local();
    let target = PushesBack {
        ring: &ring,
        sink: Sink::default(),
        next: std::cell::Cell::new(CAPACITY + 2),
        pushes,
        first,
    };
    let items = (0..CAPACITY + 2).map(Box::new);
    match push {
        Push::Back => items.for_each(|item| ring.push_back(item, &target)),
        Push::BackInOrder => items.for_each(|item| ring.push_back_in_order(item, &target)),
        Push::ManyInOrder => ring.push_many_in_order(items, &target),
    }
    let mut got = drain(&ring);
    got.extend(target.sink.take());
    assert_each_once(got, target.next.get());
}

#[test]
fn an_overflow_target_may_push_back_once_it_took_the_batch() {
    // One push (into the room the overflow made), and more than that room
    // (a second overflow from inside the first).
    for pushes in [1, HALF + 1] {
        for push in [Push::Back, Push::BackInOrder, Push::ManyInOrder] {
            overflow_target_pushing_back(pushes, push, false);
        }
    }
}

#[test]
fn an_overflow_target_may_push_back_before_it_takes_the_batch() {
    // The ring moved the whole half out of its slots before the call: a
    // push into the slots it freed overwrites no item of the batch.
    for pushes in [1, HALF + 1] {
        for push in [Push::Back, Push::BackInOrder, Push::ManyInOrder] {
            overflow_target_pushing_back(pushes, push, true);
        }
    }
}
