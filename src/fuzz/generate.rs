//! Random scenarios from a seed: a proptest [`Strategy`] over scenario documents
//! (`serde_json::Value`), turned into a pure function `seed -> scenario` by seeding proptest's
//! ChaCha generator with the seed ([`value_tree`]).
//!
//! What a scenario draws, and why:
//! - a DAG of 1–3 sources, 0–4 maps / keyed sums and 1–2 sinks, parallelism 1–4, `forward` or
//!   `all_to_all` edges with `round_robin` or `key_hash`, so pointwise and keyed exchanges and
//!   multi-input alignment all occur;
//! - per source subtask a record count of its own (often short, sometimes empty, sometimes up to
//!   300) and a pace, so subtasks finish at very different times: the situations FLIP-147 is
//!   about (P1);
//! - channel and RPC latency ranges, channel capacity 1–8 (back-pressure), the tie-break;
//! - checkpointing with one finish protocol (`option1`, `option2`, `flink`, `legacy`), a periodic
//!   interval and/or explicit `trigger_at` instants, aligned or unaligned barriers, an
//!   alignment timeout (P1.4) or at-least-once barriers (F1.7, one streaming seed in six),
//!   `flush_before_finish` (P1.5), snapshots with an asynchronous part (F1.8, one seed in
//!   four), a latency of their own for one or two channels (one seed in four), and sinks
//!   `at_least_once` or
//!   `two_phase_commit`;
//! - a **swarm** fault mix: the seed first draws which fault kinds are enabled at all and the
//!   window in which faults may fire, then 0–3 faults of the enabled kinds, each at a time in the
//!   window or on a predicate. Faults that mask each other (a lost TaskManager hides a later
//!   failed task on it) therefore do not always co-occur, and some runs have none.
//! - besides the swarm, in streaming seeds: a failing snapshot (F1.9), a trigger by hand to a
//!   task still initializing, and a `hold_channel` on one channel (one seed in four), so a
//!   barrier, EndOfData or EndOfPartition waits on one wire while the others move; and, in one
//!   of three seeds under `flink` with aligned barriers, a stop-with-savepoint (F1.11), drained
//!   or not, at an instant, at a checkpoint's trigger or when the first source ends its input;
//! - last, in one of four streaming seeds without reconciliation, `restore_from` or a
//!   stop-with-savepoint, FLIP-27 splits (F1.13): the first source reads 1–12 splits of 0–60
//!   records that its enumerator assigns (not in a campaign biased for another bug, whose seeds
//!   stay what they were);
//! - `heal_at` at the end of the fault window, so every run ends with a healed phase in which
//!   the liveness oracles (`checkpoint-progress`, `job-terminates`) apply, and a small budget
//!   so a stuck run ends fast.
//!
//! Every choice is an index or a number resolved against the graph with `%`, so any value the
//! shrinker produces is still a valid scenario.

use super::swarm::{BatchSwarm, Feature, MaybeSwarm, Setting, Swarm};
use crate::bug::Bug;
use crate::scenario::{FinishProtocol, Mode};
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// What a campaign asks of its scenarios.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenerateOptions {
    /// Only streaming or only batch jobs; `None`: one seed in five is a batch job.
    pub mode: Option<Mode>,
    /// Only this finish protocol (streaming jobs only); `None`: any of the four.
    pub protocol: Option<FinishProtocol>,
    /// The bug the campaign injects: it biases the shapes drawn (`Bias`) and is written into
    /// the scenario's `bug`.
    pub bug: Option<Bug>,
    /// Inject `bug` without biasing anything: the plain generator's seeds, as a campaign
    /// without the bug draws them (the honest half of the mutation score).
    pub unbiased: bool,
    /// Swarm testing (`fuzz --strategy swarm`): each seed's configuration switches the
    /// optional features on or off before the draws ([`super::swarm`]).
    pub swarm: bool,
}

/// Shapes an injected bug needs before it can show at all. Without them most seeds cannot
/// detect the bug, and a mutation score would measure the generator's luck rather than the
/// oracles:
/// - a bug about committing (`finish-before-final-checkpoint`, `commit-uncovered-transaction`)
///   is only visible through a two-phase-commit sink's output, so the first sink is one;
/// - a bug in failover (`terminal-counts-as-finished`, `restart-finished-tasks`,
///   `restore-from-pending`, `commit-uncovered-transaction`) needs a failure, so `fail_task` is
///   enabled and at least one fault is drawn;
/// - a bug in one protocol's rule (`skip-retrigger-descendants`: `option1`'s re-trigger;
///   `cancel-pending-on-finish`: only protocols that must not decline) is only wrong under
///   that protocol, so "any protocol" narrows to those;
/// - a bug in unaligned checkpoints (`unaligned-drop-channel-state`,
///   `unaligned-spill-after-barrier`, `ignore-channel-state-on-restore`) needs barriers that
///   overtake records, and `timeout-switch-loses-buffers` needs an alignment timeout;
/// - a bug in reconciliation (`drop-refused-rpc`, `reconcile-ignores-missing-tm`,
///   `no-terminal-retention`, `forget-ended-tasks`, `apply-state-before-rebuild`) needs
///   `failover: reconcile` and a JobManager crash, the missing-TaskManager bug a TaskManager
///   lost in the outage, and `apply-state-before-rebuild` a failure before it (attempts above
///   0); `resend-before-drained` needs kept RPCs too, and RPCs slower than a retry, so older
///   ones are still on the wire;
/// - `restart-gives-up-early` needs a failure that uses up the restart strategy exactly: one
///   failed task and `max_attempts` 1;
/// - `trigger-waits-for-input` breaks a rule of `flink` alone, and needs channels slower than
///   RPCs; `ignore-min-pause` needs a `min_pause`; `deploy-before-report` a batch job under
///   `failover: reconcile` whose window is shorter than most RPCs, so it ends FAILING while the
///   old JobMaster's tasks still run; `overtake-kept-rpcs` a batch job under `failover:
///   reconcile`, whose TaskManagers keep the RPCs a reconciling JobMaster refuses.
///
/// `GenerateOptions::unbiased` turns all of this off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Bias {
    two_phase_commit: bool,
    failure: bool,
    alignment: Option<Alignment>,
    reconcile: bool,
    lost_task_manager: bool,
    /// A batch bug (P2) needs a batch job.
    batch: bool,
    /// One failed task and a restart strategy of one attempt.
    one_restart: bool,
    /// RPCs far slower than a retry (a delay spike of 40-60ms on RPCs from the JobManager
    /// crash on, longer than most reconcile windows), so that older RPCs are still on the wire
    /// when kept ones are sent again.
    slow_rpcs: bool,
    /// A `min_pause` of twice the checkpoint interval, for `ignore-min-pause`.
    min_pause: bool,
    /// A batch job under `failover: reconcile` whose window (0.3-1ms) is shorter than most
    /// RPCs, so that it ends FAILING while TaskManagers still run what the old JobMaster
    /// deployed and their reports are on the way.
    short_window: bool,
    /// A batch job under `failover: reconcile` (its TaskManagers keep RPCs while it reconciles).
    batch_reconcile: bool,
    /// A batch job with speculative execution (P2.8) and a TaskManager ten times slower.
    speculation: bool,
    /// With `speculation`: TaskManager0 or 1 lost at 20 to 60 ms, noticed within 1 ms, so a
    /// speculative attempt may be running there (P2.8).
    speculative_lost: bool,
    /// With `speculative_lost`: the slow TaskManager2 is the one lost instead, so an original
    /// attempt may fail there while its speculative attempt runs elsewhere (P2.8 hand-over).
    slow_lost: bool,
    /// A batch job whose new JobMaster waits out `previous_worker_timeout` (a TaskManager cut
    /// off for longer) and loses another TaskManager after its report, inside the wait (P2.3).
    lost_in_recovery: bool,
    /// Channels slower than RPCs (2-3ms against under 0.3ms), so that a trigger RPC can reach a
    /// task before the EndOfPartition of a producer the JobMaster already sees FINISHED; one
    /// checkpoint at a time.
    slow_channels: bool,
    /// Snapshots with an asynchronous part (F1.8).
    async_snapshots: bool,
    /// F1.9: tasks that take a while to initialize, and a trigger by hand that reaches one
    /// while it does.
    before_running: bool,
    /// F1.9: the asynchronous part of a snapshot fails.
    failed_upload: bool,
    /// F1.9: a `tolerable_failures` limit (0 or 1).
    tolerable: bool,
    /// F1.9: two failed asynchronous parts two checkpoints apart, with a limit of 1.
    failures_apart: bool,
    /// F1.10: cancellation markers on.
    cancel_markers: bool,
    /// F1.12: a map chained in front of every operator that is not a source.
    chains: bool,
    /// F1.6: a job started from a checkpoint in which a chain mixes finished states.
    mixed_chain: bool,
    /// F1.11: a stop-with-savepoint (under `flink`, aligned).
    savepoint: bool,
    /// F1.13: the first source reads splits, and a task fails (a regional failover).
    splits: bool,
    /// F1.14 step 8: network buffers of one record with little credit, `flush_before_finish`
    /// with unaligned checkpoints (so a closing task drains while running), and checkpoints
    /// often, so one is triggered while a draining task's channels wait for credit.
    draining_buffers: bool,
}

