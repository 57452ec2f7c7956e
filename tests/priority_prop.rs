//! Property test of task priorities over random mixes of high, normal and
//! low tasks that yield (each yield queues the task again in its own
//! priority's place) and spawn children of any priority from the worker.
//!
//! * One worker, held busy while the first tasks are posted: every time a
//!   task is polled, no task of a higher priority is queued (a normal task
//!   never runs while a high one waits, a low one only when no high or
//!   normal one does). The worker sees every queue, so the module's
//!   promise is exact here.
//! * Two and three workers, nothing held: every task, whatever its
//!   priority, runs to the end exactly once (nothing is stranded in a
//!   priority queue while the workers park).

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::task::{Context, Poll};

use fastexec::{task, Executor, Priority};
use proptest::prelude::*;
use support::pause::{pause, wait_out, Pause};

#[derive(Debug, Clone)]
struct Spec {
    priority: Priority,
    yields: u8,
    /// Children spawned (detached) at the first poll.
    children: Vec<(Priority, u8)>,
    /// For the multi-worker runs: a wait before the end.
    pause: Pause,
}

fn priority() -> impl Strategy<Value = Priority> {
    prop_oneof![
        Just(Priority::High),
        Just(Priority::Normal),
        Just(Priority::Low)
    ]
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        priority(),
        0u8..4,
        proptest::collection::vec((priority(), 0u8..3), 0..3),
        pause(),
    )
        .prop_map(|(priority, yields, children, pause)| Spec {
            priority,
            yields,
            children,
            pause,
        })
}

fn rank(priority: Priority) -> usize {
    match priority {
        Priority::High => 0,
        Priority::Normal => 1,
        Priority::Low => 2,
    }
}

/// What the tasks of one case share.
#[derive(Default)]
struct Ledger {
    /// Whether polls are checked against the queue counts (one worker, no
    /// wake but the tasks' own yields).
    strict: bool,
    /// Tasks queued (spawned or woken, not yet polled again), per rank.
    queued: Mutex<[usize; 3]>,
    /// Polls that found a higher priority queued: (rank polled, queued).
    violations: Mutex<Vec<(usize, [usize; 3])>>,
    finished: Mutex<u32>,
    /// Signalled when a task finishes.
    progress: Condvar,
}

impl Ledger {
    fn queue(&self, priority: Priority) {
        self.queued.lock().unwrap()[rank(priority)] += 1;
    }

    /// A task of `priority` is being polled: it leaves the queue; nothing
    /// more urgent may be waiting.
    fn polled(&self, priority: Priority) {
        if !self.strict {
            return;
        }
        let mut queued = self.queued.lock().unwrap();
        let rank = rank(priority);
        queued[rank] -= 1;
        if queued[..rank].iter().any(|&n| n > 0) {
            self.violations.lock().unwrap().push((rank, *queued));
        }
    }
}

/// Counts a task's every poll in the ledger before polling its body.
struct Tracked<F> {
    priority: Priority,
    ledger: Arc<Ledger>,
    body: Pin<Box<F>>,
}

impl<F: Future> Future for Tracked<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.ledger.polled(self.priority);
        self.body.as_mut().poll(cx)
    }
}

/// Queues itself again once, counted in the ledger as queued.
struct Yield {
    priority: Priority,
    ledger: Arc<Ledger>,
    yielded: bool,
}

