//! The fault plan: which faults fire when, and the network's fault windows (P1.8).
//!
//! A fault fires at a time (`"at"`) or the first time a predicate over the run holds
//! (`"when"`): the plan watches trace events as they are recorded, like the oracles, and
//! schedules the fault at that instant. It knows nothing of protocol rules: what a fault does
//! is the world's business. Delay spikes and RPC loss are windows the network consults when it
//! draws a latency; their random draws come from their own stream (`faults`), so adding a fault
//! never shifts the network's latencies.
//!
//! The run is *healed* once every fault has fired (or at `heal_at`) and the cluster has had
//! time to notice and react: from then on the liveness oracles apply.

use crate::graph::{ExecutionGraph, SubtaskId};
use crate::scenario::{
    Fault, FaultKind, FaultTrigger, Predicate, Release, Scenario, SnapshotPhase, SpikeTarget,
    SubtaskRef,
};
use crate::status::ExecutionState;
use crate::trace::TraceEvent;
use sim::{Duration, Instant, RandomStreams, Stream};

/// A latency window opened by a fault.
#[derive(Clone, Copy, Debug)]
struct Window {
    from: Instant,
    until: Instant,
}

impl Window {
    fn contains(&self, t: Instant) -> bool {
        self.from <= t && t < self.until
    }
}

/// What a trace event makes due, for the world to schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// Fault `index`'s `when` holds: it fires now.
    Fire(u32),
    /// Hold `index` has fired and its `release_when` holds: its channel goes free now.
    Release(u32),
}

pub struct FaultPlan {
    faults: Vec<Fault>,
    /// Per fault: scheduled to fire (a predicate held, or its time was scheduled).
    scheduled: Vec<bool>,
    /// Predicates still watched: `when` triggers not yet scheduled and `release_when`
    /// predicates not yet seen to hold.
    watching: usize,
    /// Per `hold_channel` fault: its `release_when` held (maybe before the hold began).
    release_seen: Vec<bool>,
    /// Per `hold_channel` fault: its channel was let go (at `release_at`, `release_when` or
    /// `heal_at`). Until then the hold is in effect and the run is not healed.
    released: Vec<bool>,
    fired: Vec<bool>,
    /// `fail_snapshot` faults whose trigger came and whose snapshot has not failed yet: they
    /// fire when it does.
    armed: Vec<bool>,
    armed_count: usize,
    last_fired_at: Option<Instant>,
    heal_at: Option<Instant>,
    /// How long after the last fault the cluster needs to notice and react.
    settle: Duration,
    heartbeat_timeout: Duration,
    spikes: Vec<(Window, Duration, SpikeTarget)>,
    losses: Vec<(Window, f64, Duration)>,
    rng: Stream,
    is_source: Vec<bool>,
    sources_finished: usize,
    sources: usize,
}

impl FaultPlan {
    pub fn new(scenario: &Scenario, graph: &ExecutionGraph, streams: &RandomStreams) -> FaultPlan {
        let is_source: Vec<bool> = graph
            .subtasks
            .iter()
            .map(|s| graph.vertices[s.vertex.index()].inputs.is_empty())
            .collect();
        let jm = scenario.jobmaster;
        let restart_after = scenario
            .faults
            .iter()
            .map(|f| match f.kind {
                FaultKind::LoseTaskManager { restart_after, .. }
                | FaultKind::CrashJobMaster { restart_after } => restart_after,
                FaultKind::DisconnectTaskManager { duration, .. } => duration,
                FaultKind::FailTask { .. }
                | FaultKind::TriggerTask { .. }
                | FaultKind::StopWithSavepoint { .. }
                | FaultKind::FailSnapshot { .. }
                | FaultKind::DelaySpike { .. }
                | FaultKind::RpcLoss { .. }
                | FaultKind::HoldChannel { .. }
                | FaultKind::JobEventsWriteFailure
                | FaultKind::JobEventsReadFailure => Duration::ZERO,
            })
            .max()
            .unwrap_or(Duration::ZERO);
        let spike_duration = scenario
            .faults
            .iter()
            .map(|f| match f.kind {
                FaultKind::DelaySpike { duration, .. } | FaultKind::RpcLoss { duration, .. } => {
                    duration
                }
                _ => Duration::ZERO,
            })
            .max()
            .unwrap_or(Duration::ZERO);
        FaultPlan {
            scheduled: vec![false; scenario.faults.len()],
            watching: scenario
                .faults
                .iter()
                .map(|f| {
                    usize::from(matches!(f.trigger, FaultTrigger::When(_)))
                        + usize::from(matches!(
                            f.kind,
                            FaultKind::HoldChannel {
                                release: Release::When(_),
                                ..
                            }
                        ))
                })
                .sum(),
            release_seen: vec![false; scenario.faults.len()],
            released: vec![false; scenario.faults.len()],
            fired: vec![false; scenario.faults.len()],
            armed: vec![false; scenario.faults.len()],
            armed_count: 0,
            faults: scenario.faults.clone(),
            last_fired_at: None,
            heal_at: scenario.heal_at.map(|d| Instant::ZERO + d),
            settle: jm.heartbeat_timeout
                + jm.restart_strategy.delay
                + restart_after
                + spike_duration,
            heartbeat_timeout: jm.heartbeat_timeout,
            spikes: Vec::new(),
            losses: Vec::new(),
            rng: streams.stream("faults"),
            sources: is_source.iter().filter(|&&s| s).count(),
            is_source,
            sources_finished: 0,
        }
    }

    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    /// How long until a lost process is noticed.
    pub fn heartbeat_timeout(&self) -> Duration {
        self.heartbeat_timeout
    }

