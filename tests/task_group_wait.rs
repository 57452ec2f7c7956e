//! `TaskGroup`: `wait()` resolves when every member and every descendant
//! has finished; `active()` counts them; groups nest, and a group inside a
//! `block_on` also counts for that `block_on`.

mod support;

use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use fastexec::{spawn, yield_now, TaskGroup};
use futures::channel::oneshot;
use futures::FutureExt;
use support::{counter, executor, get, with_timeout};

async fn yields(n: usize) {
    for _ in 0..n {
        yield_now().await;
    }
}

/// Members spawn children late, which spawn grandchildren on a message from
/// a sibling; `wait()` inside the root sees all their effects.
#[test]
fn wait_covers_members_and_late_descendants() {
    with_timeout(|| {
        let ex = executor(2);
        let seen = ex.block_on(async {
            let done = counter();
            let group = TaskGroup::new();
            for _ in 0..5 {
                let d = done.clone();
                group
                    .spawn(async move {
                        yields(20).await;
                        let (tx, rx) = oneshot::channel::<()>();
                        let d2 = d.clone();
                        spawn(async move {
                            rx.await.unwrap();
                            spawn(async move {
                                yields(5).await;
                                d2.fetch_add(1, SeqCst);
                            })
                            .detach();
                        })
                        .detach();
                        spawn(async move {
                            yields(10).await;
                            tx.send(()).unwrap();
                        })
                        .detach();
                        d.fetch_add(1, SeqCst);
                    })
                    .detach();
            }
            group.wait().await;
            assert_eq!(group.active(), 0);
            get(&done)
        });
        assert_eq!(seen, 10);
    })
}

/// `active()` counts members and their descendants while they are alive.
#[test]
fn active_counts_members_and_descendants() {
    with_timeout(|| {
        let ex = executor(2);
        ex.block_on(async {
            let group = TaskGroup::new();
            assert_eq!(group.active(), 0);
            assert!(group.is_empty());
            let mut member_releases = Vec::new();
            let mut child_releases = Vec::new();
            let mut children_done = Vec::new();
            for _ in 0..3 {
                let (member_tx, member_rx) = oneshot::channel::<()>();
                let (child_tx, child_rx) = oneshot::channel::<()>();
                let (done_tx, done_rx) = oneshot::channel::<()>();
                member_releases.push(member_tx);
                child_releases.push(child_tx);
                children_done.push(done_rx);
                // Counted from the moment `spawn` returns.
                group
                    .spawn(async move {
                        let child = spawn(async move { child_rx.await.unwrap() });
                        child.await.unwrap();
                        done_tx.send(()).unwrap();
                        member_rx.await.unwrap();
                    })
                    .detach();
            }
            assert!(group.active() >= 3);
            // Each member spawns its child before it can finish; wait until
            // all children have finished and been reported by their member.
            for tx in child_releases {
                tx.send(()).unwrap();
            }
            for rx in children_done {
                rx.await.unwrap();
            }
            // A child whose handle its member saw resolve may not have let
            // go of its place yet, on the other worker (`active` may lag).
            while group.active() > 3 {
                fastexec::yield_now().await;
            }
            assert_eq!(group.active(), 3);
            for tx in member_releases {
                tx.send(()).unwrap();
            }
            group.wait().await;
            assert_eq!(group.active(), 0);
        });
    })
}

/// While children are parked, a member and its children are all counted.
#[test]
fn active_counts_parked_descendants() {
    with_timeout(|| {
        let ex = executor(1);
        ex.block_on(async {
            let group = TaskGroup::new();
            let (spawned_tx, spawned_rx) = oneshot::channel::<()>();
            let (release_tx, release_rx) = oneshot::channel::<()>();
            group
                .spawn(async move {
                    let (inner_tx, inner_rx) = oneshot::channel::<()>();
                    spawn(async move { inner_rx.await.unwrap() }).detach();
                    spawn(async move {
                        release_rx.await.unwrap();
                        inner_tx.send(()).unwrap();
                    })
                    .detach();
                    spawned_tx.send(()).unwrap();
                })
                .detach();
            spawned_rx.await.unwrap();
            // Member may have finished or not; both children are parked.
            let active = group.active();
            assert!((2..=3).contains(&active), "active = {active}");
            release_tx.send(()).unwrap();
            group.wait().await;
            assert_eq!(group.active(), 0);
        });
    })
}

/// A group created and dropped inside the root, never waited on: the
/// enclosing `block_on` still waits for its members' late descendants.
#[test]
fn group_inside_block_on_counts_for_block_on() {
    with_timeout(|| {
        let ex = executor(2);
        let done = counter();
        let d = done.clone();
        ex.block_on(async move {
            let group = TaskGroup::new();
            for _ in 0..4 {
                let d = d.clone();
                group
                    .spawn(async move {
                        yields(30).await;
                        spawn(async move {
                            yields(30).await;
                            d.fetch_add(1, SeqCst);
                        })
                        .detach();
                    })
                    .detach();
            }
            drop(group);
        });
        assert_eq!(get(&done), 4);
    })
}

