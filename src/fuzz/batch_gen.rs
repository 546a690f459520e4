//! Random batch scenarios (P2): the part of [`super::generate`] that draws a batch job, its
//! recovery settings and its faults. Shared by fuzz campaigns and the batch property test, so
//! both explore the same space.
//!
//! What it draws, and why:
//! - `src` (2–3 subtasks reading 1–9 splits) → a chain of 0–2 maps (forward, or all-to-all with
//!   a parallelism of their own) → `agg` (`"auto"` parallelism) → `sink`; sometimes a second
//!   path `src` → `side` → `agg` (a diamond, so a sink counts a split once per path), sometimes
//!   a second source `src2` feeding `agg` directly;
//! - internal or remote shuffle, coordinators with or without batch snapshots, a shuffle
//!   master that sometimes cannot snapshot (no recovery), TaskManagers that sometimes release
//!   partitions on losing the JobManager (F2.1);
//! - the job event store's flush interval, buffer size and `snapshot_min_pause`, so finished
//!   events are lost, kept without a snapshot (F2.3's discard) or kept with one;
//! - 1–3 JobManager crashes (a second one often lands in the recovery window), 0–2
//!   TaskManagers lost or cut off for up to 120ms (some return after
//!   `previous_worker_timeout`), and sometimes a failed source or map subtask;
//! - in one scenario of three `failover: reconcile` (P3) with a window and a retention that
//!   may be shorter than the outage.
//!
//! Under `fuzz --strategy swarm`, [`BatchSpec::configure`] then switches each of these
//! features off or on as the seed's [`BatchSwarm`] says ([`super::swarm`]).

use super::swarm::{BatchFeature, BatchSwarm};
use proptest::prelude::*;
use serde_json::{json, Value};

/// The drawn shape of a batch scenario.
#[derive(Clone, Debug)]
pub struct BatchSpec {
    pub parallelism: u32,
    pub splits: u32,
    pub diamond: bool,
    pub remote: bool,
    pub coordinator_snapshot: bool,
    pub shuffle_snapshot: bool,
    pub keep_partitions: bool,
    /// F2.5: TaskManagers release kept partitions this long (µs) after they lose the
    /// JobManager without finding a new one; `None`: they keep them.
    pub registration_timeout_us: Option<u64>,
    pub flush_us: u64,
    pub buffer_size: u64,
    pub min_pause_us: u64,
    pub faults: Vec<Value>,
    /// `failover: reconcile` (P3) with this window and terminal-state retention (µs), or
    /// FLIP-383's restart.
    pub reconcile: Option<(u64, u64)>,
    /// The maps between `src` and `agg`: parallelism, and whether the edge into each is
    /// forward (then it has `src`'s parallelism).
    pub chain: Vec<(u32, bool)>,
    /// A second source feeding `agg`: parallelism and splits.
    pub second_source: Option<(u32, u32)>,
    /// An operator coordinator on `agg` too (P2.5 for a vertex that is no source): whether it
    /// supports batch snapshots.
    pub agg_coordinator: Option<bool>,
    /// P2.8, speculative execution (only under restart: refused with reconcile): the
    /// baseline ratio and multiplier, and which TaskManager is how many times slower.
    pub speculative: Option<(f64, f64, u32, u32)>,
    /// The JobMaster's heartbeat timeout (µs); `None`: the default 50 ms. Only a swarm
    /// configuration sets one ([`BatchFeature::FastHeartbeat`]).
    pub heartbeat_timeout_us: Option<u64>,
}

/// Records in each split.
pub const RECORDS_PER_SPLIT: u64 = 20;

impl BatchSpec {
    /// Records a failure-free run commits: every split once per path from `src` to `sink`.
    pub fn expected_sink_records(&self) -> u64 {
        let first = u64::from(self.splits) * RECORDS_PER_SPLIT * if self.diamond { 2 } else { 1 };
        let second = self
            .second_source
            .map_or(0, |(_, splits)| u64::from(splits) * RECORDS_PER_SPLIT);
        first + second
    }
}

