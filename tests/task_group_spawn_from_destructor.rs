//! A task spawned by the destructor of a member's future is a member too,
//! as a task spawned by its poll is, also when that destructor runs
//! because the member was aborted or its group cancelled (outside any
//! poll): an enclosing `block_on` or `TaskGroup::wait` waits for it, and
//! the group's `cancel` reaches it. Before the fix such a task joined
//! whatever groups the dropping thread happened to be in (on a worker:
//! none), so it escaped them.

mod support;

use std::sync::atomic::AtomicUsize;
use std::sync::{mpsc, Arc};

use fastexec::{Executor, TaskGroup};
use support::{counter, executor, get, within, DropCounter, SpawnOnDrop, TIMEOUT};

/// A value that, when dropped, spawns a task that parks for good; with the
/// counter of that task's drop and of its polls.
fn spawner() -> (SpawnOnDrop, DropCounter, Arc<AtomicUsize>) {
    let (drops, polls) = (DropCounter::new(), counter());
    let spawner = SpawnOnDrop {
        drops: drops.clone(),
        polls: polls.clone(),
    };
    (spawner, drops, polls)
}

/// Checks that the task the spawner spawned (parked for good) is the one
/// member of `group` left, and that the group's cancel reaches it.
fn the_spawn_is_the_one_member_left(ex: &Executor, group: &TaskGroup, drops: &DropCounter) {
    assert_eq!(
        group.active(),
        1,
        "the task the destructor spawned (parked for good) is a member"
    );
    group.cancel();
    ex.block_on(group.wait());
    assert_eq!(drops.count(), 1, "the cancel reached it");
}

/// Spawns, from a task outside any group, a member of `group` that holds
/// `held` and parks for good; returns its handle once it has parked.
fn parked_member<H: Send + 'static>(
    ex: &Executor,
    group: &Arc<TaskGroup>,
    held: H,
) -> fastexec::JoinHandle<()> {
    let (parked_tx, parked_rx) = mpsc::channel();
    let (member_tx, member_rx) = mpsc::channel();
    let in_group = group.clone();
    // Spawned from a task, not from a `block_on`, which would wait for the
    // member.
    ex.spawn(async move {
        let member = in_group.spawn(async move {
            let _held = held;
            parked_tx.send(()).unwrap();
            std::future::pending::<()>().await
        });
        member_tx.send(member).unwrap();
    })
    .detach();
    let member = member_rx.recv_timeout(TIMEOUT).expect("member spawned");
    parked_rx.recv_timeout(TIMEOUT).expect("member parked");
    member
}

#[test]
fn a_task_spawned_by_an_aborted_members_destructor_counts_in_its_group() {
    within(30, || {
        let ex = executor(1);
        let group = Arc::new(TaskGroup::new());
        let (spawner, drops, _) = spawner();
        let mut member = parked_member(&ex, &group, spawner);
        member.abort();
        // Returns once the member's future, and so the spawner, is dropped.
        let err = futures::executor::block_on(member).unwrap_err();
        assert!(err.is_cancelled());
        the_spawn_is_the_one_member_left(&ex, &group, &drops);
    });
}

/// A member of `inner`, itself spawned by a member of `outer`, is ended by
/// `inner`'s cancel: the task its destructor spawns is not cancelled with
/// it (it runs, as a destructor's spawn did before the cancel reached it),
/// but it still counts in `outer`, whose `wait` (and an enclosing
/// `block_on`) waits for it.
#[test]
fn a_task_spawned_by_a_cancelled_members_destructor_counts_in_the_other_groups() {
    within(30, || {
        let ex = executor(1);
        let (outer, inner) = (Arc::new(TaskGroup::new()), Arc::new(TaskGroup::new()));
        let (spawner, drops, polls) = spawner();
        let (parked_tx, parked_rx) = mpsc::channel();
        let (in_outer, in_inner) = (outer.clone(), inner.clone());
        // Spawned from a task, not from a `block_on`, which would wait for
        // the members.
        let spawned = ex.spawn(async move {
            in_outer
                .spawn(async move {
                    in_inner
                        .spawn(async move {
                            let _spawner = spawner;
                            parked_tx.send(()).unwrap();
                            std::future::pending::<()>().await
                        })
                        .detach();
                })
                .await
        });
        futures::executor::block_on(spawned).unwrap().unwrap();
        parked_rx.recv_timeout(TIMEOUT).expect("member parked");
        assert_eq!(outer.active(), 1, "the member of both groups");
        inner.cancel();
        ex.block_on(inner.wait());
        // The member leaves `inner` before `outer`, on the one worker, which
        // runs this task only after that (and after the task the destructor
        // queued ahead of it).
        futures::executor::block_on(ex.spawn(async {})).unwrap();
        assert_eq!(
            outer.active(),
            1,
            "the task the destructor spawned (parked for good) is a member of outer"
        );
        assert_eq!(inner.active(), 0, "but not of the cancelled group");
        assert_eq!(get(&polls), 1, "it ran");
        outer.cancel();
        ex.block_on(outer.wait());
        assert_eq!(drops.count(), 1, "outer's cancel reached it");
    });
}

/// A detached member's output is dropped by the executor as the member
/// completes: a task the output's destructor spawns is a member too, so
/// the group's `wait` (and an enclosing `block_on`) waits for it. Before
/// the fix it joined no group: the output is dropped after the poll, while
/// nothing is installed on the worker.
#[test]
fn a_task_spawned_by_a_detached_members_dropped_output_counts_in_its_group() {
    within(30, || {
        let ex = executor(1);
        let group = Arc::new(TaskGroup::new());
        let (spawner, drops, _) = spawner();
        let in_group = group.clone();
        // The member runs after this poll, on the one worker: detached by
        // then, so its output (the spawner) is dropped as it completes.
        let spawned = ex.spawn(async move {
            in_group.spawn(async move { spawner }).detach();
        });
        futures::executor::block_on(spawned).unwrap();
        // The one worker runs this task only after the member, queued
        // ahead of it on its ring, has completed and left the group.
        futures::executor::block_on(ex.spawn(async {})).unwrap();
        the_spawn_is_the_one_member_left(&ex, &group, &drops);
    });
}

/// A future that holds `held` and panics when polled: its fields are
/// dropped after the panic, by the executor, not while the poll unwinds (as
/// an `async` block's locals would be).
struct PanicsHolding<H> {
    _held: H,
}

impl<H> std::future::Future for PanicsHolding<H> {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        panic!("a member that panics");
    }
}

/// A member whose poll panics has its future dropped after the panic: a
/// task the destructor of what it held spawns is a member too. Before the
/// fix it joined no group: the future was dropped once the member had
/// handed its place in the group to the worker, outside the poll.
#[test]
fn a_task_spawned_by_a_panicked_members_destructor_counts_in_its_group() {
    support::quiet_panics("a member that panics");
    within(30, || {
        let ex = executor(1);
        let group = Arc::new(TaskGroup::new());
        let (spawner, drops, _) = spawner();
        let (member_tx, member_rx) = mpsc::channel();
        let in_group = group.clone();
        ex.spawn(async move {
            let member = in_group.spawn(PanicsHolding { _held: spawner });
            member_tx.send(member).unwrap();
        })
        .detach();
        let member = member_rx.recv_timeout(TIMEOUT).expect("member spawned");
        assert!(futures::executor::block_on(member).unwrap_err().is_panic());
        // The one worker runs this task only after it has finished running
        // the member (and released its place in the group).
        futures::executor::block_on(ex.spawn(async {})).unwrap();
        the_spawn_is_the_one_member_left(&ex, &group, &drops);
    });
}
