//! `yield_now`, `join!` inside async code, and `wait!` with a mix of join
//! handles and plain futures.

mod support;

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use fastexec::{spawn, yield_now};
use support::{executor, with_timeout, CountingWake as CountingWaker};

/// `yield_now` is pending exactly once, waking its task, then ready.
#[test]
fn yield_now_pends_once_and_wakes() {
    let wakes = Arc::new(CountingWaker::default());
    let waker = Waker::from(wakes.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(yield_now());
    assert_eq!(fut.as_mut().poll(&mut cx), Poll::Pending);
    assert_eq!(wakes.0.load(SeqCst), 1);
    assert_eq!(fut.as_mut().poll(&mut cx), Poll::Ready(()));
}

/// A task that yields lets a task spawned before the yield run first, on a
/// one-thread executor.
#[test]
fn yield_now_lets_other_task_run() {
    with_timeout(|| {
        let ex = executor(1);
        let saw_flag = ex.block_on(async {
            spawn(async {
                let flag = Arc::new(AtomicUsize::new(0));
                let f = flag.clone();
                spawn(async move { f.store(1, SeqCst) }).detach();
                yield_now().await;
                flag.load(SeqCst)
            })
            .await
            .unwrap()
        });
        assert_eq!(saw_flag, 1);
    })
}

/// Two tasks that only yield to each other both make progress on one
/// worker: yielding is not a busy loop that starves the other.
#[test]
fn yielding_tasks_interleave() {
    with_timeout(|| {
        let ex = executor(1);
        let turns = Arc::new(std::sync::Mutex::new(Vec::new()));
        let t = turns.clone();
        ex.block_on(async move {
            spawn(async move {
                let handles: Vec<_> = (0..2)
                    .map(|id| {
                        let t = t.clone();
                        spawn(async move {
                            for _ in 0..3 {
                                t.lock().unwrap().push(id);
                                yield_now().await;
                            }
                        })
                    })
                    .collect();
                for h in handles {
                    h.await.unwrap();
                }
            })
            .await
            .unwrap()
        });
        assert_eq!(*turns.lock().unwrap(), vec![0, 1, 0, 1, 0, 1]);
    })
}

#[test]
fn join_macro_in_async_code() {
    with_timeout(|| {
        let ex = executor(2);
        let (a, b, c) = ex.block_on(async {
            let h = spawn(async { 40 });
            let (a, b, c) = fastexec::join!(h, async { "b" }, async {
                yield_now().await;
                2.5
            });
            (a.unwrap(), b, c)
        });
        assert_eq!((a, b, c), (40, "b", 2.5));
    })
}

/// `join!` polls its futures concurrently: two futures that each wait for
/// the other's message both complete.
#[test]
fn join_macro_is_concurrent() {
    with_timeout(|| {
        let ex = executor(1);
        let (x, y) = ex.block_on(async {
            let (tx1, rx1) = futures::channel::oneshot::channel::<u8>();
            let (tx2, rx2) = futures::channel::oneshot::channel::<u8>();
            fastexec::join!(
                async move {
                    tx1.send(1).unwrap();
                    rx2.await.unwrap()
                },
                async move {
                    tx2.send(2).unwrap();
                    rx1.await.unwrap()
                }
            )
        });
        assert_eq!((x, y), (2, 1));
    })
}

/// Handles give their task's value (not a `Result`), plain futures their
/// output, in argument order.
#[test]
fn wait_macro_with_mixed_handles_and_futures() {
    with_timeout(|| {
        let ex = executor(2);
        let number = ex.spawn(async { 7_u32 });
        let text = ex.spawn(async { String::from("seven") });
        let (n, plain, t, result) = fastexec::wait!(
            number,
            async { [1, 2, 3] },
            text,
            // A plain future whose output happens to be a Result stays one.
            async { Ok::<u8, ()>(9) },
        );
        let n: u32 = n;
        let t: String = t;
        assert_eq!(
            (n, plain, t.as_str(), result),
            (7, [1, 2, 3], "seven", Ok(9))
        );
    })
}

/// A single argument gives a one-element tuple.
#[test]
fn wait_macro_single_argument() {
    with_timeout(|| {
        let ex = executor(1);
        let (v,) = fastexec::wait!(ex.spawn(async { 'x' }));
        assert_eq!(v, 'x');
    })
}

/// `wait!` also waits for the tasks its futures spawned, like `block_on`.
#[test]
fn wait_macro_waits_for_spawned_descendants() {
    with_timeout(|| {
        let ex = executor(2);
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let seen = ex.block_on(async move {
            let c2 = c.clone();
            let ((),) = fastexec::wait!(async move {
                for _ in 0..10 {
                    let c = c2.clone();
                    spawn(async move {
                        yield_now().await;
                        c.fetch_add(1, SeqCst);
                    })
                    .detach();
                }
            });
            c.load(SeqCst)
        });
        assert_eq!(seen, 10);
        assert_eq!(count.load(SeqCst), 10);
    })
}
