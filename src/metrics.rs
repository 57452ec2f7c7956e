//! Executor metrics: counters kept by the workers, read by anyone.
//!
//! # Protocol
//!
//! Every worker owns one `WorkerCounters` block, alone on its cache line
//! (128-byte aligned, so neither it nor its neighbour prefetcher shares the
//! line with anything another thread writes). Only that worker writes it,
//! with a `Relaxed` load and a `Relaxed` store (no read-modify-write, so no
//! locked instruction on the hot path); readers load each field `Relaxed`
//! and sum over the workers. A count read by [`Executor::metrics`] is
//! therefore a recent value, not a consistent snapshot across fields: it
//! never goes backwards and each field is exact once the executor is idle.
//!
//! Work done by threads that are not workers (spawns from outside, tasks
//! polled by `block_on` under the simple scheduler) goes to one shared block
//! with `fetch_add`, except the spawns of the first thread to spawn from
//! outside (in most programs the only one): that thread claims an
//! `OwnedCounter` of the block for good and counts there, as a worker
//! does, without a locked instruction per spawn.
//!
//! The ready-to-running latency histogram is opt-in
//! ([`Builder::latency_histogram`](crate::Builder::latency_histogram)): it
//! needs a clock read when a task is scheduled and another when its poll
//! starts, a per-task stamp, and a shared `fetch_add` per poll.

use std::time::{Duration, Instant};

use crate::executor::Executor;
use crate::sync::{AtomicU64, Ordering::Relaxed};

/// Aligns `T` to 128 bytes so that it has its cache line (and the adjacent
/// one, which x86 prefetches in pairs) to itself.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct CachePadded<T>(pub(crate) T);

/// A counter written by one thread only.
pub(crate) struct OwnedCounter(AtomicU64);

impl Default for OwnedCounter {
    fn default() -> Self {
        OwnedCounter(AtomicU64::new(0))
    }
}

impl OwnedCounter {
    /// Adds `n`. Only the owning thread may call this: a load and a store,
    /// not a read-modify-write, so a second writer would lose counts.
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        // Relaxed: a statistic; readers need no ordering with anything.
        self.0.store(self.0.load(Relaxed).wrapping_add(n), Relaxed);
    }

    fn get(&self) -> u64 {
        // Relaxed: see `add`.
        self.0.load(Relaxed)
    }
}

/// One worker's counters; written by that worker only.
#[derive(Default)]
pub(crate) struct WorkerCounters {
    pub(crate) spawned: OwnedCounter,
    pub(crate) polls: OwnedCounter,
    pub(crate) steals: OwnedCounter,
    pub(crate) parks: OwnedCounter,
    pub(crate) core_offers: OwnedCounter,
}

/// Counters of threads that are not workers, shared among them.
pub(crate) struct ExternalCounters {
    /// The [`thread_key`](crate::context::thread_key) of the thread that
    /// owns `owner_spawned`, or 0 until some thread spawns from outside.
    /// Set once, never changed.
    owner: AtomicU64,
    /// Spawns by the owner; only the owner writes it.
    owner_spawned: OwnedCounter,
    /// Spawns by every other thread that is not a worker.
    spawned: AtomicU64,
    polls: AtomicU64,
}

impl Default for ExternalCounters {
    fn default() -> Self {
        ExternalCounters {
            owner: AtomicU64::new(0),
            owner_spawned: OwnedCounter::default(),
            spawned: AtomicU64::new(0),
            polls: AtomicU64::new(0),
        }
    }
}

impl ExternalCounters {
    /// Counts a spawn from a thread that is not a worker: on the owner's
    /// counter if this thread is, or becomes, the owner (a plain load and
    /// store: a `lock xadd` was ~5 ns of a ~35 ns spawn from outside);
    /// otherwise with a `fetch_add` on the shared one.
    #[inline]
    pub(crate) fn count_spawn(&self) {
        self.count_spawns(1);
    }

    /// Counts `n` spawns at once (a chunk of `spawn_many`), as
    /// [`count_spawn`](Self::count_spawn) counts one.
    #[inline]
    pub(crate) fn count_spawns(&self, n: u64) {
        let me = crate::context::thread_key();
        // Relaxed: the owner only ever compares its own key, which its own
        // CAS wrote (coherence lets it read nothing older); another thread
        // never reads its key here, whatever it sees. A stale 0 only sends
        // this thread to the CAS, which then fails.
        let owner = self.owner.load(Relaxed);
        let owns = owner == me
            || (owner == 0 && self.owner.compare_exchange(0, me, Relaxed, Relaxed).is_ok());
        if owns {
            self.owner_spawned.add(n);
        } else {
            // Relaxed: a statistic.
            self.spawned.fetch_add(n, Relaxed);
        }
    }

    /// Spawns counted from threads that are not workers.
    pub(crate) fn spawned(&self) -> u64 {
        // Relaxed: a statistic.
        self.owner_spawned.get() + self.spawned.load(Relaxed)
    }

