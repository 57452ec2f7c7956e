//! A cheap clock for timing many short things on one thread: raw ticks of
//! the CPU's time-stamp counter, turned into [`Instant`]s afterwards by
//! interpolating between exact readings ([`Mark`]s) taken around them.
//!
//! # Why
//!
//! A graph run times every attempt of every task. `Instant::now` is a vDSO
//! `clock_gettime`: it orders the counter read with a fence, reads the
//! kernel's scale under a sequence lock and converts. On the machines we
//! measured it costs 20–29 ns, a quarter of a small task's time in a graph
//! run; `rdtsc` alone, in the middle of other work, costs almost nothing
//! (BENCHMARKS.md, "A tick clock for attempts").
//!
//! # Protocol
//!
//! A [`Timeline`] belongs to one thread's sequence of work (a runner's
//! batch). It starts at an exact [`Mark`] (an `Instant` and the ticks at
//! the same moment, within tens of nanoseconds); in between,
//! [`Timeline::tick`] reads ticks only, and [`Timeline::mark`] an exact
//! mark where one is needed at once (a time limit, a hand-off).
//! [`Timeline::instants`] closes it with a last exact mark and converts
//! each tick reading, in order, by linear interpolation between the two
//! marks around it. A run that takes no tick reading (one attempt, as a
//! chain's batches) converts nothing, so its marks need not pair ticks and
//! instant closely: [`Mark::coarse`] spares the bracket. So:
//!
//! * no calibration and no drift: every segment is scaled by its own two
//!   exact readings, and a mark converts to its own `Instant`; a reading
//!   between marks converts to within half a mark's bracket (tens of
//!   nanoseconds) of the `Instant` it would have read (see [`Mark::now`]);
//! * a converted reading never falls outside the marks around it: readings
//!   stay ordered with every `Instant` taken before the first mark or after
//!   the last (a task's start after its dependency's end, recorded under
//!   the same lock);
//! * readings are clamped to never go back (a thread moved to a core whose
//!   counter lags, on machines without synchronised counters), and
//!   interpolation is monotone, so converted instants never go back either.
//!
//! What it cannot promise is where inside a segment a reading lands if the
//! counter does not tick at a constant rate (CPUs without an invariant
//! counter, none made since about 2008): the instants stay between the
//! marks, ordered, but their spacing follows the counter.
//!
//! Elsewhere than on x86_64 (and under Miri), a tick is a nanosecond since
//! a base instant, read with `Instant::now`: the same protocol, at the cost
//! of the exact clock.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Whether ticks are the CPU's time-stamp counter (x86_64, but under Miri,
/// which does not run `rdtsc`, and in an SGX enclave, where it faults);
/// elsewhere they are nanoseconds of `Instant` (see [`read`]).
const TSC: bool = cfg!(all(
    target_arch = "x86_64",
    not(miri),
    not(target_env = "sgx")
));

/// Reads the tick counter: on x86_64, the time-stamp counter (not ordered
/// with the instructions around it: a reading may be taken a few cycles
/// early or late, which a task's record does not notice).
#[cfg(all(target_arch = "x86_64", not(miri), not(target_env = "sgx")))]
#[inline(always)]
pub(crate) fn read() -> u64 {
    // SAFETY: `rdtsc` only copies the time-stamp counter into two
    // registers: it reads and writes no memory and has no precondition on
    // the program's state. (An OS may forbid it in user mode, CR4.TSD, as
    // Linux does for a process that asked with `prctl(PR_SET_TSC)`; the
    // instruction then faults, which ends the process with a signal: no
    // memory is touched either way.)
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Reads the tick counter: nanoseconds since the first reading in this
/// process, where no cheap counter is at hand.
#[cfg(not(all(target_arch = "x86_64", not(miri), not(target_env = "sgx"))))]
#[inline]
pub(crate) fn read() -> u64 {
    nanos_of(Instant::now())
}

/// Where ticks are nanoseconds of `Instant`: the ticks of `instant`.
fn nanos_of(instant: Instant) -> u64 {
    static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| instant);
    u64::try_from(instant.saturating_duration_since(base).as_nanos()).unwrap_or(u64::MAX)
}

