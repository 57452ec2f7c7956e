//! Loom model of the timer queue's `on_earlier` hand-off: a thread that
//! drives the queue (fires, reads the next deadline, parks until it or a
//! hook call) is never left parked while a due timer waits. A lost hand-off
//! shows up as a deadlock.
#![cfg(loom)]

use std::task::{Wake, Waker};
use std::time::{Duration, Instant};

use fastexec::__loom::LoomTimerQueue;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

/// The driver's parking spot: a flag the hook sets, and a condvar.
#[derive(Default)]
struct Wakeup {
    notified: Mutex<bool>,
    condvar: Condvar,
}

impl Wakeup {
    fn notify(&self) {
        *self.notified.lock().unwrap() = true;
        self.condvar.notify_one();
    }

    /// Parks until notified (loom has no timed waits: a driver with a
    /// pending deadline does not park here, it fires again).
    fn park(&self) {
        let mut notified = self.notified.lock().unwrap();
        while !*notified {
            notified = self.condvar.wait(notified).unwrap();
        }
        *notified = false;
    }
}

/// Counts wakes with a loom atomic, so the model sees the timer's effect.
struct CountingWake(AtomicUsize);

impl Wake for CountingWake {
    fn wake(self: std::sync::Arc<Self>) {
        // Relaxed: the join below orders the count before the assert.
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_timer_inserted_while_the_driver_parks_is_fired() {
    loom::model(|| {
        let wakeup = Arc::new(Wakeup::default());
        let hook = Arc::clone(&wakeup);
        let queue = Arc::new(LoomTimerQueue::new(Box::new(move || hook.notify())));

        let driven = Arc::clone(&queue);
        let driver = thread::spawn(move || loop {
            if driven.fire_expired(Instant::now()) > 0 {
                return;
            }
            if driven.next_deadline().is_none() {
                wakeup.park();
            }
        });

        let wake = std::sync::Arc::new(CountingWake(AtomicUsize::new(0)));
        let waker = Waker::from(std::sync::Arc::clone(&wake));
        // Before the queue's epoch: due at once, whatever the real clock.
        let due = Instant::now().checked_sub(Duration::from_secs(1)).unwrap();
        queue.insert(due, &waker);

        driver.join().unwrap();
        assert_eq!(wake.0.load(Ordering::Relaxed), 1);
    });
}
