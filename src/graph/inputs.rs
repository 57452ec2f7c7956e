//! [`Inputs`]: what a task body receives on each attempt.

use std::ops::Index;
use std::sync::{Arc, OnceLock};

use super::core::{Checkpoint, Effects, Names};
use super::{Cancelled, GraphError, RunHandle, Task, TaskId};

/// A task's dependencies' outputs (in the order the dependencies were
/// declared), which attempt this is, and a handle to the running graph (to
/// add subflow tasks or wait for other tasks). An async body
/// ([`Task::new`]) owns its inputs; a sync one ([`Task::sync`]) borrows them
/// for the call.
///
/// Lookups by id scan the dependency list: dependency lists are short, and a
/// task with a wide fan-in should iterate with [`iter`](Inputs::iter) instead.
/// The ids (the task's and its dependencies') are fetched from the run, once
/// per attempt, by the first method that needs them ([`task_id`](Inputs::task_id),
/// lookups by id, [`iter`](Inputs::iter)); reading the outputs by position
/// ([`values`](Inputs::values), `inputs[n]`) does without.
///
/// ```
/// use fastexec::graph::{Graph, Task};
///
/// let mut g = Graph::<String>::new();
/// g.add(Task::new("hello", |_| async { Ok("hello".to_string()) })).unwrap();
/// g.add(Task::new("world", |_| async { Ok("world".to_string()) })).unwrap();
/// g.add(
///     Task::new("greet", |inp| async move {
///         assert_eq!(inp.task_id().as_str(), "greet");
///         assert_eq!(inp.attempt(), 1);
///         let words: Vec<&str> = inp.values().map(String::as_str).collect();
///         Ok(format!("{}, {}!", inp["hello"], words[1]))
///     })
///     .after(["hello", "world"]),
/// )
/// .unwrap();
/// let report = g.run_blocking();
/// assert_eq!(report.output("greet").unwrap(), "hello, world!");
/// ```
pub struct Inputs<T> {
    pub(crate) node: u32,
    pub(crate) attempt: u32,
    pub(crate) outputs: Outputs<T>,
    /// The run, through the handle of the runner that began the attempt
    /// (see `run.rs`): a runner's own inputs, which sync bodies borrow,
    /// hold one reference for all its attempts.
    pub(crate) run: Arc<RunHandle<T>>,
    /// The task's ids, fetched on first use (see above).
    pub(crate) names: OnceLock<Arc<Names>>,
}

/// The dependencies' outputs, in the order of `Names::dep_ids`. Up to two
/// are kept inline: most tasks have few dependencies, and gathering them
/// then allocates nothing. A unit-like `T` gathers nothing: every output is
/// the run's shared one. More than two are an `Arc`ed slice rather than a
/// boxed one, so that the drop glue of `Outputs`, run for every attempt,
/// holds no loop (it was an outlined call saving six registers).
pub(crate) enum Outputs<T> {
    Few([Option<Arc<T>>; 2]),
    Many(Arc<[Arc<T>]>),
    /// As many outputs as this, each the run's shared unit.
    Unit(usize),
}

impl<T> Outputs<T> {
    /// Collects `len` outputs.
    pub(crate) fn gather(len: usize, mut outs: impl Iterator<Item = Arc<T>>) -> Self {
        if len <= 2 {
            Outputs::Few([outs.next(), outs.next()])
        } else {
            Outputs::Many(outs.collect())
        }
    }

    fn len(&self) -> usize {
        match self {
            Outputs::Few(few) => few.iter().flatten().count(),
            Outputs::Many(many) => many.len(),
            Outputs::Unit(len) => *len,
        }
    }

    /// The `n`th output; `unit` is the run's shared unit output.
    fn get<'a>(&'a self, n: usize, unit: &'a OnceLock<Arc<T>>) -> Option<&'a Arc<T>> {
        match self {
            Outputs::Few(few) => few.get(n)?.as_ref(),
            Outputs::Many(many) => many.get(n),
            Outputs::Unit(len) if n < *len => unit.get(),
            Outputs::Unit(_) => None,
        }
    }
}

