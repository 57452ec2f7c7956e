//! [`ReadySet`]: the Ready tasks, ordered for dispatch by priority with aging.
//!
//! # The rule
//!
//! A ready task `t` with base priority `p`, ready since `r`, has at time
//! `now` the effective priority
//!
//! ```text
//! f(t) = p + floor((now - r) / I) * B        (I = aging interval, B = aging boost)
//! ```
//!
//! Dispatch picks the highest `f`, then the earlier `r`, then the lexically
//! smaller task id (then the smaller node index, which only matters if the
//! caller reuses an id). This is seed 002's rule exactly.
//!
//! # The structure
//!
//! * One queue per base priority (a *level*), ordered by `(r, id, node)`.
//!   Inserts that arrive in that order (the common case: a task becomes ready
//!   at `now`, later than everything before it) are appended to a `VecDeque`;
//!   out-of-order ones (a resumed task's `r` is from before it was paused,
//!   moved on by the pause; many tasks made
//!   ready at the same instant with ids out of order) go to a `BTreeSet`. The
//!   level's head is the smaller of the two fronts. A task's id is stored
//!   once, in its slot (indexed by node); a deque entry is `(r, node, seq)`
//!   and is live while the slot holds the same insert's `seq`. Removing a
//!   task from the middle of the deque only clears its slot; stale entries
//!   are dropped when they reach the front or with their level (a task ready
//!   at the same instant as a stale back entry goes to the `BTreeSet`: the
//!   order against it cannot be checked).
//! * The heads of all levels, as `(K, base, node)`, in a `BTreeSet` ordered
//!   by the *continuous* priority, which does not depend on `now` once
//!   scaled:
//!   `c(t) * I = p * I + (now - r) * B = K(t) + now * B` with
//!   `K(t) = p * I - r * B` (nanoseconds, in `i128`: exact). The set is only
//!   kept while two or more levels are in use; with one level the head is
//!   the pick and nothing else is maintained.
//!
//! # Why the pick is the formula's pick
//!
//! 1. *Within a level* the head ranks first: all share `p`; `f` is
//!    non-increasing in `r`, and equal `f` is broken by `r` then id, which is
//!    the level's own order. So the best task is a level head.
//! 2. *Across levels*, `pop_best` raises `now` to the latest `r` it was
//!    given (a no-op for a monotonic clock), so every wait is `>= 0` and
//!    `c - B < f <= c`. It visits heads by decreasing `c` (decreasing `K`),
//!    computes each exact `f` and keeps the best by the full rule. When the
//!    head being visited has `c < f*` (the best exact `f` so far), every
//!    unvisited head has `f' <= c' <= c < f*`: it can neither win nor tie,
//!    so the scan stops. The integer test is `K + now * B < f* * I`.
//! 3. The visited heads all have `c >= f* >= f(top) > c(top) - B`, where
//!    `top` is the head with the largest `c`: the scan touches the heads
//!    within one boost of the top, plus the one that stops it.
//!
//! # Complexity
//!
//! With `n` ready tasks, `L` levels (distinct base priorities in use) and
//! `L'` heads within one boost of the top (`1 <= L' <= L`): `insert` and
//! `remove` are `O(log n)` (`O(1)` amortised with a single level and
//! in-order inserts); a `pop_best` whose pick fits is `O(log n + L')`, and
//! `O(1)` amortised with a single level. `L'` is small when base priorities
//! are far apart compared with the aging that has accrued, but a long
//! backlog under aging pulls the heads' continuous priorities together, so
//! `L'` can approach `L` (the `random_aging` bench, 100 levels, shows it);
//! `L` is the number of distinct priorities, not of tasks. A `pop_best`
//! whose best task does not fit takes the first [`LOOKAHEAD`] live tasks of
//! every level and ranks them: `O(L * LOOKAHEAD * log(L * LOOKAHEAD) + log
//! n)`, plus the stale deque entries it passes over (left by removals from
//! the middle of a level; each is dropped when it reaches its level's
//! front). `outranked_by` is `O(capacity)`: it is for diagnostics. Seed 002
//! scans the whole ready set, `O(n)`, per dispatch.
//!
//! # Resource fit, look-ahead and starvation
//!
//! `pop_best(now, fits)` offers candidates to `fits` in rank order: the best
//! task first (the only call when it fits, so the one-level fast path stays
//! a head check), then, if it does not fit, the next `LOOKAHEAD - 1` tasks
//! of the whole set in rank order, tasks queued behind a level's head
//! included. Rank order within a level is the level's order, so these are
//! among the first `LOOKAHEAD` tasks of each level. If a later candidate
//! fits, it is dispatched and the best task is *bypassed*: a priority level
//! is FIFO only up to that, a big task can be overtaken by a smaller one of
//! the same (or a lower) priority, a bounded number of times. After
//! [`MAX_BYPASS`] bypasses of the same task while it was the best one
//! (counted per task, so that two tasks taking turns as the best do not
//! reset each other's count), `pop_best` offers only that task while it
//! is the best, until it is dispatched or removed, so the capacity it waits
//! for drains to it (CPU demands above the cap are refused at submission,
//! and the soft caps' escape rule admits any task once no running task
//! holds any of the resource, so it then fits as soon as the running
//! tasks finish). Why look behind the
//! heads at all: a ready task behind a head that does not fit may be the
//! one a running task waits for (a subflow it added and awaits); offering
//! only heads would let that wait hold the budget the head needs forever.
//!
//! The limit that remains: the reservation assumes that running tasks
//! finish on their own. A running task that waits in its body for other
//! tasks of its own graph while it holds budget can still deadlock while a
//! bigger task waits for the budget it holds: once that task has been
//! bypassed [`MAX_BYPASS`] times nothing else is offered, so a parent that
//! needs more tasks than that dispatched meanwhile waits forever; and a
//! needed task ranked deeper than [`LOOKAHEAD`] behind tasks that do not
//! fit is not offered either. Give such a waiting parent no demand
//! (`Demand::new().cpu_slots(0)`), or do not wait on the graph from inside
//! a task that holds budget (add the follow-up work as its dependents).
//!
//! Aging also reorders the set with no event at all: among tasks already
//! waiting, time alone can make another task the best one (for part of
//! every interval, or for good), or bring one into the look-ahead, and it
//! may fit where the tasks offered before did not. The set does not see
//! time pass, so a caller whose `pop_best` found nothing while tasks are
//! left asks [`ReadySet::next_reorder`] when the offer may next differ (the
//! next step of priority of a task that can be offered) and tries again
//! then. It says `None` when no task that can be offered fits (then only
//! freed capacity, an event, can help), with one level (whose order never
//! changes) or with aging off. The run core arms a timer for it (see
//! "Runners" in `core.rs`).
//!
//! Aging makes every task the best one eventually: let `k = ceil((ph - p) /
//! B)` for a task `t` of base `p` ready since `r`, and any task `u` of base
//! `<= ph` that became ready at or after `r + k * I`. Then `floor((now - r) /
//! I) >= floor((now - r_u) / I) + k`, so `f(t) >= f(u)`, and on a tie `t`
//! wins by its earlier `r`. So `t` only waits for the finitely many tasks that
//! were ready before `r + k * I`; with one slot and at most one arrival per
//! dispatch it is dispatched at the first dispatch at or after `r + k * I`
//! (the unit test `low_priority_task_runs_within_the_aging_bound` checks
//! exactly that).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use crate::graph::TaskId;

