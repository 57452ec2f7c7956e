//! [`Report`]: what happened to every task in a run.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use unicode_width::UnicodeWidthStr;

use super::core::Core;
use super::run::Shared;
use super::{dot, lane, trace, TaskError, TaskId, TaskState};

/// How one attempt of a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// Still running when the report was taken.
    Running,
    /// Produced an output.
    Completed,
    /// Returned an error.
    Failed,
    /// Exceeded the task's timeout.
    TimedOut,
    /// Panicked.
    Panicked,
    /// Cancelled while running.
    Cancelled,
}

impl AttemptOutcome {
    /// A short lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Running => "running",
            AttemptOutcome::Completed => "completed",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::TimedOut => "timed-out",
            AttemptOutcome::Panicked => "panicked",
            AttemptOutcome::Cancelled => "cancelled",
        }
    }
}

/// One attempt of one task: when, on which worker thread, and how it ended.
/// Times are offsets from the start of the run.
///
/// An attempt starts when its body is called. A runner takes a batch of
/// attempts at once and calls their bodies one after the other, so an
/// attempt may be cancelled after its runner took it and before its body
/// was called (see [`RunHandle::cancel`](super::RunHandle::cancel)). Such
/// an attempt did not run, even if its body is called after the cancel:
/// [`ran`](Attempt::ran) is false, it starts and ends at the cancel, and
/// it is in no trace. The runner tells when it gives the attempt back
/// (with the next batch it records): until then, a report shows an
/// attempt it holds from when it was taken (to the cancel, if it was
/// cancelled), which can be after the run finished if the runner is
/// still in a cancelled sync body.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Attempt {
    /// The task.
    pub task: TaskId,
    /// 1 for the first attempt.
    pub number: u32,
    /// When the attempt started. Times inside a runner's batch are read
    /// from the CPU's tick counter and turned into instants between exact
    /// `Instant` readings (see "How a run executes" in the
    /// [module docs](super)): they keep their order with every other time
    /// of the run, and are within tens of nanoseconds of an `Instant` the
    /// body itself would read at that moment.
    pub start: Duration,
    /// When it ended (`None` while running). For a cancelled attempt, the
    /// cancel (or the return of its body's call, if earlier), though a
    /// sync body runs on to its return.
    pub end: Option<Duration>,
    /// The worker thread that started it: the one that first polled it
    /// (called its body), which is not the runner that took it if that
    /// runner handed it off (see "How a run executes" in the
    /// [module docs](super)). An attempt that suspends goes on in a task
    /// of its own, perhaps on other threads, and is drawn with this
    /// thread's attempts throughout, while the thread runs others (on a
    /// second row of the thread where they overlap, see
    /// [`Report::chrome_trace`]). Threads are numbered from 0 in the order
    /// they first looked for a graph task to run in this process (a
    /// runner's thread as it first looks for ready tasks, found or not).
    /// One numbering for all runs, taken by threads that found nothing
    /// too, so a run's workers need not be numbered from 0, nor
    /// consecutively.
    pub worker: u32,
    /// That thread's name.
    pub worker_name: Arc<str>,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// Whether its body was called while it counted. False only for an
    /// attempt cancelled before its body was called, or called only after
    /// the cancel (its outcome is then [`AttemptOutcome::Cancelled`]): it
    /// starts and ends at the cancel, claims no time and is in no trace.
    /// "Called" is the runner's clock reading just before the call: a
    /// cancel within those few instructions of it may count a call as
    /// before the cancel. A report taken between the cancel and the moment
    /// the runner gives the attempt back still says true, with the times
    /// from when the attempt was taken (see [`TaskRecord::start`]).
    pub ran: bool,
}

