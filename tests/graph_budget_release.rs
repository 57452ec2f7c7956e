//! A task gives its budget back however it ends: an error, a panic (async
//! or sync body), its own timeout, a cancel while it runs, a pause that
//! timed out. Each of these tasks needs the whole CPU capacity, so one
//! leaked slot would keep the last task, which needs it all too, from ever
//! starting (the test would hang instead of finishing).

mod support;

use std::time::Duration;

use fastexec::graph::{Graph, SchedulerConfig, Task, TaskState};
use support::{within, Gate};

#[test]
fn every_way_of_ending_gives_the_whole_capacity_back() {
    within(60, || {
        let config = SchedulerConfig::new()
            .with_cpu_slots(2)
            .with_pause_timeout(Duration::from_millis(20));
        let mut g = Graph::<u32>::with_config(config);
        // Priorities make them run one after the other, in this order.
        g.add(
            Task::new("fails", |_| async { Err("no".into()) })
                .cpu(2)
                .priority(10),
        )
        .unwrap();
        g.add(
            Task::new("panics", |_| async { panic!("async boom") })
                .cpu(2)
                .priority(9),
        )
        .unwrap();
        g.add(
            Task::sync("sync-panics", |_| panic!("sync boom"))
                .cpu(2)
                .priority(8),
        )
        .unwrap();
        g.add(
            Task::new("times-out", |_| async {
                fastexec::time::sleep(Duration::from_secs(3600)).await;
                Ok(1)
            })
            .timeout(Duration::from_millis(10))
            .retries(1)
            .cpu(2)
            .priority(7),
        )
        .unwrap();
        let (cancel_started, never) = (Gate::new(), Gate::new());
        g.add(
            support::gated_task("cancelled", &cancel_started, &never)
                .cpu(2)
                .priority(6),
        )
        .unwrap();
        let (pause_started, never2) = (Gate::new(), Gate::new());
        g.add(
            support::gated_task("pause-times-out", &pause_started, &never2)
                .cpu(2)
                .priority(5),
        )
        .unwrap();
        g.add(Task::new("needs-all", |_| async { Ok(2) }).cpu(2))
            .unwrap();
        let report = fastexec::block_on(async {
            let run = g.start();
            cancel_started.wait().await;
            run.cancel("cancelled").unwrap();
            pause_started.wait().await;
            assert!(run.pause("pause-times-out").await.is_err());
            run.wait_all().await
        });
        let state = |id: &str| report.task(id).unwrap().state;
        for id in ["fails", "panics", "sync-panics", "times-out"] {
            assert_eq!(state(id), TaskState::Failed, "{report}");
        }
        assert_eq!(report.task("times-out").unwrap().attempts, 2);
        assert_eq!(state("cancelled"), TaskState::Cancelled);
        assert_eq!(state("pause-times-out"), TaskState::Cancelled);
        assert_eq!(report.output("needs-all"), Some(&2), "{report}");
        drop((never, never2));
    });
}