/// How many candidates [`ReadySet::pop_best`] offers to its `fits` closure
/// per call, best first (any ready task, not only the first of each
/// priority level).
pub const LOOKAHEAD: usize = 8;

/// How many times the best ready task may be bypassed by a worse one that
/// fits before [`ReadySet::pop_best`] offers nothing but the best task.
pub const MAX_BYPASS: u32 = 64;

/// How many steps of the offer [`ReadySet::first_start`] and
/// [`ReadySet::starts_for`] look at, at most: each costs a
/// [`ReadySet::peek_best`], under the run's lock, and a set with many
/// priority levels steps as often in an interval as it has levels (1,000
/// levels cost ~100 ms a scan). Past it they answer as if time alone
/// started nothing there (so a chain of dispatch timers stops, see
/// `core.rs`), which may pass over a window further on, or, for
/// [`ReadySet::starts_for`], one with more steps in it than that.
const MAX_SCAN_STEPS: usize = 32;

/// Where an out-of-order task sits in its level's order.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    ready_since: Instant,
    id: TaskId,
    node: u32,
}

/// An in-order task in its level's deque; its id is in its slot, where
/// `seq` tells whether the entry is still live.
struct Entry {
    ready_since: Instant,
    node: u32,
    seq: u64,
}

/// A ready task's bookkeeping, indexed by node.
struct Slot {
    base: i32,
    ready_since: Instant,
    id: TaskId,
    /// Tells a deque entry of this insert from stale ones of earlier inserts.
    seq: u64,
    /// Whether the task sits in its level's `late` set rather than the deque.
    late: bool,
    /// How many times the task was bypassed while it was the best one
    /// (see [`MAX_BYPASS`]). Per task: with one count for the set, two
    /// tasks taking turns as the best (close priorities, aging) reset each
    /// other's, and neither was ever reserved for.
    bypassed: u32,
}

