//! A blocking job runs in its executor's context, as a task does: inside
//! it, `spawn` and `block_on` use that executor, and what it spawns counts
//! in the groups of the code that spawned the job. Before the fix a job of
//! an explicit executor saw no executor at all: `current_threads()` said
//! `None`, and `spawn` or `block_on` inside it started and used the global
//! executor.

mod support;

use std::sync::Arc;

use fastexec::signal::Notify;
use fastexec::TaskGroup;
use support::{named, spin_until, thread_name, with_timeout};

#[test]
fn spawn_inside_a_blocking_job_uses_the_jobs_executor() {
    with_timeout(|| {
        let ex = named(3, "ctx");
        let job = ex.spawn_blocking(|| {
            let threads = fastexec::current_threads();
            let ran_on = fastexec::block_on(fastexec::spawn(async { thread_name() }));
            (threads, ran_on.unwrap())
        });
        let (threads, ran_on) = ex.block_on(job).unwrap();
        assert_eq!(threads, Some(3));
        assert!(ran_on.starts_with("ctx-"), "ran on {ran_on:?}");
    })
}

#[test]
fn a_task_spawned_by_a_job_counts_in_the_callers_group() {
    with_timeout(|| {
        let ex = named(1, "scope");
        let group = Arc::new(TaskGroup::new());
        let release = Arc::new(Notify::new());
        let (in_group, wait) = (group.clone(), release.clone());
        // Spawned from outside any block_on, which would wait for it all.
        let member = ex.spawn(async move {
            in_group
                .spawn(async move {
                    fastexec::spawn_blocking(move || {
                        fastexec::spawn(async move { wait.notified().await }).detach();
                    })
                    .await
                })
                .await
        });
        futures::executor::block_on(member)
            .unwrap()
            .unwrap()
            .unwrap();
        // The job and the member may not have let go of their places yet
        // (`TaskGroup::active` may lag their handles).
        assert!(spin_until(|| group.active() <= 1));
        assert_eq!(group.active(), 1, "the job's task, still waiting, counts");
        release.notify_one();
        ex.block_on(group.wait());
        assert!(group.is_empty());
    })
}