/// How barriers align (P1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Alignment {
    Aligned,
    Unaligned,
    /// Aligned, switching to unaligned after an alignment timeout.
    Timeout,
    /// Barriers counted, never aligned (F1.7).
    AtLeastOnce,
}

impl Bias {
    fn of(options: &GenerateOptions) -> Bias {
        match options.bug.filter(|_| !options.unbiased) {
            None => Bias::default(),
            Some(bug) => Bias {
                two_phase_commit: matches!(
                    bug,
                    Bug::FinishBeforeFinalCheckpoint
                        | Bug::CommitUncoveredTransaction
                        | Bug::SnapshotHeadOnly
                ),
                failure: matches!(
                    bug,
                    Bug::KeepSplitsOnRegionalReset
                        | Bug::SnapshotHeadOnly
                        | Bug::ApplyStateBeforeRebuild
                        | Bug::TerminalCountsAsFinished
                        | Bug::RestartFinishedTasks
                        | Bug::RestoreFromPending
                        | Bug::CommitUncoveredTransaction
                        | Bug::IgnoreChannelStateOnRestore
                        | Bug::RestartGivesUpEarly
                ),
                alignment: match bug {
                    Bug::UnalignedDropChannelState
                    | Bug::UnalignedSpillAfterBarrier
                    | Bug::IgnoreChannelStateOnRestore
                    | Bug::EopWhileDraining => Some(Alignment::Unaligned),
                    Bug::TimeoutSwitchLosesBuffers => Some(Alignment::Timeout),
                    // F1.10: a tracker keeps a checkpoint pending through the abort notice,
                    // so a marker that comes after it still finds it open.
                    Bug::EopNotCounted
                    | Bug::SnapshotAtFirstBarrier
                    | Bug::SnapshotAbortedCheckpoint
                    | Bug::SwallowCancelMarker => Some(Alignment::AtLeastOnce),
                    // F1.11: a savepoint is always aligned; validation refuses the others.
                    Bug::EmitAfterStop | Bug::FinishBeforeSavepoint | Bug::DrainOnNoDrain => {
                        Some(Alignment::Aligned)
                    }
                    _ => None,
                },
                reconcile: matches!(
                    bug,
                    Bug::DropRefusedRpc
                        | Bug::ReconcileIgnoresMissingTm
                        | Bug::NoTerminalRetention
                        | Bug::ForgetEndedTasks
                        | Bug::ApplyStateBeforeRebuild
                        | Bug::ResendBeforeDrained
                ),
                lost_task_manager: bug == Bug::ReconcileIgnoresMissingTm,
                batch: bug.is_batch(),
                one_restart: bug == Bug::RestartGivesUpEarly,
                slow_rpcs: bug == Bug::ResendBeforeDrained,
                slow_channels: bug == Bug::TriggerWaitsForInput,
                async_snapshots: matches!(bug, Bug::AckBeforeUpload | Bug::FinishBeforeUpload),
                min_pause: bug == Bug::IgnoreMinPause,
                short_window: bug == Bug::DeployBeforeReport,
                batch_reconcile: bug == Bug::OvertakeKeptRpcs,
                speculation: matches!(
                    bug,
                    Bug::KeepSlowAttempt
                        | Bug::IgnoreBaselineRatio
                        | Bug::KeepSpeculativeOnLostTaskManager
                        | Bug::NoSpeculativeHandover
                ),
                speculative_lost: matches!(
                    bug,
                    Bug::KeepSpeculativeOnLostTaskManager | Bug::NoSpeculativeHandover
                ),
                slow_lost: bug == Bug::NoSpeculativeHandover,
                lost_in_recovery: bug == Bug::KeepLostPartitionsInRecovery,
                before_running: bug == Bug::SnapshotBeforeRunning,
                failed_upload: matches!(bug, Bug::AckFailedSnapshot | Bug::KeepFailureCount),
                tolerable: matches!(bug, Bug::CountEveryAbort | Bug::KeepFailureCount),
                failures_apart: bug == Bug::KeepFailureCount,
                cancel_markers: matches!(
                    bug,
                    Bug::SwallowCancelMarker | Bug::CancelMarkerAsBarrier
                ),
                chains: matches!(bug, Bug::SnapshotHeadOnly | Bug::AcceptMixedChain),
                mixed_chain: bug == Bug::AcceptMixedChain,
                savepoint: matches!(
                    bug,
                    Bug::EmitAfterStop | Bug::FinishBeforeSavepoint | Bug::DrainOnNoDrain
                ),
                splits: bug == Bug::KeepSplitsOnRegionalReset,
                draining_buffers: bug == Bug::EopWhileDraining,
            },
        }
    }
}

