//! Shapes and features of `fastexec::graph` that involve no failure.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use fastexec::graph::{Graph, GraphError, Task, TaskState};
use support::within;

#[test]
fn diamond_passes_outputs_along_edges() {
    let report = within(30, || {
        let mut g = Graph::<String>::new();
        g.add(Task::new("a", |_| async { Ok("a".to_string()) }))
            .unwrap();
        g.add(Task::new("b", |i| async move { Ok(format!("{}b", i["a"])) }).after(["a"]))
            .unwrap();
        g.add(Task::new("c", |i| async move { Ok(format!("{}c", i["a"])) }).after(["a"]))
            .unwrap();
        g.add(
            Task::new("d", |i| async move { Ok(format!("{}+{}", i["b"], i["c"])) })
                .after(["b", "c"]),
        )
        .unwrap();
        g.run_blocking()
    });
    assert!(report.is_success(), "{report}");
    assert_eq!(report.output("d").unwrap(), "ab+ac");
    let d = report.task("d").unwrap();
    let (b_end, c_end) = (report.task("b").unwrap().end, report.task("c").unwrap().end);
    assert!(
        d.start >= b_end && d.start >= c_end,
        "d started before its deps ended"
    );
    assert_eq!(d.attempts, 1);
    // The critical path runs through one of the two branches.
    let path: Vec<&str> = report.critical_path().map(|t| t.id.as_str()).collect();
    assert!(
        path == ["a", "b", "d"] || path == ["a", "c", "d"],
        "{path:?}"
    );
}

#[test]
fn wide_fan_out_fan_in() {
    const WIDTH: u64 = 2_000;
    let report = within(60, || {
        let mut g = Graph::<u64>::new();
        g.add(Task::new("src", |_| async { Ok(1) })).unwrap();
        let mids: Vec<String> = (0..WIDTH).map(|i| format!("m{i}")).collect();
        g.add_batch(mids.iter().enumerate().map(|(i, id)| {
            let i = i as u64;
            Task::new(id.as_str(), move |inp| async move { Ok(inp["src"] + i) }).after(["src"])
        }))
        .unwrap();
        g.add(Task::new("sink", |inp| async move { Ok(inp.values().sum()) }).after(&mids))
            .unwrap();
        g.run_blocking()
    });
    assert!(report.is_success());
    // sum over i of (1 + i)
    assert_eq!(
        report.output("sink"),
        Some(&(WIDTH + WIDTH * (WIDTH - 1) / 2))
    );
    assert_eq!(report.tasks().len(), WIDTH as usize + 2);
}

#[test]
fn batch_in_reverse_order_runs_in_dependency_order() {
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tasks = (0..50).rev().map(|i| {
        let order = Arc::clone(&order);
        let t = Task::new(format!("t{i}"), move |_| {
            order.lock().unwrap().push(i);
            async { Ok(()) }
        });
        if i == 0 {
            t
        } else {
            t.after([format!("t{}", i - 1)])
        }
    });
    let mut g = Graph::new();
    g.add_batch(tasks).unwrap();
    let report = within(30, move || g.run_blocking());
    assert!(report.is_success());
    assert_eq!(*order.lock().unwrap(), (0..50).collect::<Vec<_>>());
}

#[test]
fn validation_errors_are_typed_and_leave_the_graph_unchanged() {
    let mut g = Graph::<()>::new();
    let ok = || |_| async { Ok(()) };
    g.add(Task::new("a", ok())).unwrap();

    let e = g.add(Task::new("a", ok())).unwrap_err();
    assert!(
        matches!(&e, GraphError::DuplicateId(id) if id.as_str() == "a"),
        "{e}"
    );

    let e = g.add(Task::new("b", ok()).after(["nope"])).unwrap_err();
    match &e {
        GraphError::MissingDependency { task, dependency } => {
            assert_eq!((task.as_str(), dependency.as_str()), ("b", "nope"));
        }
        other => panic!("{other}"),
    }

    let e = g
        .add_batch([
            Task::new("x", ok()).after(["a", "z"]),
            Task::new("y", ok()).after(["x"]),
            Task::new("z", ok()).after(["y"]),
        ])
        .unwrap_err();
    assert_eq!(e.to_string(), "cycle: x -> y -> z -> x");

    // One bad member rejects the whole batch.
    let e = g
        .add_batch([Task::new("fine", ok()), Task::new("a", ok())])
        .unwrap_err();
    assert!(matches!(e, GraphError::DuplicateId(_)));
    assert_eq!(g.len(), 1);
    assert!(!g.contains("fine") && !g.contains("x"));

    // An empty id, alone or in a batch, is named by its position.
    let e = g.add(Task::new("", ok())).unwrap_err();
    assert!(matches!(e, GraphError::EmptyId { position: 0 }), "{e}");
    let e = g
        .add_batch([Task::new("fine", ok()), Task::new("", ok())])
        .unwrap_err();
    assert_eq!(e.to_string(), "task 1 of the batch has an empty id");
    assert_eq!(g.len(), 1);
    assert!(!g.contains("fine") && !g.contains(""));
}

