//! A ready task paused and resumed "keeps the priority it had aged to"
//! (`RunHandle::pause`): the time it spends paused is not time waited.
//! Before, it resumed with its old ready time, so a pause aged it: a
//! low-priority task paused for a while came back above tasks of a
//! higher priority than it had ever reached.

mod support;

use std::time::{Duration, Instant};

use fastexec::graph::{Graph, SchedulerConfig, Task};
use support::{executor, gated_task, within, Gate};

const INTERVAL: Duration = Duration::from_millis(100);

#[test]
fn a_ready_task_does_not_age_while_it_is_paused() {
    let report = within(30, || {
        let ex = executor(2);
        // One slot, +1 priority per 100 ms waited.
        let config = SchedulerConfig::new()
            .with_cpu_slots(1)
            .with_aging(INTERVAL, 1);
        let mut g = Graph::<u32>::with_config(config);
        let (hold_started, hold_release) = (Gate::new(), Gate::new());
        g.add(gated_task("hold", &hold_started, &hold_release).priority(100))
            .unwrap();
        // Ready from here on (it does not fit beside `hold`).
        let low_ready_by = Instant::now();
        g.add(Task::new("low", |_| async { Ok(1) })).unwrap();
        ex.block_on(async move {
            let run = g.start();
            hold_started.wait().await;
            run.pause("low").await.unwrap();
            // What `low` had aged to when paused, at most.
            let aged = low_ready_by.elapsed().as_nanos() / INTERVAL.as_nanos() + 1;
            let high = i32::try_from(aged).unwrap() + 2;
            // Not a synchronisation: the scenario's input, a pause long
            // enough to lift `low` past `high` if it counted as waiting.
            let paused = INTERVAL * (u32::try_from(high).unwrap() + 5);
            fastexec::time::sleep(paused).await;
            run.add_task(Task::new("high", |_| async { Ok(2) }).priority(high))
                .unwrap();
            run.resume("low").unwrap();
            hold_release.open();
            run.wait_all().await
        })
    });
    assert!(report.is_success(), "{report}");
    let order: Vec<&str> = report.attempts().iter().map(|a| a.task.as_str()).collect();
    assert_eq!(order, ["hold", "high", "low"], "{report}");
}
