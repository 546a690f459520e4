//! The `faults` list and `heal_at`: each fault's trigger (a time or a `when` predicate over the
//! run), its kind and the fields that kind takes, in the order of the format table; what a
//! fault names must exist and apply to the scenario's mode.

use super::super::raw::{self, FaultName, RawFault, RawPredicate};
use super::super::types::{
    Budget, CheckpointMode, Cluster, Delivery, Fault, FaultKind, FaultTrigger, FinishProtocol, Job,
    Predicate, Release, SnapshotPhase, SpikeTarget,
};
use super::{problem, subtask_ref, Problem};
use crate::status::JobStatus;

/// What a fault may refer to, validated already.
pub(super) struct FaultContext<'a> {
    pub job: &'a Job,
    pub cluster: &'a Cluster,
    pub checkpointing: bool,
    /// `mode: "batch"`: some faults and predicates only apply to one mode.
    pub batch: bool,
    pub finish_protocol: Option<FinishProtocol>,
    /// The checkpointing mode, and whether an alignment timeout is set (F1.11: a savepoint is
    /// always aligned).
    pub barriers: Option<(CheckpointMode, bool)>,
    pub budget: &'a Budget,
    /// The job's channels, built on the first `hold_channel`: a large job's graph is not
    /// built for nothing.
    pub joined: std::cell::OnceCell<super::Joined>,
}

