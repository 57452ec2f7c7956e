//! Task graphs: tasks with ids and dependencies, run on fastexec with
//! retries, timeouts, cancellation, failure propagation and a report.
//!
//! Build a [`Graph`] from [`Task`]s (one at a time, or as a batch in any
//! order), each with an id, the ids it depends on and a re-runnable async
//! body that receives its dependencies' outputs as [`Inputs`]. Adding
//! validates before anything runs: duplicate ids, missing dependencies and
//! cycles are typed [`GraphError`]s naming the ids.
//!
//! [`Graph::start`] runs it and gives a [`RunHandle`]: the [`TaskState`] of
//! any task, cancel one (and its dependents), wait for one or for all, stop,
//! and add tasks while it runs, also from a running task (a subflow). A
//! completed task releases its dependents by decrementing their counters of
//! unmet dependencies (O(out-degree), no scanning, no future per edge). A
//! task that fails (after its retries) makes its dependents, transitively,
//! upstream-failed while independent branches go on, or with
//! [`Graph::fail_fast`] cancels everything else.
//!
//! The [`Report`] tells every task's state, attempts, times and error, and
//! the critical path; it prints as a table, exports DOT and a Chrome trace.
//!
//! ```
//! use std::time::Duration;
//! use fastexec::graph::{Graph, Task, TaskState};
//!
//! let mut g = Graph::<Vec<String>>::new();
//! g.add_batch([
//!     // Members of a batch may come in any order.
//!     Task::new("link", |inp| async move {
//!         Ok(inp.values().flatten().cloned().collect())
//!     })
//!     .after(["compile-a", "compile-b"]),
//!     Task::new("compile-a", |_| async { Ok(vec!["a.o".to_string()]) })
//!         .timeout(Duration::from_secs(10)),
//!     Task::new("compile-b", |_| async { Ok(vec!["b.o".to_string()]) }).retries(2),
//! ])
//! .unwrap();
//! println!("{}", g.to_dot());
//!
//! let report = g.run_blocking();
//! assert_eq!(report.output("link").unwrap(), &["a.o", "b.o"]);
//! assert!(report.tasks().iter().all(|t| t.state == TaskState::Completed));
//! print!("{report}");
//! ```
//!
//! The graph layer is written against fastexec's public API only (`spawn`,
//! `JoinHandle`, `block_on`), so it holds no unsafe code.
#![forbid(unsafe_code)]

mod clock;
mod core;
mod dot;
mod error;
mod id;
mod inputs;
mod lane;
mod report;
mod retry;
mod run;
mod state;
mod task;
mod trace;
mod validate;

pub use error::{BoxError, CancelReason, CyclePath, GraphError, TaskError};
pub use id::TaskId;
pub use inputs::Inputs;
pub use report::{Attempt, AttemptOutcome, Report, TaskRecord};
pub use retry::RetryPolicy;
pub use run::{Graph, RunHandle};
pub use state::TaskState;
pub use task::Task;