/// A JobManager crash at `at` µs, a new one elected `after` µs later.
fn crash(at: u64, after: u64) -> Value {
    json!({"at": format!("{at}us"), "fault": "crash_jobmaster", "restart_after": format!("{after}us")})
}

/// TaskManager `t` lost at `at` µs and back after `d` µs, or cut off for `d` µs.
fn task_manager_fault(t: u64, at: u64, d: u64, lose: bool) -> Value {
    if lose {
        json!({"at": format!("{at}us"), "fault": "lose_task_manager", "task_manager": t, "restart_after": format!("{d}us")})
    } else {
        json!({"at": format!("{at}us"), "fault": "disconnect_task_manager", "task_manager": t, "duration": format!("{d}us")})
    }
}

fn task_fault(vertex: &str, i: u64, at: u64) -> Value {
    json!({"at": format!("{at}us"), "fault": "fail_task", "task": format!("{vertex}[{i}]")})
}

/// A delay spike of `extra` µs on the RPCs, or RPC loss with probability `tenths` / 10 and a
/// resend after `extra` µs, for `duration` µs from `at`.
fn network_fault(at: u64, duration: u64, extra: u64, tenths: u64, spike: bool) -> Value {
    if spike {
        json!({"at": format!("{at}us"), "fault": "delay_spike", "extra": format!("{extra}us"),
               "duration": format!("{duration}us"), "target": "rpcs"})
    } else {
        json!({"at": format!("{at}us"), "fault": "rpc_loss", "probability": tenths as f64 / 10.0,
               "retry_after": format!("{extra}us"), "duration": format!("{duration}us")})
    }
}

fn store_fault(at: u64, write: bool) -> Value {
    let fault = if write {
        "job_events_write_failure"
    } else {
        "job_events_read_failure"
    };
    json!({"at": format!("{at}us"), "fault": fault})
}

fn crash_at_finish(after: u64) -> Value {
    json!({"when": {"job_status": "FINISHED"}, "fault": "crash_jobmaster",
           "restart_after": format!("{after}us")})
}

fn faults() -> impl Strategy<Value = Vec<Value>> {
    let crash = (1u64..40_000, 1u64..60_000).prop_map(|(at, after)| crash(at, after));
    let task_manager = (0u32..3, 1u64..60_000, 1u64..120_000, any::<bool>())
        .prop_map(|(t, at, d, lose)| task_manager_fault(u64::from(t), at, d, lose));
    let task = (
        prop::sample::select(vec!["src", "agg"]),
        0u32..2,
        1u64..40_000,
    )
        .prop_map(|(v, i, at)| task_fault(v, u64::from(i), at));
    // Network faults on the RPCs (a batch job has no data channels): a delay spike, or RPC
    // loss with a resend delay, often around a crash's recovery, where reports race
    // `previous_worker_timeout` and a reconcile window.
    let network = (
        1u64..80_000,
        1u64..60_000,
        1u64..40_000,
        0u32..=10,
        any::<bool>(),
    )
        .prop_map(|(at, duration, extra, tenths, spike)| {
            network_fault(at, duration, extra, u64::from(tenths), spike)
        });
    // The job event store failing to write (the JobMaster logs nothing more) or to be read
    // back (the next recovery restarts the job in full), F2.3 and F2.4 step 5.
    let store = (1u64..40_000, any::<bool>()).prop_map(|(at, write)| store_fault(at, write));
    // A crash the moment the job is FINISHED, before its result is durable (P2.7): the next
    // JobManager recovers a job that has nothing left to run, or, after a failed write, only
    // the finishes the store took.
    let at_finish = (1u64..60_000).prop_map(crash_at_finish);
    (
        prop::collection::vec(crash, 1..4),
        prop::collection::vec(task_manager, 0..3),
        prop::option::of(task),
        prop::option::weighted(0.3, network),
        prop::option::weighted(0.2, store),
        prop::option::weighted(0.15, at_finish),
    )
        .prop_map(|(mut all, tms, task, network, store, at_finish)| {
            all.extend(tms);
            all.extend(task);
            all.extend(network);
            all.extend(store);
            all.extend(at_finish);
            all
        })
}

