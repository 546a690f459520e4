//! One run: build the world from a scenario, drive the kernel to the end or a budget, let the
//! oracles judge, and gather what the reports need.

use crate::checkpoint::stats::{CheckpointRecord, FailoverRecord, Outcome, ReconcileRecord};
use crate::graph::ExecutionGraph;
use crate::oracle::invariant::Invariant;
use crate::oracle::Violation;
use crate::probes::{ProbeSet, StateCoverage};
use crate::scenario::{Delivery, Scenario, TieBreak};
use crate::status::JobStatus;
use crate::trace::{EventWorkExceeded, Retain, Trace};
use crate::world::{Event, Streaming, World};
use sim::explore::{Delay, Replay};
use sim::{Budget, Chooser, Instant, Model, RunOutcome, Simulation, StopReason};
use std::panic::{self, AssertUnwindSafe};

/// How to run a scenario, beyond what the scenario says.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// Overrides the scenario's `seed`.
    pub seed: Option<u64>,
    /// Which trace events to keep for rendering after the run.
    pub retain: Retain,
    /// A lazily paced source wakes at every step (`run --eager-sources`): F1.14 step 11's
    /// saving (`src/task/pacing.rs`, a wake-up only for a step something could see) switched
    /// off, to check that the saving changes nothing ([`pacing_is_comparable`]).
    pub eager_sources: bool,
}

/// Whether a run with [`RunOptions::eager_sources`] should give the same trace as the lazy
/// one: under `tie_break: insertion` only, where a push the other run does not make (a wake-up
/// for an unseen step) leaves every other pair of same-instant events in push order. A
/// shuffled tie is a fresh draw per push and a choice vector an index per branch point, so
/// there one push more reorders every later tie. Even under insertion the two agree exactly
/// only while no step that something sees falls in the same instant as another actor's event
/// pushed between the two runs' wake-ups for that step (the eager one is pushed one interval
/// before, the lazy one earlier): such a pair is ordered by push order, and each order is a
/// valid run. `tests/scenarios.rs` requires the same trace on every shipped scenario;
/// campaigns do not (a swarm seed, 263, shrinks to a pair like that).
pub fn pacing_is_comparable(scenario: &Scenario) -> bool {
    matches!(scenario.tie_break, TieBreak::Insertion)
}

/// Everything a run produced.
pub struct RunReport {
    pub seed: u64,
    pub status: JobStatus,
    pub stop: StopReason,
    /// Kernel events processed (what `budget.max_events` counts).
    pub events: u64,
    pub sim_time: Instant,
    pub trace_hash: u64,
    /// Records each sink vertex received, in vertex order.
    pub sinks: Vec<(String, u64)>,
    pub violations: Vec<Violation>,
    /// When the run stopped before the job ended: what was still going on.
    pub diagnosis: Vec<String>,
    /// Every checkpoint triggered, in id order.
    pub checkpoints: Vec<CheckpointRecord>,
    /// Every failover (P1.8), in order.
    pub failovers: Vec<FailoverRecord>,
    /// Every reconciliation (P3), in order.
    pub reconciliations: Vec<ReconcileRecord>,
    /// P3.3: TaskManager RPCs kept for a retry, and sent again.
    pub rpcs_kept: u64,
    pub rpcs_resent: u64,
    /// F1.6: why the job could not start from `restore_from`, if it could not.
    pub restore_refused: Option<String>,
    /// The checkpoint `run_keeping` was asked to keep, if it completed.
    pub saved_checkpoint: Option<crate::checkpoint::storage::SavedCheckpoint>,
    /// Records committed by two-phase-commit sinks, in all.
    pub committed_records: u64,
    /// The coverage probes the run hit (`crate::probes`).
    pub probes: ProbeSet,
    /// The abstract protocol states and transitions the run went through (streaming runs;
    /// empty for batch ones), what `fuzz --strategy guided` steers by.
    pub states: StateCoverage,
    pub trace: Trace,
    pub graph: ExecutionGraph,
    /// Batch runs (P2): parallelism, recoveries and their figures.
    pub batch: Option<crate::batch::BatchFigures>,
}

