//! Runners take ready tasks in batches: every task of a batch still gets its
//! own start time (a lane's attempts never overlap), and a long body in a
//! batch hands the rest on without losing or repeating any task, and a
//! failure in a batch is recorded before the next task of the batch starts.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fastexec::graph::{Graph, Report, Task, TaskState};
use support::{executor, within};

/// A root, `width` tasks after it, and a sink after all of them; the task
/// `slow` spins (synchronously, in its first poll) for `spin`.
fn fan(width: usize, slow: usize, spin: Duration, ran: &Arc<AtomicUsize>) -> Graph<usize> {
    let mut g = Graph::new();
    g.add(Task::new("root", |_| async { Ok(0) })).unwrap();
    for n in 0..width {
        let ran = ran.clone();
        let body = move |_| {
            ran.fetch_add(1, Ordering::Relaxed);
            if n == slow {
                let until = Instant::now() + spin;
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            }
            async move { Ok(n) }
        };
        g.add(Task::new(format!("t{n}"), body).after(["root"]))
            .unwrap();
    }
    let all: Vec<String> = (0..width).map(|n| format!("t{n}")).collect();
    g.add(Task::new("sink", |inp| async move { Ok(inp.values().sum()) }).after(all))
        .unwrap();
    g
}

fn run_on(threads: usize, g: Graph<usize>) -> Report<usize> {
    within(60, move || executor(threads).block_on(g.run()))
}

#[test]
fn attempts_on_one_worker_never_overlap() {
    let ran = Arc::new(AtomicUsize::new(0));
    let report = run_on(1, fan(200, usize::MAX, Duration::ZERO, &ran));
    assert!(report.is_success(), "{report}");
    let mut attempts: Vec<_> = report.attempts().to_vec();
    attempts.sort_by_key(|a| (a.worker, a.start));
    for pair in attempts.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.worker == b.worker {
            assert!(
                a.end.unwrap() <= b.start,
                "{} ({:?}..{:?}) overlaps {} starting at {:?}",
                a.task,
                a.start,
                a.end,
                b.task,
                b.start
            );
        }
    }
}

#[test]
fn a_long_body_in_a_batch_loses_no_task() {
    for threads in [1, 2] {
        let ran = Arc::new(AtomicUsize::new(0));
        let g = fan(64, 0, Duration::from_millis(2), &ran);
        let report = run_on(threads, g);
        assert!(report.is_success(), "{report}");
        assert_eq!(ran.load(Ordering::Relaxed), 64, "each task runs once");
        assert_eq!(report.output("sink"), Some(&(0..64).sum()));
        assert!(report.tasks().iter().all(|t| t.attempts == 1));
    }
}

#[test]
fn fail_fast_stops_the_rest_of_a_batch_from_starting() {
    // One worker: the runner that takes the fan's tasks in a batch is the
    // only one that runs until it leaves. The first task of the batch
    // fails; no other task of the fan may start after that.
    let ran = Arc::new(AtomicUsize::new(0));
    let counted = ran.clone();
    let mut g = Graph::<usize>::new();
    g.fail_fast(true);
    g.add(Task::new("root", |_| async { Ok(0) })).unwrap();
    for n in 0..50usize {
        let ran = counted.clone();
        let body = move |_| {
            ran.fetch_add(1, Ordering::Relaxed);
            async move {
                if n == 0 {
                    Err("first of the batch fails".into())
                } else {
                    Ok(n)
                }
            }
        };
        g.add(Task::new(format!("t{n}"), body).after(["root"]))
            .unwrap();
    }
    let report = run_on(1, g);
    assert_eq!(ran.load(Ordering::Relaxed), 1, "{report}");
    assert_eq!(report.task("t0").unwrap().state, TaskState::Failed);
    assert_eq!(report.task("t1").unwrap().state, TaskState::Cancelled);
}
