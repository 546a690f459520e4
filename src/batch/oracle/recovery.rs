//! `minimal-rerun` and `adaptive-parallelism` at the end of a JobManager recovery (P2.4, P2.5,
//! P2.1): the oracle replays the durable job events itself, recomputes which subtasks must stay
//! finished from what the partition reports and the remote shuffle service hold, and compares
//! that with what the new JobMaster kept and re-ran; once the recovery ended, the log claims no
//! finish it did not keep (P2.2).

use super::*;

/// What a new JobMaster replays from the durable job events ([`BatchOracles::replay`]).
pub(super) struct Replayed {
    /// Per vertex, its logged parallelism.
    parallelism: Vec<Option<u32>>,
    /// The finishes kept, with attempt and location.
    pub(super) finished: BTreeMap<SubtaskId, (u32, Location)>,
    /// Some kept finish carries a snapshot.
    snapshot_exists: bool,
}

impl BatchOracles {
    /// P2.2: once a recovery ended, the job event log (its write buffer included) claims no
    /// finish the recovery did not keep (a discarded or unreported one): a later crash would
    /// trust it.
    pub(super) fn check_claims_after_recovery(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
    ) {
        let kept: BTreeSet<SubtaskId> = self.kept.iter().map(|&(s, _)| s).collect();
        let claimed = Self::claimed_finished(&self.log);
        if let Some(s) = claimed.keys().find(|s| !kept.contains(s)) {
            let name = graph.subtask_name(*s).to_string();
            self.violate(
                Invariant::MinimalRerun,
                now,
                index,
                vec!["JobMaster".into(), name.clone()],
                format!(
                    "recovery ended, but the job event log still claims {name} finished, \
                     which the recovery did not keep (P2.2: what a recovery undoes is logged \
                     reset)"
                ),
            );
        }
    }

    /// `adaptive-parallelism` (P2.1): a vertex is initialized once its inputs finished, with
    /// the parallelism the scenario fixes, or, for an `"auto"` vertex, the input bytes (every
    /// subtask of every input vertex, as the partitions written say) over `bytes_per_task`,
    /// rounded up and kept within `min` and `max`.
    pub(super) fn check_parallelism(
        &self,
        graph: &ExecutionGraph,
        v: VertexId,
        (parallelism, input_bytes, adaptive): (u32, u64, bool),
    ) -> Option<String> {
        let vertex = &graph.vertices[v.index()];
        if adaptive != self.adaptive[v.index()] {
            return Some(format!(
                "{} was initialized as {}adaptive, but the scenario says \"parallelism\": {}",
                vertex.name,
                if adaptive { "" } else { "not " },
                if self.adaptive[v.index()] {
                    "\"auto\"".to_owned()
                } else {
                    vertex.parallelism.to_string()
                }
            ));
        }
        // The partitions its consumers read: of the attempt the JobMaster last saw finish (a
        // recovery adopts the logged attempt, whose partition may outlive a later re-run; a
        // JobMaster whose store failed to write logs no newer one), else of the latest one
        // written.
        let bytes_of = |s: SubtaskId| {
            self.finished_attempt
                .get(&s)
                .and_then(|&a| self.written_by.get(&(s, a)).copied())
                .unwrap_or(self.written[s.index()])
        };
        let mut bytes = 0;
        for &e in &vertex.inputs {
            let up = graph.edges[e].from;
            let Some(p) = self.decided[up.index()] else {
                return Some(format!(
                    "{} was initialized before its input {} was",
                    vertex.name,
                    graph.vertices[up.index()].name
                ));
            };
            let first = graph.vertices[up.index()].first;
            bytes += (first..first + p)
                .map(|s| bytes_of(SubtaskId(s)))
                .sum::<u64>();
        }
        if !self.adaptive[v.index()] {
            return (parallelism != vertex.parallelism).then(|| {
                format!(
                    "{} was initialized with parallelism {parallelism}, but the scenario fixes \
                     it at {}",
                    vertex.name, vertex.parallelism
                )
            });
        }
        let a = self.batch.adaptive;
        let want = (bytes.div_ceil(a.bytes_per_task.max(1)) as u32).clamp(a.min, a.max);
        ((parallelism, input_bytes) != (want, bytes)).then(|| {
            format!(
                "{} was initialized with parallelism {parallelism} from {input_bytes} input \
                 bytes, but its inputs' partitions hold {bytes} bytes, which makes {want} \
                 (bytes_per_task {}, rounded up, within {}..={})",
                vertex.name, a.bytes_per_task, a.min, a.max
            )
        })
    }

