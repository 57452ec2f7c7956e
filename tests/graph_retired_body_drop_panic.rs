//! A task body whose captured value panics when dropped. Bodies are kept
//! until their task ends (so that a retry can call them again) and dropped
//! by `wait_all`, here when the run ends (`graph_body_sweep.rs` has the
//! drops while it goes on); a panic from one of them must not take the
//! report away from the caller, nor keep the other bodies from being
//! dropped. Before the fix the panic unwound out of `wait_all` (and so out
//! of `Graph::run`).

mod support;

use fastexec::graph::{Graph, Task};
use support::{within, DropCounter, PanicOnDrop};

#[test]
fn wait_all_gives_the_report_though_a_retired_body_panics_when_dropped() {
    let drops = DropCounter::new();
    let mut g = Graph::<u32>::new();
    for (id, value) in [("first", 1), ("second", 2)] {
        let captured = PanicOnDrop::with_value(value, drops.guard());
        g.add(Task::sync(id, move |_| {
            // The whole value, not only its field (closures capture fields).
            let captured = &captured;
            Ok(captured.value)
        }))
        .unwrap();
    }
    g.add(Task::sync("plain", |_| Ok(3)).after(["first", "second"]))
        .unwrap();
    support::quiet_panics(support::PANIC_ON_DROP);
    let report = within(30, move || {
        let executor = fastexec::Executor::builder().threads(1).build().unwrap();
        executor.block_on(g.run())
    });
    assert!(report.is_success(), "{report}");
    assert_eq!(report.output("first"), Some(&1));
    assert_eq!(report.output("second"), Some(&2));
    assert_eq!(report.output("plain"), Some(&3));
    assert_eq!(drops.count(), 2, "both bodies were dropped");
}