impl Slot {
    fn key(&self, node: u32) -> Key {
        Key {
            ready_since: self.ready_since,
            id: self.id.clone(),
            node,
        }
    }
}

/// `(K, base, node)` of a level's head: `heads` is ordered by `K`, and
/// carries the node so that the scan needs no level lookup.
type HeadKey = (i128, i32, u32);

/// One base priority's queue.
#[derive(Default)]
struct Level {
    /// In-order inserts, possibly with stale entries (never at the front).
    fifo: VecDeque<Entry>,
    /// Out-of-order inserts.
    late: BTreeSet<Key>,
    /// Tasks of this level in the set.
    live: usize,
    /// This level's entry in `ReadySet::heads`: `(K, base, node)` of its
    /// head; meaningful while two or more levels are in use.
    head_key: HeadKey,
}

/// The id of a live deque entry.
fn id_in<'a>(slots: &'a [Option<Slot>], e: &Entry) -> Option<&'a TaskId> {
    match &slots[e.node as usize] {
        Some(slot) if slot.seq == e.seq => Some(&slot.id),
        _ => None,
    }
}

impl Level {
    /// The head: `(ready_since, node)` of the first task in the level's order.
    fn head(&self, slots: &[Option<Slot>]) -> Option<(Instant, u32)> {
        match (self.fifo.front(), self.late.first()) {
            (Some(f), Some(l)) => {
                let f_id = id_in(slots, f).expect("the deque front is live");
                let late_first = (l.ready_since, &l.id, l.node) < (f.ready_since, f_id, f.node);
                Some(if late_first {
                    (l.ready_since, l.node)
                } else {
                    (f.ready_since, f.node)
                })
            }
            (Some(f), None) => Some((f.ready_since, f.node)),
            (None, Some(l)) => Some((l.ready_since, l.node)),
            (None, None) => None,
        }
    }

    /// The level's live tasks in its order (the deque's live entries merged
    /// with `late`), as nodes; stale deque entries are skipped.
    fn in_order<'a>(&'a self, slots: &'a [Option<Slot>]) -> impl Iterator<Item = u32> + 'a {
        let mut fifo = self
            .fifo
            .iter()
            .filter_map(move |e| id_in(slots, e).map(|id| (e.ready_since, id, e.node)))
            .peekable();
        let mut late = self
            .late
            .iter()
            .map(|k| (k.ready_since, &k.id, k.node))
            .peekable();
        std::iter::from_fn(move || {
            let late_first = match (fifo.peek(), late.peek()) {
                (Some(f), Some(l)) => l < f,
                (None, Some(_)) => true,
                (_, None) => false,
            };
            let next = if late_first { late.next() } else { fifo.next() };
            next.map(|(_, _, node)| node)
        })
    }