    /// `minimal-rerun`: recompute which subtasks stay finished and compare.
    /// What a new JobMaster replays from the durable job events (P2.4 step 1, F2.3): each
    /// vertex's logged parallelism, the finishes it keeps (up to the last one with a snapshot,
    /// not reset since, of a vertex logged initialized), and whether any carries a snapshot.
    pub(super) fn replay(graph: &ExecutionGraph, durable: &[JobEvent]) -> Replayed {
        // F2.3, read backwards: finished events after the last one with a snapshot do not count.
        let cut = durable.iter().rposition(|e| {
            matches!(
                e,
                JobEvent::Finished {
                    snapshot: Some(_),
                    ..
                }
            )
        });
        let mut parallelism: Vec<Option<u32>> = vec![None; graph.vertices.len()];
        let mut finished: BTreeMap<SubtaskId, (u32, Location)> = BTreeMap::new();
        let mut snapshot_exists = false;
        for (i, e) in durable.iter().enumerate() {
            match e {
                JobEvent::VertexInitialized {
                    vertex,
                    parallelism: p,
                } => parallelism[vertex.index()] = Some(*p),
                JobEvent::Finished {
                    subtask,
                    attempt,
                    location,
                    snapshot,
                    ..
                } => {
                    if cut.is_some_and(|c| i <= c) {
                        finished.insert(*subtask, (*attempt, *location));
                        snapshot_exists |= snapshot.is_some();
                    }
                }
                JobEvent::Reset { subtasks } => {
                    for s in subtasks {
                        finished.remove(s);
                    }
                }
            }
        }
        let within = |s: SubtaskId| {
            let sub = &graph.subtasks[s.index()];
            parallelism[sub.vertex.index()].is_some_and(|p| sub.index < p)
        };
        // A finish whose vertex was never logged initialized cannot be placed.
        finished.retain(|s, _| within(*s));
        Replayed {
            parallelism,
            finished,
            snapshot_exists,
        }
    }