/// Checks `faults[i]`: its trigger, then its kind and the kind's fields in the order of the
/// format table.
pub(super) fn check_fault(i: usize, raw: RawFault, world: &FaultContext) -> Result<Fault, Problem> {
    let at = |field: &str| format!("faults[{i}].{field}");
    let trigger = match (raw.at, raw.when) {
        (Some(_), Some(_)) => {
            return Err(problem(
                format!("faults[{i}]"),
                "has both `at` and `when`; a fault has exactly one trigger: `at` for an \
                 instant, or `when` for a predicate over the run",
            ))
        }
        // A fail_snapshot fault is a standing condition: armed from the start unless a
        // trigger arms it later.
        (None, None) if raw.fault == FaultName::FailSnapshot => {
            FaultTrigger::At(sim::Duration::ZERO)
        }
        (None, None) => {
            return Err(problem(
                format!("faults[{i}]"),
                "has no trigger; give exactly one of `at` (an instant, like \"150ms\") or \
                 `when` (a predicate over the run, like {\"checkpoint_pending\": 3})",
            ))
        }
        (Some(instant), None) => {
            let instant = instant.0;
            let max_time = world.budget.max_time;
            if instant > max_time {
                return Err(problem(
                    at("at"),
                    format!(
                        "{instant} is after budget.max_time ({max_time}), so the fault could \
                         never fire; move it earlier or raise budget.max_time"
                    ),
                ));
            }
            FaultTrigger::At(instant)
        }
        (None, Some(when)) => FaultTrigger::When(check_predicate(
            &format!("faults[{i}].when"),
            when.0,
            world,
        )?),
    };
    let kind = raw.fault;
    match (kind, world.batch) {
        (FaultName::DelaySpike, true) if raw.target == Some(SpikeTarget::Channels) => {
            return Err(problem(
                at("target"),
                "a batch job has no data channels: its tasks read their inputs as whole \
                 blocking partitions when they are deployed, so a delay_spike in batch mode \
                 targets \"rpcs\" (or \"all\", which there means the same)",
            ))
        }
        (FaultName::JobEventsWriteFailure | FaultName::JobEventsReadFailure, false) => {
            return Err(problem(
                at("fault"),
                format!(
                    "{} only applies to batch jobs: a streaming job has no job event store \
                     (it recovers from checkpoints)",
                    kind.name()
                ),
            ))
        }
        (FaultName::StopWithSavepoint, true) => {
            return Err(problem(
                at("fault"),
                "stop_with_savepoint only applies to streaming jobs: a batch job has no \
                 checkpoint coordinator to take a savepoint (F1.11)",
            ))
        }
        (FaultName::StopWithSavepoint, false) => check_stop(i, world)?,
        (FaultName::TriggerTask | FaultName::FailSnapshot, true) => {
            return Err(problem(
                at("fault"),
                format!(
                    "{} only applies to streaming jobs: a batch job takes no checkpoints",
                    kind.name()
                ),
            ))
        }
        (FaultName::TriggerTask, false) if !world.checkpointing => {
            return Err(problem(
                at("fault"),
                "trigger_task needs a `checkpointing` block: it sends the trigger of a pending \
                 checkpoint",
            ))
        }
        (FaultName::FailSnapshot, false) if !world.checkpointing => {
            return Err(problem(
                at("fault"),
                "fail_snapshot needs a `checkpointing` block: it breaks a snapshot of a \
                 checkpoint",
            ))
        }
        (FaultName::HoldChannel, true) => {
            return Err(problem(
                at("fault"),
                "hold_channel only applies to streaming jobs: a batch job has no data channels \
                 (its tasks read their inputs as whole blocking partitions when deployed)",
            ))
        }
        (FaultName::DisconnectTaskManager, false) => {
            return Err(problem(
                at("fault"),
                "disconnect_task_manager only applies to batch jobs (a TaskManager that keeps \
                 its partitions but reaches a new JobManager late, P2.4)",
            ))
        }
        _ => {}
    }
    // Each kind-specific field with the kinds it applies to.
    let misplaced: [(&str, bool, &[FaultName]); 15] = [
        (
            "task",
            raw.task.is_some(),
            &[
                FaultName::FailTask,
                FaultName::TriggerTask,
                FaultName::FailSnapshot,
            ],
        ),
        (
            "checkpoint",
            raw.checkpoint.is_some(),
            &[FaultName::TriggerTask, FaultName::FailSnapshot],
        ),
        ("phase", raw.phase.is_some(), &[FaultName::FailSnapshot]),
        (
            "task_manager",
            raw.task_manager.is_some(),
            &[FaultName::LoseTaskManager, FaultName::DisconnectTaskManager],
        ),
        (
            "restart_after",
            raw.restart_after.is_some(),
            &[FaultName::LoseTaskManager, FaultName::CrashJobmaster],
        ),
        ("extra", raw.extra.is_some(), &[FaultName::DelaySpike]),
        (
            "duration",
            raw.duration.is_some(),
            &[
                FaultName::DelaySpike,
                FaultName::RpcLoss,
                FaultName::DisconnectTaskManager,
            ],
        ),
        ("target", raw.target.is_some(), &[FaultName::DelaySpike]),
        (
            "probability",
            raw.probability.is_some(),
            &[FaultName::RpcLoss],
        ),
        (
            "retry_after",
            raw.retry_after.is_some(),
            &[FaultName::RpcLoss],
        ),
        ("from", raw.from.is_some(), &[FaultName::HoldChannel]),
        ("to", raw.to.is_some(), &[FaultName::HoldChannel]),
        (
            "release_at",
            raw.release_at.is_some(),
            &[FaultName::HoldChannel],
        ),
        (
            "release_when",
            raw.release_when.is_some(),
            &[FaultName::HoldChannel],
        ),
        (
            "drain",
            raw.drain.is_some(),
            &[FaultName::StopWithSavepoint],
        ),
    ];
    for (field, present, owners) in misplaced {
        if present && !owners.contains(&kind) {
            let owners: Vec<&str> = owners.iter().map(|o| o.name()).collect();
            return Err(problem(
                at(field),
                format!(
                    "`{field}` only applies to {} faults, and this one is a {} fault",
                    match owners.split_last() {
                        Some((last, rest)) if !rest.is_empty() =>
                            format!("{} and {last}", rest.join(", ")),
                        _ => owners.join(""),
                    },
                    kind.name()
                ),
            ));
        }
    }
    let required = |field: &str, what: &str| {
        problem(
            format!("faults[{i}]"),
            format!(
                "missing field `{field}`: a {} fault needs {what}",
                kind.name()
            ),
        )
    };
    let above_zero = |field: &str, d: sim::Duration, why: &str| {
        if d == sim::Duration::ZERO {
            Err(problem(at(field), format!("must be longer than 0: {why}")))
        } else {
            Ok(d)
        }
    };
    let kind = match kind {
        FaultName::FailTask | FaultName::TriggerTask | FaultName::FailSnapshot => {
            let name = raw.task.ok_or_else(|| {
                required(
                    "task",
                    &format!(
                        "the subtask to {}, like \"{}[0]\"",
                        match kind {
                            FaultName::FailTask => "fail",
                            FaultName::TriggerTask => "trigger",
                            _ => "fail the snapshot of",
                        },
                        world.job.vertices[0].id
                    ),
                )
            })?;
            let task = subtask_ref(&name, world.job).map_err(|m| problem(at("task"), m))?;
            if raw.checkpoint == Some(0) {
                return Err(problem(
                    at("checkpoint"),
                    "must be at least 1: checkpoint ids start at 1",
                ));
            }
            match kind {
                FaultName::FailTask => FaultKind::FailTask { task },
                FaultName::TriggerTask => FaultKind::TriggerTask {
                    task,
                    checkpoint: raw.checkpoint,
                },
                _ => {
                    let checkpoint = raw.checkpoint.ok_or_else(|| {
                        required(
                            "checkpoint",
                            "the id of the checkpoint whose snapshot fails, from 1",
                        )
                    })?;
                    FaultKind::FailSnapshot {
                        task,
                        checkpoint,
                        phase: raw.phase.unwrap_or(SnapshotPhase::Sync),
                    }
                }
            }
        }
        FaultName::LoseTaskManager | FaultName::DisconnectTaskManager => {
            let task_manager = raw
                .task_manager
                .ok_or_else(|| required("task_manager", "the number of the TaskManager, from 0"))?;
            let count = world.cluster.task_managers;
            if task_manager >= count {
                let numbered = if count == 1 {
                    "so the only one is 0".to_owned()
                } else {
                    format!("so they are numbered 0 to {}", count - 1)
                };
                return Err(problem(
                    at("task_manager"),
                    format!(
                        "there is no task manager {task_manager}: cluster.task_managers is \
                         {count}, {numbered}"
                    ),
                ));
            }
            if kind == FaultName::DisconnectTaskManager {
                let duration = raw.duration.ok_or_else(|| {
                    required(
                        "duration",
                        "how long the TaskManager cannot reach the JobManager, like \"100ms\"",
                    )
                })?;
                let duration = above_zero(
                    "duration",
                    duration.0,
                    "a disconnection that lasts no time changes nothing",
                )?;
                FaultKind::DisconnectTaskManager {
                    task_manager,
                    duration,
                }
            } else {
                FaultKind::LoseTaskManager {
                    task_manager,
                    restart_after: raw
                        .restart_after
                        .map_or(raw::DEFAULT_TASK_MANAGER_RESTART_AFTER, |d| d.0),
                }
            }
        }
        FaultName::HoldChannel => {
            let end = |field: &str, name: Option<&String>, what: &str| {
                let name = name.ok_or_else(|| {
                    required(
                        field,
                        &format!(
                            "the {what} subtask of the channel to hold, like \"{}[0]\"",
                            world.job.vertices[0].id
                        ),
                    )
                })?;
                subtask_ref(name, world.job).map_err(|m| problem(at(field), m))
            };
            let from = end("from", raw.from.as_ref(), "producing")?;
            let to = end("to", raw.to.as_ref(), "consuming")?;
            let joined = world.joined.get_or_init(|| super::Joined::of(world.job));
            if joined.pair(from, to).is_none() {
                return Err(problem(
                    format!("faults[{i}]"),
                    super::no_channel(
                        raw.from.as_deref().unwrap_or_default(),
                        raw.to.as_deref().unwrap_or_default(),
                    ),
                ));
            }
            let release = check_release(i, raw.release_at, raw.release_when, &trigger, world)?;
            FaultKind::HoldChannel { from, to, release }
        }
        // F1.11: Flink's `flink stop` drains only with `--drain`.
        FaultName::StopWithSavepoint => FaultKind::StopWithSavepoint {
            drain: raw.drain.unwrap_or(false),
        },
        FaultName::JobEventsWriteFailure => FaultKind::JobEventsWriteFailure,
        FaultName::JobEventsReadFailure => FaultKind::JobEventsReadFailure,
        FaultName::CrashJobmaster => FaultKind::CrashJobMaster {
            restart_after: raw
                .restart_after
                .map_or(raw::DEFAULT_JOBMASTER_RESTART_AFTER, |d| d.0),
        },
        FaultName::DelaySpike => {
            let extra = raw.extra.ok_or_else(|| {
                required(
                    "extra",
                    "the delay `extra` added to each message, like \"5ms\"",
                )
            })?;
            let extra = above_zero(
                "extra",
                extra.0,
                "a spike of no extra delay changes nothing",
            )?;
            let duration = raw
                .duration
                .ok_or_else(|| required("duration", "how long the spike lasts, like \"100ms\""))?;
            let duration = above_zero(
                "duration",
                duration.0,
                "a spike that lasts no time changes nothing",
            )?;
            FaultKind::DelaySpike {
                extra,
                duration,
                target: raw.target.unwrap_or(raw::DEFAULT_SPIKE_TARGET),
            }
        }
        FaultName::RpcLoss => {
            let probability = raw.probability.ok_or_else(|| {
                required(
                    "probability",
                    "the `probability` that an RPC is lost, a number from 0 to 1",
                )
            })?;
            if !(0.0..=1.0).contains(&probability) {
                return Err(problem(
                    at("probability"),
                    format!("must be a number from 0 to 1, not {probability}"),
                ));
            }
            let retry_after = above_zero(
                "retry_after",
                raw.retry_after
                    .map_or(raw::DEFAULT_RPC_RETRY_AFTER, |d| d.0),
                "a lost RPC sent again at once could be lost again at the same instant, \
                 forever",
            )?;
            let duration = raw
                .duration
                .ok_or_else(|| required("duration", "how long RPCs are lost, like \"100ms\""))?;
            let duration = above_zero(
                "duration",
                duration.0,
                "a loss that lasts no time loses nothing",
            )?;
            FaultKind::RpcLoss {
                probability,
                retry_after,
                duration,
            }
        }
    };
    Ok(Fault { trigger, kind })
}