    /// Files the task; returns whether it went to `late`. A task ready at
    /// the same instant as a stale back entry goes to `late` too (the stale
    /// entry's id is gone, so the order cannot be checked).
    fn push(&mut self, slots: &[Option<Slot>], node: u32, seq: u64) -> bool {
        self.live += 1;
        let slot = slots[node as usize].as_ref().expect("slot written");
        let in_order = match self.fifo.back() {
            None => true,
            Some(back) => match back.ready_since.cmp(&slot.ready_since) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => {
                    id_in(slots, back).is_some_and(|id| (id, back.node) < (&slot.id, node))
                }
            },
        };
        if in_order {
            self.fifo.push_back(Entry {
                ready_since: slot.ready_since,
                node,
                seq,
            });
        } else {
            self.late.insert(slot.key(node));
        }
        !in_order
    }
}

/// The set of Ready tasks of a graph run, keyed by node index, that hands
/// out the next task to dispatch by priority with aging in `O(log n)`.
///
/// The documentation of its source file, `src/graph/policy/ready.rs`,
/// gives the algorithm, the complexity and the proof that it picks exactly
/// what
/// `base + floor(wait / interval) * boost` (ties: earlier ready time, then
/// smaller id) picks.
///
/// ```
/// use std::time::{Duration, Instant};
/// use fastexec::graph::{ReadySet, TaskId};
///
/// let mut ready = ReadySet::new(Duration::from_millis(100), 1);
/// let t0 = Instant::now();
/// ready.insert(0, TaskId::from("low"), 0, t0);
/// ready.insert(1, TaskId::from("high"), 5, t0 + Duration::from_millis(10));
/// // Just after, the high-priority task goes first...
/// assert_eq!(ready.pop_best(t0 + Duration::from_millis(20), |_| true), Some(1));
/// // ...but when another one arrives 500 ms later, waiting has lifted "low"
/// // from 0 to 5, and it was ready first.
/// let later = t0 + Duration::from_millis(500);
/// ready.insert(2, TaskId::from("high-2"), 5, later);
/// assert_eq!(ready.pop_best(later, |_| true), Some(0));
/// assert_eq!(ready.pop_best(later, |_| true), Some(2));
/// ```
pub struct ReadySet {
    aging: Aging,
    slots: Vec<Option<Slot>>,
    levels: BTreeMap<i32, Level>,
    /// `(K, base)` of every level's head; kept only while `levels.len() >= 2`.
    heads: BTreeSet<HeadKey>,
    len: usize,
    next_seq: u64,
    /// The latest `ready_since` inserted: `now` is raised to it.
    latest: Option<Instant>,
    /// How many times [`ReadySet::peek_best`] ran: what a slow-path scan cost.
    #[cfg(test)]
    peeks: std::cell::Cell<usize>,
}

impl std::fmt::Debug for ReadySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadySet")
            .field("len", &self.len)
            .field("levels", &self.levels.len())
            .finish_non_exhaustive()
    }
}

/// The aging parameters, and the instant time is measured from.
#[derive(Clone, Copy)]
struct Aging {
    /// `I` in nanoseconds, at least 1.
    interval_ns: u64,
    /// `B`.
    boost: u32,
    epoch: Instant,
}

/// A candidate's exact rank: compare with [`Rank::beats`].
struct Rank<'a> {
    f: i128,
    ready_since: Instant,
    id: &'a TaskId,
    node: u32,
}

impl ReadySet {
    /// An empty set whose tasks gain `aging_boost` priority per
    /// `aging_interval` waited (a zero interval counts as 1 ns; a zero
    /// boost turns aging off).
    pub fn new(aging_interval: Duration, aging_boost: u32) -> ReadySet {
        let interval_ns = aging_interval.as_nanos().clamp(1, u64::MAX as u128) as u64;
        ReadySet {
            aging: Aging {
                interval_ns,
                boost: aging_boost,
                epoch: Instant::now(),
            },
            slots: Vec::new(),
            levels: BTreeMap::new(),
            heads: BTreeSet::new(),
            len: 0,
            next_seq: 0,
            latest: None,
            #[cfg(test)]
            peeks: std::cell::Cell::new(0),
        }
    }

    /// How many times [`peek_best`](Self::peek_best) ran so far.
    #[cfg(test)]
    pub(crate) fn peeks(&self) -> usize {
        self.peeks.get()
    }

    /// Makes room for nodes `0..nodes` without reallocating (the core calls
    /// it when a batch of tasks is added; the set also grows on demand).
    pub fn reserve_nodes(&mut self, nodes: usize) {
        if nodes > self.slots.len() {
            self.slots.resize_with(nodes, || None);
        }
    }

