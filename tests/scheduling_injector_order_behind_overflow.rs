//! One worker; tasks posted by one outside thread that is not the poster
//! (so they go through the injector) start in the order they were posted
//! (`Shared::inject`, worker.rs "Where a task goes"), also when the first
//! went through the overflow queue.
//!
//! `y1` is moved from the injector into the worker's ring, behind some of
//! the poster's tasks. The first of those (`p0`) has the poster post many
//! more tasks (its full ring sends batches to the overflow queue), has the
//! other thread post `y2` (to the injector), and spawns enough tasks to
//! overflow the worker's ring, which sends `y1` to the overflow queue,
//! behind the poster's batches. At the next global tick the worker moves
//! half a ring of overflow batches into its ring; it must not move `y2` in
//! from the injector while `y1` still waits in the overflow queue (it did
//! for a while: `y2` started first).

mod support;

use std::sync::mpsc;
use std::thread;

use support::{executor, with_timeout, TIMEOUT};

#[test]
fn injected_tasks_of_one_thread_start_in_order_with_one_worker() {
    let order = with_timeout(|| {
        let ex = std::sync::Arc::new(executor(1));
        let (label_tx, label_rx) = mpsc::channel::<&'static str>();

        // The other outside thread: posts one task per request.
        let (post_tx, post_rx) = mpsc::channel::<(&'static str, mpsc::Sender<()>)>();
        let other = {
            let (ex, label_tx) = (ex.clone(), label_tx.clone());
            thread::spawn(move || {
                while let Ok((name, ack)) = post_rx.recv() {
                    let label_tx = label_tx.clone();
                    ex.spawn(async move {
                        let _ = label_tx.send(name);
                    })
                    .detach();
                    ack.send(()).unwrap();
                }
            })
        };
        let post_other = {
            let post_tx = post_tx.clone();
            move |name: &'static str| {
                let (ack_tx, ack_rx) = mpsc::channel();
                post_tx.send((name, ack_tx)).unwrap();
                ack_rx.recv_timeout(TIMEOUT).unwrap();
            }
        };

        // This thread posts first: it owns the outside poster's ring.
        // `gate` holds the only worker while the queues are set up.
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let (held_tx, held_rx) = mpsc::channel::<()>();
        ex.spawn(async move {
            held_tx.send(()).unwrap();
            gate_rx.recv_timeout(TIMEOUT).unwrap();
        })
        .detach();
        held_rx.recv_timeout(TIMEOUT).unwrap();

        // p0's requests to this thread: post many more tasks.
        let (more_tx, more_rx) = mpsc::channel::<mpsc::Sender<()>>();
        {
            let post_other = post_other.clone();
            ex.spawn(async move {
                // Many tasks from the poster, ahead in the overflow queue.
                let (ack_tx, ack_rx) = mpsc::channel();
                more_tx.send(ack_tx).unwrap();
                ack_rx.recv_timeout(TIMEOUT).unwrap();
                // y2, in the injector.
                post_other("y2");
                // Overflow this worker's ring (which holds y1).
                for _ in 0..300 {
                    fastexec::spawn(async {}).detach();
                }
            })
            .detach();
        }
        for _ in 1..10 {
            ex.spawn(async {}).detach();
        }
        post_other("y1");
        gate_tx.send(()).unwrap();

        // Serve p0's request from this thread (the poster).
        let ack = more_rx.recv_timeout(TIMEOUT).unwrap();
        for _ in 0..600 {
            ex.spawn(async {}).detach();
        }
        ack.send(()).unwrap();

        let first = label_rx.recv_timeout(TIMEOUT).unwrap();
        let second = label_rx.recv_timeout(TIMEOUT).unwrap();
        drop(post_tx);
        drop(post_other);
        other.join().unwrap();
        vec![first, second]
    });
    assert_eq!(order, ["y1", "y2"], "posted by one thread in this order");
}