/// The protocols a campaign draws from.
fn protocols(options: &GenerateOptions) -> Vec<FinishProtocol> {
    if let Some(p) = options.protocol {
        return vec![p];
    }
    match options.bug.filter(|_| !options.unbiased) {
        // F1.14 step 8: a task drains while running only where `flush_before_finish` keeps it
        // RUNNING past its last record, the design's options.
        Some(Bug::SkipRetriggerDescendants | Bug::EopWhileDraining) => {
            vec![FinishProtocol::Option1]
        }
        // P1.3's barrier insertion before EndOfPartition is the design's options' alone (`flink`
        // marks the channel aligned instead, F1.3).
        Some(Bug::CancelPendingOnFinish | Bug::NoBarrierBeforeEop) => {
            vec![FinishProtocol::Option1, FinishProtocol::Option2]
        }
        Some(
            Bug::TriggerWaitsForInput
            | Bug::EmitAfterStop
            | Bug::FinishBeforeSavepoint
            | Bug::DrainOnNoDrain,
        ) => vec![FinishProtocol::Flink],
        // F1.10: under `legacy`, EndOfPartition during an alignment aborts the checkpoint,
        // the commonest origin of a marker.
        Some(Bug::SwallowCancelMarker | Bug::CancelMarkerAsBarrier) => vec![FinishProtocol::Legacy],
        _ => vec![
            FinishProtocol::Option1,
            FinishProtocol::Option2,
            FinishProtocol::Flink,
            FinishProtocol::Legacy,
        ],
    }
}

/// The caps of every generated run: far above what a healthy small job needs (a few thousand
/// events, well under a second of simulated time), low enough that a stuck run ends in
/// milliseconds of wall time.
pub const MAX_EVENTS: u64 = 2_000_000;
pub const MAX_TIME: &str = "5s";
/// Checkpoint timeout: below `MAX_TIME`, so a stalled checkpoint expires and
/// `checkpoint-progress` reports it before the budget ends the run.
const CHECKPOINT_TIMEOUT: &str = "1s";

/// The value tree of `seed`'s scenario: its `current()` is the scenario document, and
/// `simplify`/`complicate` walk proptest's shrinking. A pure function of its arguments.
pub fn value_tree(seed: u64, options: &GenerateOptions) -> Box<dyn ValueTree<Value = Value>> {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed)),
    );
    scenario_strategy(seed, options)
        .new_tree(&mut runner)
        .unwrap_or_else(|e| unreachable!("the scenario strategy rejects nothing: {e}"))
}

/// `seed`'s scenario document.
pub fn generate(seed: u64, options: &GenerateOptions) -> Value {
    value_tree(seed, options).current()
}

/// ChaCha's 32 seed bytes from the 64-bit seed, spread with SplitMix64 so that neighbouring
/// seeds give unrelated keys.
fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut state = seed;
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_exact_mut(8) {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        chunk.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    bytes
}

/// One source vertex: parallelism, records per subtask (one entry per possible subtask), pace
/// range in µs (min, extra).
type SourceSpec = (u32, Vec<u64>, (u64, u64));
/// One middle vertex: kind (0: keyed_sum, else map), parallelism, process time in ns, keys,
/// (second input, forward, input pick).
type MiddleSpec = (u8, u32, u64, u32, (bool, bool, u8));
/// One sink: parallelism, two-phase-commit, forward, input pick.
type SinkSpec = (u32, bool, bool, u8);
/// One fault before it is resolved against the graph: kind pick (among the enabled kinds),
/// subtask pick (vertex, index), TaskManager pick, `restart_after` in ms, trigger (0: at;
/// 1: checkpoint pending; 2: checkpoint completed; 3: finished; 4: end of input; 5: all sources
/// finished), time in per mille of the fault window, checkpoint id, predicate subtask pick,
/// spike (extra µs, duration ms, target), loss (probability in tenths, retry ms).
type FaultSpec = (
    u8,
    (u8, u8),
    u8,
    u64,
    (u8, u64, u64, (u8, u8)),
    (u64, u64, u8),
    (u64, u64),
);
/// The swarm: which kinds are enabled (fail_task, lose_task_manager, crash_jobmaster,
/// delay_spike, rpc_loss), how many faults, the faults, the fault window in ms.
type SwarmSpec = ([bool; 5], usize, Vec<FaultSpec>, u64);

const FAULT_KINDS: [&str; 5] = [
    "fail_task",
    "lose_task_manager",
    "crash_jobmaster",
    "delay_spike",
    "rpc_loss",
];

fn source() -> impl Strategy<Value = SourceSpec> {
    (
        1u32..=4,
        // Often short, sometimes empty, sometimes long: subtasks of one vertex finish apart.
        prop::collection::vec(
            prop_oneof![2 => 0u64..20, 1 => Just(0u64), 3 => 0u64..=300],
            4,
        ),
        (1u64..50, 0u64..250),
    )
}

fn middle() -> impl Strategy<Value = MiddleSpec> {
    (
        0u8..3,
        1u32..=4,
        1u64..300_000,
        1u32..20,
        (any::<bool>(), any::<bool>(), any::<u8>()),
    )
}

fn sink() -> impl Strategy<Value = SinkSpec> {
    (1u32..=4, any::<bool>(), any::<bool>(), any::<u8>())
}

fn fault() -> impl Strategy<Value = FaultSpec> {
    (
        any::<u8>(),
        (any::<u8>(), any::<u8>()),
        any::<u8>(),
        0u64..60,
        (
            prop_oneof![3 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8),
                1 => Just(4u8), 1 => Just(5u8)],
            0u64..=1000,
            1u64..6,
            (any::<u8>(), any::<u8>()),
        ),
        (100u64..5000, 1u64..50, 0u8..3),
        (1u64..=5, 1u64..10),
    )
}

fn swarm() -> impl Strategy<Value = SwarmSpec> {
    (
        prop::array::uniform5(any::<bool>()),
        0usize..=3,
        prop::collection::vec(fault(), 3),
        5u64..=100,
    )
}

/// A `hold_channel` fault, in one draw of four: on the channel between the subtasks 0 of one
/// edge (every edge has one), from an instant of the fault window (`heal_ms`) for up to 20 ms,
/// from checkpoint `id`'s trigger to the next's, or from an instant until checkpoint `id`
/// completes. `heal_at` ends every hold at the latest, so a run always heals.
fn hold_channel(
    edges: &[Value],
    (draw, pick, permille, us, kind, id): (u8, u8, u64, u64, u8, u64),
    heal_ms: u64,
) -> Option<Value> {
    if draw != 0 || edges.is_empty() {
        return None;
    }
    let edge = &edges[pick as usize % edges.len()];
    let end = |key: &str| format!("{}[0]", edge[key].as_str().unwrap_or_default());
    let at_us = heal_ms * permille;
    let mut doc = json!({"fault": "hold_channel", "from": end("from"), "to": end("to")});
    match kind {
        0 => {
            doc["at"] = json!(format!("{at_us}us"));
            doc["release_at"] = json!(format!("{}us", at_us + us));
        }
        1 => {
            doc["when"] = json!({"checkpoint_pending": id});
            doc["release_when"] = json!({"checkpoint_pending": id + 1});
        }
        _ => {
            doc["at"] = json!(format!("{at_us}us"));
            doc["release_when"] = json!({"checkpoint_completed": id});
        }
    }
    Some(doc)
}

