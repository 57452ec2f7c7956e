//! A pause timeout too long for an `Instant` (`Duration::MAX`) means "wait
//! for the checkpoint as long as it takes".

mod support;

use std::time::Duration;

use fastexec::graph::{Graph, SchedulerConfig, Task, TaskState};
use support::{within, Gate};

#[test]
fn pause_with_the_longest_timeout_waits_for_the_checkpoint() {
    let config = SchedulerConfig::new().with_pause_timeout(Duration::MAX);
    let started = Gate::new();
    let go = Gate::new();
    let mut g = Graph::<u32>::with_config(config);
    let (on_start, gate) = (started.clone(), go.clone());
    g.add(Task::new("worker", move |inp| {
        let (on_start, gate) = (on_start.clone(), gate.clone());
        async move {
            on_start.open();
            gate.wait().await;
            inp.checkpoint().await.map_err(|_| "cancelled")?;
            Ok(7)
        }
    }))
    .unwrap();
    within(30, move || {
        fastexec::block_on(async move {
            let run = g.start();
            started.wait().await;
            // The pause is requested at its first poll; only then may the
            // body go on to its checkpoint.
            let (paused, ()) = fastexec::join!(run.pause("worker"), async { go.open() });
            paused.unwrap();
            // It returned because the task is paused, not before: the wait
            // used to panic (`Instant + Duration::MAX`), and the pause then
            // returned at once with the task still running.
            assert_eq!(run.state("worker"), Some(TaskState::Paused));
            run.resume("worker").unwrap();
            assert_eq!(*run.wait("worker").await.unwrap(), 7);
        });
    });
}
