//! Failed, aborted and cancelled dependencies: dependents never start and
//! report an upstream failure naming the dependency; independent branches
//! go on.

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use fastexec::deps::CompletionError;
use fastexec::task::Builder;
use fastexec::{spawn_after, spawn_completion, TaskGroup};
use support::{executor, with_timeout, DropCounter};

#[test]
fn panicking_dependency_fails_its_dependents_while_an_independent_branch_completes() {
    let ran_after_failure = Arc::new(AtomicBool::new(false));
    let flag = ran_after_failure.clone();
    let (child, grandchild, independent) = with_timeout(move || {
        let ex = executor(2);
        ex.block_on(async move {
            let bad = Builder::new()
                .name("parse")
                .spawn_completion(async { panic!("unexpected token") });
            let good = Builder::new().name("fetch").spawn_completion(async { 5 });
            let child =
                Builder::new()
                    .name("compile")
                    .spawn_after(&bad, move |_: Arc<()>| async move {
                        flag.store(true, Ordering::SeqCst);
                    });
            let grandchild = Builder::new()
                .name("link")
                .spawn_after(&child, |_| async {});
            let independent = spawn_after(&good, |g: Arc<i32>| async move { *g * 2 });
            (
                child.await.unwrap_err(),
                grandchild.await.unwrap_err(),
                independent.await.unwrap(),
            )
        })
    });
    assert!(
        !ran_after_failure.load(Ordering::SeqCst),
        "a dependent of a failed task ran"
    );
    assert_eq!(*independent, 10);

    assert_eq!(child.task().name(), Some("compile"));
    assert_eq!(child.failed_dependency().unwrap().name(), Some("parse"));
    match &child {
        CompletionError::UpstreamFailed { cause, .. } => match &**cause {
            CompletionError::Panicked { task, message } => {
                assert_eq!(task.name(), Some("parse"));
                assert_eq!(message.as_deref(), Some("unexpected token"));
            }
            other => panic!("cause should be the panic, got {other}"),
        },
        other => panic!("expected an upstream failure, got {other}"),
    }
    // Transitively: the grandchild names its own dependency, and the root cause.
    assert_eq!(
        grandchild.failed_dependency().unwrap().name(),
        Some("compile")
    );
    let text = grandchild.to_string();
    assert!(text.contains("\"link\" did not run"), "{text}");
    assert!(text.contains("\"compile\" failed"), "{text}");
    assert!(
        text.contains("\"parse\" panicked: unexpected token"),
        "{text}"
    );
}

#[test]
fn aborted_dependency_fails_its_dependents_as_upstream_of_a_cancellation() {
    let err = with_timeout(|| {
        fastexec::block_on(async {
            let stuck = Builder::new()
                .name("stuck")
                .spawn_completion(std::future::pending::<u8>());
            let after = spawn_after(&stuck, |_| async { unreachable!("must not start") });
            stuck.abort();
            assert!(stuck.clone().await.unwrap_err().is_cancelled());
            after.await.unwrap_err()
        })
    });
    assert_eq!(err.failed_dependency().unwrap().name(), Some("stuck"));
    assert!(matches!(&err, CompletionError::UpstreamFailed { cause, .. } if cause.is_cancelled()));
}

#[test]
fn aborting_a_dependent_before_it_starts_cancels_it_and_its_dependents() {
    let (sender, receiver) = futures::channel::oneshot::channel::<()>();
    let body_ran = Arc::new(AtomicBool::new(false));
    let flag = body_ran.clone();
    let (own, downstream, gate) = with_timeout(move || {
        fastexec::block_on(async move {
            let gate = spawn_completion(async move { receiver.await.unwrap() });
            let waiting = Builder::new()
                .name("waiting")
                .spawn_after(&gate, move |_| async move {
                    flag.store(true, Ordering::SeqCst);
                });
            let downstream = spawn_after(&waiting, |_| async {});
            waiting.abort();
            let own = waiting.await.unwrap_err();
            let downstream = downstream.await.unwrap_err();
            sender.send(()).unwrap();
            (own, downstream, gate.await)
        })
    });
    assert!(gate.is_ok());
    assert!(own.is_cancelled(), "{own}");
    assert_eq!(
        downstream.failed_dependency().unwrap().name(),
        Some("waiting")
    );
    assert!(
        !body_ran.load(Ordering::SeqCst),
        "an aborted dependent started"
    );
}