/// What happened to one task. Times are offsets from the start of the run;
/// tasks that never started have none.
#[derive(Debug)]
#[non_exhaustive]
pub struct TaskRecord<T> {
    /// The task's id.
    pub id: TaskId,
    /// Its dependencies.
    pub deps: Vec<TaskId>,
    /// Its state when the report was taken.
    pub state: TaskState,
    /// How many attempts were taken: the first by a runner, each retry by
    /// the task's driver once its backoff is over. An attempt is taken a
    /// little before its body is called (see
    /// [`RunHandle::cancel`](super::RunHandle::cancel)), so a task cancelled
    /// in between counts an attempt that did not run (see
    /// [`Attempt::ran`]).
    pub attempts: u32,
    /// When its first attempt started (its body was called). `None` if
    /// none did, also for a task whose only attempt was cancelled before
    /// its body was called.
    ///
    /// A task cancelled while a runner holds its attempt (taken, its body
    /// maybe not called yet: see [`RunHandle::cancel`](super::RunHandle::cancel))
    /// is settled when the runner gives the attempt back, a moment later: a
    /// report taken in between shows the attempt from when it was taken to
    /// the cancel; later reports narrow it to the body's call, or show no
    /// start and no end if the body was not called before the cancel. Its
    /// state, attempts and error do not change.
    pub start: Option<Duration>,
    /// When it reached its terminal state (if it started).
    pub end: Option<Duration>,
    /// Why it has no output (for the last attempt of a failed task, or the
    /// reason it was cancelled or never ran).
    pub error: Option<TaskError>,
    /// Its output, if it completed.
    pub output: Option<Arc<T>>,
}

impl<T> TaskRecord<T> {
    /// From first start to end, backoff waits included.
    pub fn duration(&self) -> Option<Duration> {
        Some(self.end?.saturating_sub(self.start?))
    }
}

/// The outcome of a run: every task's state, attempts, times and error, the
/// critical path, and every attempt for the timeline.
///
/// `Display` prints it as a table; [`to_dot`](Report::to_dot) and
/// [`chrome_trace`](Report::chrome_trace) draw it.
///
/// ```
/// use fastexec::graph::{Graph, Task, TaskState};
///
/// let mut g = Graph::<u32>::new();
/// g.add(Task::new("ok", |_| async { Ok(1) })).unwrap();
/// g.add(Task::new("bad", |_| async { Err("disk full".into()) })).unwrap();
/// g.add(Task::new("after", |_| async { Ok(3) }).after(["ok", "bad"])).unwrap();
/// let report = g.run_blocking();
///
/// assert!(!report.is_success());
/// assert_eq!(report.task("bad").unwrap().state, TaskState::Failed);
/// assert_eq!(report.task("after").unwrap().state, TaskState::UpstreamFailed);
/// assert_eq!(report.count(TaskState::Completed), 1);
/// let table = report.to_string();
/// assert!(table.contains("disk full"));
/// ```
pub struct Report<T> {
    /// Built on first use: a finished run's report is taken for the cost of
    /// two reference counts, and only a caller that reads it pays for the
    /// records (see [`Report::finished`]).
    tables: OnceLock<Tables<T>>,
    /// The finished run the tables are built from (`None`: already built).
    run: Option<Arc<Shared<T>>>,
    index: Arc<HashMap<TaskId, u32>>,
    started_at: SystemTime,
}

struct Tables<T> {
    tasks: Vec<TaskRecord<T>>,
    attempts: Vec<Attempt>,
    critical_path: Vec<usize>,
    elapsed: Duration,
}