/// Ticks per 2^20 ns (about a millisecond), learnt from the first
/// timeline that spanned [`LEARN_AFTER`] (0 until then). Only a hint for
/// turning a duration into ticks ([`ticks_in`]); conversions never use it.
/// Written once, then only read: no line moves between cores for it.
/// Relaxed: it publishes nothing but its own value.
static TICKS_PER_2_20_NS: AtomicU64 = AtomicU64::new(0);

/// How long a timeline (in one or several segments) must have run before
/// its rate is taken as [`TICKS_PER_2_20_NS`]: long enough that the few
/// nanoseconds between an `Instant` and its ticks are noise.
const LEARN_AFTER: Duration = Duration::from_micros(20);

/// About how many ticks `d` lasts, once known (see [`TICKS_PER_2_20_NS`]):
/// for a check that an exact reading then confirms, such as "has this
/// batch run for 50 µs yet?".
#[inline]
pub(crate) fn ticks_in(d: Duration) -> Option<u64> {
    if !TSC {
        // Ticks are nanoseconds.
        return Some(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    }
    match TICKS_PER_2_20_NS.load(Relaxed) {
        0 => None,
        rate => Some(u64::try_from((d.as_nanos() * u128::from(rate)) >> 20).unwrap_or(u64::MAX)),
    }
}

/// Learns the tick rate from `ticks` counted over `span`, if not known yet.
fn learn(span: Duration, ticks: u64) {
    if span < LEARN_AFTER || TICKS_PER_2_20_NS.load(Relaxed) != 0 {
        return;
    }
    let rate = (u128::from(ticks) << 20) / span.as_nanos().max(1);
    if let Ok(rate @ 1..) = u64::try_from(rate) {
        TICKS_PER_2_20_NS.store(rate, Relaxed);
    }
}

/// An exact reading: an `Instant` and the ticks at the same moment, as
/// nearly as they can be paired (see [`Mark::now`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mark {
    pub(crate) instant: Instant,
    pub(crate) ticks: u64,
}

/// The narrowest bracket of ticks around an `Instant::now` seen so far
/// (see [`Mark::now`]); `u64::MAX` until the first. Written only when a
/// narrower one is seen, so rarely after the first marks. Relaxed: it
/// publishes nothing but its own value.
static NARROWEST: AtomicU64 = AtomicU64::new(u64::MAX);

/// How many times [`Mark::now`] reads at most, looking for a bracket no
/// wider than [`WIDE`] times the narrowest.
const TRIES: usize = 4;

/// A bracket wider than this many times the narrowest was interrupted.
const WIDE: u64 = 4;

impl Mark {
    /// Reads both clocks: the ticks before and after an `Instant::now`,
    /// paired with the middle of the two. The `Instant` reads the counter
    /// somewhere between them, so the pairing is off by at most half
    /// their distance (tens of nanoseconds). A thread interrupted inside
    /// the bracket (preempted, or an interrupt handled) would pair the
    /// instant with ticks far from its own, and shift every reading
    /// interpolated from the mark: such a bracket, much wider than the
    /// narrowest seen, is read again, up to [`TRIES`] times in all (the
    /// narrowest is kept).
    /// (Out of line: a batch of several attempts reads one or two, and
    /// inlined it would widen the runner's hot functions for every batch.)
    #[inline(never)]
    pub(crate) fn now() -> Mark {
        if !TSC {
            // Ticks are the instant's own nanoseconds: an exact pairing.
            return Self::coarse(Instant::now());
        }
        let (mut mark, mut width) = Self::bracket();
        let narrowest = NARROWEST.load(Relaxed);
        if width > narrowest.saturating_mul(WIDE) {
            (mark, width) = Self::narrower(mark, width, narrowest);
        }
        if width < narrowest {
            NARROWEST.store(width, Relaxed);
        }
        mark
    }

    /// A mark of `instant` that no reading will be interpolated against
    /// (a batch of one attempt starts and ends at marks). Its ticks, where
    /// they are the CPU's counter, are not read (a tick read costs a
    /// chain's batch ~6 ns): 0, below every reading after it, so that a
    /// reading or mark kept after it is kept as read.
    #[inline]
    pub(crate) fn coarse(instant: Instant) -> Mark {
        let ticks = if TSC { 0 } else { nanos_of(instant) };
        Mark { instant, ticks }
    }

