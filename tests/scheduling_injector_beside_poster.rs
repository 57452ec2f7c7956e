//! Tasks from two outside threads: the first to post owns the outside
//! poster's ring, the other's go to the injector. The injector's must
//! start while the poster keeps its ring filled: workers take a share of
//! the injector behind each half of that ring, and every global tick.
//! (Before, they looked at the injector only once that ring was empty, and
//! the injected task here never started.)
//!
//! No timing: every posted task, when it runs, waits until the poster has
//! posted `LEAD` tasks beyond the number started so far, so the poster's
//! ring is never seen empty (nor full: `LEAD` is below its 256 slots). The
//! poster stops once `MORE` tasks have started after the injected one was
//! queued, which must have started by then.

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Instant;

use support::{executor, with_timeout, TIMEOUT};

const LEAD: usize = 200;
const MORE: usize = 5_000;

fn run(threads: usize) {
    with_timeout(move || {
        let ex = Arc::new(executor(threads));
        let posted = Arc::new(AtomicUsize::new(0));
        let started = Arc::new(AtomicUsize::new(0));
        let injected_ran = Arc::new(AtomicBool::new(false));
        let ran_at = Arc::new(AtomicUsize::new(usize::MAX));
        let stop = Arc::new(AtomicBool::new(false));

        let (go_tx, go_rx) = mpsc::channel::<()>();
        let (injected_tx, injected_rx) = mpsc::channel::<usize>();

        // The poster: the first outside thread to post, so it owns the ring.
        let poster = {
            let (ex, posted, started, stop) =
                (ex.clone(), posted.clone(), started.clone(), stop.clone());
            thread::spawn(move || {
                let deadline = Instant::now() + TIMEOUT / 3;
                let mut told = false;
                while !stop.load(SeqCst) && Instant::now() < deadline {
                    if posted.load(SeqCst) >= started.load(SeqCst) + LEAD {
                        thread::yield_now();
                        continue;
                    }
                    let (posted2, started2, stop2) =
                        (posted.clone(), started.clone(), stop.clone());
                    ex.spawn(async move {
                        let me = started2.fetch_add(1, SeqCst) + 1;
                        // Keep the poster ahead: wait for it (guarded by
                        // the stop flag, so that no wait outlives the test).
                        while posted2.load(SeqCst) < me + LEAD && !stop2.load(SeqCst) {
                            thread::yield_now();
                        }
                    })
                    .detach();
                    posted.fetch_add(1, SeqCst);
                    if !told && posted.load(SeqCst) >= 1_000 {
                        told = true;
                        go_tx.send(()).unwrap();
                    }
                }
            })
        };

        // A second outside thread: its spawn goes to the injector.
        go_rx.recv_timeout(TIMEOUT).expect("poster running");
        {
            let (injected_ran, started, ran_at) =
                (injected_ran.clone(), started.clone(), ran_at.clone());
            let ex = ex.clone();
            thread::spawn(move || {
                let at = started.load(SeqCst);
                ex.spawn(async move {
                    ran_at.store(started.load(SeqCst), SeqCst);
                    injected_ran.store(true, SeqCst);
                })
                .detach();
                injected_tx.send(at).unwrap();
            })
            .join()
            .unwrap();
        }
        let queued_at = injected_rx.recv().unwrap();

        // Let MORE posted tasks start, or the injected one run.
        let deadline = Instant::now() + TIMEOUT / 3;
        while !injected_ran.load(SeqCst)
            && started.load(SeqCst) < queued_at + MORE
            && Instant::now() < deadline
        {
            thread::yield_now();
        }
        let ran = injected_ran.load(SeqCst);
        let started_since = started.load(SeqCst) - queued_at;
        stop.store(true, SeqCst);
        poster.join().unwrap();
        drop(ex);
        assert!(
            ran,
            "{threads} worker(s): a task in the injector did not start while \
             {started_since} tasks from the outside poster's ring started after it"
        );
        let waited = ran_at.load(SeqCst) - queued_at;
        assert!(
            waited < MORE,
            "{threads} worker(s): started after {waited} posted tasks"
        );
    });
}

#[test]
fn a_task_from_a_second_thread_starts_while_the_poster_keeps_posting_one_worker() {
    run(1);
}

#[test]
fn a_task_from_a_second_thread_starts_while_the_poster_keeps_posting_two_workers() {
    run(2);
}