pub fn spec() -> impl Strategy<Value = BatchSpec> {
    (
        (2u32..4, 1u32..10, any::<bool>(), any::<bool>()),
        (
            any::<bool>(),
            prop::bool::weighted(0.9),
            prop::bool::weighted(0.8),
            prop::option::weighted(0.25, 1_000u64..80_000),
        ),
        (
            200u64..20_000,
            prop::sample::select(vec![200u64, 1_000, 1 << 20]),
            prop::sample::select(vec![0u64, 5_000, 180_000_000]),
        ),
        faults(),
        (0u8..3, 1_000u64..60_000, 0u64..100_000),
        (
            prop::collection::vec((1u32..4, prop::bool::weighted(0.7)), 0..3),
            prop::option::weighted(0.3, (1u32..3, 1u32..6)),
            prop::option::weighted(0.25, any::<bool>()),
            prop::option::weighted(
                0.25,
                (
                    prop::sample::select(vec![0.0, 0.25, 0.5, 0.75]),
                    prop::sample::select(vec![1.0, 1.5, 2.0]),
                    0u32..3,
                    prop::sample::select(vec![1u32, 2, 5, 20]),
                ),
            ),
        ),
    )
        .prop_map(
            |(
                (parallelism, splits, diamond, remote),
                (coordinator_snapshot, shuffle_snapshot, keep_partitions, registration_timeout_us),
                (flush_us, buffer_size, min_pause_us),
                faults,
                (reconcile, window_us, retention_us),
                (chain, second_source, agg_coordinator, speculative),
            )| BatchSpec {
                reconcile: (reconcile == 0).then_some((window_us, retention_us)),
                speculative: speculative.filter(|_| reconcile != 0),
                heartbeat_timeout_us: None,
                chain,
                second_source,
                agg_coordinator,
                parallelism,
                splits,
                diamond,
                remote,
                coordinator_snapshot,
                shuffle_snapshot,
                keep_partitions,
                registration_timeout_us,
                flush_us,
                buffer_size,
                min_pause_us,
                faults,
            },
        )
}