    /// One reading: the mark and the width of its bracket, in ticks. A
    /// counter that went back inside it (the thread moved to a core whose
    /// counter lags) bracketed nothing: as wide as can be, so that it is
    /// read again and never taken for the narrowest.
    #[inline(always)]
    fn bracket() -> (Mark, u64) {
        let before = read();
        let instant = Instant::now();
        Self::paired(before, instant, read())
    }

    /// The mark of `instant`, read between ticks `before` and `after`, and
    /// the width of that bracket (see [`Mark::bracket`]).
    #[inline(always)]
    fn paired(before: u64, instant: Instant, after: u64) -> (Mark, u64) {
        let Some(width) = after.checked_sub(before) else {
            return (
                Mark {
                    instant,
                    ticks: before,
                },
                u64::MAX,
            );
        };
        let ticks = before + width / 2;
        (Mark { instant, ticks }, width)
    }

    /// [`Mark::now`] after a wide bracket: reads again until one is narrow
    /// enough, or [`TRIES`] in all were read; gives the narrowest.
    #[cold]
    #[inline(never)]
    fn narrower(mut mark: Mark, mut width: u64, narrowest: u64) -> (Mark, u64) {
        for _ in 1..TRIES {
            let (again, w) = Self::bracket();
            if w < width {
                (mark, width) = (again, w);
            }
            if width <= narrowest.saturating_mul(WIDE) {
                break;
            }
        }
        (mark, width)
    }
}

/// Tick readings of one thread's sequence of work, between exact marks
/// (see the module docs). Reused: [`Timeline::start`] empties it.
#[derive(Debug)]
pub(crate) struct Timeline {
    /// The start of the run.
    first: Mark,
    /// The exact marks after it so far, in order (none in most runs: a
    /// run of one attempt touches no vector).
    marks: Vec<Mark>,
    /// The latest reading: the next is above it (see [`Timeline::tick`]).
    last: u64,
    /// Whether this run has a tick reading that is no mark (see
    /// [`Timeline::interpolates`]).
    ticked: bool,
    /// Time and ticks over this timeline's past runs, until the rate is
    /// learnt (see [`learn`]).
    seen: (Duration, u64),
}

impl Default for Timeline {
    /// A timeline started now.
    fn default() -> Self {
        let first = Mark::coarse(Instant::now());
        Timeline {
            first,
            marks: Vec::new(),
            last: first.ticks,
            ticked: false,
            seen: (Duration::ZERO, 0),
        }
    }
}

impl Timeline {
    /// Starts a new run of readings at `mark`, forgetting the last run's.
    #[inline]
    pub(crate) fn start(&mut self, mark: Mark) {
        self.first = mark;
        if !self.marks.is_empty() {
            self.marks.clear();
        }
        self.last = mark.ticks;
        self.ticked = false;
    }

    /// Whether a reading of this run will be interpolated between marks:
    /// then the marks around it must pair their ticks and instant closely
    /// ([`Mark::now`], not [`Mark::coarse`]).
    #[inline]
    pub(crate) fn interpolates(&self) -> bool {
        self.ticked
    }

    /// Whether this run has read nothing since its first mark (no tick,
    /// no mark): every reading of it is the first mark's.
    #[inline]
    pub(crate) fn read_nothing(&self) -> bool {
        !self.ticked && self.marks.is_empty()
    }

    /// The start of this run.
    #[inline]
    pub(crate) fn first(&self) -> Mark {
        self.first
    }

    /// Reads the ticks, above the last reading: every reading of a run is
    /// distinct, so one that equals a mark's ticks is that mark (a counter
    /// that lags on the core the thread moved to would tie readings, and
    /// give an earlier one a later mark's instant).
    #[inline]
    pub(crate) fn tick(&mut self) -> u64 {
        debug_assert!(
            !TSC || self.first.ticks != 0,
            "a tick reading after a coarse start"
        );
        self.ticked = true;
        self.last = read().max(self.last.saturating_add(1));
        self.last
    }

    /// Takes an exact mark now and keeps it for the conversion.
    #[inline]
    pub(crate) fn mark(&mut self) -> Mark {
        self.push(Mark::now())
    }