    /// For how many nodes the set has made room (see
    /// [`reserve_nodes`](Self::reserve_nodes)).
    #[cfg(test)]
    pub(crate) fn room(&self) -> usize {
        self.slots.len()
    }

    /// How many tasks are in the set.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `node` is in the set.
    pub fn contains(&self, node: u32) -> bool {
        matches!(self.slots.get(node as usize), Some(Some(_)))
    }

    /// Adds the task at `node` (replacing an entry for the same node).
    /// `ready_since` is when it became ready; a resumed task passes its old
    /// one moved on by the time it was paused, so that it keeps the
    /// priority it had aged to.
    pub fn insert(&mut self, node: u32, id: TaskId, base_priority: i32, ready_since: Instant) {
        self.remove(node);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.latest = Some(self.latest.map_or(ready_since, |l| l.max(ready_since)));
        let idx = node as usize;
        if self.slots.len() <= idx {
            self.slots.resize_with(idx + 1, || None);
        }
        self.slots[idx] = Some(Slot {
            base: base_priority,
            ready_since,
            id,
            seq,
            late: false,
            bypassed: 0,
        });
        if self.file(base_priority, node, seq) {
            self.slots[idx].as_mut().expect("just written").late = true;
        }
        self.len += 1;
    }

    /// Puts `key` in its level, keeping the heads up to date (only while
    /// two or more levels are in use); returns whether the key went to the
    /// level's `late` set.
    fn file(&mut self, base: i32, node: u32, seq: u64) -> bool {
        let aging = self.aging;
        let slots = &self.slots;
        let levels_before = self.levels.len();
        let level = self.levels.entry(base).or_default();
        let created = level.live == 0;
        let late = level.push(slots, node, seq);
        let levels = levels_before + usize::from(created);
        if levels < 2 {
            return late;
        }
        if created && levels == 2 {
            // The second level: start tracking heads.
            for (&b, l) in self.levels.iter_mut() {
                l.head_key = aging.head_key(b, l, slots);
            }
            self.heads = self.levels.values().map(|l| l.head_key).collect();
            return late;
        }
        let new = aging.head_key(base, level, slots);
        let old = std::mem::replace(&mut level.head_key, new);
        if created {
            self.heads.insert(new);
        } else if new != old {
            self.heads.remove(&old);
            self.heads.insert(new);
        }
        late
    }

    /// Takes `node` out of the set (it was paused or cancelled while ready).
    /// Returns whether it was there.
    pub fn remove(&mut self, node: u32) -> bool {
        let Some(slot) = self.slots.get_mut(node as usize).and_then(Option::take) else {
            return false;
        };
        let level = self
            .levels
            .get_mut(&slot.base)
            .expect("level of a ready task");
        if slot.late {
            level.late.remove(&Key {
                ready_since: slot.ready_since,
                id: slot.id,
                node,
            });
        } else if level
            .fifo
            .front()
            .is_some_and(|e| e.node == node && e.seq == slot.seq)
        {
            level.fifo.pop_front();
        }
        self.after_take(slot.base);
        true
    }

    /// Bookkeeping after a task left level `base`.
    fn after_take(&mut self, base: i32) {
        self.len -= 1;
        let levels = self.levels.len();
        let level = self.levels.get_mut(&base).expect("level of a ready task");
        level.live -= 1;
        if level.live == 0 {
            let old = level.head_key;
            self.levels.remove(&base);
            if levels == 2 {
                self.heads.clear();
            } else if levels > 2 {
                self.heads.remove(&old);
            }
            return;
        }
        let slots = &self.slots;
        while let Some(front) = level.fifo.front() {
            if id_in(slots, front).is_some() {
                break;
            }
            level.fifo.pop_front();
        }
        if levels >= 2 {
            let new = self.aging.head_key(base, level, slots);
            let old = std::mem::replace(&mut level.head_key, new);
            if new != old {
                self.heads.remove(&old);
                self.heads.insert(new);
            }
        }
    }