#[test]
fn shared_join_handle_reports_panic_message_and_cancellation() {
    let (panicked, cancelled) = with_timeout(|| {
        fastexec::block_on(async {
            let panicked = fastexec::spawn(async { panic!("boom") }).shared();
            let mut handle = fastexec::spawn(std::future::pending::<()>());
            handle.abort();
            let cancelled = handle.shared();
            (panicked.await.unwrap_err(), cancelled.await.unwrap_err())
        })
    });
    assert!(
        matches!(&panicked, CompletionError::Panicked { message: Some(m), .. } if &**m == "boom")
    );
    assert!(cancelled.is_cancelled());
}

#[test]
fn aborting_a_shared_completion_aborts_the_task_behind_it() {
    let drops = DropCounter::new();
    let guard = drops.guard();
    let err = with_timeout(move || {
        let ex = executor(2);
        let handle = ex.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await
        });
        // Outside any block_on: inside one, the forwarding task would count
        // in its group, and the block_on would wait for the pending task.
        let shared = handle.shared();
        shared.abort();
        ex.block_on(shared).unwrap_err()
    });
    assert!(err.is_cancelled());
    assert_eq!(
        drops.wait_for(1),
        1,
        "the original task's future was not dropped"
    );
}

#[test]
fn cancelled_group_and_dropped_executor_cancel_completions() {
    let (in_group, after_drop) = with_timeout(|| {
        let group = TaskGroup::new();
        let ex = executor(1);
        let in_group = ex.block_on(async {
            // Handed out in a tuple: returned from the member, not awaited.
            let (stuck,) = group
                .spawn(async { (spawn_completion(std::future::pending::<()>()),) })
                .await
                .unwrap();
            let after = spawn_after(&stuck, |_| async {});
            group.cancel();
            (stuck.await.unwrap_err(), after.await.unwrap_err())
        });
        let orphan = ex.spawn_completion(std::future::pending::<()>());
        let dependent = ex.spawn_after(&orphan, |_| async {});
        drop(ex);
        (in_group, (orphan.try_get(), dependent.try_get()))
    });
    assert!(in_group.0.is_cancelled());
    assert!(in_group.1.failed_dependency().is_some());
    assert!(after_drop.0.unwrap().unwrap_err().is_cancelled());
    // The dependent, waiting on the dropped executor too, is dropped with
    // it: cancelled, unless its dependency's cancellation reached it first
    // (the drop takes the two in no set order).
    let dependent = after_drop.1.unwrap().unwrap_err();
    assert!(
        dependent.is_cancelled() || dependent.failed_dependency().is_some(),
        "{dependent}"
    );
}

/// The task is cancelled while still queued behind a task that blocks the
/// only worker: its future is dropped without ever being polled, and the
/// completion must still report the cancellation.
#[test]
fn aborting_before_the_first_poll_still_finishes_the_completion() {
    let err = with_timeout(|| {
        let ex = executor(1);
        let (unblock, blocked) = std::sync::mpsc::channel::<()>();
        let blocker = ex.spawn(async move { blocked.recv().unwrap() });
        let queued = ex.spawn_completion(async { 1 });
        let dependent = ex.spawn_after(&queued, |_| async {});
        queued.abort();
        unblock.send(()).unwrap();
        ex.block_on(blocker).unwrap();
        (
            ex.block_on(queued).unwrap_err(),
            ex.block_on(dependent).unwrap_err(),
        )
    });
    assert!(err.0.is_cancelled(), "{}", err.0);
    assert!(err.1.failed_dependency().is_some(), "{}", err.1);
}

/// Names given through the builder, on an explicit executor, are in the
/// error's text: the dependent's and the failed dependency's, with their
/// numbers.
#[test]
fn builder_names_appear_in_the_error_text() {
    let (text, download, unpack) = with_timeout(|| {
        let ex = executor(1);
        let download = Builder::new()
            .name("download")
            .on(&ex)
            .spawn_completion(async { panic!("404") });
        let unpack = Builder::new()
            .name("unpack")
            .on(&ex)
            .spawn_after(&download, |_: Arc<()>| async {});
        let error = ex.block_on(unpack.clone()).unwrap_err();
        (error.to_string(), download.id(), unpack.id())
    });
    assert_eq!(
        text,
        format!(
            "task {unpack} \"unpack\" did not run: its dependency task {download} \"download\" \
             failed: task {download} \"download\" panicked: 404"
        )
    );
}

