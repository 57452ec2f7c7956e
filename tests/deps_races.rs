//! Stress tests of the completion protocol's races on 2 workers: many
//! short rounds, each asserting what must hold whichever side wins. The
//! timeouts only guard against a hang (a lost release or wake-up).

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use fastexec::{Completion, CompletionError, Executor};
use support::{executor, spin_until, with_timeout, CountingWake};

/// A dependent of `dep` whose body counts its runs in `runs`.
fn counted_after(ex: &Executor, dep: &Completion<i32>, runs: &Arc<AtomicUsize>) -> Completion<i32> {
    let runs = runs.clone();
    ex.spawn_after(dep, move |v: Arc<i32>| async move {
        runs.fetch_add(1, Ordering::SeqCst);
        *v
    })
}

/// Polls `completion` once with a fresh counting waker.
fn poll_counted<T: Send + Sync + 'static>(
    completion: &mut Completion<T>,
) -> (Poll<Result<Arc<T>, CompletionError>>, Arc<CountingWake>) {
    let wake = Arc::new(CountingWake::default());
    let waker = Waker::from(wake.clone());
    let poll = Pin::new(completion).poll(&mut Context::from_waker(&waker));
    (poll, wake)
}

/// A dependent whose dependency had succeeded is queued by `spawn_after`
/// itself; aborted the moment it is returned, it runs at most once, its
/// completion agrees with whether it ran, and its own dependent (parked in
/// its node) follows it.
#[test]
fn a_dependent_queued_at_once_and_aborted_at_once_runs_at_most_once() {
    let (ran, cancelled) = with_timeout(|| {
        let ex = executor(2);
        let done = ex.spawn_completion(async { 1 });
        ex.block_on(done.clone()).expect("the dependency succeeds");
        let (mut ran, mut cancelled) = (0, 0);
        for _ in 0..3_000 {
            let runs = Arc::new(AtomicUsize::new(0));
            let after = counted_after(&ex, &done, &runs);
            let next = counted_after(&ex, &after, &Arc::new(AtomicUsize::new(0)));
            after.abort();
            let outcome = ex.block_on(after);
            let runs = runs.load(Ordering::SeqCst);
            match outcome {
                Ok(v) => {
                    assert_eq!((*v, runs), (1, 1), "succeeded without running once");
                    assert_eq!(*ex.block_on(next).unwrap(), 1);
                    ran += 1;
                }
                Err(err) => {
                    assert!(err.is_cancelled(), "{err}");
                    assert_eq!(runs, 0, "cancelled after its body ran");
                    let err = ex.block_on(next).unwrap_err();
                    assert!(err.failed_dependency().is_some(), "{err}");
                    cancelled += 1;
                }
            }
        }
        (ran, cancelled)
    });
    assert_eq!(ran + cancelled, 3_000);
    println!("ran {ran}, cancelled {cancelled}");
}

/// Awaiters registering while the task finishes on a worker, some dropped
/// before it finishes (their slots reused by the next): every awaiter that
/// was told to pend is woken, and then sees the output, and the node ends
/// with no waiter slot left.
#[test]
fn awaiters_registering_while_the_task_finishes_are_all_woken() {
    let pended = with_timeout(|| {
        let ex = executor(2);
        let mut pended = 0;
        for i in 0..3_000 {
            let task = ex.spawn_completion(async move { i });
            let mut dropped = task.clone();
            let _ = poll_counted(&mut dropped);
            let mut kept = [task.clone(), task.clone()];
            let first = poll_counted(&mut kept[0]);
            drop(dropped);
            let second = poll_counted(&mut kept[1]);
            for (awaiter, (poll, wake)) in kept.iter_mut().zip([first, second]) {
                if poll.is_pending() {
                    pended += 1;
                    assert!(spin_until(|| wake.count() == 1), "a lost wake-up");
                }
                let (poll, _) = poll_counted(awaiter);
                assert!(matches!(poll, Poll::Ready(Ok(v)) if *v == i));
            }
            // The finisher may still be about to empty the lists: an
            // awaiter can see the outcome before it takes the lock.
            assert!(
                spin_until(|| task.waiter_slots() == 0),
                "a finished node keeps no waiters"
            );
        }
        pended
    });
    println!("{pended} awaiters pended");
}

