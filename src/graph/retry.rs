//! Retry policy: how many attempts, and how long to wait between them.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// How often a task is attempted and how long it waits between attempts:
/// exponential backoff with jitter.
///
/// The wait before retry `k` (1 for the second attempt) is
/// `min(initial_backoff * multiplier^(k-1), max_backoff)`, then shortened by a
/// random fraction of up to `jitter` of itself, so that tasks failing
/// together (one flaky server) do not retry in lockstep.
///
/// ```
/// use std::time::Duration;
/// use fastexec::graph::RetryPolicy;
///
/// let p = RetryPolicy::attempts(4)
///     .initial_backoff(Duration::from_millis(100))
///     .max_backoff(Duration::from_millis(300))
///     .jitter(0.0);
/// assert_eq!(p.backoff(1), Duration::from_millis(100));
/// assert_eq!(p.backoff(2), Duration::from_millis(200));
/// assert_eq!(p.backoff(3), Duration::from_millis(300)); // capped
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    max_attempts: u32,
    initial: Duration,
    multiplier: f64,
    max: Duration,
    jitter: f64,
}

impl Default for RetryPolicy {
    /// A single attempt, no retry.
    fn default() -> Self {
        Self::attempts(1)
    }
}

impl RetryPolicy {
    /// At most `n` attempts in all (`n - 1` retries; 0 is treated as 1),
    /// starting with a 10 ms backoff that doubles up to 10 s, jitter 0.5.
    pub fn attempts(n: u32) -> Self {
        RetryPolicy {
            max_attempts: n.max(1),
            initial: Duration::from_millis(10),
            multiplier: 2.0,
            max: Duration::from_secs(10),
            jitter: 0.5,
        }
    }

    /// The wait before the first retry. Like every wait, capped by
    /// [`max_backoff`](Self::max_backoff) (10 s unless set): raise that
    /// too for longer waits.
    pub fn initial_backoff(mut self, d: Duration) -> Self {
        self.initial = d;
        self
    }

    /// The factor the wait grows by after each retry (values below 1, and
    /// NaN, are treated as 1; an infinite one makes every wait after the
    /// first the [`max_backoff`](Self::max_backoff)).
    pub fn multiplier(mut self, m: f64) -> Self {
        self.multiplier = if m.is_nan() { 1.0 } else { m.max(1.0) };
        self
    }

    /// The longest wait between two attempts.
    pub fn max_backoff(mut self, d: Duration) -> Self {
        self.max = d;
        self
    }

    /// The largest fraction (clamped to 0..=1) by which a wait is randomly shortened.
    pub fn jitter(mut self, fraction: f64) -> Self {
        self.jitter = if fraction.is_nan() {
            0.0
        } else {
            fraction.clamp(0.0, 1.0)
        };
        self
    }

    /// The maximum number of attempts.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The wait before retry `retry` (1-based), before jitter. Never
    /// panics: any `Duration` (`Duration::MAX` included) is a valid
    /// initial or maximum backoff.
    pub fn backoff(&self, retry: u32) -> Duration {
        if self.initial.is_zero() {
            // 0 * an infinite power would be NaN, not 0.
            return Duration::ZERO;
        }
        let exp = retry.saturating_sub(1).min(i32::MAX as u32) as i32;
        let factor = self.multiplier.powi(exp);
        // A whole factor (the first wait, a constant backoff, doubling up
        // to 2^31) is applied exactly: an `f64` of seconds holds a wait to
        // the nanosecond only below 2^53 ns (about 104 days).
        if factor.fract() == 0.0 && factor <= f64::from(u32::MAX) {
            return self
                .initial
                .checked_mul(factor as u32)
                .map_or(self.max, |d| d.min(self.max));
        }
        let secs = self.initial.as_secs_f64() * factor;
        // Compared in f64, then the cap returned exactly: a long cap (such
        // as `Duration::MAX`) rounds up as an f64, past what
        // `Duration::from_secs_f64` accepts.
        match Duration::try_from_secs_f64(secs) {
            Ok(d) if d < self.max => d,
            _ => self.max,
        }
    }