impl RunReport {
    pub fn sink_records(&self) -> u64 {
        self.sinks.iter().map(|(_, n)| n).sum()
    }

    pub fn completed_checkpoints(&self) -> u64 {
        self.checkpoints
            .iter()
            .filter(|c| matches!(c.outcome, Outcome::Completed(_)))
            .count() as u64
    }

    pub fn retrigger_rpcs(&self) -> u64 {
        self.checkpoints.iter().map(|c| c.retriggers).sum()
    }
}

/// Runs `scenario` to completion or to its budget. Deterministic: the same scenario and seed
/// give the same report, trace and hash.
pub fn run(scenario: &Scenario, options: &RunOptions) -> RunReport {
    run_keeping(scenario, options, None)
}

/// [`run`], keeping a copy of checkpoint `keep` when it completes (`--save-checkpoint`, F1.6):
/// the report's `saved_checkpoint`. Keeping a copy changes nothing in the run.
///
/// Both kinds of job run through here on the one [`World`]: the same kernel, budget,
/// diagnosis and `job-terminates` verdict; what each mode's actors and oracles leave behind is
/// gathered by `streaming_report` or `batch_report`.
pub fn run_keeping(scenario: &Scenario, options: &RunOptions, keep: Option<u64>) -> RunReport {
    run_ordered(scenario, options, keep, None)
}

/// [`run`], with `chooser` ordering the events due at the same instant instead of the
/// scenario's `tie_break` (`fuzz --strategy pct` and `exhaustive`, `sim::explore`).
pub fn run_chosen(
    scenario: &Scenario,
    options: &RunOptions,
    chooser: &mut dyn Chooser,
) -> RunReport {
    run_ordered(scenario, options, None, Some(chooser))
}

fn run_ordered(
    scenario: &Scenario,
    options: &RunOptions,
    keep: Option<u64>,
    chooser: Option<&mut dyn Chooser>,
) -> RunReport {
    let seed = options.seed.unwrap_or(scenario.seed);
    let mut world = World::new(scenario, seed, options.retain);
    if let (true, World::Streaming(streaming)) = (options.eager_sources, &mut world) {
        streaming.config.lazy_sources = false;
    }
    if let (Some(id), World::Streaming(streaming)) = (keep, &mut world) {
        streaming.io.storage.keep(id);
    }
    let (outcome, replay_note) = drive(&mut world, Event::Start, scenario, seed, chooser);

    let status = world.job_status();
    let mut diagnosis: Vec<String> = replay_note.into_iter().collect();
    let stalled = matches!(outcome.reason, StopReason::Quiescent) && !status.is_terminal();
    if !matches!(outcome.reason, StopReason::Done) {
        diagnosis.push(format!(
            "the run stopped at {} after {} events: {}; the job is {status}",
            outcome.now, outcome.events, outcome.reason
        ));
        match &world {
            World::Streaming(streaming) => {
                if let Some(next) = outcome.next_pending_at {
                    diagnosis.push(format!(
                        "{} event(s) still pending, the next at {next}",
                        outcome.pending
                    ));
                }
                diagnosis.extend(streaming.describe_unfinished());
            }
            World::Batch(batch) => diagnosis.extend(batch.describe_unfinished()),
        }
    }
    let faults = match &world {
        World::Streaming(streaming) => &streaming.io.faults,
        World::Batch(batch) => &batch.cluster.faults,
    };
    for fault in faults.unfired() {
        diagnosis.push(format!("fault {fault} never fired"));
    }
    let healed = faults.healed_at().is_some_and(|h| h <= outcome.now);
    // `job-terminates`: with bounded sources and faults over, the job must end within its
    // budget (a run that just stops with events pending only counts once healed).
    let bounded = match &world {
        World::Streaming(streaming) => streaming.bounded(),
        World::Batch(_) => true,
    };
    let not_terminated = !status.is_terminal()
        && bounded
        && (stalled
            || (healed
                && matches!(
                    outcome.reason,
                    StopReason::EventBudget | StopReason::TimeBudget
                )));
    let ended = Ended {
        seed,
        status,
        outcome,
        diagnosis,
    };
    let mut report = match world {
        World::Streaming(streaming) => streaming_report(scenario, streaming, ended),
        World::Batch(batch) => batch_report(batch, ended),
    };
    if stalled || not_terminated {
        let message = if stalled {
            format!("no event is pending but the job is still {status}: it is stuck")
        } else {
            format!(
                "faults stopped, yet the job is still {status} when its budget ran out ({})",
                report.stop
            )
        };
        report.violations.push(Violation {
            invariant: Invariant::JobTerminates,
            time: report.sim_time,
            actors: vec!["JobMaster".to_owned()],
            event_index: report.trace.len().saturating_sub(1),
            message,
        });
    }
    report
}