impl Future for Yield {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        self.ledger.queue(self.priority);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Spawns a task of `priority` that yields `yields` times, runs `then`,
/// and counts itself finished; queued in the ledger before the spawn.
fn spawn_tracked<F>(
    on: Option<&Executor>,
    ledger: &Arc<Ledger>,
    priority: Priority,
    yields: u8,
    then: F,
) where
    F: Future<Output = ()> + Send + 'static,
{
    let ledger = Arc::clone(ledger);
    let body = {
        let ledger = Arc::clone(&ledger);
        async move {
            then.await;
            for _ in 0..yields {
                let ledger = Arc::clone(&ledger);
                Yield {
                    priority,
                    ledger,
                    yielded: false,
                }
                .await;
            }
            *ledger.finished.lock().unwrap() += 1;
            ledger.progress.notify_all();
        }
    };
    ledger.queue(priority);
    let task = Tracked {
        priority,
        ledger,
        body: Box::pin(body),
    };
    let builder = task::Builder::new().priority(priority);
    match on {
        Some(executor) => builder.on(executor).spawn(task).detach(),
        None => builder.spawn(task).detach(),
    }
}

/// How many tasks a case runs, children included.
fn total(specs: &[Spec]) -> u32 {
    specs.iter().map(|s| 1 + s.children.len() as u32).sum()
}

/// Spawns every task of `specs` on `executor`; each spawns its children
/// (from the worker) at its first poll.
fn spawn_all(executor: &Executor, ledger: &Arc<Ledger>, specs: &[Spec], with_pauses: bool) {
    for spec in specs {
        let (children, child_ledger) = (spec.children.clone(), Arc::clone(ledger));
        let pause = with_pauses.then_some(spec.pause);
        spawn_tracked(
            Some(executor),
            ledger,
            spec.priority,
            spec.yields,
            async move {
                for (priority, yields) in children {
                    spawn_tracked(None, &child_ledger, priority, yields, async {});
                }
                if let Some(pause) = pause {
                    wait_out(pause).await;
                }
            },
        );
    }
}

/// Waits until `ledger` counts `n` finished tasks; false if that takes
/// longer than the hang guard.
fn all_finished(ledger: &Ledger, n: u32) -> bool {
    let finished = ledger.finished.lock().unwrap();
    let (finished, _) = ledger
        .progress
        .wait_timeout_while(finished, support::TIMEOUT, |f| *f < n)
        .unwrap();
    *finished == n
}

fn check_order(specs: &[Spec]) -> Result<(), TestCaseError> {
    let executor = support::shared_executor(1);
    let ledger = Arc::new(Ledger {
        strict: true,
        ..Ledger::default()
    });
    let n = total(specs);
    let finished = support::within(60, {
        let (ledger, specs) = (Arc::clone(&ledger), specs.to_vec());
        move || {
            let (started, held) = (mpsc::channel(), mpsc::channel::<()>());
            let (started_tx, started_rx) = started;
            let (release, hold) = held;
            executor
                .spawn(async move {
                    started_tx.send(()).unwrap();
                    let _ = hold.recv();
                })
                .detach();
            started_rx.recv().unwrap();
            spawn_all(executor, &ledger, &specs, false);
            release.send(()).unwrap();
            all_finished(&ledger, n)
        }
    });
    prop_assert!(finished, "not every task finished");
    let violations = ledger.violations.lock().unwrap().clone();
    prop_assert!(
        violations.is_empty(),
        "polled while something more urgent was queued (rank, queued): {:?}",
        violations
    );
    Ok(())
}

fn check_completion(specs: &[Spec], threads: usize) -> Result<(), TestCaseError> {
    let executor = support::shared_executor(threads);
    let ledger = Arc::new(Ledger::default());
    let n = total(specs);
    let finished = support::within(60, {
        let (ledger, specs) = (Arc::clone(&ledger), specs.to_vec());
        move || {
            spawn_all(executor, &ledger, &specs, true);
            all_finished(&ledger, n)
        }
    });
    prop_assert!(finished, "not every task finished");
    prop_assert_eq!(*ledger.finished.lock().unwrap(), n, "a task ran twice");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn one_worker_never_polls_past_a_more_urgent_task(specs in proptest::collection::vec(spec(), 1..40)) {
        check_order(&specs)?;
    }

    #[test]
    fn every_task_finishes_on_two_workers(specs in proptest::collection::vec(spec(), 1..40)) {
        check_completion(&specs, 2)?;
    }

    #[test]
    fn every_task_finishes_on_three_workers(specs in proptest::collection::vec(spec(), 1..40)) {
        check_completion(&specs, 3)?;
    }
}
