//! When `block_on` or `TaskGroup::wait` returns, the tasks of its scope
//! have *finished*: their handles say so, and the outputs of detached ones
//! have been dropped.
//!
//! Each check is repeated, since what it catches is a window between a
//! task's future being dropped and its completion being recorded.

mod support;

use fastexec::{spawn, yield_now, TaskGroup};
use support::{executor, with_timeout, DropCounter};

const ROUNDS: usize = 200;

/// A big output takes a while to store, which widens the window.
type BigOutput = [u64; 8192];

/// Handles returned out of `block_on` all report `is_finished()`.
#[test]
fn handles_are_finished_when_block_on_returns() {
    with_timeout(|| {
        let ex = executor(2);
        for round in 0..ROUNDS {
            let handles = ex.block_on(async {
                (0..4)
                    .map(|_| {
                        spawn(async {
                            yield_now().await;
                            [7; 8192]
                        })
                    })
                    .collect::<Vec<_>>()
            });
            let unfinished = handles.iter().filter(|h| !h.is_finished()).count();
            assert_eq!(
                unfinished, 0,
                "round {round}: handles not finished after block_on"
            );
            for h in handles {
                let out: BigOutput = futures::executor::block_on(h).unwrap();
                assert_eq!(out[0], 7);
            }
        }
    })
}

/// The output of a detached task is dropped before `block_on` returns.
#[test]
fn detached_outputs_dropped_when_block_on_returns() {
    with_timeout(|| {
        let ex = executor(2);
        for round in 0..ROUNDS {
            let drops = DropCounter::new();
            let d = drops.clone();
            ex.block_on(async move {
                spawn(async move {
                    yield_now().await;
                    (0..1000).map(|_| d.guard()).collect::<Vec<_>>()
                })
                .detach();
            });
            assert_eq!(
                drops.count(),
                1000,
                "round {round}: a detached task's output outlived block_on"
            );
        }
    })
}

/// After `group.wait()`, the members' handles report `is_finished()`.
#[test]
fn handles_are_finished_when_group_wait_returns() {
    with_timeout(|| {
        let ex = executor(2);
        for round in 0..ROUNDS {
            let unfinished = ex.block_on(async {
                let group = TaskGroup::new();
                let handles: Vec<_> = (0..4)
                    .map(|_| {
                        group.spawn(async {
                            yield_now().await;
                            [1u64; 8192]
                        })
                    })
                    .collect();
                group.wait().await;
                handles.iter().filter(|h| !h.is_finished()).count()
            });
            assert_eq!(
                unfinished, 0,
                "round {round}: members not finished after wait"
            );
        }
    })
}

/// After a cancelled group's `wait()`, its members' handles report
/// `is_finished()` too: a member ended by the cancel hands its place in
/// the group to the worker, as a completing one does, rather than leave
/// while async-task is still storing its (cancelled) output.
#[test]
fn cancelled_members_are_finished_when_group_wait_returns() {
    with_timeout(|| {
        let ex = executor(2);
        for round in 0..ROUNDS {
            let group = TaskGroup::new();
            let (parked, all_parked) = std::sync::mpsc::channel();
            // Spawned from this thread, which runs no task: members that
            // park until the cancel ends them.
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let parked = parked.clone();
                    group.spawn(async move {
                        parked.send(()).unwrap();
                        std::future::pending::<()>().await;
                        [1u64; 8192]
                    })
                })
                .collect();
            for _ in 0..4 {
                all_parked.recv().unwrap();
            }
            group.cancel();
            ex.block_on(group.wait());
            let unfinished = handles.iter().filter(|h| !h.is_finished()).count();
            assert_eq!(
                unfinished, 0,
                "round {round}: cancelled members not finished after wait"
            );
        }
    })
}
