//! What happened to every checkpoint, for the summary: an omniscient record that actors write
//! and never read (like Flink's `CheckpointStatsTracker`, but outside the JobManager so a crash
//! does not erase it).

use super::plan::Plan;
use crate::graph::SubtaskId;
use crate::trace::AbortReason;
use sim::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pending,
    Completed(Instant),
    Aborted(Instant, AbortReason),
}

#[derive(Clone, Debug)]
pub struct CheckpointRecord {
    pub id: u64,
    pub triggered_at: Instant,
    pub plan: Plan,
    pub outcome: Outcome,
    /// Per task: how long it took from the first barrier (or trigger) to alignment.
    pub alignments: Vec<(SubtaskId, Duration)>,
    /// `option1`: trigger RPCs re-sent to descendants of finished subtasks.
    pub retriggers: u64,
    /// `option1`: subtasks whose trigger missed because they had finished.
    pub missed: Vec<SubtaskId>,
    /// Unaligned (P1.4): records persisted as input and as output channel state.
    pub input_state_records: u64,
    pub output_state_records: u64,
    /// With network buffers (F1.14): the buffers holding that state, as Flink persists it.
    pub input_state_buffers: u64,
    pub output_state_buffers: u64,
    /// Bytes of one record of channel state: [`RECORD_BYTES`], or with network buffers the
    /// scenario's `network.record_bytes` (F1.14).
    pub record_bytes: u64,
}

/// The size of a record on the wire without network buffers, for channel-state bytes: origin,
/// key, sequence, value.
pub const RECORD_BYTES: u64 = std::mem::size_of::<crate::record::Record>() as u64;

/// One failover (P1.8), for the summary.
#[derive(Clone, Debug)]
pub struct FailoverRecord {
    pub at: Instant,
    /// What set it off.
    pub cause: String,
    pub full: bool,
    /// Set at restore time.
    pub restored_at: Option<Instant>,
    pub restored_checkpoint: Option<u64>,
    pub restarted: Vec<SubtaskId>,
    /// Redeployed finished on restore: recorded finished, so not run again (F1.6).
    pub kept_finished: Vec<SubtaskId>,
    /// Records the restarted sources emit again: what they had emitted beyond the restored
    /// offsets.
    pub records_replayed: u64,
}

impl FailoverRecord {
    /// A failover starting now; the restore fills in the rest.
    pub fn new(at: Instant, cause: String, full: bool) -> FailoverRecord {
        FailoverRecord {
            at,
            cause,
            full,
            restored_at: None,
            restored_checkpoint: None,
            restarted: Vec::new(),
            kept_finished: Vec::new(),
            records_replayed: 0,
        }
    }
}

/// One reconciliation of a newly elected JobMaster with its TaskManagers (P3).
pub struct ReconcileRecord {
    pub started: Instant,
    /// When the window closed (every TaskManager reported, or `reconcile_timeout`).
    pub ended: Option<Instant>,
    pub outcome: Option<crate::trace::ReconcileOutcome>,
    /// Executions reported within the window, and after it.
    pub reports: u32,
    pub late_reports: u32,
    /// Executions reported RUNNING (or on their way there) that kept running through the
    /// JobManager's absence.
    pub kept_running: u32,
    /// Executions reported FINISHED.
    pub kept_finished: u32,
}

#[derive(Default)]
pub struct CheckpointStats {
    pub checkpoints: Vec<CheckpointRecord>,
    pub failovers: Vec<FailoverRecord>,
    pub reconciliations: Vec<ReconcileRecord>,
    /// P3.3: TaskManager RPCs kept for a retry (refused by a reconciling JobMaster, or sent
    /// when none was elected), and RPCs sent again.
    pub rpcs_kept: u64,
    pub rpcs_resent: u64,
    /// F1.6: why the job could not start from `restore_from`, if it could not.
    pub restore_refused: Option<String>,
}

impl CheckpointStats {
    pub fn get_mut(&mut self, id: u64) -> Option<&mut CheckpointRecord> {
        // Ids are dense and never reused (the counter is durable); they start at 1, or after
        // the checkpoint a job was started from (F1.6).
        let first = self.checkpoints.first()?.id;
        self.checkpoints
            .get_mut(usize::try_from(id.checked_sub(first)?).ok()?)
    }
}