    /// Keeps `mark`, taken by the caller after every reading so far, and
    /// gives it as kept (its ticks above the last reading, as
    /// [`Timeline::tick`]'s).
    #[inline]
    pub(crate) fn push(&mut self, mut mark: Mark) -> Mark {
        mark.ticks = mark.ticks.max(self.last.saturating_add(1));
        self.last = mark.ticks;
        self.marks.push(mark);
        mark
    }

    /// The instant of `ticks`, a reading of this run, interpolated from
    /// the marks so far: for a time needed before the run ends (its last
    /// mark must have been taken after the reading).
    pub(crate) fn instant_now(&self, ticks: u64) -> Instant {
        match self.marks.split_last() {
            Some((&last, before)) => Instants::new(self.first, before, last).at(ticks),
            None => self.first.instant,
        }
    }

    /// Ends this run at `end` (an exact mark taken after every reading)
    /// and gives the converter of its readings, to be asked in the order
    /// they were read.
    #[inline]
    pub(crate) fn instants(&mut self, mut end: Mark) -> Instants<'_> {
        end.ticks = end.ticks.max(self.last.saturating_add(1));
        // Only from marks that pair closely (see `interpolates`).
        if self.ticked && TICKS_PER_2_20_NS.load(Relaxed) == 0 {
            self.learn_from_run(end);
        }
        Instants::new(self.first, &self.marks, end)
    }

    /// Adds this run's time and ticks (up to `end`) to what it has seen,
    /// and learns the rate once that is long enough (see [`learn`]).
    #[cold]
    fn learn_from_run(&mut self, end: Mark) {
        let first = self.first;
        self.seen.0 += end.instant.saturating_duration_since(first.instant);
        self.seen.1 = self.seen.1.saturating_add(end.ticks - first.ticks);
        learn(self.seen.0, self.seen.1);
    }
}

/// Converts the readings of a [`Timeline`] run (its first mark, the marks
/// `marks`, then `end`), asked in the order read. A reading in the segment
/// between marks `a` and `b` (its ticks at least `a`'s, below `b`'s) is
/// `a` plus its ticks past `a` times the segment's nanoseconds per tick:
/// one multiplication, the factor made once per segment. Consecutive asks
/// for one reading (an attempt's end is the next one's start) convert it
/// once.
/// A run of one attempt (a chain's) reads only its first mark and its
/// end: no segment is entered and nothing is divided.
pub(crate) struct Instants<'a> {
    first: Mark,
    marks: &'a [Mark],
    end: Mark,
    /// The current segment's first mark, by index in the run (0 the first,
    /// then `marks`, then the end, whose instant every later reading gets).
    a: usize,
    /// The current segment, once a reading inside it asked for it (a run
    /// whose readings are all marks makes none).
    segment: Option<Segment>,
    /// The reading asked last, and its instant.
    last: (u64, Instant),
}

/// A segment between two marks, `a` and the next, made ready to convert
/// the readings inside it.
#[derive(Clone, Copy)]
struct Segment {
    a: Mark,
    /// The next mark's ticks.
    b_ticks: u64,
    /// Nanoseconds per tick, times 2^32.
    ns_per_tick: u64,
}

impl<'a> Instants<'a> {
    #[inline]
    fn new(first: Mark, marks: &'a [Mark], end: Mark) -> Self {
        Instants {
            first,
            marks,
            end,
            a: 0,
            segment: None,
            last: (first.ticks, first.instant),
        }
    }

    /// Mark `i` of the run: the first, then `marks`, the end last.
    #[inline]
    fn mark(&self, i: usize) -> Mark {
        match i.checked_sub(1) {
            None => self.first,
            Some(m) => self.marks.get(m).copied().unwrap_or(self.end),
        }
    }

    /// The instant of reading `ticks`, not earlier than the one asked
    /// before.
    #[inline]
    pub(crate) fn at(&mut self, ticks: u64) -> Instant {
        if ticks == self.last.0 {
            return self.last.1;
        }
        match self.segment {
            Some(segment) if segment.a.ticks < ticks && ticks < segment.b_ticks => {
                self.inside(segment, ticks)
            }
            _ => self.find(ticks),
        }
    }