    pub(super) fn check_recovery(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        w: &Window,
    ) {
        let durable = &self.log[..self.durable.min(self.log.len())];
        let Replayed {
            parallelism,
            finished,
            snapshot_exists,
        } = Self::replay(graph, durable);
        let within = |s: SubtaskId| {
            let sub = &graph.subtasks[s.index()];
            parallelism[sub.vertex.index()].is_some_and(|p| sub.index < p)
        };
        let consumers_of = |s: SubtaskId| -> (bool, Vec<SubtaskId>) {
            let v = &graph.vertices[graph.subtasks[s.index()].vertex.index()];
            let uninitialized = v
                .outputs
                .iter()
                .any(|&e| parallelism[graph.edges[e].to.index()].is_none());
            let list = graph.subtasks[s.index()]
                .outputs
                .iter()
                .flat_map(|g| g.channels.iter())
                .map(|c| graph.channels[c.index()].to)
                .filter(|&c| within(c))
                .collect();
            (uninitialized, list)
        };
        let producers_of = |s: SubtaskId| -> Vec<SubtaskId> {
            graph.subtasks[s.index()]
                .inputs
                .iter()
                .map(|c| graph.channels[c.index()].from)
                .filter(|&p| within(p))
                .collect()
        };
        let available = |s: SubtaskId, (attempt, location): (u32, Location)| match location {
            Location::Remote => self.remote.contains(&(s, attempt)),
            Location::TaskManager {
                task_manager,
                process,
            } => w.reports.contains(&(s, attempt, task_manager, process)),
        };
        // The window may end early only once every RESERVE partition is reported.
        let deadline = w.started + self.batch.previous_worker_timeout;
        if now < deadline {
            for (&s, &f) in &finished {
                let has_outputs = !graph.vertices[graph.subtasks[s.index()].vertex.index()]
                    .outputs
                    .is_empty();
                let (uninit, consumers) = consumers_of(s);
                let reserve = uninit || consumers.iter().any(|c| !finished.contains_key(c));
                // A remote partition is known from the shuffle master's snapshot at once:
                // there is nothing to wait for.
                let remote = f.1 == Location::Remote;
                let reported_then_lost = match f.1 {
                    Location::TaskManager {
                        task_manager,
                        process,
                    } => w.gone.contains(&(s, f.0, task_manager, process)),
                    Location::Remote => false,
                };
                if has_outputs && reserve && !remote && !available(s, f) && !reported_then_lost {
                    self.violate(
                        Invariant::MinimalRerun,
                        now,
                        index,
                        vec!["JobMaster".into(), graph.subtask_name(s).to_string()],
                        format!(
                            "recovery stopped waiting before previous_worker_timeout although \
                             the needed partition of {} was not reported (P2.4)",
                            graph.subtask_name(s)
                        ),
                    );
                    return;
                }
            }
        }
        // P2.5: coordinators without a usable snapshot.
        let mut keep: BTreeSet<SubtaskId> = finished.keys().copied().collect();
        let mut remembered: Vec<VertexId> = Vec::new();
        for (v, c) in self.batch.coordinators.iter().enumerate() {
            let (Some(c), Some(p)) = (c, parallelism[v]) else {
                continue;
            };
            if c.supports_batch_snapshot && snapshot_exists {
                continue;
            }
            let first = graph.vertices[v].first;
            let all: Vec<SubtaskId> = (first..first + p).map(SubtaskId).collect();
            if all.iter().all(|s| keep.contains(s)) {
                remembered.push(VertexId(v as u32));
            } else {
                for s in all {
                    keep.remove(&s);
                }
            }
        }
        // The greatest fixpoint.
        loop {
            let mut drop = Vec::new();
            for &s in &keep {
                let has_outputs = !graph.vertices[graph.subtasks[s.index()].vertex.index()]
                    .outputs
                    .is_empty();
                let (uninit, consumers) = consumers_of(s);
                let needed = uninit || consumers.iter().any(|c| !keep.contains(c));
                let partition_gone = has_outputs && needed && !available(s, finished[&s]);
                let orphan = graph.vertices[graph.subtasks[s.index()].vertex.index()]
                    .inputs
                    .iter()
                    .any(|&e| parallelism[graph.edges[e].from.index()].is_none());
                let input_rerun = orphan || producers_of(s).iter().any(|p| !keep.contains(p));
                if partition_gone || input_rerun {
                    drop.push(s);
                }
            }
            for v in &remembered {
                let vertex = &graph.vertices[v.index()];
                let p = parallelism[v.index()].unwrap_or(0);
                let all: Vec<SubtaskId> = (vertex.first..vertex.first + p).map(SubtaskId).collect();
                if all.iter().any(|s| !keep.contains(s) || drop.contains(s)) {
                    drop.extend(all.into_iter().filter(|s| keep.contains(s)));
                }
            }
            if drop.is_empty() {
                break;
            }
            for s in drop {
                keep.remove(&s);
            }
        }
        self.kept = keep.iter().map(|s| (*s, finished[s].0)).collect();
        let extra: Vec<String> = w
            .recovered
            .difference(&keep)
            .map(|s| graph.subtask_name(*s).to_string())
            .collect();
        let missing: Vec<String> = keep
            .difference(&w.recovered)
            .map(|s| graph.subtask_name(*s).to_string())
            .collect();
        if !extra.is_empty() || !missing.is_empty() {
            let mut parts = Vec::new();
            if !extra.is_empty() {
                parts.push(format!(
                    "kept {} as finished although the ledger says they must run again",
                    extra.join(", ")
                ));
            }
            if !missing.is_empty() {
                parts.push(format!(
                    "runs {} again although their finish was durable, snapshotted and their \
                     partitions available",
                    missing.join(", ")
                ));
            }
            let mut actors = vec!["JobMaster".to_owned()];
            actors.extend(extra.iter().chain(&missing).cloned());
            self.violate(
                Invariant::MinimalRerun,
                now,
                index,
                actors,
                format!("recovery {} (P2.4, P2.5)", parts.join("; and ")),
            );
        }
    }
}
