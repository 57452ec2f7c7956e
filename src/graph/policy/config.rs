//! [`SchedulerConfig`]: budgets, aging and the pause timeout, from code or
//! from the environment.

use std::sync::Arc;
use std::time::Duration;

use crate::EnvError;

const CPU_SLOTS_ENV: &str = "FASTEXEC_CPU_SLOTS";
const RAM_ENV: &str = "FASTEXEC_RAM_MB_SOFT";
const VRAM_ENV: &str = "FASTEXEC_VRAM_MB_SOFT";
const AGING_INTERVAL_ENV: &str = "FASTEXEC_AGING_INTERVAL_MS";
const AGING_BOOST_ENV: &str = "FASTEXEC_AGING_BOOST";
const PAUSE_TIMEOUT_ENV: &str = "FASTEXEC_PAUSE_TIMEOUT_MS";

const MIB: u64 = 1024 * 1024;

/// Whether a custom resource's cap may be exceeded by one task when no
/// running task holds any of it (soft) or never (hard).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// Never exceeded; a task demanding more than the cap is refused at
    /// submission.
    Hard,
    /// Exceeded by at most one task, and only while no other running task
    /// holds any of it.
    Soft,
}

/// A custom named resource with its cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomResource {
    /// Its name, as used in [`Demand::resource`](crate::graph::Demand::resource).
    pub name: Arc<str>,
    /// How much of it running tasks may hold together.
    pub cap: u64,
    /// Hard or soft cap.
    pub kind: ResourceKind,
}

/// How a graph run schedules its ready tasks: budgets, priority aging and
/// the pause timeout.
///
/// Values that cannot mean anything ([`with_cpu_slots`](Self::with_cpu_slots)
/// of 0, [`with_pause_timeout`](Self::with_pause_timeout) of zero) panic at
/// once, as a programming error, as [`Builder`](crate::Builder)'s invalid
/// sizes do; the same values read from the environment
/// ([`from_env`](Self::from_env)) give an [`EnvError`] instead.
///
/// | setting | default | environment variable |
/// | --- | --- | --- |
/// | CPU slots (hard cap) | unlimited | `FASTEXEC_CPU_SLOTS` (1 or more) |
/// | RAM soft cap | none | `FASTEXEC_RAM_MB_SOFT` (MiB, at most 2^44 - 1) |
/// | VRAM soft cap | none | `FASTEXEC_VRAM_MB_SOFT` (MiB, at most 2^44 - 1) |
/// | aging interval | 1 s | `FASTEXEC_AGING_INTERVAL_MS` (1 or more) |
/// | aging boost | 1 | `FASTEXEC_AGING_BOOST` (0 turns aging off) |
/// | pause timeout | 10 s | `FASTEXEC_PAUSE_TIMEOUT_MS` (1 or more) |
///
/// ```
/// use std::time::Duration;
/// use fastexec::graph::{ResourceKind, SchedulerConfig};
///
/// let config = SchedulerConfig::new()
///     .with_cpu_slots(8)
///     .with_ram_soft_cap(16 << 30)
///     .with_resource("licenses", 2, ResourceKind::Hard)
///     .with_aging(Duration::from_millis(500), 2)
///     .with_pause_timeout(Duration::from_secs(3));
/// assert_eq!(config.cpu_slots(), Some(8));
/// assert_eq!(config.vram_soft_cap(), None);
/// assert_eq!(config.aging_interval(), Duration::from_millis(500));
///
/// // The same from the environment (here a map instead of the process's).
/// let env = |name: &str| match name {
///     "FASTEXEC_CPU_SLOTS" => Some("8".to_string()),
///     "FASTEXEC_AGING_BOOST" => Some("two".to_string()),
///     _ => None,
/// };
/// let err = SchedulerConfig::from_lookup(env).unwrap_err();
/// assert_eq!(err.variable, "FASTEXEC_AGING_BOOST");
/// assert_eq!(err.value, "two");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerConfig {
    cpu_slots: Option<u64>,
    ram_soft_cap: Option<u64>,
    vram_soft_cap: Option<u64>,
    resources: Vec<CustomResource>,
    aging_interval: Duration,
    aging_boost: u32,
    pause_timeout: Duration,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig::new()
    }
}

impl SchedulerConfig {
    /// The defaults: no caps, +1 priority per second waited, 10 s pause
    /// timeout.
    pub fn new() -> SchedulerConfig {
        SchedulerConfig {
            cpu_slots: None,
            ram_soft_cap: None,
            vram_soft_cap: None,
            resources: Vec::new(),
            aging_interval: Duration::from_secs(1),
            aging_boost: 1,
            pause_timeout: Duration::from_secs(10),
        }
    }

    /// The defaults overridden by the `FASTEXEC_*` variables of the process
    /// environment (see the table above).
    ///
    /// # Errors
    ///
    /// An [`EnvError`] naming the first variable whose value is invalid
    /// (a value that is not Unicode is, its bad bytes shown as U+FFFD).
    pub fn from_env() -> Result<SchedulerConfig, EnvError> {
        // Bad bytes replaced rather than the variable read as unset: the
        // value then fails to parse, and is reported.
        SchedulerConfig::from_lookup(|name| {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        })
    }

