//! When a `TaskGroup`'s `wait` resolves (or a `block_on` returns), a
//! blocking job spawned in it has *finished*: its handle says so, as a
//! task's does (`scope_end_state.rs`). Before the fix the job left its
//! groups as its closure returned, before the pool's task stored the
//! value: the group's waiters were woken while the handle still said
//! `is_finished() == false`.

mod support;

use std::sync::{mpsc, Arc, Mutex};

use fastexec::TaskGroup;
use support::{executor, poll_with, within, CallbackWaker, TIMEOUT};

#[test]
fn a_blocking_jobs_handle_is_finished_when_its_group_wait_is_woken() {
    within(30, || {
        let ex = executor(1);
        let group = Arc::new(TaskGroup::new());
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (job_tx, job_rx) = mpsc::channel();
        let in_group = group.clone();
        // Spawned from a task, not from a `block_on`, which would wait for
        // the job.
        ex.spawn(async move {
            in_group
                .spawn(async move {
                    let job = fastexec::spawn_blocking(move || {
                        release_rx.recv_timeout(TIMEOUT).unwrap();
                        7
                    });
                    job_tx.send(job).unwrap();
                })
                .detach();
        })
        .detach();
        let job = Arc::new(Mutex::new(job_rx.recv_timeout(TIMEOUT).unwrap()));
        // Woken by the last member to leave: the job, on its pool thread.
        let (finished_tx, finished_rx) = mpsc::channel();
        let held = job.clone();
        let waker = CallbackWaker::on_wake(move || {
            let _ = finished_tx.send(held.lock().unwrap().is_finished());
        });
        let mut wait = Box::pin(group.wait());
        assert!(
            poll_with(&mut wait, &waker).is_pending(),
            "the job is blocked"
        );
        release_tx.send(()).unwrap();
        let finished = finished_rx
            .recv_timeout(TIMEOUT)
            .expect("the wait is woken");
        assert!(
            finished,
            "the group's wait was woken before the job finished"
        );
        assert!(poll_with(&mut wait, &waker).is_ready());
        let mut job = job.lock().unwrap();
        assert_eq!(ex.block_on(&mut *job).unwrap(), 7);
    });
}
