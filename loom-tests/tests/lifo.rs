//! Loom models of the LIFO slot: every item put is taken exactly once, by
//! the owner (a take, or given back by a put that replaced it) or by a
//! thief, while the owner puts and takes and a thief steals.
#![cfg(loom)]

use fastexec::__loom::LifoSlot;
use loom::thread;

fn assert_conserved(mut taken: Vec<usize>, put: usize) {
    taken.sort_unstable();
    assert_eq!(
        taken,
        (0..put).collect::<Vec<_>>(),
        "every item exactly once"
    );
}

/// The owner puts two items (the second replacing the first, unless the
/// thief took it) and takes; a thief steals twice.
#[test]
fn put_take_against_steal() {
    loom::model(|| {
        let (slot, steal) = LifoSlot::<Box<usize>>::new(false);
        let thief = thread::spawn(move || {
            let mut got = Vec::new();
            for _ in 0..2 {
                got.extend(steal.steal().map(|item| *item));
            }
            got
        });
        let mut got = Vec::new();
        got.extend(slot.put(Box::new(0)).map(|item| *item));
        got.extend(slot.put(Box::new(1)).map(|item| *item));
        got.extend(slot.take().map(|item| *item));
        got.extend(thief.join().unwrap());
        got.extend(slot.take().map(|item| *item));
        assert_conserved(got, 2);
    });
}

/// A put into a slot a thief is emptying, then a take: the put's
/// store-if-empty path against the thief's swap.
#[test]
fn put_after_steal_race() {
    loom::model(|| {
        let (slot, steal) = LifoSlot::<Box<usize>>::new(false);
        assert!(slot.put(Box::new(0)).is_none());
        let thief = thread::spawn(move || steal.steal().map(|item| *item));
        let mut got = Vec::new();
        got.extend(slot.take().map(|item| *item));
        got.extend(slot.put(Box::new(1)).map(|item| *item));
        got.extend(thief.join().unwrap());
        got.extend(slot.take().map(|item| *item));
        assert_conserved(got, 2);
    });
}