    /// Like [`from_env`](Self::from_env), reading variables through
    /// `lookup` (a name to its value, `None` if unset).
    ///
    /// # Errors
    ///
    /// An [`EnvError`] naming the first variable whose value is invalid.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<SchedulerConfig, EnvError> {
        let mut config = SchedulerConfig::new();
        let positive = "a whole number from 1 to 18446744073709551615";
        if let Some(n) = parse(&lookup, CPU_SLOTS_ENV, positive, |n: &u64| *n > 0)? {
            config.cpu_slots = Some(n);
        }
        // Caps are counted in bytes: a number of MiB whose bytes a u64
        // cannot hold is refused rather than taken as a cap of u64::MAX.
        let mib = "a whole number of MiB from 0 to 17592186044415";
        let in_bytes = |n: &u64| n.checked_mul(MIB).is_some();
        if let Some(n) = parse(&lookup, RAM_ENV, mib, in_bytes)? {
            config.ram_soft_cap = Some(n * MIB);
        }
        if let Some(n) = parse(&lookup, VRAM_ENV, mib, in_bytes)? {
            config.vram_soft_cap = Some(n * MIB);
        }
        let ms = "a whole number of milliseconds, 1 or more";
        if let Some(n) = parse(&lookup, AGING_INTERVAL_ENV, ms, |n: &u64| *n > 0)? {
            config.aging_interval = Duration::from_millis(n);
        }
        let boost = "a whole number from 0 to 4294967295";
        if let Some(n) = parse(&lookup, AGING_BOOST_ENV, boost, |_: &u32| true)? {
            config.aging_boost = n;
        }
        if let Some(n) = parse(&lookup, PAUSE_TIMEOUT_ENV, ms, |n: &u64| *n > 0)? {
            config.pause_timeout = Duration::from_millis(n);
        }
        Ok(config)
    }

    /// At most `slots` CPU slots held by running tasks (a hard cap). A task
    /// demanding more than the cap is refused when it is added
    /// ([`GraphError::ExceedsCap`](crate::graph::GraphError::ExceedsCap)).
    ///
    /// # Panics
    ///
    /// If `slots` is 0: every task demands one slot unless told otherwise,
    /// so no such task could ever run (a task that needs no slot says so
    /// with [`Demand::cpu_slots(0)`](crate::graph::Demand::cpu_slots), and
    /// no cap is set by not calling this).
    ///
    /// ```should_panic
    /// let _ = fastexec::graph::SchedulerConfig::new().with_cpu_slots(0);
    /// ```
    pub fn with_cpu_slots(mut self, slots: u64) -> SchedulerConfig {
        assert!(
            slots > 0,
            "SchedulerConfig::with_cpu_slots(0): a CPU slot cap must be 1 or more"
        );
        self.cpu_slots = Some(slots);
        self
    }

    /// A soft cap of `bytes` of RAM held by running tasks.
    pub fn with_ram_soft_cap(mut self, bytes: u64) -> SchedulerConfig {
        self.ram_soft_cap = Some(bytes);
        self
    }

    /// A soft cap of `bytes` of VRAM held by running tasks.
    pub fn with_vram_soft_cap(mut self, bytes: u64) -> SchedulerConfig {
        self.vram_soft_cap = Some(bytes);
        self
    }

    /// Declares the custom resource `name` with its cap (replacing an
    /// earlier declaration of the same name).
    pub fn with_resource(
        mut self,
        name: impl Into<Arc<str>>,
        cap: u64,
        kind: ResourceKind,
    ) -> SchedulerConfig {
        let name = name.into();
        self.resources.retain(|r| r.name != name);
        self.resources.push(CustomResource { name, cap, kind });
        self
    }

    /// Ready tasks gain `boost` priority per `interval` waited (a zero
    /// `boost` turns aging off; a zero `interval` counts as 1 ns). A task
    /// waits from when it became ready: for one ready when added with
    /// [`Graph::add`](crate::graph::Graph::add) before the run starts, from
    /// when it was added, so a graph built long before it is run starts
    /// with those tasks aged by that time.
    pub fn with_aging(mut self, interval: Duration, boost: u32) -> SchedulerConfig {
        self.aging_interval = interval;
        self.aging_boost = boost;
        self
    }

    /// How long a running task has to reach a checkpoint after a pause
    /// request before it is cancelled. A timeout too long for an
    /// [`Instant`](std::time::Instant), such as `Duration::MAX`, means no
    /// limit: the pause waits for the checkpoint as long as it takes.
    ///
    /// # Panics
    ///
    /// If `timeout` is zero: a running task would be cancelled by every
    /// pause before it could reach a checkpoint (as a task's own zero
    /// timeout is refused, see
    /// [`GraphError::ZeroTimeout`](crate::graph::GraphError::ZeroTimeout)).
    pub fn with_pause_timeout(mut self, timeout: Duration) -> SchedulerConfig {
        assert!(
            !timeout.is_zero(),
            "SchedulerConfig::with_pause_timeout(0): a pause timeout must be positive"
        );
        self.pause_timeout = timeout;
        self
    }

    /// The CPU slot cap (`None`: unlimited).
    pub fn cpu_slots(&self) -> Option<u64> {
        self.cpu_slots
    }

    /// The RAM soft cap in bytes (`None`: none).
    pub fn ram_soft_cap(&self) -> Option<u64> {
        self.ram_soft_cap
    }

    /// The VRAM soft cap in bytes (`None`: none).
    pub fn vram_soft_cap(&self) -> Option<u64> {
        self.vram_soft_cap
    }

    /// The declared custom resources.
    pub fn resources(&self) -> &[CustomResource] {
        &self.resources
    }

    /// The aging interval.
    pub fn aging_interval(&self) -> Duration {
        self.aging_interval
    }

    /// The priority gained per aging interval.
    pub fn aging_boost(&self) -> u32 {
        self.aging_boost
    }

    /// The pause timeout.
    pub fn pause_timeout(&self) -> Duration {
        self.pause_timeout
    }
}

