//! `SchedulerConfig`'s builders refuse values that cannot mean anything,
//! as the environment does: a CPU slot cap of 0 (no task with the default
//! demand of one slot could ever run; each was refused when added) and a
//! zero pause timeout (every pause of a running task would cancel it). Both
//! panic at once, as the executor `Builder`'s invalid sizes do. The values
//! next to them that do mean something are still accepted.

use std::time::Duration;

use fastexec::graph::{Demand, Graph, GraphError, ResourceKind, SchedulerConfig, Task};

#[test]
#[should_panic(expected = "SchedulerConfig::with_cpu_slots(0): a CPU slot cap must be 1 or more")]
fn a_cpu_slot_cap_of_zero_panics() {
    let _ = SchedulerConfig::new().with_cpu_slots(0);
}

#[test]
#[should_panic(
    expected = "SchedulerConfig::with_pause_timeout(0): a pause timeout must be positive"
)]
fn a_zero_pause_timeout_panics() {
    let _ = SchedulerConfig::new().with_pause_timeout(Duration::ZERO);
}

#[test]
fn the_smallest_meaningful_values_are_accepted() {
    let config = SchedulerConfig::new()
        .with_cpu_slots(1)
        .with_pause_timeout(Duration::from_nanos(1))
        // Zero soft caps serialise the tasks that need any; a zero hard cap
        // of a custom resource refuses them (none of it here).
        .with_ram_soft_cap(0)
        .with_vram_soft_cap(0)
        .with_resource("gpu", 0, ResourceKind::Hard)
        .with_aging(Duration::ZERO, 0);
    assert_eq!(config.cpu_slots(), Some(1));
    assert_eq!(config.pause_timeout(), Duration::from_nanos(1));
    let mut g = Graph::<u32>::with_config(config);
    g.add(Task::new("one_slot", |_| async { Ok(1) })).unwrap();
    let err = g
        .add(Task::new("gpu", |_| async { Ok(2) }).demand(Demand::new().resource("gpu", 1)))
        .unwrap_err();
    assert!(matches!(err, GraphError::ExceedsCap { .. }), "{err:?}");
    let report = fastexec::block_on(g.start().wait_all());
    assert!(report.is_success(), "{report}");
}

#[test]
fn the_environment_refuses_the_same_values() {
    for (variable, value) in [
        ("FASTEXEC_CPU_SLOTS", "0"),
        ("FASTEXEC_PAUSE_TIMEOUT_MS", "0"),
    ] {
        let err = SchedulerConfig::from_lookup(|name| (name == variable).then(|| value.into()))
            .unwrap_err();
        assert_eq!((err.variable, err.value.as_str()), (variable, value));
    }
}