impl<T> Inputs<T> {
    /// Inputs of no attempt yet, through `run`: a runner's, refilled for
    /// each attempt it begins.
    pub(crate) fn new(run: Arc<RunHandle<T>>) -> Self {
        Inputs {
            node: 0,
            attempt: 0,
            outputs: Outputs::Unit(0),
            run,
            names: OnceLock::new(),
        }
    }

    /// Makes these the inputs of attempt `attempt` of node `node`, with
    /// the outputs at `outputs`, which is left holding the outputs these
    /// inputs had (or, for a unit-like `T`, as it was: `Unit` owns nothing,
    /// and its count is copied). The ids fetched for the last attempt are
    /// forgotten (they were another node's).
    ///
    /// Swapped in place rather than moved in, the outputs go through no
    /// temporary: `Outputs` is three words, and a copy of it through the
    /// stack reads 16 bytes across two stores just made, a load that waits
    /// for them (see `slots.rs`).
    #[inline(always)]
    pub(crate) fn refill(&mut self, node: u32, attempt: u32, outputs: &mut Outputs<T>) {
        self.node = node;
        self.attempt = attempt;
        if let (Outputs::Unit(len), Outputs::Unit(new)) = (&mut self.outputs, &*outputs) {
            *len = *new;
        } else {
            std::mem::swap(&mut self.outputs, outputs);
        }
        // Most bodies never ask for their ids: a load, not a take.
        if self.names.get().is_some() {
            self.names.take();
        }
    }

    /// Inputs of this attempt of its own, for an async body's future to
    /// keep: the outputs move there, and the run gains a reference.
    #[inline]
    pub(crate) fn take_owned(&mut self) -> Self {
        Inputs {
            node: self.node,
            attempt: self.attempt,
            outputs: std::mem::replace(&mut self.outputs, Outputs::Unit(0)),
            run: Arc::clone(&self.run),
            names: OnceLock::new(),
        }
    }

    /// The task's ids (see the type's docs).
    fn names(&self) -> &Names {
        self.names
            .get_or_init(|| self.run.shared.lock().names_of(self.node))
    }

    /// The `n`th output.
    fn nth(&self, n: usize) -> Option<&Arc<T>> {
        self.outputs.get(n, &self.run.shared.unit)
    }
}

