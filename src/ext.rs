//! The executor's optional machinery (priorities, metrics, hooks, latency
//! histogram, simple scheduler), gathered in one field of the shared state
//! so the hot-path files only hold calls into it; and the [`Builder`]
//! options that configure it.

use std::sync::Arc;

use crate::executor::{Builder, EnvError, Executor};
use crate::hooks::{Hooks, TaskMeta};
use crate::metrics::{Counters, LatencyRecorder};
use crate::priority::PriorityQueues;
use crate::simple::{self, Scheduler, SimpleScheduler};

/// Builder settings for the machinery below.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExtConfig {
    hooks: Hooks,
    latency_histogram: bool,
    scheduler: Scheduler,
    seed: Option<u64>,
}

impl ExtConfig {
    /// Worker threads to start instead of the requested number, if the
    /// configuration fixes it.
    pub(crate) fn forced_workers(&self) -> Option<usize> {
        (self.scheduler == Scheduler::Simple).then_some(1)
    }

    /// Gives the simple scheduler `FASTEXEC_SEED` as its seed if the
    /// builder set none, so that the seed a run printed replays it however
    /// the executor was built. (A value that is not Unicode comes with its
    /// bad bytes replaced, and fails to parse, as in `Builder::from_env`.)
    pub(crate) fn seed_from_env_if_unset(&mut self) -> Result<(), crate::EnvError> {
        if self.scheduler == Scheduler::Simple && self.seed.is_none() {
            let lookup =
                |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
            self.seed = simple::seed_from_lookup(&lookup)?;
        }
        Ok(())
    }
}

/// One executor's optional machinery.
pub(crate) struct Extensions {
    /// Whether every spawn must take the decorated path (task hooks, the
    /// latency histogram or the simple scheduler). Fixed at build time.
    decorate: bool,
    pub(crate) hooks: Hooks,
    pub(crate) priority: PriorityQueues,
    pub(crate) counters: Counters,
    pub(crate) latency: Option<Arc<LatencyRecorder>>,
    pub(crate) simple: Option<Arc<SimpleScheduler>>,
}

impl Extensions {
    pub(crate) fn new(config: &ExtConfig, workers: usize) -> Self {
        let simple = (config.scheduler == Scheduler::Simple).then(|| {
            let seed = config.seed.unwrap_or_else(|| {
                let seed = simple::draw_seed();
                eprintln!(
                    "fastexec: simple scheduler seed {seed} (set {}={seed} to replay this run)",
                    simple::SEED_ENV
                );
                seed
            });
            Arc::new(SimpleScheduler::new(seed))
        });
        Extensions {
            decorate: config.hooks.on_tasks() || config.latency_histogram || simple.is_some(),
            hooks: config.hooks.clone(),
            priority: PriorityQueues::new(),
            counters: Counters::new(workers),
            latency: config
                .latency_histogram
                .then(|| Arc::new(LatencyRecorder::new())),
            simple,
        }
    }

    /// Whether the default spawn path must hand over to the decorated one.
    #[inline]
    pub(crate) fn decorates(&self) -> bool {
        self.decorate
    }

    /// Whether a queue of this module holds work (the last searcher's look).
    pub(crate) fn has_visible_work(&self) -> bool {
        self.priority.has_work()
    }

    /// A timer deadline moved earlier: the simple scheduler's waiters must
    /// re-arm (workers are woken by the caller).
    pub(crate) fn on_earlier_deadline(&self) {
        if let Some(simple) = &self.simple {
            simple.notify();
        }
    }

    /// Whether this thread is running one of this executor's tasks under
    /// the simple scheduler (see [`SimpleScheduler::runs_task_here`]);
    /// false under work stealing.
    pub(crate) fn runs_simple_task_here(&self) -> bool {
        self.simple.as_ref().is_some_and(|s| s.runs_task_here())
    }

    /// Shutdown, before the workers are joined: the simple worker returns.
    pub(crate) fn begin_shutdown(&self) {
        if let Some(simple) = &self.simple {
            simple.begin_shut_down();
        }
    }

    /// Shutdown, after the workers are joined: drop what is queued here
    /// now, leaving the queues open (a wake under way on another thread
    /// may still queue a task, which the next call drops).
    pub(crate) fn drain_queued(&self) {
        self.priority.drain();
        if let Some(simple) = &self.simple {
            simple.shut_down();
        }
    }

    /// Shutdown, after the workers are joined: drop what is queued here.
    pub(crate) fn drop_remaining_tasks(&self) {
        self.priority.close_and_drain();
        if let Some(simple) = &self.simple {
            simple.shut_down();
        }
    }
}

