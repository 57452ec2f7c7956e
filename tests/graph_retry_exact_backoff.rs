//! `RetryPolicy::backoff` is the documented
//! `min(initial_backoff * multiplier^(k-1), max_backoff)` to the
//! nanosecond: the first wait is the initial backoff itself, a constant
//! backoff (multiplier 1) stays that backoff, and doubling doubles. The
//! wait was computed as an `f64` of seconds, which holds a wait to the
//! nanosecond only up to about 104 days (2^53 ns): a longer initial backoff
//! with nanoseconds came back changed, longer than itself at times.

use std::time::Duration;

use fastexec::graph::RetryPolicy;

/// Waits an `f64` of seconds cannot hold to the nanosecond.
const LONG: [Duration; 4] = [
    Duration::new(10_000_000, 1),
    // As an `f64`, a whole second: 100 µs shorter.
    Duration::new(1 << 40, 100_000),
    Duration::new(123_456_789, 987_654_321),
    Duration::new(u64::MAX / 2, 7),
];

fn policy(initial: Duration) -> RetryPolicy {
    RetryPolicy::attempts(10)
        .initial_backoff(initial)
        .max_backoff(Duration::MAX)
        .jitter(0.0)
}

#[test]
fn the_first_wait_is_the_initial_backoff() {
    for initial in LONG {
        assert_eq!(policy(initial).backoff(1), initial);
    }
}

#[test]
fn a_constant_backoff_stays_constant() {
    for initial in LONG {
        let p = policy(initial).multiplier(1.0);
        for retry in [2, 5, u32::MAX] {
            assert_eq!(p.backoff(retry), initial, "retry {retry}");
        }
    }
}

#[test]
fn doubling_doubles_exactly() {
    let initial = Duration::new(10_000_000, 1);
    let p = policy(initial);
    assert_eq!(p.backoff(2), initial * 2);
    assert_eq!(p.backoff(4), initial * 8);
    // Capped exactly when the product passes the cap.
    let capped = p.max_backoff(initial * 3);
    assert_eq!(capped.backoff(2), initial * 2);
    assert_eq!(capped.backoff(3), initial * 3);
}
