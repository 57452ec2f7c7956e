//! Timers are driven by the executor itself: an idle worker parks with the
//! nearest deadline, a busy worker fires due timers between tasks, and a
//! `block_on` thread fires its own.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fastexec::time::sleep;
use fastexec::Executor;

fn one_thread() -> Executor {
    Executor::builder().threads(1).build().unwrap()
}

/// Runs `f` on a helper thread and fails if it does not finish in time.
fn within<R: Send + 'static>(limit: Duration, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()).unwrap());
    rx.recv_timeout(limit)
        .expect("timed out: a timer was never fired")
}

#[test]
fn idle_worker_fires_a_task_timer() {
    within(Duration::from_secs(30), || {
        let executor = one_thread();
        let started = Instant::now();
        let slept = executor.spawn(async move {
            sleep(Duration::from_millis(20)).await;
            started.elapsed()
        });
        // A foreign thread waits on the handle only; the worker is idle and
        // must fire the timer by itself.
        let elapsed = futures::executor::block_on(slept).unwrap();
        assert!(
            elapsed >= Duration::from_millis(20),
            "fired early: {elapsed:?}"
        );
    });
}

#[test]
fn busy_worker_fires_due_timers() {
    within(Duration::from_secs(30), || {
        let executor = one_thread();
        let stop = Arc::new(AtomicBool::new(false));
        let spinner_stop = stop.clone();
        // Keeps the only worker busy: it never parks while the timer is due.
        let spinner = executor.spawn(async move {
            let mut yields = 0u64;
            while !spinner_stop.load(Ordering::Acquire) {
                fastexec::yield_now().await;
                yields += 1;
            }
            yields
        });
        let started = Instant::now();
        let sleeper = executor.spawn(async move {
            sleep(Duration::from_millis(10)).await;
            started.elapsed()
        });
        let elapsed = futures::executor::block_on(sleeper).unwrap();
        stop.store(true, Ordering::Release);
        assert!(elapsed >= Duration::from_millis(10));
        assert!(futures::executor::block_on(spinner).unwrap() > 0);
    });
}

#[test]
fn block_on_thread_fires_its_own_timers() {
    within(Duration::from_secs(30), || {
        let executor = one_thread();
        let started = Instant::now();
        executor.block_on(sleep(Duration::from_millis(15)));
        assert!(started.elapsed() >= Duration::from_millis(15));
    });
}

#[test]
fn earlier_deadline_rearms_the_holder() {
    within(Duration::from_secs(30), || {
        let executor = one_thread();
        // A far timer first, so the idle worker parks with a long timeout;
        // then a near one, which must unpark it to re-arm.
        let far = executor.spawn(sleep(Duration::from_secs(3600)));
        let started = Instant::now();
        let near = executor.spawn(async move {
            sleep(Duration::from_millis(5)).await;
            started.elapsed()
        });
        let elapsed = futures::executor::block_on(near).unwrap();
        assert!(elapsed >= Duration::from_millis(5));
        assert!(!far.is_finished());
    });
}
