//! Resource budgets: what a task needs ([`Demand`]) and what is free
//! ([`Budget`]).
//!
//! CPU slots are a hard cap: a task demanding more than the cap could never
//! run, so it is refused at submission ([`Budget::check_submission`]), and
//! running tasks never hold more than the cap. RAM and VRAM are soft caps:
//! normally `in use + demand <= cap`, but when no running task holds any of
//! the resource one task may exceed its cap (the escape rule), so a task
//! bigger than the soft cap still runs, alone as far as that resource goes.
//! Custom named resources are hard or soft, each with its cap. A task that
//! demands none of a resource (0) is never held back by it, even while an
//! escaped task holds more than the cap; and, the other way round, it does
//! not hold back an escape either.
//!
//! The escape looks at the resource, not at whether anything runs (seed
//! 002 says "when no tasks are running"): a running task that holds none
//! of the resource, such as a parent with no demand waiting for a subflow
//! (which is what `ready.rs` advises), would otherwise keep an oversized
//! child of its waiting forever, and whether an oversized task may start
//! next to a task that needs none of the resource would depend on which of
//! the two started first.
//!
//! A running task holds its demand until it ends, even while it waits for
//! other tasks of its graph; the ready set (`ready.rs`, "Resource fit,
//! look-ahead and starvation") lets only a bounded number of smaller tasks
//! pass a task that waits for capacity, so such a waiting parent should
//! demand nothing (`cpu_slots(0)`) if it needs many of them.

use std::fmt;
use std::sync::Arc;

use super::config::{ResourceKind, SchedulerConfig};
use crate::graph::{GraphError, TaskId};

/// What a task needs while it runs: CPU slots (1 by default), RAM and VRAM
/// bytes, and amounts of named custom resources.
///
/// ```
/// use fastexec::graph::Demand;
///
/// let d = Demand::new()
///     .cpu_slots(2)
///     .ram_mib(512)
///     .vram_bytes(1 << 30)
///     .resource("licenses", 1);
/// assert_eq!(d.cpu(), 2);
/// assert_eq!(d.ram(), 512 * 1024 * 1024);
/// assert_eq!(d.vram(), 1 << 30);
/// assert_eq!(d.amount_of("licenses"), 1);
/// assert_eq!(d.amount_of("anything else"), 0);
/// assert_eq!(Demand::default().cpu(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Demand {
    cpu: u64,
    ram: u64,
    vram: u64,
    custom: Vec<(Arc<str>, u64)>,
}

impl Default for Demand {
    fn default() -> Self {
        Demand::new()
    }
}

const MIB: u64 = 1024 * 1024;

impl Demand {
    /// One CPU slot, nothing else.
    pub fn new() -> Demand {
        Demand {
            cpu: 1,
            ram: 0,
            vram: 0,
            custom: Vec::new(),
        }
    }

    /// Needs `slots` CPU slots (0: takes no slot at all).
    pub fn cpu_slots(mut self, slots: u64) -> Demand {
        self.cpu = slots;
        self
    }

    /// Needs `bytes` of RAM.
    pub fn ram_bytes(mut self, bytes: u64) -> Demand {
        self.ram = bytes;
        self
    }

    /// Needs `mib` MiB of RAM (saturating).
    pub fn ram_mib(self, mib: u64) -> Demand {
        self.ram_bytes(mib.saturating_mul(MIB))
    }

    /// Needs `bytes` of VRAM.
    pub fn vram_bytes(mut self, bytes: u64) -> Demand {
        self.vram = bytes;
        self
    }

    /// Needs `mib` MiB of VRAM (saturating).
    pub fn vram_mib(self, mib: u64) -> Demand {
        self.vram_bytes(mib.saturating_mul(MIB))
    }

