//! Descriptions of a graph at their edges: DOT of ids that hold a NUL
//! (which a DOT string cannot hold: Graphviz's scanner ended the string
//! there, splitting the node and losing its edge), and the elapsed time of
//! a run with no task (which grew until the report was first read).

use std::time::{Duration, Instant};

use fastexec::graph::{Graph, Task};

#[test]
fn dot_spells_a_nul_in_an_id_and_keeps_ids_apart() {
    let mut g = Graph::<u32>::new();
    g.add(Task::sync("nul\0x", |_| Ok(1))).unwrap();
    // The same id with a backslash and a zero instead of the NUL.
    g.add(Task::sync("nul\\0x", |_| Ok(2))).unwrap();
    g.add(Task::sync("after", |_| Ok(3)).after(["nul\0x", "nul\\0x"]))
        .unwrap();
    let before = g.to_dot();
    let report = g.run_blocking();
    assert!(report.is_success(), "{report}");
    for dot in [before, report.to_dot()] {
        assert!(!dot.contains('\0'), "a raw NUL in {dot:?}");
        assert!(dot.contains("\"nul\\0x\" -> \"after\";"), "{dot}");
        assert!(dot.contains("\"nul\\\\0x\" -> \"after\";"), "{dot}");
    }
}

#[test]
fn a_run_with_no_task_takes_no_time_however_late_its_report_is_read() {
    let before = Instant::now();
    let report = Graph::<u32>::new().run_blocking();
    let ran_for = before.elapsed();
    // Time passes before the report is first read (nothing runs meanwhile).
    let read_at = Instant::now() + ran_for + Duration::from_millis(20);
    while Instant::now() < read_at {
        std::hint::spin_loop();
    }
    assert!(
        report.elapsed() <= ran_for,
        "{:?} elapsed for a run that took {ran_for:?}",
        report.elapsed()
    );
}
