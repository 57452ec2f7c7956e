//! `interval`: ticks on the grid, never early, missed ticks skipped.

use std::time::{Duration, Instant};

use fastexec::time::{interval, interval_at};

mod support;
use support::block_on_guarded;

/// Keeps the thread busy until `until`, as a stalled task would.
fn stall_until(until: Instant) {
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

#[test]
fn ticks_follow_the_grid_and_never_come_early() {
    block_on_guarded(async {
        let start = Instant::now();
        let period = Duration::from_millis(3);
        let mut interval = interval_at(start, period);
        for k in 0..5 {
            let scheduled = interval.tick().await;
            assert!(Instant::now() >= scheduled, "tick {k} early");
            // Ticks may be late; a late one moves the grid forward whole periods.
            let offset = (scheduled - start).as_nanos();
            assert_eq!(offset % period.as_nanos(), 0, "tick {k} is off the grid");
        }
    });
}

#[test]
fn the_first_tick_is_immediate() {
    block_on_guarded(async {
        let before = Instant::now();
        let mut interval = interval(Duration::from_secs(3600));
        let first = interval.tick().await;
        assert!(first >= before);
        assert_eq!(interval.period(), Duration::from_secs(3600));
    });
}

#[test]
fn ticks_missed_during_a_stall_are_skipped() {
    block_on_guarded(async {
        let start = Instant::now();
        let period = Duration::from_millis(5);
        let mut interval = interval_at(start, period);
        assert_eq!(interval.tick().await, start);

        // Miss the ticks at 5, 10 and 15 ms.
        stall_until(start + period * 3 + period / 2);
        let late = interval.tick().await;
        assert_eq!(late, start + period, "the late tick is delivered once");
        let resumed = Instant::now();

        let next = interval.tick().await;
        assert!(next > resumed - period, "no burst of stale ticks");
        assert!(
            next >= start + period * 4,
            "ticks 10 and 15 ms were skipped"
        );
        assert_eq!(
            (next - start).as_nanos() % period.as_nanos(),
            0,
            "still on the grid"
        );
        assert!(Instant::now() >= next);
    });
}

#[test]
#[should_panic(expected = "non-zero period")]
fn a_zero_period_panics() {
    let _ = interval(Duration::ZERO);
}