impl<T> Tables<T> {
    fn build(core: &Core<T>, t0: Instant) -> Self {
        let at = |i: Instant| i.saturating_duration_since(t0);
        let tasks: Vec<TaskRecord<T>> = core
            .nodes
            .iter()
            .zip(0..)
            .zip(&core.cold)
            .map(|((n, i), cold)| TaskRecord {
                id: cold.id.clone(),
                deps: cold.deps.iter().map(|&d| core.id(d).clone()).collect(),
                state: n.state,
                attempts: n.attempts,
                start: n.start.map(at),
                end: n.end.map(at),
                error: cold.error().cloned(),
                output: core.output(i).cloned(),
            })
            .collect();
        let mut names: Vec<Option<Arc<str>>> = Vec::new();
        let attempts = core
            .attempt_records()
            .iter()
            .map(|s| {
                let lane = s.lane as usize;
                if names.len() <= lane {
                    names.resize(lane + 1, None);
                }
                let name = names[lane].get_or_insert_with(|| lane::name(s.lane));
                Attempt {
                    task: core.id(s.node).clone(),
                    number: s.attempt,
                    start: at(s.start),
                    end: s.end.map(at),
                    worker: s.lane,
                    worker_name: Arc::clone(name),
                    outcome: s.outcome,
                    ran: s.ran,
                }
            })
            .collect();
        let deps: Vec<&[u32]> = core.cold.iter().map(|c| &*c.deps).collect();
        let critical_path = critical_path(&tasks, &deps);
        // The run finishes when the record of its last task is made, at
        // that attempt's end reading; a runner held up between reading an
        // attempt's end and recording it (its thread descheduled) may
        // record last an attempt that ended before others did: the
        // latest end is the run's.
        let last_end = tasks.iter().filter_map(|t| t.end).max();
        let finished = at(core.finished_at.unwrap_or_else(Instant::now));
        let elapsed = last_end.map_or(finished, |end| end.max(finished));
        Tables {
            tasks,
            attempts,
            critical_path,
            elapsed,
        }
    }
}

impl<T> Report<T> {
    /// A report of a run in progress, built now.
    pub(crate) fn new(core: &Core<T>, t0: Instant, started_at: SystemTime) -> Self {
        Report {
            tables: OnceLock::from(Tables::build(core, t0)),
            run: None,
            index: Arc::clone(&core.index),
            started_at,
        }
    }

    /// A report of a finished run, built when first read. A finished run
    /// never changes again (every task is terminal, adding is refused,
    /// cancel and stop find nothing to do), so building it later gives
    /// what building it now would; but for the records of attempts
    /// cancelled while a runner held them, which the runner settles when
    /// it gives them back (see [`Attempt`]): building it later only makes
    /// those truer.
    pub(crate) fn finished(run: Arc<Shared<T>>, index: Arc<HashMap<TaskId, u32>>) -> Self {
        Report {
            started_at: run.started_at,
            tables: OnceLock::new(),
            run: Some(run),
            index,
        }
    }

    fn tables(&self) -> &Tables<T> {
        self.tables.get_or_init(|| {
            let run = self.run.as_ref().expect("unbuilt tables have a run");
            // The run's empty lists of bodies are freed here (outside the
            // lock, before the tables take their room) rather than by the
            // run's waiter on its way out (see `Core::spare`).
            let lists = run.lock().take_empty_lists();
            drop(lists);
            Tables::build(&run.lock(), run.t0)
        })
    }

    /// Every task, in insertion order (which is a topological order).
    pub fn tasks(&self) -> &[TaskRecord<T>] {
        &self.tables().tasks
    }

    /// The record of task `id`.
    pub fn task(&self, id: &str) -> Option<&TaskRecord<T>> {
        self.index.get(id).map(|&i| &self.tasks()[i as usize])
    }

    /// The output of task `id`, if it completed.
    pub fn output(&self, id: &str) -> Option<&T> {
        self.task(id)?.output.as_deref()
    }

    /// Every attempt of every task, in the order they started.
    pub fn attempts(&self) -> &[Attempt] {
        &self.tables().attempts
    }

    /// How many tasks are in `state`.
    pub fn count(&self, state: TaskState) -> usize {
        self.tasks().iter().filter(|t| t.state == state).count()
    }

    /// Whether every task completed.
    pub fn is_success(&self) -> bool {
        self.tasks().iter().all(|t| t.state == TaskState::Completed)
    }

    /// When the run started (wall clock).
    pub fn started_at(&self) -> SystemTime {
        self.started_at
    }

    /// From the start of the run to its last task's end (or to the report,
    /// if the run was still going).
    pub fn elapsed(&self) -> Duration {
        self.tables().elapsed
    }

