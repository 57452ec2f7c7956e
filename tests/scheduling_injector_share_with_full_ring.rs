//! One worker whose ring stays nearly full of self-waking tasks (more than
//! `CAPACITY - OVERFLOW_BATCH` of them, so the tick's overflow loop never
//! runs): tasks posted from outside must still start at a global tick.
//! For a while the tick took "the loop did not find the overflow queue
//! empty" for "batches are left there", gave outside work no share, and
//! the ring never emptied: the injected task waited until the yielders
//! gave up (here: a cap on the total of yields, to keep a failure finite).

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::thread;

use support::{executor, with_timeout, TIMEOUT};

const YIELD_CAP: usize = 2_000_000;

/// 220 yielders: the ring nearly full, the overflow queue empty.
#[test]
fn outside_tasks_start_while_the_ring_stays_nearly_full() {
    outside_tasks_start_among(220);
}

fn outside_tasks_start_among(yielders: usize) {
    let (injected_first, posted_first) = with_timeout(move || {
        let ex = Arc::new(executor(1));
        let stop = Arc::new(AtomicBool::new(false));
        let yields = Arc::new(AtomicUsize::new(0));
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        {
            let (stop, yields) = (stop.clone(), yields.clone());
            // This thread posts first: it is the outside poster.
            ex.spawn(async move {
                for _ in 0..yielders {
                    let (stop, yields, done_tx) = (stop.clone(), yields.clone(), done_tx.clone());
                    fastexec::spawn(async move {
                        while !stop.load(SeqCst) && yields.fetch_add(1, SeqCst) < YIELD_CAP {
                            fastexec::yield_now().await;
                        }
                        let _ = done_tx.send(());
                    })
                    .detach();
                }
                started_tx.send(()).unwrap();
            })
            .detach();
        }
        started_rx.recv_timeout(TIMEOUT).unwrap();
        // Through the injector (another thread) and the poster's ring.
        let ran_injected = Arc::new(AtomicBool::new(false));
        let ran_posted = Arc::new(AtomicBool::new(false));
        let (ok_tx, ok_rx) = mpsc::channel::<(bool, bool)>();
        {
            let (ex, stop, ran_injected, yields, ok_tx) = (
                ex.clone(),
                stop.clone(),
                ran_injected.clone(),
                yields.clone(),
                ok_tx.clone(),
            );
            thread::spawn(move || {
                ex.spawn(async move {
                    ran_injected.store(true, SeqCst);
                    let _ = ok_tx.send((true, yields.load(SeqCst) < YIELD_CAP));
                    let _ = stop;
                })
                .detach();
            })
            .join()
            .unwrap();
        }
        {
            let (ran_posted, yields, ok_tx) = (ran_posted.clone(), yields.clone(), ok_tx.clone());
            ex.spawn(async move {
                ran_posted.store(true, SeqCst);
                let _ = ok_tx.send((false, yields.load(SeqCst) < YIELD_CAP));
            })
            .detach();
        }
        let mut injected_in_time = None;
        let mut posted_in_time = None;
        for _ in 0..2 {
            let (injected, in_time) = ok_rx.recv_timeout(TIMEOUT).unwrap();
            if injected {
                injected_in_time = Some(in_time);
            } else {
                posted_in_time = Some(in_time);
            }
        }
        stop.store(true, SeqCst);
        for _ in 0..yielders {
            done_rx.recv_timeout(TIMEOUT).unwrap();
        }
        (injected_in_time.unwrap(), posted_in_time.unwrap())
    });
    assert!(
        injected_first,
        "the injected task waited for {YIELD_CAP} yields"
    );
    // It waited too until the tick took from the poster's ring as much as
    // fits, not half of it or nothing.
    assert!(
        posted_first,
        "the posted task waited for {YIELD_CAP} yields"
    );
}
