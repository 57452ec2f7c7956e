//! With a `tracing` subscriber, each attempt runs inside a span named
//! `graph_task`: while its body is called and while its future is polled
//! (a sync body: while it is called).
//! The subscriber is global (worker threads must see it), so this binary
//! holds a single test.

mod support;

use fastexec::graph::{Graph, Inputs, Task};
use support::within;

/// The name of the span the calling code runs in.
fn current_span() -> Option<&'static str> {
    tracing::Span::current().metadata().map(|m| m.name())
}

#[test]
fn attempts_run_inside_a_graph_task_span() {
    tracing::subscriber::set_global_default(tracing_subscriber::registry())
        .expect("no other subscriber in this binary");
    let report = within(30, || {
        let mut g = Graph::<(Option<&'static str>, Option<&'static str>)>::new();
        g.add(Task::new("a", |_| {
            let called_in = current_span();
            async move { Ok((called_in, current_span())) }
        }))
        .unwrap();
        // Sync bodies too; the span reads each one's id from the runner's
        // reused inputs, which must then be its own.
        for id in ["s1", "s2"] {
            let body = move |inp: &Inputs<_>| {
                assert_eq!(inp.task_id().as_str(), id);
                Ok((current_span(), None))
            };
            g.add(Task::sync(id, body).after(["a"])).unwrap();
        }
        g.run_blocking()
    });
    assert!(report.is_success(), "{report}");
    assert_eq!(
        report.output("a"),
        Some(&(Some("graph_task"), Some("graph_task")))
    );
    for id in ["s1", "s2"] {
        assert_eq!(report.output(id), Some(&(Some("graph_task"), None)), "{id}");
    }
    assert_eq!(current_span(), None, "the span is left after the run");
}