    /// Needs `amount` of the custom resource `name` (replacing an earlier
    /// amount for the same name). The name must be declared in the
    /// [`SchedulerConfig`](crate::graph::SchedulerConfig), or the task is
    /// refused at submission.
    pub fn resource(mut self, name: impl Into<Arc<str>>, amount: u64) -> Demand {
        let name = name.into();
        match self.custom.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = amount,
            None => self.custom.push((name, amount)),
        }
        self
    }

    /// CPU slots needed.
    pub fn cpu(&self) -> u64 {
        self.cpu
    }

    /// RAM bytes needed.
    pub fn ram(&self) -> u64 {
        self.ram
    }

    /// VRAM bytes needed.
    pub fn vram(&self) -> u64 {
        self.vram
    }

    /// How much of the custom resource `name` is needed (0 if not named).
    pub fn amount_of(&self, name: &str) -> u64 {
        self.custom
            .iter()
            .find(|(n, _)| &**n == name)
            .map_or(0, |(_, a)| *a)
    }

    /// The custom resources needed, with their amounts.
    pub fn resources(&self) -> impl Iterator<Item = (&str, u64)> {
        self.custom.iter().map(|(n, a)| (&**n, *a))
    }
}

/// A kind of resource a budget limits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Resource {
    /// CPU slots (hard cap).
    Cpu,
    /// RAM bytes (soft cap).
    Ram,
    /// VRAM bytes (soft cap).
    Vram,
    /// A custom resource declared in the config, by name.
    Custom(Arc<str>),
}

impl fmt::Display for Resource {
    /// The unit, in the plural: "cpu slots", "bytes of RAM", "bytes of
    /// VRAM", "units of `gpu`". Messages that give an amount
    /// ([`BudgetFull`], [`GraphError::ExceedsCap`](crate::graph::GraphError::ExceedsCap))
    /// use the singular for 1: "needs 1 unit of `gpu`".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::Cpu => f.write_str("cpu slots"),
            Resource::Ram => f.write_str("bytes of RAM"),
            Resource::Vram => f.write_str("bytes of VRAM"),
            Resource::Custom(name) => write!(f, "units of `{name}`"),
        }
    }
}

impl Resource {
    /// `amount` of this resource, for messages: "1 cpu slot", "4 cpu
    /// slots", "1 unit of `gpu`".
    pub(crate) fn amount(&self, amount: u64) -> impl fmt::Display + '_ {
        Amount {
            resource: self,
            amount,
        }
    }
}

/// See [`Resource::amount`].
struct Amount<'a> {
    resource: &'a Resource,
    amount: u64,
}

impl fmt::Display for Amount<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.amount;
        if n != 1 {
            return write!(f, "{n} {}", self.resource);
        }
        match self.resource {
            Resource::Cpu => f.write_str("1 cpu slot"),
            Resource::Ram => f.write_str("1 byte of RAM"),
            Resource::Vram => f.write_str("1 byte of VRAM"),
            Resource::Custom(name) => write!(f, "1 unit of `{name}`"),
        }
    }
}

/// A task's demand does not fit in what is free right now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("budget full: needs {}, {in_use} in use of {cap}", .resource.amount(*.demand))]
pub struct BudgetFull {
    /// The resource that is short.
    pub resource: Resource,
    /// How much the task needs.
    pub demand: u64,
    /// How much running tasks hold.
    pub in_use: u64,
    /// The cap.
    pub cap: u64,
}

/// One limited resource.
#[derive(Debug, Clone)]
struct Limit {
    resource: Resource,
    /// `None`: unlimited (nothing is tracked against it).
    cap: Option<u64>,
    hard: bool,
    in_use: u64,
}

impl Limit {
    fn new(resource: Resource, cap: Option<u64>, hard: bool) -> Limit {
        Limit {
            resource,
            cap,
            hard,
            in_use: 0,
        }
    }

    /// Whether `demand` may be taken now: within the cap, or, for a soft
    /// cap, by the escape rule while no running task holds any of it. A
    /// sum past `u64::MAX` is over any cap (saturated, it would equal a cap
    /// of `u64::MAX` and fit).
    fn admit(&self, demand: u64) -> Result<(), BudgetFull> {
        let Some(cap) = self.cap else { return Ok(()) };
        let fits = demand == 0
            || self
                .in_use
                .checked_add(demand)
                .is_some_and(|sum| sum <= cap);
        if fits || (self.in_use == 0 && !self.hard) {
            return Ok(());
        }
        Err(BudgetFull {
            resource: self.resource.clone(),
            demand,
            in_use: self.in_use,
            cap,
        })
    }

    /// A demand that can never fit under a hard cap.
    fn never_fits(&self, demand: u64) -> Option<u64> {
        self.cap.filter(|&cap| self.hard && demand > cap)
    }
}