    /// The instant of `ticks`, inside `segment`.
    #[inline]
    fn inside(&mut self, segment: Segment, ticks: u64) -> Instant {
        // Ticks past `a` are below the segment's and the factor rounded
        // down, so this stays below the segment's span: no overflow, and
        // the next mark is not passed.
        let past = u128::from(ticks - segment.a.ticks);
        let ns = (past * u128::from(segment.ns_per_tick)) >> 32;
        let instant = segment.a.instant + Duration::from_nanos(ns as u64);
        self.last = (ticks, instant);
        instant
    }

    /// [`Instants::at`] outside the current segment (or before the first
    /// is made): finds the segment of `ticks` and makes it current.
    #[inline(never)]
    fn find(&mut self, ticks: u64) -> Instant {
        let (mut a, mut b) = (self.mark(self.a), self.mark(self.a + 1));
        let end = self.marks.len() + 1;
        while ticks >= b.ticks && self.a < end {
            self.a += 1;
            (a, b) = (b, self.mark(self.a + 1));
        }
        // Below the segment's ticks (asked out of order), or past the end:
        // a mark's instant.
        if ticks <= a.ticks || self.a == end {
            return a.instant;
        }
        let span = b.instant.saturating_duration_since(a.instant).as_nanos();
        // Ticks lie between the marks, so the division is by at least 1;
        // a factor past u64 would be more than 4 s per tick: no clock.
        let factor = (span << 32) / u128::from(b.ticks - a.ticks);
        let segment = Segment {
            a,
            b_ticks: b.ticks,
            ns_per_tick: u64::try_from(factor).unwrap_or(u64::MAX),
        };
        self.segment = Some(segment);
        self.inside(segment, ticks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(at: Instant, ns: u64, ticks: u64) -> Mark {
        Mark {
            instant: at + Duration::from_nanos(ns),
            ticks,
        }
    }

    #[test]
    fn readings_between_marks_are_interpolated_and_marks_are_exact() {
        let t0 = Instant::now();
        let mut line = Timeline::default();
        line.start(mark(t0, 0, 1_000));
        line.push(mark(t0, 1_000, 3_000));
        let mut at = line.instants(mark(t0, 1_100, 3_100));
        assert_eq!(at.at(1_000), t0);
        assert_eq!(at.at(2_000), t0 + Duration::from_nanos(500));
        assert_eq!(at.at(3_000), t0 + Duration::from_nanos(1_000));
        assert_eq!(at.at(3_050), t0 + Duration::from_nanos(1_050));
        assert_eq!(at.at(3_100), t0 + Duration::from_nanos(1_100));
        // Past the last mark: the last mark.
        assert_eq!(at.at(9_999), t0 + Duration::from_nanos(1_100));
        assert_eq!(at.at(u64::MAX), t0 + Duration::from_nanos(1_100));
    }

    #[test]
    fn a_reading_never_leaves_its_segment_nor_goes_back() {
        let t0 = Instant::now();
        let mut line = Timeline::default();
        line.start(mark(t0, 0, 10));
        let mut at = line.instants(mark(t0, 7, 13));
        let got: Vec<Instant> = [0, 10, 11, 12, 13, 14].map(|t| at.at(t)).to_vec();
        assert!(got.windows(2).all(|w| w[0] <= w[1]), "{got:?}");
        assert!(got
            .iter()
            .all(|&i| t0 <= i && i <= t0 + Duration::from_nanos(7)));
    }

    #[test]
    fn marks_with_no_ticks_between_them_convert_to_their_own_instants() {
        let t0 = Instant::now();
        let mut line = Timeline::default();
        line.start(mark(t0, 0, 5));
        let end = mark(t0, 40, 5);
        let mut at = line.instants(end);
        assert_eq!(at.at(5), t0);
        // The end, tied with the start, was kept above it.
        assert_eq!(at.at(6), t0 + Duration::from_nanos(40));
    }

    #[test]
    fn tied_marks_convert_to_their_own_instants() {
        let t0 = Instant::now();
        let mut line = Timeline::default();
        line.start(mark(t0, 0, 100));
        let b0 = line.push(mark(t0, 200, 160));
        // The counter lagged (the thread moved): kept above the last.
        let b1 = line.push(mark(t0, 900, 120));
        assert!(b1.ticks > b0.ticks);
        let mut at = line.instants(mark(t0, 1_000, 170));
        assert_eq!(at.at(100), t0);
        assert_eq!(at.at(b0.ticks), t0 + Duration::from_nanos(200));
        assert_eq!(at.at(b1.ticks), t0 + Duration::from_nanos(900));
    }

    #[test]
    fn ticks_tied_with_later_marks_convert_no_later_than_the_first_of_them() {
        let t0 = Instant::now();
        let mut line = Timeline::default();
        line.start(mark(t0, 0, 100));
        let r = 150;
        line.push(mark(t0, 300, r));
        // Marks whose counter lagged behind: kept above, in order.
        line.push(mark(t0, 700, r - 40));
        line.push(mark(t0, 800, r - 40));
        let mut at = line.instants(mark(t0, 1_000, 170));
        assert_eq!(at.at(r), t0 + Duration::from_nanos(300));
        assert_eq!(at.at(r + 1), t0 + Duration::from_nanos(700));
        assert_eq!(at.at(r + 2), t0 + Duration::from_nanos(800));
    }

    #[test]
    fn a_mark_pairs_its_instant_with_the_middle_of_its_bracket() {
        let t0 = Instant::now();
        let (mark, width) = Mark::paired(100, t0, 140);
        assert_eq!((mark.ticks, mark.instant, width), (120, t0, 40));
    }

    #[test]
    fn a_counter_that_goes_back_inside_a_bracket_brackets_nothing() {
        // Never the narrowest (a zero width would make every later mark
        // read all its tries), and read again.
        let (_, width) = Mark::paired(100, Instant::now(), 90);
        assert_eq!(width, u64::MAX);
    }

    #[test]
    fn a_run_whose_readings_are_all_marks_interpolates_nothing() {
        let t0 = Instant::now();
        let mut line = Timeline::default();
        // A coarse start whose ticks are off: no reading lies between it
        // and the next mark, so they are never used.
        line.start(mark(t0, 0, 7));
        assert!(!line.interpolates());
        let exact = line.push(mark(t0, 50, 1_000));
        assert!(!line.interpolates());
        let mut at = line.instants(mark(t0, 90, 1_500));
        assert_eq!(at.at(7), t0);
        assert_eq!(at.at(exact.ticks), t0 + Duration::from_nanos(50));
        assert_eq!(at.at(1_500), t0 + Duration::from_nanos(90));
    }

    #[test]
    fn a_tick_reading_makes_the_run_interpolate() {
        let mut line = Timeline::default();
        line.start(Mark::now());
        line.tick();
        assert!(line.interpolates());
        line.start(Mark::now());
        assert!(!line.interpolates());
    }

    #[test]
    fn real_readings_convert_in_order_within_their_marks() {
        let mut line = Timeline::default();
        let start = Mark::now();
        line.start(start);
        let mut readings = Vec::new();
        for n in 0..1_000 {
            readings.push(line.tick());
            if n % 300 == 0 {
                readings.push(line.mark().ticks);
            }
        }
        let end = Mark::now();
        let mut at = line.instants(end);
        let got: Vec<Instant> = readings.iter().map(|&t| at.at(t)).collect();
        assert!(got.windows(2).all(|w| w[0] <= w[1]));
        assert!(got.iter().all(|&i| start.instant <= i && i <= end.instant));
    }

    #[test]
    fn a_duration_in_ticks_is_learnt_from_a_run_long_enough_with_readings_between_its_marks() {
        let mut line = Timeline::default();
        let start = Mark::now();
        line.start(start);
        let end = loop {
            line.tick();
            let end = Mark::now();
            if end.instant - start.instant >= LEARN_AFTER {
                break end;
            }
        };
        let _ = line.instants(end);
        let ticks = ticks_in(Duration::from_millis(1)).expect("learnt");
        assert!(ticks > 0);
        assert!(ticks_in(Duration::from_millis(2)).unwrap() >= ticks);
        // Whichever run taught it (another test's, maybe), the rate is the
        // counter's: 2 ms of ticks, counted, against the rate's 2 ms.
        let (t, r) = (Instant::now(), read());
        while t.elapsed() < Duration::from_millis(2) {
            std::hint::spin_loop();
        }
        let (d, counted) = (t.elapsed(), read() - r);
        let ratio = ticks_in(d).unwrap() as f64 / counted as f64;
        assert!((0.95..1.05).contains(&ratio), "learnt rate off by {ratio}");
    }
}
