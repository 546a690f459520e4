//! `split-ownership` (F1.13): the oracle's own ledger of the splits of streaming sources that
//! read splits, kept from the trace alone: which reader owns each split and since which
//! checkpoint, what each split emitted, and what restores gave back.
//!
//! A split assigned after checkpoint `k` was triggered is covered by the checkpoints after `k`
//! (F1.13 step 2). A restore to checkpoint `r` of a reader gives back, to the enumerator, the
//! splits it was assigned after `r` was triggered (`k ≥ r`); the ones assigned before stay its
//! own (its restored state holds them, or it had read them before `r`). So a split may be
//! assigned again only once a restore gave it back, and when the job FINISHED every split must
//! have an owner: one given back and never assigned again was never read to its end. The
//! ledger also keeps, per split, how far its records went (`read`), for the reference of
//! `exactly-once-output`. It knows the splits from the scenario, never from the model.

use super::{Invariant, Violation};
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::record::Element;
use crate::status::{ExecutionState, JobStatus};
use crate::trace::TraceEvent;
use sim::Instant;
use std::collections::BTreeMap;

/// One source vertex that reads splits.
struct Source {
    vertex: u32,
    first: u32,
    /// Per split: the reader that owns it and the newest checkpoint triggered before it was
    /// assigned.
    owner: Vec<Option<(SubtaskId, u64)>>,
    /// Per split: one past the highest offset any of its records reached.
    read: Vec<u64>,
}

pub struct Splits {
    sources: Vec<Source>,
    /// Per subtask: its vertex's position in `sources`, if it reads splits.
    source_of: Vec<Option<usize>>,
    /// The newest checkpoint triggered.
    triggered: u64,
    /// Readers deployed since the last failover or election: the next restore restores them.
    redeployed: Vec<SubtaskId>,
}

impl Splits {
    /// `None` for a job without splits: the oracle stays off the hot path.
    pub fn new(graph: &ExecutionGraph) -> Option<Splits> {
        let mut sources = Vec::new();
        let mut source_of = vec![None; graph.subtasks.len()];
        for (v, vertex) in graph.vertices.iter().enumerate() {
            let Some(splits) = vertex.splits else {
                continue;
            };
            for i in 0..vertex.parallelism {
                source_of[(vertex.first + i) as usize] = Some(sources.len());
            }
            sources.push(Source {
                vertex: v as u32,
                first: vertex.first,
                owner: vec![None; splits as usize],
                read: vec![0; splits as usize],
            });
        }
        (!sources.is_empty()).then_some(Splits {
            sources,
            source_of,
            triggered: 0,
            redeployed: Vec::new(),
        })
    }

    /// Per source vertex that reads splits: how far each split's records went.
    pub fn read(&self) -> BTreeMap<u32, Vec<u64>> {
        self.sources
            .iter()
            .map(|s| (s.vertex, s.read.clone()))
            .collect()
    }

    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<Violation> {
        match *event {
            TraceEvent::Push {
                element: Element::Record(record),
                ..
            }
            | TraceEvent::ChainedSink { record, .. } => {
                // Split records carry their vertex's subtask 0 as origin, the split above bit
                // 32 of the sequence number and the offset below (README, "The workload").
                if let Some(k) = self.source_of[record.origin.index()] {
                    let source = &mut self.sources[k];
                    if source.first == record.origin.0 {
                        let split = (record.seq >> 32) as usize;
                        let offset = record.seq & u64::from(u32::MAX);
                        if let Some(read) = source.read.get_mut(split) {
                            *read = (*read).max(offset + 1);
                        }
                    }
                }
                None
            }
            TraceEvent::CheckpointTriggered { checkpoint } => {
                self.triggered = checkpoint;
                None
            }
            TraceEvent::Failover { .. } | TraceEvent::JobMasterElected { .. } => {
                self.redeployed.clear();
                None
            }
            TraceEvent::ExecutionState {
                subtask,
                to: ExecutionState::Scheduled,
                ..
            } if self.source_of[subtask.index()].is_some() => {
                self.redeployed.push(subtask);
                None
            }
            TraceEvent::Restore { checkpoint, .. } => {
                for s in std::mem::take(&mut self.redeployed) {
                    let k = self.source_of[s.index()].expect("only readers are kept");
                    for owner in &mut self.sources[k].owner {
                        if owner.is_some_and(|(o, after)| o == s && after >= checkpoint) {
                            *owner = None; // back to the enumerator (F1.13 steps 3 and 4)
                        }
                    }
                }
                None
            }
            TraceEvent::SplitAssigned {
                subtask,
                split: Some(split),
                ..
            } => {
                let k = self.source_of[subtask.index()]?;
                let owner = self.sources[k].owner.get_mut(split as usize)?;
                let previous = owner.replace((subtask, self.triggered));
                previous.map(|(o, after)| Violation {
                    invariant: Invariant::SplitOwnership,
                    time: now,
                    actors: vec![
                        graph.subtask_name(subtask).to_string(),
                        graph.subtask_name(o).to_string(),
                        "JobMaster".to_owned(),
                    ],
                    event_index: index,
                    message: format!(
                        "split {split} of {} was assigned to {} while {} owned it (assigned \
                         after checkpoint {after} was triggered), and no restore gave it back \
                         (F1.13)",
                        graph.vertices[self.sources[k].vertex as usize].name,
                        graph.subtask_name(subtask),
                        graph.subtask_name(o)
                    ),
                })
            }
            TraceEvent::JobStatus {
                to: JobStatus::Finished,
                ..
            } => {
                let (source, split) = self.sources.iter().find_map(|s| {
                    let split = s.owner.iter().position(Option::is_none)?;
                    Some((s, split))
                })?;
                let vertex = &graph.vertices[source.vertex as usize];
                Some(Violation {
                    invariant: Invariant::SplitOwnership,
                    time: now,
                    actors: vec![vertex.name.clone(), "JobMaster".to_owned()],
                    event_index: index,
                    message: format!(
                        "the job FINISHED, yet split {split} of {} has no reader: a restore \
                         gave it back and the enumerator never assigned it again, so its \
                         records after the checkpoint were never read (F1.13 step 4)",
                        vertex.name
                    ),
                })
            }
            _ => None,
        }
    }
}
