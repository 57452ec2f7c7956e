use std::cmp::Reverse;
use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

const MS: Duration = Duration::from_millis(1);

fn id(s: &str) -> TaskId {
    TaskId::from(s)
}

/// Pops everything (all fitting) at `now`, in dispatch order.
fn drain(set: &mut ReadySet, now: Instant) -> Vec<u32> {
    std::iter::from_fn(|| set.pop_best(now, |_| true)).collect()
}

#[test]
fn higher_priority_first_then_earlier_ready_then_smaller_id() {
    let t0 = Instant::now();
    let mut set = ReadySet::new(Duration::from_secs(3600), 1);
    set.insert(0, id("b"), 0, t0); // same priority and time as "a": id decides
    set.insert(1, id("a"), 0, t0);
    set.insert(2, id("c"), 0, t0 - MS); // earlier
    set.insert(3, id("z"), 5, t0 + MS); // highest priority, latest
    set.insert(4, id("y"), -3, t0 - 10 * MS);
    assert_eq!(set.len(), 5);
    assert_eq!(drain(&mut set, t0 + 2 * MS), [3, 2, 1, 0, 4]);
    assert!(set.is_empty());
}

#[test]
fn aging_lifts_a_waiting_task_by_boost_per_interval() {
    let t0 = Instant::now();
    let mut set = ReadySet::new(10 * MS, 2);
    set.insert(0, id("old"), 0, t0);
    set.insert(1, id("new"), 5, t0 + 25 * MS);
    // At 25 ms "old" has 0 + 2*2 = 4 < 5.
    assert_eq!(set.outranked_by(0, t0 + 25 * MS), 1);
    // At 30 ms it has 0 + 3*2 = 6 > 5 (and "new" has waited 5 ms: still 5).
    assert_eq!(set.outranked_by(0, t0 + 30 * MS), 0);
    assert_eq!(set.outranked_by(1, t0 + 30 * MS), 1);
    assert_eq!(set.pop_best(t0 + 30 * MS, |_| true), Some(0));
}

#[test]
fn zero_boost_means_no_aging() {
    let t0 = Instant::now();
    let mut set = ReadySet::new(MS, 0);
    set.insert(0, id("old"), 0, t0);
    set.insert(1, id("new"), 1, t0 + Duration::from_secs(1000));
    assert_eq!(drain(&mut set, t0 + Duration::from_secs(2000)), [1, 0]);
}

/// With one slot and one new high-priority task per dispatch, a low-priority
/// task ready at `t0` is dispatched exactly at the first dispatch at or
/// after `t0 + ceil((p_high - p_low) / boost) * interval`, never before.
#[test]
fn low_priority_task_runs_within_the_aging_bound() {
    let (p_low, p_high, boost) = (-7, 20, 4);
    let interval = 10 * MS;
    let step = 3 * MS; // one arrival and one dispatch per step
    let t0 = Instant::now();
    let k = (p_high - p_low + boost - 1) / boost; // ceil(27 / 4) = 7
    let bound = interval * k as u32; // 70 ms
    let mut set = ReadySet::new(interval, boost as u32);
    set.insert(0, id("low"), p_low, t0);
    let mut now = t0;
    for i in 1.. {
        now += step;
        set.insert(i, id(&format!("high-{i:05}")), p_high, now);
        let popped = set.pop_best(now, |_| true).unwrap();
        if popped == 0 {
            break;
        }
        assert_eq!(popped, i, "the newly arrived task ran");
        assert!(now - t0 < bound, "low not dispatched by {:?}", now - t0);
    }
    assert!(now - t0 >= bound, "dispatched early, at {:?}", now - t0);
    assert!(
        now - t0 < bound + step,
        "the first dispatch after the bound"
    );
}

#[test]
fn remove_and_reinsert_keep_order() {
    let t0 = Instant::now();
    let mut set = ReadySet::new(Duration::from_secs(1), 1);
    for n in 0..6u32 {
        set.insert(n, id(&format!("t{n}")), 0, t0 + MS * n);
    }
    assert!(set.remove(0), "the head");
    assert!(set.remove(3), "from the middle: a stale deque entry");
    assert!(!set.remove(3), "already gone");
    assert!(!set.remove(99), "never there");
    assert!(!set.contains(3));
    // Resumed with its old ready time: out of order, ranks where it was.
    set.insert(3, id("t3"), 0, t0 + MS * 3);
    // Re-inserting an existing node replaces it.
    set.insert(5, id("t5"), 0, t0 - MS);
    assert_eq!(set.len(), 5);
    assert_eq!(drain(&mut set, t0 + MS * 10), [5, 1, 2, 3, 4]);
}

