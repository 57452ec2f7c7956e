//! `TaskGroup::cancel` keeps a `spawn_blocking` job counted in the group
//! from starting if a pool thread has not started it yet (or if it was
//! spawned into the group after the cancel): its closure is dropped unrun,
//! in the job's other groups, and its handle reports a cancelled
//! `JoinError`. A job already running runs to its end. Before, a queued job
//! of a cancelled group still ran.

mod support;

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{mpsc, Arc};

use fastexec::{Executor, TaskGroup};
use support::{
    quiet_panics, within, DropCounter, Gate, PanicOnDrop, SpawnsWhenDropped, PANIC_ON_DROP,
};

fn one_pool_thread() -> Executor {
    Executor::builder()
        .threads(1)
        .max_blocking_threads(1)
        .thread_name("jobs")
        .build()
        .unwrap()
}

/// Cancels `group` once the pool's one thread has started its job
/// (`started`), then lets that job finish and waits for the group.
async fn cancel_while_the_pool_is_busy(
    group: &TaskGroup,
    started: mpsc::Receiver<()>,
    release: &Gate,
) {
    // A plain wait: the pool thread is not a worker.
    started.recv().unwrap();
    group.cancel();
    release.open();
    group.wait().await;
}

#[test]
// A member hands out the handle of the job it spawned, unawaited.
#[allow(clippy::async_yields_async)]
fn a_queued_job_of_a_cancelled_group_never_runs() {
    let (running, queued, ran, clean_up_ran_on) = within(30, || {
        let ex = one_pool_thread();
        let ran = Arc::new(AtomicBool::new(false));
        let (clean_up_tx, clean_up_ran_on) = mpsc::channel();
        let group = TaskGroup::new();
        let outcomes = ex.block_on({
            let ran = ran.clone();
            async move {
                // The pool's one thread is busy with `running` until
                // `release` opens, so the group's job is still queued when
                // the group is cancelled.
                let release = Gate::new();
                let _open = release.opened_on_drop();
                let (started_tx, started) = mpsc::channel();
                let busy = release.clone();
                let running = fastexec::spawn_blocking(move || {
                    started_tx.send(()).unwrap();
                    busy.wait_blocking();
                    1
                });
                let clean_up = SpawnsWhenDropped(clean_up_tx);
                let queued = group
                    .spawn(async move {
                        fastexec::spawn_blocking(move || {
                            drop(clean_up);
                            ran.store(true, SeqCst);
                            2
                        })
                    })
                    .await
                    .unwrap();
                cancel_while_the_pool_is_busy(&group, started, &release).await;
                (running.await, queued.await)
            }
        });
        (
            outcomes.0,
            outcomes.1,
            ran.load(SeqCst),
            clean_up_ran_on.try_recv(),
        )
    });
    assert_eq!(running.unwrap(), 1, "the job outside the group runs");
    assert!(queued.expect_err("never ran").is_cancelled());
    assert!(!ran, "the cancelled group's job ran");
    let ran_on = clean_up_ran_on.expect("block_on returned before the clean-up task ran");
    assert!(ran_on.starts_with("jobs-"), "ran on {ran_on:?}");
}

#[test]
fn a_job_spawned_into_a_cancelled_group_never_runs() {
    let (outcome, ran) = within(30, || {
        let ex = one_pool_thread();
        let ran = Arc::new(AtomicBool::new(false));
        let group = Arc::new(TaskGroup::new());
        let (job_tx, job) = mpsc::channel();
        let member = {
            let (ran, group_in_member) = (ran.clone(), group.clone());
            // The member cancels its own group, then spawns the job in the
            // same poll: the job counts in the cancelled group.
            group.spawn(async move {
                group_in_member.cancel();
                let job = fastexec::spawn_blocking(move || ran.store(true, SeqCst));
                job_tx.send(job).unwrap();
            })
        };
        ex.block_on(async move {
            let _ = member.await;
            group.wait().await;
        });
        let job = job.try_recv().expect("the member ran its poll");
        (ex.block_on(job), ran.load(SeqCst))
    });
    assert!(outcome.expect_err("never ran").is_cancelled());
    assert!(!ran, "a job of a cancelled group ran");
}

#[test]
// A member hands out the handle of the job it spawned, unawaited.
#[allow(clippy::async_yields_async)]
fn a_running_job_of_a_cancelled_group_runs_to_its_end() {
    let outcome = within(30, || {
        let ex = one_pool_thread();
        let group = TaskGroup::new();
        ex.block_on(async move {
            let release = Gate::new();
            let _open = release.opened_on_drop();
            let (started_tx, started) = mpsc::channel();
            let busy = release.clone();
            let job = group
                .spawn(async move {
                    fastexec::spawn_blocking(move || {
                        started_tx.send(()).unwrap();
                        busy.wait_blocking();
                        3
                    })
                })
                .await
                .unwrap();
            cancel_while_the_pool_is_busy(&group, started, &release).await;
            job.await
        })
    });
    assert_eq!(outcome.unwrap(), 3);
}

#[test]
fn a_never_run_job_whose_closure_panics_as_it_drops_reports_cancelled() {
    quiet_panics(PANIC_ON_DROP);
    let (outcome, dropped) = within(30, || {
        let ex = one_pool_thread();
        let drops = DropCounter::new();
        let group = Arc::new(TaskGroup::new());
        let (job_tx, job) = mpsc::channel();
        let member = {
            let (panics, group_in_member) = (PanicOnDrop::new(drops.guard()), group.clone());
            group.spawn(async move {
                group_in_member.cancel();
                let job = fastexec::spawn_blocking(move || drop(panics));
                job_tx.send(job).unwrap();
            })
        };
        ex.block_on(async move {
            let _ = member.await;
            group.wait().await;
        });
        let job = job.try_recv().expect("the member ran its poll");
        (ex.block_on(job), drops.count())
    });
    assert_eq!(dropped, 1, "the closure was dropped once");
    // As for a task's future dropped by a cancel (and a job dropped unrun
    // after an abort): the destructor's panic is reported by the hook and
    // otherwise discarded; the job never ran, so it ended cancelled.
    let error = outcome.expect_err("never ran");
    assert!(error.is_cancelled(), "{error:?}");
}