/// F1.11: a stop-with-savepoint runs where the model follows Flink faithfully: a coordinator
/// (`checkpointing`), the `flink` finish protocol, and aligned barriers without a timeout.
fn check_stop(i: usize, world: &FaultContext) -> Result<(), Problem> {
    let at = format!("faults[{i}].fault");
    let Some((mode, timeout)) = world.barriers else {
        return Err(problem(
            at,
            "stop_with_savepoint needs a `checkpointing` block: the savepoint is taken by the \
             checkpoint coordinator, which only a job with checkpointing has here",
        ));
    };
    if world.finish_protocol != Some(FinishProtocol::Flink) {
        return Err(problem(
            at,
            "stop_with_savepoint needs checkpointing.finish_protocol \"flink\": it is modelled on \
             Flink's implementation (EndOfData with a stop mode, F1.11); the design documents' \
             option1 and option2 do not describe it, and `legacy` has no EndOfData to carry the \
             stop",
        ));
    }
    let why = match (mode, timeout) {
        (CheckpointMode::Aligned, false) => return Ok(()),
        (CheckpointMode::Aligned, true) => "an alignment_timeout",
        (CheckpointMode::Unaligned, _) => "checkpointing.mode \"unaligned\"",
        (CheckpointMode::AtLeastOnce, _) => "checkpointing.mode \"at_least_once\"",
    };
    Err(problem(
        at,
        format!(
            "stop_with_savepoint cannot be combined with {why}: Flink always aligns a \
             savepoint's barriers, without a timeout, whatever the job's checkpoints do, and the \
             model chooses its barrier handling once per job (F1.11)"
        ),
    ))
}