#[test]
fn a_task_that_does_not_fit_is_bypassed_at_most_max_bypass_times() {
    let t0 = Instant::now();
    let mut set = ReadySet::new(Duration::from_secs(3600), 1);
    set.insert(0, id("big"), 10, t0);
    let mut next = 1;
    let mut bypasses = 0;
    loop {
        set.insert(next, id(&format!("small-{next:03}")), 0, t0);
        next += 1;
        match set.pop_best(t0, |n| n != 0) {
            Some(n) => {
                assert_ne!(n, 0);
                bypasses += 1;
            }
            None => break,
        }
    }
    assert_eq!(bypasses, MAX_BYPASS);
    // Reserved: nothing else is offered until "big" fits.
    assert_eq!(set.peek_best(t0, |n| n != 0), None);
    assert_eq!(set.pop_best(t0, |n| n != 0), None);
    assert_eq!(set.pop_best(t0, |_| true), Some(0));
    assert!(!set.contains(0));
}

/// Two big tasks whose priorities differ by one, ready half an aging
/// interval apart, take turns as the best task every half interval. Each
/// is bypassed at most `MAX_BYPASS` times all the same: the count is the
/// task's, not reset when the other one is the best for a while.
#[test]
fn tasks_taking_turns_as_the_best_are_each_bypassed_at_most_max_bypass_times() {
    let interval = 10 * MS;
    let t0 = Instant::now();
    let mut set = ReadySet::new(interval, 1);
    set.insert(0, id("a"), 0, t0);
    set.insert(1, id("b"), 1, t0 + interval / 2);
    let (mut now, step) = (t0 + interval / 2, Duration::from_micros(100));
    let (mut bypasses, mut reserved) = (0, None);
    for next in 2..10_002 {
        set.insert(next, id(&format!("small-{next:05}")), -100, now);
        match set.pop_best(now, |n| n >= 2) {
            Some(n) => {
                assert!(n >= 2);
                bypasses += 1;
            }
            None => {
                reserved = set.pop_best(now, |_| true);
                break;
            }
        }
        now += step;
    }
    assert!(
        (MAX_BYPASS..=2 * MAX_BYPASS).contains(&bypasses),
        "{bypasses} bypasses, at most {MAX_BYPASS} each"
    );
    assert!(matches!(reserved, Some(0 | 1)), "reserved for {reserved:?}");
}

#[test]
fn fits_is_offered_at_most_lookahead_candidates_best_first() {
    let t0 = Instant::now();
    let mut set = ReadySet::new(Duration::from_secs(3600), 1);
    for n in 0..20u32 {
        set.insert(n, id(&format!("t{n:02}")), n as i32, t0);
    }
    let mut offered = Vec::new();
    let got = set.pop_best(t0, |n| {
        offered.push(n);
        false
    });
    assert_eq!(got, None);
    let expected: Vec<u32> = (20 - LOOKAHEAD as u32..20).rev().collect();
    assert_eq!(offered, expected, "the best first, then the next ones");
    // The third best fits: it goes, the two better ones stay.
    assert_eq!(set.pop_best(t0, |n| n == 17), Some(17));
    assert_eq!(set.len(), 19);
}

/// The candidates are the whole set's, in rank order: tasks queued behind
/// a level's head come before the head of a lower level.
#[test]
fn candidates_include_tasks_behind_a_level_head() {
    let t0 = Instant::now();
    let mut set = ReadySet::new(Duration::from_secs(3600), 1);
    set.insert(0, id("big"), 5, t0);
    set.insert(1, id("next"), 5, t0 + MS); // in the deque
    set.insert(2, id("early"), 5, t0 - MS); // in `late`, before "big"
    set.insert(3, id("low"), 0, t0);
    set.insert(4, id("behind"), 5, t0 + 2 * MS);
    let mut offered = Vec::new();
    let got = set.pop_best(t0 + 3 * MS, |n| {
        offered.push(n);
        false
    });
    assert_eq!(got, None);
    assert_eq!(offered, [2, 0, 1, 4, 3]);
    // "early" (the best) does not fit; the one behind "big" does.
    assert_eq!(set.pop_best(t0 + 3 * MS, |n| n == 1), Some(1));
    assert!(!set.contains(1));
    assert_eq!(drain(&mut set, t0 + 3 * MS), [2, 0, 4, 3]);
}

/// The reviewer's deadlock: one level, a head that does not fit and a task
/// behind it that does (a subflow its running parent waits for).
#[test]
fn one_level_offers_the_tasks_behind_a_head_that_does_not_fit() {
    let t0 = Instant::now();
    let mut set = ReadySet::new(Duration::from_secs(1), 1);
    set.insert(0, id("big"), 0, t0);
    set.insert(1, id("small"), 0, t0 + MS);
    set.insert(2, id("later"), 0, t0 + 2 * MS);
    assert_eq!(set.pop_best(t0, |n| n != 0), Some(1), "bypasses the head");
    assert_eq!(set.len(), 2);
    assert_eq!(drain(&mut set, t0), [0, 2], "FIFO otherwise");
}

