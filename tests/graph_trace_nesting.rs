//! `Report::chrome_trace` draws the complete ("X") events of one row
//! (`pid`/`tid`) nested, as the Trace Event Format requires: two slices on
//! one row are disjoint, or one inside the other, never partly overlapping
//! (Perfetto drops such a slice, counting
//! `slice_drop_overlapping_complete_event`; chrome://tracing misdraws it).
//!
//! An attempt that suspends is drawn with the worker that first polled it
//! throughout (see `Attempt::worker`). When that worker starts another
//! attempt while the first is suspended, and the first ends (on another
//! worker) before the second does, the second goes to another row of the
//! same worker. (Before, both went on the worker's row, partly
//! overlapping.)

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use fastexec::graph::{Graph, Report, Task, TaskState};
use serde_json::Value;
use support::within;

/// Partial overlaps between complete events that share a `tid`.
fn partial_overlaps(trace: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(trace).expect("valid JSON");
    let mut rows: BTreeMap<u64, Vec<(f64, f64, String)>> = BTreeMap::new();
    for e in v["traceEvents"].as_array().unwrap() {
        if e["ph"] != "X" {
            continue;
        }
        let ts = e["ts"].as_f64().unwrap();
        let dur = e["dur"].as_f64().unwrap();
        let tid = e["tid"].as_u64().unwrap();
        let name = e["name"].as_str().unwrap().to_owned();
        rows.entry(tid).or_default().push((ts, ts + dur, name));
    }
    let mut bad = Vec::new();
    for (tid, slices) in rows {
        for (i, a) in slices.iter().enumerate() {
            for b in &slices[i + 1..] {
                let (x, y) = if a.0 <= b.0 { (a, b) } else { (b, a) };
                // y starts inside x but ends after it (beyond the
                // nanosecond the trace prints, and float rounding).
                const NS: f64 = 1e-3;
                if y.0 + NS < x.1 && y.1 > x.1 + NS {
                    bad.push(format!(
                        "tid {tid}: {} [{}, {}] and {} [{}, {}]",
                        x.2, x.0, x.1, y.2, y.0, y.1
                    ));
                }
            }
        }
    }
    bad
}

/// "root" releases "a" (async, suspends once) and "b" (sync) together with
/// filler tasks, so that one runner takes "a" then "b" in one batch: "a"
/// suspends and goes on in a driver, "b" starts on the same worker and
/// returns only once "a" has completed (on the other worker).
fn run_once() -> Report<u32> {
    within(30, || {
        let ex = support::executor(2);
        let mut g = Graph::<u32>::new();
        g.add(Task::sync("root", |_| Ok(0))).unwrap();
        g.add(
            Task::new("a", |_| async {
                fastexec::yield_now().await;
                Ok(1)
            })
            .after(["root"]),
        )
        .unwrap();
        g.add(
            Task::sync("b", |inp| {
                // Bounded wait for "a" to be recorded completed (a guard
                // against a hang, not a synchronisation by time).
                let give_up = Instant::now() + Duration::from_secs(10);
                while inp.run().state("a") != Some(TaskState::Completed) {
                    if Instant::now() > give_up {
                        return Err("a never completed".into());
                    }
                    std::thread::yield_now();
                }
                Ok(2)
            })
            .after(["root"]),
        )
        .unwrap();
        for n in 0..62 {
            g.add(Task::sync(format!("f{n}"), |_| Ok(3)).after(["root"]))
                .unwrap();
        }
        ex.block_on(g.run())
    })
}

#[test]
fn an_attempt_that_overlaps_a_suspended_one_partly_goes_to_another_row() {
    // "b" lands on the row of "a" unless its batch was handed off (the
    // hand-off moves it to another thread); try until it does.
    for _ in 0..50 {
        let report = run_once();
        assert!(report.is_success(), "{report}");
        let a = report
            .attempts()
            .iter()
            .find(|x| x.task.as_str() == "a")
            .unwrap();
        let b = report
            .attempts()
            .iter()
            .find(|x| x.task.as_str() == "b")
            .unwrap();
        if a.worker != b.worker {
            continue;
        }
        let bad = partial_overlaps(&report.chrome_trace());
        assert!(
            bad.is_empty(),
            "complete events on one thread overlap partially (not nested), \
             which the trace format forbids and Perfetto drops:\n{}\n{report}",
            bad.join("\n")
        );
        return;
    }
    panic!("\"a\" and \"b\" never ran on one worker");
}
