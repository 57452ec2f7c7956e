//! `block_on` and `wait!` called inside a task keep the worker running other
//! tasks, so they do not deadlock even a one-thread executor.

mod support;

use std::sync::atomic::Ordering::SeqCst;

use fastexec::{spawn, yield_now};
use futures::channel::oneshot;
use support::{counter, executor, get, named, thread_name, with_timeout};

/// A task on the only worker blocks in `block_on` on a child task, which can
/// only run on that same worker.
#[test]
fn nested_block_on_in_task_one_thread() {
    with_timeout(|| {
        let ex = executor(1);
        let value = ex.block_on(async {
            spawn(async {
                let inner = fastexec::block_on(async {
                    let child = spawn(async {
                        yield_now().await;
                        20
                    });
                    child.await.unwrap() + 1
                });
                inner * 2
            })
            .await
            .unwrap()
        });
        assert_eq!(value, 42);
    })
}

/// `block_on` inside `block_on` inside a task, on one worker.
#[test]
fn nested_block_on_twice_one_thread() {
    with_timeout(|| {
        let ex = executor(1);
        let value = ex.block_on(async {
            spawn(async {
                fastexec::block_on(async {
                    let middle = spawn(async {
                        fastexec::block_on(async {
                            let leaf = spawn(async {
                                yield_now().await;
                                1
                            });
                            leaf.await.unwrap() + 10
                        })
                    });
                    middle.await.unwrap() + 100
                })
            })
            .await
            .unwrap()
        });
        assert_eq!(value, 111);
    })
}

/// `wait!` on handles inside a task, on one worker.
#[test]
fn wait_macro_in_task_one_thread() {
    with_timeout(|| {
        let ex = executor(1);
        let value = ex.block_on(async {
            spawn(async {
                let a = spawn(async {
                    yield_now().await;
                    2
                });
                let b = spawn(async { 3 });
                let (a, b) = fastexec::wait!(a, b);
                a * b
            })
            .await
            .unwrap()
        });
        assert_eq!(value, 6);
    })
}

/// `wait!` inside `wait!` inside a task, on one worker.
#[test]
fn wait_macro_nested_twice_one_thread() {
    with_timeout(|| {
        let ex = executor(1);
        let value = ex.block_on(async {
            spawn(async {
                let outer = spawn(async {
                    let inner = spawn(async { 5 });
                    let (inner,) = fastexec::wait!(inner);
                    inner + 1
                });
                let (outer, plain) = fastexec::wait!(outer, async { 10 });
                outer + plain
            })
            .await
            .unwrap()
        });
        assert_eq!(value, 16);
    })
}

/// The nested root waits for a message from a task queued behind the
/// blocked task on the same worker: the worker must run that task.
#[test]
fn nested_block_on_runs_tasks_queued_behind_it() {
    with_timeout(|| {
        let ex = executor(1);
        let value = ex.block_on(async {
            let (tx, rx) = oneshot::channel::<u32>();
            let blocked = spawn(async move { fastexec::block_on(rx).unwrap() + 1 });
            spawn(async move { tx.send(41).unwrap() }).detach();
            blocked.await.unwrap()
        });
        assert_eq!(value, 42);
    })
}

/// Twenty tasks on one worker each block in `block_on`, stacked on the
/// worker's stack. Each waits for a message from the task spawned after it
/// (the last one from a starter task), so the blocks unwind top-down.
/// (The reverse dependency, a lower block waiting for a higher one's
/// message, cannot work on one thread's stack and is not promised.)
#[test]
fn stacked_nested_block_ons_one_thread() {
    with_timeout(|| {
        let ex = executor(1);
        let (last, sum) = ex.block_on(async {
            let (root_tx, root_rx) = oneshot::channel::<u32>();
            let mut next_tx = root_tx;
            let mut handles = Vec::new();
            for _ in 0..20 {
                let (tx, rx) = oneshot::channel::<u32>();
                let to_previous = std::mem::replace(&mut next_tx, tx);
                handles.push(spawn(async move {
                    let got = fastexec::block_on(rx).unwrap();
                    to_previous.send(got + 1).unwrap();
                    got
                }));
            }
            spawn(async move { next_tx.send(0).unwrap() }).detach();
            let last = root_rx.await.unwrap();
            let mut sum = 0;
            for h in handles {
                sum += h.await.unwrap();
            }
            (last, sum)
        });
        assert_eq!(last, 20);
        assert_eq!(sum, (0..20).sum::<u32>());
    })
}