/// After `MAX_BYPASS` bypasses within one level, only the head is offered.
#[test]
fn one_level_bypasses_its_head_at_most_max_bypass_times() {
    let t0 = Instant::now();
    let mut set = ReadySet::new(Duration::from_secs(3600), 1);
    set.insert(0, id("big"), 0, t0);
    for n in 1..=MAX_BYPASS + 1 {
        set.insert(n, id(&format!("small-{n:03}")), 0, t0 + MS * n);
    }
    for n in 1..=MAX_BYPASS {
        assert_eq!(set.pop_best(t0, |n| n != 0), Some(n));
    }
    let mut offered = Vec::new();
    let got = set.pop_best(t0, |n| {
        offered.push(n);
        n != 0
    });
    assert_eq!((got, offered), (None, vec![0]), "reserved for the head");
    assert_eq!(drain(&mut set, t0), [0, MAX_BYPASS + 1]);
}

#[test]
fn stale_now_is_raised_to_the_latest_ready_time() {
    let t0 = Instant::now();
    let mut set = ReadySet::new(MS, 1);
    set.insert(0, id("a"), 0, t0);
    set.insert(1, id("b"), 3, t0 + 10 * MS);
    // `now` before b's ready time counts as t0 + 10 ms: a has aged to 10.
    assert_eq!(set.pop_best(t0, |_| true), Some(0));
}

/// What the set must do, the slow way: seed 002's O(n) scan, plus the
/// look-ahead and bypass rule for tasks that do not fit.
#[derive(Default)]
struct Naive {
    /// node -> (id, base, ready since, insert number)
    tasks: BTreeMap<u32, (TaskId, i32, Instant, u64)>,
    inserts: u64,
    /// node -> times bypassed while the best, since its insert
    bypassed: BTreeMap<u32, u32>,
}

impl Naive {
    fn effective(base: i32, rs: Instant, now: Instant, interval: Duration, boost: u32) -> i128 {
        let wait = now.saturating_duration_since(rs).as_nanos();
        i128::from(base) + (wait / interval.as_nanos()) as i128 * i128::from(boost)
    }

    fn rank(&self, n: u32, now: Instant, iv: Duration, b: u32) -> impl Ord + '_ {
        let (id, base, rs, _) = &self.tasks[&n];
        (
            Self::effective(*base, *rs, now, iv, b),
            Reverse(*rs),
            Reverse(id),
            Reverse(n),
        )
    }

    fn insert(&mut self, node: u32, id: TaskId, base: i32, rs: Instant) {
        self.remove(node);
        self.inserts += 1;
        self.tasks.insert(node, (id, base, rs, self.inserts));
    }

    fn remove(&mut self, node: u32) -> bool {
        self.bypassed.remove(&node);
        self.tasks.remove(&node).is_some()
    }

    /// Every task, best first.
    fn ranked(&self, now: Instant, iv: Duration, b: u32) -> Vec<u32> {
        let mut all: Vec<u32> = self.tasks.keys().copied().collect();
        all.sort_by(|&x, &y| self.rank(y, now, iv, b).cmp(&self.rank(x, now, iv, b)));
        all
    }

    fn pop(
        &mut self,
        now: Instant,
        iv: Duration,
        b: u32,
        fits: impl Fn(u32) -> bool,
    ) -> Option<u32> {
        let ranked = self.ranked(now, iv, b);
        let &best = ranked.first()?;
        let pick = if fits(best) {
            best
        } else {
            if self.bypassed.get(&best).is_some_and(|&t| t >= MAX_BYPASS) {
                return None;
            }
            let pick = ranked[1..]
                .iter()
                .take(LOOKAHEAD - 1)
                .copied()
                .find(|&n| fits(n))?;
            self.remove(pick);
            *self.bypassed.entry(best).or_default() += 1;
            return Some(pick);
        };
        self.remove(pick);
        Some(pick)
    }

    fn outranked_by(&self, n: u32, now: Instant, iv: Duration, b: u32) -> usize {
        let me = self.rank(n, now, iv, b);
        self.tasks
            .keys()
            .filter(|&&m| m != n && self.rank(m, now, iv, b) > me)
            .count()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert {
        node: u32,
        id: u8,
        base: i32,
        at_ms: u64,
    },
    Remove(u32),
    Pop {
        advance_ms: u64,
        /// Bit `n` set: node `n` does not fit.
        misfits: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..40u32, 0..6u8, -4..4i32, 0..200u64)
            .prop_map(|(node, id, base, at_ms)| Op::Insert { node, id, base, at_ms }),
        1 => (0..40u32).prop_map(Op::Remove),
        3 => (0..30u64, misfits()).prop_map(|(advance_ms, misfits)| Op::Pop { advance_ms, misfits }),
    ]
}

