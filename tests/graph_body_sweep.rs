//! `RunHandle::wait_all` drops the bodies of tasks that ended (and what
//! they captured) while the run goes on, a chunk at a time, not only when
//! the run ends. The first two tests end their graph with a task that
//! waits until a value captured by an early task's body is dropped: before
//! the change that value lived until the run ended, which needed that very
//! task to end, so the run never ended (and `within` failed). The third
//! checks the bookkeeping of a larger run: every body dropped, once.

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fastexec::graph::{Graph, Task, TaskState};
use support::{fixed_backoff, within, DropCounter, Gate, PanicOnDrop};

/// Tasks between the early ones and the last: several times the chunk the
/// waiter takes at a time.
const FILLERS: usize = 16_000;

/// Opens its gate when dropped.
struct OpenOnDrop(Gate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

/// Adds, after `last_early` (a task already in `g`), a chain of
/// [`FILLERS`] sync tasks, then `probe`, whose body waits for `gate`.
fn chain_to_probe(g: &mut Graph<u32>, last_early: &str, gate: &Gate) {
    let mut before = last_early.to_string();
    for i in 0..FILLERS {
        let id = format!("filler-{i}");
        g.add(Task::sync(id.as_str(), |_| Ok(0)).after([before.as_str()]))
            .unwrap();
        before = id;
    }
    let gate = gate.clone();
    g.add(
        Task::new("probe", move |_| {
            let gate = gate.clone();
            async move {
                gate.wait().await;
                Ok(7)
            }
        })
        .after([before.as_str()]),
    )
    .unwrap();
}

/// Runs `g` on one worker thread, the caller's thread waiting.
fn run_on_one_worker(g: Graph<u32>) -> fastexec::graph::Report<u32> {
    within(30, move || {
        let executor = fastexec::Executor::builder().threads(1).build().unwrap();
        executor.block_on(g.run())
    })
}

#[test]
fn an_ended_tasks_captures_are_dropped_before_the_run_ends() {
    let gate = Gate::new();
    let mut g = Graph::<u32>::new();
    let held = OpenOnDrop(gate.clone());
    g.add(Task::sync("first", move |_| {
        let _held = &held;
        Ok(1)
    }))
    .unwrap();
    chain_to_probe(&mut g, "first", &gate);
    let report = run_on_one_worker(g);
    assert!(report.is_success(), "{report}");
    assert_eq!(report.output("first"), Some(&1));
    assert_eq!(report.output("probe"), Some(&7));
    assert_eq!(report.tasks().len(), FILLERS + 2);
}

#[test]
fn a_capture_panicking_in_a_sweep_neither_stops_the_others_nor_the_run() {
    let gate = Gate::new();
    let drops = DropCounter::new();
    let mut g = Graph::<u32>::new();
    let panics = PanicOnDrop::with_value(1, drops.guard());
    g.add(Task::sync("panics-when-dropped", move |_| {
        // The whole value, not only its field (closures capture fields).
        let panics = &panics;
        Ok(panics.value)
    }))
    .unwrap();
    let held = OpenOnDrop(gate.clone());
    g.add(
        Task::sync("opens-when-dropped", move |_| {
            let _held = &held;
            Ok(2)
        })
        .after(["panics-when-dropped"]),
    )
    .unwrap();
    chain_to_probe(&mut g, "opens-when-dropped", &gate);
    support::quiet_panics(support::PANIC_ON_DROP);
    let report = run_on_one_worker(g);
    assert!(report.is_success(), "{report}");
    assert_eq!(report.output("probe"), Some(&7));
    assert_eq!(drops.count(), 1, "the panicking capture was dropped once");
}

/// Tasks of the large run below: several chunks' worth.
const MANY: usize = 12_000;

#[test]
fn every_body_is_dropped_once_in_a_large_run_with_retries_and_failures() {
    // Task i runs after i - 1 and i - 7 (when they exist). Every 11th fails
    // its first attempt and succeeds on its retry; task 1,500 fails for
    // good, so its dependents (transitively) end upstream-failed without
    // running, their bodies retired as the failure spreads.
    let drops = DropCounter::new();
    let mut g = Graph::<u32>::new();
    for i in 0..MANY {
        let guard = drops.guard();
        let calls = Arc::new(AtomicU32::new(0));
        let mut task = Task::sync(format!("t{i}"), move |_| {
            let _guard = &guard;
            let call = calls.fetch_add(1, Ordering::Relaxed);
            match i {
                1_500 => Err("fails for good".into()),
                _ if i % 11 == 0 && call == 0 => Err("fails once".into()),
                _ => Ok(call),
            }
        });
        if i % 11 == 0 {
            task = task.retry(fixed_backoff(2, Duration::ZERO));
        }
        let deps: Vec<String> = [1, 7]
            .into_iter()
            .filter(|&back| i >= back)
            .map(|back| format!("t{}", i - back))
            .collect();
        g.add(task.after(deps.iter().map(String::as_str))).unwrap();
    }
    let report = within(60, move || {
        let executor = fastexec::Executor::builder().threads(2).build().unwrap();
        executor.block_on(g.run())
    });
    assert_eq!(drops.count(), MANY, "each body dropped once, none kept");
    assert_eq!(report.count(TaskState::Failed), 1, "{report}");
    assert_eq!(report.count(TaskState::Completed), 1_500);
    assert_eq!(report.count(TaskState::UpstreamFailed), MANY - 1_501);
    assert_eq!(report.output("t11"), Some(&1), "t11 completed on its retry");
}
