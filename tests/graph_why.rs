//! "Why isn't it running?": every task that is not running says why:
//! the dependencies it waits on, the budget that is full, how many ready
//! tasks outrank it, that it is paused, or that it has ended.

mod support;

use fastexec::graph::{
    Blocked, BudgetFull, Graph, PausedFrom, Resource, SchedulerConfig, Task, TaskState,
};
use support::{executor, gated_task, within, Gate};

fn noop(id: &str) -> Task<u32> {
    Task::new(id, |_| async { Ok(0) })
}

#[test]
fn waiting_on_names_only_the_dependencies_not_yet_completed() {
    let (started, release) = (Gate::new(), Gate::new());
    let mut g = Graph::<u32>::new();
    g.add(noop("done")).unwrap();
    let (s, r) = (started.clone(), release.clone());
    g.add(Task::new("slow", move |_| {
        let (s, r) = (s.clone(), r.clone());
        async move {
            s.open();
            r.wait().await;
            Ok(1)
        }
    }))
    .unwrap();
    g.add(noop("last").after(["done", "slow"])).unwrap();
    let run = g.start();
    within(30, move || started.wait_blocking());
    let r = run.clone();
    within(30, move || fastexec::block_on(r.wait("done"))).unwrap();
    assert_eq!(
        run.why("last").unwrap(),
        Some(Blocked::WaitingOn(vec!["slow".into()]))
    );
    assert_eq!(run.why("slow").unwrap(), None, "it is running");
    release.open();
    let r = run.clone();
    within(30, move || fastexec::block_on(r.wait_all()));
    assert_eq!(
        run.why("last").unwrap(),
        Some(Blocked::Finished(TaskState::Completed))
    );
    assert!(run.why("ghost").is_err());
}

#[test]
fn a_full_cpu_budget_and_a_pause_are_reported() {
    let mut g = Graph::<u32>::with_config(SchedulerConfig::new().with_cpu_slots(1));
    let (started, release) = (Gate::new(), Gate::new());
    let (s, r) = (started.clone(), release.clone());
    g.add(
        Task::new("holder", move |_| {
            let (s, r) = (s.clone(), r.clone());
            async move {
                s.open();
                r.wait().await;
                Ok(1)
            }
        })
        .priority(1),
    )
    .unwrap();
    g.add(noop("waiting")).unwrap();
    g.add(noop("paused")).unwrap();
    let run = g.start();
    within(30, move || started.wait_blocking());
    assert_eq!(
        run.why("waiting").unwrap(),
        Some(Blocked::BudgetFull(BudgetFull {
            resource: Resource::Cpu,
            demand: 1,
            in_use: 1,
            cap: 1,
        }))
    );
    let r = run.clone();
    within(30, move || fastexec::block_on(r.pause("paused"))).unwrap();
    assert_eq!(
        run.why("paused").unwrap(),
        Some(Blocked::Paused {
            from: PausedFrom::Ready
        })
    );
    run.resume("paused").unwrap();
    release.open();
    let report = within(30, move || fastexec::block_on(run.wait_all()));
    assert!(report.is_success(), "{report}");
}

/// With its only worker thread blocked by a task's body, ready tasks that
/// fit (no caps) wait for a runner: each says how many outrank it.
#[test]
fn ready_tasks_that_fit_say_how_many_outrank_them() {
    let ex = executor(1);
    let (started, release) = (Gate::new(), Gate::new());
    // Dropped before `ex` if an assertion fails: the hog returns, so the
    // executor's drop does not wait for it for ever.
    let _release_on_failure = release.opened_on_drop();
    let mut g = Graph::<u32>::new();
    let (s, r) = (started.clone(), release.clone());
    g.add(
        Task::new("hog", move |_| {
            // Blocks the worker thread on purpose (not the test's
            // synchronisation: the test waits on `started`).
            s.open();
            r.wait_blocking();
            async { Ok(1) }
        })
        .priority(100),
    )
    .unwrap();
    for (id, p) in [("p5", 5), ("p3", 3), ("p1", 1), ("q3", 3)] {
        g.add(noop(id).priority(p)).unwrap();
    }
    let start = ex.spawn(async move { g.start() });
    let run = within(30, move || futures::executor::block_on(start)).unwrap();
    within(30, move || started.wait_blocking());
    let by = |id: &str| match run.why(id).unwrap() {
        Some(Blocked::Outranked { by }) => by,
        other => panic!("{id}: {other:?}"),
    };
    assert_eq!(by("p5"), 0);
    // Nothing outranks it: it only waits for the busy runner.
    let first = run.why("p5").unwrap().unwrap().to_string();
    // p3 became ready before q3 (added first): it ranks above it.
    assert_eq!(by("p3"), 1);
    assert_eq!(by("q3"), 2);
    assert_eq!(by("p1"), 3);
    release.open();
    let report = within(30, move || futures::executor::block_on(run.wait_all()));
    assert!(report.is_success(), "{report}");
    drop(ex);
    assert_eq!(first, "ready, next in line: waiting for a runner");
}

/// A task paused while pending, whose dependencies have all completed
/// since, resumes as ready: `why` says so (not "resumes as pending").
#[test]
fn a_paused_pending_task_whose_dependencies_completed_resumes_as_ready() {
    let (started, release) = (Gate::new(), Gate::new());
    let mut g = Graph::<u32>::new();
    g.add(gated_task("a", &started, &release)).unwrap();
    g.add(noop("b").after(["a"])).unwrap();
    let run = g.start();
    let r = run.clone();
    within(30, move || fastexec::block_on(r.pause("b"))).unwrap();
    let paused = Blocked::Paused {
        from: PausedFrom::Pending,
    };
    assert_eq!(run.why("b").unwrap(), Some(paused), "`a` has not completed");
    release.open();
    let r = run.clone();
    within(30, move || fastexec::block_on(r.wait("a"))).unwrap();
    let why = run.why("b").unwrap().unwrap();
    assert_eq!(
        why,
        Blocked::Paused {
            from: PausedFrom::Ready
        }
    );
    assert_eq!(why.to_string(), "paused; resumes as ready");
    run.resume("b").unwrap();
    let report = within(30, move || fastexec::block_on(run.wait_all()));
    assert!(report.is_success(), "{report}");
}
