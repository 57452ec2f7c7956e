//! `Executor::builder()`: thread count and names, bad thread counts, and
//! the `Executor`/`JoinHandle` accessors.

mod support;

use std::collections::HashSet;
use std::sync::mpsc;

use fastexec::{spawn, Executor};
use support::{executor, with_timeout, Rendezvous, TIMEOUT};

#[test]
fn threads_reports_configured_count() {
    with_timeout(|| {
        for n in [1, 2, 3] {
            assert_eq!(executor(n).threads(), n);
        }
    })
}

/// Three workers really exist: three tasks meet at a three-party barrier,
/// each on its own thread.
#[test]
fn three_threads_run_three_tasks_at_once() {
    with_timeout(|| {
        let ex = executor(3);
        let barrier = Rendezvous::new(3);
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let barrier = barrier.clone();
                ex.spawn(async move { (barrier.wait(), std::thread::current().id()) })
            })
            .collect();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| futures::executor::block_on(h).unwrap())
            .collect();
        assert!(results.iter().all(|(met, _)| *met));
        let ids: HashSet<_> = results.iter().map(|(_, id)| *id).collect();
        assert_eq!(ids.len(), 3);
    })
}

#[test]
#[should_panic]
fn zero_threads_panics() {
    let _ = Executor::builder().threads(0);
}

/// Worker threads are named after the prefix, as seen from inside tasks.
#[test]
fn thread_name_prefix_is_visible_in_tasks() {
    with_timeout(|| {
        let ex = Executor::builder()
            .threads(2)
            .thread_name("crunch")
            .build()
            .unwrap();
        let barrier = Rendezvous::new(2);
        let names: Vec<String> = ex.block_on(async move {
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let barrier = barrier.clone();
                    spawn(async move {
                        assert!(barrier.wait(), "both workers should run");
                        std::thread::current().name().unwrap_or("").to_string()
                    })
                })
                .collect();
            let mut names = Vec::new();
            for h in handles {
                names.push(h.await.unwrap());
            }
            names
        });
        for name in &names {
            assert!(name.starts_with("crunch"), "worker thread name {name:?}");
        }
        assert_ne!(names[0], names[1], "each worker has its own name");
    })
}

/// Without a prefix, workers get the documented default name.
#[test]
fn default_thread_name() {
    with_timeout(|| {
        let ex = Executor::builder().threads(1).build().unwrap();
        let name = futures::executor::block_on(
            ex.spawn(async { std::thread::current().name().map(str::to_string) }),
        )
        .unwrap();
        let name = name.expect("worker threads are named");
        assert!(name.starts_with("fastexec-worker"), "{name:?}");
    })
}

/// The default builder starts at least one thread.
#[test]
fn default_builder_builds() {
    with_timeout(|| {
        let ex = Executor::builder().build().unwrap();
        assert!(ex.threads() >= 1);
        assert_eq!(ex.block_on(async { spawn(async { 1 }).await.unwrap() }), 1);
    })
}

/// An `Executor` can be shared by reference across threads that spawn and
/// block on it concurrently.
#[test]
fn executor_shared_across_threads() {
    with_timeout(|| {
        let ex = executor(2);
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let (ex, tx) = (&ex, tx.clone());
                scope.spawn(move || {
                    let sum = ex.block_on(async move {
                        let parts: Vec<_> =
                            (0..10).map(|i| spawn(async move { t * 10 + i })).collect();
                        let mut sum = 0;
                        for p in parts {
                            sum += p.await.unwrap();
                        }
                        sum
                    });
                    tx.send(sum).unwrap();
                });
            }
        });
        let mut sums: Vec<u64> = (0..4).map(|_| rx.recv_timeout(TIMEOUT).unwrap()).collect();
        sums.sort();
        assert_eq!(sums, vec![45, 145, 245, 345]);
    })
}

/// `is_finished` is false while a task waits and true once it completed.
#[test]
fn join_handle_is_finished() {
    with_timeout(|| {
        let ex = executor(1);
        let (tx, rx) = futures::channel::oneshot::channel::<u8>();
        let (started_tx, started_rx) = mpsc::channel();
        let handle = ex.spawn(async move {
            started_tx.send(()).unwrap();
            rx.await.unwrap()
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        assert!(!handle.is_finished());
        tx.send(3).unwrap();
        assert!(support::spin_until(|| handle.is_finished()));
        assert_eq!(futures::executor::block_on(handle).unwrap(), 3);
    })
}

/// The free `spawn` outside any executor uses the global one.
#[test]
fn free_spawn_outside_executor_uses_global() {
    with_timeout(|| {
        let handle = spawn(async { std::thread::current().name().map(str::to_string) });
        let name = futures::executor::block_on(handle).unwrap();
        assert!(name.is_some_and(|n| n.starts_with("fastexec-worker")));
        let from_thread =
            std::thread::spawn(|| futures::executor::block_on(spawn(async { 6 * 7 })));
        assert_eq!(from_thread.join().unwrap().unwrap(), 42);
    })
}

/// No thread's name can hold a NUL: `build` says so with an error (before,
/// the first worker's spawn panicked inside it).
#[test]
fn a_thread_name_prefix_with_a_nul_is_an_invalid_input_error() {
    let err = Executor::builder()
        .threads(1)
        .thread_name("nul\0name")
        .build()
        .map(drop)
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("NUL"), "{err}");
}