/// How a run ended, as the kernel and the common checks saw it.
struct Ended {
    seed: u64,
    status: JobStatus,
    outcome: RunOutcome,
    diagnosis: Vec<String>,
}

/// A streaming run's report: its oracles' verdict, sinks, checkpoint and failover statistics.
fn streaming_report(scenario: &Scenario, world: Streaming, ended: Ended) -> RunReport {
    let Ended {
        seed,
        status,
        outcome,
        mut diagnosis,
    } = ended;
    let Streaming {
        graph,
        mut io,
        task_managers,
        ..
    } = world;
    let trace_len = io.trace.len();
    if io.oracles.unkept() > 0 {
        diagnosis.push(format!(
            "{} more violations were found and not kept: a run keeps the first {} of each \
             invariant",
            io.oracles.unkept(),
            crate::oracle::MAX_KEPT_PER_INVARIANT
        ));
    }
    let sinks = io.oracles.sink_counts(&graph);
    let committed_records = sinks
        .iter()
        .filter(|(name, _)| {
            graph
                .vertices
                .iter()
                .any(|v| &v.name == name && v.chain.sink() == Some(Delivery::TwoPhaseCommit))
        })
        .map(|(_, n)| n)
        .sum();
    let violations = io.oracles.finish(
        &graph,
        status,
        outcome.now,
        trace_len.saturating_sub(1),
        scenario.jobmaster.restart_strategy.max_attempts,
        |tm, rpc| {
            task_managers.get(tm).outbox.kept().any(|r| r == rpc)
                || io.rpc.in_flight_from(tm).any(|r| r == rpc)
        },
    );
    RunReport {
        seed,
        status,
        stop: outcome.reason,
        events: outcome.events,
        sim_time: outcome.now,
        trace_hash: io.trace.hash(),
        sinks,
        violations,
        diagnosis,
        failovers: io.stats.failovers,
        reconciliations: io.stats.reconciliations,
        rpcs_kept: io.stats.rpcs_kept,
        rpcs_resent: io.stats.rpcs_resent,
        restore_refused: io.stats.restore_refused,
        saved_checkpoint: io.storage.take_kept(),
        checkpoints: io.stats.checkpoints,
        committed_records,
        probes: io.probes.hits(),
        states: io.probes.states(),
        trace: io.trace,
        graph,
        batch: None,
    }
}

