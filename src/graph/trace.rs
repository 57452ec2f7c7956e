//! Chrome trace (Trace Event Format) export, written by hand: the format is
//! small and a JSON dependency would weigh on every user of the crate.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use super::Attempt;

/// Renders one complete ("X") event per finished attempt on the row of the
/// worker that started it, and a metadata event naming each row.
pub(crate) fn render(attempts: &[Attempt]) -> String {
    let mut out = String::from("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !std::mem::take(&mut first) {
            out.push_str(",\n");
        }
    };
    let workers: BTreeMap<u32, &str> = attempts
        .iter()
        .map(|a| (a.worker, &*a.worker_name))
        .collect();
    for (tid, name) in workers {
        sep(&mut out);
        let _ = write!(
            out,
            "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{tid},\"args\":{{\"name\":{}}}}}",
            json_str(name)
        );
    }
    for a in attempts {
        let Some(end) = a.end else { continue };
        sep(&mut out);
        let _ = write!(
            out,
            "{{\"name\":{},\"cat\":\"task\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":1,\"tid\":{},\"args\":{{\"attempt\":{},\"outcome\":\"{}\"}}}}",
            json_str(a.task.as_str()),
            micros(a.start),
            micros(end.saturating_sub(a.start)),
            a.worker,
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
    fn one_slice_per_finished_attempt_and_named_rows() {
        let attempt = |n, end| Attempt {
            task: "t\"x".into(),
            number: n,
            start: Duration::from_micros(1500),
            end,
            worker: 3,
            worker_name: "w-3".into(),
            outcome: AttemptOutcome::Failed,
        };
        let json = render(&[
            attempt(1, Some(Duration::from_micros(2000))),
            attempt(2, None),
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
            "unfinished attempt drawn"
        );
    }
}
