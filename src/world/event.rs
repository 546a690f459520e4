//! The kernel events of a run, streaming or batch: one vocabulary, small and `Copy`, since the
//! queue moves them millions of times.
//!
//! What both kinds of job do is one variant each (an RPC arrives, a task step ends, a fault
//! fires, a process is noticed gone, a JobMaster is elected, a restart delay or reconcile
//! window passes, a TaskManager retries what it kept); what only one does is a variant of its
//! own, which the other mode's dispatch never sees scheduled.

use crate::graph::{ChannelId, SubtaskId};
use crate::net::LinkId;

/// A kernel event. Small and `Copy`: the queue moves these around millions of times. Equal
/// events are interchangeable: what an event does is in the world's queues (the next RPC of a
/// link, the next element of a channel), not in the event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    // Both kinds of job.
    /// The JobMaster starts: the job is submitted at time zero.
    Start,
    /// The oldest RPC in flight on `link` reaches its destination (it waits on the link, not
    /// in the kernel's queue).
    Rpc { link: LinkId },
    /// A task's current step is over: processing one record or a source's pause between
    /// records (streaming), reading a split or a whole input (batch). Carries the attempt so a
    /// step scheduled for a previous attempt is ignored.
    TaskStep { subtask: SubtaskId, attempt: u32 },
    /// F1.14 step 11: a lazily paced source's next step that something could see is due; it
    /// runs every step due since (`Task::catch_up`).
    SourceWake { subtask: SubtaskId, attempt: u32 },
    /// A failover's restart delay passed. Timers carry the JobMaster incarnation: they die
    /// with it.
    RestartDelay { incarnation: u32 },
    /// Fault `index` of the scenario fires.
    Fault { index: u32 },
    /// JobMaster `incarnation`'s heartbeat to lost TaskManager process `dead` timed out.
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

    // Streaming jobs: pipelined channels and checkpoints.
    /// The attempt finished initializing (restoring its state): it is RUNNING now.
    TaskInitialized { subtask: SubtaskId, attempt: u32 },
    /// The oldest `elements` in-flight elements of `channel` reach its consumer's input
    /// buffer, unless the channel was reset since (`epoch`): one element, or a network
    /// buffer's records (F1.14). Carries the channel's consumer and its position among the
    /// consumer's inputs (`ChannelInfo::to` and `input_slot`, copied when the element was
    /// pushed): the run loop's prefetch hint needs the consumer, whose state is a cache miss of
    /// its own at a million channels, and with both here an arrival never reads the channel's
    /// place in the graph, a 16-byte entry of a 16 MiB array that was a miss (and a page walk)
    /// of its own in almost every arrival of the 10^6-channel job.
    Arrive {
        channel: ChannelId,
        consumer: SubtaskId,
        slot: u32,
        epoch: u32,
        elements: u32,
    },
    /// The consumer of `channel` dequeued a record (with buffers: recycled a buffer): the
    /// producer may push again.
    Credit { channel: ChannelId },
    /// F1.14: the task's output flusher fires (Flink's `OutputFlusher`): partly filled
    /// buffers go on the wire.
    OutputFlush { subtask: SubtaskId, attempt: u32 },
    /// `flink` (F1.5): the consumer of `channel` tells its producer that every record was
    /// processed (it dequeued EndOfData).
    AllRecordsProcessed { channel: ChannelId, epoch: u32 },
    /// The CheckpointCoordinator's periodic trigger.
    CheckpointTick { incarnation: u32 },
    /// One of the scenario's explicit `trigger_at` times.
    CheckpointTriggerAt { incarnation: u32 },
    /// A checkpoint's timeout passed.
    CheckpointExpired { checkpoint: u64, incarnation: u32 },
    /// Hold `index` (a `hold_channel` fault) lets its channel go.
    ReleaseChannel { index: u32 },
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

    // Batch jobs: the job event log, TaskManagers cut off from their leader, speculation.
    /// F2.3: JobMaster `incarnation`'s job event write buffer is flushed on its interval.
    FlushTick { incarnation: u32 },
    /// TaskManager process `process`, cut off, notices that its JobMaster is gone.
    LeaderTimeout { task_manager: u32, process: u32 },
    /// F2.5: `registration_timeout` after TaskManager `task_manager` (process `process`) lost
    /// its leader for the `losses`-th time.
    RegistrationTimeout {
        task_manager: u32,
        process: u32,
        losses: u32,
    },
    /// A cut-off TaskManager's connection to the JobMaster comes back.
    Reconnect { task_manager: u32 },
    /// P2.4: `previous_worker_timeout` of JobMaster `incarnation` passed.
    WorkerTimeout { incarnation: u32 },
    /// P2.7: the result of the job JobMaster `incarnation` finished is durable in HA storage.
    JobResultWritten { incarnation: u32 },
    /// P2.8: JobMaster `incarnation`'s slow-task detector looks.
    SpeculationCheck { incarnation: u32 },
}

// The kernel queue holds millions of these; a variant that grows past this makes every pending
// event bigger.
const _: () = assert!(std::mem::size_of::<Event>() <= 24);
