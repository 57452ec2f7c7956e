//! Priorities on a one-worker executor: while the worker is held busy,
//! tasks are posted with low, normal and high priority; once it is
//! released, every high task starts before any normal one, and every low one
//! after all normal ones. Deterministic: the worker is blocked on a channel
//! while the tasks are posted, so they all wait in their queues together.

mod support;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use fastexec::{task, Executor, JoinHandle, Priority};
use support::{executor, with_timeout};

/// Blocks the single worker of `ex` until the returned sender sends (or
/// drops); returns once the worker is inside the blocking task.
fn hold_worker(ex: &Executor) -> mpsc::Sender<()> {
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    ex.spawn(async move {
        started_tx.send(()).unwrap();
        let _ = release_rx.recv();
    })
    .detach();
    started_rx.recv().unwrap();
    release_tx
}

/// Lets the held worker go, waits for `handles`, returns the recorded order.
fn release_and_join(
    ex: &Executor,
    release: mpsc::Sender<()>,
    handles: Vec<JoinHandle<()>>,
    order: &Mutex<String>,
) -> String {
    release.send(()).unwrap();
    for handle in handles {
        ex.block_on(handle).unwrap();
    }
    let order = order.lock().unwrap().clone();
    order
}

fn label(priority: Priority) -> char {
    match priority {
        Priority::High => 'H',
        Priority::Normal => 'N',
        Priority::Low => 'L',
    }
}

#[test]
fn high_starts_first_and_low_last() {
    let order = with_timeout(|| {
        let ex = executor(1);
        let release = hold_worker(&ex);
        let order = Arc::new(Mutex::new(String::new()));
        let mut handles = Vec::new();
        // Interleaved, so that posting order alone would not sort them.
        for round in 0..4 {
            for priority in [Priority::Low, Priority::Normal, Priority::High] {
                let order = order.clone();
                let builder = task::Builder::new().priority(priority);
                // Normal ones alternate between the builder and plain spawn.
                let body = async move { order.lock().unwrap().push(label(priority)) };
                handles.push(if priority == Priority::Normal && round % 2 == 0 {
                    ex.spawn(body)
                } else {
                    builder.on(&ex).spawn(body)
                });
            }
        }
        release_and_join(&ex, release, handles, &order)
    });
    assert_eq!(order, "HHHHNNNNLLLL");
}

/// A high task keeps its priority when it is woken: its second poll also
/// comes before every normal task.
#[test]
fn woken_high_task_stays_high() {
    let order =
        with_timeout(|| {
            let ex = executor(1);
            let release = hold_worker(&ex);
            let order = Arc::new(Mutex::new(String::new()));
            let mut handles = Vec::new();
            for _ in 0..3 {
                let normal = order.clone();
                handles.push(ex.spawn(async move { normal.lock().unwrap().push('N') }));
                let high = order.clone();
                handles.push(task::Builder::new().priority(Priority::High).on(&ex).spawn(
                    async move {
                        high.lock().unwrap().push('h');
                        fastexec::yield_now().await;
                        high.lock().unwrap().push('H');
                    },
                ));
            }
            release_and_join(&ex, release, handles, &order)
        });
    assert_eq!(order, "hhhHHHNNN");
}

/// Low-priority tasks still run when nothing else does, and a low task
/// spawned from a task waits for that task's normal siblings.
#[test]
fn low_runs_when_no_normal_work_is_visible() {
    let order = with_timeout(|| {
        let ex = executor(1);
        let order = Arc::new(Mutex::new(String::new()));
        let inner = order.clone();
        ex.block_on(async move {
            fastexec::spawn(async move {
                let low = inner.clone();
                task::Builder::new()
                    .priority(Priority::Low)
                    .spawn(async move { low.lock().unwrap().push('L') })
                    .detach();
                for _ in 0..3 {
                    let normal = inner.clone();
                    fastexec::spawn(async move { normal.lock().unwrap().push('N') }).detach();
                }
            })
            .detach();
        });
        let order = order.lock().unwrap().clone();
        order
    });
    assert_eq!(order, "NNNL");
}

/// Completions take the priority path too: high-priority `spawn_completion`
/// and `spawn_after` tasks posted after normal ones start before them.
#[test]
fn high_priority_completions_start_first() {
    let order = with_timeout(|| {
        let ex = executor(1);
        let release = hold_worker(&ex);
        let order = Arc::new(Mutex::new(String::new()));
        let push = |c: char| {
            let order = order.clone();
            async move { order.lock().unwrap().push(c) }
        };
        let high = task::Builder::new().priority(Priority::High).on(&ex);
        let mut completions = Vec::new();
        for _ in 0..3 {
            completions.push(ex.spawn_completion(push('N')));
            completions.push(high.spawn_completion(push('H')));
            let body = push('A');
            // No dependencies: it is spawned at once, by its priority.
            completions.push(high.spawn_after((), move |()| body));
        }
        release.send(()).unwrap();
        for completion in completions {
            ex.block_on(completion).unwrap();
        }
        let order = order.lock().unwrap().clone();
        order
    });
    assert_eq!(order, "HAHAHANNN");
}