    /// Removes and returns the ready task to dispatch at `now`: the best by
    /// the aging rule among those `fits` accepts, looking at most
    /// [`LOOKAHEAD`] candidates deep in rank order, tasks behind a level's
    /// head included (see the module docs for the bypass limit). `None` if
    /// the set is empty or nothing offered fits.
    pub fn pop_best(&mut self, now: Instant, mut fits: impl FnMut(u32) -> bool) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        if self.heads.is_empty() {
            // One level: its head is the best task.
            let (&base, level) = self.levels.iter().next().expect("non-empty set");
            let (_, node) = level.head(&self.slots).expect("live level has a head");
            if fits(node) {
                return Some(self.take_head(base, node));
            }
            return self.pop_bypassing(now, node, fits);
        }
        let now = self.latest.map_or(now, |l| now.max(l));
        let (base, node) = {
            let (base, rank) = self.best_head(now);
            (base, rank.node)
        };
        if fits(node) {
            return Some(self.take_head(base, node));
        }
        self.pop_bypassing(now, node, fits)
    }

    /// The best head (two or more levels): `(base, its rank)`.
    fn best_head(&self, now: Instant) -> (i32, Rank<'_>) {
        let Aging {
            interval_ns,
            boost,
            epoch,
        } = self.aging;
        let now_b = ns_since(epoch, now) * i128::from(boost);
        let mut best: Option<(i32, Rank<'_>)> = None;
        for &(k, base, head) in self.heads.iter().rev() {
            if let Some((_, b)) = &best {
                if k + now_b < b.f * i128::from(interval_ns) {
                    break; // c < f*: no unvisited head can win or tie
                }
            }
            let rank = self.rank(head, now);
            if best.as_ref().map_or(true, |(_, b)| rank.beats(b)) {
                best = Some((base, rank));
            }
        }
        best.expect("non-empty set")
    }

    /// The slow path of `pop_best`: the best task, `top`, does not fit.
    /// Offers the next `LOOKAHEAD - 1` tasks in rank order, unless `top`
    /// has been bypassed `MAX_BYPASS` times already.
    fn pop_bypassing(
        &mut self,
        now: Instant,
        top: u32,
        mut fits: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        if self.slot(top).bypassed >= MAX_BYPASS {
            return None; // reserve capacity for the best task
        }
        let now = self.latest.map_or(now, |l| now.max(l));
        let node = self.runners_up(top, now).into_iter().find(|&n| fits(n))?;
        self.remove(node);
        self.slots[top as usize]
            .as_mut()
            .expect("the best task stays in the set")
            .bypassed += 1;
        Some(node)
    }

    /// The `LOOKAHEAD - 1` tasks ranked right after `top` (the best task),
    /// best first. Level order is rank order within a level, so the global
    /// ranking's first `LOOKAHEAD` are among the first `LOOKAHEAD` of each
    /// level.
    fn runners_up(&self, top: u32, now: Instant) -> Vec<u32> {
        let mut ranked: Vec<Rank<'_>> = self
            .levels
            .values()
            .flat_map(|level| level.in_order(&self.slots).take(LOOKAHEAD))
            .map(|node| self.rank(node, now))
            .collect();
        ranked.sort_by(Rank::order);
        ranked
            .iter()
            .map(|r| r.node)
            .filter(|&n| n != top)
            .take(LOOKAHEAD - 1)
            .collect()
    }

    /// Removes the head `node` of level `base`.
    fn take_head(&mut self, base: i32, node: u32) -> u32 {
        let slot = self.slots[node as usize]
            .take()
            .expect("head is in the set");
        let level = self.levels.get_mut(&base).expect("level of a ready task");
        if slot.late {
            level.late.pop_first();
        } else {
            level.fifo.pop_front();
        }
        self.after_take(base);
        node
    }

    /// When aging may next change what [`pop_best`](Self::pop_best) offers,
    /// for a caller whose `pop_best(now, fits)` just returned `None` with
    /// tasks left: the first instant after `now` at which a task among the
    /// first [`LOOKAHEAD`] of each level (the only ones that can be
    /// offered, see the module docs) gains a step of priority. `None` when
    /// time alone surely cannot start anything: aging is off, a single
    /// level is in use (its order never changes), or none of those tasks
    /// fits. `Some` does not promise a start then: a task that fits may
    /// stay behind [`LOOKAHEAD`] that always outrank it (the caller bounds
    /// how long it keeps asking: `core.rs`, "Runners").
    /// `O(L * LOOKAHEAD)` plus the stale deque entries passed over: for the
    /// slow path.
    pub fn next_reorder(&self, now: Instant, mut fits: impl FnMut(u32) -> bool) -> Option<Instant> {
        if self.aging.boost == 0 || self.levels.len() < 2 {
            return None;
        }
        let now = self.latest.map_or(now, |l| now.max(l));
        let offerable = self
            .levels
            .values()
            .flat_map(|level| level.in_order(&self.slots).take(LOOKAHEAD));
        let mut fitting = false;
        let mut next: Option<Instant> = None;
        for node in offerable {
            fitting = fitting || fits(node);
            let step = self.next_step(self.slot(node).ready_since, now);
            next = match (next, step) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        next.filter(|_| fitting)
    }

    /// The task [`pop_best`](Self::pop_best)`(now, fits)` would take,
    /// without taking it. For the slow path: `O(L * LOOKAHEAD * log(L *
    /// LOOKAHEAD))`.
    pub(crate) fn peek_best(&self, now: Instant, mut fits: impl FnMut(u32) -> bool) -> Option<u32> {
        #[cfg(test)]
        self.peeks.set(self.peeks.get() + 1);
        if self.len == 0 {
            return None;
        }
        let now = self.latest.map_or(now, |l| now.max(l));
        let top = if self.heads.is_empty() {
            let level = self.levels.values().next().expect("non-empty set");
            level.head(&self.slots).expect("live level has a head").1
        } else {
            self.best_head(now).1.node
        };
        if fits(top) {
            return Some(top);
        }
        if self.slot(top).bypassed >= MAX_BYPASS {
            return None;
        }
        self.runners_up(top, now).into_iter().find(|&n| fits(n))
    }

    /// The first instant from `from` to `until` at which
    /// [`pop_best`](Self::pop_best) would take a task if nothing but time
    /// changed meanwhile: `from`, or a step of a task that can be offered
    /// (the offer changes at those only, see
    /// [`next_reorder`](Self::next_reorder)). `None` if there is none. The
    /// offer repeats every aging interval, so `None` over a whole interval
    /// means time alone never starts a task. One
    /// [`peek_best`](Self::peek_best) per step passed, for at most
    /// [`MAX_SCAN_STEPS`] steps (then `None`): for the slow path.
    pub(crate) fn first_start(
        &self,
        from: Instant,
        until: Instant,
        mut fits: impl FnMut(u32) -> bool,
    ) -> Option<Instant> {
        let mut at = from;
        for _ in 0..MAX_SCAN_STEPS {
            if at > until {
                break;
            }
            if self.peek_best(at, &mut fits).is_some() {
                return Some(at);
            }
            at = self.next_reorder(at, &mut fits)?;
        }
        None
    }

    /// Whether, if nothing but time changed, [`pop_best`](Self::pop_best)
    /// would take a task throughout some stretch (a *window*) at least
    /// `span` long that ends after `from` and begins by `until`, looking
    /// back no further than `from - span`, nor than the last task's ready
    /// time (a window that began earlier is taken to begin there): the
    /// first such window's beginning, or `None`. The offer repeats every
    /// aging interval from there on, and so does the window. One
    /// [`peek_best`](Self::peek_best) per step from `from - span` to
    /// `until`, for at most [`MAX_SCAN_STEPS`] steps (then `None`): for
    /// the slow path.
    pub(crate) fn starts_for(
        &self,
        from: Instant,
        until: Instant,
        span: Duration,
        mut fits: impl FnMut(u32) -> bool,
    ) -> Option<Instant> {
        let at = from.checked_sub(span).unwrap_or(from);
        let mut at = self.latest.map_or(at, |l| at.max(l));
        let mut began: Option<Instant> = None;
        for _ in 0..MAX_SCAN_STEPS {
            if at > until {
                break;
            }
            let next = self.next_reorder(at, &mut fits);
            if self.peek_best(at, &mut fits).is_some() {
                let began = *began.get_or_insert(at);
                let lasts = next.map_or(true, |end| end > from && end - began >= span);
                if lasts {
                    return Some(began);
                }
            } else {
                began = None;
            }
            match next {
                Some(next) => at = next,
                None => break,
            }
        }
        None
    }

    /// The first instant after `now` at which a task ready since
    /// `ready_since` (at or before `now`) gains a step of priority: the
    /// next multiple of the interval since it became ready. `None` past
    /// what an `Instant` holds.
    fn next_step(&self, ready_since: Instant, now: Instant) -> Option<Instant> {
        let interval = self.aging.interval_ns;
        let wait = now.saturating_duration_since(ready_since).as_nanos();
        let steps = u64::try_from(wait).ok()? / interval + 1;
        ready_since.checked_add(Duration::from_nanos(steps.checked_mul(interval)?))
    }

    /// How many tasks in the set rank above `node` at `now` (0 if `node` is
    /// not in the set). `O(capacity)`: for diagnostics.
    pub fn outranked_by(&self, node: u32, now: Instant) -> usize {
        let Some(Some(me)) = self.slots.get(node as usize) else {
            return 0;
        };
        let now = self.latest.map_or(now, |l| now.max(l));
        let me = self.rank_of_slot(node, me, now);
        (0..self.slots.len() as u32)
            .filter(|&n| n != node)
            .filter_map(|n| self.slots[n as usize].as_ref().map(|s| (n, s)))
            .filter(|&(n, s)| self.rank_of_slot(n, s, now).beats(&me))
            .count()
    }

    fn slot(&self, node: u32) -> &Slot {
        self.slots[node as usize].as_ref().expect("node in the set")
    }

    fn rank(&self, node: u32, now: Instant) -> Rank<'_> {
        self.rank_of_slot(node, self.slot(node), now)
    }

    fn rank_of_slot<'a>(&self, node: u32, slot: &'a Slot, now: Instant) -> Rank<'a> {
        Rank {
            f: self.effective(slot.base, slot.ready_since, now),
            ready_since: slot.ready_since,
            id: &slot.id,
            node,
        }
    }

    /// The exact effective priority, `base + floor(wait / I) * B`.
    fn effective(&self, base: i32, ready_since: Instant, now: Instant) -> i128 {
        let wait = now.saturating_duration_since(ready_since).as_nanos();
        // u64 division: an i128 one is a slow library call. 2^64 ns is 584 years.
        let wait = u64::try_from(wait).unwrap_or(u64::MAX);
        let steps = wait / self.aging.interval_ns;
        i128::from(base) + i128::from(steps) * i128::from(self.aging.boost)
    }
}

