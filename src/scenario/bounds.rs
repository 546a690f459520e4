//! The sizes a scenario may give. Whatever `validate` accepts must run within its budgets:
//! every dimension that sizes a run (actors, channels, splits, records a batch source reads in
//! one event, list lengths, queue capacities) has a named cap here, chosen so the largest
//! world still fits in a few gigabytes and each event stays cheap. Durations are capped where
//! they are parsed (`raw::MAX_DURATION`), the budgets in `validate::check_budget`.

use super::batch::Batch;
use super::types::{Job, Pattern, Records};
use super::validate::{problem, Problem};

/// TaskManagers in a cluster: each is an actor with its own slots, mailbox and timers.
pub const MAX_TASK_MANAGERS: u32 = 10_000;
/// Slots of one TaskManager.
pub const MAX_SLOTS_PER_TASK_MANAGER: u32 = 10_000;
/// Subtasks of the whole job (every vertex's parallelism, an `"auto"` vertex at its upper
/// bound): each is an actor with its own state.
pub const MAX_SUBTASKS: u64 = 1_000_000;
/// Channels of the whole job (an all-to-all edge has `p_up × p_down`): each holds a FIFO queue
/// and credit; 4 million fit in about 4 GB, the largest world a run may build.
pub const MAX_CHANNELS: u64 = 4_000_000;
/// `network.channel_capacity`: buffers one channel may hold.
pub const MAX_CHANNEL_CAPACITY: u32 = 1_000_000;
/// F1.14: `network.buffer_size` (bytes; Flink's segments are kilobytes, 1 GiB is far past any),
/// and the buffers a channel owns or a gate lends (each is credit a producer may use).
pub const MAX_BUFFER_SIZE: u64 = 1 << 30;
pub const MAX_EXCLUSIVE_BUFFERS: u32 = 1_000;
pub const MAX_FLOATING_BUFFERS: u32 = 10_000;
/// `checkpointing.trigger_at` entries, and `faults` entries.
pub const MAX_LIST_LEN: usize = 100_000;
/// Splits of one batch source: the enumerator keeps each one's assignment.
pub const MAX_SPLITS: u32 = 1_000_000;
/// Records all batch sources read in all (splits × records per split): a split is read in one
/// event that counts its records by key, so this caps the work of the whole run's reading.
pub const MAX_BATCH_RECORDS: u64 = 100_000_000;

pub(super) fn check_cluster_size(task_managers: u32, slots: Option<u32>) -> Result<(), Problem> {
    if task_managers > MAX_TASK_MANAGERS {
        return Err(problem(
            "cluster.task_managers",
            format!(
                "at most {MAX_TASK_MANAGERS}: each TaskManager is simulated as an actor, not \
                 {task_managers}"
            ),
        ));
    }
    match slots {
        Some(s) if s > MAX_SLOTS_PER_TASK_MANAGER => Err(problem(
            "cluster.slots_per_task_manager",
            format!("at most {MAX_SLOTS_PER_TASK_MANAGER}, not {s}"),
        )),
        _ => Ok(()),
    }
}

/// The job's subtasks and channels, as the execution graph will build them.
pub fn world_size(job: &Job) -> (u64, u64) {
    let subtasks = job.vertices.iter().map(|v| u64::from(v.parallelism)).sum();
    let channels = job
        .edges
        .iter()
        .map(|e| {
            let up = u64::from(job.vertices[e.from].parallelism);
            let down = u64::from(job.vertices[e.to].parallelism);
            match e.pattern {
                // Pointwise: every subtask of the wider side has exactly one partner.
                Pattern::Forward => up.max(down),
                Pattern::AllToAll => up * down,
            }
        })
        .sum();
    (subtasks, channels)
}

pub(super) fn check_world_size(job: &Job) -> Result<(), Problem> {
    let (subtasks, channels) = world_size(job);
    if subtasks > MAX_SUBTASKS {
        return Err(problem(
            "job.vertices",
            format!(
                "the job has {subtasks} subtasks in all (each vertex's parallelism, an \"auto\" \
                 one at its upper bound); at most {MAX_SUBTASKS} can be simulated"
            ),
        ));
    }
    if channels > MAX_CHANNELS {
        return Err(problem(
            "job.edges",
            format!(
                "the job has {channels} channels in all (an all_to_all edge has one per pair of \
                 subtasks); at most {MAX_CHANNELS} fit in memory: lower a parallelism or use \
                 forward edges"
            ),
        ));
    }
    Ok(())
}

pub(super) fn check_channel_capacity(capacity: u32) -> Result<(), Problem> {
    if capacity > MAX_CHANNEL_CAPACITY {
        return Err(problem(
            "network.channel_capacity",
            format!("at most {MAX_CHANNEL_CAPACITY} buffers per channel, not {capacity}"),
        ));
    }
    Ok(())
}

pub(super) fn check_list_len(path: &str, len: usize) -> Result<(), Problem> {
    if len > MAX_LIST_LEN {
        return Err(problem(
            path,
            format!("lists {len} entries; at most {MAX_LIST_LEN}"),
        ));
    }
    Ok(())
}

/// The reading a batch job's sources do: splits per source, and records in all.
pub(super) fn check_batch_reading(batch: &Batch, job: &Job) -> Result<(), Problem> {
    let mut total: u64 = 0;
    for (v, coordinator) in batch.coordinators.iter().enumerate() {
        let Some(c) = coordinator else { continue };
        let id = &job.vertices[v].id;
        if c.splits > MAX_SPLITS {
            return Err(problem(
                format!("batch.coordinators.{id}.splits"),
                format!("at most {MAX_SPLITS} splits per source, not {}", c.splits),
            ));
        }
        let per_split = match job.vertices[v].chain.source() {
            Some((records, _)) => match records.first() {
                Some(Records::Bounded(n)) => *n,
                Some(Records::Unbounded) | None => 0,
            },
            None => 0,
        };
        total = total.saturating_add(per_split.saturating_mul(u64::from(c.splits)));
        if total > MAX_BATCH_RECORDS {
            return Err(problem(
                format!("job.vertices[{v}].records"),
                format!(
                    "the batch sources read {total} records or more in all (splits x records \
                     per split); at most {MAX_BATCH_RECORDS}: use fewer splits or fewer records \
                     per split"
                ),
            ));
        }
    }
    Ok(())
}