    /// The time-triggered faults, to schedule at the start of the run.
    pub fn timed(&mut self) -> Vec<(Instant, u32)> {
        let mut timed = Vec::new();
        for (i, f) in self.faults.iter().enumerate() {
            if let FaultTrigger::At(at) = f.trigger {
                self.scheduled[i] = true;
                timed.push((Instant::ZERO + at, i as u32));
            }
        }
        timed
    }

    /// Sees a trace event; returns the faults whose `when` now holds for the first time, and
    /// the holds whose `release_when` does.
    // `always`: on the hot path of every recorded event; left to the inliner, one JobMaster
    // type's larger callers made it call this out of line (+5% instructions, `.ci/perf-check`).
    #[inline(always)]
    pub fn observe(&mut self, graph: &ExecutionGraph, index: u64, event: &TraceEvent) -> Vec<Due> {
        // The common case, on every event of most runs: no predicate is left to watch.
        if self.watching == 0 {
            return Vec::new();
        }
        if let TraceEvent::TaskState {
            subtask,
            to: ExecutionState::Finished,
            ..
        } = event
        {
            if self.is_source[subtask.index()] {
                self.sources_finished += 1;
            }
        }
        let all_sources = self.sources > 0 && self.sources_finished == self.sources;
        let mut due = Vec::new();
        for (i, f) in self.faults.iter().enumerate() {
            if let (false, FaultTrigger::When(predicate)) = (self.scheduled[i], &f.trigger) {
                if holds(predicate, graph, index, event, all_sources) {
                    self.scheduled[i] = true;
                    self.watching -= 1;
                    due.push(Due::Fire(i as u32));
                }
            }
            if let FaultKind::HoldChannel {
                release: Release::When(predicate),
                ..
            } = &f.kind
            {
                if !self.release_seen[i] && holds(predicate, graph, index, event, all_sources) {
                    self.release_seen[i] = true;
                    self.watching -= 1;
                    // A hold not begun yet lets go the instant it begins (see `fire`).
                    if self.fired[i] {
                        due.push(Due::Release(i as u32));
                    }
                }
            }
        }
        due
    }

    /// Fault `index` fires now, unless the healed phase began (`heal_at`): then it never does.
    /// Opens its window if it is a network fault, closing at `heal_at` at the latest.
    pub fn fire(&mut self, index: u32, now: Instant) -> Option<&Fault> {
        if self.heal_at.is_some_and(|h| now > h) {
            return None;
        }
        if let FaultKind::FailSnapshot { .. } = self.faults[index as usize].kind {
            // Armed, not fired: it fires when the snapshot it names fails.
            self.armed[index as usize] = true;
            self.armed_count += 1;
            return Some(&self.faults[index as usize]);
        }
        self.fired[index as usize] = true;
        self.last_fired_at = Some(now);
        let end = |d: Duration| {
            let until = now + d;
            self.heal_at.map_or(until, |h| until.min(h))
        };
        let fault = &self.faults[index as usize];
        match fault.kind {
            FaultKind::DelaySpike {
                extra,
                duration,
                target,
            } => self.spikes.push((
                Window {
                    from: now,
                    until: end(duration),
                },
                extra,
                target,
            )),
            FaultKind::RpcLoss {
                probability,
                retry_after,
                duration,
            } => self.losses.push((
                Window {
                    from: now,
                    until: end(duration),
                },
                probability,
                retry_after,
            )),
            FaultKind::FailTask { .. }
            | FaultKind::TriggerTask { .. }
            | FaultKind::StopWithSavepoint { .. }
            | FaultKind::FailSnapshot { .. }
            | FaultKind::HoldChannel { .. }
            | FaultKind::LoseTaskManager { .. }
            | FaultKind::DisconnectTaskManager { .. }
            | FaultKind::CrashJobMaster { .. }
            | FaultKind::JobEventsWriteFailure
            | FaultKind::JobEventsReadFailure => {}
        }
        Some(&self.faults[index as usize])
    }