impl BatchSpec {
    /// Swarm testing (`fuzz --strategy swarm`, [`super::swarm`]): each [`BatchFeature`] kept as
    /// drawn, switched off (its faults removed, its setting the plain default) or switched on
    /// (a fault of its kind added where none was drawn, its setting drawn from the
    /// configuration's own values where the plain generator drew none).
    pub fn configure(&mut self, swarm: &BatchSwarm) {
        use BatchFeature as F;
        let value = |f: F, key: u64, range: std::ops::Range<u64>| swarm.value(f, key, range);
        // The fault kinds a feature counts (a crash at FINISHED is the one with a `when`).
        let kinds: [(F, &str); 8] = [
            (F::LostTaskManager, "lose_task_manager"),
            (F::DisconnectedTaskManager, "disconnect_task_manager"),
            (F::FailedTask, "fail_task"),
            (F::DelaySpike, "delay_spike"),
            (F::RpcLoss, "rpc_loss"),
            (F::WriteFailure, "job_events_write_failure"),
            (F::ReadFailure, "job_events_read_failure"),
            (F::CrashAtFinish, "crash_jobmaster"),
        ];
        let at_finish = |f: &Value| f.get("when").is_some();
        let is = |f: &Value, feature: F, kind: &str| {
            f["fault"] == kind && (feature != F::CrashAtFinish || at_finish(f))
        };
        let crashes = |faults: &[Value]| {
            faults
                .iter()
                .filter(|f| f["fault"] == "crash_jobmaster" && !at_finish(f))
                .count()
        };
        // Off: every fault of the kind goes.
        for (feature, kind) in kinds {
            if !swarm.has(feature, true) {
                self.faults.retain(|f| !is(f, feature, kind));
            }
        }
        if !swarm.has(F::JobManagerCrashes, true) {
            self.faults
                .retain(|f| f["fault"] != "crash_jobmaster" || at_finish(f));
        }
        // On: one of the kind where none was drawn, its times in the plain generator's ranges.
        for (feature, kind) in kinds {
            if swarm.has(feature, false) && !self.faults.iter().any(|f| is(f, feature, kind)) {
                let (at, d) = (value(feature, 0, 1..40_000), value(feature, 1, 1..60_000));
                self.faults.push(match feature {
                    F::LostTaskManager | F::DisconnectedTaskManager => task_manager_fault(
                        value(feature, 2, 0..3),
                        at,
                        2 * d,
                        feature == F::LostTaskManager,
                    ),
                    F::FailedTask => task_fault(
                        ["src", "agg"][value(feature, 2, 0..2) as usize],
                        value(feature, 3, 0..2),
                        at,
                    ),
                    F::DelaySpike | F::RpcLoss => network_fault(
                        2 * at,
                        d,
                        value(feature, 2, 1..40_000),
                        value(feature, 3, 0..11),
                        feature == F::DelaySpike,
                    ),
                    F::WriteFailure | F::ReadFailure => store_fault(at, feature == F::WriteFailure),
                    _ => crash_at_finish(d),
                });
            }
        }
        if swarm.has(F::JobManagerCrashes, false) {
            for key in 0..2u64.saturating_sub(crashes(&self.faults) as u64) {
                let f = F::JobManagerCrashes;
                let fault = crash(
                    value(f, 2 * key, 1..40_000),
                    value(f, 2 * key + 1, 1..60_000),
                );
                self.faults.push(fault);
            }
        }
        if !swarm.has(F::Reconcile, self.reconcile.is_some()) {
            self.reconcile = None;
        } else if self.reconcile.is_none() {
            let f = F::Reconcile;
            self.reconcile = Some((value(f, 0, 1_000..60_000), value(f, 1, 0..100_000)));
        }
        if let Some((window, _)) = &mut self.reconcile {
            if swarm.has(F::ShortWindow, false) {
                *window = value(F::ShortWindow, 0, 300..1_000);
            }
        }
        // P2.8: speculation is refused with reconcile.
        if !swarm.has(F::Speculation, self.speculative.is_some()) || self.reconcile.is_some() {
            self.speculative = None;
        } else if self.speculative.is_none() {
            let f = F::Speculation;
            self.speculative = Some((
                [0.0, 0.25, 0.5, 0.75][value(f, 0, 0..4) as usize],
                [1.0, 1.5, 2.0][value(f, 1, 0..3) as usize],
                value(f, 2, 0..3) as u32,
                [1, 2, 5, 20][value(f, 3, 0..4) as usize],
            ));
        }
        if swarm.has(F::FastHeartbeat, false) {
            self.heartbeat_timeout_us = Some(value(F::FastHeartbeat, 0, 1_000..5_000));
        }
        self.remote = swarm.has(F::RemoteShuffle, self.remote);
        if !swarm.has(
            F::RegistrationTimeout,
            self.registration_timeout_us.is_some(),
        ) {
            self.registration_timeout_us = None;
        } else if self.registration_timeout_us.is_none() {
            self.registration_timeout_us = Some(value(F::RegistrationTimeout, 0, 1_000..80_000));
        }
        self.keep_partitions = !swarm.has(F::ReleasePartitions, !self.keep_partitions);
    }
}

