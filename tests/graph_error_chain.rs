//! A task's error keeps the chain of causes its body returned: reporters
//! that walk `Error::source` (anyhow's `{:#}`, tracing) see every cause.

use std::error::Error;
use std::fmt;

use fastexec::graph::{Graph, GraphError, Task, TaskError};

/// An error with a cause, as a body built on a library would return.
#[derive(Debug)]
struct Fetch {
    cause: std::io::Error,
}

impl fmt::Display for Fetch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("fetching the sources failed")
    }
}

impl Error for Fetch {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.cause)
    }
}

/// The messages of `e` and its sources, outermost first.
fn chain(e: &(dyn Error + 'static)) -> Vec<String> {
    let mut messages = Vec::new();
    let mut next = Some(e);
    while let Some(e) = next {
        messages.push(e.to_string());
        next = e.source();
    }
    messages
}

#[test]
fn a_failed_task_keeps_its_errors_causes() {
    let mut g = Graph::<u32>::new();
    g.add(Task::new("fetch", |_| async {
        let cause =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
        Err(Fetch { cause }.into())
    }))
    .unwrap();
    let report = g.run_blocking();
    let error = report.task("fetch").unwrap().error.clone().unwrap();
    assert!(matches!(error, TaskError::Failed(_)));
    assert_eq!(error.to_string(), "fetching the sources failed");
    assert_eq!(
        chain(&error),
        ["fetching the sources failed", "connection refused"]
    );

    // Through a wait, once more, each cause once.
    let mut g = Graph::<u32>::new();
    g.add(Task::new("fetch", |_| async {
        let cause = std::io::Error::other("connection refused");
        Err(Fetch { cause }.into())
    }))
    .unwrap();
    let run = g.start();
    let err: GraphError = fastexec::block_on(run.wait("fetch")).unwrap_err();
    let messages = chain(&err);
    assert_eq!(
        messages.last().map(String::as_str),
        Some("connection refused"),
        "{messages:?}"
    );
    assert_eq!(
        messages
            .iter()
            .filter(|m| m.as_str() == "connection refused")
            .count(),
        1,
        "{messages:?}"
    );
}

/// `{:#}` as anyhow prints it: the messages of the chain joined by ": ".
fn alternate(e: &(dyn Error + 'static)) -> String {
    chain(e).join(": ")
}

#[test]
fn a_waits_error_tells_each_cause_once_along_its_chain() {
    let mut g = Graph::<u32>::new();
    g.add(Task::new("fetch", |_| async {
        let cause = std::io::Error::other("connection refused");
        Err(Fetch { cause }.into())
    }))
    .unwrap();
    g.add(Task::new("build", |_| async { Ok(1) }).after(["fetch"]))
        .unwrap();
    let run = g.start();

    // The reason is in the message; its cause follows, once.
    let err = fastexec::block_on(run.wait("fetch")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "task `fetch` did not complete: fetching the sources failed"
    );
    assert_eq!(
        chain(&err),
        [
            "task `fetch` did not complete: fetching the sources failed",
            "connection refused"
        ]
    );
    assert_eq!(
        alternate(&err),
        "task `fetch` did not complete: fetching the sources failed: connection refused"
    );
    // No message of the chain is repeated by a later one.
    let messages = chain(&err);
    for (n, m) in messages.iter().enumerate() {
        for later in &messages[n + 1..] {
            assert!(!m.contains(later.as_str()), "{messages:?}");
        }
    }

    // A reason with no cause of its own ends the chain.
    let err = fastexec::block_on(run.wait("build")).unwrap_err();
    assert_eq!(
        chain(&err),
        ["task `build` did not complete: upstream task `fetch` failed"]
    );
}