    /// When hold `index`, firing now, lets its channel go, if the plan knows already: at its
    /// `release_at`, at once if its `release_when` held before, and at `heal_at` at the latest.
    /// `None`: when its `release_when` first holds.
    pub fn release_time(&self, index: u32, now: Instant) -> Option<Instant> {
        let FaultKind::HoldChannel { release, .. } = &self.faults[index as usize].kind else {
            unreachable!("only a hold is released")
        };
        let own = match release {
            Release::At(at) => Some(Instant::ZERO + *at),
            Release::When(_) => self.release_seen[index as usize].then_some(now),
        };
        let at = match (own, self.heal_at) {
            (Some(a), Some(h)) => Some(a.min(h)),
            (a, h) => a.or(h),
        };
        at.map(|a| a.max(now))
    }

    /// Hold `index` lets its channel go now; false if it did already (its release came twice:
    /// its own and `heal_at`). The healed phase begins after the last release.
    pub fn release(&mut self, index: u32, now: Instant) -> bool {
        if std::mem::replace(&mut self.released[index as usize], true) {
            return false;
        }
        self.last_fired_at = Some(self.last_fired_at.map_or(now, |t| t.max(now)));
        true
    }

    /// F1.9: whether the snapshot of `checkpoint` that `subtask` takes now fails, and in which
    /// part; the armed `fail_snapshot` fault that says so fires (fault index, phase).
    #[inline]
    pub fn snapshot_fails(
        &mut self,
        graph: &ExecutionGraph,
        subtask: SubtaskId,
        checkpoint: u64,
        now: Instant,
    ) -> Option<(u32, SnapshotPhase)> {
        if self.armed_count == 0 || self.heal_at.is_some_and(|h| now > h) {
            return None;
        }
        let i = (0..self.faults.len()).find(|&i| {
            self.armed[i]
                && matches!(self.faults[i].kind, FaultKind::FailSnapshot { task, checkpoint: c, .. }
                    if c == checkpoint
                        && graph.subtask(task) == subtask)
        })?;
        let FaultKind::FailSnapshot { phase, .. } = self.faults[i].kind else {
            unreachable!("matched above")
        };
        self.armed[i] = false;
        self.armed_count -= 1;
        self.fired[i] = true;
        self.last_fired_at = Some(now);
        Some((i as u32, phase))
    }

    /// Extra latency for a data element sent now.
    #[inline]
    pub fn channel_delay(&self, now: Instant) -> Duration {
        self.spike(now, SpikeTarget::Channels)
    }

    /// Extra latency for an RPC sent now, and whether it was lost (and is retried after the
    /// returned delay).
    pub fn rpc_delay(&mut self, now: Instant) -> (Duration, Option<Duration>) {
        let spike = self.spike(now, SpikeTarget::Rpcs);
        for &(window, probability, retry) in &self.losses {
            if window.contains(now) && self.rng.chance(probability) {
                return (spike + retry, Some(retry));
            }
        }
        (spike, None)
    }

    fn spike(&self, now: Instant, target: SpikeTarget) -> Duration {
        let mut extra = Duration::ZERO;
        for &(window, d, t) in &self.spikes {
            if window.contains(now) && (t == target || t == SpikeTarget::All) {
                extra = extra + d;
            }
        }
        extra
    }

    /// When the healed phase begins: every fault fired (or `heal_at`), plus the time the
    /// cluster needs to notice and react. `None` while a fault is still to come.
    pub fn healed_at(&self) -> Option<Instant> {
        // An armed `fail_snapshot` counts as fired: it may never fire (its checkpoint may not
        // come), and when it does, `last_fired_at` moves the healed phase after it.
        // A hold counts once its channel is free again.
        let all_fired = (0..self.faults.len()).all(|i| {
            let hold = matches!(self.faults[i].kind, FaultKind::HoldChannel { .. });
            (self.fired[i] && (!hold || self.released[i])) || self.armed[i]
        });
        let base = match (self.heal_at, all_fired) {
            (Some(at), _) => Some(at.max(self.last_fired_at.unwrap_or(Instant::ZERO))),
            (None, true) => Some(self.last_fired_at.unwrap_or(Instant::ZERO)),
            (None, false) => None,
        }?;
        if self.faults.is_empty() {
            return Some(Instant::ZERO);
        }
        Some(base.saturating_add(self.settle))
    }

    /// Faults that never fired (their predicate never held, the run ended first, or the
    /// healed phase had begun).
    pub fn unfired(&self) -> Vec<usize> {
        (0..self.faults.len()).filter(|&i| !self.fired[i]).collect()
    }
}

