//! The graph layer's only contact with time: [`sleep`] and [`with_timeout`].
//!
//! TEMPORARY implementation: until `fastexec::time` lands (branch `time`),
//! timers are served by one lazily started helper thread holding a deadline
//! heap. Swapping to `crate::time` means rewriting the two functions below
//! (`crate::time::sleep(d)` and `crate::time::timeout(d, fut)`, mapping its
//! `Elapsed` to ours) and deleting the rest of this file; nothing else in
//! `graph` touches time.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use futures_util::future::{self, Either};

/// Waits for `d`.
pub(crate) fn sleep(d: Duration) -> impl Future<Output = ()> + Send {
    Sleep {
        deadline: Instant::now() + d,
    }
}

/// Runs `fut`, giving up (and dropping it) after `d`.
pub(crate) async fn with_timeout<F>(d: Duration, fut: F) -> Result<F::Output, Elapsed>
where
    F: Future + Send,
{
    match future::select(Box::pin(fut), Box::pin(sleep(d))).await {
        Either::Left((out, _)) => Ok(out),
        Either::Right(_) => Err(Elapsed),
    }
}

/// The deadline of [`with_timeout`] passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Elapsed;

struct Sleep {
    deadline: Instant,
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            return Poll::Ready(());
        }
        // Re-registering on every poll keeps the latest waker; a stale entry
        // only causes one spurious wake-up.
        timers().register(self.deadline, cx.waker().clone());
        Poll::Pending
    }
}

struct Entry {
    deadline: Instant,
    waker: Waker,
}

// Ordered by deadline only, reversed so `BinaryHeap` pops the earliest first.
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other.deadline.cmp(&self.deadline)
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.deadline == other.deadline
    }
}
impl Eq for Entry {}

struct Timers {
    heap: Mutex<BinaryHeap<Entry>>,
    changed: Condvar,
}

impl Timers {
    fn register(&self, deadline: Instant, waker: Waker) {
        let mut heap = self.heap.lock().unwrap_or_else(|e| e.into_inner());
        let earliest = heap.peek().map_or(true, |e| deadline < e.deadline);
        heap.push(Entry { deadline, waker });
        if earliest {
            self.changed.notify_one();
        }
    }

    fn run(&self) {
        let mut heap = self.heap.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            while heap.peek().is_some_and(|e| e.deadline <= now) {
                if let Some(e) = heap.pop() {
                    e.waker.wake();
                }
            }
            heap = match heap.peek().map(|e| e.deadline - now) {
                None => self.changed.wait(heap).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let waited = self.changed.wait_timeout(heap, d);
                    waited.unwrap_or_else(|e| e.into_inner()).0
                }
            };
        }
    }
}

fn timers() -> &'static Timers {
    static TIMERS: OnceLock<&'static Timers> = OnceLock::new();
    TIMERS.get_or_init(|| {
        // Leaked on purpose: the timer thread lives as long as the process.
        let timers: &'static Timers = Box::leak(Box::new(Timers {
            heap: Mutex::new(BinaryHeap::new()),
            changed: Condvar::new(),
        }));
        thread::Builder::new()
            .name("fastexec-graph-timer".into())
            .spawn(move || timers.run())
            .expect("failed to start the graph timer thread");
        timers
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_waits_at_least_its_duration() {
        let start = Instant::now();
        crate::block_on(sleep(Duration::from_millis(20)));
        assert!(start.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn timeout_fires_and_passes_through() {
        let pending = crate::block_on(with_timeout(
            Duration::from_millis(10),
            future::pending::<()>(),
        ));
        assert_eq!(pending, Err(Elapsed));
        let ready = crate::block_on(with_timeout(Duration::from_secs(60), async { 7 }));
        assert_eq!(ready, Ok(7));
    }
}