/// What running tasks hold against the caps of a [`SchedulerConfig`].
///
/// Lives in the graph's state under its mutex: the core checks
/// submissions, offers `|node| budget.check(&demand[node]).is_ok()` as the
/// ready set's `fits`, then `try_acquire`s the picked task's demand and
/// `release`s it when the task stops running.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    cpu: Limit,
    ram: Limit,
    vram: Limit,
    custom: Vec<Limit>,
}

impl Budget {
    pub(crate) fn new(config: &SchedulerConfig) -> Budget {
        let custom = config
            .resources()
            .iter()
            .map(|r| {
                let resource = Resource::Custom(r.name.clone());
                Limit::new(resource, Some(r.cap), r.kind == ResourceKind::Hard)
            })
            .collect();
        Budget {
            cpu: Limit::new(Resource::Cpu, config.cpu_slots(), true),
            ram: Limit::new(Resource::Ram, config.ram_soft_cap(), false),
            vram: Limit::new(Resource::Vram, config.vram_soft_cap(), false),
            custom,
        }
    }

    /// Refuses a task that could never run: more CPU slots (or of a hard
    /// custom resource) than the cap, or a custom resource not declared.
    pub(crate) fn check_submission(
        &self,
        task: &TaskId,
        demand: &Demand,
    ) -> Result<(), GraphError> {
        let exceeds = |limit: &Limit, amount: u64| match limit.never_fits(amount) {
            Some(cap) => Err(GraphError::ExceedsCap {
                task: task.clone(),
                resource: limit.resource.clone(),
                demand: amount,
                cap,
            }),
            None => Ok(()),
        };
        exceeds(&self.cpu, demand.cpu)?;
        for (name, amount) in demand.resources() {
            match self.custom_limit(name) {
                Some(limit) => exceeds(limit, amount)?,
                None => {
                    return Err(GraphError::UnknownResource {
                        task: task.clone(),
                        resource: name.into(),
                    })
                }
            }
        }
        Ok(())
    }

    /// The index in `custom` of the resource `name`.
    fn custom_index(&self, name: &str) -> Option<usize> {
        self.custom
            .iter()
            .position(|l| matches!(&l.resource, Resource::Custom(n) if &**n == name))
    }

    fn custom_limit(&self, name: &str) -> Option<&Limit> {
        self.custom_index(name).map(|i| &self.custom[i])
    }

    /// Each limit with the amount `demand` needs of it. Undeclared custom
    /// resources are skipped (submission refuses them).
    fn needs<'a>(&'a self, demand: &'a Demand) -> impl Iterator<Item = (usize, u64)> + 'a {
        let builtin = [(0, demand.cpu), (1, demand.ram), (2, demand.vram)];
        let custom = demand
            .resources()
            .filter_map(move |(name, amount)| Some((3 + self.custom_index(name)?, amount)));
        builtin.into_iter().chain(custom)
    }

    fn limit_mut(&mut self, i: usize) -> &mut Limit {
        match i {
            0 => &mut self.cpu,
            1 => &mut self.ram,
            2 => &mut self.vram,
            _ => &mut self.custom[i - 3],
        }
    }

    fn limit(&self, i: usize) -> &Limit {
        match i {
            0 => &self.cpu,
            1 => &self.ram,
            2 => &self.vram,
            _ => &self.custom[i - 3],
        }
    }

    /// Whether `demand` could be acquired now (nothing changes).
    pub(crate) fn check(&self, demand: &Demand) -> Result<(), BudgetFull> {
        self.needs(demand)
            .try_for_each(|(i, amount)| self.limit(i).admit(amount))
    }

    /// Takes `demand` if it fits (see the module docs for the escape rule).
    pub(crate) fn try_acquire(&mut self, demand: &Demand) -> Result<(), BudgetFull> {
        self.check(demand)?;
        let needs: Vec<(usize, u64)> = self.needs(demand).collect();
        for (i, amount) in needs {
            let limit = self.limit_mut(i);
            limit.in_use = limit.in_use.saturating_add(amount);
        }
        Ok(())
    }

    /// Gives back a demand taken by [`try_acquire`](Self::try_acquire).
    pub(crate) fn release(&mut self, demand: &Demand) {
        let needs: Vec<(usize, u64)> = self.needs(demand).collect();
        for (i, amount) in needs {
            let limit = self.limit_mut(i);
            limit.in_use = limit.in_use.saturating_sub(amount);
        }
    }

