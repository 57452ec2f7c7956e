//! Which worker thread ran an attempt, as a small stable number plus the
//! thread's name, for reports and traces.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread;

/// A worker thread as seen by the graph layer. The graph uses only the
/// executor's public API, so it identifies workers by OS thread, numbered in
/// the order they first ran a graph task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lane {
    pub(crate) index: u32,
    pub(crate) name: Arc<str>,
}

/// The lane of the calling thread.
pub(crate) fn current() -> Lane {
    thread_local! {
        static LANE: Lane = {
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let index = NEXT.fetch_add(1, Ordering::Relaxed);
            let name = match thread::current().name() {
                Some(n) => n.into(),
                None => format!("thread-{index}").into(),
            };
            Lane { index, name }
        };
    }
    LANE.with(Lane::clone)
}
