//! The soft caps' escape rule looks at the resource: a task demanding more
//! RAM than the soft cap runs once no running task holds any RAM, even
//! while tasks that need none run. A parent with no demand that waits for
//! an oversized child it added (what the docs advise for a waiting parent)
//! does not keep the child waiting forever.

mod support;

use fastexec::graph::{Demand, Graph, SchedulerConfig, Task};
use support::{within, Gate};

#[test]
fn a_parent_with_no_demand_waiting_for_an_oversized_child_does_not_deadlock() {
    within(30, || {
        let mut g = Graph::<u32>::with_config(SchedulerConfig::new().with_ram_soft_cap(100));
        g.add(
            Task::new("parent", |inp| async move {
                inp.add_task(Task::new("child", |_| async { Ok(5) }).ram(150))?;
                let child = inp.run().wait("child").await?;
                Ok(*child + 1)
            })
            .demand(Demand::new().cpu_slots(0)),
        )
        .unwrap();
        let report = g.run_blocking();
        assert_eq!(report.output("child"), Some(&5));
        assert_eq!(report.output("parent"), Some(&6));
    });
}

#[test]
fn an_oversized_task_starts_next_to_a_running_task_that_holds_none_of_the_resource() {
    within(30, || {
        let mut g = Graph::<u32>::with_config(SchedulerConfig::new().with_ram_soft_cap(100));
        let (started, release) = (Gate::new(), Gate::new());
        // Holds a CPU slot, no RAM, until the oversized task has run.
        g.add(support::gated_task("cpu-only", &started, &release))
            .unwrap();
        let open = release.clone();
        g.add(
            Task::new("oversized", move |_| {
                let open = open.clone();
                async move {
                    open.open();
                    Ok(2)
                }
            })
            .ram(150),
        )
        .unwrap();
        let report = fastexec::block_on(async {
            let run = g.start();
            started.wait().await;
            run.wait_all().await
        });
        assert!(report.is_success(), "{report}");
        // Still a soft cap: two tasks over it together are not admitted.
        let mut g = Graph::<u32>::with_config(
            SchedulerConfig::new()
                .with_ram_soft_cap(100)
                .with_cpu_slots(4),
        );
        for id in ["big-1", "big-2"] {
            g.add(
                Task::new(id, |inp| async move {
                    Ok(u32::from(
                        inp.run().state("big-1") == inp.run().state("big-2"),
                    ))
                })
                .ram(150),
            )
            .unwrap();
        }
        let report = g.run_blocking();
        assert_eq!(report.output("big-1"), Some(&0), "{report}");
        assert_eq!(report.output("big-2"), Some(&0), "{report}");
    });
}
