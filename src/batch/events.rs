//! The job event store (P2.2, F2.3): what a JobManager writes down so that its successor can
//! skip finished work. Durable once flushed; the write buffer dies with the JobManager.

use crate::coordinator::Enumerator;
use crate::graph::{SubtaskId, VertexId};

/// Where a result partition lives (P2.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Location {
    /// On this TaskManager process (the internal shuffle): gone when the process dies.
    TaskManager { task_manager: u32, process: u32 },
    /// On the remote shuffle service, which outlives TaskManagers.
    Remote,
}

/// The coordinator and shuffle-master snapshots a finished event may carry (F2.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Per vertex: the enumerator's state, for sources whose enumerator supports batch
    /// snapshots (`None` for the rest).
    pub enumerators: Vec<Option<Enumerator>>,
}

impl Snapshot {
    fn bytes(&self) -> u64 {
        32 + self
            .enumerators
            .iter()
            .flatten()
            .map(Enumerator::snapshot_bytes)
            .sum::<u64>()
    }
}

/// One persisted event (F2.3 names them after Flink's classes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobEvent {
    /// `ExecutionJobVertexInitializedEvent`: the vertex's decided parallelism.
    VertexInitialized { vertex: VertexId, parallelism: u32 },
    /// `ExecutionVertexFinishedEvent`: the attempt, its partition, and maybe snapshots.
    Finished {
        subtask: SubtaskId,
        attempt: u32,
        location: Location,
        bytes: u64,
        snapshot: Option<Box<Snapshot>>,
    },
    /// `ExecutionVertexResetEvent`.
    Reset { subtasks: Vec<SubtaskId> },
}

impl JobEvent {
    /// Encoded size, for `buffer_size`.
    fn bytes(&self) -> u64 {
        match self {
            JobEvent::VertexInitialized { .. } => 48,
            JobEvent::Finished { snapshot, .. } => 96 + snapshot.as_ref().map_or(0, |s| s.bytes()),
            JobEvent::Reset { subtasks } => 16 + 8 * subtasks.len() as u64,
        }
    }
}

/// The store: a durable log and one JobManager's write buffer in front of it.
#[derive(Default)]
pub struct JobEventStore {
    durable: Vec<JobEvent>,
    buffer: Vec<JobEvent>,
    buffered_bytes: u64,
    /// A `job_events_read_failure` fault: the durable events cannot be read back.
    unreadable: bool,
}

impl JobEventStore {
    /// Queues `event`; returns `true` when the buffer is now full and must be flushed.
    pub fn append(&mut self, event: JobEvent, buffer_size: u64) -> bool {
        self.buffered_bytes += event.bytes();
        self.buffer.push(event);
        self.buffered_bytes >= buffer_size
    }

    /// Writes the buffer to durable storage; returns how many events it held.
    pub fn flush(&mut self) -> usize {
        let n = self.buffer.len();
        self.durable.append(&mut self.buffer);
        self.buffered_bytes = 0;
        n
    }

    /// The JobManager died: its unflushed events are gone. Returns how many.
    pub fn lose_buffer(&mut self) -> usize {
        let n = self.buffer.len();
        self.buffer.clear();
        self.buffered_bytes = 0;
        n
    }

    /// F2.4 step 5: a failed recovery (or a job without recovery) deletes the log.
    pub fn clear(&mut self) {
        self.durable.clear();
        self.lose_buffer();
        self.unreadable = false;
    }

    /// A `job_events_read_failure` fault: the next replay fails (until the log is deleted).
    pub fn make_unreadable(&mut self) {
        self.unreadable = true;
    }

    /// Whether a replay can read the durable events back.
    pub fn readable(&self) -> bool {
        !self.unreadable
    }

    pub fn durable(&self) -> &[JobEvent] {
        &self.durable
    }

    /// `trust-unflushed-events`: the buffer too, as if it had been written.
    pub fn durable_and_buffered(&self) -> Vec<JobEvent> {
        self.durable.iter().chain(&self.buffer).cloned().collect()
    }
}

/// What a replay of the log restores.
#[derive(Debug)]
pub struct Replayed {
    /// Per vertex: the logged parallelism.
    pub parallelism: Vec<Option<u32>>,
    /// Per subtask: the finished attempt, its partition's location and bytes.
    pub finished: Vec<Option<(u32, Location, u64)>>,
    /// The latest snapshot among the kept events.
    pub snapshot: Option<Snapshot>,
    /// Finished events dropped because no snapshot follows them (F2.3), by subtask.
    pub discarded: Vec<SubtaskId>,
    /// Events applied.
    pub applied: usize,
}