    /// How much of `resource` running tasks hold (0 for an undeclared one).
    #[cfg(test)]
    fn in_use(&self, resource: &Resource) -> u64 {
        match resource {
            Resource::Cpu => self.cpu.in_use,
            Resource::Ram => self.ram.in_use,
            Resource::Vram => self.vram.in_use,
            Resource::Custom(name) => self.custom_limit(name).map_or(0, |l| l.in_use),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::policy::config::ResourceKind::{Hard, Soft};

    fn id(s: &str) -> TaskId {
        TaskId::from(s)
    }

    #[test]
    fn cpu_above_the_cap_is_refused_at_submission_naming_everything() {
        let budget = Budget::new(&SchedulerConfig::new().with_cpu_slots(4));
        assert!(budget
            .check_submission(&id("a"), &Demand::new().cpu_slots(4))
            .is_ok());
        let err = budget
            .check_submission(&id("big"), &Demand::new().cpu_slots(5))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "task `big` demands 5 cpu slots, more than the cap of 4"
        );
        assert!(matches!(
            err,
            GraphError::ExceedsCap {
                resource: Resource::Cpu,
                demand: 5,
                cap: 4,
                ..
            }
        ));
    }

    #[test]
    fn unlimited_cpu_admits_anything() {
        let mut budget = Budget::new(&SchedulerConfig::new());
        let huge = Demand::new().cpu_slots(1 << 40);
        assert!(budget.check_submission(&id("a"), &huge).is_ok());
        assert!(budget.try_acquire(&huge).is_ok());
        assert!(budget.try_acquire(&huge).is_ok());
    }

    #[test]
    fn cpu_is_a_hard_cap_even_when_idle() {
        let mut budget = Budget::new(&SchedulerConfig::new().with_cpu_slots(2));
        let one = Demand::new();
        budget.try_acquire(&one).unwrap();
        budget.try_acquire(&one).unwrap();
        let full = budget.try_acquire(&one).unwrap_err();
        assert_eq!(
            full,
            BudgetFull {
                resource: Resource::Cpu,
                demand: 1,
                in_use: 2,
                cap: 2
            }
        );
        assert_eq!(
            full.to_string(),
            "budget full: needs 1 cpu slot, 2 in use of 2"
        );
        budget.release(&one);
        assert!(budget.try_acquire(&one).is_ok());
        assert_eq!(budget.in_use(&Resource::Cpu), 2);
    }

    #[test]
    fn amounts_of_one_are_singular_in_messages() {
        let gpu = Resource::Custom("gpu".into());
        let said = |r: &Resource, n| r.amount(n).to_string();
        assert_eq!(said(&Resource::Cpu, 1), "1 cpu slot");
        assert_eq!(said(&Resource::Cpu, 0), "0 cpu slots");
        assert_eq!(said(&Resource::Ram, 1), "1 byte of RAM");
        assert_eq!(said(&Resource::Vram, 2), "2 bytes of VRAM");
        assert_eq!(said(&gpu, 1), "1 unit of `gpu`");
        assert_eq!(said(&gpu, 3), "3 units of `gpu`");
        let full = BudgetFull {
            resource: gpu,
            demand: 1,
            in_use: 1,
            cap: 1,
        };
        assert_eq!(
            full.to_string(),
            "budget full: needs 1 unit of `gpu`, 1 in use of 1"
        );
    }

    #[test]
    fn ram_is_soft_with_the_escape_rule() {
        let config = SchedulerConfig::new().with_ram_soft_cap(100);
        let mut budget = Budget::new(&config);
        let big = Demand::new().ram_bytes(150);
        let small = Demand::new().ram_bytes(10);
        // Over the soft cap, but nothing runs: it may run, alone.
        assert!(budget.check_submission(&id("big"), &big).is_ok());
        budget.try_acquire(&big).unwrap();
        assert_eq!(budget.in_use(&Resource::Ram), 150);
        let err = budget.try_acquire(&small).unwrap_err();
        assert_eq!(err.resource, Resource::Ram);
        assert_eq!((err.demand, err.in_use, err.cap), (10, 150, 100));
        // A task needing no RAM is not held back by the escaped one.
        assert!(budget.try_acquire(&Demand::new()).is_ok());
        budget.release(&Demand::new());
        budget.release(&big);
        assert_eq!(budget.in_use(&Resource::Ram), 0);
        // Within the cap, several run together; over it, they wait.
        for _ in 0..10 {
            budget.try_acquire(&small).unwrap();
        }
        assert!(budget.try_acquire(&small).is_err());
        assert!(budget.try_acquire(&big).is_err(), "escape only when idle");
    }

    #[test]
    fn vram_is_soft_too() {
        let mut budget = Budget::new(&SchedulerConfig::new().with_vram_soft_cap(8));
        budget.try_acquire(&Demand::new().vram_bytes(6)).unwrap();
        let err = budget.check(&Demand::new().vram_bytes(6)).unwrap_err();
        assert_eq!(err.resource, Resource::Vram);
        assert!(budget.check(&Demand::new().vram_bytes(2)).is_ok());
    }

    #[test]
    fn custom_resources_are_hard_or_soft() {
        let config = SchedulerConfig::new()
            .with_resource("licenses", 2, Hard)
            .with_resource("disk-io", 10, Soft);
        let mut budget = Budget::new(&config);
        let err = budget
            .check_submission(&id("t"), &Demand::new().resource("licenses", 3))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "task `t` demands 3 units of `licenses`, more than the cap of 2"
        );
        let err = budget
            .check_submission(&id("t"), &Demand::new().resource("gpus", 1))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "task `t` demands resource `gpus`, which the scheduler config does not declare"
        );
        // Soft: one over-cap task when idle.
        let io = Demand::new().resource("disk-io", 15);
        assert!(budget.check_submission(&id("io"), &io).is_ok());
        budget.try_acquire(&io).unwrap();
        let lic = Demand::new().resource("licenses", 2);
        budget.try_acquire(&lic).unwrap();
        let err = budget
            .try_acquire(&Demand::new().resource("licenses", 1))
            .unwrap_err();
        assert_eq!(err.resource, Resource::Custom("licenses".into()));
        assert_eq!((err.in_use, err.cap), (2, 2));
        budget.release(&lic);
        assert_eq!(budget.in_use(&Resource::Custom("licenses".into())), 0);
        assert_eq!(budget.in_use(&Resource::Custom("disk-io".into())), 15);
    }

    #[test]
    fn a_sum_past_u64_max_does_not_fit_a_cap_near_it() {
        // A cap of u64::MAX slots, a task holding all of them: one more
        // slot is over the hard cap. Saturated, the sum was the cap and
        // fit, so both ran; releasing the big one then left nothing
        // counted for the small one, and another big one fit beside it.
        let mut budget = Budget::new(&SchedulerConfig::new().with_cpu_slots(u64::MAX));
        let all = Demand::new().cpu_slots(u64::MAX);
        let one = Demand::new();
        budget.try_acquire(&all).unwrap();
        let full = budget.try_acquire(&one).unwrap_err();
        assert_eq!((full.in_use, full.cap), (u64::MAX, u64::MAX));
        // The same on a hard custom resource, and on a soft cap past its
        // escape (something holds it, so no second task may exceed it).
        let config = SchedulerConfig::new()
            .with_resource("tokens", u64::MAX, Hard)
            .with_ram_soft_cap(u64::MAX);
        let mut budget = Budget::new(&config);
        budget
            .try_acquire(&Demand::new().resource("tokens", u64::MAX - 1))
            .unwrap();
        assert!(budget.check(&Demand::new().resource("tokens", 2)).is_err());
        budget
            .try_acquire(&Demand::new().ram_bytes(u64::MAX))
            .unwrap();
        assert!(budget.check(&Demand::new().ram_bytes(1)).is_err());
    }

    #[test]
    fn hard_custom_resource_has_no_escape() {
        let config = SchedulerConfig::new().with_resource("slots", 1, Hard);
        let mut budget = Budget::new(&config);
        let one = Demand::new().resource("slots", 1);
        budget.try_acquire(&one).unwrap();
        budget.release(&one);
        assert_eq!(budget.in_use(&Resource::Custom("slots".into())), 0);
        budget.try_acquire(&one).unwrap();
        assert!(budget.try_acquire(&one).is_err());
    }
}
