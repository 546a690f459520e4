//! The kernel events of a streaming run: small and `Copy`, since the queue moves them millions
//! of times.

use crate::graph::{ChannelId, SubtaskId};
use crate::net::LinkId;

/// A kernel event. Small and `Copy`: the queue moves these around millions of times.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// The JobMaster starts: the job is submitted at time zero.
    Start,
    /// The attempt finished initializing (restoring its state): it is RUNNING now.
    TaskInitialized { subtask: SubtaskId, attempt: u32 },
    /// The oldest RPC in flight on `link` reaches its destination.
    Rpc { link: LinkId },
    /// The oldest in-flight element of `channel` reaches its consumer's input buffer, unless
    /// the channel was reset since (`epoch`).
    Arrive { channel: ChannelId, epoch: u32 },
    /// The consumer of `channel` dequeued a record: the producer may push again.
    Credit { channel: ChannelId },
    /// A task's current step (processing one record, or a source's pause between records) is
    /// over. Carries the attempt so a step scheduled for a previous attempt is ignored.
    TaskStep { subtask: SubtaskId, attempt: u32 },
    /// `flink` (F1.5): the consumer of `channel` tells its producer that every record was
    /// processed (it dequeued EndOfData).
    AllRecordsProcessed { channel: ChannelId, epoch: u32 },
    /// The CheckpointCoordinator's periodic trigger. Timers carry the JobMaster incarnation:
    /// they die with it.
    CheckpointTick { incarnation: u32 },
    /// One of the scenario's explicit `trigger_at` times.
    CheckpointTriggerAt { incarnation: u32 },
    /// A checkpoint's timeout passed.
    CheckpointExpired { checkpoint: u64, incarnation: u32 },
    /// A failover's restart delay passed.
    RestartDelay { incarnation: u32 },
    /// Fault `index` of the scenario fires.
    Fault { index: u32 },
    /// Hold `index` (a `hold_channel` fault) lets its channel go.
    ReleaseChannel { index: u32 },
    /// The JobMaster's heartbeat to lost TaskManager process `dead` timed out.
    TaskManagerTimeout {
        task_manager: u32,
        dead: u32,
        incarnation: u32,
    },
    /// A replacement TaskManager process starts.
    TaskManagerRestart { task_manager: u32 },
    /// The TaskManagers' heartbeat to the dead JobMaster `incarnation` timed out.
    JobMasterTimeout { incarnation: u32 },
    /// A new JobMaster has been elected.
    JobMasterElected,
    /// The reconcile window of JobMaster `incarnation` closes (P3.4).
    ReconcileTimeout { incarnation: u32 },
    /// TaskManager process `process` sends its refused RPCs again (P3.3).
    RetryParked { task_manager: u32, process: u32 },
    /// An aligned checkpoint has been aligning at `subtask` for `alignment_timeout` (F1.3).
    AlignmentTimeout {
        subtask: SubtaskId,
        attempt: u32,
        checkpoint: u64,
    },
    /// The asynchronous part of `subtask`'s snapshot for `checkpoint` is over (F1.8).
    SnapshotUploaded {
        subtask: SubtaskId,
        attempt: u32,
        checkpoint: u64,
    },
}

// The kernel queue holds millions of these; a variant that grows past this makes every pending
// event bigger.
const _: () = assert!(std::mem::size_of::<Event>() <= 24);