/// Aborts racing with releases: a worker finishes the dependency while the
/// test thread aborts its dependents one by one. Whichever side wins for a
/// dependent, it runs at most once, and its completion agrees with whether
/// it ran: a dependent that ran succeeded (an abort after its start lets
/// this short body finish or cancels it before it counts), one that did not
/// run reports a cancellation, never an upstream failure. (The body is
/// one poll that ends the task, so a cancelled one never ran it.)
#[test]
fn aborts_racing_with_releases_run_each_dependent_at_most_once() {
    with_timeout(|| {
        let ex = executor(2);
        for _ in 0..50 {
            let (sender, receiver) = futures::channel::oneshot::channel::<()>();
            let root = ex.spawn_completion(async move { receiver.await.unwrap() });
            let runs: Vec<_> = (0..64).map(|_| Arc::new(AtomicUsize::new(0))).collect();
            let dependents: Vec<_> = runs
                .iter()
                .map(|runs| {
                    let runs = runs.clone();
                    ex.spawn_after(&root, move |_| async move {
                        runs.fetch_add(1, Ordering::SeqCst);
                    })
                })
                .collect();
            sender.send(()).unwrap();
            for dependent in &dependents {
                dependent.abort();
            }
            for (dependent, runs) in dependents.into_iter().zip(&runs) {
                let outcome = ex.block_on(dependent);
                let ran = runs.load(Ordering::SeqCst);
                assert!(ran <= 1, "a dependent ran {ran} times");
                match outcome {
                    Ok(_) => assert_eq!(ran, 1, "succeeded without running"),
                    Err(err) => {
                        assert!(err.is_cancelled(), "{err}");
                        assert_eq!(ran, 0, "cancelled after its body finished");
                    }
                }
            }
            assert!(ex.block_on(root).is_ok());
        }
    });
}

/// A waker that panics when woken: a foreign awaiter's bug, which the
/// release of a completion's other waiters must survive.
struct PanickingWake;

impl std::task::Wake for PanickingWake {
    fn wake(self: Arc<Self>) {
        panic!("this waker panics");
    }
}

/// Polls a clone of `completion` once with a [`PanickingWake`]; it must
/// pend. The clone is returned: while it lives, its waker stays in the
/// node's list.
fn await_with_panicking_waker<T: Send + Sync + 'static>(
    completion: &fastexec::Completion<T>,
) -> fastexec::Completion<T> {
    use std::future::Future;
    let waker = std::task::Waker::from(Arc::new(PanickingWake));
    let mut awaiter = completion.clone();
    let poll = std::pin::Pin::new(&mut awaiter).poll(&mut std::task::Context::from_waker(&waker));
    assert!(poll.is_pending(), "the gate is still closed");
    awaiter
}

/// A failure whose release meets a panicking waker still reaches the
/// dependents of its dependents (queued for that release's loop), and a
/// later failure on the same worker still propagates: the panic strands
/// nothing in the thread's queue of releases.
#[test]
fn a_panicking_waker_strands_no_failure_release() {
    let (first, later) = with_timeout(|| {
        let ex = executor(1);
        let failing_chain = || {
            let gate = support::Gate::new();
            let opened = gate.clone();
            let head = ex.spawn_completion(async move {
                opened.wait().await;
                panic!("head failed");
            });
            let middle = ex.spawn_after(&head, |_| async {});
            let tail = ex.spawn_after(&middle, |_| async {});
            (gate, head, tail)
        };
        // The middle is released (and queues its own failure) before the
        // awaiter, which is out of line, is woken.
        let (gate, head, tail) = failing_chain();
        let _awaiter = await_with_panicking_waker(&head);
        gate.open();
        let first = ex.block_on(tail).unwrap_err();
        let (gate, _head, tail) = failing_chain();
        gate.open();
        (first, ex.block_on(tail).unwrap_err())
    });
    assert!(first.failed_dependency().is_some(), "{first}");
    assert!(later.failed_dependency().is_some(), "{later}");
}

/// A success whose release meets a panicking waker still releases the
/// dependents listed after that waker.
#[test]
fn a_panicking_waker_does_not_keep_later_dependents_waiting() {
    let outputs = with_timeout(|| {
        let ex = executor(1);
        let gate = support::Gate::new();
        let opened = gate.clone();
        let head = ex.spawn_completion(async move {
            opened.wait().await;
            7
        });
        // Two dependents in place, then the awaiter and a third dependent
        // in the out-of-line list, in that order.
        let mut dependents: Vec<_> = (0..2)
            .map(|_| ex.spawn_after(&head, |v: Arc<i32>| async move { *v }))
            .collect();
        let _awaiter = await_with_panicking_waker(&head);
        dependents.push(ex.spawn_after(&head, |v: Arc<i32>| async move { *v }));
        gate.open();
        dependents
            .into_iter()
            .map(|d| *ex.block_on(d).unwrap())
            .collect::<Vec<_>>()
    });
    assert_eq!(outputs, [7, 7, 7]);
}
