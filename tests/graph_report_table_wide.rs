//! The printed report pads its id column by display width: a terminal
//! gives East Asian wide characters and most emoji two columns each, and
//! combining marks none, so a row whose id holds them still has its later
//! columns under their headers. (Before, it padded by `chars().count()`,
//! what `{:<w$}` counts: such a row pushed every later column to the
//! right, or left.)

mod support;

use fastexec::graph::{Graph, Task};
use support::within;

/// Terminal columns of `s`, enough for the ids below: CJK ideographs,
/// Hangul, full-width forms and pictographic emoji are two columns,
/// combining marks none, everything else one.
fn columns(s: &str) -> usize {
    s.chars()
        .map(|c| match c as u32 {
            0x0300..=0x036F => 0,
            0x1100..=0x115F
            | 0x2E80..=0xA4CF
            | 0xAC00..=0xD7A3
            | 0xF900..=0xFAFF
            | 0xFF00..=0xFF60
            | 0x1F300..=0x1F64F
            | 0x1F680..=0x1F6FF
            | 0x1F900..=0x1F9FF => 2,
            _ => 1,
        })
        .sum()
}

#[test]
fn ids_are_padded_by_display_width_so_columns_align_on_a_terminal() {
    let report = within(30, || {
        let mut g = Graph::<u32>::new();
        g.add(Task::sync("コンパイル", |_| Ok(1))).unwrap(); // 5 chars, 10 columns
        g.add(Task::sync("deploy🚀", |_| Ok(2))).unwrap(); // 7 chars, 8 columns
        g.add(Task::sync("cafe\u{301}", |_| Ok(3))).unwrap(); // 5 chars, 4 columns
        g.add(Task::sync("link", |_| Ok(4)).after(["コンパイル", "deploy🚀", "cafe\u{301}"]))
            .unwrap();
        g.run_blocking()
    });
    let table = report.to_string();
    let lines: Vec<&str> = table.lines().collect();
    let header = lines[0];
    let state_col = columns(&header[..header.find("state").unwrap()]);
    let mut misaligned = Vec::new();
    for row in &lines[1..5] {
        let at = row.find("completed").unwrap();
        let col = columns(&row[..at]);
        if col != state_col {
            misaligned.push(format!(
                "{row:?}: state at column {col}, header at {state_col}"
            ));
        }
    }
    assert!(misaligned.is_empty(), "{}\n{table}", misaligned.join("\n"));
}
