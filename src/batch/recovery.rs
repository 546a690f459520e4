//! The recovery procedure of a new JobMaster (P2.4, P2.5) as pure functions of what it
//! replayed and what was reported, so the same rules serve a JobMaster crash and an ordinary
//! failover, and the oracle can recompute the answer its own way (`oracle.rs`).

use super::data;
use super::events::{JobEvent, Replayed};
use crate::bug::Bug;
use crate::graph::{ExecutionGraph, SubtaskId, VertexId};
use crate::scenario::Batch as BatchConfig;
use crate::trace::RerunReason;
use std::collections::{BTreeMap, VecDeque};

/// What the JobMaster knows when it expands a reset (P2.4 step 4).
pub struct View<'a> {
    pub parallelism: &'a [Option<u32>],
    /// The subtask has run (or runs): resetting it means running it again.
    pub finished: &'a [bool],
    /// Its partition is tracked (available to consumers).
    pub tracked: &'a [bool],
    /// P2.5 rule 2: vertices whose coordinator cannot snapshot and whose subtasks all finished.
    pub remembered: &'a [bool],
}

/// Subtasks to reset, with why, and the enumerators that start over.
#[derive(Debug, Default)]
pub struct Plan {
    pub reset: Vec<(SubtaskId, RerunReason)>,
    pub fresh_enumerators: Vec<VertexId>,
    /// Part of a JobMaster recovery (as opposed to a failover of a running job).
    pub recovery: bool,
    /// The recovery whose figures count these re-runs.
    pub recovery_index: Option<usize>,
}

/// P2.4 step 4 (F2.4 step 4): from the seeds, every consumer that ran on a partition that is
/// produced again (region failover downstream), every producer whose partition a re-run
/// subtask needs and that is not tracked, and every subtask of a remembered coordinator
/// vertex (once), until nothing changes.
pub fn expand(
    graph: &ExecutionGraph,
    view: &View<'_>,
    seeds: Vec<(SubtaskId, RerunReason)>,
    bug: Option<Bug>,
) -> Plan {
    let mut set: BTreeMap<SubtaskId, RerunReason> = BTreeMap::new();
    let mut queue = VecDeque::new();
    let mut fresh = Vec::new();
    let mut add = |s: SubtaskId, why: RerunReason, queue: &mut VecDeque<SubtaskId>| {
        if let std::collections::btree_map::Entry::Vacant(e) = set.entry(s) {
            e.insert(why);
            queue.push_back(s);
        }
    };
    for (s, why) in seeds {
        add(s, why, &mut queue);
    }
    let mut expanded = vec![false; graph.vertices.len()];
    while let Some(s) = queue.pop_front() {
        for c in data::consumers(graph, view.parallelism, s) {
            if view.finished[c.index()] {
                add(c, RerunReason::DownstreamOfReset, &mut queue);
            }
        }
        let v = graph.subtasks[s.index()].vertex;
        if view.remembered[v.index()] && !expanded[v.index()] {
            expanded[v.index()] = true;
            fresh.push(v);
            let first = graph.vertices[v.index()].first;
            let p = view.parallelism[v.index()].unwrap_or(0);
            for t in (first..first + p).map(SubtaskId) {
                if view.finished[t.index()] {
                    add(t, RerunReason::CoordinatorRule, &mut queue);
                }
            }
        }
        for (_, p) in data::producers(graph, view.parallelism, s) {
            let unavailable = !view.tracked[p.index()] || bug == Some(Bug::RestartAllUpstream);
            if unavailable && view.finished[p.index()] {
                add(p, RerunReason::PartitionMissing, &mut queue);
            }
        }
    }
    Plan {
        reset: set.into_iter().collect(),
        fresh_enumerators: fresh,
        recovery: false,
        recovery_index: None,
    }
}

/// F2.4 step 3: per subtask, whether its partition is RESERVE: its producer finished and some
/// consumer vertex is not initialized or some consumer subtask has not finished.
pub fn reserved(graph: &ExecutionGraph, replayed: &Replayed) -> Vec<bool> {
    graph
        .subtasks
        .iter()
        .enumerate()
        .map(|(s, subtask)| {
            let id = SubtaskId(s as u32);
            let vertex = &graph.vertices[subtask.vertex.index()];
            if replayed.finished[s].is_none() || vertex.outputs.is_empty() {
                return false;
            }
            let uninitialized = vertex
                .outputs
                .iter()
                .any(|&e| replayed.parallelism[graph.edges[e].to.index()].is_none());
            uninitialized
                || data::consumers(graph, &replayed.parallelism, id)
                    .iter()
                    .any(|c| replayed.finished[c.index()].is_none())
        })
        .collect()
}

/// What recovery decided.
#[derive(Debug)]
pub struct Outcome {
    /// Per subtask: recovered as finished (P2.4 step 2, after steps 3 and 4).
    pub finished: Vec<bool>,
    /// Replayed-finished subtasks that run again, with why.
    pub reset: Vec<(SubtaskId, RerunReason)>,
    /// Coordinators that start from scratch (P2.5 rule 1).
    pub fresh: Vec<VertexId>,
    /// P2.5 rule 2.
    pub remembered: Vec<bool>,
}

