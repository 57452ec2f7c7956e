//! Prefetch hints: ask the CPU to start fetching a cache line that a
//! thread is about to read, so that several misses overlap instead of each
//! stalling the thread in turn.
//!
//! A prefetch is only a hint. It never faults and changes no value the
//! program can observe, whatever the address; on targets without a stable
//! prefetch instruction it compiles to nothing.

/// Starts fetching the cache line holding the first byte of `value` into
/// every level of the cache.
#[inline(always)]
pub(crate) fn prefetch<T: ?Sized>(value: &T) {
    prefetch_addr((value as *const T).cast());
}

/// Starts fetching the line holding the first byte of `value` and the line
/// after it: both lines of a 128-byte graph node, a pair that not every
/// CPU fetches together.
#[inline(always)]
pub(crate) fn prefetch_pair<T>(value: &T) {
    let first: *const u8 = (value as *const T).cast();
    prefetch_addr(first);
    prefetch_addr(first.wrapping_add(64));
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse", not(miri)))]
#[inline(always)]
fn prefetch_addr(addr: *const u8) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: the intrinsic is `unsafe` for two reasons, both met. It
    // needs SSE, which this item is compiled only with (`cfg` above; every
    // x86-64 target has it). And it takes a raw pointer: `prefetcht0` only
    // moves a line towards the cache, reads no value into the program and
    // never faults, whatever the address (an unmapped one is ignored), so
    // any pointer, dangling or not, is sound to pass.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(addr.cast()) }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse", not(miri))))]
#[inline(always)]
fn prefetch_addr(_addr: *const u8) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hint must never read what it is given: a zero-sized value's
    /// address (a boxed closure that captured nothing) is dangling.
    #[test]
    fn prefetching_a_dangling_or_short_value_reads_nothing() {
        let nothing: Box<dyn Fn() -> u32> = Box::new(|| 7);
        prefetch(&*nothing);
        // A pair whose second line lies past the end of the allocation.
        let one = Box::new(1u8);
        prefetch_pair(&*one);
        assert_eq!(nothing() + u32::from(*one), 8);
    }
}