/// Reads `variable`: `None` if unset, the value if it parses and is `valid`.
fn parse<T: std::str::FromStr>(
    lookup: &impl Fn(&str) -> Option<String>,
    variable: &'static str,
    expected: &'static str,
    valid: impl Fn(&T) -> bool,
) -> Result<Option<T>, EnvError> {
    let Some(value) = lookup(variable) else {
        return Ok(None);
    };
    match value.trim().parse::<T>() {
        Ok(n) if valid(&n) => Ok(Some(n)),
        _ => Err(EnvError {
            variable,
            value,
            expected,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(pairs: &[(&str, &str)]) -> Result<SchedulerConfig, EnvError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        SchedulerConfig::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn nothing_set_gives_the_defaults() {
        assert_eq!(from(&[]).unwrap(), SchedulerConfig::default());
    }

    #[test]
    fn every_variable_is_read() {
        let config = from(&[
            ("FASTEXEC_CPU_SLOTS", "4"),
            ("FASTEXEC_RAM_MB_SOFT", " 2048 "),
            ("FASTEXEC_VRAM_MB_SOFT", "8"),
            ("FASTEXEC_AGING_INTERVAL_MS", "250"),
            ("FASTEXEC_AGING_BOOST", "0"),
            ("FASTEXEC_PAUSE_TIMEOUT_MS", "1500"),
        ])
        .unwrap();
        assert_eq!(config.cpu_slots(), Some(4));
        assert_eq!(config.ram_soft_cap(), Some(2048 * MIB));
        assert_eq!(config.vram_soft_cap(), Some(8 * MIB));
        assert_eq!(config.aging_interval(), Duration::from_millis(250));
        assert_eq!(config.aging_boost(), 0);
        assert_eq!(config.pause_timeout(), Duration::from_millis(1500));
    }

    #[test]
    fn a_bad_value_names_the_variable_and_the_value() {
        let cases = [
            ("FASTEXEC_CPU_SLOTS", "0"),
            ("FASTEXEC_CPU_SLOTS", "-1"),
            ("FASTEXEC_RAM_MB_SOFT", "lots"),
            ("FASTEXEC_VRAM_MB_SOFT", "1.5"),
            ("FASTEXEC_RAM_MB_SOFT", "17592186044416"),
            ("FASTEXEC_AGING_INTERVAL_MS", "0"),
            ("FASTEXEC_AGING_BOOST", "4294967296"),
            ("FASTEXEC_PAUSE_TIMEOUT_MS", ""),
        ];
        for (variable, value) in cases {
            let err = from(&[(variable, value)]).unwrap_err();
            assert_eq!((err.variable, err.value.as_str()), (variable, value));
            assert!(err
                .to_string()
                .starts_with(&format!("{variable}={value:?} is invalid")));
        }
    }

    #[test]
    fn the_largest_mib_cap_whose_bytes_fit_is_taken_as_is() {
        let largest = u64::MAX / MIB;
        assert_eq!(largest, 17_592_186_044_415, "the error message's bound");
        let config = from(&[("FASTEXEC_RAM_MB_SOFT", &largest.to_string())]).unwrap();
        assert_eq!(config.ram_soft_cap(), Some(largest * MIB));
        let err = from(&[("FASTEXEC_VRAM_MB_SOFT", &(largest + 1).to_string())]).unwrap_err();
        assert_eq!(err.variable, "FASTEXEC_VRAM_MB_SOFT");
    }

    #[test]
    fn resources_are_replaced_by_name() {
        let config = SchedulerConfig::new()
            .with_resource("gpu", 1, ResourceKind::Hard)
            .with_resource("gpu", 2, ResourceKind::Soft);
        assert_eq!(config.resources().len(), 1);
        assert_eq!(config.resources()[0].cap, 2);
        assert_eq!(config.resources()[0].kind, ResourceKind::Soft);
    }
}
