//! Resource budgets: the CPU hard cap refuses a task at submission, naming
//! it; running tasks never hold more CPU slots than the cap; RAM is a soft
//! cap with the escape rule; custom resources.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use fastexec::graph::{
    Blocked, BudgetFull, Demand, Graph, GraphError, Resource, ResourceKind, SchedulerConfig, Task,
    TaskState,
};
use support::{within, Gate};

fn noop(id: &str) -> Task<()> {
    Task::new(id, |_| async { Ok(()) })
}

#[test]
fn a_cpu_demand_over_the_hard_cap_is_refused_at_submission() {
    let mut g = Graph::<()>::with_config(SchedulerConfig::new().with_cpu_slots(2));
    g.add(noop("fine").cpu(2)).unwrap();
    let err = g.add(noop("greedy").cpu(3)).unwrap_err();
    match &err {
        GraphError::ExceedsCap {
            task,
            resource,
            demand,
            cap,
        } => {
            assert_eq!(task.as_str(), "greedy");
            assert_eq!(*resource, Resource::Cpu);
            assert_eq!((*demand, *cap), (3, 2));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("greedy"), "{err}");
    // A batch with one such member is refused whole.
    let batch = [noop("a"), noop("b").demand(Demand::new().cpu_slots(5))];
    assert!(matches!(
        g.add_batch(batch),
        Err(GraphError::ExceedsCap { .. })
    ));
    assert_eq!(g.len(), 1);
    assert!(!g.contains("a"));

    // The same while the graph runs (as from a subflow).
    let release = Gate::new();
    let r = release.clone();
    g.add(Task::new("hold", move |_| {
        let r = r.clone();
        async move {
            r.wait().await;
            Ok(())
        }
    }))
    .unwrap();
    let run = g.start();
    let err = run.add_task(noop("late").cpu(9)).unwrap_err();
    assert!(matches!(err, GraphError::ExceedsCap { ref task, .. } if task.as_str() == "late"));
    assert!(run.state("late").is_none());
    release.open();
    within(30, move || fastexec::block_on(run.wait_all()));
}

#[test]
fn undeclared_and_hard_custom_resources_are_checked_at_submission() {
    let config = SchedulerConfig::new().with_resource("licenses", 2, ResourceKind::Hard);
    let mut g = Graph::<()>::with_config(config);
    g.add(noop("ok").demand(Demand::new().resource("licenses", 2)))
        .unwrap();
    let err = g
        .add(noop("many").demand(Demand::new().resource("licenses", 3)))
        .unwrap_err();
    assert!(matches!(err, GraphError::ExceedsCap { ref task, .. } if task.as_str() == "many"));
    let err = g
        .add(noop("gpu").demand(Demand::new().resource("gpus", 1)))
        .unwrap_err();
    assert!(
        matches!(err, GraphError::UnknownResource { ref task, ref resource }
            if task.as_str() == "gpu" && &**resource == "gpus"),
        "{err}"
    );
}

/// Two tasks take both CPU slots and wait for each other to be running; a
/// third may only start once one of them has finished.
#[test]
fn running_tasks_never_hold_more_cpu_slots_than_the_cap() {
    let mut g = Graph::<()>::with_config(SchedulerConfig::new().with_cpu_slots(2));
    let both_running = Gate::new();
    let running = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    for id in ["a", "b"] {
        let (gate, running, finished) = (both_running.clone(), running.clone(), finished.clone());
        g.add(
            Task::new(id, move |_| {
                let (gate, running, finished) = (gate.clone(), running.clone(), finished.clone());
                async move {
                    if running.fetch_add(1, Ordering::SeqCst) + 1 == 2 {
                        gate.open();
                    }
                    gate.wait().await;
                    finished.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                }
            })
            .priority(1),
        )
        .unwrap();
    }
    let seen_finished = Arc::new(AtomicUsize::new(usize::MAX));
    let (seen, fin) = (seen_finished.clone(), finished.clone());
    g.add(Task::new("c", move |_| {
        seen.store(fin.load(Ordering::SeqCst), Ordering::SeqCst);
        async { Ok(()) }
    }))
    .unwrap();
    let report = within(30, move || g.run_blocking());
    assert!(report.is_success(), "{report}");
    assert!(
        seen_finished.load(Ordering::SeqCst) >= 1,
        "c started while a and b held both slots"
    );
}

/// RAM is a soft cap: a task bigger than the cap still runs, alone (the
/// escape rule); while it runs, a task that needs RAM waits and says why,
/// and a task that needs none is not held back.
#[test]
fn the_ram_soft_cap_lets_one_oversized_task_run_alone() {
    let mib = 1 << 20;
    let config = SchedulerConfig::new().with_ram_soft_cap(100 * mib);
    let mut g = Graph::<()>::with_config(config);
    let (started, release) = (Gate::new(), Gate::new());
    let (s, r) = (started.clone(), release.clone());
    g.add(
        Task::new("huge", move |_| {
            let (s, r) = (s.clone(), r.clone());
            async move {
                s.open();
                r.wait().await;
                Ok(())
            }
        })
        .ram(500 * mib)
        .priority(1),
    )
    .unwrap();
    // Ranked below `free`, so that `free` is the one dispatched past
    // `huge`'s hold on RAM.
    g.add(noop("small").ram(10 * mib).priority(-1)).unwrap();
    g.add(noop("free").demand(Demand::new())).unwrap();

    let run = g.start();
    within(30, move || started.wait_blocking());
    let r = run.clone();
    within(30, move || fastexec::block_on(r.wait("free"))).expect("free ran");
    assert_eq!(run.state("huge"), Some(TaskState::Running));
    assert_eq!(run.state("small"), Some(TaskState::Ready));
    assert_eq!(
        run.why("small").unwrap(),
        Some(Blocked::BudgetFull(BudgetFull {
            resource: Resource::Ram,
            demand: 10 * mib,
            in_use: 500 * mib,
            cap: 100 * mib,
        }))
    );
    release.open();
    let report = within(30, move || fastexec::block_on(run.wait_all()));
    assert!(report.is_success(), "{report}");
    // small started only after huge ended.
    let (huge, small) = (report.task("huge").unwrap(), report.task("small").unwrap());
    assert!(small.start.unwrap() >= huge.end.unwrap(), "{report}");
}

/// The reviewer's deadlock: "a" holds one of two CPU slots and waits for a
/// subflow task "c" it adds; "b" needs both slots and is ready before "c"
/// at the same priority. "c" must be dispatched past "b" (a bypass), or "a"
/// never ends and neither does the graph.
#[test]
fn a_subflow_task_a_running_parent_awaits_passes_a_head_that_does_not_fit() {
    // The bodies log what they did, in order: the assertion is on what ran
    // when, not on the report's clock readings.
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let note = |log: &Arc<std::sync::Mutex<Vec<&'static str>>>, what| {
        log.lock().unwrap().push(what);
    };
    let mut g = Graph::<()>::with_config(SchedulerConfig::new().with_cpu_slots(2));
    let (log_a, log_b) = (log.clone(), log.clone());
    g.add(Task::new("a", move |inp| {
        let log = log_a.clone();
        async move {
            let log_c = log.clone();
            inp.add_task(Task::new("c", move |_| {
                let log = log_c.clone();
                async move {
                    note(&log, "c ran");
                    Ok(())
                }
            }))?;
            inp.run().wait("c").await?;
            note(&log, "a ends");
            Ok(())
        }
    }))
    .unwrap();
    g.add(
        Task::new("b", move |_| {
            let log = log_b.clone();
            async move {
                note(&log, "b ran");
                Ok(())
            }
        })
        .cpu(2),
    )
    .unwrap();
    let report = within(30, move || g.run_blocking());
    assert!(report.is_success(), "{report}");
    // c was dispatched past b (a bypass), and b, needing both slots, ran
    // only once a had ended and given its slot back.
    assert_eq!(
        *log.lock().unwrap(),
        ["c ran", "a ends", "b ran"],
        "{report}"
    );
}

#[test]
fn soft_capped_tasks_that_fit_together_run_together() {
    let mib = 1 << 20;
    let config = SchedulerConfig::new().with_ram_soft_cap(100 * mib);
    let mut g = Graph::<()>::with_config(config);
    let both = Gate::new();
    let count = Arc::new(AtomicUsize::new(0));
    for id in ["x", "y"] {
        let (both, count) = (both.clone(), count.clone());
        g.add(
            Task::new(id, move |_| {
                let (both, count) = (both.clone(), count.clone());
                async move {
                    if count.fetch_add(1, Ordering::SeqCst) + 1 == 2 {
                        both.open();
                    }
                    // Both must be running at once (50 + 50 <= 100) or this hangs.
                    both.wait().await;
                    Ok(())
                }
            })
            .ram(50 * mib),
        )
        .unwrap();
    }
    let report = within(30, move || g.run_blocking());
    assert!(report.is_success(), "{report}");
}