    /// The critical path: the chain of dependent tasks, among those that ran,
    /// whose durations (first start to end, backoff waits included) add up
    /// to the most. However many workers it had, the run could not take
    /// less than that sum, and only shortening a task on this chain lowers
    /// it. Time a task spent ready but waiting for a worker or a budget
    /// counts in no duration: a run that took much longer than its
    /// critical path ([`elapsed`](Report::elapsed)) was held back by its
    /// workers or budgets, not by its dependencies.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fastexec::graph::{Graph, Task};
    ///
    /// let mut g = Graph::<u32>::new();
    /// let wait = |ms| fastexec::time::sleep(Duration::from_millis(ms));
    /// g.add(Task::new("fetch", move |_| async move { wait(20).await; Ok(1) })).unwrap();
    /// g.add(Task::new("slow", move |_| async move { wait(30).await; Ok(2) }).after(["fetch"]))
    ///     .unwrap();
    /// g.add(Task::new("quick", |_| async { Ok(3) }).after(["fetch"])).unwrap();
    /// g.add(Task::new("join", |_| async { Ok(4) }).after(["slow", "quick"])).unwrap();
    /// let report = g.run_blocking();
    /// let path: Vec<&str> = report.critical_path().map(|t| t.id.as_str()).collect();
    /// assert_eq!(path, ["fetch", "slow", "join"]);
    /// assert!(report.critical_path_duration() >= Duration::from_millis(50));
    /// ```
    pub fn critical_path(&self) -> impl ExactSizeIterator<Item = &TaskRecord<T>> + '_ {
        let tasks = self.tasks();
        self.tables().critical_path.iter().map(move |&i| &tasks[i])
    }

    /// The summed duration of the critical path.
    pub fn critical_path_duration(&self) -> Duration {
        self.critical_path().filter_map(TaskRecord::duration).sum()
    }

    /// The graph in DOT, nodes coloured by final state.
    pub fn to_dot(&self) -> String {
        dot::render(
            self.tasks()
                .iter()
                .map(|t| (&t.id, t.deps.iter(), Some(t.state))),
        )
    }

    /// The run as a Chrome trace (JSON, "Trace Event Format"): one row per
    /// worker thread, one slice per finished attempt that ran (see
    /// [`Attempt::ran`]; a complete event,
    /// `"ph":"X"`, with `ts` and `dur` in microseconds from the start of
    /// the run, the attempt's number and outcome in `args`). Attempts still
    /// running when the report was taken are left out. Open it in Perfetto
    /// (<https://ui.perfetto.dev>) or `chrome://tracing`.
    ///
    /// The slices of one row nest, as the format requires. An attempt that
    /// suspends stays on its worker's row (see [`Attempt::worker`]) while
    /// the worker runs others, and one of those may start inside it and
    /// end after it: such an attempt goes to another row of the same
    /// worker, named after it ("worker (2)"), sorted under it, with a
    /// `tid` past every worker's number. A worker's first row has the
    /// worker's number as `tid`.
    ///
    /// ```
    /// use fastexec::graph::{Graph, Task};
    ///
    /// let mut g = Graph::<u32>::new();
    /// g.add(Task::new("a", |_| async { Ok(1) })).unwrap();
    /// g.add(Task::new("b", |_| async { Ok(2) }).after(["a"])).unwrap();
    /// let trace = g.run_blocking().chrome_trace();
    /// assert_eq!(trace.matches("\"ph\":\"X\"").count(), 2);
    /// assert!(trace.contains("\"name\":\"b\",\"cat\":\"task\""));
    /// // report.write_chrome_trace("run.trace.json")? writes it to a file.
    /// ```
    pub fn chrome_trace(&self) -> String {
        trace::render(self.attempts())
    }

    /// Writes [`chrome_trace`](Report::chrome_trace) to a file, replacing
    /// it if it exists.
    ///
    /// # Errors
    ///
    /// The operating system's error if the file cannot be created or
    /// written.
    pub fn write_chrome_trace(&self, path: impl AsRef<std::path::Path>) -> std::io::Result<()> {
        std::fs::write(path, self.chrome_trace())
    }
}

