//! Dispatch by priority: with one CPU slot tasks run one at a time, highest
//! priority first; aging lets a low-priority task through a continuous
//! flood of high-priority ones within a bound computed from the config.

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fastexec::graph::{Graph, SchedulerConfig, Task, TaskState};
use support::within;

#[test]
fn one_cpu_slot_runs_ready_tasks_by_priority_then_id() {
    // Aging off: the order is the base priorities', ties by id (all became
    // ready at the same instant, when the batch was added).
    let config = SchedulerConfig::new()
        .with_cpu_slots(1)
        .with_aging(Duration::from_secs(3600), 0);
    let mut g = Graph::<()>::with_config(config);
    let tasks = [
        ("p3", 3),
        ("m1", -1),
        ("p7", 7),
        ("z0", 0),
        ("a0", 0),
        ("p5", 5),
    ];
    g.add_batch(
        tasks
            .iter()
            .map(|&(id, p)| Task::new(id, |_| async { Ok(()) }).priority(p)),
    )
    .unwrap();
    let report = within(30, move || g.run_blocking());
    assert!(report.is_success(), "{report}");
    let order: Vec<&str> = report.attempts().iter().map(|a| a.task.as_str()).collect();
    assert_eq!(order, ["p7", "p5", "p3", "a0", "z0", "m1"]);
    // One slot: no attempt started before the previous one ended.
    for pair in report.attempts().windows(2) {
        assert!(pair[1].start >= pair[0].end.unwrap(), "{report}");
    }
}

/// What the flood tasks and the low task record, in dispatch order.
#[derive(Default)]
struct Log {
    /// (flood task number, an instant at or before it became ready).
    flood_added: Vec<(usize, Instant)>,
    /// Flood task numbers in the order they started.
    flood_started: Vec<usize>,
    /// How many flood tasks had started when the low task started.
    low_started_after: Option<usize>,
    /// When the first flood task started: the low task was ready by then
    /// (it is ready from its submission on, which comes before any task
    /// runs), so its ready time is at or before this instant.
    low_ready_by: Option<Instant>,
}

fn flood_task(n: usize, log: Arc<Mutex<Log>>, low_ran: Arc<AtomicBool>) -> Task<()> {
    Task::new(format!("flood-{n}"), move |inp| {
        let (log, low_ran) = (log.clone(), low_ran.clone());
        async move {
            {
                let mut l = log.lock().unwrap();
                l.low_ready_by.get_or_insert_with(Instant::now);
                l.flood_started.push(n);
            }
            // Keep the ready set full of high-priority work until the low
            // task has run (bounded, so a starving scheduler fails the test).
            if !low_ran.load(Ordering::SeqCst) && n < 1_000_000 {
                log.lock()
                    .unwrap()
                    .flood_added
                    .push((n + 1, Instant::now()));
                inp.add_task(flood_task(n + 1, log, low_ran).priority(HIGH))?;
            }
            Ok(())
        }
    })
}

const HIGH: i32 = 10;

#[test]
fn a_low_priority_task_starts_within_the_aging_bound_under_a_flood() {
    let interval = Duration::from_millis(1);
    let boost = 2;
    let config = SchedulerConfig::new()
        .with_cpu_slots(1)
        .with_aging(interval, boost);
    let log = Arc::new(Mutex::new(Log::default()));
    let low_ran = Arc::new(AtomicBool::new(false));
    let mut g = Graph::<()>::with_config(config);
    let (low_log, low_flag) = (log.clone(), low_ran.clone());
    let low = Task::new("low", move |_| {
        let mut l = low_log.lock().unwrap();
        l.low_started_after = Some(l.flood_started.len());
        low_flag.store(true, Ordering::SeqCst);
        async { Ok(()) }
    });
    // One batch: both become ready at the same instant, so "low" cannot
    // have aged past the seed however long the thread is preempted here.
    log.lock().unwrap().flood_added.push((0, Instant::now()));
    g.add_batch([
        low,
        flood_task(0, log.clone(), low_ran.clone()).priority(HIGH),
    ])
    .unwrap();
    let report = within(60, move || g.run_blocking());
    assert_eq!(report.task("low").unwrap().state, TaskState::Completed);

    // The low task's effective priority reaches HIGH after
    // ceil(HIGH / boost) intervals of waiting; from then on it beats every
    // flood task that became ready later than it by more than that (ties go
    // to the earlier ready time). One more interval is slack. The bound is
    // measured from an instant at or after the low task's ready time, and a
    // flood task's recorded time is at or before its ready time, so no
    // delay of the test's threads can make a correct scheduler fail it.
    let log = log.lock().unwrap();
    let started_before = log.low_started_after.expect("the low task ran");
    assert!(started_before >= 1, "the high-priority seed must go first");
    let low_ready_by = log.low_ready_by.expect("a flood task ran");
    let catch_up = interval * ((HIGH as u32).div_ceil(boost) + 1);
    let added_at: std::collections::HashMap<usize, Instant> =
        log.flood_added.iter().copied().collect();
    for &n in &log.flood_started[..started_before] {
        let ready = added_at[&n];
        assert!(
            ready < low_ready_by + catch_up,
            "flood-{n} ran before the low task although it became ready {:?} after it \
             (bound {catch_up:?})",
            ready - low_ready_by
        );
    }
    // And the flood really was continuous: high-priority work was waiting
    // for the whole time the low task waited.
    assert!(
        log.flood_started.len() > started_before,
        "the flood stopped early"
    );
}

#[test]
fn equal_priorities_run_in_ready_order() {
    let config = SchedulerConfig::new().with_cpu_slots(1);
    let mut g = Graph::<()>::with_config(config);
    let ran = Arc::new(AtomicUsize::new(0));
    for i in 0..20 {
        let ran = ran.clone();
        g.add(Task::new(format!("t{i:02}"), move |_| {
            ran.fetch_add(1, Ordering::SeqCst);
            async { Ok(()) }
        }))
        .unwrap();
    }
    let report = within(30, move || g.run_blocking());
    let order: Vec<String> = report
        .attempts()
        .iter()
        .map(|a| a.task.to_string())
        .collect();
    let expected: Vec<String> = (0..20).map(|i| format!("t{i:02}")).collect();
    assert_eq!(order, expected);
    assert_eq!(ran.load(Ordering::SeqCst), 20);
}
