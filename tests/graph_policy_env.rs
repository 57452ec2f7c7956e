//! `SchedulerConfig::from_env` with the real process environment. The
//! environment is process-global, so this binary holds a single test.

use std::time::Duration;

use fastexec::graph::SchedulerConfig;

const VARS: [&str; 6] = [
    "FASTEXEC_CPU_SLOTS",
    "FASTEXEC_RAM_MB_SOFT",
    "FASTEXEC_VRAM_MB_SOFT",
    "FASTEXEC_AGING_INTERVAL_MS",
    "FASTEXEC_AGING_BOOST",
    "FASTEXEC_PAUSE_TIMEOUT_MS",
];

#[test]
fn scheduler_config_from_the_process_environment() {
    for var in VARS {
        std::env::remove_var(var);
    }
    assert_eq!(
        SchedulerConfig::from_env().unwrap(),
        SchedulerConfig::default()
    );

    let values = ["3", "100", "2", "50", "5", "700"];
    for (var, value) in VARS.iter().zip(values) {
        std::env::set_var(var, value);
    }
    let config = SchedulerConfig::from_env().unwrap();
    assert_eq!(config.cpu_slots(), Some(3));
    assert_eq!(config.ram_soft_cap(), Some(100 << 20));
    assert_eq!(config.vram_soft_cap(), Some(2 << 20));
    assert_eq!(config.aging_interval(), Duration::from_millis(50));
    assert_eq!(config.aging_boost(), 5);
    assert_eq!(config.pause_timeout(), Duration::from_millis(700));

    std::env::set_var("FASTEXEC_AGING_INTERVAL_MS", "soon");
    let err = SchedulerConfig::from_env().unwrap_err();
    assert_eq!(err.variable, "FASTEXEC_AGING_INTERVAL_MS");
    assert_eq!(err.value, "soon");
    assert!(err
        .to_string()
        .contains("FASTEXEC_AGING_INTERVAL_MS=\"soon\""));

    // A value that is not Unicode is invalid, not taken as unset.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::env::set_var("FASTEXEC_AGING_INTERVAL_MS", "50");
        std::env::set_var("FASTEXEC_CPU_SLOTS", std::ffi::OsStr::from_bytes(b"4\xff"));
        let err = SchedulerConfig::from_env().unwrap_err();
        assert_eq!(err.variable, "FASTEXEC_CPU_SLOTS");
        assert_eq!(err.value, "4\u{fffd}");
    }

    for var in VARS {
        std::env::remove_var(var);
    }
}