impl Builder {
    /// Records a histogram of ready-to-running latencies (the time from a
    /// task being queued, at spawn or wake, to the start of its poll), read
    /// through [`Executor::metrics`]. Off by default: it costs a small
    /// allocation per task, two clock reads and a shared atomic increment per
    /// poll, and sends every spawn through the decorated path: about 850
    /// more instructions per spawned empty task, some 65% on top of the
    /// default path's 1,300 (`benches/README.md`, section `priority`).
    ///
    /// ```
    /// let executor = fastexec::Executor::builder()
    ///     .threads(1)
    ///     .latency_histogram(true)
    ///     .build()
    ///     .unwrap();
    /// executor.block_on(async {
    ///     for _ in 0..5 {
    ///         fastexec::spawn(async {}).detach();
    ///     }
    /// });
    /// assert_eq!(executor.metrics().latency.unwrap().total(), 5);
    /// ```
    pub fn latency_histogram(mut self, on: bool) -> Builder {
        self.ext.latency_histogram = on;
        self
    }

    /// Runs `hook` on every worker thread when it starts, before it runs
    /// any task. A panic in it is caught (the panic hook reports it), and
    /// the worker goes on.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let started = Arc::new(AtomicUsize::new(0));
    /// let count = started.clone();
    /// let executor = fastexec::Executor::builder()
    ///     .threads(2)
    ///     .on_thread_start(move || {
    ///         count.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()
    ///     .unwrap();
    /// drop(executor); // joins the threads
    /// assert_eq!(started.load(Ordering::SeqCst), 2);
    /// ```
    pub fn on_thread_start(mut self, hook: impl Fn() + Send + Sync + 'static) -> Builder {
        self.ext.hooks.thread_start = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on every worker thread when it stops, after it dropped
    /// its leftover tasks. A panic in it is caught (the panic hook reports
    /// it).
    pub fn on_thread_stop(mut self, hook: impl Fn() + Send + Sync + 'static) -> Builder {
        self.ext.hooks.thread_stop = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on the spawning thread for every task spawned onto the
    /// executor, before it is queued. Setting a task hook gives every task a
    /// [`TaskId`](crate::task::TaskId) and sends it through the decorated
    /// spawn path.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    ///
    /// let names = Arc::new(Mutex::new(Vec::new()));
    /// let seen = names.clone();
    /// let executor = fastexec::Executor::builder()
    ///     .on_task_spawn(move |meta| seen.lock().unwrap().push(meta.name().map(String::from)))
    ///     .build()
    ///     .unwrap();
    /// executor.block_on(async {
    ///     fastexec::task::Builder::new().name("fetch").spawn(async {}).detach();
    ///     fastexec::spawn(async {}).detach();
    /// });
    /// assert_eq!(*names.lock().unwrap(), [Some("fetch".to_string()), None]);
    /// ```
    pub fn on_task_spawn(mut self, hook: impl Fn(&TaskMeta) + Send + Sync + 'static) -> Builder {
        self.ext.hooks.task_spawn = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` when a task's future is dropped: after it completed or
    /// panicked, or when it was aborted, cancelled or dropped with the
    /// executor; on the thread that drops it.
    pub fn on_task_finish(mut self, hook: impl Fn(&TaskMeta) + Send + Sync + 'static) -> Builder {
        self.ext.hooks.task_finish = Some(Arc::new(hook));
        self
    }

    /// The scheduler (default [`Scheduler::WorkStealing`]).
    /// [`Scheduler::Simple`] starts exactly one worker thread, whatever
    /// [`threads`](Builder::threads) says.
    pub fn scheduler(mut self, scheduler: Scheduler) -> Builder {
        self.ext.scheduler = scheduler;
        self
    }

    /// The simple scheduler's seed. Without one, [`build`](Builder::build)
    /// takes `FASTEXEC_SEED` if it is set, and otherwise draws a seed and
    /// prints it once to stderr. Ignored by the work-stealing scheduler.
    pub fn seed(mut self, seed: u64) -> Builder {
        self.ext.seed = Some(seed);
        self
    }

    /// Applies `FASTEXEC_SCHEDULER` and `FASTEXEC_SEED` as found by
    /// `lookup`.
    pub(crate) fn apply_env_ext(
        mut self,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Builder, EnvError> {
        let (scheduler, seed) = simple::from_lookup(lookup)?;
        self.ext.scheduler = scheduler;
        if seed.is_some() {
            self.ext.seed = seed;
        }
        Ok(self)
    }
}

impl Executor {
    /// The simple scheduler's seed, or `None` under work stealing. Re-run a
    /// failing program with `FASTEXEC_SEED` set to it to replay the order
    /// its tasks started in.
    pub fn seed(&self) -> Option<u64> {
        self.shared().ext.simple.as_ref().map(|s| s.seed())
    }

    /// The scheduler this executor runs.
    pub fn scheduler(&self) -> Scheduler {
        match self.shared().ext.simple {
            Some(_) => Scheduler::Simple,
            None => Scheduler::WorkStealing,
        }
    }
}
