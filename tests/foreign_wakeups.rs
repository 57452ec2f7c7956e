//! Tasks woken by plain `std::thread`s, not by the executor's own threads:
//! the worker that sleeps must be woken, and no wake-up may be lost.

mod support;

use std::sync::mpsc;

use futures::channel::{mpsc as fmpsc, oneshot};
use futures::StreamExt;
use support::{executor, with_timeout, TIMEOUT};

fn oneshot_from_thread(threads: usize) {
    with_timeout(move || {
        let ex = executor(threads);
        let (tx, rx) = oneshot::channel::<&str>();
        let (waiting_tx, waiting_rx) = mpsc::channel::<()>();
        let handle = ex.spawn(async move {
            waiting_tx.send(()).unwrap();
            rx.await.unwrap()
        });
        let thread = std::thread::spawn(move || {
            waiting_rx.recv_timeout(TIMEOUT).unwrap();
            tx.send("hello from a plain thread").unwrap();
        });
        let got = futures::executor::block_on(handle).unwrap();
        thread.join().unwrap();
        assert_eq!(got, "hello from a plain thread");
    })
}

#[test]
fn oneshot_completed_by_plain_thread_one_worker() {
    oneshot_from_thread(1);
}

#[test]
fn oneshot_completed_by_plain_thread_two_workers() {
    oneshot_from_thread(2);
}

/// A task and a plain thread pass a number back and forth many times; every
/// round the task parks and the worker goes idle until the thread wakes it.
fn ping_pong(threads: usize) {
    with_timeout(move || {
        // Fewer under Miri (`scripts/miri`), where a round takes ~50 ms.
        const ROUNDS: u64 = if cfg!(miri) { 200 } else { 5_000 };
        let ex = executor(threads);
        let (to_thread, from_task) = mpsc::channel::<u64>();
        let (to_task, mut from_thread) = fmpsc::unbounded::<u64>();
        let thread = std::thread::spawn(move || {
            while let Ok(n) = from_task.recv() {
                to_task.unbounded_send(n + 1).unwrap();
            }
        });
        let last = ex.block_on(async move {
            fastexec::spawn(async move {
                let mut n = 0;
                for _ in 0..ROUNDS {
                    to_thread.send(n).unwrap();
                    n = from_thread.next().await.expect("thread alive");
                }
                n
            })
            .await
            .unwrap()
        });
        thread.join().unwrap();
        assert_eq!(last, ROUNDS);
    })
}

#[test]
fn ping_pong_with_plain_thread_one_worker() {
    ping_pong(1);
}

#[test]
fn ping_pong_with_plain_thread_two_workers() {
    ping_pong(2);
}

/// Many parked tasks completed by several plain threads at once.
#[test]
fn many_tasks_woken_by_many_threads() {
    with_timeout(|| {
        let ex = executor(2);
        let mut senders = Vec::new();
        let handles: Vec<_> = (0..400u32)
            .map(|i| {
                let (tx, rx) = oneshot::channel::<u32>();
                senders.push((i, tx));
                ex.spawn(async move { rx.await.unwrap() * 2 })
            })
            .collect();
        let mut buckets: Vec<Vec<_>> = (0..4).map(|_| Vec::new()).collect();
        for (i, tx) in senders {
            buckets[i as usize % 4].push((i, tx));
        }
        let threads: Vec<_> = buckets
            .into_iter()
            .map(|bucket| {
                std::thread::spawn(move || {
                    for (i, tx) in bucket {
                        tx.send(i).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let results: Vec<u32> = handles
            .into_iter()
            .map(|h| futures::executor::block_on(h).unwrap())
            .collect();
        assert_eq!(results, (0..400).map(|i| i * 2).collect::<Vec<_>>());
    })
}

/// Tasks woken from the workers of another executor: the wake must reach the
/// task's own executor and run it there, not on the waker's.
#[test]
fn tasks_woken_by_another_executors_workers() {
    with_timeout(|| {
        let named = |name: &str, threads| {
            fastexec::Executor::builder()
                .threads(threads)
                .thread_name(name)
                .build()
                .expect("start executor")
        };
        let (ours, theirs) = (named("ours", 2), named("theirs", 1));
        let (senders, handles): (Vec<_>, Vec<_>) = (0..100u32)
            .map(|i| {
                let (tx, rx) = oneshot::channel::<u32>();
                let handle = ours.spawn(async move {
                    let got = rx.await.unwrap();
                    (got, std::thread::current().name().map(str::to_owned))
                });
                ((i, tx), handle)
            })
            .unzip();
        let sent = theirs.spawn(async move {
            for (i, tx) in senders {
                tx.send(i).unwrap();
            }
        });
        futures::executor::block_on(sent).unwrap();
        for (i, handle) in handles.into_iter().enumerate() {
            let (got, thread) = futures::executor::block_on(handle).unwrap();
            assert_eq!(got, i as u32);
            let thread = thread.unwrap_or_default();
            assert!(thread.starts_with("ours-"), "task {i} ran on {thread}");
        }
    })
}
