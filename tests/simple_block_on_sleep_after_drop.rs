//! A blocking job's `block_on` whose root drops the executor and then
//! sleeps: the executor's timer queue is closed by then, so the sleep goes
//! to the `block_on`'s own queue of last resort, which only a `block_on`
//! that sleeps on a parker has. Under the simple scheduler, a `block_on`
//! that is not a task's finishes its root as such a `block_on` does once
//! the executor has shut down; but a root woken at each poll (the sleep,
//! finding nowhere to register, asks to be polled again) was polled again
//! at once, before the scheduler looked at the shutdown, so the job's
//! thread spun until the deadline. The work-stealing scheduler is the
//! control.

mod support;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fastexec::Executor;
use support::{within, Gate};

const SLEEP: Duration = Duration::from_millis(300);

/// The polls of a sleep begun by a job's `block_on` root right after it
/// dropped the executor, and how long it slept.
fn polls_of_a_sleep_after_the_drop(executor: Executor) -> (usize, Duration) {
    let slot = Arc::new(Mutex::new(None::<Executor>));
    let placed = Gate::new();
    let (in_job, go) = (slot.clone(), placed.clone());
    let job = executor.spawn_blocking(move || {
        fastexec::block_on(async move {
            go.wait().await;
            drop(in_job.lock().unwrap().take().expect("placed"));
            let polls = AtomicUsize::new(0);
            let started = Instant::now();
            let mut sleep = fastexec::time::sleep(SLEEP);
            std::future::poll_fn(|cx| {
                polls.fetch_add(1, SeqCst);
                std::pin::Pin::new(&mut sleep).poll(cx)
            })
            .await;
            (polls.load(SeqCst), started.elapsed())
        })
    });
    *slot.lock().unwrap() = Some(executor);
    placed.open();
    futures::executor::block_on(job).expect("the job returned")
}

fn check((polls, slept): (usize, Duration)) {
    assert!(slept >= SLEEP, "woken early: {slept:?}");
    assert!(
        polls < 100,
        "the sleep was polled {polls} times in {slept:?}: the job's thread spun"
    );
}

#[test]
fn work_stealing_control() {
    within(60, || {
        check(polls_of_a_sleep_after_the_drop(support::executor(1)))
    });
}

#[test]
fn simple_scheduler_block_on_sleeps_after_the_drop() {
    within(60, || {
        check(polls_of_a_sleep_after_the_drop(support::simple_executor(
            17,
        )))
    });
}
