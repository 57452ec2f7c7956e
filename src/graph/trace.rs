//! Chrome trace (Trace Event Format) export, written by hand: the format is
//! small and a JSON dependency would weigh on every user of the crate.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use super::Attempt;

/// Renders one complete ("X") event per finished attempt that ran (see
/// [`Attempt::ran`]) on a row of the worker that started it, and metadata
/// events naming and ordering the rows.
///
/// The complete events of one row must nest: two may be disjoint or one
/// inside the other, never overlap partially (Perfetto drops such a slice,
/// `chrome://tracing` draws it wrong). An attempt that suspends goes on
/// elsewhere while its worker runs other attempts, which may start inside
/// it and end after it. So each worker gets as many rows as its attempts
/// need: taken by start (the longer first of two that start together),
/// each attempt goes to the first of its worker's rows in which it nests.
/// The first row has the worker's number as `tid` and its name; the others
/// (rare) are numbered after the highest worker's number, in order of
/// worker then row, and named "name (2)", "name (3)", ...; a
/// `thread_sort_index` puts each under its worker.
pub(crate) fn render(attempts: &[Attempt]) -> String {
    let mut out = String::from("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !std::mem::take(&mut first) {
            out.push_str(",\n");
        }
    };
    let mut done: Vec<(&Attempt, Duration)> = attempts
        .iter()
        .filter(|a| a.ran)
        .filter_map(|a| Some((a, a.end?)))
        .collect();
    done.sort_by_key(|&(a, end)| (a.worker, a.start, Reverse(end)));
    // Per worker, per row: the ends of the slices that enclose the
    // current start (a stack: each inside the one below).
    let mut open: BTreeMap<u32, Vec<Vec<Duration>>> = BTreeMap::new();
    // Every row, by (worker, row): its name.
    let mut rows: BTreeMap<(u32, usize), &str> = attempts
        .iter()
        .map(|a| ((a.worker, 0), &*a.worker_name))
        .collect();
    let mut placed: Vec<(&Attempt, Duration, usize)> = Vec::with_capacity(done.len());
    for (a, end) in done {
        let stacks = open.entry(a.worker).or_default();
        let nests = |stack: &mut Vec<Duration>| {
            // Slices ended by this start end before every later one.
            while stack.last().is_some_and(|&e| e <= a.start) {
                stack.pop();
            }
            stack.last().map_or(true, |&e| end <= e)
        };
        let row = match stacks.iter_mut().position(nests) {
            Some(row) => row,
            None => {
                stacks.push(Vec::new());
                stacks.len() - 1
            }
        };
        stacks[row].push(end);
        rows.entry((a.worker, row)).or_insert(&a.worker_name);
        placed.push((a, end, row));
    }
    let next = rows
        .keys()
        .map(|&(w, _)| u64::from(w) + 1)
        .max()
        .unwrap_or(0);
    let tids: BTreeMap<(u32, usize), u64> = rows
        .keys()
        .filter(|&&(_, row)| row > 0)
        .zip(next..)
        .map(|(&key, tid)| (key, tid))
        .collect();
    let tid = |worker: u32, row: usize| match row {
        0 => u64::from(worker),
        _ => tids[&(worker, row)],
    };
    for (sort_index, (&(worker, row), name)) in rows.iter().enumerate() {
        let tid = tid(worker, row);
        let name = match row {
            0 => json_str(name),
            _ => json_str(&format!("{name} ({})", row + 1)),
        };
        sep(&mut out);
        let _ = write!(
            out,
            "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{tid},\"args\":{{\"name\":{name}}}}}"
        );
        sep(&mut out);
        let _ = write!(
            out,
            "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":{tid},\"args\":{{\"sort_index\":{sort_index}}}}}"
        );
    }
    for (a, end, row) in placed {
        sep(&mut out);
        let _ = write!(
            out,
            "{{\"name\":{},\"cat\":\"task\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":1,\"tid\":{},\"args\":{{\"attempt\":{},\"outcome\":\"{}\"}}}}",
            json_str(a.task.as_str()),
            micros(a.start),
            micros(end.saturating_sub(a.start)),
            tid(a.worker, row),
            a.number,
            a.outcome.as_str()
        );
    }
    out.push_str("\n]}\n");
    out
}

fn micros(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e6)
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::AttemptOutcome;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }

    #[test]
    fn one_slice_per_finished_attempt_that_ran_and_named_rows() {
        let attempt = |n, end| Attempt {
            task: "t\"x".into(),
            number: n,
            start: Duration::from_micros(1500),
            end,
            worker: 3,
            worker_name: "w-3".into(),
            outcome: AttemptOutcome::Failed,
            ran: true,
        };
        let not_run = Attempt {
            ran: false,
            ..attempt(3, Some(Duration::from_micros(1500)))
        };
        let json = render(&[
            attempt(1, Some(Duration::from_micros(2000))),
            attempt(2, None),
            not_run,
        ]);
        assert!(
            json.contains("\"ph\":\"M\",\"pid\":1,\"tid\":3,\"args\":{\"name\":\"w-3\"}"),
            "{json}"
        );
        assert!(
            json.contains(
                "\"name\":\"t\\\"x\",\"cat\":\"task\",\"ph\":\"X\",\"ts\":1500.000,\"dur\":500.000"
            ),
            "{json}"
        );
        assert_eq!(
            json.matches("\"ph\":\"X\"").count(),
            1,
            "unfinished attempt, or one that did not run, drawn"
        );
    }

    #[test]
    fn an_attempt_that_overlaps_its_workers_row_partially_gets_a_row_under_it() {
        let attempt = |task: &str, worker, (start, end)| Attempt {
            task: task.into(),
            number: 1,
            start: Duration::from_micros(start),
            end: Some(Duration::from_micros(end)),
            worker,
            worker_name: format!("w-{worker}").into(),
            outcome: AttemptOutcome::Completed,
            ran: true,
        };
        // "a" suspended on worker 3, which ran "b" and "c" meanwhile: "b"
        // starts inside "a" and ends after it; "c" nests inside "a".
        let json = render(&[
            attempt("a", 3, (0, 10)),
            attempt("b", 3, (5, 15)),
            attempt("c", 3, (6, 7)),
            attempt("d", 5, (0, 1)),
        ]);
        let tid_of = |name: &str| {
            let key = format!("\"name\":\"{name}\",\"cat\":\"task\"");
            let line = json.lines().find(|l| l.contains(&key)).unwrap();
            let tid = &line[line.find("\"tid\":").unwrap() + 6..];
            tid[..tid.find(',').unwrap()].parse::<u64>().unwrap()
        };
        // Row 0 of each worker keeps the worker's number; the extra row is
        // numbered after the highest worker (5), named after its worker
        // and sorted under it.
        let tids = ["a", "b", "c", "d"].map(tid_of);
        assert_eq!(tids, [3, 6, 3, 5], "{json}");
        for meta in [
            "\"tid\":3,\"args\":{\"name\":\"w-3\"}",
            "\"tid\":6,\"args\":{\"name\":\"w-3 (2)\"}",
            "\"tid\":5,\"args\":{\"name\":\"w-5\"}",
            "\"tid\":3,\"args\":{\"sort_index\":0}",
            "\"tid\":6,\"args\":{\"sort_index\":1}",
            "\"tid\":5,\"args\":{\"sort_index\":2}",
        ] {
            assert!(json.contains(meta), "{meta} missing:\n{json}");
        }
    }
}
