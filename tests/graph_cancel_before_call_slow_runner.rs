//! An attempt whose body is called only after its task's cancel returned
//! did not run (`Attempt::ran` false, no start, no end), however long the
//! runner took between taking it and calling the body. Here the gap is the
//! `graph_task` span the runner makes when a `tracing` subscriber wants
//! debug spans (a subscriber's code; a runner descheduled there is the
//! same): the subscriber below lets this thread cancel the task while the
//! span is made, and waits until the cancel has returned.
//!
//! Before, the runner reported its clock reading from before the span as
//! the call, which came before the cancel, so the attempt counted as run,
//! with a start, an end and a duration. A retry's driver reported no call
//! at all, so a retry cancelled before its body's call kept the time from
//! its take to the cancel: the second test shows it at attempt 2 of "r".

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::Duration;

use fastexec::graph::{Graph, Task, TaskState};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

type Gate = (Sender<()>, Receiver<()>);

/// Per (task id, attempt): tell the test thread "about to be called",
/// wait for "cancelled".
static GATES: OnceLock<Mutex<HashMap<(String, String), Gate>>> = OnceLock::new();

fn gate(id: &str, attempt: u32) -> (Receiver<()>, Sender<()>) {
    static SUBSCRIBER: Once = Once::new();
    SUBSCRIBER.call_once(|| {
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(SlowAt))
            .unwrap();
    });
    let (to_test, from_runner) = channel();
    let (to_runner, from_test) = channel();
    GATES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap()
        .insert((id.to_string(), attempt.to_string()), (to_test, from_test));
    (from_runner, to_runner)
}

#[derive(Default)]
struct Fields(Option<String>, Option<String>);
impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "id" => self.0 = Some(format!("{value:?}")),
            "attempt" => self.1 = Some(format!("{value:?}")),
            _ => {}
        }
    }
}

struct SlowAt;
impl<S: tracing::Subscriber> Layer<S> for SlowAt {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        if attrs.metadata().name() != "graph_task" {
            return;
        }
        let mut f = Fields::default();
        attrs.record(&mut f);
        let (Some(id), Some(attempt)) = (f.0, f.1) else {
            return;
        };
        let gate = GATES
            .get()
            .and_then(|g| g.lock().unwrap().remove(&(id, attempt)));
        if let Some((to_test, from_test)) = gate {
            to_test.send(()).unwrap();
            from_test.recv().unwrap();
        }
    }
}

#[test]
fn a_body_called_after_its_cancel_returned_did_not_run() {
    let (from_runner, to_runner) = gate("c", 1);
    let c_called_after_cancel = Arc::new(AtomicBool::new(false));
    let cancel_returned = Arc::new(AtomicBool::new(false));
    let report = support::within(30, {
        let (flag, returned) = (c_called_after_cancel.clone(), cancel_returned.clone());
        move || {
            let ex = support::executor(1);
            let mut g = Graph::<u32>::new();
            g.add(Task::sync("a", |_| Ok(1))).unwrap();
            g.add(Task::sync("c", move |_| {
                flag.store(returned.load(Ordering::SeqCst), Ordering::SeqCst);
                Ok(3)
            }))
            .unwrap();
            // Started in a task: a block_on would wait for the run.
            let run = futures::executor::block_on(ex.spawn(async move { g.start() })).unwrap();
            from_runner.recv().unwrap();
            run.cancel("c").unwrap();
            cancel_returned.store(true, Ordering::SeqCst);
            to_runner.send(()).unwrap();
            ex.block_on(run.wait_all())
        }
    });
    assert!(
        c_called_after_cancel.load(Ordering::SeqCst),
        "the scenario: c's body called after its cancel returned"
    );
    let t = report.task("c").unwrap();
    assert_eq!(t.state, TaskState::Cancelled);
    let a = report
        .attempts()
        .iter()
        .find(|a| a.task.as_str() == "c")
        .unwrap();
    assert!(
        !a.ran && (t.start, t.end) == (None, None),
        "c's body was called after the cancel, yet: {a:?}\n{t:?}\n{report}"
    );
}

#[test]
fn a_retry_called_after_its_cancel_returned_did_not_run() {
    let (from_runner, to_runner) = gate("r", 2);
    let r2_called_after_cancel = Arc::new(AtomicBool::new(false));
    let cancel_returned = Arc::new(AtomicBool::new(false));
    let report = support::within(30, {
        let (flag, returned) = (r2_called_after_cancel.clone(), cancel_returned.clone());
        move || {
            let ex = support::executor(1);
            let mut g = Graph::<u32>::new();
            g.add(
                Task::sync("r", move |inp| {
                    if inp.attempt() == 1 {
                        return Err("first attempt fails".into());
                    }
                    flag.store(returned.load(Ordering::SeqCst), Ordering::SeqCst);
                    Ok(3)
                })
                .retry(support::fixed_backoff(2, Duration::from_millis(1))),
            )
            .unwrap();
            let run = futures::executor::block_on(ex.spawn(async move { g.start() })).unwrap();
            from_runner.recv().unwrap();
            run.cancel("r").unwrap();
            cancel_returned.store(true, Ordering::SeqCst);
            to_runner.send(()).unwrap();
            ex.block_on(run.wait_all())
        }
    });
    assert!(
        r2_called_after_cancel.load(Ordering::SeqCst),
        "the scenario: r's second body call came after its cancel returned"
    );
    let a2 = report
        .attempts()
        .iter()
        .find(|a| a.task.as_str() == "r" && a.number == 2)
        .unwrap();
    assert!(
        !a2.ran,
        "r's attempt 2 was called after the cancel, yet: {a2:?}\n{report}"
    );
}