impl Rank<'_> {
    /// `Less` if `self` is dispatched before `other` (a total order: dispatch
    /// order, best first).
    fn order(&self, other: &Rank<'_>) -> Ordering {
        other
            .f
            .cmp(&self.f)
            .then_with(|| self.ready_since.cmp(&other.ready_since))
            .then_with(|| self.id.cmp(other.id))
            .then_with(|| self.node.cmp(&other.node))
    }

    /// Whether `self` is dispatched before `other`.
    fn beats(&self, other: &Rank<'_>) -> bool {
        self.order(other) == Ordering::Less
    }
}

/// Signed nanoseconds from `epoch` to `t`.
fn ns_since(epoch: Instant, t: Instant) -> i128 {
    match t.checked_duration_since(epoch) {
        Some(d) => d.as_nanos() as i128,
        None => -((epoch - t).as_nanos() as i128),
    }
}

impl Aging {
    /// The [`HeadKey`] of `level` (live) of priority `base`.
    fn head_key(self, base: i32, level: &Level, slots: &[Option<Slot>]) -> HeadKey {
        let (ready_since, node) = level.head(slots).expect("live level has a head");
        (self.k_of(base, ready_since), base, node)
    }

    /// `K = base * I - r * B`: the continuous priority of `head` scaled by
    /// `I`, minus the `now * B` every task shares.
    fn k_of(self, base: i32, ready_since: Instant) -> i128 {
        i128::from(base) * i128::from(self.interval_ns)
            - ns_since(self.epoch, ready_since) * i128::from(self.boost)
    }
}

#[cfg(test)]
mod tests;
