//! The `batch` block of a `mode: "batch"` scenario (P2, FLIP-383): its serde schema, its
//! defaults, its checks, and the validated [`Batch`] the batch model reads.
//!
//! Defaults follow Flink (`docs/rules.md` F2.2) except where Flink's value is sized
//! for gigabytes and hours: `adaptive_parallelism.bytes_per_task` is scaled to the simulator's
//! small record counts.

use super::raw::{nullable_duration, object, single_duration, Object};
use super::types::Job;
use super::validate::{problem, Problem};
use crate::trace::RerunReason;
use serde::Deserialize;
use sim::Duration;
use std::collections::BTreeMap;

pub(super) const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_secs(1);
pub(super) const DEFAULT_BUFFER_SIZE: u64 = 1 << 20;
pub(super) const DEFAULT_SNAPSHOT_MIN_PAUSE: Duration = Duration::from_secs(180);
pub(super) const DEFAULT_PREVIOUS_WORKER_TIMEOUT: Duration = Duration::from_secs(30);
/// P2.7: how long writing a finished job's result to HA storage takes (a file on the HA file
/// system in Flink: milliseconds).
pub(super) const DEFAULT_JOB_RESULT_DELAY: Duration = Duration::from_millis(1);
pub(super) const DEFAULT_RECORD_BYTES: u64 = 100;
pub(super) const DEFAULT_ADAPTIVE_MIN: u32 = 1;
pub(super) const DEFAULT_ADAPTIVE_MAX: u32 = 8;
pub(super) const DEFAULT_BYTES_PER_TASK: u64 = 16 * 1024;
/// Splits per source subtask when a coordinator does not say.
pub(super) const DEFAULT_SPLITS_PER_SUBTASK: u32 = 4;

/// Where result partitions live (P2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShuffleKind {
    /// On the producer's TaskManager: lost with it (Flink's Netty shuffle).
    Internal,
    /// On a remote shuffle service that outlives TaskManagers.
    Remote,
}

/// The validated `batch` block.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    pub shuffle: ShuffleKind,
    /// P2.6: a shuffle master that cannot snapshot disables job recovery.
    pub shuffle_supports_snapshot: bool,
    /// F2.1 `execution.batch.job-recovery.enabled`; off, a JobManager crash restarts the job
    /// from scratch (the baseline).
    pub job_recovery: bool,
    /// F2.1: TaskManagers keep a job's partitions when they lose its JobManager.
    pub keep_partitions: bool,
    pub adaptive: AdaptiveParallelism,
    pub job_events: JobEvents,
    /// P2.4: how long a new JobManager waits for the previous TaskManagers' partition reports;
    /// 0: not at all, so every reserved partition not already known (a remote one in the
    /// shuffle master's snapshot) counts as missing.
    pub previous_worker_timeout: Duration,
    /// F2.5, Flink's `taskmanager.registration.timeout`: a TaskManager that lost its JobManager
    /// and keeps the job's partitions releases them once this passed without a new JobManager
    /// to register with. `None`: not modelled (Flink's default, 5 minutes, is longer than any
    /// run here, and an armed timer would only keep an ended run going).
    pub registration_timeout: Option<Duration>,
    /// P2.7: the time from FINISHED until the job's result is durable in HA storage (Flink's
    /// JobResultStore); a JobManager crash in between leaves a job HA storage still calls
    /// running, and the next JobManager recovers it.
    pub job_result_delay: Duration,
    /// P2.8 (Flink's `execution.batch.speculative.*`): speculative execution of slow tasks;
    /// `None`: off.
    pub speculative: Option<Speculative>,
    /// P2.8: per TaskManager, how many times slower its tasks work (1: normal; a slow node).
    pub slowdown: Vec<f64>,
    /// The size of one record, for partition bytes.
    pub record_bytes: u64,
    /// The operator coordinator of each vertex that has one, indexed like [`Job::vertices`]
    /// (every source has its split enumerator; another vertex has one only if the scenario
    /// gives it).
    pub coordinators: Vec<Option<Coordinator>>,
}

impl Batch {
    /// P2.6 and F2.1: is job recovery possible at all?
    pub fn recovery_enabled(&self) -> bool {
        self.job_recovery && self.shuffle_supports_snapshot
    }
}