/// A `stop_with_savepoint` fault (F1.11), in one draw of three of the streaming seeds that can
/// take one (`flink`, aligned without a timeout): with or without drain, at an instant of the
/// fault window, at the trigger of checkpoint `id` (so that it races the final checkpoints of
/// tasks that ended their input), or when the first source subtask ends its input.
fn stop_with_savepoint(
    (draw, drain, permille, kind, id): (u8, bool, u64, u8, u64),
    heal_ms: u64,
    source: &str,
    forced: bool,
) -> Option<Value> {
    if draw != 0 && !forced {
        return None;
    }
    let mut doc = json!({"fault": "stop_with_savepoint", "drain": drain});
    match kind {
        0 => doc["at"] = json!(format!("{}us", heal_ms * permille)),
        1 => doc["when"] = json!({"checkpoint_pending": id}),
        _ => doc["when"] = json!({"end_of_input": format!("{source}[0]")}),
    }
    Some(doc)
}

/// `network.channels` for the first `n` edges: the channel between their subtasks 0, which
/// every edge has (a pointwise edge maps subtask 0 to subtask 0), with a latency of 0 to `us`.
/// Under a swarm's [`Feature::CoarseTimes`], the latency is fixed: `us / 2` rounded up to a
/// multiple of 100 µs.
fn own_channels(edges: &[Value], n: usize, us: u64, fixed: bool) -> Vec<Value> {
    edges
        .iter()
        .take(n)
        .map(|e| {
            json!({
                "from": format!("{}[0]", e["from"].as_str().unwrap_or_default()),
                "to": format!("{}[0]", e["to"].as_str().unwrap_or_default()),
                "latency": if fixed {
                    format!("{}us", (us / 200 + 1) * 100)
                } else {
                    format!("{}us..{us}us", us / 2)
                },
            })
        })
        .collect()
}

/// The graph: sources, then maps / keyed sums each reading from one or two earlier vertices,
/// then sinks reading from a middle vertex (a source when there is none).
/// F1.12: vertex `i` whose bit `i % 8` is set in `mask` becomes a chain with a map in it: behind
/// its source, or in front of its other operator. Its id and parallelism stay, so faults and
/// expectations that name its subtasks still do; its operator's own fields move into the chain
/// member.
pub fn chain_maps(vertices: &mut [Value], mask: u8) {
    for (i, vertex) in vertices.iter_mut().enumerate() {
        if mask & (1 << (i % 8)) == 0 {
            continue;
        }
        let Some(object) = vertex.as_object_mut() else {
            continue;
        };
        let Some(operator) = object.remove("operator") else {
            continue;
        };
        let mut member = json!({"operator": operator});
        for field in ["records", "record_interval", "keys", "delivery"] {
            if let Some(value) = object.remove(field) {
                member[field] = value;
            }
        }
        let chain = if operator == json!("source") {
            json!([member, "map"])
        } else {
            json!(["map", member])
        };
        object.insert("chain".to_owned(), chain);
    }
}

/// F1.6: a checkpoint for the generated job to start from, written against its final vertices
/// (uids as `chain_maps` left them). Every source subtask resumes at an offset drawn from its
/// records, finished at the end of them in one case of four; a keyed sum gets a few totals. In
/// one case of eight a vertex that is no source is recorded fully finished, a shape Flink
/// refuses unless all its producers finished too (`restore-shape` judges both). `mixed`: every
/// source is finished and the first chained vertex records only its second operator finished, a
/// mixed chain.
fn restore_from(vertices: &[Value], bits: u64, mixed: bool) -> Value {
    let mut state = bits;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        crate::record::mix64(state)
    };
    let mut operators = serde_json::Map::new();
    let members = |v: &Value| -> Vec<(String, Value)> {
        let id = v["id"].as_str().unwrap_or_default();
        match v.get("chain").and_then(Value::as_array) {
            Some(chain) => chain
                .iter()
                .enumerate()
                .map(|(k, m)| {
                    let op = m.get("operator").unwrap_or(m).clone();
                    (
                        format!("{id}.{k}"),
                        json!({"operator": op, "records": m.get("records"),
                        "keys": m.get("keys")}),
                    )
                })
                .collect(),
            None => vec![(id.to_owned(), v.clone())],
        }
    };
    let mut mixed_done = false;
    for vertex in vertices {
        let p = vertex["parallelism"].as_u64().unwrap_or(1);
        let members = members(vertex);
        let chained = members.len() > 1 && members[0].1["operator"] != json!("source");
        for (k, (uid, member)) in members.into_iter().enumerate() {
            match member["operator"].as_str() {
                Some("source") => {
                    let mut finished = Vec::new();
                    let mut offsets = Vec::new();
                    for i in 0..p as usize {
                        let records = member["records"][i].as_u64().unwrap_or(0);
                        let done = mixed || next() % 4 == 0;
                        finished.push(done);
                        offsets.push(if done {
                            records
                        } else {
                            next() % (records + 1)
                        });
                    }
                    let state: Vec<Value> = offsets.iter().map(|o| json!({"offset": o})).collect();
                    operators.insert(
                        uid,
                        json!({"parallelism": p, "finished": finished, "state": state}),
                    );
                }
                Some("keyed_sum") if !mixed => {
                    // A few totals, each key held by one subtask only.
                    let keys = member["keys"].as_u64().unwrap_or(16).max(1);
                    let sums: BTreeMap<u64, u64> = (0..next() % 4)
                        .map(|_| (next() % keys, next() % 500))
                        .collect();
                    let mut state = vec![Vec::new(); p as usize];
                    for (k, (key, total)) in sums.into_iter().enumerate() {
                        state[k % p as usize].push((key, total));
                    }
                    let state: Vec<Value> = state.iter().map(|s| json!({"sums": s})).collect();
                    operators.insert(uid, json!({"parallelism": p, "state": state}));
                }
                _ if mixed && chained && k == 1 && !mixed_done => {
                    mixed_done = true;
                    operators.insert(uid, json!({"parallelism": p, "finished": true}));
                }
                _ if !mixed && next() % 8 == 0 => {
                    operators.insert(uid, json!({"parallelism": p, "finished": true}));
                }
                _ => {}
            }
        }
    }
    json!({"checkpoint": 1 + next() % 20, "operators": operators})
}

