//! A global allocator that counts heap bytes (requested sizes, so allocator overhead and
//! alignment padding are not in it): live bytes and their peak, while counting is switched on.
//! A bench binary opts in with `#[global_allocator] static A: Counting = Counting;`.
//!
//! Switched off (the default) it costs one relaxed load per call, so timed benches in the same
//! binary are not slowed by a shared counter. Bytes freed while counting that were allocated
//! before it started lower the count: measure windows that free little of what came before.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};

/// The system allocator plus byte counts.
pub struct Counting;

static ON: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// Starts counting from zero.
pub fn start_counting() {
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    ON.store(true, Relaxed);
}

/// Stops counting; the counts stay readable.
pub fn stop_counting() {
    ON.store(false, Relaxed);
}

/// Bytes allocated and not freed since counting started.
pub fn live_bytes() -> isize {
    LIVE.load(Relaxed)
}

/// The most [`live_bytes`] has been since counting started.
pub fn peak_bytes() -> isize {
    PEAK.load(Relaxed)
}

fn grew(bytes: usize) {
    if ON.load(Relaxed) {
        let now = LIVE.fetch_add(bytes as isize, Relaxed) + bytes as isize;
        PEAK.fetch_max(now, Relaxed);
    }
}

fn shrank(bytes: usize) {
    if ON.load(Relaxed) {
        LIVE.fetch_sub(bytes as isize, Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// caller's obligations pass straight through; the counters do not touch the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded, see the impl.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        // SAFETY: forwarded, see the impl.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded, see the impl.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        new
    }
}
