//! `block_on` returns the root's value only after every task spawned under
//! it, transitively, has finished: late grandchildren, detached tasks and
//! tasks whose handles are still held.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use fastexec::{spawn, yield_now};
use futures::channel::oneshot;
use support::{counter, executor, get, with_timeout};

async fn yields(n: usize) {
    for _ in 0..n {
        yield_now().await;
    }
}

/// Children that spawn grandchildren only after a chain of yields, all
/// detached; the root returns before any of them has run.
fn late_grandchildren_after_yields(threads: usize) {
    with_timeout(move || {
        let ex = executor(threads);
        let children = counter();
        let grandchildren = counter();
        let (c, g) = (children.clone(), grandchildren.clone());
        let value = ex.block_on(async move {
            for _ in 0..8 {
                let (c, g) = (c.clone(), g.clone());
                spawn(async move {
                    yields(100).await;
                    spawn(async move {
                        yields(100).await;
                        g.fetch_add(1, SeqCst);
                    })
                    .detach();
                    c.fetch_add(1, SeqCst);
                })
                .detach();
            }
            "root value"
        });
        assert_eq!(value, "root value");
        assert_eq!(get(&children), 8);
        assert_eq!(get(&grandchildren), 8);
    })
}

#[test]
fn late_grandchildren_after_yields_one_thread() {
    late_grandchildren_after_yields(1);
}

#[test]
fn late_grandchildren_after_yields_two_threads() {
    late_grandchildren_after_yields(2);
}

/// A child spawns its grandchild only when a message arrives from a sibling
/// task, which sends it after yielding for a while.
fn late_grandchild_after_channel_message(threads: usize) {
    with_timeout(move || {
        let ex = executor(threads);
        let grandchildren = counter();
        let g = grandchildren.clone();
        let value = ex.block_on(async move {
            for _ in 0..16 {
                let (tx, rx) = oneshot::channel::<usize>();
                let g = g.clone();
                spawn(async move {
                    let n = rx.await.expect("sender kept alive until it sends");
                    spawn(async move {
                        yields(10).await;
                        g.fetch_add(n, SeqCst);
                    })
                    .detach();
                })
                .detach();
                spawn(async move {
                    yields(50).await;
                    tx.send(1).unwrap();
                })
                .detach();
            }
            7u64
        });
        assert_eq!(value, 7);
        assert_eq!(get(&grandchildren), 16);
    })
}

#[test]
fn late_grandchild_after_channel_message_one_thread() {
    late_grandchild_after_channel_message(1);
}

#[test]
fn late_grandchild_after_channel_message_two_threads() {
    late_grandchild_after_channel_message(2);
}

/// A chain 200 tasks deep, each level spawning the next after yielding.
#[test]
fn deep_chain_of_descendants() {
    fn level(depth: usize, reached: Arc<AtomicUsize>) {
        spawn(async move {
            yields(3).await;
            reached.fetch_max(depth, SeqCst);
            if depth < 200 {
                level(depth + 1, reached);
            }
        })
        .detach();
    }
    with_timeout(|| {
        let ex = executor(2);
        let reached = counter();
        let r = reached.clone();
        ex.block_on(async move { level(1, r) });
        assert_eq!(get(&reached), 200);
    })
}

/// Tasks whose handles the root returns, never awaited inside, have run to
/// the end by the time `block_on` returns: it waited for non-detached tasks
/// too. (Whether `is_finished()` agrees is checked in
/// `scope_end_state.rs`.)
#[test]
fn waits_for_tasks_whose_handles_are_returned() {
    with_timeout(|| {
        let ex = executor(2);
        let ran = counter();
        let r = ran.clone();
        let handles = ex.block_on(async move {
            (0..10u32)
                .map(|i| {
                    let r = r.clone();
                    spawn(async move {
                        yields(20).await;
                        r.fetch_add(1, SeqCst);
                        i * 2
                    })
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(get(&ran), 10);
        let values: Vec<u32> = handles
            .into_iter()
            .map(|h| futures::executor::block_on(h).unwrap())
            .collect();
        assert_eq!(values, (0..10).map(|i| i * 2).collect::<Vec<_>>());
    })
}

/// The root itself may be woken by a plain thread; its value is returned.
#[test]
fn root_woken_by_foreign_thread_returns_value() {
    with_timeout(|| {
        let ex = executor(1);
        let (tx, rx) = oneshot::channel::<String>();
        let sender = std::thread::spawn(move || tx.send("from a thread".to_string()).unwrap());
        let value = ex.block_on(async move { rx.await.unwrap() + "!" });
        sender.join().unwrap();
        assert_eq!(value, "from a thread!");
    })
}

/// The free function works the same way on the global executor.
#[test]
fn free_block_on_waits_for_descendants_on_global_executor() {
    with_timeout(|| {
        let done = counter();
        let d = done.clone();
        let value = fastexec::block_on(async move {
            for _ in 0..4 {
                let d = d.clone();
                spawn(async move {
                    yields(30).await;
                    spawn(async move {
                        yields(30).await;
                        d.fetch_add(1, SeqCst);
                    })
                    .detach();
                })
                .detach();
            }
            1 + 1
        });
        assert_eq!(value, 2);
        assert_eq!(get(&done), 4);
    })
}

/// A `block_on` with no children returns its root's value at once, even
/// while a task spawned from outside any `block_on` is still pending: that
/// task is not part of it.
#[test]
fn block_on_does_not_wait_for_unrelated_tasks() {
    with_timeout(|| {
        let ex = executor(1);
        let (tx, rx) = oneshot::channel::<()>();
        let unrelated = ex.spawn(async move { rx.await.is_ok() });
        assert_eq!(ex.block_on(async { 5 }), 5);
        assert_eq!(ex.block_on(std::future::ready(6)), 6);
        assert!(!unrelated.is_finished());
        tx.send(()).unwrap();
        assert!(futures::executor::block_on(unrelated).unwrap());
    })
}