fn graph(
    sources: &[SourceSpec],
    middles: &[MiddleSpec],
    sinks: &[SinkSpec],
    force_two_phase_commit: bool,
) -> (Vec<Value>, Vec<Value>) {
    let mut vertices = Vec::new();
    let mut edges = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (s, (p, records, (pace_min, pace_extra))) in sources.iter().enumerate() {
        let id = format!("src{s}");
        let records: Vec<u64> = records[..*p as usize].to_vec();
        vertices.push(json!({"id": id, "operator": "source", "parallelism": p,
            "records": records,
            "record_interval": format!("{pace_min}us..{}us", pace_min + pace_extra)}));
        names.push(id);
    }
    let source_count = names.len();
    for (m, &(kind, p, cost, keys, (two, forward, pick))) in middles.iter().enumerate() {
        let id = format!("v{m}");
        let keyed = kind == 0;
        let mut vertex = json!({"id": id, "operator": if keyed { "keyed_sum" } else { "map" },
            "parallelism": p, "process_time": format!("{}ns..{}ns", cost / 4, cost)});
        if keyed {
            vertex["keys"] = json!(keys);
        }
        vertices.push(vertex);
        let first = pick as usize % names.len();
        let mut inputs = vec![first];
        if two && names.len() > 1 {
            inputs.push((first + 1) % names.len());
        }
        for i in inputs {
            // Flink's keyBy: every input of a keyed sum is all_to_all with key_hash.
            let pattern = if keyed || !forward {
                "all_to_all"
            } else {
                "forward"
            };
            let mut edge = json!({"from": names[i], "to": id, "pattern": pattern});
            if pattern == "all_to_all" && !keyed && pick % 2 == 1 {
                edge["partitioner"] = json!("round_robin");
            }
            edges.push(edge);
        }
        names.push(id);
    }
    let producers: Vec<String> = if names.len() > source_count {
        names[source_count..].to_vec()
    } else {
        names.clone()
    };
    for (k, &(p, two_phase, forward, pick)) in sinks.iter().enumerate() {
        let id = format!("sink{k}");
        let delivery = if two_phase || (force_two_phase_commit && k == 0) {
            "two_phase_commit"
        } else {
            "at_least_once"
        };
        vertices
            .push(json!({"id": id, "operator": "sink", "parallelism": p, "delivery": delivery}));
        let from = &producers[pick as usize % producers.len()];
        edges.push(json!({"from": from, "to": id,
            "pattern": if forward { "forward" } else { "all_to_all" }}));
    }
    (vertices, edges)
}

/// `vertex[i]` for a pick, over the generated vertices.
fn subtask(vertices: &[Value], (v, i): (u8, u8)) -> String {
    let vertex = &vertices[v as usize % vertices.len()];
    let p = vertex["parallelism"].as_u64().unwrap_or(1);
    format!(
        "{}[{}]",
        vertex["id"].as_str().unwrap_or_default(),
        i as u64 % p
    )
}

/// The faults of the swarm, resolved against the graph; `window_us` bounds every `at`.
fn faults(
    vertices: &[Value],
    task_managers: u64,
    (enabled, count, specs, window_ms): &SwarmSpec,
    bias: Bias,
) -> Vec<Value> {
    let mut enabled = *enabled;
    let mut count = *count;
    if bias.failure {
        enabled[0] = true;
        count = count.max(1);
    }
    if bias.one_restart {
        count = 1;
    }
    if bias.slow_rpcs {
        count = count.max(2);
    }
    if bias.reconcile {
        enabled[2] = true;
        enabled[1] |= bias.lost_task_manager;
        count = count.max(if bias.lost_task_manager || bias.failure {
            2
        } else {
            1
        });
    }
    let kinds: Vec<&str> = FAULT_KINDS
        .iter()
        .zip(enabled)
        .filter(|(_, on)| *on)
        .map(|(k, _)| *k)
        .collect();
    if kinds.is_empty() {
        return Vec::new();
    }
    let window_us = window_ms * 1000;
    let mut docs: Vec<Value> = specs
        .iter()
        .take(count)
        .enumerate()
        .map(|(n, spec)| {
            let &(kind, pick, tm, restart_ms, (trigger, permille, id, pred), spike, loss) = spec;
            // The biased faults come first, so shrinking cannot drop them.
            let kind = match n {
                0 if bias.failure => "fail_task",
                1 if bias.lost_task_manager => "lose_task_manager",
                1 if bias.slow_rpcs => "delay_spike",
                0 | 1 if bias.reconcile => "crash_jobmaster",
                _ => kinds[kind as usize % kinds.len()],
            };
            let mut doc = match kind {
                "fail_task" => json!({"fault": kind, "task": subtask(vertices, pick)}),
                "lose_task_manager" => json!({"fault": kind,
                    "task_manager": tm as u64 % task_managers,
                    "restart_after": format!("{restart_ms}ms")}),
                "crash_jobmaster" => {
                    json!({"fault": kind, "restart_after": format!("{restart_ms}ms")})
                }
                "delay_spike" if bias.slow_rpcs => json!({"fault": kind,
                    "extra": format!("{}us", 40000 + spike.0 % 20000),
                    "duration": format!("{}ms", 60 + spike.1), "target": "rpcs"}),
                "delay_spike" => {
                    let target = ["channels", "rpcs", "all"][spike.2 as usize % 3];
                    json!({"fault": kind, "extra": format!("{}us", spike.0),
                        "duration": format!("{}ms", spike.1), "target": target})
                }
                _ => json!({"fault": kind,
                    "probability": loss.0 as f64 / 10.0, "duration": format!("{}ms", spike.1),
                    "retry_after": format!("{}ms", loss.1)}),
            };
            match trigger {
                0 => doc["at"] = json!(format!("{}us", window_us * permille / 1000)),
                1 => doc["when"] = json!({"checkpoint_pending": id}),
                2 => doc["when"] = json!({"checkpoint_completed": id}),
                3 => doc["when"] = json!({"finished": subtask(vertices, pred)}),
                4 => doc["when"] = json!({"end_of_input": subtask(vertices, pred)}),
                _ => doc["when"] = json!({"all_sources_finished": true}),
            }
            doc
        })
        .collect();
    // The slow RPCs begin with the JobManager crash.
    if bias.slow_rpcs && docs.len() >= 2 {
        let crash = docs[0].clone();
        for key in ["at", "when"] {
            match crash.get(key) {
                Some(trigger) => docs[1][key] = trigger.clone(),
                None => {
                    if let Some(spike) = docs[1].as_object_mut() {
                        spike.remove(key);
                    }
                }
            }
        }
    }
    docs
}