/// Five dependents (two in place, three out of line, one in a slot an
/// awaiter left) registered while their dependency finishes on a worker:
/// each runs exactly once.
#[test]
fn dependents_registering_in_and_out_of_line_while_the_task_finishes_run_once() {
    with_timeout(|| {
        let ex = executor(2);
        for i in 0..2_000 {
            let runs = Arc::new(AtomicUsize::new(0));
            let root = ex.spawn_completion(async move { i });
            let mut awaiter = root.clone();
            let _ = poll_counted(&mut awaiter);
            let mut dependents = vec![counted_after(&ex, &root, &runs)];
            drop(awaiter);
            dependents.extend((0..4).map(|_| counted_after(&ex, &root, &runs)));
            for dependent in dependents {
                assert_eq!(*ex.block_on(dependent).unwrap(), i);
            }
            assert_eq!(runs.load(Ordering::SeqCst), 5, "each dependent ran once");
        }
    });
}

/// A dependency aborted on one thread while the test thread aborts its
/// dependents: no dependent ever runs, and each reports either its own
/// cancellation or the upstream one, as the race went.
#[test]
fn aborts_racing_with_a_failure_propagation_never_run_a_dependent() {
    let (own, upstream) = with_timeout(|| {
        let ex = executor(2);
        let (mut own, mut upstream) = (0, 0);
        for _ in 0..500 {
            let root = ex.spawn_completion(std::future::pending::<i32>());
            let runs = Arc::new(AtomicUsize::new(0));
            let dependents: Vec<_> = (0..16).map(|_| counted_after(&ex, &root, &runs)).collect();
            let aborter = {
                let root = root.clone();
                std::thread::spawn(move || root.abort())
            };
            for dependent in &dependents {
                dependent.abort();
            }
            aborter.join().unwrap();
            for dependent in dependents {
                let err = ex.block_on(dependent).unwrap_err();
                if err.is_cancelled() {
                    own += 1;
                } else {
                    assert!(err.failed_dependency().is_some(), "{err}");
                    upstream += 1;
                }
            }
            assert_eq!(runs.load(Ordering::SeqCst), 0, "a dependent ran");
        }
        (own, upstream)
    });
    assert_eq!(own + upstream, 500 * 16);
    println!("own cancellation {own}, upstream {upstream}");
}

/// A dependency cancelled on another thread while `spawn_after` registers
/// with it (and with a second, pending one; the rounds where the failure
/// reached the dependent while `spawn_after` ran are counted and printed,
/// to show the race is hit): the dependent never runs,
/// reports the upstream failure, and its task, built or not, is dropped
/// (its body's captures go, and the enclosing `block_on`, which counts it,
/// returns).
#[test]
fn a_dependency_failing_while_the_dependent_registers_never_runs_it() {
    let upstream = with_timeout(|| {
        let ex = executor(2);
        let drops = support::DropCounter::new();
        let runs = Arc::new(AtomicUsize::new(0));
        let mut finished_during_spawn = 0;
        for round in 0..2_000 {
            // A dependent not yet started: its abort finishes it, and
            // releases its dependents, on the aborting thread at once.
            let pending = ex.spawn_completion(std::future::pending::<i32>());
            let failing = ex.spawn_after(&pending, |_| async { 0 });
            let (ready, go) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let aborter = {
                let (failing, ready, go) = (failing.clone(), ready.clone(), go.clone());
                std::thread::spawn(move || {
                    ready.store(1, Ordering::SeqCst);
                    while go.load(Ordering::SeqCst) == 0 {
                        std::hint::spin_loop();
                    }
                    failing.abort();
                })
            };
            let (guard, ran) = (drops.guard(), runs.clone());
            let (err, finished_during) = ex.block_on(async {
                assert!(spin_until(|| ready.load(Ordering::SeqCst) == 1));
                go.store(1, Ordering::SeqCst);
                let before = failing.is_finished();
                let after = fastexec::spawn_after((&failing, &pending), move |_| async move {
                    drop(guard);
                    ran.fetch_add(1, Ordering::SeqCst);
                });
                let during = !before && after.is_finished();
                aborter.join().unwrap();
                (after.await.unwrap_err(), during)
            });
            finished_during_spawn += usize::from(finished_during);
            assert!(err.failed_dependency().is_some(), "{err}");
            assert_eq!(drops.count(), round + 1, "the unstarted task was dropped");
            pending.abort();
        }
        assert_eq!(runs.load(Ordering::SeqCst), 0, "a dependent ran");
        println!("failed while spawn_after ran: {finished_during_spawn}");
        drops.count()
    });
    assert_eq!(upstream, 2_000);
}
