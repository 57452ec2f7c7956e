//! A pause requested while a running task is inside `Inputs::checkpoint`,
//! after the run checked for a request and before the checkpoint waits:
//! the task pauses there, so the run must record it as paused (its state
//! `Paused`), as for a request that came before the checkpoint. It used to
//! stay `Running` while its body waited, paused, so that a caller resuming
//! the paused tasks (those whose state says so) left it waiting forever.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fastexec::graph::{Graph, Task, TaskState};
use support::{within, Gate};

#[test]
fn a_task_paused_at_a_checkpoint_is_always_recorded_paused() {
    within(60, || {
        let executor = support::executor(2);
        let (started, done) = (Gate::new(), Arc::new(AtomicBool::new(false)));
        let mut g = Graph::<u32>::new();
        let (on_start, finish) = (started.clone(), done.clone());
        g.add(Task::new("spin", move |inp| {
            let (on_start, finish) = (on_start.clone(), finish.clone());
            async move {
                on_start.open();
                // Checkpoints back to back: a pause request lands at any
                // point of one, also between its two steps.
                while !finish.load(Ordering::SeqCst) {
                    inp.checkpoint().await?;
                }
                Ok(1)
            }
        }))
        .unwrap();
        executor.block_on(async {
            let run = g.start();
            started.wait().await;
            let mut unrecorded = 0;
            for _ in 0..2_000 {
                run.pause("spin").await.unwrap();
                if run.state("spin") != Some(TaskState::Paused) {
                    unrecorded += 1;
                }
                run.resume("spin").unwrap();
            }
            done.store(true, Ordering::SeqCst);
            assert_eq!(
                unrecorded, 0,
                "pauses acknowledged with the task not paused"
            );
            assert_eq!(*run.wait("spin").await.unwrap(), 1);
        });
    });
}
