//! Loom models of the local ring: every pushed item is taken exactly once,
//! by the owner's pop, a thief's steal, or the overflow to the injector.
#![cfg(loom)]

use fastexec::__loom::{local, solo, Local, Overflow, Steal, CAPACITY};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// Stands in for the executor's injector.
#[derive(Default)]
struct Injector(Mutex<Vec<usize>>);

impl Overflow<usize> for Injector {
    fn push_batch(&self, batch: impl Iterator<Item = usize>) {
        self.0.lock().unwrap().extend(batch);
    }
}

fn drain(local: &Local<usize>, into: &mut Vec<usize>) {
    while let Some(item) = local.pop() {
        into.push(item);
    }
}

/// A thief thread: steals half into its own ring once, returns what it got.
fn spawn_thief(steal: Steal<usize>) -> thread::JoinHandle<Vec<usize>> {
    thread::spawn(move || {
        let (mine, _) = local::<usize>();
        let mut got = Vec::new();
        got.extend(steal.steal_into(&mine).map(|(item, _)| item));
        drain(&mine, &mut got);
        got
    })
}

fn assert_conserved(mut taken: Vec<usize>, pushed: usize) {
    taken.sort_unstable();
    assert_eq!(
        taken,
        (0..pushed).collect::<Vec<_>>(),
        "every item exactly once"
    );
}

/// The owner pushes and pops while a thief steals half into its own ring.
#[test]
fn push_pop_against_steal() {
    loom::model(|| {
        let injector = Arc::new(Injector::default());
        let (owner, steal) = local::<usize>();
        let thief = spawn_thief(steal);
        let pushed = 3;
        let mut got = Vec::new();
        for item in 0..pushed {
            owner.push_back(item, &*injector);
        }
        got.extend(owner.pop());
        let stolen = thief.join().unwrap();
        drain(&owner, &mut got);
        got.extend(stolen);
        got.extend(injector.0.lock().unwrap().drain(..));
        assert_conserved(got, pushed);
    });
}

/// Pushing past capacity while a thief steals: the overflow path races with
/// the steal of the same slots.
#[test]
fn overflow_against_steal() {
    loom::model(|| {
        let injector = Arc::new(Injector::default());
        let (owner, steal) = local::<usize>();
        // Fill the ring before the thief exists, so the model's steps go to
        // the interesting part: overflow versus steal.
        for item in 0..CAPACITY {
            owner.push_back(item, &*injector);
        }
        let thief = spawn_thief(steal);
        owner.push_back(CAPACITY, &*injector);
        let mut got = thief.join().unwrap();
        drain(&owner, &mut got);
        got.extend(injector.0.lock().unwrap().drain(..));
        assert_conserved(got, CAPACITY + 1);
    });
}

/// Two thieves on one ring: at most one steals at a time, nothing is lost.
#[test]
fn two_thieves() {
    loom::model(|| {
        let injector = Arc::new(Injector::default());
        let (owner, steal) = local::<usize>();
        for item in 0..CAPACITY {
            owner.push_back(item, &*injector);
        }
        let thieves: Vec<_> = (0..2).map(|_| spawn_thief(steal.clone())).collect();
        let mut got = Vec::new();
        for thief in thieves {
            got.extend(thief.join().unwrap());
        }
        drain(&owner, &mut got);
        got.extend(injector.0.lock().unwrap().drain(..));
        assert_conserved(got, CAPACITY);
    });
}

/// A batch pushed with one publishing store while a thief steals: the
/// thief sees none of the batch or all of it, and nothing is lost.
#[test]
fn push_many_against_steal() {
    loom::model(|| {
        let injector = Arc::new(Injector::default());
        let (owner, steal) = local::<usize>();
        owner.push_back(0, &*injector);
        let thief = spawn_thief(steal);
        owner.push_many(1..CAPACITY, &*injector);
        let mut got = thief.join().unwrap();
        drain(&owner, &mut got);
        got.extend(injector.0.lock().unwrap().drain(..));
        assert_conserved(got, CAPACITY);
    });
}

/// A batch larger than the room left goes in one by one, overflowing.
#[test]
fn push_many_past_capacity() {
    loom::model(|| {
        let injector = Arc::new(Injector::default());
        let (owner, steal) = local::<usize>();
        owner.push_back(0, &*injector);
        let thief = spawn_thief(steal);
        owner.push_many(1..CAPACITY + 2, &*injector);
        let mut got = thief.join().unwrap();
        drain(&owner, &mut got);
        got.extend(injector.0.lock().unwrap().drain(..));
        assert_conserved(got, CAPACITY + 2);
    });
}