/// A batch run's report: its oracles' verdict, the committed sink outputs and the P2 figures.
fn batch_report(world: crate::world::batch::Batch, ended: Ended) -> RunReport {
    let Ended {
        seed,
        status,
        outcome,
        diagnosis,
    } = ended;
    let trace_len = world.cluster.trace.len();
    let finished_at = (status == JobStatus::Finished).then_some(outcome.now);
    let current = world.who_is_current();
    let parallelism = world
        .cluster
        .graph
        .vertices
        .iter()
        .enumerate()
        .map(|(v, vertex)| (vertex.name.clone(), world.decided_parallelism(v)))
        .collect();
    let crate::world::batch::Cluster {
        graph,
        reconciliations,
        rpcs_kept,
        rpcs_resent,
        trace,
        oracles,
        committed,
        recoveries,
        failovers,
        probes,
        speculations,
        ..
    } = world.cluster;
    let sinks: Vec<(String, u64)> = graph
        .vertices
        .iter()
        .enumerate()
        .filter(|(_, v)| v.outputs.is_empty())
        .map(|(i, v)| {
            let records = committed
                .iter()
                .filter(|(s, _)| graph.subtasks[s.index()].vertex.index() == i)
                .map(|(_, f)| crate::batch::data::total_records(f))
                .sum();
            (v.name.clone(), records)
        })
        .collect();
    let violations = oracles.finish(
        &graph,
        status,
        &committed,
        (outcome.now, trace_len.saturating_sub(1)),
        &current,
    );
    let speculative = speculations
        .iter()
        .map(|&(s, won)| (graph.subtask_name(s).to_string(), won))
        .collect();
    let figures = crate::batch::BatchFigures {
        parallelism,
        recoveries,
        failovers,
        finished_at,
        speculative,
    };
    RunReport {
        seed,
        status,
        stop: outcome.reason,
        events: outcome.events,
        sim_time: outcome.now,
        trace_hash: trace.hash(),
        sinks,
        violations,
        diagnosis,
        checkpoints: Vec::new(),
        failovers: Vec::new(),
        reconciliations,
        rpcs_kept,
        rpcs_resent,
        restore_refused: None,
        saved_checkpoint: None,
        committed_records: 0,
        probes,
        states: StateCoverage::default(),
        trace,
        graph,
        batch: Some(figures),
    }
}

/// Runs `model` from `start` to the end of the scenario's budget, ordering same-instant events
/// by `chooser` if given, else as the scenario's `tie_break` says. The note says when a choice
/// vector did not fit the run (a choice beyond the events due): it was not made for this
/// scenario, or the model changed since.
pub(crate) fn drive<M: Model>(
    model: &mut M,
    start: M::Event,
    scenario: &Scenario,
    seed: u64,
    chooser: Option<&mut dyn Chooser>,
) -> (RunOutcome, Option<String>) {
    let budget = Budget {
        max_events: scenario.budget.max_events,
        max_time: Instant::ZERO.saturating_add(scenario.budget.max_time),
        max_pending: usize::try_from(scenario.budget.max_pending).unwrap_or(usize::MAX),
    };
    // A chooser tells events apart by push order: the queue's ties must be insertion's.
    let tie_break = match (&chooser, &scenario.tie_break) {
        (None, TieBreak::Shuffled) => sim::TieBreak::Shuffled {
            seed: sim::RandomStreams::new(seed).stream("tie-break").next_u64(),
        },
        (Some(_), _)
        | (None, TieBreak::Insertion | TieBreak::Choices(_) | TieBreak::Schedule { .. }) => {
            sim::TieBreak::Insertion
        }
    };
    let mut simulation: Simulation<M::Event> = Simulation::new(tie_break);
    simulation.schedule(Instant::ZERO, start);
    match (chooser, &scenario.tie_break) {
        (Some(chooser), _) => (
            within_work_budget(&mut simulation, |s| s.run_chosen(model, budget, chooser)),
            None,
        ),
        (None, TieBreak::Choices(choices)) => replay(&mut simulation, model, budget, choices, &[]),
        (None, TieBreak::Schedule { choices, delays }) => {
            replay(&mut simulation, model, budget, choices, delays)
        }
        (None, TieBreak::Insertion | TieBreak::Shuffled) => (
            within_work_budget(&mut simulation, |s| s.run(model, budget)),
            None,
        ),
    }
}