/// Whether `predicate` holds on `event`, the run's `index`th (a `when` or `release_when`).
fn holds(
    predicate: &Predicate,
    graph: &ExecutionGraph,
    index: u64,
    event: &TraceEvent,
    all_sources_finished: bool,
) -> bool {
    let resolve = |r: SubtaskRef| graph.subtask(r);
    match (predicate, event) {
        (Predicate::CheckpointPending(n), TraceEvent::CheckpointTriggered { checkpoint }) => {
            n == checkpoint
        }
        (Predicate::CheckpointCompleted(n), TraceEvent::CheckpointCompleted { checkpoint }) => {
            n == checkpoint
        }
        (
            Predicate::Finished(r),
            TraceEvent::TaskState {
                subtask,
                to: ExecutionState::Finished,
                ..
            },
        ) => resolve(*r) == *subtask,
        (
            Predicate::EndOfInput(r) | Predicate::WaitingForFinalCheckpoint(r),
            TraceEvent::EndOfInput { subtask },
        ) => resolve(*r) == *subtask,
        (Predicate::AllSourcesFinished, TraceEvent::TaskState { .. }) => all_sources_finished,
        (Predicate::EventCount(n), _) => index + 1 >= *n,
        (Predicate::JobStatus(want), TraceEvent::JobStatus { to, .. }) => want == to,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(faults: &str, heal_at: &str) -> (FaultPlan, ExecutionGraph) {
        let text = format!(
            r#"{{"name": "t", "mode": "streaming", "job": {{"vertices": [
                {{"id": "src", "operator": "source", "parallelism": 2}},
                {{"id": "sink", "operator": "sink", "parallelism": 1}}],
                "edges": [{{"from": "src", "to": "sink", "pattern": "all_to_all"}}]}},
                "faults": [{faults}]{heal_at}}}"#
        );
        let scenario = crate::scenario::parse(&text, "t.json").expect("valid");
        let graph = ExecutionGraph::build(&scenario.job);
        let plan = FaultPlan::new(&scenario, &graph, &RandomStreams::new(0));
        (plan, graph)
    }

    fn ms(n: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(n)
    }

    fn finished(subtask: u32) -> TraceEvent {
        TraceEvent::TaskState {
            subtask: SubtaskId(subtask),
            attempt: 0,
            from: ExecutionState::Running,
            to: ExecutionState::Finished,
        }
    }

    const HOLD: &str =
        r#"{"at": "1ms", "fault": "hold_channel", "from": "src[0]", "to": "sink[0]""#;

    /// A hold released at an instant is let go then, or at `heal_at` if that comes first; the
    /// run is healed only after the release, and a second release (the other of the two) finds
    /// the channel free already.
    #[test]
    fn a_hold_is_released_at_its_instant_or_at_heal_at() {
        let (mut p, _) = plan(&format!(r#"{HOLD}, "release_at": "9ms"}}"#), "");
        p.timed();
        p.fire(0, ms(1));
        assert_eq!(p.release_time(0, ms(1)), Some(ms(9)));
        assert_eq!(p.healed_at(), None, "the hold is in effect");
        assert!(p.release(0, ms(9)));
        assert!(!p.release(0, ms(9)), "released once");
        assert!(p.healed_at().is_some_and(|h| h >= ms(9)));
        let (p, _) = plan(
            &format!(r#"{HOLD}, "release_at": "9ms"}}"#),
            r#", "heal_at": "4ms""#,
        );
        assert_eq!(p.release_time(0, ms(1)), Some(ms(4)), "heal_at comes first");
    }

    /// A `release_when` that held before the hold began lets the channel go at once; one that
    /// holds later is reported when it does, and only for a hold that has begun.
    #[test]
    fn a_release_predicate_is_watched_from_the_start() {
        let hold = format!(r#"{HOLD}, "release_when": {{"finished": "src[1]"}}}}"#);
        let (mut p, graph) = plan(&hold, "");
        p.timed();
        assert_eq!(
            p.observe(&graph, 0, &finished(1)),
            vec![],
            "not begun: nothing due"
        );
        p.fire(0, ms(1));
        assert_eq!(
            p.release_time(0, ms(1)),
            Some(ms(1)),
            "it held before: at once"
        );

        let (mut p, graph) = plan(&hold, "");
        p.timed();
        p.fire(0, ms(1));
        assert_eq!(p.release_time(0, ms(1)), None, "not yet");
        assert_eq!(
            p.observe(&graph, 0, &finished(0)),
            vec![],
            "another subtask"
        );
        assert_eq!(p.observe(&graph, 1, &finished(1)), vec![Due::Release(0)]);
        assert_eq!(p.observe(&graph, 2, &finished(1)), vec![], "once");
    }
}
