//! Where an attempt's clock starts. Its time limit and its recorded start
//! count from its call, not from a clock reading taken before the runner
//! carried out the effects of its last batch (a slow destructor of a
//! cancelled task's output ran in between, and a body that returned at
//! once timed out). A retry's backoff counts from the failure, not from
//! when its driver first runs on a busy worker (the two waits added up).

mod support;

use std::time::{Duration, Instant};

use fastexec::graph::{Graph, Report, Task, TaskState};
use support::{executor, fixed_backoff, within, Gate};

/// How long the slow destructor below takes: longer than the time limit.
const SLOW_DROP: Duration = Duration::from_millis(400);
const LIMIT: Duration = Duration::from_millis(300);

/// An output whose destructor may take [`SLOW_DROP`].
struct Out {
    slow: bool,
}

impl Drop for Out {
    fn drop(&mut self) {
        if self.slow {
            // Work that takes time, not a synchronisation.
            let until = Instant::now() + SLOW_DROP;
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
    }
}

/// On one worker: task `a` runs; meanwhile `b` is added and `a` is
/// cancelled, so that the runner, once `a` returns, drops `a`'s output
/// (slowly) between taking `b` and calling it.
fn run_after_a_slow_drop(b: Task<Out>) -> Report<Out> {
    within(30, move || {
        let ex = executor(1);
        let (started, release) = (Gate::new(), Gate::new());
        let (s, r) = (started.clone(), release.clone());
        let mut g = Graph::<Out>::new();
        g.add(Task::sync("a", move |_| {
            s.open();
            r.wait_blocking();
            Ok(Out { slow: true })
        }))
        .unwrap();
        ex.block_on(async move {
            let run = g.start();
            started.wait().await;
            run.add_task(b).unwrap();
            run.cancel("a").unwrap();
            release.open();
            run.wait_all().await
        })
    })
}

fn assert_completed(report: &Report<Out>) {
    let b = report.task("b").unwrap();
    assert_eq!(b.state, TaskState::Completed, "b: {:?}", b.error);
}

#[test]
fn a_sync_body_that_returns_at_once_is_within_its_limit() {
    let b = Task::sync("b", |_| Ok(Out { slow: false })).timeout(LIMIT);
    assert_completed(&run_after_a_slow_drop(b));
}

#[test]
fn an_async_body_that_suspends_briefly_is_within_its_limit() {
    let b = Task::new("b", |_| async {
        fastexec::time::sleep(Duration::from_millis(10)).await;
        Ok(Out { slow: false })
    })
    .timeout(LIMIT);
    assert_completed(&run_after_a_slow_drop(b));
}

#[test]
fn a_backoff_counts_from_the_failure() {
    const BACKOFF: Duration = Duration::from_millis(300);
    const BUSY: Duration = Duration::from_millis(400);
    let report = within(30, || {
        let ex = executor(1);
        let mut g = Graph::<u32>::new();
        let flaky = Task::sync("x", |inp| {
            if inp.attempt() == 1 {
                Err("once".into())
            } else {
                Ok(1)
            }
        });
        g.add(flaky.retry(fixed_backoff(2, BACKOFF))).unwrap();
        // Keeps the only worker busy through the backoff and past it.
        g.add(Task::sync("busy", |_| {
            let until = Instant::now() + BUSY;
            while Instant::now() < until {
                std::hint::spin_loop();
            }
            Ok(2)
        }))
        .unwrap();
        ex.block_on(g.run())
    });
    assert!(report.is_success(), "{report}");
    let x: Vec<_> = report
        .attempts()
        .iter()
        .filter(|a| a.task.as_str() == "x")
        .collect();
    assert_eq!(x.len(), 2);
    let waited = x[1].start - x[0].end.unwrap();
    // About `BUSY` (the backoff passed meanwhile), not `BUSY + BACKOFF`.
    assert!(waited >= BACKOFF, "retried after {waited:?}");
    assert!(waited < BUSY + BACKOFF / 2, "retried after {waited:?}");
}