/// Checks how `faults[i]`, a `hold_channel`, ends: exactly one of `release_at` (after the
/// hold's `at`, within the budget) and `release_when` (a predicate, like `when`).
fn check_release(
    i: usize,
    release_at: Option<raw::SingleDuration>,
    release_when: Option<raw::Object<RawPredicate>>,
    trigger: &FaultTrigger,
    world: &FaultContext,
) -> Result<Release, Problem> {
    let at = format!("faults[{i}].release_at");
    match (release_at, release_when) {
        (Some(_), Some(_)) => Err(problem(
            format!("faults[{i}]"),
            "has both `release_at` and `release_when`; a hold ends at exactly one: an instant, \
             or the first time a predicate holds",
        )),
        (None, None) => Err(problem(
            format!("faults[{i}]"),
            "missing field `release_at`: a hold_channel fault needs `release_at` (an instant, \
             like \"20ms\") or `release_when` (a predicate, like {\"checkpoint_completed\": 1}): \
             a channel held for ever would stall the job",
        )),
        (Some(instant), None) => {
            let (instant, max_time) = (instant.0, world.budget.max_time);
            if instant > max_time {
                return Err(problem(
                    at,
                    format!(
                        "{instant} is after budget.max_time ({max_time}), so the channel would \
                         never be released"
                    ),
                ));
            }
            match trigger {
                FaultTrigger::At(start) if instant <= *start => Err(problem(
                    at,
                    format!(
                        "{instant} does not come after the hold's `at` ({start}): the channel \
                         would be let go before it is held"
                    ),
                )),
                _ => Ok(Release::At(instant)),
            }
        }
        (None, Some(when)) => Ok(Release::When(check_predicate(
            &format!("faults[{i}].release_when"),
            when.0,
            world,
        )?)),
    }
}

