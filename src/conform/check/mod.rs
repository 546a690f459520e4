//! `flinksim conform`: a conformance trace of a real Flink run, checked against the model's
//! rules. Every departure names its rule (a stable id) and the section that states it
//! (`docs/conformance.md` lists them), the trace line of the event and its time.
//!
//! The checker reuses the model's own code where the rule lives in code: the transition tables
//! (`crate::jobmaster::transitions`), the trigger plan (`crate::checkpoint::plan::compute`),
//! the execution graph's regions and channels (`crate::graph`).

mod output;
mod recovery;

use super::expected;
use super::trace::{Entry, Event, Header, Trace};
use super::InputError;
use crate::checkpoint::plan;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::jobmaster::transitions;
use crate::scenario::{
    Chain, DurationRange, Edge, Exchange, FinishProtocol, Job, Operator, Partitioner, Pattern,
    Vertex,
};
use crate::status::{ExecutionState, JobStatus};
use std::collections::{BTreeMap, BTreeSet};

/// How long the JobMaster's view may lag the plan it logged: a state change the coordinator
/// had not yet applied when it computed a plan is logged up to this long before the trigger
/// line (both run on the JobMaster's main thread, the plan a little earlier).
pub const PLAN_LAG_NS: u64 = 5_000_000;

/// One way the trace departs from the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Departure {
    /// 1-based line of the trace file (0: the trace as a whole).
    pub line: usize,
    pub time: u64,
    /// The rule's stable id (`trigger-plan`, `legal-transition`…).
    pub rule: &'static str,
    /// Where the rule is stated (`P1.1`, `F1.5`…).
    pub section: &'static str,
    pub message: String,
}

/// Edges Flink takes that the model's tables do not have, each a documented difference
/// (README "Where flinksim differs from Flink 2.3"): counted, not departures. `true`: seen in
/// the JobMaster's view, `false`: in the TaskManager's.
const FLINK_ONLY_EDGES: [(bool, ExecutionState, ExecutionState, &str); 5] = [
    // Flink cancels an execution that was never deployed directly (`Execution.cancel`); the
    // model always has a deployed task to cancel, through CANCELING.
    (
        true,
        ExecutionState::Scheduled,
        ExecutionState::Canceled,
        "cancel-undeployed",
    ),
    (
        true,
        ExecutionState::Created,
        ExecutionState::Canceled,
        "cancel-undeployed",
    ),
    // A task whose upstream producer failed ends by itself: its input throws a
    // CancelTaskException and the task goes straight to CANCELED on its TaskManager, before
    // the JobMaster's cancel (through CANCELING) arrives. The model's tasks are only
    // cancelled by the JobMaster.
    (
        false,
        ExecutionState::Running,
        ExecutionState::Canceled,
        "cancel-task-exception",
    ),
    (
        false,
        ExecutionState::Initializing,
        ExecutionState::Canceled,
        "cancel-task-exception",
    ),
    (
        false,
        ExecutionState::Deploying,
        ExecutionState::Canceled,
        "cancel-task-exception",
    ),
];

/// The outcomes that do not depend on timing, for the differential comparison with the twin.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcomes {
    pub status: String,
    /// Committed records after de-duplication, and raw lines.
    pub committed: Option<u64>,
    pub committed_raw: Option<u64>,
    /// Per failover: the subtasks restarted.
    pub regions_restarted: Vec<Vec<String>>,
    /// Subtasks redeployed finished on restore.
    pub finished_on_restore: Vec<String>,
    /// Batch: subtasks recovered FINISHED after a JobManager crash, and run again.
    pub kept: Vec<String>,
    pub rerun: Vec<String>,
    /// Batch: partition reports answered by a release, for arriving after the wait (F2.4).
    pub late_reports: u64,
    /// A checkpoint completed after the first source finished.
    pub checkpoint_after_first_source_finished: Option<bool>,
    pub checkpoints_completed: u64,
    pub checkpoints_triggered: u64,
    pub declines: BTreeMap<String, u64>,
    pub failures: BTreeMap<String, u64>,
}