/// A member spawned after `wait()` resolved is counted afresh and waited
/// for by the next `wait()`.
#[test]
fn tasks_spawned_after_wait_resolved() {
    with_timeout(|| {
        let ex = executor(2);
        ex.block_on(async {
            let group = TaskGroup::new();
            group.spawn(yields(5)).detach();
            group.wait().await;
            assert_eq!(group.active(), 0);

            let (tx, rx) = oneshot::channel::<()>();
            let ran = counter();
            let r = ran.clone();
            group
                .spawn(async move {
                    rx.await.unwrap();
                    r.fetch_add(1, SeqCst);
                })
                .detach();
            assert_eq!(group.active(), 1);
            assert!(group.wait().now_or_never().is_none(), "resolved too early");
            tx.send(()).unwrap();
            group.wait().await;
            assert_eq!(get(&ran), 1);
            assert_eq!(group.active(), 0);
        });
    })
}

/// An inner group created inside an outer member: the outer group counts
/// the inner members too, and waits for them although the outer member
/// returned without waiting.
#[test]
fn nested_groups() {
    with_timeout(|| {
        let ex = executor(2);
        ex.block_on(async {
            let outer = TaskGroup::new();
            let (counts_tx, counts_rx) = oneshot::channel::<usize>();
            let (release_tx, release_rx) = oneshot::channel::<()>();
            let done = counter();
            let d = done.clone();
            outer
                .spawn(async move {
                    let inner = TaskGroup::new();
                    let (ready_tx, ready_rx) = oneshot::channel::<()>();
                    inner
                        .spawn(async move {
                            ready_tx.send(()).unwrap();
                            release_rx.await.unwrap();
                            yields(10).await;
                            d.fetch_add(1, SeqCst);
                        })
                        .detach();
                    inner.spawn(async {}).detach();
                    ready_rx.await.unwrap();
                    assert!(
                        inner.wait().now_or_never().is_none(),
                        "inner resolved early"
                    );
                    counts_tx.send(inner.active()).unwrap();
                    // Returns without waiting for `inner`.
                })
                .detach();
            let inner_active = counts_rx.await.unwrap();
            assert!((1..=2).contains(&inner_active), "inner = {inner_active}");
            // The slow inner member is still counted by the outer group.
            assert!(outer.active() >= 1);
            assert!(
                outer.wait().now_or_never().is_none(),
                "outer resolved early"
            );
            release_tx.send(()).unwrap();
            outer.wait().await;
            assert_eq!(get(&done), 1);
            assert_eq!(outer.active(), 0);
        });
    })
}

/// A member spawning through its own group again is counted once per task,
/// not once per chain link.
#[test]
fn respawning_into_own_group_counts_once() {
    with_timeout(|| {
        let ex = executor(1);
        ex.block_on(async {
            let group = Arc::new(TaskGroup::new());
            let (release_tx, release_rx) = oneshot::channel::<()>();
            let (spawned_tx, spawned_rx) = oneshot::channel::<()>();
            let (member_tx, member_rx) = oneshot::channel::<()>();
            let g = group.clone();
            group
                .spawn(async move {
                    let again = g.spawn(async move { release_rx.await.unwrap() });
                    spawned_tx.send(()).unwrap();
                    again.await.unwrap();
                    member_rx.await.unwrap();
                })
                .detach();
            spawned_rx.await.unwrap();
            assert_eq!(group.active(), 2);
            release_tx.send(()).unwrap();
            // The re-spawned task finishes; its member waits for it.
            while group.active() > 1 {
                yield_now().await;
            }
            assert_eq!(group.active(), 1);
            member_tx.send(()).unwrap();
            group.wait().await;
            assert_eq!(group.active(), 0);
        });
    })
}

/// Panicking and aborted members count out like finished ones.
#[test]
fn panicked_and_aborted_members_count_out() {
    with_timeout(|| {
        let ex = executor(2);
        ex.block_on(async {
            let group = TaskGroup::new();
            let panicked = group.spawn(async { panic!("member panic") });
            let mut aborted = group.spawn(std::future::pending::<()>());
            aborted.abort();
            // Awaiting the aborted handle completes the cancellation. (That
            // `abort()` alone should suffice is `abort_without_await.rs`.)
            assert!(aborted.await.unwrap_err().is_cancelled());
            group.wait().await;
            assert_eq!(group.active(), 0);
            assert!(panicked.await.unwrap_err().is_panic());
        });
    })
}

/// Several tasks may wait on the same group at once.
#[test]
fn several_waiters_on_one_group() {
    with_timeout(|| {
        let ex = executor(2);
        let woke = ex.block_on(async {
            let group = Arc::new(TaskGroup::new());
            let (tx, rx) = oneshot::channel::<()>();
            group.spawn(async move { rx.await.unwrap() }).detach();
            let waiters: Vec<_> = (0..4)
                .map(|_| {
                    let group = group.clone();
                    spawn(async move {
                        group.wait().await;
                        group.active()
                    })
                })
                .collect();
            tx.send(()).unwrap();
            let mut woke = Vec::new();
            for w in waiters {
                woke.push(w.await.unwrap());
            }
            woke
        });
        assert_eq!(woke, vec![0; 4]);
    })
}

/// Outside any executor, a group spawns onto the global executor and can be
/// waited on with the free `block_on`.
#[test]
fn group_on_global_executor() {
    with_timeout(|| {
        let done = counter();
        let group = TaskGroup::new();
        for _ in 0..4 {
            let d = done.clone();
            group
                .spawn(async move {
                    yields(10).await;
                    spawn(async move {
                        yields(10).await;
                        d.fetch_add(1, SeqCst);
                    })
                    .detach();
                })
                .detach();
        }
        fastexec::block_on(group.wait());
        assert_eq!(get(&done), 4);
        assert!(group.is_empty());
        // An empty group's wait resolves at once.
        fastexec::block_on(TaskGroup::new().wait());
    })
}
