//! P2.8, speculative execution (Flink's `ExecutionTimeBasedSlowTaskDetector` and
//! `DefaultSpeculativeExecutionHandler`): every `check_interval` the JobMaster looks for slow
//! tasks. A vertex is looked at once `baseline_ratio` of its subtasks finished; its baseline is
//! the median time of the first `round(parallelism × ratio)` to finish, times
//! `baseline_multiplier`; an attempt that has run at least that long (and at least
//! `baseline_lower_bound`) is slow. The TaskManagers of slow attempts are blocked for
//! `block_slow_node_duration`, and a subtask with a slow attempt and no speculative one gets a
//! new attempt on another TaskManager. The first attempt to finish wins; the JobMaster cancels
//! the other at once. Sources are not speculated: their attempts read splits from the
//! enumerator, which would hand a second attempt other splits (Flink's FLIP-245 replays the
//! subtask's splits to it; not modelled).

use crate::bug::Bug;
use crate::graph::{SubtaskId, VertexId};
use crate::jobmaster::batch::AdaptiveBatch;
use crate::jobmaster::batch::Execution;
use crate::jobmaster::With;
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{Call, Restore, Rpc, TraceEvent};
use crate::world::batch::Ctx;
use crate::world::{Act, Event};
use sim::{Duration, Instant};

/// An attempt the JobMaster deployed that may still finish (not CREATED, CANCELING or ended).
pub(crate) fn may_finish(state: ExecutionState) -> bool {
    matches!(
        state,
        ExecutionState::Deploying | ExecutionState::Initializing | ExecutionState::Running
    )
}

