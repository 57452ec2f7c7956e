//! `Graph::with_capacity` and `Graph::reserve` make room for tasks ahead;
//! the graph then behaves as one grown task by task, also past the room
//! it was given.

mod support;

use fastexec::graph::{Graph, SchedulerConfig, Task};
use support::{cell, lattice_deps, within};

#[test]
fn a_graph_made_with_capacity_runs_a_lattice_also_past_its_capacity() {
    let side = 12;
    // Room for half the cells: the rest grow the tables as usual.
    let mut g = Graph::<u64>::with_capacity(side * side / 2);
    assert!(g.is_empty());
    for r in 0..side {
        for c in 0..side {
            let task = Task::sync(cell(r, c), |inp| Ok(inp.values().sum::<u64>().max(1)));
            g.add(task.after(lattice_deps(r, c))).unwrap();
        }
    }
    assert_eq!(g.len(), side * side);
    let report = within(30, move || g.run_blocking());
    assert!(report.is_success(), "{report}");
    // Paths from the corner: the binomial coefficient C(22, 11).
    assert_eq!(report.output(&cell(side - 1, side - 1)), Some(&705_432));
}

#[test]
fn reserve_makes_room_in_a_graph_with_a_ranked_ready_set() {
    // A budget makes the ready set ranked, whose slots `reserve` sizes.
    let mut g = Graph::<u32>::with_config(SchedulerConfig::new().with_cpu_slots(1));
    g.reserve(100);
    g.reserve(0);
    for n in 0..150u32 {
        g.add(Task::new(format!("t{n}"), move |_| async move { Ok(n) }).priority((n % 3) as i32))
            .unwrap();
    }
    let report = within(30, move || g.run_blocking());
    assert!(report.is_success(), "{report}");
    assert_eq!(report.output("t149"), Some(&149));
}