/// P2.4 steps 2-4 over a replay and the partitions tracked when the wait ended.
pub fn recover(
    graph: &ExecutionGraph,
    batch: &BatchConfig,
    replayed: &Replayed,
    tracked: &[bool],
    bug: Option<Bug>,
) -> Outcome {
    let n = graph.subtasks.len();
    let finished: Vec<bool> = replayed.finished.iter().map(Option::is_some).collect();
    let reserve = reserved(graph, replayed);
    let mut seeds = Vec::new();
    // Step 4's seeds: producers of RESERVE partitions nobody reported.
    if bug != Some(Bug::IgnorePartitionReports) {
        for s in 0..n {
            if reserve[s] && !tracked[s] {
                seeds.push((SubtaskId(s as u32), RerunReason::PartitionMissing));
            }
        }
    }
    // Step 3 / P2.5: a coordinator without batch snapshots.
    let mut remembered = vec![false; graph.vertices.len()];
    let mut fresh = Vec::new();
    if bug != Some(Bug::SkipCoordinatorReset) {
        for (v, coordinator) in batch.coordinators.iter().enumerate() {
            let (Some(c), Some(p)) = (coordinator, replayed.parallelism[v]) else {
                continue;
            };
            if c.supports_batch_snapshot && replayed.snapshot.is_some() {
                continue;
            }
            let first = graph.vertices[v].first;
            let subtasks: Vec<SubtaskId> = (first..first + p).map(SubtaskId).collect();
            if subtasks.iter().all(|s| finished[s.index()]) {
                remembered[v] = true;
            } else {
                fresh.push(VertexId(v as u32));
                for &s in &subtasks {
                    if finished[s.index()] {
                        seeds.push((s, RerunReason::CoordinatorRule));
                    }
                }
            }
        }
    }
    // A finish logged after its producer's finish went unlogged (a JobMaster that learned of
    // the producer from a reconciliation, P3.2): the producer runs again, so its consumer
    // must too (P2.4 step 4, downstream of a reset).
    for s in 0..n {
        let v = graph.subtasks[s].vertex;
        let initialized =
            replayed.parallelism[v.index()].is_some_and(|p| graph.subtasks[s].index < p);
        if initialized && !finished[s] {
            for c in data::consumers(graph, &replayed.parallelism, SubtaskId(s as u32)) {
                if finished[c.index()] {
                    seeds.push((c, RerunReason::DownstreamOfReset));
                }
            }
        }
    }
    // A finish whose input vertex the log never initialized consumed outputs nobody can
    // account for: it runs again.
    for (s, &done) in finished.iter().enumerate() {
        let vertex = &graph.vertices[graph.subtasks[s].vertex.index()];
        let orphan = vertex
            .inputs
            .iter()
            .any(|&e| replayed.parallelism[graph.edges[e].from.index()].is_none());
        if done && orphan {
            seeds.push((SubtaskId(s as u32), RerunReason::DownstreamOfReset));
        }
    }
    // `restart-all-upstream`: every finished producer of an unfinished subtask runs again.
    if bug == Some(Bug::RestartAllUpstream) {
        for s in 0..n {
            let id = SubtaskId(s as u32);
            let v = graph.subtasks[s].vertex;
            let initialized =
                replayed.parallelism[v.index()].is_some_and(|p| graph.subtasks[s].index < p);
            if initialized && !finished[s] {
                for (_, p) in data::producers(graph, &replayed.parallelism, id) {
                    if finished[p.index()] {
                        seeds.push((p, RerunReason::PartitionMissing));
                    }
                }
            }
        }
    }
    let plan = expand(
        graph,
        &View {
            parallelism: &replayed.parallelism,
            finished: &finished,
            tracked: if bug == Some(Bug::IgnorePartitionReports) {
                &finished
            } else {
                tracked
            },
            remembered: &remembered,
        },
        seeds,
        bug,
    );
    let mut recovered = finished.clone();
    for &(s, _) in &plan.reset {
        recovered[s.index()] = false;
    }
    for v in &plan.fresh_enumerators {
        remembered[v.index()] = false;
    }
    fresh.extend(plan.fresh_enumerators);
    Outcome {
        finished: recovered,
        reset: plan.reset,
        fresh,
        remembered,
    }
}

/// Subtasks whose latest finished/reset event in `events` is a finish, trailing ones
/// included: what the log claims, before F2.3's discard.
pub fn logged_finished(events: &[JobEvent], subtasks: usize) -> Vec<SubtaskId> {
    let mut finished = vec![false; subtasks];
    for e in events {
        match e {
            JobEvent::Finished { subtask, .. } => finished[subtask.index()] = true,
            JobEvent::Reset { subtasks } => {
                for s in subtasks {
                    finished[s.index()] = false;
                }
            }
            JobEvent::VertexInitialized { .. } => {}
        }
    }
    (0..subtasks as u32)
        .map(SubtaskId)
        .filter(|s| finished[s.index()])
        .collect()
}
