//! The printed report (`Display for Report`): one line per task, whatever
//! its id or its error holds.

mod support;

use fastexec::graph::{Graph, Task};
use support::within;

/// Ids and error messages may hold line breaks and other control
/// characters; the table shows them escaped, so each task keeps one line
/// and the columns stay aligned.
#[test]
fn control_characters_in_ids_and_errors_keep_one_line_per_task() {
    let report = within(30, || {
        let mut g = Graph::<u32>::new();
        g.add(Task::sync("two\nlines", |_| Ok(1))).unwrap();
        g.add(Task::sync("tab\there", |_| {
            Err("first line\nsecond line".into())
        }))
        .unwrap();
        g.add(Task::sync("plain", |_| Ok(3)).after(["two\nlines"]))
            .unwrap();
        g.run_blocking()
    });
    let table = report.to_string();
    let lines: Vec<&str> = table.lines().collect();
    // A header, one row per task, the critical path and the summary.
    assert_eq!(lines.len(), 1 + 3 + 2, "{table}");
    assert!(table.contains(r"two\nlines"), "{table}");
    assert!(table.contains(r"tab\there"), "{table}");
    assert!(table.contains(r"first line\nsecond line"), "{table}");
    // Every row's state column starts where the header's does.
    let state_at = lines[0].find("state").unwrap();
    for row in &lines[1..4] {
        let shown: String = row.chars().skip(state_at).take(9).collect();
        assert!(
            ["completed", "failed"].iter().any(|s| shown.starts_with(s)),
            "misaligned row {row:?} in\n{table}"
        );
    }
}

/// A non-ASCII id is padded by characters, as `{:<w$}` pads: the column is
/// exactly as wide as the longest id shown.
#[test]
fn non_ascii_ids_are_padded_by_characters() {
    let report = within(30, || {
        let mut g = Graph::<u32>::new();
        g.add(Task::sync("größe", |_| Ok(1))).unwrap();
        g.add(Task::sync("a", |_| Ok(2))).unwrap();
        g.run_blocking()
    });
    let table = report.to_string();
    let header = table.lines().next().unwrap();
    // "größe" is 5 characters (7 bytes): the id column is 5 wide, then two spaces.
    assert!(header.starts_with("task   state"), "{table}");
}