/// P2.8: when the JobMaster starts a speculative attempt of a slow task, after Flink's
/// `ExecutionTimeBasedSlowTaskDetector` and `DefaultSpeculativeExecutionHandler`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Speculative {
    /// How often the slow-task detector looks.
    pub check_interval: Duration,
    /// A task is slow only after running at least this long.
    pub baseline_lower_bound: Duration,
    /// A vertex is checked once this share of its subtasks finished; the baseline is the
    /// median time of the first `round(parallelism × ratio)` of them.
    pub baseline_ratio: f64,
    /// A task is slow once it ran this many times the baseline.
    pub baseline_multiplier: f64,
    /// A slow task's TaskManager gets no new speculative attempt for this long.
    pub block_slow_node_duration: Duration,
}

/// Bounds of adaptive parallelism (P2.1) for vertices with `"parallelism": "auto"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdaptiveParallelism {
    pub min: u32,
    pub max: u32,
    /// The input bytes one subtask should get.
    pub bytes_per_task: u64,
}

/// The job event store's write buffer (P2.2, F2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobEvents {
    pub flush_interval: Duration,
    /// Bytes; a write that fills the buffer flushes it.
    pub buffer_size: u64,
    pub snapshot_min_pause: Duration,
    /// Whether the resets a recovery decides are logged (P2.2, the default) or, as Flink's
    /// `DefaultBatchJobRecoveryHandler` does, made while the job is still RECONCILING and so not
    /// logged (F2.3: nothing is logged while RECONCILING): a second crash then replays the
    /// finishes the first recovery undid.
    pub log_recovery_resets: bool,
}

/// A vertex's operator coordinator (P2.5): a source's is its split enumerator; another
/// vertex's assigns no splits (`splits` 0) and matters for recovery alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coordinator {
    pub splits: u32,
    pub supports_batch_snapshot: bool,
}

/// What one JobManager recovery must show (`expect.recoveries`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExpectedRecovery {
    /// Subtasks recovered as finished.
    pub recovered: Option<u64>,
    /// Subtasks that had finished before the crash and run again, by name, sorted.
    pub rerun: Option<Vec<String>>,
    /// The recovery was a restart from scratch (P2.6, or no job events).
    pub full_restart: Option<bool>,
    /// Partition reports that came after `previous_worker_timeout` and were released.
    pub late_reports: Option<u64>,
    /// How many of the re-run subtasks run again for each reason (the summary's
    /// `rerun_reasons`; a reason not named counts none).
    pub rerun_reasons: Option<BTreeMap<RerunReason, u64>>,
    /// Tasks that failed with their TaskManager's leader (F2.5) after this recovery's crash,
    /// before the next one.
    pub interrupted: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBatch {
    #[serde(default, deserialize_with = "object")]
    shuffle: RawShuffle,
    #[serde(default = "yes")]
    job_recovery: bool,
    #[serde(default = "yes")]
    keep_partitions: bool,
    #[serde(default, deserialize_with = "object")]
    adaptive_parallelism: RawAdaptive,
    #[serde(default, deserialize_with = "object")]
    job_events: RawJobEvents,
    #[serde(
        default = "default_previous_worker_timeout",
        deserialize_with = "single_duration"
    )]
    previous_worker_timeout: Duration,
    #[serde(default, deserialize_with = "nullable_duration")]
    registration_timeout: Option<Duration>,
    #[serde(
        default = "default_job_result_delay",
        deserialize_with = "single_duration"
    )]
    job_result_delay: Duration,
    #[serde(default)]
    speculative: Option<Object<RawSpeculative>>,
    #[serde(default)]
    slow_task_managers: BTreeMap<String, f64>,
    #[serde(default = "default_record_bytes")]
    record_bytes: u64,
    #[serde(default)]
    coordinators: BTreeMap<String, Object<RawCoordinator>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpeculative {
    #[serde(default = "default_max_concurrent")]
    max_concurrent_executions: u32,
    #[serde(
        default = "default_check_interval",
        deserialize_with = "single_duration"
    )]
    check_interval: Duration,
    #[serde(
        default = "default_check_interval",
        deserialize_with = "single_duration"
    )]
    baseline_lower_bound: Duration,
    #[serde(default = "default_baseline_ratio")]
    baseline_ratio: f64,
    #[serde(default = "default_baseline_multiplier")]
    baseline_multiplier: f64,
    #[serde(
        default = "default_block_duration",
        deserialize_with = "single_duration"
    )]
    block_slow_node_duration: Duration,
}

