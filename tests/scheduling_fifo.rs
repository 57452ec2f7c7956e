//! With one worker, tasks start in the order they were spawned: from
//! outside the executor (the fairness promise of issue 2) and from a task.

mod support;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use fastexec::spawn;
use support::{executor, with_timeout, TIMEOUT};

type Order = Arc<Mutex<Vec<usize>>>;

/// Spawns `n` tasks from the test thread while the only worker is blocked,
/// releases it, and returns the order in which the tasks started.
fn start_order_from_outside(n: usize) -> Vec<usize> {
    with_timeout(move || {
        let ex = executor(1);
        let order = Order::default();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let blocker = ex.spawn(async move {
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap();
        });
        started_rx.recv_timeout(TIMEOUT).expect("blocker running");
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let order = order.clone();
                ex.spawn(async move { order.lock().unwrap().push(i) })
            })
            .collect();
        release_tx.send(()).unwrap();
        futures::executor::block_on(blocker).unwrap();
        for h in handles {
            futures::executor::block_on(h).unwrap();
        }
        let order = order.lock().unwrap().clone();
        order
    })
}

#[test]
fn fifo_from_outside_100_tasks() {
    assert_eq!(start_order_from_outside(100), (0..100).collect::<Vec<_>>());
}

/// More tasks than one batch the worker moves from the injector to its own
/// queue at a time (half its capacity), so the worker's periodic look at
/// the injector meets tasks posted after the ones it already holds.
#[test]
fn fifo_from_outside_1000_tasks() {
    assert_eq!(
        start_order_from_outside(1000),
        (0..1000).collect::<Vec<_>>()
    );
}

/// Spawns `n` tasks from a task on the only worker and returns the order
/// in which they started.
fn start_order_from_task(n: usize) -> Vec<usize> {
    with_timeout(move || {
        let ex = executor(1);
        let order = Order::default();
        let o = order.clone();
        ex.block_on(async move {
            spawn(async move {
                let handles: Vec<_> = (0..n)
                    .map(|i| {
                        let o = o.clone();
                        spawn(async move { o.lock().unwrap().push(i) })
                    })
                    .collect();
                for h in handles {
                    h.await.unwrap();
                }
            })
            .await
            .unwrap()
        });
        let order = order.lock().unwrap().clone();
        order
    })
}

#[test]
fn fifo_from_task_100_tasks() {
    assert_eq!(start_order_from_task(100), (0..100).collect::<Vec<_>>());
}

/// More tasks than the worker's own queue holds, spawned in one poll: the
/// older halves overflow to the overflow queue, and when the poll returns
/// the rest of the queue goes behind them (worker docs, "After a burst"),
/// so the one worker still starts each exactly once, in order.
#[test]
fn fifo_from_task_1000_tasks() {
    assert_eq!(start_order_from_task(1000), (0..1000).collect::<Vec<_>>());
}

/// `yield_now` sends the yielding task behind everything already queued.
#[test]
fn yield_goes_behind_queued_tasks() {
    with_timeout(|| {
        let ex = executor(1);
        let order = Order::default();
        let o = order.clone();
        ex.block_on(async move {
            spawn(async move {
                for i in 1..=3 {
                    let o = o.clone();
                    spawn(async move { o.lock().unwrap().push(i) }).detach();
                }
                fastexec::yield_now().await;
                o.lock().unwrap().push(0);
            })
            .await
            .unwrap()
        });
        assert_eq!(*order.lock().unwrap(), vec![1, 2, 3, 0]);
    })
}