impl With<'_, AdaptiveBatch> {
    /// Starts the detector's timer if speculation is on and it is not running.
    pub(crate) fn arm_speculation_check(&mut self, ctx: &mut Ctx<'_, '_>) {
        let Some(spec) = ctx.cluster.batch.speculative else {
            return;
        };
        if !self.scheduler.check_pending {
            self.scheduler.check_pending = true;
            let incarnation = self.leader.incarnation;
            ctx.sched
                .after(spec.check_interval, Event::SpeculationCheck { incarnation });
        }
    }

    /// The detector looks (P2.8), then runs again while some attempt may still finish.
    pub(crate) fn speculation_check(&mut self, ctx: &mut Ctx<'_, '_>) {
        self.scheduler.check_pending = false;
        if self.leader.status != JobStatus::Running || self.scheduler.recovering.is_some() {
            return;
        }
        // As Flink's handler does, every slow node is blocked before any new attempt is placed.
        let now = ctx.now();
        ctx.record(TraceEvent::SpeculationChecked);
        let slow: Vec<(SubtaskId, Vec<u32>)> = ctx
            .cluster
            .graph
            .topological_order
            .clone()
            .into_iter()
            .flat_map(|v| self.slow_subtasks(ctx, v, now))
            .collect();
        self.block_slow_nodes(ctx, now, &slow);
        for (s, _) in slow {
            self.speculate(ctx, s);
        }
        let running = self.scheduler.exec.iter().any(|e| may_finish(e.state));
        if running {
            self.arm_speculation_check(ctx);
        }
    }

    /// The subtasks of `v` with a slow attempt at `now`, each with the TaskManagers of its slow
    /// attempts.
    fn slow_subtasks(
        &self,
        ctx: &Ctx<'_, '_>,
        v: VertexId,
        now: Instant,
    ) -> Vec<(SubtaskId, Vec<u32>)> {
        let spec = ctx.cluster.batch.speculative.expect("speculation on");
        let vertex = &ctx.cluster.graph.vertices[v.index()];
        let Some(p) = self.scheduler.parallelism[v.index()] else {
            return Vec::new();
        };
        if vertex.inputs.is_empty() || p == 0 {
            return Vec::new();
        }
        let subtasks = (vertex.first..vertex.first + p).map(SubtaskId);
        let finished: Vec<SubtaskId> = subtasks
            .clone()
            .filter(|s| self.scheduler.exec[s.index()].state == ExecutionState::Finished)
            .collect();
        // The bug looks at a vertex before enough of it finished for a baseline.
        let too_few = (finished.len() as f64) / f64::from(p) < spec.baseline_ratio
            && self.bug != Some(Bug::IgnoreBaselineRatio);
        if finished.len() as u32 == p || too_few {
            return Vec::new();
        }
        // Java's Math.round: half up.
        let count = ((f64::from(p) * spec.baseline_ratio) + 0.5).floor() as usize;
        let mut times: Vec<Duration> = finished
            .iter()
            .map(|s| self.scheduler.ran[s.index()].unwrap_or(Duration::ZERO))
            .collect();
        times.sort();
        times.truncate(count);
        let baseline = match times.get(times.len() / 2) {
            Some(median) if count > 0 => {
                Duration::from_nanos((median.as_nanos() as f64 * spec.baseline_multiplier) as u64)
            }
            _ => Duration::ZERO,
        };
        let threshold = baseline.max(spec.baseline_lower_bound);
        let slow = |e: &Execution| {
            may_finish(e.state)
                && e.deployed_at
                    .is_some_and(|at| now.saturating_duration_since(at) >= threshold)
        };
        subtasks
            .filter(|s| !self.scheduler.exec[s.index()].state.is_terminal())
            .filter_map(|s| {
                let attempts = [
                    Some(self.scheduler.exec[s.index()]),
                    self.scheduler.spec[s.index()],
                ];
                let tms: Vec<u32> = attempts
                    .iter()
                    .flatten()
                    .filter(|e| slow(e))
                    .filter_map(|e| e.placed)
                    .collect();
                (!tms.is_empty()).then_some((s, tms))
            })
            .collect()
    }

    /// Blocks the TaskManagers of the slow attempts for `block_slow_node_duration`.
    fn block_slow_nodes(
        &mut self,
        ctx: &Ctx<'_, '_>,
        now: Instant,
        slow: &[(SubtaskId, Vec<u32>)],
    ) {
        let spec = ctx.cluster.batch.speculative.expect("speculation on");
        if spec.block_slow_node_duration == Duration::ZERO {
            return;
        }
        let until = now + spec.block_slow_node_duration;
        for &tm in slow.iter().flat_map(|(_, tms)| tms) {
            let blocked = &mut self.scheduler.blocked_until[tm as usize];
            *blocked = (*blocked).max(until);
        }
    }

    /// Starts a speculative attempt of slow subtask `s` if it has none (at most two attempts
    /// at once), on a TaskManager that is not blocked.
    fn speculate(&mut self, ctx: &mut Ctx<'_, '_>, s: SubtaskId) {
        let now = ctx.now();
        if self.scheduler.spec[s.index()].is_some() {
            return;
        }
        let usable =
            |t: usize| self.scheduler.accounted[t] && self.scheduler.blocked_until[t] <= now;
        // Flink waits for a slot; the next look tries again.
        let Some(tm) = self.free_task_manager(ctx, usable) else {
            return;
        };
        let attempt = ctx.cluster.next_attempt[s.index()];
        let descriptor = self.descriptor_for(ctx, s, attempt);
        ctx.cluster.next_attempt[s.index()] += 1;
        ctx.cluster.speculations.push((s, false));
        self.scheduler.slots_used[tm] += 1;
        self.scheduler.spec[s.index()] = Some(Execution {
            state: ExecutionState::Created,
            attempt,
            placed: Some(tm as u32),
            hold_until: now,
            deployed_at: Some(now),
        });
        ctx.cluster.spec_descriptors[s.index()] = Some(descriptor);
        // Recorded before the view shows it, so a reader knows it runs beside the original.
        ctx.record(TraceEvent::Deployed {
            subtask: s,
            attempt,
            task_manager: tm as u32,
            speculative: true,
        });
        self.spec_state(ctx, s, ExecutionState::Deploying);
        self.send_to_task_manager(
            ctx,
            tm as u32,
            Rpc::new(s, attempt, Call::SubmitTask(Restore::FRESH)),
        );
    }

    /// The JobMaster's view of `s`'s speculative attempt goes to `to`.
    pub(crate) fn spec_state(&mut self, ctx: &mut Ctx<'_, '_>, s: SubtaskId, to: ExecutionState) {
        let e = self.scheduler.spec[s.index()]
            .as_mut()
            .expect("a speculative attempt");
        let (from, attempt) = (e.state, e.attempt);
        e.state = to;
        ctx.record(TraceEvent::ExecutionState {
            subtask: s,
            attempt,
            from,
            to,
        });
    }

    /// Is `attempt` the speculative attempt of `s`, in `state`?
    pub(crate) fn is_spec(&self, s: SubtaskId, attempt: u32, state: ExecutionState) -> bool {
        self.scheduler.spec[s.index()].is_some_and(|e| e.attempt == attempt && e.state == state)
    }

    /// Does `s` have a speculative attempt that may still finish?
    pub(crate) fn spec_live(&self, s: SubtaskId) -> bool {
        self.scheduler.spec[s.index()].is_some_and(|e| may_finish(e.state))
    }

    /// The speculative attempt `attempt` of `s` finished first (P2.8): it becomes the current
    /// one, and the summary counts it won once it is.
    pub(crate) fn spec_won(&mut self, ctx: &mut Ctx<'_, '_>, s: SubtaskId, attempt: u32) {
        self.promote_spec(ctx, s);
        if self.scheduler.exec[s.index()].attempt != attempt {
            return;
        }
        if let Some(entry) = ctx
            .cluster
            .speculations
            .iter_mut()
            .rev()
            .find(|(t, _)| *t == s)
        {
            entry.1 = true;
        }
    }

    /// The speculative attempt becomes the current one and the original the other (the one
    /// that finished first, or the one left when the other failed), P2.8. Its deployment
    /// descriptor goes with it: a TaskManager takes a deployment only while the JobMaster's
    /// descriptor still names that attempt (F2.7), so a promoted attempt whose deployment is
    /// still on the wire must keep its descriptor when the subtask's next speculative attempt
    /// writes its own (else the deployment is dropped as stale and the job waits for it
    /// forever).
    pub(crate) fn promote_spec(&mut self, ctx: &mut Ctx<'_, '_>, s: SubtaskId) {
        let i = s.index();
        let spec = self.scheduler.spec[i]
            .take()
            .expect("a speculative attempt");
        self.scheduler.spec[i] = Some(std::mem::replace(&mut self.scheduler.exec[i], spec));
        let cluster = &mut *ctx.cluster;
        if let Some(descriptor) = cluster.spec_descriptors[i].take() {
            let original = std::mem::replace(&mut cluster.descriptors[i], descriptor);
            cluster.spec_descriptors[i] = Some(original);
        }
    }

    /// Ends the other attempt of `s`, if any: cancelled if it may still finish (the first
    /// attempt to finish wins, a failover or a reset ends both), dropped otherwise.
    pub(crate) fn cancel_spec(&mut self, ctx: &mut Ctx<'_, '_>, s: SubtaskId) {
        let Some(e) = self.scheduler.spec[s.index()] else {
            return;
        };
        if may_finish(e.state) {
            self.spec_state(ctx, s, ExecutionState::Canceling);
            self.spec_state(ctx, s, ExecutionState::Canceled);
            self.send_cancel(ctx, s, e);
            self.free_spec_slot(s);
            self.scheduler.orphans.insert((s, e.attempt));
        }
        self.scheduler.spec[s.index()] = None;
    }

    /// The first attempt of `s` to finish wins: the JobMaster cancels the other (bug
    /// `keep-slow-attempt`: it forgets to).
    pub(crate) fn first_finish_wins(&mut self, ctx: &mut Ctx<'_, '_>, s: SubtaskId) {
        if self.bug == Some(Bug::KeepSlowAttempt) && self.spec_live(s) {
            // The loser stays RUNNING in the view and on its TaskManager.
            return;
        }
        self.cancel_spec(ctx, s);
    }

    pub(crate) fn free_spec_slot(&mut self, s: SubtaskId) {
        if let Some(tm) = self.scheduler.spec[s.index()]
            .as_mut()
            .and_then(|e| e.placed.take())
        {
            self.scheduler.slots_used[tm as usize] =
                self.scheduler.slots_used[tm as usize].saturating_sub(1);
        }
    }
}
