//! How outputs are kept: outputs that carry nothing share one `Arc`; any
//! other output, a zero-sized one with a destructor included, is its own.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use fastexec::graph::{Graph, Task};
use support::within;

#[test]
fn unit_outputs_share_one_arc_and_reach_dependents() {
    let report = within(30, || {
        let mut g = Graph::<()>::new();
        g.add(Task::new("a", |_| async { Ok(()) })).unwrap();
        g.add(Task::new("b", |_| async { Ok(()) })).unwrap();
        g.add(
            Task::new("c", |inp| async move {
                assert_eq!(inp.len(), 2);
                assert!(inp.get_shared("a").is_some() && inp.get_shared("b").is_some());
                Ok(())
            })
            .after(["a", "b"]),
        )
        .unwrap();
        g.run_blocking()
    });
    assert!(report.is_success(), "{report}");
    let shared = |id| Arc::clone(report.task(id).unwrap().output.as_ref().unwrap());
    assert!(Arc::ptr_eq(&shared("a"), &shared("b")));
    assert!(Arc::ptr_eq(&shared("a"), &shared("c")));
}

static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// Zero-sized, but its destructor is observable: each task keeps its own.
struct Token;

impl Drop for Token {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn zero_sized_outputs_with_a_destructor_are_each_kept_and_dropped_once() {
    let report = within(30, || {
        let mut g = Graph::<Token>::new();
        for n in 0..10 {
            g.add(Task::new(format!("t{n}"), |_| async { Ok(Token) }))
                .unwrap();
        }
        g.run_blocking()
    });
    assert!(report.is_success());
    let (a, b) = (report.task("t0").unwrap(), report.task("t1").unwrap());
    assert!(!Arc::ptr_eq(
        a.output.as_ref().unwrap(),
        b.output.as_ref().unwrap()
    ));
    assert_eq!(
        DROPPED.load(Ordering::SeqCst),
        0,
        "dropped while the report holds them"
    );
    drop(report);
    assert_eq!(DROPPED.load(Ordering::SeqCst), 10);
}

#[test]
fn bodies_of_one_closure_and_of_several_each_compute_their_own_output() {
    // A chain whose links alternate between two body types, then a run of
    // one type: a runner's finished future box is offered to the next body
    // whatever its type, and must only ever take one of its own type.
    let report = within(30, || {
        let mut g = Graph::<u64>::new();
        g.add(Task::new("n0", |_| async { Ok(0) })).unwrap();
        for n in 1..300u64 {
            let prev = format!("n{}", n - 1);
            let task = if n % 3 == 0 && n < 150 {
                let k = n;
                Task::new(format!("n{n}"), move |inp| {
                    let sum = inp[0] + k;
                    async move { Ok(sum) }
                })
            } else {
                Task::new(format!("n{n}"), |inp| async move { Ok(inp[0] + 1) })
            };
            g.add(task.after([prev])).unwrap();
        }
        g.run_blocking()
    });
    assert!(report.is_success(), "{report}");
    let expected: u64 = (1..300u64)
        .map(|n| if n % 3 == 0 && n < 150 { n } else { 1 })
        .sum();
    assert_eq!(report.output("n299"), Some(&expected));
}
