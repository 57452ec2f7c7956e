//! Diamonds, and outputs handed over in the order the dependencies were
//! given, whatever order they finished in.

mod support;

use std::sync::{Arc, Mutex};

use fastexec::{spawn_after, spawn_completion, Completion};
use support::{executor, with_timeout};

#[test]
fn diamond_runs_the_join_once_after_both_sides() {
    let (log, joined) = with_timeout(|| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let step = |name: &'static str, log: &Arc<Mutex<Vec<&'static str>>>| {
            let log = log.clone();
            move || log.lock().unwrap().push(name)
        };
        let ex = executor(2);
        let (top, left, right) = (step("top", &log), step("left", &log), step("right", &log));
        let bottom = step("bottom", &log);
        let joined = ex.block_on(async move {
            let a = spawn_completion(async move {
                top();
                1
            });
            let b = spawn_after(&a, move |a: Arc<i32>| async move {
                left();
                *a * 10
            });
            let c = spawn_after(&a, move |a: Arc<i32>| async move {
                right();
                *a * 100
            });
            let d = spawn_after((b, c), move |(b, c)| async move {
                bottom();
                *b + *c
            });
            d.await.unwrap()
        });
        let log = log.lock().unwrap().clone();
        (log, joined)
    });
    assert_eq!(*joined, 110);
    assert_eq!(log.len(), 4, "each task runs exactly once: {log:?}");
    assert_eq!(log[0], "top");
    assert_eq!(log[3], "bottom");
}

/// Dependencies that finish in reverse order still arrive in given order.
#[test]
fn vec_outputs_follow_dependency_order_not_finish_order() {
    let outputs = with_timeout(|| {
        fastexec::block_on(async {
            let deps: Vec<Completion<usize>> = (0..50)
                .map(|i| {
                    spawn_completion(async move {
                        // Earlier tasks yield longer, so they tend to finish later.
                        for _ in 0..(50 - i) {
                            fastexec::yield_now().await;
                        }
                        i
                    })
                })
                .collect();
            let from_vec = spawn_after(deps.clone(), |v: Vec<Arc<usize>>| async move {
                v.iter().map(|x| **x).collect::<Vec<_>>()
            });
            let from_slice = spawn_after(&deps[10..13], |v: Vec<Arc<usize>>| async move {
                v.iter().map(|x| **x).collect::<Vec<_>>()
            });
            (from_vec.await.unwrap(), from_slice.await.unwrap())
        })
    });
    assert_eq!(*outputs.0, (0..50).collect::<Vec<_>>());
    assert_eq!(*outputs.1, vec![10, 11, 12]);
}

#[test]
fn tuples_and_arrays_deliver_differently_typed_outputs_in_order() {
    let (tuple, array, unit) = with_timeout(|| {
        let ex = executor(2);
        ex.block_on(async {
            let n = spawn_completion(async { 3u8 });
            let s = spawn_completion(async { "s" });
            let v = spawn_completion(async { vec![1.5f64] });
            let b = spawn_completion(async { true });
            let tuple = ex.spawn_after((&n, s, &v, b), |(n, s, v, b)| async move {
                format!("{n} {s} {:?} {b}", *v)
            });
            let array = spawn_after(
                [n.clone(), n.clone(), n],
                |[x, y, z]: [Arc<u8>; 3]| async move { *x + *y + *z },
            );
            let unit = spawn_after((), |()| async { "no deps" });
            (
                tuple.await.unwrap(),
                array.await.unwrap(),
                unit.await.unwrap(),
            )
        })
    });
    assert_eq!(*tuple, "3 s [1.5] true");
    assert_eq!(*array, 9);
    assert_eq!(*unit, "no deps");
}

/// A wide fan-in: one task after 10,000 others, on both spawn paths.
#[test]
fn wide_fan_in_waits_for_every_dependency() {
    let total = with_timeout(|| {
        let ex = executor(2);
        let parts: Vec<_> = (0..10_000u64)
            .map(|i| ex.spawn_completion(async move { i }))
            .collect();
        let sum = ex.spawn_after(parts, |parts: Vec<Arc<u64>>| async move {
            parts.iter().map(|p| **p).sum::<u64>()
        });
        ex.block_on(sum).unwrap()
    });
    assert_eq!(*total, (0..10_000u64).sum());
}