    pub(crate) fn count_poll(&self) {
        // Relaxed: a statistic.
        self.polls.fetch_add(1, Relaxed);
    }
}

/// All of an executor's counters.
pub(crate) struct Counters {
    workers: Box<[std::sync::Arc<CachePadded<WorkerCounters>>]>,
    pub(crate) external: CachePadded<ExternalCounters>,
}

impl Counters {
    pub(crate) fn new(workers: usize) -> Self {
        Counters {
            workers: (0..workers).map(|_| Default::default()).collect(),
            external: Default::default(),
        }
    }

    /// Counts a spawn, on the spawner's worker if it has one.
    #[inline]
    pub(crate) fn count_spawn(&self, worker: Option<&crate::worker::Worker>) {
        match worker {
            Some(worker) => worker.counters().spawned.add(1),
            None => self.external.0.count_spawn(),
        }
    }

    /// Counts `n` spawns at once, on the spawner's worker if it has one.
    #[inline]
    pub(crate) fn count_spawns(&self, worker: Option<&crate::worker::Worker>, n: usize) {
        match worker {
            Some(worker) => worker.counters().spawned.add(n as u64),
            None => self.external.0.count_spawns(n as u64),
        }
    }

    /// The block that worker `index` writes.
    pub(crate) fn worker(&self, index: usize) -> std::sync::Arc<CachePadded<WorkerCounters>> {
        self.workers[index].clone()
    }

    fn sum(&self, field: impl Fn(&WorkerCounters) -> &OwnedCounter) -> u64 {
        self.workers.iter().map(|w| field(&w.0).get()).sum()
    }
}

/// Number of buckets of [`LatencyHistogram`]: bucket `i` counts latencies
/// in `[2^i, 2^(i+1))` nanoseconds (bucket 0 also counts 0 ns); the last
/// one everything from 2^31 ns (about 2.15 s) up.
pub const LATENCY_BUCKETS: usize = 32;

/// The shared histogram of ready-to-running latencies.
pub(crate) struct LatencyRecorder {
    epoch: Instant,
    buckets: [AtomicU64; LATENCY_BUCKETS],
}

impl LatencyRecorder {
    pub(crate) fn new() -> Self {
        LatencyRecorder {
            epoch: Instant::now(),
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Nanoseconds since this recorder was made, never 0 (0 means "no
    /// stamp" in [`Stamp`]).
    fn now(&self) -> u64 {
        (self.epoch.elapsed().as_nanos() as u64).max(1)
    }

    fn record(&self, nanos: u64) {
        let bucket = (63 - nanos.max(1).leading_zeros() as usize).min(LATENCY_BUCKETS - 1);
        // Relaxed: a statistic.
        self.buckets[bucket].fetch_add(1, Relaxed);
    }

    fn snapshot(&self) -> LatencyHistogram {
        LatencyHistogram {
            // Relaxed: a statistic.
            buckets: std::array::from_fn(|i| self.buckets[i].load(Relaxed)),
        }
    }
}

/// When a task was last scheduled, for its next poll to measure the wait.
pub(crate) struct Stamp {
    scheduled_at: AtomicU64,
    recorder: std::sync::Arc<LatencyRecorder>,
}

impl Stamp {
    pub(crate) fn new(recorder: std::sync::Arc<LatencyRecorder>) -> Self {
        Stamp {
            scheduled_at: AtomicU64::new(0),
            recorder,
        }
    }

    /// The task was just queued.
    pub(crate) fn scheduled(&self) {
        // Relaxed: the queue push that follows is a Release that the popping
        // worker acquires, which orders this store before its `polled`.
        self.scheduled_at.store(self.recorder.now(), Relaxed);
    }

    /// The task's poll starts: records the wait since `scheduled`, once.
    pub(crate) fn polled(&self) {
        // Relaxed: see `scheduled`.
        let at = self.scheduled_at.swap(0, Relaxed);
        if at != 0 {
            self.recorder.record(self.recorder.now().saturating_sub(at));
        }
    }
}

/// A histogram of ready-to-running latencies with log2 buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyHistogram {
    /// `buckets[i]` counts polls that started between `2^i` and
    /// `2^(i+1) - 1` nanoseconds after their task was queued (bucket 0 also
    /// counts 0 ns, the last bucket everything longer).
    pub buckets: [u64; LATENCY_BUCKETS],
}

impl LatencyHistogram {
    /// The number of latencies recorded.
    pub fn total(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// The lower bound of bucket `i`: 0 for bucket 0, else 2^`i` ns.
    /// `bucket_start(i + 1)` is bucket `i`'s upper bound (excluded), but
    /// for the last bucket, which has none. Past the buckets it goes on
    /// doubling, and is [`Duration::MAX`] from `i` = 64 on (2^64 ns is
    /// not a `u64`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use fastexec::metrics::{LatencyHistogram, LATENCY_BUCKETS};
    ///
    /// assert_eq!(LatencyHistogram::bucket_start(0), Duration::ZERO);
    /// assert_eq!(LatencyHistogram::bucket_start(10), Duration::from_nanos(1024));
    /// let last = LatencyHistogram::bucket_start(LATENCY_BUCKETS - 1);
    /// assert_eq!(last, Duration::from_nanos(1 << 31));
    /// assert_eq!(LatencyHistogram::bucket_start(64), Duration::MAX);
    /// ```
    pub fn bucket_start(i: usize) -> Duration {
        if i == 0 {
            return Duration::ZERO;
        }
        u32::try_from(i)
            .ok()
            .and_then(|shift| 1u64.checked_shl(shift))
            .map_or(Duration::MAX, Duration::from_nanos)
    }

    /// The lower bound of the bucket holding the `q`-quantile (`0.0..=1.0`)
    /// of the recorded latencies, or `None` if nothing was recorded.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        let bucket = self.buckets.iter().position(|&n| {
            seen += n;
            seen >= rank
        })?;
        Some(Self::bucket_start(bucket))
    }
}