/// The keys of a fault's `when`, in the order of the format table.
const PREDICATES: &str = "checkpoint_pending, checkpoint_completed, finished, end_of_input, \
    waiting_for_final_checkpoint, all_sources_finished, event_count, job_status";

/// Checks a predicate at `path` (`faults[i].when` or `faults[i].release_when`): exactly one
/// key, and what it refers to.
fn check_predicate(
    path: &str,
    raw: RawPredicate,
    world: &FaultContext,
) -> Result<Predicate, Problem> {
    let at = |key: &str| format!("{path}.{key}");
    let given = [
        ("checkpoint_pending", raw.checkpoint_pending.is_some()),
        ("checkpoint_completed", raw.checkpoint_completed.is_some()),
        ("finished", raw.finished.is_some()),
        ("end_of_input", raw.end_of_input.is_some()),
        (
            "waiting_for_final_checkpoint",
            raw.waiting_for_final_checkpoint.is_some(),
        ),
        ("all_sources_finished", raw.all_sources_finished.is_some()),
        ("event_count", raw.event_count.is_some()),
        ("job_status", raw.job_status.is_some()),
    ];
    let keys: Vec<&str> = given
        .iter()
        .filter(|(_, present)| *present)
        .map(|(key, _)| *key)
        .collect();
    if keys.len() != 1 {
        let found = if keys.is_empty() {
            "has no predicate".to_owned()
        } else {
            format!("has {} predicates (`{}`)", keys.len(), keys.join("`, `"))
        };
        return Err(problem(
            path,
            format!("{found}; expected an object with exactly one of: {PREDICATES}"),
        ));
    }
    let needs_checkpointing = |key: &str| {
        if world.checkpointing {
            Ok(())
        } else {
            Err(problem(
                at(key),
                "checkpointing is disabled (the scenario has no `checkpointing` block), so this \
                 predicate could never hold; add the block or use another trigger",
            ))
        }
    };
    let checkpoint_id = |key: &str, id: u64| {
        needs_checkpointing(key)?;
        if id == 0 {
            return Err(problem(
                at(key),
                "must be at least 1: checkpoint ids start at 1",
            ));
        }
        Ok(id)
    };
    let subtask = |key: &str, name: &str| {
        subtask_ref(name, world.job).map_err(|message| problem(at(key), message))
    };
    if world.batch && (raw.end_of_input.is_some() || raw.waiting_for_final_checkpoint.is_some()) {
        let key = if raw.end_of_input.is_some() {
            "end_of_input"
        } else {
            "waiting_for_final_checkpoint"
        };
        return Err(problem(
            at(key),
            "only applies to streaming jobs; a batch fault takes `finished`, \
             `all_sources_finished` or `event_count`",
        ));
    }
    if let Some(id) = raw.checkpoint_pending {
        return Ok(Predicate::CheckpointPending(checkpoint_id(
            "checkpoint_pending",
            id,
        )?));
    }
    if let Some(id) = raw.checkpoint_completed {
        return Ok(Predicate::CheckpointCompleted(checkpoint_id(
            "checkpoint_completed",
            id,
        )?));
    }
    if let Some(name) = &raw.finished {
        return Ok(Predicate::Finished(subtask("finished", name)?));
    }
    if let Some(name) = &raw.end_of_input {
        return Ok(Predicate::EndOfInput(subtask("end_of_input", name)?));
    }
    if let Some(name) = &raw.waiting_for_final_checkpoint {
        let key = "waiting_for_final_checkpoint";
        let task = subtask(key, name)?;
        needs_checkpointing(key)?;
        // The predicate holds at the task's end of input, so it must name a task that then
        // waits: under `flink` every task does (F1.5 step 3), under `option1`/`option2` only a
        // two-phase-commit sink (P1.7), under `legacy` none.
        let two_phase =
            world.job.vertices[task.vertex].chain.sink() == Some(Delivery::TwoPhaseCommit);
        let waits = match world.finish_protocol {
            Some(FinishProtocol::Flink) => true,
            Some(FinishProtocol::Option1 | FinishProtocol::Option2) => two_phase,
            Some(FinishProtocol::Legacy) | None => false,
        };
        if !waits {
            return Err(problem(
                at(key),
                format!(
                    "`{name}` never waits for a final checkpoint, so this predicate could never \
                     hold: under `option1` and `option2` only two-phase-commit sinks wait (P1.7), \
                     under `flink` every task does (F1.5), under `legacy` none; use \
                     `end_of_input` for the moment its input ends"
                ),
            ));
        }
        return Ok(Predicate::WaitingForFinalCheckpoint(task));
    }
    if let Some(all) = raw.all_sources_finished {
        if !all {
            return Err(problem(
                at("all_sources_finished"),
                "must be true: the predicate holds once every source subtask is FINISHED, and \
                 false names no condition",
            ));
        }
        return Ok(Predicate::AllSourcesFinished);
    }
    if let Some(name) = &raw.job_status {
        let names: Vec<&str> = JobStatus::ALL.iter().map(|s| s.name()).collect();
        return JobStatus::from_name(name)
            .map(Predicate::JobStatus)
            .ok_or_else(|| {
                problem(
                    at("job_status"),
                    format!(
                        "`{name}` is not a job status; expected one of {}",
                        names.join(", ")
                    ),
                )
            });
    }
    let count = raw
        .event_count
        .expect("exactly one predicate is present, and it is none of the others");
    if count == 0 {
        return Err(problem(
            at("event_count"),
            "must be at least 1: zero events are recorded before the run starts; use \
             `at: \"0\"` for a fault at the start",
        ));
    }
    Ok(Predicate::EventCount(count))
}

/// `heal_at` must not come before a fault's `at` (that fault would fire in the healed phase)
/// nor after `budget.max_time` (the healed phase would never begin).
pub(super) fn check_heal_at(
    heal_at: Option<sim::Duration>,
    faults: &[Fault],
    budget: &Budget,
) -> Result<(), Problem> {
    let Some(heal_at) = heal_at else {
        return Ok(());
    };
    for (i, fault) in faults.iter().enumerate() {
        if let FaultTrigger::At(instant) = fault.trigger {
            if instant > heal_at {
                return Err(problem(
                    "heal_at",
                    format!(
                        "{heal_at} is before faults[{i}].at ({instant}): no fault fires in the \
                         healed phase; heal at {instant} or later, or move the fault earlier"
                    ),
                ));
            }
        }
    }
    if heal_at > budget.max_time {
        return Err(problem(
            "heal_at",
            format!(
                "{heal_at} is after budget.max_time ({}), so the healed phase would never \
                 begin; heal earlier or raise budget.max_time",
                budget.max_time
            ),
        ));
    }
    Ok(())
}
