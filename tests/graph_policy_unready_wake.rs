//! A ready task taken out of the ranked set (cancelled, or paused) may let
//! the tasks behind it run: the run asks for a runner then. Before, only a
//! budget given back did, and a task that fitted waited for a running
//! task to end: here it is the one that running task waits for.

mod support;

use fastexec::graph::{Graph, RunHandle, SchedulerConfig, Task, TaskState};
use support::{executor, within, Gate};

/// Two CPU slots: `hold` (1 slot, first by priority) runs until `small`
/// has started; eight `big-N` (2 slots each) outrank `small` (1 slot, last)
/// and do not fit beside `hold`. `small` ranks past the lookahead, so
/// the runner that finds nothing to start leaves, and `small` waits.
fn graph(hold_started: &Gate, small_started: &Gate) -> Graph<u32> {
    let mut g = Graph::<u32>::with_config(SchedulerConfig::new().with_cpu_slots(2));
    let (hs, ss) = (hold_started.clone(), small_started.clone());
    let hold = Task::new("hold", move |_| {
        let (hs, ss) = (hs.clone(), ss.clone());
        async move {
            hs.open();
            ss.wait().await;
            Ok(0)
        }
    });
    g.add(hold.cpu(1).priority(100)).unwrap();
    for n in 0..8 {
        let big = Task::new(format!("big-{n}"), |_| async { Ok(1) });
        g.add(big.cpu(2).priority(50)).unwrap();
    }
    let ss = small_started.clone();
    let small = Task::new("small", move |_| {
        let ss = ss.clone();
        async move {
            ss.open();
            Ok(2)
        }
    });
    g.add(small.cpu(1)).unwrap();
    g
}

/// Which way the `big-N` leave the ready set.
#[derive(Clone, Copy)]
enum TakeOut {
    Cancel,
    Pause,
}

/// On one worker (so one runner), takes the `big-N` out of the ready set
/// once `hold` runs (cancelling them all, or pausing them until `small`
/// starts); `small` must then start. Returns the report.
fn take_the_big_ones_out(how: TakeOut) -> fastexec::graph::Report<u32> {
    within(30, move || {
        let ex = executor(1);
        let (hold_started, small_started) = (Gate::new(), Gate::new());
        let g = graph(&hold_started, &small_started);
        ex.block_on(async move {
            let run = g.start();
            // On the worker, so that it runs once the runner has left.
            let steer = fastexec::spawn({
                let run = run.clone();
                async move {
                    hold_started.wait().await;
                    take_out(&run, how).await;
                    small_started.wait().await;
                    for n in 0..8 {
                        // Paused ones go back; others have ended.
                        let _ = run.resume(&format!("big-{n}"));
                    }
                }
            });
            steer.await.unwrap();
            run.wait_all().await
        })
    })
}

async fn take_out(run: &RunHandle<u32>, how: TakeOut) {
    for n in 0..8 {
        let id = format!("big-{n}");
        match how {
            TakeOut::Cancel => run.cancel(&id).unwrap(),
            // Once `small` starts, `hold` ends and the rest may run and
            // end before they are paused: fine.
            TakeOut::Pause => drop(run.pause(&id).await),
        }
    }
}

#[test]
fn cancelling_the_ready_tasks_ahead_lets_one_that_fits_start() {
    let report = take_the_big_ones_out(TakeOut::Cancel);
    assert_eq!(report.task("small").unwrap().state, TaskState::Completed);
    assert_eq!(report.task("hold").unwrap().state, TaskState::Completed);
}

#[test]
fn pausing_the_ready_tasks_ahead_lets_one_that_fits_start() {
    let report = take_the_big_ones_out(TakeOut::Pause);
    assert!(report.is_success(), "{report}");
}