#[test]
fn subflow_tasks_are_validated_run_and_reported() {
    let report = within(30, || {
        let mut g = Graph::<u64>::new();
        g.add(Task::new("parent", |inp| async move {
            // Children that run after the parent and consume its output.
            inp.add_batch((1..=3).map(|k| {
                Task::new(
                    format!("child-{k}"),
                    move |i| async move { Ok(i["parent"] * k) },
                )
                .after(["parent"])
            }))?;
            // A joined child: the parent awaits it.
            inp.add_task(Task::new("helper", |_| async { Ok(7) }))?;
            let helper = inp.run().wait("helper").await?;
            // Validation applies inside a subflow too.
            let dup = inp.add_task(Task::new("child-1", |_| async { Ok(0) }));
            assert!(matches!(dup, Err(GraphError::DuplicateId(_))));
            let missing = inp.add_task(Task::new("orphan", |_| async { Ok(0) }).after(["ghost"]));
            assert!(matches!(missing, Err(GraphError::MissingDependency { .. })));
            Ok(10 + *helper)
        }))
        .unwrap();
        g.add(Task::new("collect", |i| async move { Ok(i["parent"]) }).after(["parent"]))
            .unwrap();
        g.run_blocking()
    });
    assert!(report.is_success(), "{report}");
    assert_eq!(report.tasks().len(), 6);
    assert_eq!(report.output("child-3"), Some(&51));
    assert_eq!(report.output("collect"), Some(&17));
    let parent_end = report.task("parent").unwrap().end.unwrap();
    assert!(report.task("child-1").unwrap().start.unwrap() >= parent_end);
}

#[test]
fn wait_for_one_task_and_query_states() {
    let gate = support::Gate::new();
    let mut g = Graph::<u32>::new();
    g.add(Task::new("quick", |_| async { Ok(5) })).unwrap();
    let held = gate.clone();
    g.add(Task::new("held", move |_| {
        let held = held.clone();
        async move {
            held.wait().await;
            Ok(6)
        }
    }))
    .unwrap();
    g.add(Task::new("after", |i| async move { Ok(i["held"] + 1) }).after(["held"]))
        .unwrap();
    let run = g.start();
    let r = run.clone();
    let quick = within(30, move || fastexec::block_on(r.wait("quick")));
    assert_eq!(*quick.unwrap(), 5);
    assert_eq!(run.state("quick"), Some(TaskState::Completed));
    assert_eq!(run.state("after"), Some(TaskState::Pending));
    assert_eq!(run.state("nope"), None);
    assert!(!run.is_finished());
    let unknown = fastexec::block_on(run.wait("nope"));
    assert!(matches!(unknown, Err(GraphError::UnknownTask(_))));
    gate.open();
    let r = run.clone();
    let report = within(30, move || fastexec::block_on(r.wait_all()));
    assert_eq!(report.output("after"), Some(&7));
    assert!(run.is_finished());
    // A finished run takes no more tasks.
    let late = run.add_task(Task::new("late", |_| async { Ok(0) }));
    assert!(matches!(late, Err(GraphError::Finished)));
}

#[test]
fn report_table_dot_and_trace() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut g = Graph::<()>::new();
    for id in ["fetch", "parse"] {
        let runs = Arc::clone(&runs);
        let t = Task::new(id, move |_| {
            runs.fetch_add(1, Ordering::SeqCst);
            async { Ok(()) }
        });
        g.add(if id == "parse" { t.after(["fetch"]) } else { t })
            .unwrap();
    }
    let dot = g.to_dot();
    assert!(dot.contains("\"fetch\" -> \"parse\";"), "{dot}");
    let report = within(30, move || g.run_blocking());
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    let table = report.to_string();
    let header = table.lines().next().unwrap();
    for col in [
        "task", "state", "attempts", "start ms", "end ms", "took ms", "error",
    ] {
        assert!(header.contains(col), "{header}");
    }
    assert!(table.contains("critical path"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("parse ") && l.contains("completed")),
        "{table}"
    );

    let colored = report.to_dot();
    assert!(colored.contains("fillcolor=\"palegreen\""), "{colored}");

    let trace = report.chrome_trace();
    assert!(trace.starts_with('{') && trace.trim_end().ends_with('}'));
    assert_eq!(trace.matches("\"ph\":\"X\"").count(), 2, "{trace}");
    assert!(trace.contains("\"name\":\"thread_name\""), "{trace}");
    assert_eq!(report.attempts().len(), 2);
    let a = &report.attempts()[0];
    assert_eq!((a.task.as_str(), a.number), ("fetch", 1));
    assert!(a.end.unwrap() >= a.start);
}

#[test]
fn every_attempt_is_reported_once_in_start_order_with_its_tasks_times() {
    // A 10x10 lattice whose odd tasks go asynchronous once (their first
    // attempts end on a driver, the even ones complete at once on a runner).
    let report = within(30, || {
        let mut g = Graph::<u32>::new();
        for i in 0..100u32 {
            let (row, col) = (i / 10, i % 10);
            let mut deps = Vec::new();
            if row > 0 {
                deps.push((i - 10).to_string());
            }
            if col > 0 {
                deps.push((i - 1).to_string());
            }
            let task = Task::new(i.to_string(), move |inp| async move {
                if i % 2 == 1 {
                    fastexec::yield_now().await;
                }
                Ok(inp.values().sum::<u32>() + 1)
            });
            g.add(task.after(deps)).unwrap();
        }
        g.run_blocking()
    });
    assert!(report.is_success());
    let attempts = report.attempts();
    assert_eq!(attempts.len(), 100);
    for pair in attempts.windows(2) {
        assert!(pair[0].start <= pair[1].start, "{pair:?}");
    }
    let mut seen = [false; 100];
    for a in attempts {
        let i: usize = a.task.as_str().parse().unwrap();
        assert!(!seen[i], "task {i} reported twice");
        seen[i] = true;
        let t = report.task(a.task.as_str()).unwrap();
        assert_eq!(a.number, 1);
        assert_eq!(a.outcome, fastexec::graph::AttemptOutcome::Completed);
        assert_eq!((Some(a.start), a.end), (t.start, t.end), "task {i}");
        assert!(!a.worker_name.is_empty());
    }
}