impl<T: Send + Sync + 'static> Inputs<T> {
    /// The id of the task being run.
    pub fn task_id(&self) -> &TaskId {
        &self.names().id
    }

    /// The attempt number, 1 for the first.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The output of dependency `id`, if this task depends on it.
    pub fn get(&self, id: &str) -> Option<&T> {
        self.get_shared(id).map(|out| &**out)
    }

    /// The output of dependency `id` as a shared pointer, to keep it beyond
    /// the body without copying.
    pub fn get_shared(&self, id: &str) -> Option<&Arc<T>> {
        let pos = self.names().dep_ids.iter().position(|d| d.as_str() == id)?;
        self.nth(pos)
    }

    /// `(dependency id, output)` pairs in declaration order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&TaskId, &T)> {
        self.names().dep_ids.iter().zip(self.values())
    }

    /// The outputs in declaration order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &T> {
        (0..self.len()).map(|n| &self[n])
    }

    /// The number of dependencies.
    pub fn len(&self) -> usize {
        self.outputs.len()
    }

    /// Whether the task has no dependencies.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The running graph this task belongs to.
    pub fn run(&self) -> &RunHandle<T> {
        &self.run
    }

    /// A point where the task may be paused: returns at once unless
    /// [`RunHandle::pause`] asked this task to pause; then it waits until
    /// [`RunHandle::resume`] (`Ok`) or a cancel (`Err`, which `?` turns
    /// into the body's error). A body that runs long should call it where
    /// stopping is safe: a pause request that reaches no checkpoint within
    /// the pause timeout cancels the task.
    ///
    /// # Errors
    ///
    /// [`Cancelled`] if the task has been cancelled (while paused here, or
    /// while the body ran since its last checkpoint), or if this attempt
    /// is otherwise over (it timed out, and these inputs outlived it); the
    /// body should return it (`?`): its output would be dropped anyway.
    ///
    /// ```
    /// use fastexec::graph::{Graph, Task};
    ///
    /// let mut g = Graph::<u64>::new();
    /// g.add(Task::new("sum", |inp| async move {
    ///     let mut total = 0;
    ///     for chunk in 0..100u64 {
    ///         inp.checkpoint().await?;
    ///         total += chunk;
    ///     }
    ///     Ok(total)
    /// }))
    /// .unwrap();
    /// assert_eq!(g.run_blocking().output("sum"), Some(&4950));
    /// ```
    pub async fn checkpoint(&self) -> Result<(), Cancelled> {
        // One lock when no pause was ever requested for this task. A
        // requested pause is taken, and recorded in the run, under it; one
        // requested after that check (before the wait) goes round again,
        // to be recorded too, rather than pause the body unrecorded.
        loop {
            let mut fx = Effects::default();
            let at = self
                .run
                .shared
                .lock()
                .checkpoint(self.node, self.attempt, &mut fx);
            self.run.shared.apply(fx);
            let control = match at {
                Checkpoint::Go => return Ok(()),
                Checkpoint::Over => return Err(Cancelled),
                Checkpoint::Wait(control) => control,
            };
            if control.wait_while_paused().await? {
                return Ok(());
            }
        }
    }

    /// Adds a task to the running graph (a subflow); shorthand for
    /// `self.run().add_task(task)`. It may depend on this very task, to run
    /// after it, or be awaited by it with `self.run().wait(id)`, but not both.
    ///
    /// Tasks added stay in the run whatever becomes of this attempt: an
    /// attempt that is retried finds them there, and adding the same id
    /// again is [`GraphError::DuplicateId`]. A body that may be retried
    /// adds its subflow once (on [`attempt`](Self::attempt) 1, say, or if
    /// `self.run().state(id)` is `None`).
    ///
    /// ```
    /// use fastexec::graph::{Graph, Task};
    ///
    /// let mut g = Graph::<u32>::new();
    /// g.add(Task::new("split", |inp| async move {
    ///     // Fan out into two children, then join them.
    ///     for n in 1..=2u32 {
    ///         inp.add_task(Task::new(format!("part-{n}"), move |_| async move { Ok(n * 10) }))?;
    ///     }
    ///     let a = inp.run().wait("part-1").await?;
    ///     let b = inp.run().wait("part-2").await?;
    ///     Ok(*a + *b)
    /// }))
    /// .unwrap();
    /// let report = g.run_blocking();
    /// assert_eq!(report.output("split"), Some(&30));
    /// assert_eq!(report.tasks().len(), 3);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`RunHandle::add_task`]: the task is not added.
    pub fn add_task(&self, task: Task<T>) -> Result<(), GraphError> {
        self.run.add_task(task)
    }

    /// Adds a batch to the running graph; see [`RunHandle::add_batch`].
    ///
    /// # Errors
    ///
    /// As [`RunHandle::add_batch`]: nothing of the batch is added.
    pub fn add_batch(&self, tasks: impl IntoIterator<Item = Task<T>>) -> Result<(), GraphError> {
        self.run.add_batch(tasks)
    }
}

impl<T: Send + Sync + 'static> Index<&str> for Inputs<T> {
    type Output = T;

    /// The output of dependency `id`.
    ///
    /// # Panics
    /// If this task does not depend on `id` (a bug in the graph's definition).
    fn index(&self, id: &str) -> &T {
        match self.get(id) {
            Some(out) => out,
            None => panic!("task `{}` has no dependency `{id}`", self.names().id),
        }
    }
}

impl<T> Index<usize> for Inputs<T> {
    type Output = T;

    /// The output of the `n`th declared dependency.
    ///
    /// # Panics
    /// If `n` is out of range.
    fn index(&self, n: usize) -> &T {
        match self.nth(n) {
            Some(out) => out,
            None => {
                let len = self.outputs.len();
                let noun = if len == 1 {
                    "dependency"
                } else {
                    "dependencies"
                };
                // The index, not `n + 1`: that overflows for `usize::MAX`.
                panic!(
                    "task `{}` has {len} {noun}: index {n} is out of range",
                    self.names().id
                )
            }
        }
    }
}

impl<T> std::fmt::Debug for Inputs<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = self.names();
        f.debug_struct("Inputs")
            .field("task", &names.id)
            .field("attempt", &self.attempt)
            .field("deps", &names.dep_ids)
            .finish_non_exhaustive()
    }
}
