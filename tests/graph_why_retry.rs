//! `RunHandle::why` on a task waiting out the backoff before a retry: it
//! says which attempt comes next and when (it used to answer `None`, as
//! for a task whose attempt runs).

mod support;

use std::time::Duration;

use fastexec::graph::{Blocked, Graph, Task};
use support::{fixed_backoff, wait_for_first_failure, within};

#[test]
fn why_tells_a_task_waiting_to_retry_and_when() {
    within(30, || {
        let an_hour = Duration::from_secs(3600);
        let mut g = Graph::<u32>::new();
        let retry = fixed_backoff(3, an_hour);
        g.add(Task::new("flaky", |_| async { Err("down".into()) }).retry(retry))
            .unwrap();
        let run = g.start();
        wait_for_first_failure(&run, "flaky");
        match run.why("flaky").unwrap() {
            Some(Blocked::Retrying {
                next_attempt,
                due_in,
            }) => {
                assert_eq!(next_attempt, 2);
                assert!(due_in <= an_hour, "{due_in:?}");
                assert!(due_in > an_hour - Duration::from_secs(60), "{due_in:?}");
            }
            other => panic!("{other:?}"),
        }
        let text = run.why("flaky").unwrap().unwrap().to_string();
        assert!(
            text.starts_with("waiting to retry: attempt 2 is due in "),
            "{text}"
        );
        run.stop();
        fastexec::block_on(run.wait_all());
    });
}

#[test]
fn why_is_none_while_an_attempt_runs() {
    within(30, || {
        let gate = support::Gate::new();
        let (started, go) = (support::Gate::new(), gate.clone());
        let on_start = started.clone();
        let mut g = Graph::<u32>::new();
        g.add(Task::new("busy", move |_| {
            let (on_start, go) = (on_start.clone(), go.clone());
            async move {
                on_start.open();
                go.wait().await;
                Ok(1)
            }
        }))
        .unwrap();
        let run = g.start();
        started.wait_blocking();
        assert_eq!(run.why("busy").unwrap(), None);
        gate.open();
        assert!(fastexec::block_on(run.wait_all()).is_success());
    });
}