fn default_max_concurrent() -> u32 {
    2
}
/// Flink checks every second and needs a minute of running; scaled down, as
/// `bytes_per_task` is, to runs that last milliseconds.
fn default_check_interval() -> Duration {
    Duration::from_millis(1)
}
fn default_baseline_ratio() -> f64 {
    0.75
}
fn default_baseline_multiplier() -> f64 {
    1.5
}
fn default_block_duration() -> Duration {
    Duration::from_secs(60)
}

impl Default for RawBatch {
    fn default() -> Self {
        RawBatch {
            shuffle: RawShuffle::default(),
            job_recovery: true,
            keep_partitions: true,
            adaptive_parallelism: RawAdaptive::default(),
            job_events: RawJobEvents::default(),
            previous_worker_timeout: DEFAULT_PREVIOUS_WORKER_TIMEOUT,
            registration_timeout: None,
            job_result_delay: DEFAULT_JOB_RESULT_DELAY,
            speculative: None,
            slow_task_managers: BTreeMap::new(),
            record_bytes: DEFAULT_RECORD_BYTES,
            coordinators: BTreeMap::new(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShuffle {
    #[serde(default = "default_shuffle_kind")]
    kind: ShuffleKind,
    #[serde(default = "yes")]
    supports_snapshot: bool,
}

impl Default for RawShuffle {
    fn default() -> Self {
        RawShuffle {
            kind: ShuffleKind::Internal,
            supports_snapshot: true,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAdaptive {
    #[serde(default = "default_adaptive_min")]
    min: u32,
    #[serde(default = "default_adaptive_max")]
    max: u32,
    #[serde(default = "default_bytes_per_task")]
    bytes_per_task: u64,
}

impl Default for RawAdaptive {
    fn default() -> Self {
        RawAdaptive {
            min: DEFAULT_ADAPTIVE_MIN,
            max: DEFAULT_ADAPTIVE_MAX,
            bytes_per_task: DEFAULT_BYTES_PER_TASK,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJobEvents {
    #[serde(
        default = "default_flush_interval",
        deserialize_with = "single_duration"
    )]
    flush_interval: Duration,
    #[serde(default = "default_buffer_size")]
    buffer_size: u64,
    #[serde(
        default = "default_snapshot_min_pause",
        deserialize_with = "single_duration"
    )]
    snapshot_min_pause: Duration,
    #[serde(default = "default_log_recovery_resets")]
    log_recovery_resets: bool,
}

fn default_log_recovery_resets() -> bool {
    true
}

impl Default for RawJobEvents {
    fn default() -> Self {
        RawJobEvents {
            flush_interval: DEFAULT_FLUSH_INTERVAL,
            buffer_size: DEFAULT_BUFFER_SIZE,
            snapshot_min_pause: DEFAULT_SNAPSHOT_MIN_PAUSE,
            log_recovery_resets: true,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCoordinator {
    splits: Option<u32>,
    #[serde(default = "yes")]
    supports_batch_snapshot: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExpectedRecovery {
    recovered: Option<u64>,
    rerun: Option<Vec<String>>,
    full_restart: Option<bool>,
    late_reports: Option<u64>,
    rerun_reasons: Option<BTreeMap<String, u64>>,
    interrupted: Option<u64>,
}

fn yes() -> bool {
    true
}
fn default_shuffle_kind() -> ShuffleKind {
    ShuffleKind::Internal
}
fn default_job_result_delay() -> Duration {
    DEFAULT_JOB_RESULT_DELAY
}
fn default_previous_worker_timeout() -> Duration {
    DEFAULT_PREVIOUS_WORKER_TIMEOUT
}
fn default_record_bytes() -> u64 {
    DEFAULT_RECORD_BYTES
}
fn default_adaptive_min() -> u32 {
    DEFAULT_ADAPTIVE_MIN
}
fn default_adaptive_max() -> u32 {
    DEFAULT_ADAPTIVE_MAX
}
fn default_bytes_per_task() -> u64 {
    DEFAULT_BYTES_PER_TASK
}
fn default_flush_interval() -> Duration {
    DEFAULT_FLUSH_INTERVAL
}
fn default_buffer_size() -> u64 {
    DEFAULT_BUFFER_SIZE
}
fn default_snapshot_min_pause() -> Duration {
    DEFAULT_SNAPSHOT_MIN_PAUSE
}

/// The adaptive bounds alone: validation needs them before the job (an `"auto"` vertex has
/// `max` subtasks in the execution graph).
pub(super) fn adaptive_bounds(raw: Option<&RawBatch>) -> Result<AdaptiveParallelism, Problem> {
    let default = RawAdaptive::default();
    let a = raw.map_or(&default, |b| &b.adaptive_parallelism);
    let at = |f: &str| format!("batch.adaptive_parallelism.{f}");
    if a.min == 0 {
        return Err(problem(
            at("min"),
            "must be at least 1: a vertex runs at least one subtask",
        ));
    }
    if a.max < a.min {
        return Err(problem(
            at("max"),
            format!("must be at least `min` ({}), not {}", a.min, a.max),
        ));
    }
    if a.max > super::validate::MAX_PARALLELISM {
        return Err(problem(
            at("max"),
            format!("must be at most {}", super::validate::MAX_PARALLELISM),
        ));
    }
    if a.bytes_per_task == 0 {
        return Err(problem(
            at("bytes_per_task"),
            "must be above 0: the parallelism is the input bytes divided by it",
        ));
    }
    Ok(AdaptiveParallelism {
        min: a.min,
        max: a.max,
        bytes_per_task: a.bytes_per_task,
    })
}

/// Checks the `batch` block against the validated job.
pub(super) fn check_batch(raw: RawBatch, job: &Job) -> Result<Batch, Problem> {
    let adaptive = adaptive_bounds(Some(&raw))?;
    let events = &raw.job_events;
    if events.flush_interval == Duration::ZERO {
        return Err(problem(
            "batch.job_events.flush_interval",
            "must be longer than 0: the write buffer is flushed this often",
        ));
    }
    if events.buffer_size == 0 {
        return Err(problem(
            "batch.job_events.buffer_size",
            "must be at least 1 byte: a write that fills the buffer flushes it",
        ));
    }
    if raw.registration_timeout == Some(Duration::ZERO) {
        return Err(problem(
            "batch.registration_timeout",
            "must be longer than 0 (or absent): a TaskManager waits this long for a new \
             JobManager before it releases the job's partitions",
        ));
    }
    if raw.record_bytes == 0 {
        return Err(problem("batch.record_bytes", "must be at least 1"));
    }
    let speculative = raw
        .speculative
        .as_ref()
        .map(|block| check_speculative(&block.0))
        .transpose()?;
    let mut slowdown = Vec::new();
    for (key, &factor) in &raw.slow_task_managers {
        let at = format!("batch.slow_task_managers.{key}");
        let tm: usize = key.parse().map_err(|_| {
            problem(
                &at,
                "the key must be a TaskManager number (\"0\", \"1\", …)",
            )
        })?;
        if tm >= super::bounds::MAX_TASK_MANAGERS as usize {
            return Err(problem(
                &at,
                "is no TaskManager: the number is out of range",
            ));
        }
        if !(1.0..=1000.0).contains(&factor) {
            return Err(problem(
                &at,
                format!("must be from 1 (normal speed) to 1000 times slower, not {factor}"),
            ));
        }
        if slowdown.len() <= tm {
            slowdown.resize(tm + 1, 1.0);
        }
        slowdown[tm] = factor;
    }
    let mut coordinators: Vec<Option<Coordinator>> = job
        .vertices
        .iter()
        .map(|v| {
            v.chain.is_source().then(|| Coordinator {
                splits: DEFAULT_SPLITS_PER_SUBTASK * v.parallelism,
                supports_batch_snapshot: true,
            })
        })
        .collect();
    for (id, c) in raw.coordinators {
        let at = format!("batch.coordinators.{id}");
        let Some(v) = job.vertices.iter().position(|v| v.id == id) else {
            let ids: Vec<String> = job.vertices.iter().map(|v| format!("{:?}", v.id)).collect();
            return Err(problem(
                at,
                format!(
                    "unknown vertex {id:?}; the job's vertices are {}",
                    ids.join(", ")
                ),
            ));
        };
        // P2.5: any vertex may have an operator coordinator; a source's is its split
        // enumerator, another vertex's holds state of its own and assigns no splits.
        let source = job.vertices[v].chain.is_source();
        let coordinator = coordinators[v].get_or_insert(Coordinator {
            splits: 0,
            supports_batch_snapshot: true,
        });
        if let (Some(_), false) = (c.0.splits, source) {
            return Err(problem(
                format!("{at}.splits"),
                format!(
                    "{id:?} is not a source: only a source's coordinator assigns splits; \
                     another vertex's coordinator takes only `supports_batch_snapshot`"
                ),
            ));
        }
        if let Some(splits) = c.0.splits {
            if splits == 0 {
                return Err(problem(
                    format!("{at}.splits"),
                    "must be at least 1: a source reads its input as splits",
                ));
            }
            coordinator.splits = splits;
        }
        coordinator.supports_batch_snapshot = c.0.supports_batch_snapshot;
    }
    Ok(Batch {
        shuffle: raw.shuffle.kind,
        shuffle_supports_snapshot: raw.shuffle.supports_snapshot,
        job_recovery: raw.job_recovery,
        keep_partitions: raw.keep_partitions,
        adaptive,
        job_events: JobEvents {
            flush_interval: events.flush_interval,
            buffer_size: events.buffer_size,
            snapshot_min_pause: events.snapshot_min_pause,
            log_recovery_resets: events.log_recovery_resets,
        },
        previous_worker_timeout: raw.previous_worker_timeout,
        registration_timeout: raw.registration_timeout,
        job_result_delay: raw.job_result_delay,
        speculative,
        slowdown,
        record_bytes: raw.record_bytes,
        coordinators,
    })
}

/// P2.8's settings, in Flink's bounds.
fn check_speculative(raw: &RawSpeculative) -> Result<Speculative, Problem> {
    let at = |f: &str| format!("batch.speculative.{f}");
    if raw.max_concurrent_executions != 2 {
        return Err(problem(
            at("max_concurrent_executions"),
            format!(
                "must be 2 (Flink's default: the original attempt and one speculative one); \
                 more concurrent attempts are not modelled, not {}",
                raw.max_concurrent_executions
            ),
        ));
    }
    if raw.check_interval == Duration::ZERO {
        return Err(problem(
            at("check_interval"),
            "must be longer than 0: the slow-task detector looks this often",
        ));
    }
    if !(0.0..1.0).contains(&raw.baseline_ratio) {
        return Err(problem(
            at("baseline_ratio"),
            format!("must be in [0, 1), as in Flink, not {}", raw.baseline_ratio),
        ));
    }
    if !(raw.baseline_multiplier > 0.0 && raw.baseline_multiplier <= 1000.0) {
        return Err(problem(
            at("baseline_multiplier"),
            format!(
                "must be above 0 and at most 1000, not {}",
                raw.baseline_multiplier
            ),
        ));
    }
    Ok(Speculative {
        check_interval: raw.check_interval,
        baseline_lower_bound: raw.baseline_lower_bound,
        baseline_ratio: raw.baseline_ratio,
        baseline_multiplier: raw.baseline_multiplier,
        block_slow_node_duration: raw.block_slow_node_duration,
    })
}

/// Checks `expect.recoveries` (subtask names must exist).
pub(super) fn check_expected_recoveries(
    raw: Vec<RawExpectedRecovery>,
    job: &Job,
) -> Result<Vec<ExpectedRecovery>, Problem> {
    raw.into_iter()
        .enumerate()
        .map(|(i, r)| {
            let rerun = r
                .rerun
                .map(|names| {
                    let mut checked = Vec::with_capacity(names.len());
                    for (k, name) in names.into_iter().enumerate() {
                        super::validate::check_subtask(&name, job).map_err(|message| {
                            problem(format!("expect.recoveries[{i}].rerun[{k}]"), message)
                        })?;
                        checked.push(name);
                    }
                    checked.sort();
                    Ok::<_, Problem>(checked)
                })
                .transpose()?;
            let rerun_reasons = r
                .rerun_reasons
                .map(|counts| {
                    counts
                        .into_iter()
                        .map(|(name, n)| {
                            let why = RerunReason::ALL
                                .into_iter()
                                .find(|why| why.name() == name)
                                .ok_or_else(|| {
                                    problem(
                                        format!("expect.recoveries[{i}].rerun_reasons.{name}"),
                                        format!(
                                            "unknown reason; expected one of {}",
                                            RerunReason::ALL.map(RerunReason::name).join(", ")
                                        ),
                                    )
                                })?;
                            Ok::<_, Problem>((why, n))
                        })
                        .collect::<Result<BTreeMap<_, _>, _>>()
                })
                .transpose()?;
            Ok(ExpectedRecovery {
                recovered: r.recovered,
                rerun,
                full_restart: r.full_restart,
                late_reports: r.late_reports,
                rerun_reasons,
                interrupted: r.interrupted,
            })
        })
        .collect()
}
