//! Loom models of the completion protocol (`src/deps/`: the node's outcome,
//! lock and lists in `node.rs`, the spawner's token and the counter in
//! `dependencies.rs`): every dependent is released exactly once, and only
//! once all its dependencies succeeded, with their outputs visible to it; a
//! failure settles it exactly once, without a release; an awaiter is woken
//! exactly once, or sees the outcome when it polls.
//!
//! Dependencies are completions with no task, finished by hand; dependents
//! go through the real spawner, with a task that runs on the thread whose
//! decrement releases it (see `fastexec::__loom::deps`). A dependent's body
//! reads its dependencies' outputs before anything else: released early, it
//! would find one missing and panic, and its completion would hold that
//! panic instead of the expected value.
#![cfg(loom)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};

use fastexec::__loom::deps::{fail, source, spawn_after, succeed};
use fastexec::deps::Dependencies;
use fastexec::Completion;
use loom::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use loom::sync::Arc;
use loom::thread;

/// How often something happened, on any thread. Relaxed: read only after
/// the threads that count are joined.
#[derive(Clone)]
struct Count(Arc<AtomicUsize>);

impl Count {
    fn new() -> Count {
        Count(Arc::new(AtomicUsize::new(0)))
    }

    fn bump(&self) {
        self.0.fetch_add(1, Relaxed);
    }

    fn get(&self) -> usize {
        self.0.load(Relaxed)
    }

    /// A callback counting its calls, for `spawn_after`'s `released`.
    fn counter(&self) -> impl Fn() + Send + Sync + 'static {
        let count = self.clone();
        move || count.bump()
    }
}

/// Counts its drop: moved into a body, it tells that the body went away
/// exactly once, whether it ran or was dropped unrun.
struct OnDrop(Count);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.bump();
    }
}

/// A waker counting its wakes.
struct Wakes(Count);

impl Wake for Wakes {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.bump();
    }
}

fn counting_waker(count: &Count) -> Waker {
    Waker::from(std::sync::Arc::new(Wakes(count.clone())))
}

/// Polls `completion` once with `waker`.
fn poll<T: Send + Sync + 'static>(
    completion: &mut Completion<T>,
    waker: &Waker,
) -> Poll<Result<std::sync::Arc<T>, fastexec::CompletionError>> {
    Pin::new(completion).poll(&mut Context::from_waker(waker))
}

/// What a dependent's body did.
struct Body {
    ran: Count,
    dropped: Count,
    released: Count,
}

impl Body {
    fn new() -> Body {
        Body {
            ran: Count::new(),
            dropped: Count::new(),
            released: Count::new(),
        }
    }

    /// Spawns a dependent after `deps` through the real spawner: its body
    /// counts its run and, when it goes, its drop, and computes its output
    /// from the dependencies' outputs before anything else.
    fn spawn_after<D: Dependencies>(
        &self,
        deps: D,
        compute: impl FnOnce(D::Outputs) -> u32 + Send + 'static,
    ) -> Completion<u32> {
        let (ran, guard) = (self.ran.clone(), OnDrop(self.dropped.clone()));
        spawn_after(
            deps,
            move |outputs| {
                let _guard = guard;
                ran.bump();
                let output = compute(outputs);
                async move { output }
            },
            self.released.counter(),
        )
    }

    /// Checks a dependent that must have run: released exactly once, its
    /// body run and dropped exactly once.
    fn assert_ran_once(&self) {
        assert_eq!(self.released.get(), 1, "released exactly once");
        assert_eq!((self.ran.get(), self.dropped.get()), (1, 1));
    }
}

/// A dependent registers with its dependency while another thread finishes
/// it: whichever way the race goes (registered in time, or found finished
/// under the lock or before it), the dependent is released exactly once,
/// with the output.
#[test]
fn register_races_finish() {
    loom::model(|| {
        let x = source::<u32>();
        let finisher = {
            let x = x.clone();
            thread::spawn(move || succeed(&x, 7))
        };
        let body = Body::new();
        let d = body.spawn_after(&x, |x| *x + 1);
        finisher.join().unwrap();
        body.assert_ran_once();
        assert_eq!(*d.try_get().expect("ran on release").unwrap(), 8);
    });
}

/// A dependent's two dependencies finish on two threads: exactly one
/// decrement (of the two, and the spawner's token given back before) meets
/// the count, and the dependent it releases sees both outputs.
#[test]
fn two_dependencies_finish_on_two_threads() {
    loom::model(|| {
        let (x, y) = (source::<u32>(), source::<u32>());
        let body = Body::new();
        let d = body.spawn_after((&x, &y), |(x, y)| *x + *y);
        assert_eq!(body.released.get(), 0, "released before its dependencies");
        let finisher = {
            let x = x.clone();
            thread::spawn(move || succeed(&x, 1))
        };
        succeed(&y, 2);
        finisher.join().unwrap();
        body.assert_ran_once();
        assert_eq!(*d.try_get().expect("ran on release").unwrap(), 3);
    });
}

