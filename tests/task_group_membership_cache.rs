//! A worker keeps the membership of the last group task it polled as a
//! cache: a task of another scope, or of none, polled after it must still
//! spawn into its own groups, and a task polled inside another task's poll
//! must put the outer membership back.
//!
//! Membership is observed through cancellation: cancelling a group drops the
//! futures of exactly its members (descendants included), each of which
//! carries a [`Tag`] that counts its drop.

mod support;

use std::future::pending;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};

use fastexec::{spawn, TaskGroup};
use futures::channel::mpsc::unbounded;
use futures::StreamExt;
use support::{counter, executor, with_timeout};

/// Counts its own drop.
struct Tag(Arc<AtomicUsize>);

impl Drop for Tag {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// A task that never ends by itself and counts its drop on `dropped`.
fn tagged_forever(dropped: &Arc<AtomicUsize>) -> impl std::future::Future<Output = ()> + Send {
    let tag = Tag(dropped.clone());
    async move {
        let _tag = tag;
        pending::<()>().await
    }
}

/// Members of two groups take turns on one worker, each spawning two
/// children with `fastexec::spawn`: every child lands in its parent's group
/// only. Each member is spawned once the previous member's children were
/// polled, so it finds the other group's membership cached on the worker.
#[test]
fn alternating_groups_on_one_worker_spawn_into_their_own() {
    with_timeout(|| {
        let ex = executor(1);
        let (dropped_a, dropped_b) = (counter(), counter());
        ex.block_on(async {
            let (a, b) = (TaskGroup::new(), TaskGroup::new());
            let (polled, mut children_polled) = unbounded::<()>();
            for i in 0..10 {
                let (group, dropped) = if i % 2 == 0 {
                    (&a, dropped_a.clone())
                } else {
                    (&b, dropped_b.clone())
                };
                let polled = polled.clone();
                let member = group.spawn(async move {
                    for _ in 0..2 {
                        let (polled, body) = (polled.clone(), tagged_forever(&dropped));
                        spawn(async move {
                            polled.unbounded_send(()).expect("test gone");
                            body.await
                        })
                        .detach();
                    }
                });
                member.await.expect("member failed");
                for _ in 0..2 {
                    children_polled.next().await.expect("child lost");
                }
            }
            a.cancel();
            a.wait().await;
            assert_eq!(
                dropped_a.load(SeqCst),
                10,
                "a child of an `a` member was not in `a`"
            );
            assert_eq!(
                dropped_b.load(SeqCst),
                0,
                "a child of a `b` member was in `a`"
            );
            b.cancel();
            b.wait().await;
            assert_eq!(
                dropped_b.load(SeqCst),
                10,
                "a child of a `b` member was not in `b`"
            );
        });
    });
}

/// After a group member ran on the worker, a task in no group runs there
/// and spawns: the child is in no group, so the member's group is empty.
#[test]
fn task_in_no_group_after_a_member_spawns_outside_it() {
    with_timeout(|| {
        let ex = executor(1);
        let group = TaskGroup::new();
        ex.block_on(async {
            group.spawn(async {}).await.expect("member failed");
            group.wait().await;
        });
        let (started, is_started) = mpsc::channel();
        let (open, gate) = futures::channel::oneshot::channel::<()>();
        let outside = ex.spawn(async move {
            let child = spawn(async move { gate.await.expect("gate dropped") });
            started.send(()).expect("test gone");
            child.await.expect("child failed");
        });
        is_started.recv().expect("task in no group never ran");
        assert_eq!(
            group.active(),
            0,
            "the child joined the last member's group"
        );
        open.send(()).expect("child gone");
        ex.block_on(outside).expect("task in no group failed");
    });
}

/// A member blocks on its own executor, so its worker runs a member of
/// another group inside the first member's poll; afterwards the first
/// member's spawns are in its own group again.
#[test]
fn member_spawns_into_its_group_after_running_another_groups_task_inside_its_poll() {
    with_timeout(|| {
        let ex = Arc::new(executor(1));
        let dropped = counter();
        let ran_inside = counter();
        let (a, b) = (TaskGroup::new(), Arc::new(TaskGroup::new()));
        ex.block_on(async {
            let (ex2, b2, dropped2, ran2) =
                (ex.clone(), b.clone(), dropped.clone(), ran_inside.clone());
            a.spawn(async move {
                ex2.block_on(async move {
                    b2.spawn(async move {
                        ran2.fetch_add(1, SeqCst);
                    })
                    .await
                    .expect("inner member failed");
                });
                spawn(tagged_forever(&dropped2)).detach();
            })
            .await
            .expect("outer member failed");
            assert_eq!(ran_inside.load(SeqCst), 1);
            assert_eq!(b.active(), 0, "the child joined the inner member's group");
            a.cancel();
            a.wait().await;
            assert_eq!(
                dropped.load(SeqCst),
                1,
                "the child was not in the outer member's group"
            );
        });
    });
}

/// A `block_on` scope is counted by the references to its membership, so
/// the worker's cache of that membership must not be one: each round's
/// `block_on` returns although the worker polled its tasks one after
/// another (which caches the membership) and then has nothing else to poll
/// that would replace the cache. Every task of each round has run by then.
#[test]
fn block_on_returns_while_a_worker_caches_its_membership() {
    with_timeout(|| {
        let ex = executor(1);
        for round in 0..20 {
            let ran = counter();
            let spawned_ran = ran.clone();
            ex.block_on(async move {
                for _ in 0..4 {
                    let ran = spawned_ran.clone();
                    spawn(async move {
                        // A grandchild: spawned under the cached membership.
                        let again = ran.clone();
                        spawn(async move {
                            again.fetch_add(1, SeqCst);
                        })
                        .detach();
                        ran.fetch_add(1, SeqCst);
                    })
                    .detach();
                }
            });
            assert_eq!(ran.load(SeqCst), 8, "round {round}");
        }
    });
}
