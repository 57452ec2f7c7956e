//! A ready task that time alone makes the best one is started, with
//! nothing else happening in the run. Runners are asked for after events
//! (a task becomes ready, capacity is freed, a task leaves the ready set),
//! but aging (`p + floor(wait / I) * B`) can change which ready task ranks
//! first with no event at all. Before, when the best task did not fit and
//! held the others back (look-ahead, reservation), the runner left, and a
//! task that aging later made the best one, and that fits, waited for some
//! running task to end: here, forever, since the one running task waits
//! for it.

mod support;

use std::time::Duration;

use fastexec::graph::{Graph, SchedulerConfig, Task};
use support::{executor, gated_task, within, Gate};

#[test]
fn a_task_that_aging_makes_the_best_starts_with_nothing_else_happening() {
    within(30, || {
        let ex = executor(2);
        // Two slots, +1 priority per second waited.
        let config = SchedulerConfig::new()
            .with_cpu_slots(2)
            .with_aging(Duration::from_secs(1), 1);
        let mut g = Graph::<u32>::with_config(config);
        let (hold_started, late_started) = (Gate::new(), Gate::new());
        let (gap_started, gap_release) = (Gate::new(), Gate::new());
        // `hold` runs until `late` has started.
        g.add(gated_task("hold", &hold_started, &late_started).priority(100))
            .unwrap();
        g.add(gated_task("gap", &gap_started, &gap_release).priority(100))
            .unwrap();
        let ls = late_started.clone();
        g.add(Task::new("late", move |_| {
            let ls = ls.clone();
            async move {
                ls.open();
                Ok(1)
            }
        }))
        .unwrap();
        ex.block_on(async move {
            let run = g.start();
            hold_started.wait().await;
            gap_started.wait().await;
            // Not a synchronisation: the scenario's input. The big tasks
            // become ready half an interval after `late`, so that from then
            // on each ranks first for half of every second.
            fastexec::time::sleep(Duration::from_millis(500)).await;
            let big = (0..8).map(|n| {
                Task::new(format!("big-{n}"), |_| async { Ok(2) })
                    .cpu(2)
                    .priority(1)
            });
            run.add_batch(big).unwrap();
            // One slot free: the best (a big task, 2 slots) does not fit,
            // and the seven tasks offered after it are big ones too.
            gap_release.open();
            run.wait("gap").await.unwrap();
            // From 1 s after it became ready, `late` ranks first for half
            // of every second, and it fits.
            let started = fastexec::time::timeout(Duration::from_secs(10), late_started.wait());
            if started.await.is_err() {
                let why = run.why("late").unwrap().map(|b| b.to_string());
                panic!("`late` did not start; why: {why:?}");
            }
            let report = run.wait_all().await;
            assert!(report.is_success(), "{report}");
        })
    });
}