/// A snapshot of an executor's counters and queues, from
/// [`Executor::metrics`].
///
/// Counters are totals since the executor started. Each field is read on
/// its own (`Relaxed`), so while tasks run the fields may disagree a little
/// with each other (e.g. `polls` may count a poll of a task whose spawn
/// `spawned` does not count yet); once the executor is idle they are exact.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Metrics {
    /// Tasks spawned onto the executor (every spawn path, including
    /// [`task::Builder`](crate::task::Builder); not `spawn_blocking`).
    pub spawned: u64,
    /// Runs of tasks: each poll of a task's future (a task that yields 10
    /// times is polled 11 times), and the one run that drops the future of
    /// a task aborted or cancelled while it waited (async-task queues it
    /// once more for that, and the executor cannot tell the two apart
    /// before the run). `block_on`'s own future is not counted.
    pub polls: u64,
    /// Tasks moved from one worker's ring to another's by stealing (0
    /// under the simple scheduler).
    pub steals: u64,
    /// Times a worker went to sleep for lack of work (work-stealing
    /// scheduler only).
    pub parks: u64,
    /// Times a worker gave its core to the operating system's scheduler
    /// (`sched_yield`) because it had polled nothing but a task that kept
    /// waking itself for a whole interval, with nothing else queued on it
    /// (work-stealing scheduler only; see `worker.rs`).
    pub core_offers: u64,
    /// Tasks queued in each worker's ring, by worker index (LIFO slots not
    /// included).
    pub worker_queue_depths: Vec<usize>,
    /// Tasks posted from outside the workers and not yet taken by one: in
    /// the global injector and in the ring of the first outside thread that
    /// posted (the executor's module docs). The injector also holds the
    /// tasks a worker whose ring had no room for waiting work requeued
    /// there (`worker.rs`, "A full ring"), counted here too.
    pub injector_depth: usize,
    /// Tasks queued with [`Priority::High`](crate::Priority) and
    /// [`Priority::Low`](crate::Priority), in that order.
    pub priority_queue_depths: (usize, usize),
    /// Ready tasks of the simple scheduler (0 under work stealing).
    pub simple_ready_depth: usize,
    /// Ready-to-running latencies, if
    /// [`Builder::latency_histogram`](crate::Builder::latency_histogram) was
    /// turned on: one per poll of a future, so once the executor is idle
    /// their total is `polls` less the runs that only dropped an aborted
    /// or cancelled task's future.
    pub latency: Option<LatencyHistogram>,
}

impl Executor {
    /// The executor's counters and queue depths, at any time, from any
    /// thread; cheap (it reads one cache line per worker and the queue
    /// lengths). See [`Metrics`] for what each field counts.
    ///
    /// ```
    /// let executor = fastexec::Executor::builder().threads(2).build().unwrap();
    /// executor.block_on(async {
    ///     for _ in 0..10 {
    ///         fastexec::spawn(async {}).detach();
    ///     }
    /// });
    /// let metrics = executor.metrics();
    /// assert!(metrics.spawned >= 10);
    /// assert!(metrics.polls >= 10);
    /// assert_eq!(metrics.worker_queue_depths.len(), 2);
    /// assert!(metrics.latency.is_none(), "opt-in");
    /// ```
    pub fn metrics(&self) -> Metrics {
        let shared = self.shared();
        let ext = &shared.ext;
        let counters = &ext.counters;
        let external = &counters.external.0;
        Metrics {
            // Relaxed: statistics.
            spawned: counters.sum(|w| &w.spawned) + external.spawned(),
            polls: counters.sum(|w| &w.polls) + external.polls.load(Relaxed),
            steals: counters.sum(|w| &w.steals),
            parks: counters.sum(|w| &w.parks),
            core_offers: counters.sum(|w| &w.core_offers),
            worker_queue_depths: shared.stealers().iter().map(|s| s.len()).collect(),
            injector_depth: shared.outside_len(),
            priority_queue_depths: ext.priority.depths(),
            simple_ready_depth: ext.simple.as_ref().map_or(0, |s| s.ready_len()),
            latency: ext.latency.as_ref().map(|r| r.snapshot()),
        }
    }
}
