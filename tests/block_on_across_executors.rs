//! A worker of executor `a` whose task runs `b.block_on(..)` runs none of
//! `a`'s queue meanwhile. So `a`'s tasks woken or spawned on that thread go
//! to `a`'s injector, for `a`'s other workers (before, a wake went to the
//! blocked worker's slot, where no one could take it). And an `a.block_on`
//! nested inside that `b.block_on` makes the thread `a`'s worker again:
//! spawns go to `a` and parked tasks register with `a` (before, both went
//! to `b`, whose drop then waited for a task of `a`).

mod support;

use std::sync::{mpsc, Arc};

use support::{named, thread_name, within};

#[test]
fn a_task_woken_inside_another_executors_block_on_runs_on_a_free_worker() {
    within(30, || {
        let a = named(2, "exa");
        let b = Arc::new(named(1, "exb"));
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let (parked_tx, parked_rx) = mpsc::channel();
        let u = a.spawn(async move {
            parked_tx.send(()).unwrap();
            let _ = rx.await;
            42
        });
        parked_rx.recv().unwrap();
        let t = a.spawn(async move {
            b.block_on(async move {
                tx.send(()).unwrap();
                u.await.unwrap()
            })
        });
        assert_eq!(a.block_on(t).unwrap(), 42);
    });
}

#[test]
fn a_spawn_in_a_block_on_nested_in_anothers_goes_to_its_executor() {
    within(30, || {
        let a = Arc::new(named(1, "exa"));
        let b = Arc::new(named(1, "exb"));
        let a2 = a.clone();
        let name = a
            .block_on(a.spawn(async move {
                b.block_on(async move {
                    a2.block_on(async { fastexec::spawn(async { thread_name() }).await.unwrap() })
                })
            }))
            .unwrap();
        assert!(name.starts_with("exa"), "ran on {name}");
    });
}

#[test]
fn dropping_the_other_executor_does_not_wait_for_a_task_of_this_one() {
    within(30, || {
        let a = Arc::new(named(1, "exa"));
        let b = Arc::new(named(1, "exb"));
        let (go_tx, go_rx) = futures::channel::oneshot::channel::<()>();
        let (inside_tx, inside_rx) = mpsc::channel();
        let (parked_tx, parked_rx) = mpsc::channel();
        let (a2, b2) = (a.clone(), b.clone());
        let outer = a.spawn(async move {
            b2.block_on(async move {
                a2.block_on(async move {
                    inside_tx.send(()).unwrap();
                    let _ = go_rx.await;
                })
            })
        });
        inside_rx.recv().unwrap();
        // Parks while `a`'s only worker is inside that nesting.
        let _parked = a.spawn(async move {
            parked_tx.send(()).unwrap();
            std::future::pending::<()>().await
        });
        parked_rx.recv().unwrap();
        go_tx.send(()).unwrap();
        a.block_on(outer).unwrap();
        let Ok(b) = Arc::try_unwrap(b) else {
            panic!("the nesting kept a handle of b");
        };
        drop(b);
        drop(a);
    });
}