/// The outside poster's ring against a thief taking a batch
/// (`steal_batch_into`): the owner fills the ring with `0..prefill` in order,
/// then `push_rest` pushes `prefill..total` past capacity while the thief
/// copies. Every item is taken exactly once, each consumer sees its items
/// oldest first, and what the ring sent to the overflow target is older
/// than what it kept.
fn ordered_against_batch_steal(
    prefill: usize,
    total: usize,
    push_rest: fn(&Local<usize>, &Injector, std::ops::Range<usize>),
) {
    loom::model(move || {
        let injector = Arc::new(Injector::default());
        let (owner, steal) = local::<usize>();
        for item in 0..prefill {
            owner.push_back_in_order(item, &*injector);
        }
        let thief = thread::spawn(move || {
            let (mine, _) = local::<usize>();
            let n = steal.steal_batch_into(&mine);
            let mut got = Vec::new();
            drain(&mine, &mut got);
            assert_eq!(got.len(), n);
            got
        });
        push_rest(&owner, &injector, prefill..total);
        let stolen = thief.join().unwrap();
        let mut kept = Vec::new();
        drain(&owner, &mut kept);
        let overflowed: Vec<usize> = injector.0.lock().unwrap().drain(..).collect();
        for part in [&stolen, &kept, &overflowed] {
            assert!(part.windows(2).all(|w| w[0] < w[1]), "in order: {part:?}");
        }
        if let (Some(newest_sent), Some(oldest_kept)) = (overflowed.last(), kept.first()) {
            assert!(newest_sent < oldest_kept, "{overflowed:?} before {kept:?}");
        }
        let mut got = stolen;
        got.extend(kept);
        got.extend(overflowed);
        assert_conserved(got, total);
    });
}

/// Pushed one at a time (`push_back_in_order`): the last push finds the ring
/// full while the thief may be copying.
#[test]
fn ordered_overflow_against_batch_steal() {
    ordered_against_batch_steal(CAPACITY, CAPACITY + 1, |owner, injector, rest| {
        for item in rest {
            owner.push_back_in_order(item, injector);
        }
    });
}

/// Pushed as one batch (`push_many_in_order`), for the outside poster's
/// `spawn_many`: the room there is is filled and published with one store,
/// the older half overflows (after the thief, if it is copying), and the
/// rest follows.
#[test]
fn ordered_push_many_against_batch_steal() {
    ordered_against_batch_steal(CAPACITY - 1, CAPACITY + 2, |owner, injector, rest| {
        owner.push_many_in_order(rest.collect::<Vec<_>>(), injector);
    });
}

/// A batch steal into a thief's ring with room for fewer than half the
/// victim's items (`steal_batch_into` takes as many as fit, the oldest),
/// while the victim's owner pops and another thread steals from the
/// thief's ring: the slots that thread has claimed are not room yet, and
/// the copy must write only into free slots. Every item of both rings is
/// taken exactly once, and the thief's batch is a run of its victim's
/// oldest items.
#[test]
fn batch_steal_into_a_nearly_full_ring() {
    loom::model(|| {
        let injector = Arc::new(Injector::default());
        let (owner, steal) = local::<usize>();
        for item in 0..CAPACITY {
            owner.push_back_in_order(item, &*injector);
        }
        let thief = thread::spawn(move || {
            let spill = Injector::default();
            let (mine, mine_steal) = local::<usize>();
            // Room for one: less than half a ring.
            for item in CAPACITY..2 * CAPACITY - 1 {
                mine.push_back(item, &spill);
            }
            let other = spawn_thief(mine_steal);
            let n = steal.steal_batch_into(&mine);
            assert!((1..=CAPACITY / 2).contains(&n), "took {n}");
            let mut got = Vec::new();
            drain(&mine, &mut got);
            // The other thread may steal some of the batch too, once the
            // thief's own pops have taken the ring down to it.
            got.extend(other.join().unwrap());
            let mut batch: Vec<usize> = got.iter().copied().filter(|&i| i < CAPACITY).collect();
            batch.sort_unstable();
            assert_eq!(batch.len(), n);
            assert!(batch.windows(2).all(|w| w[0] + 1 == w[1]), "{batch:?}");
            got.extend(spill.0.lock().unwrap().drain(..));
            got
        });
        let mut got = Vec::new();
        got.extend(owner.pop());
        got.extend(thief.join().unwrap());
        drain(&owner, &mut got);
        got.extend(injector.0.lock().unwrap().drain(..));
        assert_conserved(got, 2 * CAPACITY - 1);
    });
}

/// A ring without thieves (`solo`, a lone worker's): the owner pushes past
/// capacity and pops without a CAS while another thread tries both steals
/// through the ring's handle. That thread takes nothing, and the owner's
/// pops and overflow together take every item once.
#[test]
fn solo_ring_against_would_be_thieves() {
    loom::model(|| {
        let injector = Arc::new(Injector::default());
        let (owner, steal) = solo::<usize>();
        owner.push_back(0, &*injector);
        let would_be = thread::spawn(move || {
            let (mine, _) = local::<usize>();
            assert!(steal.steal_into(&mine).is_none());
            assert_eq!(steal.steal_batch_into(&mine), 0);
            // A hint, but a bounded one, even when its two Relaxed loads
            // pair a new `head` with an old `tail` under the model.
            assert!(steal.len() <= CAPACITY);
            assert_eq!(mine.len(), 0);
        });
        let mut got = Vec::new();
        got.extend(owner.pop());
        owner.push_many(1..CAPACITY + 2, &*injector);
        got.extend(owner.pop());
        would_be.join().unwrap();
        drain(&owner, &mut got);
        got.extend(injector.0.lock().unwrap().drain(..));
        assert_conserved(got, CAPACITY + 2);
    });
}