    /// The wait before retry `retry` (1-based), with jitter applied.
    pub(crate) fn jittered_backoff(&self, retry: u32) -> Duration {
        let wait = self.backoff(retry);
        if self.jitter == 0.0 {
            // Not even the round trip through an `f64` below.
            return wait;
        }
        // The cut is what goes through an `f64`, not the wait: a wait an
        // `f64` of seconds cannot hold to the nanosecond is shortened by at
        // most its fraction, not by what the round trip loses. Shortened,
        // never lengthened: the cut, below the wait's `f64` (at most 2^64
        // s), converts back; were it not to, the wait would stay as it is.
        let cut = wait.as_secs_f64() * self.jitter * unit_random();
        Duration::try_from_secs_f64(cut).map_or(wait, |cut| wait.saturating_sub(cut))
    }
}

/// A random number in `[0, 1)`. Jitter only needs to decorrelate tasks, not
/// cryptographic quality, so std's randomly keyed hasher is the source rather
/// than a `rand` dependency.
fn unit_random() -> f64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(0x9e37_79b9_7f4a_7c15);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_caps() {
        let p = RetryPolicy::attempts(10)
            .initial_backoff(Duration::from_millis(1))
            .multiplier(3.0)
            .max_backoff(Duration::from_millis(20));
        assert_eq!(p.backoff(1), Duration::from_millis(1));
        assert_eq!(p.backoff(2), Duration::from_millis(3));
        assert_eq!(p.backoff(3), Duration::from_millis(9));
        assert_eq!(p.backoff(4), Duration::from_millis(20));
        assert_eq!(p.backoff(u32::MAX), Duration::from_millis(20));
    }

    #[test]
    fn jitter_stays_in_bounds_and_varies() {
        let p = RetryPolicy::attempts(3)
            .initial_backoff(Duration::from_millis(100))
            .jitter(0.5);
        let waits: Vec<_> = (0..64).map(|_| p.jittered_backoff(1)).collect();
        assert!(waits
            .iter()
            .all(|w| *w > Duration::from_millis(50) && *w <= Duration::from_millis(100)));
        assert!(waits.iter().any(|w| *w != waits[0]), "jitter never varied");
    }

    /// A wait of about 35,000 years and 100 µs (as an `f64`, a whole
    /// second), and a policy that waits it before every retry, with
    /// `jitter`.
    fn constant_long_wait(jitter: f64) -> (Duration, RetryPolicy) {
        let initial = Duration::new(1 << 40, 100_000);
        let p = RetryPolicy::attempts(3)
            .initial_backoff(initial)
            .max_backoff(initial)
            .jitter(jitter);
        (initial, p)
    }

    /// Without jitter a wait is not shortened at all, also one an `f64` of
    /// seconds cannot hold to the nanosecond (see
    /// `tests/graph_retry_exact_backoff.rs`).
    #[test]
    fn no_jitter_leaves_a_long_wait_as_it_is() {
        let (initial, p) = constant_long_wait(0.0);
        assert_eq!(p.jittered_backoff(1), initial);
        assert_eq!(p.jittered_backoff(2), initial);
    }

    /// A tiny jitter shortens a wait by at most that tiny fraction of it,
    /// also a wait an `f64` of seconds cannot hold to the nanosecond: not
    /// by what the wait loses in a round trip through an `f64`.
    #[test]
    fn a_tiny_jitter_shortens_a_long_wait_by_a_tiny_fraction() {
        let (initial, p) = constant_long_wait(1e-20);
        // 1e-20 of about 1.1e12 s: about 11 ns.
        let most = Duration::from_nanos(11);
        for _ in 0..16 {
            let wait = p.jittered_backoff(1);
            assert!(wait <= initial, "lengthened: {wait:?}");
            assert!(initial - wait <= most, "shortened by {:?}", initial - wait);
        }
    }

    #[test]
    fn an_infinite_multiplier_jumps_to_the_cap_and_nan_means_one() {
        let base = RetryPolicy::attempts(3).jitter(0.0);
        let infinite = base.multiplier(f64::INFINITY);
        assert_eq!(infinite.backoff(1), Duration::from_millis(10));
        assert_eq!(infinite.backoff(2), Duration::from_secs(10));
        assert_eq!(infinite.backoff(2), base.multiplier(f64::MAX).backoff(2));
        let nan = base.multiplier(f64::NAN);
        assert_eq!(nan.backoff(5), Duration::from_millis(10));
    }

    #[test]
    fn zero_attempts_means_one() {
        assert_eq!(RetryPolicy::attempts(0).max_attempts(), 1);
        assert_eq!(RetryPolicy::default().max_attempts(), 1);
    }
}