/// Which nodes do not fit at a pop: mostly none, else a few or many.
fn misfits() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => Just(0u64),
        1 => prop::collection::vec(0..40u32, 1..4)
            .prop_map(|ns| ns.iter().fold(0u64, |m, n| m | 1 << n)),
        1 => any::<u64>(),
    ]
}

proptest! {
    // A few cases under Miri (`scripts/miri`), where each takes seconds.
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 400 }))]

    #[test]
    fn pop_best_equals_the_naive_scan(
        ops in prop::collection::vec(op(), 1..120),
        interval_ms in 1..20u64,
        boost in 0..4u32,
    ) {
        let t0 = Instant::now();
        let interval = Duration::from_millis(interval_ms);
        let mut set = ReadySet::new(interval, boost);
        let mut naive = Naive::default();
        let mut now = t0;
        for op in ops {
            match op {
                Op::Insert { node, id, base, at_ms } => {
                    // Ready times anywhere up to now (resumed tasks keep old ones).
                    let rs = (t0 + Duration::from_millis(at_ms)).min(now);
                    let tid = TaskId::from(format!("t{id}"));
                    set.insert(node, tid.clone(), base, rs);
                    naive.insert(node, tid, base, rs);
                }
                Op::Remove(node) => {
                    prop_assert_eq!(set.remove(node), naive.remove(node));
                }
                Op::Pop { advance_ms, misfits } => {
                    now += Duration::from_millis(advance_ms);
                    if let Some(n) = naive.tasks.keys().next().copied() {
                        prop_assert_eq!(
                            set.outranked_by(n, now),
                            naive.outranked_by(n, now, interval, boost)
                        );
                    }
                    let fits = |n: u32| misfits & (1 << n) == 0;
                    let expected = naive.pop(now, interval, boost, fits);
                    // `peek_best` says the same without taking it.
                    prop_assert_eq!(set.peek_best(now, fits), expected);
                    prop_assert_eq!(set.pop_best(now, fits), expected);
                }
            }
            prop_assert_eq!(set.len(), naive.tasks.len());
        }
    }
}

#[test]
fn next_reorder_is_the_next_step_of_an_offerable_task_if_one_fits() {
    let t0 = Instant::now();
    let interval = 100 * MS;
    // One level: its order never changes.
    let mut set = ReadySet::new(interval, 1);
    set.insert(0, id("a"), 0, t0);
    assert_eq!(set.next_reorder(t0 + 10 * MS, |_| true), None);
    // Two levels: the first step after `now` of the tasks that can be
    // offered (ready at 0 ms: steps at 100, 200...; at 30 ms: 130, 230...).
    set.insert(1, id("b"), 5, t0 + 30 * MS);
    assert_eq!(
        set.next_reorder(t0 + 40 * MS, |_| true),
        Some(t0 + interval)
    );
    assert_eq!(
        set.next_reorder(t0 + 110 * MS, |_| true),
        Some(t0 + 130 * MS)
    );
    // On a step, the next one.
    assert_eq!(
        set.next_reorder(t0 + interval, |_| true),
        Some(t0 + 130 * MS)
    );
    // Nothing that could be offered fits: time alone cannot help.
    assert_eq!(set.next_reorder(t0 + 40 * MS, |_| false), None);
    assert_eq!(
        set.next_reorder(t0 + 40 * MS, |n| n == 1),
        Some(t0 + interval)
    );
    // A task behind LOOKAHEAD others of its level is never offered: it
    // neither fits for the set nor sets the instant.
    let mut deep = ReadySet::new(interval, 1);
    for n in 0..LOOKAHEAD as u32 {
        deep.insert(n, id(&format!("x{n}")), 0, t0 + 50 * MS);
    }
    deep.insert(100, id("deep"), 0, t0 + 60 * MS);
    deep.insert(101, id("other"), 7, t0 + 70 * MS);
    assert_eq!(deep.next_reorder(t0 + 80 * MS, |n| n == 100), None);
    assert_eq!(
        deep.next_reorder(t0 + 80 * MS, |n| n == 101),
        Some(t0 + 150 * MS)
    );
    // Aging off: never.
    let mut off = ReadySet::new(interval, 0);
    off.insert(0, id("a"), 0, t0);
    off.insert(1, id("b"), 5, t0);
    assert_eq!(off.next_reorder(t0, |_| true), None);
}