/// Longest path weighted by duration, in one pass over the tasks in index
/// order (a topological order: dependencies come first). Tasks that never
/// ran weigh nothing and extend no chain.
fn critical_path<T, D: AsRef<[u32]>>(tasks: &[TaskRecord<T>], deps: &[D]) -> Vec<usize> {
    let mut best = vec![Duration::ZERO; tasks.len()];
    let mut pred: Vec<Option<usize>> = vec![None; tasks.len()];
    for (i, task) in tasks.iter().enumerate() {
        let Some(own) = task.duration() else { continue };
        let longest_dep = deps[i]
            .as_ref()
            .iter()
            .map(|&d| d as usize)
            .filter(|&d| tasks[d].duration().is_some())
            .max_by_key(|&d| best[d]);
        pred[i] = longest_dep;
        best[i] = own + longest_dep.map_or(Duration::ZERO, |d| best[d]);
    }
    let ran = (0..tasks.len()).filter(|&i| tasks[i].duration().is_some());
    let Some(mut at) = ran.max_by_key(|&i| best[i]) else {
        return Vec::new();
    };
    let mut path = vec![at];
    while let Some(p) = pred[at] {
        path.push(p);
        at = p;
    }
    path.reverse();
    path
}

fn ms(d: Option<Duration>) -> String {
    d.map_or_else(
        || "-".to_owned(),
        |d| format!("{:.3}", d.as_secs_f64() * 1e3),
    )
}