/// The spawner registers with two dependencies while two threads finish
/// them: registrations, the two decrements and the spawner's token (given
/// back with one more for each dependency found finished) race, and still
/// exactly one of them releases the dependent, after both outputs.
#[test]
fn spawner_races_two_finishes() {
    loom::model(|| {
        let (x, y) = (source::<u32>(), source::<u32>());
        let finishers: Vec<_> = [(&x, 1), (&y, 2)]
            .into_iter()
            .map(|(c, value)| {
                let c = c.clone();
                thread::spawn(move || succeed(&c, value))
            })
            .collect();
        let body = Body::new();
        let d = body.spawn_after((&x, &y), |(x, y)| *x + *y);
        for finisher in finishers {
            finisher.join().unwrap();
        }
        body.assert_ran_once();
        assert_eq!(*d.try_get().expect("ran on release").unwrap(), 3);
    });
}

/// Checks a dependent that must have failed: never released, its body
/// dropped unrun exactly once, its awaiter woken exactly once, its outcome
/// an error.
fn assert_failed_once(d: &Completion<u32>, body: &Body, wakes: &Count) {
    assert_eq!(body.released.get(), 0, "a failed dependent was released");
    assert_eq!((body.ran.get(), body.dropped.get()), (0, 1));
    assert_eq!(wakes.get(), 1, "the awaiter is woken exactly once");
    assert!(d.try_get().expect("finished").is_err());
}

/// One dependency fails while the other succeeds on another thread: the
/// dependent never starts, whichever comes first, and fails exactly once.
#[test]
fn failure_races_success() {
    loom::model(|| {
        let (x, y) = (source::<u32>(), source::<u32>());
        let body = Body::new();
        let mut d = body.spawn_after((&x, &y), |_| 0);
        let wakes = Count::new();
        assert!(poll(&mut d, &counting_waker(&wakes)).is_pending());
        let finisher = {
            let x = x.clone();
            thread::spawn(move || succeed(&x, 1))
        };
        fail(&y);
        finisher.join().unwrap();
        assert_failed_once(&d, &body, &wakes);
        let error = d.try_get().unwrap().unwrap_err();
        assert!(error.failed_dependency().is_some(), "{error}");
    });
}

/// A dependency fails on another thread while the dependent is aborted:
/// the first to finish the dependent wins (upstream failure or
/// cancellation), the other changes nothing, and its task is dropped
/// unpolled exactly once.
#[test]
fn failure_races_abort() {
    loom::model(|| {
        let x = source::<u32>();
        let body = Body::new();
        let mut d = body.spawn_after(&x, |_| 0);
        let wakes = Count::new();
        assert!(poll(&mut d, &counting_waker(&wakes)).is_pending());
        let failer = {
            let x = x.clone();
            thread::spawn(move || fail(&x))
        };
        d.abort();
        failer.join().unwrap();
        assert_failed_once(&d, &body, &wakes);
    });
}

/// A dependency fails on another thread while a chain of two dependents is
/// spawned after it: the failure reaches each link exactly once, whether
/// the link registered in time or found its dependency failed (the second
/// through the thread-local queue of releases when the first fails during
/// a release), and names the link above it.
#[test]
fn failure_propagates_down_a_chain() {
    loom::model(|| {
        let x = source::<u32>();
        let failer = {
            let x = x.clone();
            thread::spawn(move || fail(&x))
        };
        let (body1, body2) = (Body::new(), Body::new());
        let d1 = body1.spawn_after(&x, |_| 0);
        let mut d2 = body2.spawn_after(&d1, |_| 0);
        let wakes = Count::new();
        let first = poll(&mut d2, &counting_waker(&wakes));
        failer.join().unwrap();
        for body in [&body1, &body2] {
            assert_eq!(body.released.get(), 0, "a failed dependent was released");
            assert_eq!((body.ran.get(), body.dropped.get()), (0, 1));
        }
        let woken = if first.is_pending() { 1 } else { 0 };
        assert_eq!(wakes.get(), woken, "woken exactly once if it waited");
        let (e1, e2) = (d1.try_get().unwrap(), d2.try_get().unwrap());
        assert_eq!(e1.unwrap_err().failed_dependency().unwrap().id(), x.id());
        assert_eq!(e2.unwrap_err().failed_dependency().unwrap().id(), d1.id());
    });
}

/// An awaiter polls a completion while another thread finishes it: it
/// either sees the outcome at once (and is never woken) or is woken exactly
/// once and then sees it.
#[test]
fn awaiter_races_finish() {
    loom::model(|| {
        let mut x = source::<u32>();
        let finisher = {
            let x = x.clone();
            thread::spawn(move || succeed(&x, 5))
        };
        let wakes = Count::new();
        let waker = counting_waker(&wakes);
        let first = poll(&mut x, &waker);
        finisher.join().unwrap();
        match first {
            Poll::Ready(outcome) => {
                assert_eq!(*outcome.unwrap(), 5);
                assert_eq!(wakes.get(), 0, "woken after it had the outcome");
            }
            Poll::Pending => {
                assert_eq!(wakes.get(), 1, "a pending awaiter is woken exactly once");
                match poll(&mut x, &waker) {
                    Poll::Ready(outcome) => assert_eq!(*outcome.unwrap(), 5),
                    Poll::Pending => panic!("woken, but the outcome is not there"),
                }
            }
        }
    });
}
