//! Tasks posted from two threads outside the executor: the first to post
//! owns the executor's outside ring, the other posts to the injector. With
//! one worker each thread's tasks start in the order it posted them, past
//! the ring's capacity; and an executor dropped with posted tasks still
//! queued drops every one of them that did not run.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;

use support::{executor, with_timeout, TIMEOUT};

/// Tasks each thread posts: several times the ring's 256 slots, so the
/// owner's ring overflows while the worker is blocked (still twice under
/// Miri, `scripts/miri`, where each post is a thousand times slower).
const PER_THREAD: usize = if cfg!(miri) { 600 } else { 1_000 };

/// Blocks the only worker of `ex` until the returned sender is used.
fn block_worker(ex: &fastexec::Executor) -> (mpsc::Sender<()>, fastexec::JoinHandle<()>) {
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let blocker = ex.spawn(async move {
        started_tx.send(()).unwrap();
        let _ = release_rx.recv();
    });
    started_rx.recv_timeout(TIMEOUT).expect("blocker running");
    (release_tx, blocker)
}

#[test]
fn each_outside_thread_keeps_its_order() {
    with_timeout(|| {
        let ex = Arc::new(executor(1));
        let (release, blocker) = block_worker(&ex);
        let order = Arc::new(Mutex::new(Vec::new()));
        // The test thread posted the blocker, so it owns the ring; the
        // second thread posts to the injector. Both post at once.
        let both = Arc::new(Barrier::new(2));
        let other = {
            let (ex, order, both) = (ex.clone(), order.clone(), both.clone());
            thread::spawn(move || {
                both.wait();
                (0..PER_THREAD)
                    .map(|i| {
                        let order = order.clone();
                        ex.spawn(async move { order.lock().unwrap().push((1, i)) })
                    })
                    .collect::<Vec<_>>()
            })
        };
        both.wait();
        let mut handles: Vec<_> = (0..PER_THREAD)
            .map(|i| {
                let order = order.clone();
                ex.spawn(async move { order.lock().unwrap().push((0, i)) })
            })
            .collect();
        handles.extend(other.join().unwrap());
        release.send(()).unwrap();
        ex.block_on(blocker).unwrap();
        for handle in handles {
            ex.block_on(handle).unwrap();
        }
        let order = order.lock().unwrap();
        assert_eq!(order.len(), 2 * PER_THREAD);
        for poster in [0, 1] {
            let started: Vec<usize> = order
                .iter()
                .filter(|(p, _)| *p == poster)
                .map(|&(_, i)| i)
                .collect();
            assert_eq!(
                started,
                (0..PER_THREAD).collect::<Vec<_>>(),
                "poster {poster}"
            );
        }
    })
}

/// Counts a future that was dropped, whether or not it ran.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn dropping_the_executor_drops_posted_tasks() {
    with_timeout(|| {
        let ex = executor(1);
        let (release, blocker) = block_worker(&ex);
        let dropped = Arc::new(AtomicUsize::new(0));
        let ran = Arc::new(AtomicUsize::new(0));
        for _ in 0..PER_THREAD {
            let guard = Dropped(dropped.clone());
            let ran = ran.clone();
            ex.spawn(async move {
                let _guard = guard;
                ran.fetch_add(1, Ordering::SeqCst);
            })
            .detach();
        }
        // The worker may run some of them before it sees the shutdown.
        release.send(()).unwrap();
        drop(blocker);
        drop(ex);
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            PER_THREAD,
            "every future dropped"
        );
        assert!(ran.load(Ordering::SeqCst) <= PER_THREAD);
    })
}
