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

fn faults() -> impl Strategy<Value = Vec<Value>> {
    let crash = (1u64..40_000, 1u64..60_000).prop_map(|(at, after)| {
        json!({"at": format!("{at}us"), "fault": "crash_jobmaster", "restart_after": format!("{after}us")})
    });
    let task_manager = (0u32..3, 1u64..60_000, 1u64..120_000, any::<bool>()).prop_map(
        |(t, at, d, lose)| {
            if lose {
                json!({"at": format!("{at}us"), "fault": "lose_task_manager", "task_manager": t, "restart_after": format!("{d}us")})
            } else {
                json!({"at": format!("{at}us"), "fault": "disconnect_task_manager", "task_manager": t, "duration": format!("{d}us")})
            }
        },
    );
    let task = (prop::sample::select(vec!["src", "agg"]), 0u32..2, 1u64..40_000).prop_map(
        |(v, i, at)| {
            json!({"at": format!("{at}us"), "fault": "fail_task", "task": format!("{v}[{i}]")})
        },
    );
    // Network faults on the RPCs (a batch job has no data channels): a delay spike, or RPC
    // loss with a resend delay, often around a crash's recovery, where reports race
    // `previous_worker_timeout` and a reconcile window.
    let network = (1u64..80_000, 1u64..60_000, 1u64..40_000, 0u32..=10, any::<bool>())
        .prop_map(|(at, duration, extra, tenths, spike)| {
            if spike {
                json!({"at": format!("{at}us"), "fault": "delay_spike", "extra": format!("{extra}us"),
                       "duration": format!("{duration}us"), "target": "rpcs"})
            } else {
                json!({"at": format!("{at}us"), "fault": "rpc_loss", "probability": f64::from(tenths) / 10.0,
                       "retry_after": format!("{extra}us"), "duration": format!("{duration}us")})
            }
        });
    // The job event store failing to write (the JobMaster logs nothing more) or to be read
    // back (the next recovery restarts the job in full), F2.3 and F2.4 step 5.
    let store = (1u64..40_000, any::<bool>()).prop_map(|(at, write)| {
        let fault = if write {
            "job_events_write_failure"
        } else {
            "job_events_read_failure"
        };
        json!({"at": format!("{at}us"), "fault": fault})
    });
    // A crash the moment the job is FINISHED, before its result is durable (P2.7): the next
    // JobManager recovers a job that has nothing left to run, or, after a failed write, only
    // the finishes the store took.
    let at_finish = (1u64..60_000).prop_map(|after| {
        json!({"when": {"job_status": "FINISHED"}, "fault": "crash_jobmaster",
               "restart_after": format!("{after}us")})
    });
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
    if let Some((ratio, multiplier, tm, factor)) = spec.speculative {
        doc["batch"]["speculative"] =
            json!({"baseline_ratio": ratio, "baseline_multiplier": multiplier});
        doc["batch"]["slow_task_managers"] = json!({tm.to_string(): factor});
    }
    doc
}