/// A nested `block_on` on a worker whose root is woken by a plain thread:
/// the parked worker must be woken by that foreign wake.
#[test]
fn nested_block_on_woken_by_foreign_thread() {
    with_timeout(|| {
        let ex = executor(1);
        let value = ex.block_on(async {
            spawn(async {
                let (tx, rx) = oneshot::channel::<u32>();
                let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
                let thread = std::thread::spawn(move || {
                    go_rx.recv().unwrap();
                    tx.send(9).unwrap();
                });
                let v = fastexec::block_on(async move {
                    go_tx.send(()).unwrap();
                    rx.await.unwrap()
                });
                thread.join().unwrap();
                v
            })
            .await
            .unwrap()
        });
        assert_eq!(value, 9);
    })
}

/// A nested `block_on` waits for its own late descendants before returning
/// inside the task.
#[test]
fn nested_block_on_waits_for_its_descendants() {
    with_timeout(|| {
        let ex = executor(1);
        let seen = ex.block_on(async {
            spawn(async {
                let done = counter();
                let d = done.clone();
                fastexec::block_on(async move {
                    for _ in 0..5 {
                        let d = d.clone();
                        spawn(async move {
                            for _ in 0..10 {
                                yield_now().await;
                            }
                            spawn(async move {
                                yield_now().await;
                                d.fetch_add(1, SeqCst);
                            })
                            .detach();
                        })
                        .detach();
                    }
                });
                get(&done)
            })
            .await
            .unwrap()
        });
        assert_eq!(seen, 5);
    })
}

/// `Executor::block_on` from inside one of its own tasks behaves like the
/// free function.
#[test]
fn executor_block_on_inside_own_task() {
    with_timeout(|| {
        let ex = std::sync::Arc::new(executor(1));
        let inner_ex = ex.clone();
        let value = ex.block_on(async move {
            spawn(async move {
                inner_ex.block_on(async {
                    let child = spawn(async { 8 });
                    child.await.unwrap()
                })
            })
            .await
            .unwrap()
        });
        assert_eq!(value, 8);
    })
}

/// A worker of one executor running another executor's `block_on`: what it
/// spawns there goes to the other executor (and that `block_on` waits for
/// it); once that `block_on` returns, its spawns go to its own executor
/// again.
#[test]
fn spawns_in_another_executors_block_on_go_to_that_executor() {
    with_timeout(|| {
        let home = named(1, "home");
        let away = std::sync::Arc::new(named(1, "away"));
        let (inner, outer) = home
            .block_on(home.spawn(async move {
                let (tx, rx) = std::sync::mpsc::channel();
                let inner = away.block_on(async move {
                    let child = spawn(async move { tx.send(thread_name()).unwrap() });
                    drop(child);
                    thread_name()
                });
                // The detached child was waited for by `away`'s block_on.
                let child_ran_on = rx.try_recv().expect("block_on returned before its child");
                assert!(child_ran_on.starts_with("away"), "{child_ran_on}");
                let outer = spawn(async { thread_name() }).await.unwrap();
                (inner, outer)
            }))
            .unwrap();
        assert!(
            inner.starts_with("home"),
            "the root runs on the caller: {inner}"
        );
        assert!(outer.starts_with("home"), "{outer}");
    })
}

/// A nested `block_on` whose future waits for another task by yielding in
/// a loop, on the only worker: the worker runs a queued task between two
/// polls of that future (before, each yield woke it and it was polled
/// again at once, and the task it waited for never ran).
#[test]
fn nested_block_on_of_a_yielding_future_lets_queued_tasks_run() {
    with_timeout(|| {
        let ex = executor(1);
        let task = ex.spawn(async {
            fastexec::block_on(async {
                let set = counter();
                let setter = set.clone();
                spawn(async move { setter.store(1, SeqCst) }).detach();
                let mut yields = 0u64;
                while get(&set) == 0 {
                    yield_now().await;
                    yields += 1;
                }
                yields
            })
        });
        let yields = ex.block_on(task).unwrap();
        assert!(yields <= 2, "the spawned task ran after {yields} yields");
    })
}