/// The verdict on one trace.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub departures: Vec<Departure>,
    /// Documented differences seen, with how often.
    pub differences: BTreeMap<&'static str, u64>,
    /// Checks that could not run on this trace, with why.
    pub skipped: Vec<String>,
    pub outcomes: Outcomes,
}

/// The job's execution graph, as the model builds it from a scenario.
pub fn graph_of(h: &Header) -> Result<ExecutionGraph, InputError> {
    let vertices: Vec<Vertex> = h
        .vertices
        .iter()
        .map(|v| Vertex {
            id: v.id.clone(),
            parallelism: v.parallelism.max(1),
            adaptive: false,
            chain: Chain::single(&v.id, Operator::Map),
            process_time: DurationRange::fixed(sim::Duration::ZERO),
            splits: None,
        })
        .collect();
    let index = |name: &str| {
        h.vertices.iter().position(|v| v.id == name).ok_or_else(|| {
            InputError::new(
                "run header",
                format!("an edge names vertex {name:?}, which is not in the header"),
            )
        })
    };
    let mut edges = Vec::new();
    for e in &h.edges {
        let pattern = match e.pattern.as_str() {
            "forward" => Pattern::Forward,
            "all_to_all" => Pattern::AllToAll,
            other => {
                return Err(InputError::new(
                    "run header",
                    format!("edge pattern {other:?}"),
                ))
            }
        };
        edges.push(Edge {
            from: index(&e.from)?,
            to: index(&e.to)?,
            pattern,
            exchange: if h.mode == "batch" {
                Exchange::Blocking
            } else {
                Exchange::Pipelined
            },
            partitioner: Partitioner::KeyHash,
        });
    }
    Ok(ExecutionGraph::build(&Job { vertices, edges }))
}

#[derive(Default)]
struct Checkpoint {
    line: usize,
    time: u64,
    /// The model's trigger set for this checkpoint's finished set, and the one Flink logged;
    /// targets the model has and the log lacks are judged at the end (P1.1).
    expected_trigger: BTreeSet<SubtaskId>,
    triggered: BTreeSet<SubtaskId>,
    /// Some subtask acknowledged or declined it.
    answered: bool,
    waited: BTreeSet<SubtaskId>,
    finished: BTreeSet<SubtaskId>,
    acked: BTreeSet<SubtaskId>,
    completed: Option<u64>,
}

/// Execution key: (execution graph, subtask, attempt).
type Exec = (u32, SubtaskId, u32);

struct Checker<'a> {
    trace: &'a Trace,
    graph: ExecutionGraph,
    streaming: bool,
    report: Report,
    jm: BTreeMap<Exec, ExecutionState>,
    tm: BTreeMap<Exec, ExecutionState>,
    /// The latest execution the JobMaster knows per subtask, and when its state last changed.
    latest: Vec<Option<(u32, u32)>>,
    changed_at: Vec<u64>,
    job_status: Option<JobStatus>,
    checkpoints: BTreeMap<u64, Checkpoint>,
    last_trigger: Option<u64>,
    trigger_rpcs_logged: bool,
    /// The latest end of input of each source subtask.
    end_of_input: BTreeMap<SubtaskId, u64>,
    acks: BTreeMap<(SubtaskId, u32), Vec<(u64, u64)>>,
    restores: Vec<(u64, u64)>,
    crashes: Vec<u64>,
    failed: BTreeSet<u64>,
}

/// Checks `trace`. `Err` only for a trace whose names do not fit its own header.
pub fn check(trace: &Trace) -> Result<Report, InputError> {
    let graph = graph_of(&trace.header)?;
    let n = graph.subtasks.len();
    let mut c = Checker {
        trace,
        streaming: trace.header.mode == "streaming",
        graph,
        report: Report::default(),
        jm: BTreeMap::new(),
        tm: BTreeMap::new(),
        latest: vec![None; n],
        changed_at: vec![0; n],
        job_status: None,
        checkpoints: BTreeMap::new(),
        last_trigger: None,
        trigger_rpcs_logged: trace.entries.iter().any(|e| {
            matches!(&e.event, Event::CheckpointTriggered { triggered, .. } if !triggered.is_empty())
        }),
        end_of_input: BTreeMap::new(),
        acks: BTreeMap::new(),
        restores: Vec::new(),
        crashes: Vec::new(),
        failed: BTreeSet::new(),
    };
    if !c.trigger_rpcs_logged && c.streaming {
        c.report
            .skipped
            .push("trigger-plan (triggered set): no TaskExecutor trigger lines (DEBUG off)".into());
    }
    for (i, entry) in trace.entries.iter().enumerate() {
        c.entry(i + 2, entry)?;
    }
    c.finish()?;
    let mut report = c.report;
    report.departures.sort_by_key(|d| d.line);
    Ok(report)
}