/// `text` with its control characters (line breaks, tabs) escaped as in a
/// Rust string literal, so that it takes one line of the table and its
/// width is that of the characters shown (see [`padded`]).
fn one_line(text: &str) -> Cow<'_, str> {
    if text.chars().any(char::is_control) {
        let mut escaped = String::with_capacity(text.len() + 8);
        for c in text.chars() {
            if c.is_control() {
                escaped.extend(c.escape_default());
            } else {
                escaped.push(c);
            }
        }
        Cow::Owned(escaped)
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` followed by the spaces that make it `width` terminal columns
/// wide, by its display width (East Asian wide characters and most emoji
/// take two columns, combining marks none), not by its count of
/// characters, which is what `{:<width$}` pads by.
fn padded(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(text.width());
    let mut out = String::with_capacity(text.len() + pad);
    out.push_str(text);
    out.extend(std::iter::repeat(' ').take(pad));
    out
}

impl<T> fmt::Display for Report<T> {
    /// A table: one row per task, then the critical path and a summary.
    /// Control characters in ids and errors are shown escaped (`\n`), so
    /// each task takes one line. Each column is as wide as its widest
    /// entry (a run of hours has times of ten digits and more), and the id
    /// column is padded by display width (wide characters take two
    /// terminal columns), so the columns line up on a terminal whatever
    /// the ids and times.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Per task: its id, attempts, start, end and duration, as shown.
        let rows: Vec<(Cow<'_, str>, [String; 4])> = self
            .tasks()
            .iter()
            .map(|t| {
                let numbers = [
                    t.attempts.to_string(),
                    ms(t.start),
                    ms(t.end),
                    ms(t.duration()),
                ];
                (one_line(t.id.as_str()), numbers)
            })
            .collect();
        let w = rows.iter().map(|(id, _)| id.width()).max().unwrap_or(0);
        let w = w.max(4);
        let headers = ["attempts", "start ms", "end ms", "took ms"];
        // At least as wide as before they were sized, so that a short run's
        // table looks as it did.
        let least = [8, 10, 10, 10];
        let widths: [usize; 4] = std::array::from_fn(|c| {
            let widest = rows.iter().map(|(_, n)| n[c].len()).max().unwrap_or(0);
            widest.max(least[c])
        });
        let [wa, ws, we, wt] = widths;
        writeln!(
            f,
            "{:<w$}  {:<15}  {:>wa$}  {:>ws$}  {:>we$}  {:>wt$}  error",
            "task", "state", headers[0], headers[1], headers[2], headers[3]
        )?;
        for (t, (id, [attempts, start, end, took])) in self.tasks().iter().zip(&rows) {
            let error = t
                .error
                .as_ref()
                .map(|e| one_line(&e.to_string()).into_owned())
                .unwrap_or_default();
            writeln!(
                f,
                "{}  {:<15}  {attempts:>wa$}  {start:>ws$}  {end:>we$}  {took:>wt$}  {error}",
                padded(id, w),
                t.state,
            )?;
        }
        let path: Vec<Cow<'_, str>> = self
            .critical_path()
            .map(|t| one_line(t.id.as_str()))
            .collect();
        writeln!(
            f,
            "critical path ({} ms): {}",
            ms(Some(self.critical_path_duration())),
            path.join(" -> ")
        )?;
        write!(
            f,
            "{} tasks in {} ms:",
            self.tasks().len(),
            ms(Some(self.elapsed()))
        )?;
        let states = [
            TaskState::Completed,
            TaskState::Failed,
            TaskState::UpstreamFailed,
            TaskState::Cancelled,
            TaskState::Running,
            TaskState::Paused,
            TaskState::Ready,
            TaskState::Pending,
        ];
        for s in states {
            match self.count(s) {
                0 => {}
                n => write!(f, " {n} {s}")?,
            }
        }
        writeln!(f)
    }
}

impl<T> fmt::Debug for Report<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Report")
            .field("tasks", &self.tasks().len())
            .field("elapsed", &self.elapsed())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::slots::Starts;

    fn record(id: &str, start: Option<u64>, end: Option<u64>) -> TaskRecord<()> {
        TaskRecord {
            id: id.into(),
            deps: Vec::new(),
            state: TaskState::Completed,
            attempts: 1,
            start: start.map(Duration::from_millis),
            end: end.map(Duration::from_millis),
            error: None,
            output: None,
        }
    }

    #[test]
    fn critical_path_follows_the_heaviest_chain() {
        // a(10) -> b(1) -> d(5); a -> c(20) -> d; e(3) alone; f never ran, after d.
        let tasks = vec![
            record("a", Some(0), Some(10)),
            record("b", Some(10), Some(11)),
            record("c", Some(10), Some(30)),
            record("d", Some(30), Some(35)),
            record("e", Some(0), Some(3)),
            record("f", None, None),
        ];
        let deps = vec![vec![], vec![0], vec![0], vec![1, 2], vec![], vec![3]];
        assert_eq!(critical_path(&tasks, &deps), vec![0, 2, 3]);
    }

    /// A runner held up between an attempt's end and its record (the
    /// thread descheduled) records last an attempt that ended before others
    /// did: the run's elapsed time must still cover every task's end.
    #[test]
    fn elapsed_covers_a_task_that_ended_after_the_last_one_recorded() {
        use super::super::core::Effects;
        use super::super::{SchedulerConfig, Task};

        let mut core = Core::<u32>::new(&SchedulerConfig::new());
        let mut tasks = vec![
            Task::sync("early", |_| Ok(1)),
            Task::sync("late", |_| Ok(2)),
        ];
        let _ = core.add(&mut tasks, false).unwrap();
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut starts = Starts::with_capacity(1);
        assert!(core.next_attempts(t0, 0, &mut starts, &mut Effects::default()));
        let mut begun = starts.take_all();
        let (early, late) = (begun.remove(0), begun.remove(0));
        let mut fx = Effects::default();
        let late_out = Ok(Some(Arc::new(2)));
        core.attempt_ran(late.node, late.body, (at(0), at(20)), late_out, &mut fx);
        let early_out = Ok(Some(Arc::new(1)));
        core.attempt_ran(early.node, early.body, (at(0), at(10)), early_out, &mut fx);
        assert!(core.is_done());
        let report = Report::new(&core, t0, SystemTime::now());
        assert_eq!(
            report.task("late").unwrap().end,
            Some(Duration::from_millis(20))
        );
        assert!(
            report.elapsed() >= Duration::from_millis(20),
            "elapsed {:?}",
            report.elapsed()
        );
    }

    /// A runner takes "x", "y" and "z" in one batch; "y" and "z" are
    /// cancelled at 5 ms. "y"'s body was called at 3 ms and returned at
    /// 4 ms: it ran from 3 to 4. "z"'s was called at 6 ms, after the
    /// cancel: it did not run, and takes no time.
    #[test]
    fn a_cancelled_attempt_counts_from_its_call_if_its_body_was_called_before_the_cancel() {
        use super::super::core::Effects;
        use super::super::{CancelReason, SchedulerConfig, Task};

        let mut core = Core::<u32>::new(&SchedulerConfig::new());
        let mut tasks = vec![
            Task::sync("x", |_| Ok(1)),
            Task::sync("y", |_| Ok(2)),
            Task::sync("z", |_| Ok(3)),
        ];
        let _ = core.add(&mut tasks, false).unwrap();
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut starts = Starts::with_capacity(1);
        assert!(core.next_attempts(t0, 0, &mut starts, &mut Effects::default()));
        let mut begun = starts.take_all();
        let (x, y, z) = (begun.remove(0), begun.remove(0), begun.remove(0));
        let _ = core.cancel(y.node, CancelReason::Requested, at(5));
        let _ = core.cancel(z.node, CancelReason::Requested, at(5));
        let mut fx = Effects::default();
        let ran = |out| Ok(Some(Arc::new(out)));
        core.attempt_ran(x.node, x.body, (at(0), at(3)), ran(1), &mut fx);
        core.attempt_ran(y.node, y.body, (at(3), at(4)), ran(2), &mut fx);
        core.attempt_ran(z.node, z.body, (at(6), at(7)), ran(3), &mut fx);
        let report = Report::new(&core, t0, SystemTime::now());
        let ms = |ms| Some(Duration::from_millis(ms));
        let attempt = |id: &str| {
            let a = report.attempts().iter().find(|a| a.task.as_str() == id);
            let a = a.unwrap();
            (a.ran, Some(a.start), a.end, a.outcome)
        };
        assert_eq!(
            attempt("y"),
            (true, ms(3), ms(4), AttemptOutcome::Cancelled)
        );
        assert_eq!(
            attempt("z"),
            (false, ms(5), ms(5), AttemptOutcome::Cancelled)
        );
        let y = report.task("y").unwrap();
        assert_eq!((y.start, y.end), (ms(3), ms(5)));
        let z = report.task("z").unwrap();
        assert_eq!((z.attempts, z.start, z.end), (1, None, None));
    }

    /// A run of three hours: its end and duration take 12 characters,
    /// more than the 10 the time columns had. Every row's numbers must
    /// still end where their headers end.
    #[test]
    fn time_columns_are_as_wide_as_the_longest_time() {
        use super::super::core::Effects;
        use super::super::{SchedulerConfig, Task};

        let mut core = Core::<u32>::new(&SchedulerConfig::new());
        let mut tasks = vec![
            Task::sync("short", |_| Ok(1)),
            Task::sync("three-hours", |_| Ok(2)),
        ];
        let _ = core.add(&mut tasks, false).unwrap();
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut starts = Starts::with_capacity(1);
        assert!(core.next_attempts(t0, 0, &mut starts, &mut Effects::default()));
        let mut begun = starts.take_all();
        let (short, long) = (begun.remove(0), begun.remove(0));
        let mut fx = Effects::default();
        let ran = |out| Ok(Some(Arc::new(out)));
        core.attempt_ran(short.node, short.body, (at(0), at(1)), ran(1), &mut fx);
        let hours = (at(1), at(3 * 3_600_000 + 1));
        core.attempt_ran(long.node, long.body, hours, ran(2), &mut fx);
        let table = Report::new(&core, t0, SystemTime::now()).to_string();
        assert!(table.contains(" 10800001.000  10800000.000 "), "{table}");
        let lines: Vec<&str> = table.lines().collect();
        let header = lines[0];
        let ends: Vec<usize> = ["attempts", "start ms", "end ms", "took ms"]
            .iter()
            .map(|h| header.find(h).unwrap() + h.len())
            .collect();
        for row in &lines[1..3] {
            // id, state, then the four numbers: where each ends.
            let mut row_ends = Vec::new();
            let mut at = 0;
            for word in row.split_whitespace() {
                at = row[at..].find(word).unwrap() + at + word.len();
                row_ends.push(at);
            }
            assert_eq!(row_ends[2..6], ends, "{row:?} under {header:?}\n{table}");
        }
    }

    #[test]
    fn critical_path_of_nothing_run_is_empty() {
        let tasks = vec![record("a", None, None)];
        assert!(critical_path(&tasks, &[vec![]]).is_empty());
    }
}