/// Replays a `tie_break` of choices, with postponements (`delays`: call and nanoseconds) or
/// without; the note says which of them did not fit the run.
fn replay<M: Model>(
    simulation: &mut Simulation<M::Event>,
    model: &mut M,
    budget: Budget,
    choices: &[u32],
    delays: &[(u64, u64)],
) -> (RunOutcome, Option<String>) {
    let delays = delays
        .iter()
        .map(|&(call, nanos)| Delay { call, nanos })
        .collect();
    let mut replay = Replay::with_delays(choices.to_vec(), delays);
    let outcome = within_work_budget(simulation, |s| s.run_chosen(model, budget, &mut replay));
    let choice = replay.out_of_range.map(|point| {
        format!(
            "tie_break choice {point} ({}) is beyond the events due there; the run took the \
             first",
            choices[point]
        )
    });
    let delay = replay.delay_out_of_range.map(|d| {
        format!(
            "tie_break delay [{}, {}] does not fit the run (no RPC due at that step, or beyond \
             its latency range); the event was handled when due",
            d.call, d.nanos
        )
    });
    (outcome, choice.or(delay))
}

/// Runs `run` on `simulation`; an event abandoned for exceeding its work budget
/// ([`EventWorkExceeded`], unwound out of `Trace::record`) ends the run with
/// [`StopReason::WorkBudget`] instead of unwinding further. Any other panic goes on unwinding:
/// it is a bug, isolated (or not) by the caller. The model is left as the abandoned event left
/// it, which the report then describes like any run stopped by a budget.
fn within_work_budget<E>(
    simulation: &mut Simulation<E>,
    run: impl FnOnce(&mut Simulation<E>) -> RunOutcome,
) -> RunOutcome {
    match panic::catch_unwind(AssertUnwindSafe(|| run(simulation))) {
        Ok(outcome) => outcome,
        Err(payload) => match payload.downcast::<EventWorkExceeded>() {
            Ok(_) => simulation.stopped(StopReason::WorkBudget),
            Err(other) => panic::resume_unwind(other),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceEvent;
    use sim::{Duration, Scheduler};

    /// Event 0 records two trace events and schedules event 1 a nanosecond later; event 1
    /// records forever (the shape of a model bug that loops inside one handler).
    struct Looping {
        trace: Trace,
    }

    impl Model for Looping {
        type Event = u32;

        fn handle(&mut self, now: Instant, event: u32, sched: &mut Scheduler<'_, u32>) {
            self.trace.begin_event();
            let record = |trace: &mut Trace| trace.record(now, TraceEvent::JobResultWritten);
            if event == 0 {
                record(&mut self.trace);
                record(&mut self.trace);
                sched.after(Duration::from_nanos(1), 1);
            } else {
                loop {
                    record(&mut self.trace);
                }
            }
        }
    }

    #[test]
    fn an_event_that_loops_ends_the_run_on_the_work_budget_not_the_process() {
        let mut model = Looping {
            trace: Trace::new(Retain::Nothing),
        };
        model.trace.limit_work_per_event(1_000);
        let mut simulation = Simulation::new(sim::TieBreak::Insertion);
        simulation.schedule(Instant::ZERO, 0);
        let budget = Budget {
            max_events: 10,
            max_time: Instant::from_nanos(100),
            max_pending: 10,
        };
        let outcome = within_work_budget(&mut simulation, |s| s.run(&mut model, budget));
        assert_eq!(outcome.reason, StopReason::WorkBudget);
        assert!(outcome.reason.is_budget());
        assert_eq!(outcome.events, 2, "the looping event is the second handled");
        assert_eq!(outcome.now, Instant::from_nanos(1));
        assert_eq!(model.trace.len(), 2 + 1_000);
    }

    #[test]
    fn any_other_panic_goes_on_unwinding() {
        let mut simulation: Simulation<u32> = Simulation::new(sim::TieBreak::Insertion);
        let caught = crate::fuzz::isolate::isolated(|| {
            within_work_budget(&mut simulation, |_| panic!("a broken invariant"))
        })
        .expect_err("not a budget");
        assert_eq!(caught.message, "a broken invariant");
    }
}