impl Checker<'_> {
    fn depart(
        &mut self,
        line: usize,
        time: u64,
        rule: &'static str,
        section: &'static str,
        message: String,
    ) {
        self.report.departures.push(Departure {
            line,
            time,
            rule,
            section,
            message,
        });
    }

    fn subtask(&self, line: usize, name: &str) -> Result<SubtaskId, InputError> {
        self.graph.find_subtask(name).ok_or_else(|| {
            InputError::new(
                format!("trace line {line}"),
                format!("subtask {name:?} is not in the job of the run header"),
            )
        })
    }

    fn name(&self, s: SubtaskId) -> String {
        self.graph.subtask_name(s).to_string()
    }

    fn names(&self, set: impl IntoIterator<Item = SubtaskId>) -> String {
        let v: Vec<String> = set.into_iter().map(|s| self.name(s)).collect();
        format!("[{}]", v.join(", "))
    }

    /// The JobMaster's view of a subtask: its latest execution's state.
    fn view(&self, s: SubtaskId) -> ExecutionState {
        self.latest[s.index()]
            .and_then(|(g, a)| self.jm.get(&(g, s, a)).copied())
            .unwrap_or(ExecutionState::Created)
    }

    fn entry(&mut self, line: usize, e: &Entry) -> Result<(), InputError> {
        let t = e.time;
        match &e.event {
            Event::JobStatus { from, to } => self.job_status(line, t, from, to),
            Event::ExecutionState {
                subtask,
                attempt,
                graph,
                from,
                to,
            } => {
                let s = self.subtask(line, subtask)?;
                let key = (*graph, s, *attempt);
                let legal = self.transition(line, t, true, key, from, to).is_some();
                if legal && self.latest[s.index()].is_none_or(|l| (*graph, *attempt) >= l) {
                    self.latest[s.index()] = Some((*graph, *attempt));
                    self.changed_at[s.index()] = t;
                }
            }
            Event::TaskState {
                subtask,
                attempt,
                graph,
                from,
                to,
            } => {
                let s = self.subtask(line, subtask)?;
                let key = (*graph, s, *attempt);
                if let Some((_, to)) = self.transition(line, t, false, key, from, to) {
                    if to == ExecutionState::Finished && self.streaming {
                        self.final_checkpoint(line, t, s, *attempt);
                    }
                }
            }
            Event::CheckpointTriggered {
                checkpoint,
                triggered,
                finished,
                ..
            } => {
                let triggered = triggered
                    .iter()
                    .map(|n| self.subtask(line, n))
                    .collect::<Result<BTreeSet<_>, _>>()?;
                let finished = match finished {
                    Some(f) => Some(f.iter().map(|n| self.subtask(line, n)).collect::<Result<
                        BTreeSet<_>,
                        _,
                    >>(
                    )?),
                    None => None,
                };
                self.triggered(line, t, *checkpoint, triggered, finished);
            }
            Event::CheckpointAcknowledged {
                checkpoint,
                subtask,
                attempt,
            } => {
                let s = self.subtask(line, subtask)?;
                self.acks
                    .entry((s, *attempt))
                    .or_default()
                    .push((*checkpoint, t));
                self.answer(line, t, *checkpoint, s, "acknowledgement", true);
            }
            Event::CheckpointDeclined {
                checkpoint,
                subtask,
                reason,
                ..
            } => {
                let s = self.subtask(line, subtask)?;
                *self
                    .report
                    .outcomes
                    .declines
                    .entry(reason.clone())
                    .or_default() += 1;
                self.answer(line, t, *checkpoint, s, "decline", false);
            }
            Event::CheckpointFailed { checkpoint, reason } => {
                // Flink may log one failure from two threads: count each checkpoint once.
                let first = match checkpoint {
                    Some(id) => self.failed.insert(*id),
                    None => true,
                };
                if first {
                    *self
                        .report
                        .outcomes
                        .failures
                        .entry(reason.clone())
                        .or_default() += 1;
                }
            }
            Event::CheckpointNotTriggered { reason } => {
                *self
                    .report
                    .outcomes
                    .failures
                    .entry(format!("not_triggered: {reason}"))
                    .or_default() += 1;
            }
            Event::CheckpointCompleted { checkpoint } => self.completed(line, t, *checkpoint),
            Event::EndOfInput { subtask, .. } => {
                let s = self.subtask(line, subtask)?;
                self.end_of_input.insert(s, t);
            }
            Event::Failover {
                cause, restarting, ..
            } => {
                let s = self.subtask(line, cause)?;
                let region = self.graph.region_of(s);
                // P1.8: a failed task restarts its pipelined region, every subtask of it,
                // finished ones included (they are redeployed finished on restore, F1.6).
                if self.streaming && region.len() as u32 != *restarting {
                    let names = self.names(region.iter().copied());
                    self.depart(
                        line,
                        t,
                        "failover-scope",
                        "P1.8",
                        format!(
                            "{restarting} tasks restarted to recover {cause}; its pipelined region is {} subtasks {names}",
                            region.len()
                        ),
                    );
                }
                let names: Vec<String> = region.iter().map(|&r| self.name(r)).collect();
                self.report.outcomes.regions_restarted.push(names);
            }
            Event::Restore { checkpoint } => {
                self.restores.push((t, *checkpoint));
                let finished = self
                    .checkpoints
                    .get(checkpoint)
                    .map(|c| c.finished.clone())
                    .unwrap_or_default();
                if let Some(region) = self.report.outcomes.regions_restarted.last().cloned() {
                    for s in finished {
                        let n = self.name(s);
                        if region.contains(&n)
                            && !self.report.outcomes.finished_on_restore.contains(&n)
                        {
                            self.report.outcomes.finished_on_restore.push(n);
                        }
                    }
                }
            }
            Event::JobmasterLost { .. } => {
                self.crashes.push(t);
                // A new JobMaster starts the job's status machine and its view of every
                // execution again (recovered ones come back CREATED -> FINISHED, F2.4 step 2,
                // under their old execution ids).
                self.job_status = None;
                self.jm.clear();
                self.latest = vec![None; self.graph.subtasks.len()];
            }
            Event::Commit { .. }
            | Event::JobEventWritten { .. }
            | Event::PartitionsRecovered { .. }
            | Event::PartitionReported { .. }
            | Event::LateReport { .. }
            | Event::Output { .. }
            | Event::JobmasterStarted { .. }
            | Event::RecorderEvent { .. } => {}
            Event::Run(_) | Event::ImportSummary(_) => {
                return Err(InputError::new(
                    format!("trace line {line}"),
                    "a header or summary in the middle of the trace",
                ))
            }
        }
        Ok(())
    }

    /// `legal-transition`: continuity (the change starts where the last one ended) and the
    /// model's table. Returns the parsed edge when the states are known.
    fn transition(
        &mut self,
        line: usize,
        t: u64,
        jobmaster: bool,
        key: Exec,
        from: &str,
        to: &str,
    ) -> Option<(ExecutionState, ExecutionState)> {
        let (Some(f), Some(to_state)) = (
            ExecutionState::from_name(from),
            ExecutionState::from_name(to),
        ) else {
            self.depart(
                line,
                t,
                "legal-transition",
                "F2.6",
                format!("unknown execution state in {from} -> {to}"),
            );
            return None;
        };
        let view = if jobmaster {
            "JobMaster"
        } else {
            "TaskManager"
        };
        let map = if jobmaster {
            &mut self.jm
        } else {
            &mut self.tm
        };
        let before = map.insert(key, to_state).unwrap_or(ExecutionState::Created);
        let who = format!("{}#{}", self.graph.subtask_name(key.1), key.2);
        if before != f {
            self.depart(
                line,
                t,
                "legal-transition",
                "P0",
                format!("{view} view of {who}: {from} -> {to}, but it was {before}"),
            );
        }
        if !transitions::execution(f, to_state) {
            match FLINK_ONLY_EDGES
                .iter()
                .find(|(v, a, b, _)| *v == jobmaster && *a == f && *b == to_state)
            {
                Some((_, _, _, id)) => *self.report.differences.entry(id).or_default() += 1,
                None => self.depart(
                    line,
                    t,
                    "legal-transition",
                    "P0",
                    format!(
                        "{view} view of {who}: {from} -> {to} is not in the model's execution table"
                    ),
                ),
            }
        }
        Some((f, to_state))
    }

    fn job_status(&mut self, line: usize, t: u64, from: &str, to: &str) {
        let (Some(f), Some(to_s)) = (JobStatus::from_name(from), JobStatus::from_name(to)) else {
            self.depart(
                line,
                t,
                "legal-transition",
                "F2.6",
                format!("unknown job status in {from} -> {to}"),
            );
            return;
        };
        if let Some(before) = self.job_status {
            if before != f {
                self.depart(
                    line,
                    t,
                    "legal-transition",
                    "P0",
                    format!("job {from} -> {to}, but it was {before}"),
                );
            }
        }
        if !transitions::job(f, to_s) {
            self.depart(
                line,
                t,
                "legal-transition",
                "P0",
                format!("job {from} -> {to} is not in the model's job status table"),
            );
        }
        self.job_status = Some(to_s);
        self.report.outcomes.status = to.to_owned();
    }

    /// P1.1 / F1.1: the plan Flink logged, against the model's plan for the same finished set,
    /// and the finished set against the JobMaster's view.
    fn triggered(
        &mut self,
        line: usize,
        t: u64,
        id: u64,
        triggered: BTreeSet<SubtaskId>,
        rest_finished: Option<BTreeSet<SubtaskId>>,
    ) {
        self.report.outcomes.checkpoints_triggered += 1;
        if let Some(last) = self.last_trigger {
            if id <= last {
                self.depart(
                    line,
                    t,
                    "checkpoint-ids-increase",
                    "P1.1",
                    format!("checkpoint {id} triggered after checkpoint {last}"),
                );
            }
        }
        self.last_trigger = Some(self.last_trigger.map_or(id, |l| l.max(id)));
        let all: Vec<SubtaskId> = (0..self.graph.subtasks.len() as u32)
            .map(SubtaskId)
            .collect();
        let view_finished: BTreeSet<SubtaskId> = all
            .iter()
            .copied()
            .filter(|&s| self.view(s) == ExecutionState::Finished)
            .collect();
        let finished = rest_finished
            .clone()
            .unwrap_or_else(|| view_finished.clone());

        let wrongly = triggered
            .intersection(&finished)
            .copied()
            .collect::<Vec<_>>();
        if !wrongly.is_empty() {
            let names = self.names(wrongly);
            self.depart(
                line,
                t,
                "trigger-plan",
                "P1.1",
                format!("checkpoint {id} triggered {names}, finished at trigger time"),
            );
        }
        let mut expected_trigger = triggered.clone();
        if self.trigger_rpcs_logged {
            let model = plan::compute(
                &self.graph,
                |s| {
                    if finished.contains(&s) {
                        ExecutionState::Finished
                    } else {
                        ExecutionState::Running
                    }
                },
                &[],
                FinishProtocol::Flink,
                None,
            );
            expected_trigger = model
                .map(|p| p.to_trigger.into_iter().collect())
                .unwrap_or_default();
            let extra: Vec<SubtaskId> = triggered.difference(&expected_trigger).copied().collect();
            if !extra.is_empty() {
                self.depart(
                    line,
                    t,
                    "trigger-plan",
                    "F1.1",
                    format!(
                        "checkpoint {id} triggered {}; with finished {} the model triggers {} (beyond it: {})",
                        self.names(triggered.iter().copied()),
                        self.names(finished.iter().copied()),
                        self.names(expected_trigger.iter().copied()),
                        self.names(extra),
                    ),
                );
            }
        }
        if rest_finished.is_some() {
            for &s in &all {
                let v = self.view(s);
                let settled = t.saturating_sub(self.changed_at[s.index()]) > PLAN_LAG_NS;
                if finished.contains(&s) && v != ExecutionState::Finished && settled {
                    let why = if matches!(v, ExecutionState::Failed | ExecutionState::Canceled) {
                        " (FLINK-40482: a terminal state counted as finished)"
                    } else {
                        ""
                    };
                    let name = self.name(s);
                    self.depart(
                        line,
                        t,
                        "trigger-plan",
                        "F1.1",
                        format!("checkpoint {id} counts {name} finished, the JobMaster sees it {v}{why}"),
                    );
                }
                if !finished.contains(&s) && v == ExecutionState::Finished && settled {
                    let name = self.name(s);
                    self.depart(
                        line,
                        t,
                        "trigger-plan",
                        "P1.1",
                        format!(
                            "checkpoint {id} waits for {name}, FINISHED in the JobMaster's view"
                        ),
                    );
                }
            }
        }
        let waited: BTreeSet<SubtaskId> = all
            .iter()
            .copied()
            .filter(|s| !finished.contains(s))
            .collect();
        self.checkpoints.insert(
            id,
            Checkpoint {
                line,
                time: t,
                expected_trigger,
                triggered,
                waited,
                finished,
                ..Checkpoint::default()
            },
        );
    }

    /// An acknowledgement or decline: after its trigger, from a subtask the checkpoint waits for.
    fn answer(&mut self, line: usize, t: u64, id: u64, s: SubtaskId, what: &str, ack: bool) {
        let name = self.name(s);
        let Some(c) = self.checkpoints.get_mut(&id) else {
            self.depart(
                line,
                t,
                "ack-after-trigger",
                "P1.1",
                format!("{what} of checkpoint {id} by {name} before checkpoint {id} was triggered"),
            );
            return;
        };
        if !c.waited.contains(&s) {
            self.depart(
                line,
                t,
                "ack-after-trigger",
                "P1.1",
                format!("{what} of checkpoint {id} by {name}, which the checkpoint does not wait for (finished at trigger time)"),
            );
            return;
        }
        c.answered = true;
        if ack {
            c.acked.insert(s);
        }
    }

    /// P1.1 / F1.1: a checkpoint completes only once every subtask it waits for acknowledged.
    fn completed(&mut self, line: usize, t: u64, id: u64) {
        let Some(c) = self.checkpoints.get_mut(&id) else {
            self.depart(
                line,
                t,
                "complete-after-all-acks",
                "P1.1",
                format!("checkpoint {id} completed, never triggered"),
            );
            return;
        };
        c.completed = Some(t);
        c.answered = true;
        let missing: Vec<SubtaskId> = c.waited.difference(&c.acked).copied().collect();
        if !missing.is_empty() {
            let names = self.names(missing);
            self.depart(
                line,
                t,
                "complete-after-all-acks",
                "F1.1",
                format!("checkpoint {id} completed without acknowledgements from {names}"),
            );
        }
        self.report.outcomes.checkpoints_completed += 1;
    }

    /// When `s`'s input ended at the earliest: a source's logged end of input; for another
    /// task, the latest of its producers' (EndOfData follows a producer's end of input), since
    /// Flink does not log a non-source's. `None` when no source logged it.
    fn end_of_input_bound(&self, s: SubtaskId) -> Option<u64> {
        let sub = &self.graph.subtasks[s.index()];
        if sub.inputs.is_empty() {
            return self.end_of_input.get(&s).copied();
        }
        sub.inputs
            .iter()
            .map(|c| self.end_of_input_bound(self.graph.channels[c.index()].from))
            .try_fold(0, |a, b| b.map(|b| a.max(b)))
    }

    /// F1.5 / P1.7: a task whose input ended finishes only after a checkpoint it acknowledged
    /// after its end of input (its final checkpoint) completed.
    fn final_checkpoint(&mut self, line: usize, t: u64, s: SubtaskId, attempt: u32) {
        if self.checkpoints.is_empty() {
            return;
        }
        let eoi = self.end_of_input_bound(s).unwrap_or(0);
        let acks = self.acks.get(&(s, attempt)).cloned().unwrap_or_default();
        // The final checkpoint is the first one the task *performs* after its end of input: it
        // may have been triggered a little earlier (F1.5 step 2), so the bound is on the
        // acknowledgement, which follows the snapshot.
        let ok = acks.iter().any(|&(id, at)| {
            at >= eoi
                && self
                    .checkpoints
                    .get(&id)
                    .is_some_and(|c| c.completed.is_some_and(|done| done <= t))
        });
        if !ok {
            let name = self.name(s);
            self.depart(
                line,
                t,
                "final-checkpoint-before-finish",
                "F1.5",
                format!(
                    "{name}#{attempt} went FINISHED with no completed checkpoint it acknowledged after its end of input ({})",
                    format_ns(eoi)
                ),
            );
        }
    }

    fn finish(&mut self) -> Result<(), InputError> {
        let end = self.trace.entries.last().map_or(0, |e| e.time);
        if self.report.outcomes.status != "FINISHED" {
            let status = self.report.outcomes.status.clone();
            self.depart(
                0,
                end,
                "job-terminates",
                "P4",
                format!("the job ended {status:?}, not FINISHED"),
            );
        }
        self.missing_triggers();
        self.first_source_finished();
        if self.streaming {
            self.commits()?;
            self.emitted_nothing();
        } else {
            self.batch_recovery()?;
            self.batch_output();
        }
        Ok(())
    }

    /// P1.1: a trigger target of the model's plan that no log line shows was triggered. The
    /// TaskExecutor logs a trigger when the RPC arrives, so a checkpoint that nobody answered
    /// may have been aborted before its RPCs went out (the job ended): only checkpoints some
    /// subtask answered are judged.
    fn missing_triggers(&mut self) {
        let mut found = Vec::new();
        for (id, c) in &self.checkpoints {
            let missing: Vec<SubtaskId> = c
                .expected_trigger
                .difference(&c.triggered)
                .copied()
                .collect();
            if missing.is_empty() {
                continue;
            }
            if c.answered {
                found.push((c.line, c.time, *id, missing, c.expected_trigger.clone()));
            } else {
                self.report.skipped.push(format!(
                    "trigger-plan: checkpoint {id} was aborted before any subtask answered; its trigger lines are missing, not judged"
                ));
            }
        }
        for (line, time, id, missing, expected) in found {
            let (m, e) = (self.names(missing), self.names(expected));
            self.depart(
                line,
                time,
                "trigger-plan",
                "P1.1",
                format!("checkpoint {id} did not trigger {m}; the model triggers {e}"),
            );
        }
    }

    /// Outcome: did a checkpoint complete after the first source subtask finished (the
    /// JobMaster's view)?
    fn first_source_finished(&mut self) {
        if !self.streaming {
            return;
        }
        let sources: BTreeSet<String> = self
            .graph
            .vertices
            .iter()
            .filter(|v| v.inputs.is_empty())
            .map(|v| v.name.clone())
            .collect();
        let first = self.trace.entries.iter().find_map(|e| match &e.event {
            Event::ExecutionState { subtask, to, .. }
                if to == "FINISHED"
                    && sources.contains(subtask.split('[').next().unwrap_or("")) =>
            {
                Some(e.time)
            }
            _ => None,
        });
        let after = first.map(|f| {
            self.checkpoints
                .values()
                .any(|c| c.completed.is_some_and(|t| t > f))
        });
        self.report.outcomes.checkpoint_after_first_source_finished = after;
    }
}

/// ns as `s.mmm…` for messages.
pub fn format_ns(ns: u64) -> String {
    format!("{}.{:06}s", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}