/// The scenario strategy for campaign seed `seed` (written as the scenario's `seed`, so the
/// run's random streams are the campaign's seed, and shrinking never changes them).
pub fn scenario_strategy(seed: u64, options: &GenerateOptions) -> BoxedStrategy<Value> {
    let protocols = protocols(options);
    let bias = Bias::of(options);
    let configuration = options.swarm.then(|| Swarm::of(seed));
    let batch_configuration = options.swarm.then(|| BatchSwarm::of(seed));
    // A bug's campaign draws the mode of its rule; the plain generator does not know the bug.
    let biasing = options.bug.filter(|_| !options.unbiased);
    let mode = match (biasing, options.mode, options.protocol) {
        (Some(bug), _, _) if bug.is_batch() => Some(Mode::Batch),
        (Some(_), _, _) | (None, None, Some(_)) => Some(Mode::Streaming),
        (None, mode, _) => mode,
    };
    let bug = options.bug;
    let shape = (
        prop::collection::vec(source(), 1..=3),
        prop::collection::vec(middle(), 0..=4),
        prop::collection::vec(sink(), 1..=2),
    );
    let network = (
        (0u64..200, 0u64..1000), // channel latency µs: min, extra
        (1u64..500, 0u64..3000), // rpc latency µs: min, extra
        1u32..=8,                // channel capacity
        any::<bool>(),           // shuffled tie-break
    );
    let checkpointing = (
        prop_oneof![
            // Periodic, in ms.
            (1u64..=30).prop_map(|ms| (Some(ms * 1000), Vec::<u64>::new())),
            // Periodic with sub-millisecond jitter plus explicit triggers (µs).
            (1000u64..30_000, prop::collection::vec(0u64..100_000, 0..4))
                .prop_map(|(us, at)| (Some(us), at)),
            // Explicit triggers only (µs).
            prop::collection::vec(0u64..120_000, 1..8).prop_map(|at| (None, at)),
        ],
        1u32..=3,
        0..protocols.len(),
        // Alignment (0 aligned, 1 unaligned, 2 alignment timeout), the timeout in µs, and
        // flush_before_finish.
        (0u8..3, 0u64..2000, any::<bool>()),
    );
    let cluster_and_jobmaster = (
        1u64..=3,      // task managers
        any::<bool>(), // full failover scope
        1u64..=20,     // restart delay ms
        5u64..=50,     // heartbeat timeout ms
    );
    // Drawn last, so the draws above are what they were before reconciliation existed.
    let reconciliation = (
        0u8..4,     // 0: `failover: reconcile`
        1u64..=60,  // reconcile timeout ms
        0u64..=100, // terminal state retention ms
    );
    // Drawn after everything else, so streaming seeds are what they were before batch jobs:
    // one seed in five is a batch job (P2) instead.
    let batch = (0u8..5, super::batch_gen::spec());
    // Drawn after the batch part, so every earlier draw is what it was before: the restart
    // strategy's `max_attempts`, 1 to 3 in three seeds of eight (so that a fault plan can use
    // it up and the job fails, which `job-status` judges), else 10.
    let restarts = 0u8..8;
    // Drawn after that: `min_pause`, in one seed of four 1 to 3 times the checkpoint interval
    // (P1.1), which `checkpoint-progress` checks the coordinator keeps.
    let pause = (0u8..4, 1u64..=3);
    // Drawn after that: at-least-once barriers (F1.7) in one streaming seed of six, and
    // snapshots with an asynchronous part of up to 3 ms (F1.8) in one of four.
    let at_least_once = 0u8..6;
    let async_snapshots = (0u8..4, 1u64..3000);
    // And last: in one streaming seed of four, the first one or two edges' channel between
    // their subtasks 0 (every edge has one) gets a latency of its own, up to 5 ms.
    let own_latency = (0u8..4, 1usize..=2, 0u64..5000);
    // After that (F1.9): a `tolerable_failures` limit of 0 to 2 in one streaming seed of four;
    // a `fail_snapshot` fault in one of four (the subtask, the checkpoint, sync or async); and
    // in one of five, tasks that initialize for 4 to 7 ms, with a trigger by hand in the first
    // 100 µs, which reaches its task while it still initializes (RPCs take under 3.5 ms).
    // And after that (F1.10): cancellation markers in one streaming seed of two.
    let failures = (
        (0u8..4, 0u32..=2),
        (0u8..4, (any::<u8>(), any::<u8>()), 1u64..=5, any::<bool>()),
        (0u8..5, 0u64..3000, 0u64..100, (any::<u8>(), any::<u8>())),
        0u8..2,
    );
    // Last: in one streaming seed of four, a `hold_channel` on one edge's channel between its
    // subtasks 0 (the edge, when in per mille of the fault window, how long in µs, which
    // trigger and release, a checkpoint id).
    let hold = (
        0u8..4,
        any::<u8>(),
        0u64..=1000,
        1u64..20_000,
        0u8..3,
        1u64..=4,
    );
    // After that (F1.12): in one streaming seed of four, operator chains: each vertex whose bit
    // is set in the mask chains a map in, behind a source or in front of any other operator.
    let chains = (0u8..4, any::<u8>());
    // After that (F1.6): in one streaming seed of five, the job starts from a checkpoint; the
    // u64 drives every choice in it (`restore_from`).
    let restores = (0u8..5, any::<u64>());
    // After that (F1.11), last: a stop-with-savepoint in one of three streaming seeds that can
    // take one (drain, when in per mille of the fault window, which trigger, a checkpoint id).
    let savepoint = (0u8..3, any::<bool>(), 0u64..=1000, 0u8..3, 1u64..=3);
    // After that (F1.13), drawn last so every earlier draw of a seed stays what it was: in one
    // streaming seed of four, the first source reads splits (how many, records in each).
    let splits = (0u8..4, 1u32..=12, 0u64..=60);
    // After that (F1.14), drawn last so every earlier draw of a seed stays what it was: in one
    // streaming seed of four, records travel in network buffers (records a buffer, the buffer
    // timeout in µs, exclusive buffers a channel, floating buffers a gate).
    let buffers = (0u8..4, 1u64..=8, 0u64..3000, 1u32..=3, 0u32..=4);
    // After that (F1.9 again), drawn last for the same reason: in one seed of three with a
    // failing snapshot, a second one two checkpoints later and a `tolerable_failures` limit of
    // 1, so a completion between the two must reset the count.
    let second_failure = 0u8..3;
    (
        shape,
        network,
        checkpointing,
        swarm(),
        cluster_and_jobmaster,
        (
            reconciliation,
            batch,
            restarts,
            pause,
            (at_least_once, async_snapshots, own_latency, failures),
            hold,
            chains,
            restores,
        ),
        savepoint,
        splits,
        buffers,
        second_failure,
    )
        .prop_map(
            move |(
                (sources, middles, sinks),
                (channel, rpc, capacity, shuffled),
                ((interval_us, trigger_at), max_concurrent, p, (alignment, timeout_us, flush)),
                swarm,
                (task_managers, full, delay_ms, heartbeat_ms),
                (
                    (failover, reconcile_ms, retention_ms),
                    (batch_draw, batch),
                    restarts,
                    pause,
                    (
                        at_least_once,
                        (async_draw, async_us),
                        (own_draw, own_edges, own_us),
                        (
                            (tolerable_draw, limit),
                            (fail_draw, fail_pick, fail_checkpoint, fail_sync),
                            (init_draw, init_us, trigger_us, trigger_pick),
                            markers_draw,
                        ),
                    ),
                    hold,
                    (chain_draw, chain_mask),
                    (restore_draw, restore_bits),
                ),
                savepoint,
                (split_draw, split_count, split_records),
                (buffer_draw, per_buffer, buffer_timeout_us, exclusive, floating),
                second_failure,
            )| {
                // A bug's campaign draws the mode of its protocol; a finish protocol implies
                // streaming.
                let is_batch = match mode {
                    Some(Mode::Batch) => true,
                    Some(Mode::Streaming) => false,
                    None => batch_draw == 0,
                };
                if is_batch {
                    // A swarm configuration switches the batch features on or off.
                    let mut batch = batch;
                    if let Some(configuration) = &batch_configuration {
                        batch.configure(configuration);
                    }
                    let mut doc = super::batch_gen::document(
                        &format!("fuzz-seed-{seed}"),
                        seed,
                        &batch,
                        shuffled,
                    );
                    doc["bug"] = json!(bug.map(|b| b.name()));
                    if bias.short_window || bias.batch_reconcile {
                        doc["jobmaster"]["failover"] = json!("reconcile");
                    }
                    if bias.short_window {
                        let window_us = 300 + reconcile_ms * 1000 % 700;
                        doc["jobmaster"]["reconcile_timeout"] = json!(format!("{window_us}us"));
                    }
                    if bias.lost_in_recovery {
                        // TaskManager1 cut off before the crash and past the wait, so the new
                        // JobMaster waits all of it; TaskManager2 lost a few ms after the
                        // election, once it has reported, and noticed within the wait.
                        let at = 4_000 + reconcile_ms * 1_000 % 20_000;
                        doc["jobmaster"]["heartbeat_timeout"] = json!("5ms");
                        doc["batch"]["previous_worker_timeout"] = json!("30ms");
                        doc["faults"] = json!([
                            {"at": format!("{}us", at - 2_000), "fault": "disconnect_task_manager",
                             "task_manager": 1, "duration": "100ms"},
                            {"at": format!("{at}us"), "fault": "crash_jobmaster",
                             "restart_after": "10ms"},
                            {"at": format!("{}us", at + 17_000), "fault": "lose_task_manager",
                             "task_manager": 2, "restart_after": "100ms"},
                        ]);
                    }
                    if bias.speculation {
                        doc["jobmaster"]["failover"] = json!("restart");
                        doc["batch"]["speculative"] = json!({"baseline_ratio": 0.5});
                        doc["batch"]["slow_task_managers"] = json!({"2": 10});
                    }
                    if bias.speculative_lost {
                        let at = 20_000 + reconcile_ms * 1_000 % 40_000;
                        let lost = if bias.slow_lost { 2 } else { reconcile_ms % 2 };
                        doc["jobmaster"]["heartbeat_timeout"] = json!("1ms");
                        doc["faults"] = json!([
                            {"at": format!("{at}us"), "fault": "lose_task_manager",
                             "task_manager": lost, "restart_after": "5ms"},
                        ]);
                    }
                    return doc;
                }
                // A swarm configuration switches the optional features on or off (`swarm`).
                let failover = configuration.draw(Feature::Reconcile, failover);
                let restarts = if configuration.has(Feature::FewRestarts, restarts < 3) {
                    restarts % 3
                } else {
                    restarts.max(3)
                };
                let pause = (configuration.draw(Feature::MinPause, pause.0), pause.1);
                let at_least_once = configuration.draw(Feature::AtLeastOnce, at_least_once);
                let async_draw = configuration.draw(Feature::AsyncSnapshots, async_draw);
                let own_draw = configuration.draw(Feature::OwnChannelLatency, own_draw);
                let tolerable_draw = configuration.draw(Feature::TolerableFailures, tolerable_draw);
                let fail_draw = configuration.draw(Feature::FailingSnapshot, fail_draw);
                let init_draw = configuration.draw(Feature::SlowInitialization, init_draw);
                let markers_draw = configuration.draw(Feature::CancelMarkers, markers_draw);
                let mut hold = hold;
                hold.0 = configuration.draw(Feature::HeldChannel, hold.0);
                let chain_draw = configuration.draw(Feature::Chains, chain_draw);
                let restore_draw = configuration.draw(Feature::RestoreFrom, restore_draw);
                let mut savepoint = savepoint;
                savepoint.0 = configuration.draw(Feature::Savepoint, savepoint.0);
                let split_draw = configuration.draw(Feature::Splits, split_draw);
                let buffer_draw = configuration.draw(Feature::NetworkBuffers, buffer_draw);
                let coarse_times = configuration.has(Feature::CoarseTimes, false);
                let reconcile = failover == 0 || bias.reconcile;
                // A retention shorter than the outage forgets every task that ended in it, and
                // the retention bug then changes nothing: its campaign keeps them longer.
                let retention_ms = if bias.reconcile { retention_ms + 200 } else { retention_ms };
                let protocol = protocols[p];
                let (mut vertices, edges) =
                    graph(&sources, &middles, &sinks, bias.two_phase_commit);
                if coarse_times {
                    // Swarm: a source's records 100 to 300 µs apart, exactly.
                    for (v, (_, _, (pace_min, _))) in vertices.iter_mut().zip(&sources) {
                        v["record_interval"] = json!(format!("{}us", 100 * (1 + pace_min % 3)));
                    }
                }
                if bias.draining_buffers {
                    // F1.14 step 8's bias: operators slower than their sources, so channels
                    // fill up and a finishing source drains under back-pressure.
                    for v in vertices.iter_mut().filter(|v| v.get("process_time").is_some()) {
                        v["process_time"] = json!("100us..400us");
                    }
                }
                let trigger_at: BTreeSet<u64> = trigger_at.into_iter().collect();
                let needs_final = protocol == FinishProtocol::Flink
                    || (protocol != FinishProtocol::Legacy
                        && vertices
                            .iter()
                            .any(|v| v["delivery"] == json!("two_phase_commit")));
                // P1.7 / F1.5 step 3: a task that waits for a checkpoint covering its final
                // state waits forever when only a finite `trigger_at` list exists. That is a
                // legitimate stall, not a bug, so such scenarios also trigger periodically.
                let interval_us = match interval_us {
                    // F1.14 step 8's bias: a checkpoint every 1 to 4 ms, so one is triggered
                    // while a task drains.
                    _ if bias.draining_buffers => Some(1000 + interval_us.unwrap_or(0) % 3000),
                    _ => interval_us.or(needs_final.then_some(30_000)),
                };
                let mut faults = faults(&vertices, task_managers, &swarm, bias);
                // F1.9: a failing snapshot; in one seed of three (and under the bias for
                // counting) two of them two checkpoints apart, so a completion comes between.
                let mut failures_apart = bias.failures_apart;
                if fail_draw == 0 || bias.failed_upload {
                    let task = subtask(&vertices, fail_pick);
                    let twice = match configuration.map(|s| s.setting(Feature::FailingSnapshot)) {
                        Some(Setting::On) => true,
                        _ => biasing.is_none() && second_failure == 0,
                    };
                    failures_apart |= biasing.is_none() && second_failure == 0;
                    let counted = bias.failed_upload || twice;
                    let phase = if fail_sync && !counted { "sync" } else { "async" };
                    faults.push(json!({"fault": "fail_snapshot", "task": task,
                        "checkpoint": fail_checkpoint, "phase": phase}));
                    // The second fails in its asynchronous part, two checkpoints later.
                    if bias.failures_apart || twice {
                        faults.push(json!({"fault": "fail_snapshot", "task": task,
                            "checkpoint": fail_checkpoint + 2, "phase": "async"}));
                    }
                }
                if let Some(h) = hold_channel(&edges, hold, swarm.3) {
                    faults.push(h);
                }
                let initializing = init_draw == 0 || bias.before_running;
                // A delayed or lost RPC could bring the trigger after the task is RUNNING,
                // where a trigger by hand of an id the coordinator has not reached yet would
                // skip its checkpoints: only with no network fault.
                let network_fault = faults
                    .iter()
                    .any(|f| f["fault"] == json!("delay_spike") || f["fault"] == json!("rpc_loss"));
                if initializing && !network_fault {
                    faults.push(json!({"at": format!("{trigger_us}us"), "fault": "trigger_task",
                        "task": subtask(&vertices, trigger_pick), "checkpoint": 1}));
                }
                // With channels this slow, a second concurrent checkpoint can subsume the first
                // at every task whose inputs differ in path length, again and again: a
                // legitimate livelock of that configuration (Flink's handler does the same), so
                // the bias also keeps one checkpoint at a time.
                let (channel, rpc, max_concurrent) = if bias.slow_channels {
                    ((2000 + channel.0, channel.1), (1 + rpc.0 % 100, rpc.1 % 200), 1)
                } else {
                    (channel, rpc, max_concurrent)
                };
                // Swarm: every latency a whole multiple of 100 µs, the same for every message
                // of its kind.
                let (channel, rpc) = if coarse_times {
                    ((channel.0 / 100 * 100 + 100, 0), (rpc.0 / 100 * 100 + 100, 0))
                } else {
                    (channel, rpc)
                };
                let max_attempts = match restarts {
                    _ if bias.one_restart => 1,
                    r @ 0..=2 => u32::from(r) + 1,
                    _ => 10,
                };
                if chain_draw == 0 || bias.chains {
                    // The bias chains a map in front of every stateful operator that is not a
                    // source, where `snapshot-head-only` loses state.
                    chain_maps(&mut vertices, if bias.chains { 0xFF } else { chain_mask });
                }
                let restore_from = (restore_draw == 0 || bias.mixed_chain)
                    .then(|| restore_from(&vertices, restore_bits, bias.mixed_chain));
                let alignment = bias.alignment.unwrap_or(match (at_least_once, alignment) {
                    (0, _) => Alignment::AtLeastOnce,
                    (_, 0) => Alignment::Aligned,
                    (_, 1) => Alignment::Unaligned,
                    _ => Alignment::Timeout,
                });
                // F1.11: only where the model runs a stop (validation refuses the rest).
                if protocol == FinishProtocol::Flink && alignment == Alignment::Aligned {
                    let source = vertices[0]["id"].as_str().unwrap_or_default();
                    if let Some(stop) =
                        stop_with_savepoint(savepoint, swarm.3, source, bias.savepoint)
                    {
                        faults.push(stop);
                    }
                }
                // F1.13: splits, where the model runs them (validation refuses the rest).
                let stops = faults
                    .iter()
                    .any(|f| f["fault"] == json!("stop_with_savepoint"));
                // A campaign biased for another bug keeps the shapes that bug needs, as before
                // splits existed: its seeds stay what they were.
                let draws_splits = (split_draw == 0 && biasing.is_none()) || bias.splits;
                let mut coordinators = json!({});
                if draws_splits && !reconcile && restore_from.is_none() && !stops {
                    let id = vertices[0]["id"].as_str().unwrap_or_default().to_owned();
                    // `chain_maps` may have moved the source's fields into its chain.
                    match vertices[0].get_mut("chain") {
                        Some(chain) => chain[0]["records"] = json!(split_records),
                        None => vertices[0]["records"] = json!(split_records),
                    }
                    coordinators[id] = json!({"splits": split_count});
                }
                let mut network = json!({
                    "channel_latency": format!("{}us..{}us", channel.0, channel.0 + channel.1),
                    "rpc_latency": format!("{}us..{}us", rpc.0, rpc.0 + rpc.1),
                    "channel_capacity": capacity,
                    "channels": if own_draw == 0 {
                        own_channels(&edges, own_edges, own_us, coarse_times)
                    } else {
                        Vec::new()
                    },
                });
                // F1.14: like splits, not in a campaign biased for another bug.
                if (buffer_draw == 0 && biasing.is_none()) || bias.draining_buffers {
                    // F1.14 step 8's bias: a buffer per record and one exclusive buffer a
                    // channel, so a draining task's channels wait for credit at their ends.
                    let (per_buffer, exclusive, floating) = if bias.draining_buffers {
                        (1, 1, floating % 3)
                    } else {
                        (per_buffer, exclusive, floating)
                    };
                    let network = network.as_object_mut().expect("an object");
                    network.remove("channel_capacity");
                    network.insert("buffer_size".into(), json!(per_buffer * 100));
                    network.insert("record_bytes".into(), json!(100));
                    network.insert(
                        "buffer_timeout".into(),
                        json!(format!("{buffer_timeout_us}us")),
                    );
                    network.insert("exclusive_buffers_per_channel".into(), json!(exclusive));
                    network.insert("floating_buffers_per_gate".into(), json!(floating));
                }
                json!({
                    "name": format!("fuzz-seed-{seed}"),
                    "seed": seed,
                    "mode": "streaming",
                    "job": {"vertices": vertices, "edges": edges},
                    "coordinators": coordinators,
                    "restore_from": restore_from,
                    "cluster": {
                        "task_managers": task_managers,
                        "task_initialization": if initializing {
                            format!("{}us", 4000 + init_us)
                        } else {
                            "0us".to_owned()
                        },
                    },
                    "network": network,
                    "checkpointing": {
                        "interval": interval_us.map(|us| format!("{us}us")),
                        "trigger_at": trigger_at.iter().map(|us| format!("{us}us")).collect::<Vec<_>>(),
                        "timeout": CHECKPOINT_TIMEOUT,
                        // A channel slower than the checkpoint interval lets a newer
                        // checkpoint subsume the older at its consumer again and again (the
                        // livelock `slow_channels` avoids too): one checkpoint at a time.
                        "max_concurrent": if own_draw == 0 { 1 } else { max_concurrent },
                        "min_pause": match (pause, interval_us) {
                            ((0, k), Some(us)) => format!("{}us", us * k),
                            (_, Some(us)) if bias.min_pause => format!("{}us", us * 2),
                            _ => "0ms".to_owned(),
                        },
                        "mode": match alignment {
                            Alignment::Unaligned => "unaligned",
                            Alignment::AtLeastOnce => "at_least_once",
                            Alignment::Aligned | Alignment::Timeout => "aligned",
                        },
                        "alignment_timeout": (alignment == Alignment::Timeout)
                            .then(|| format!("{timeout_us}us")),
                        "finish_protocol": protocol.name(),
                        "flush_before_finish": flush || bias.draining_buffers,
                        "cancel_markers": markers_draw == 0 || bias.cancel_markers,
                        "tolerable_failures": (tolerable_draw == 0 || bias.tolerable || failures_apart)
                            .then_some(if failures_apart { 1 } else { limit }),
                        "async_duration": if async_draw == 0 || bias.async_snapshots {
                            format!("0us..{async_us}us")
                        } else {
                            "0us".to_owned()
                        },
                    },
                    "faults": faults,
                    "heal_at": format!("{}ms", swarm.3),
                    "jobmaster": {
                        "failover_scope": if full { "full" } else { "region" },
                        "restart_strategy": {"delay": format!("{delay_ms}ms"), "max_attempts": max_attempts},
                        "heartbeat_timeout": format!("{heartbeat_ms}ms"),
                        "failover": if reconcile { "reconcile" } else { "restart" },
                        "reconcile_timeout": format!("{reconcile_ms}ms"),
                        "terminal_state_retention": format!("{retention_ms}ms"),
                    },
                    "budget": {"max_events": MAX_EVENTS, "max_time": MAX_TIME},
                    "tie_break": if shuffled { "shuffled" } else { "insertion" },
                    "bug": bug.map(|b| b.name()),
                })
            },
        )
        .boxed()
}