/// The scenario document of `spec`.
pub fn document(name: &str, seed: u64, spec: &BatchSpec, shuffled: bool) -> Value {
    let p = spec.parallelism;
    let mut vertices = vec![
        json!({"id": "src", "operator": "source", "parallelism": p, "records": RECORDS_PER_SPLIT, "process_time": "20us"}),
        json!({"id": "agg", "operator": "keyed_sum", "parallelism": "auto", "process_time": "10us"}),
        json!({"id": "sink", "operator": "sink", "parallelism": 1}),
    ];
    let mut edges = vec![json!({"from": "agg", "to": "sink", "pattern": "all_to_all"})];
    // The chain: each map forward (same parallelism) or all-to-all (its own) from the last.
    let (mut last, mut last_p) = ("src".to_owned(), p);
    for (i, &(own, forward)) in spec.chain.iter().enumerate() {
        let id = format!("map{i}");
        let parallelism = if forward { last_p } else { own };
        vertices.push(json!({"id": id, "operator": "map", "parallelism": parallelism, "process_time": "10us"}));
        let pattern = if forward { "forward" } else { "all_to_all" };
        edges.push(json!({"from": last, "to": id, "pattern": pattern}));
        (last, last_p) = (id, parallelism);
    }
    edges.push(json!({"from": last, "to": "agg", "pattern": "all_to_all"}));
    let mut coordinators = json!({"src": {"splits": spec.splits, "supports_batch_snapshot": spec.coordinator_snapshot}});
    if let Some((parallelism, splits)) = spec.second_source {
        vertices.push(json!({"id": "src2", "operator": "source", "parallelism": parallelism, "records": RECORDS_PER_SPLIT, "process_time": "20us"}));
        edges.push(json!({"from": "src2", "to": "agg", "pattern": "all_to_all"}));
        coordinators["src2"] =
            json!({"splits": splits, "supports_batch_snapshot": spec.coordinator_snapshot});
    }
    if let Some(snapshot) = spec.agg_coordinator {
        coordinators["agg"] = json!({"supports_batch_snapshot": snapshot});
    }
    if spec.diamond {
        vertices.push(json!({"id": "side", "operator": "map", "parallelism": 2}));
        edges.push(json!({"from": "src", "to": "side", "pattern": "all_to_all"}));
        edges.push(json!({"from": "side", "to": "agg", "pattern": "all_to_all"}));
    }
    let mut doc = json!({
        "name": name,
        "seed": seed,
        "mode": "batch",
        "job": {"vertices": vertices, "edges": edges},
        "cluster": {"task_managers": 3, "slots_per_task_manager": 2},
        "batch": {
            "shuffle": {
                "kind": if spec.remote { "remote" } else { "internal" },
                "supports_snapshot": spec.shuffle_snapshot,
            },
            "keep_partitions": spec.keep_partitions,
            "adaptive_parallelism": {"min": 1, "max": 4, "bytes_per_task": 8000},
            "job_events": {
                "flush_interval": format!("{}us", spec.flush_us),
                "buffer_size": spec.buffer_size,
                "snapshot_min_pause": format!("{}us", spec.min_pause_us),
            },
            "previous_worker_timeout": "20ms",
            "registration_timeout": spec.registration_timeout_us.map(|us| format!("{us}us")),
            "coordinators": coordinators,
        },
        "faults": spec.faults,
        "tie_break": if shuffled { "shuffled" } else { "insertion" },
        "jobmaster": {
            // Exhausting the restart strategy is no protocol violation: allow plenty.
            "restart_strategy": {"max_attempts": 1000},
            "failover": if spec.reconcile.is_some() { "reconcile" } else { "restart" },
            "reconcile_timeout": format!("{}us", spec.reconcile.map_or(50_000, |r| r.0)),
            "terminal_state_retention": format!("{}us", spec.reconcile.map_or(200_000, |r| r.1)),
        },
        "budget": {"max_events": super::generate::MAX_EVENTS, "max_time": super::generate::MAX_TIME},
    });
    if let Some(us) = spec.heartbeat_timeout_us {
        doc["jobmaster"]["heartbeat_timeout"] = json!(format!("{us}us"));
    }
    if let Some((ratio, multiplier, tm, factor)) = spec.speculative {
        doc["batch"]["speculative"] =
            json!({"baseline_ratio": ratio, "baseline_multiplier": multiplier});
        doc["batch"]["slow_task_managers"] = json!({tm.to_string(): factor});
    }
    doc
}