/// Replays `events` in order (F2.3): trailing finished events that carry no snapshot are
/// discarded, so the subtasks they name run again.
/// A finish logged without its vertex's initialization cannot be placed and is dropped.
pub fn replay(events: &[JobEvent], vertices: usize, vertex_of: &[VertexId]) -> Replayed {
    let subtasks = vertex_of.len();
    let last_snapshot = events.iter().rposition(|e| {
        matches!(
            e,
            JobEvent::Finished {
                snapshot: Some(_),
                ..
            }
        )
    });
    let mut replayed = Replayed {
        parallelism: vec![None; vertices],
        finished: vec![None; subtasks],
        snapshot: None,
        discarded: Vec::new(),
        applied: 0,
    };
    for (i, event) in events.iter().enumerate() {
        match event {
            JobEvent::VertexInitialized {
                vertex,
                parallelism,
            } => replayed.parallelism[vertex.index()] = Some(*parallelism),
            JobEvent::Finished {
                subtask,
                attempt,
                location,
                bytes,
                snapshot,
            } => {
                if last_snapshot.is_none_or(|last| i > last) {
                    replayed.discarded.push(*subtask);
                    continue;
                }
                replayed.finished[subtask.index()] = Some((*attempt, *location, *bytes));
                if let Some(s) = snapshot {
                    replayed.snapshot = Some((**s).clone());
                }
            }
            JobEvent::Reset { subtasks } => {
                for s in subtasks {
                    replayed.finished[s.index()] = None;
                }
            }
        }
        replayed.applied += 1;
    }
    for (s, finished) in replayed.finished.iter_mut().enumerate() {
        if finished.is_some() && replayed.parallelism[vertex_of[s].index()].is_none() {
            *finished = None;
        }
    }
    replayed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn initialized() -> JobEvent {
        JobEvent::VertexInitialized {
            vertex: VertexId(0),
            parallelism: 3,
        }
    }

    fn finished(s: u32, snapshot: bool) -> JobEvent {
        JobEvent::Finished {
            subtask: SubtaskId(s),
            attempt: 0,
            location: Location::Remote,
            bytes: 10,
            snapshot: snapshot.then(|| {
                Box::new(Snapshot {
                    enumerators: vec![None],
                })
            }),
        }
    }

    #[test]
    fn trailing_finished_events_without_a_snapshot_are_discarded() {
        let log = [
            initialized(),
            finished(0, false),
            finished(1, true),
            finished(2, false),
        ];
        let r = replay(&log, 1, &[VertexId(0); 3]);
        assert!(r.finished[0].is_some() && r.finished[1].is_some());
        assert!(r.finished[2].is_none());
        assert_eq!(r.discarded, vec![SubtaskId(2)]);
    }

    #[test]
    fn a_reset_undoes_a_finish_and_a_crash_loses_the_buffer() {
        let mut store = JobEventStore::default();
        store.append(initialized(), 1 << 20);
        store.append(finished(0, true), 1 << 20);
        store.flush();
        store.append(
            JobEvent::Reset {
                subtasks: vec![SubtaskId(0)],
            },
            1 << 20,
        );
        assert_eq!(store.lose_buffer(), 1);
        assert!(replay(store.durable(), 1, &[VertexId(0)]).finished[0].is_some());
        assert!(
            store.append(finished(0, true), 1),
            "a full buffer asks for a flush"
        );
    }

    /// The sizes the write buffer counts (P2.2, `buffer_size`): 48 bytes for an
    /// initialization, 96 for a finish plus its snapshot (32 and each enumerator's), 16 plus 8
    /// per subtask for a reset. A buffer of exactly their sum is full after the last one.
    #[test]
    fn the_buffer_fills_at_the_encoded_sizes_of_its_events() {
        let snapshot = Snapshot {
            enumerators: vec![Some(Enumerator::new(2, 1)), None],
        };
        let events = [
            (initialized(), 48),
            (finished(0, false), 96),
            (
                JobEvent::Finished {
                    subtask: SubtaskId(1),
                    attempt: 0,
                    location: Location::Remote,
                    bytes: 10,
                    snapshot: Some(Box::new(snapshot)),
                },
                96 + 32 + 32,
            ),
            (
                JobEvent::Reset {
                    subtasks: vec![SubtaskId(0), SubtaskId(1)],
                },
                32,
            ),
        ];
        for (event, size) in events {
            let mut store = JobEventStore::default();
            assert!(!store.append(event.clone(), size + 1), "{event:?}");
            let mut store = JobEventStore::default();
            assert!(store.append(event.clone(), size), "{event:?}");
        }
    }

    #[test]
    fn a_crash_loses_every_buffered_event_and_clearing_deletes_the_log() {
        let mut store = JobEventStore::default();
        store.append(initialized(), 1 << 20);
        store.flush();
        store.append(finished(0, true), 1 << 20);
        store.append(finished(1, true), 1 << 20);
        assert_eq!(store.lose_buffer(), 2);
        assert_eq!(store.durable().len(), 1);
        assert_eq!(store.flush(), 0, "nothing is left to write");
        store.append(finished(0, true), 1 << 20);
        store.clear();
        assert!(store.durable().is_empty());
        assert_eq!(store.flush(), 0);
        assert_eq!(
            replay(&[initialized(), finished(0, true)], 1, &[VertexId(0)]).applied,
            2
        );
    }
}
