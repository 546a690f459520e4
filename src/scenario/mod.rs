//! The scenario file: a JSON document that describes one situation to simulate and what its run
//! is expected to show. [`load`] and [`parse`] turn it into a [`Scenario`] with every default
//! filled in, or into one [`ScenarioError`] that names the JSON path of the first problem and
//! what was expected there. Nothing here knows how a run executes.
//!
//! Module map:
//! - `raw`: the serde schema, the defaults, and the parsing of single values (durations, ...).
//! - `validate`: the rules between values (ids, graph shape, slots) and `reject_unsupported`.
//! - `types`: the validated [`Scenario`] the model reads.
//! - `error`: [`ScenarioError`].
//!
//! # Format
//!
//! Unknown fields are errors everywhere, so a typo never silently falls back to a default.
//! Durations are strings with a unit, `ns`, `us` (or `µs`), `ms` or `s`, read exactly by
//! [`sim::Duration::parse`]: `"250us"`, `"1.5ms"`, `"2s"`. Where a field takes a *range*, it
//! also accepts `"min..max"` (with `min <= max`), a delay drawn uniformly from it; a single
//! duration there is a fixed delay.
//!
//! ```json
//! {
//!   "name": "keyed-sum",
//!   "description": "Two sources feed a keyed sum that feeds one sink.",
//!   "seed": 7,
//!   "mode": "streaming",
//!   "job": {
//!     "vertices": [
//!       {"id": "src",  "operator": "source", "parallelism": 2, "records": [100, 400], "record_interval": "1ms"},
//!       {"id": "sum",  "operator": "keyed_sum", "parallelism": 2, "keys": 16, "process_time": "20us..200us"},
//!       {"id": "sink", "operator": "sink", "parallelism": 1}
//!     ],
//!     "edges": [
//!       {"from": "src", "to": "sum", "pattern": "all_to_all"},
//!       {"from": "sum", "to": "sink", "pattern": "all_to_all", "partitioner": "round_robin"}
//!     ]
//!   },
//!   "cluster": {"task_managers": 2, "slots_per_task_manager": 1},
//!   "network": {"channel_latency": "50us..500us", "rpc_latency": "200us..2ms", "channel_capacity": 8},
//!   "budget": {"max_events": 5000000, "max_time": "60s"},
//!   "tie_break": "insertion",
//!   "expect": {"status": "FINISHED", "violations": [], "sink_records": 500, "sinks": {"sink": 500}}
//! }
//! ```
//!
//! Top level (only `name`, `mode` and `job` are required):
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `name` | non-empty; how traces and reports refer to the scenario | required |
//! | `description` | free text | `""` |
//! | `seed` | the master seed (unsigned 64-bit integer) of every random stream | `0` |
//! | `mode` | `"streaming"` or `"batch"` (batch is not implemented yet) | required |
//! | `job` | `{"vertices": [...], "edges": [...]}`; `edges` defaults to `[]` | required |
//! | `cluster`, `network`, `budget`, `jobmaster`, `expect` | objects, below | all defaults |
//! | `checkpointing` | object, below; absent (or `null`) disables checkpointing | absent |
//! | `faults` | list of faults to inject, below | `[]`: no fault |
//! | `heal_at` | one duration since the start of the run, or `null`: when the healed phase begins, below | `null`: once the last fault fired |
//! | `tie_break` | order of events at the same instant: `"insertion"`, `"shuffled"` (a seeded permutation) `{"choices": [..]}` (a choice vector, as `fuzz --strategy pct`/`exhaustive` write it) or `{"schedule": {"choices": [..], "delays": [[step, ns], ..]}}` (a choice vector and postponed RPC arrivals, as `pct` writes a run whose change points moved RPCs) | `"insertion"` |
//! | `coordinators` | streaming only (F1.13): `{"<source vertex>": {"splits": N}}`, sources that read N splits their enumerator assigns; such a source's `records` is one number, the records of each split (`splits.rs`) | `{}` |
//! | `bug` | `null`, or the name of one injected bug (`crate::bug::Bug::ALL`; `flinksim bugs` lists them with the rule each breaks) | `null`: no bug |
//!
//! `job.vertices[]` (at least one; their order is the vertex index):
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `id` | non-empty, unique; edges and `expect.sinks` use it | required |
//! | `operator` | `"source"`, `"map"`, `"keyed_sum"` or `"sink"` | required, unless `chain` is given |
//! | `chain` | instead of `operator`, the operators one task runs, head first (F1.12): each an operator name or `{"operator": …, "uid": …}` with that operator's fields; a source only first, a sink only last, at most one `keyed_sum`, not behind a source; 1 to 8; streaming only | absent |
//! | `parallelism` | number of subtasks, 1 to 100000 | required |
//! | `process_time` | duration or range: simulated cost of one record | `"10us"` |
//! | `records` | source only: records each subtask emits before its input ends: one number for every subtask, a list with exactly one number per subtask, or `"unbounded"` (also allowed as a list entry) | `100` |
//! | `record_interval` | source only: duration or range between two records of a subtask | `"100us"` |
//! | `keys` | keyed_sum only: number of distinct record keys, at least 1 | `16` |
//! | `delivery` | sink only: `"at_least_once"` or `"two_phase_commit"` (pre-commits per checkpoint and commits when it completes, so it needs a `checkpointing` block) | `"at_least_once"` |
//!
//! An operator-specific field on another operator is an error. A source has no input edge,
//! every other vertex has at least one, and a sink has no output edge.
//!
//! `job.edges[]` (the graph must be acyclic, at most one edge per pair of vertices):
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `from`, `to` | vertex ids | required |
//! | `pattern` | `"forward"` (pointwise: subtask i feeds subtask i when both ends have the same parallelism, else contiguous ranges as in Flink) or `"all_to_all"` | required |
//! | `exchange` | `"pipelined"` or `"blocking"` (blocking in streaming mode is not implemented yet) | `"pipelined"` in streaming mode, `"blocking"` in batch mode |
//! | `partitioner` | all_to_all only: `"key_hash"` or `"round_robin"` | `"key_hash"` |
//!
//! Every input edge of a keyed_sum must be all_to_all with `key_hash`, as Flink's `keyBy`.
//!
//! `cluster`:
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `task_managers` | at least 1 | `2` |
//! | `slots_per_task_manager` | at least 1; with Flink's default slot sharing the job needs as many slots in all as its largest parallelism | just enough: ceil(largest parallelism / task_managers) |
//!
//! `network`:
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `channel_latency` | duration or range: delay of a buffer on a data channel | `"50us..500us"` |
//! | `rpc_latency` | duration or range: delay of an RPC | `"200us..2ms"` |
//! | `channel_capacity` | records per channel before back-pressure, at least 1; not with `buffer_size` | `8` |
//! | `channels` | list of `{"from": "a[0]", "to": "b[1]", "latency": "3ms"}`: a channel an edge makes between those subtasks, with a latency of its own; each pair once; streaming jobs only | `[]` |
//! | `buffer_size` | integer, bytes: records travel in network buffers of this size, with credit per buffer (F1.14); streaming jobs only; absent: one record per element | absent |
//! | `record_bytes` | integer, bytes one serialised record takes, 1 to `buffer_size` (needs `buffer_size`) | `100` |
//! | `buffer_timeout` | duration: the output flusher sends partly filled buffers this often; `"0"`: after every record (needs `buffer_size`) | `"100ms"` |
//! | `exclusive_buffers_per_channel` | buffers each input channel owns, 1 to 1000 (needs `buffer_size`) | `2` |
//! | `floating_buffers_per_gate` | buffers an input gate lends its channels, 0 to 10000 (needs `buffer_size`) | `8` |
//!
//! `checkpointing` (P1 of `docs/rules.md`; every duration here is one duration, not a range):
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `interval` | duration above 0 between two periodic triggers of the CheckpointCoordinator; `null`: no periodic trigger, only `trigger_at` | `"20ms"` |
//! | `trigger_at` | list of durations since the start of the run, each one extra trigger; any order (kept sorted), no instant twice | `[]` |
//! | `timeout` | duration above 0: a checkpoint not completed this long after its trigger is aborted | `"1s"` |
//! | `max_concurrent` | checkpoints pending at once, 1 to 64 (pending checkpoints are tracked in a 64-wide window) | `1` |
//! | `min_pause` | duration: least time from the end of one checkpoint to the next trigger | `"0"` |
//! | `mode` | how barriers are handled: `"aligned"` or `"unaligned"` (exactly once, P1.4), or `"at_least_once"` (barriers counted, never aligned, F1.7) | `"aligned"` |
//! | `alignment_timeout` | duration, or `null`: an aligned checkpoint aligning longer switches to unaligned (P1.4, F1.3); must be `null` under `at_least_once` | `null` |
//! | `finish_protocol` | how checkpoints go on once subtasks finish (P1.2), one of the four below | `"flink"` |
//! | `async_duration` | duration or range: how long the asynchronous part of each snapshot takes; the task acknowledges when it ends, and a finishing task waits for it (F1.8); `"0"`: synchronous snapshots | `"0"` |
//! | `tolerable_failures` | integer, or `null`: checkpoint failures in a row (only those Flink counts: expired, and a failed asynchronous part) the coordinator tolerates; one more fails the job over, as a global failure through the restart strategy (F1.9); `null`: no limit | `null` |
//! | `cancel_markers` | `true`: a task that abandons a checkpoint (subsumed, aborted on EndOfPartition under `legacy`, told by the JobMaster before it snapshotted, or told by a marker) sends a cancellation marker downstream in band, and a consumer aborts on it, unblocks, declines and passes it on (F1.10); `false`: no marker | `false` |
//! | `flush_before_finish` | unaligned only: `true`: a finishing subtask waits until its output is fully sent and takes part in checkpoints meanwhile; `false`: it finishes at once and its result partition drains after it (P1.5) | `false` |
//!
//! An `interval` of `null` with an empty `trigger_at` is an error: no checkpoint would ever be
//! triggered. The finish protocols:
//! - `"option1"`: the design's Option 1: the finished set is the FINISHED status, and a trigger
//!   that missed a finished subtask is re-sent to its descendants through the JobMaster.
//! - `"option2"`: the design's Option 2: a subtask reports "finishing" to the coordinator before
//!   EndOfPartition, and takes part in the pending checkpoints first.
//! - `"flink"`: what Flink 1.15+ ships (`docs/rules.md` F1): a missed trigger aborts the
//!   checkpoint, and tasks finish through EndOfData and a final checkpoint.
//! - `"legacy"`: before FLIP-147: no checkpoint is triggered once any subtask finished.
//!
//! ```json
//! "checkpointing": {
//!   "interval": null, "trigger_at": ["5ms", "40ms"], "timeout": "500ms", "max_concurrent": 2,
//!   "min_pause": "1ms", "mode": "aligned", "alignment_timeout": null,
//!   "finish_protocol": "option1", "flush_before_finish": false
//! }
//! ```
//!
//! `budget` (reaching a cap ends the run and is reported):
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `max_events` | events the run may process, at least 1 | `10000000` |
//! | `max_time` | one duration (not a range), above 0: simulated time the run may last | `"3600s"` (one hour) |
//!
//! `faults[]` (P1.8; each fault fires at most once):
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `at` | one duration since the start of the run, at most `budget.max_time`: the fault fires at that instant | exactly one of `at` and `when` |
//! | `when` | an object with exactly one predicate, below: the fault fires the first time the predicate holds | exactly one of `at` and `when` |
//! | `fault` | the kind: `"fail_task"`, `"lose_task_manager"`, `"crash_jobmaster"`, `"delay_spike"`, `"rpc_loss"`, `"trigger_task"`, `"fail_snapshot"`, `"hold_channel"` or `"stop_with_savepoint"` (streaming), `"disconnect_task_manager"`, `"job_events_write_failure"` or `"job_events_read_failure"` (batch), below | required |
//! | the kind's fields | below; a field of another kind is an error | below |
//!
//! The kinds and their fields (every duration one duration, not a range):
//! - `"fail_task"`: `task` (required), a subtask `vertex[i]`, fails as from an exception in user
//!   code, and the JobMaster fails over.
//! - `"lose_task_manager"`: `task_manager` (required), 0-based and below
//!   `cluster.task_managers`, is lost with every subtask it runs; the JobMaster notices after
//!   `jobmaster.heartbeat_timeout`, and a fresh TaskManager with the same number registers
//!   `restart_after` (duration, may be 0) after the loss; default `"10ms"`.
//! - `"crash_jobmaster"`: the JobMaster crashes; a new one is elected `restart_after` (duration,
//!   the HA election delay, may be 0) after the crash; default `"40ms"`.
//! - `"delay_spike"`: for `duration` (required, above 0) every message on the `target` links
//!   (`"channels"`, `"rpcs"` or `"all"`; default `"all"`) takes `extra` (required, above 0) longer.
//! - `"rpc_loss"`: for `duration` (required, above 0) each RPC is lost with `probability`
//!   (required, a number from 0 to 1) and sent again `retry_after` (above 0; default `"5ms"`) later.
//! - `"trigger_task"`: `task` (required) gets the trigger RPC of `checkpoint` (default: the
//!   newest pending one) straight from the JobMaster, as Flink's task-level tests trigger a task.
//! - `"fail_snapshot"`: `task`'s snapshot of `checkpoint` (both required) fails in `phase`
//!   (`"sync"`, the default: the task fails; `"async"`: it declines); without a trigger it is
//!   armed from the start (F1.9).
//! - `"hold_channel"`: the channel from `from` to `to` (required; an edge must join them)
//!   delivers nothing until `release_at` (one duration after the hold's `at`) or the first time
//!   the predicate `release_when` holds (exactly one of the two; at once if it held before the
//!   hold began), and `heal_at` at the latest; then what waited arrives, in order.
//! - `"stop_with_savepoint"`: the JobMaster is asked to stop the job with a synchronous
//!   savepoint (F1.11), draining it if `drain` is `true` (the sources' input ends, operators
//!   finish) or not (`false`, the default, as `flink stop` without `--drain`: operators do not
//!   finish, so the job can resume from the savepoint). Needs a `checkpointing` block with
//!   `finish_protocol: "flink"` and `mode: "aligned"` without `alignment_timeout` (a Flink
//!   savepoint is always aligned). Refused at run time (`savepoint_refused`) while the job is
//!   not RUNNING or another stop is under way.
//!
//! The predicates of `when` (subtasks written as in `expect.checkpoints`; an unknown key is an
//! error):
//! - `{"checkpoint_pending": N}`: checkpoint `N` (at least 1) was triggered and is pending; needs
//!   a `checkpointing` block.
//! - `{"checkpoint_completed": N}`: checkpoint `N` (at least 1) completed; needs a
//!   `checkpointing` block.
//! - `{"finished": "vertex[i]"}`: the subtask reached the FINISHED status.
//! - `{"end_of_input": "vertex[i]"}`: the subtask reached the end of its input.
//! - `{"waiting_for_final_checkpoint": "vertex[i]"}`: the subtask reached the end of its input
//!   and waits for a checkpoint that covers its final state (P1.7); needs a `checkpointing` block.
//! - `{"all_sources_finished": true}`: every source subtask is FINISHED (`false` is an error).
//! - `{"event_count": N}`: the run recorded `N` (at least 1) trace events.
//! - `{"job_status": "FINISHED"}`: the JobMaster moved the job to this status.
//!
//! `heal_at` ends fault injection so liveness can be checked: from that instant on no fault
//! fires, which is the healed phase; a spike or loss still in effect ends then, and a `when`
//! fault that has not fired by then never does. It may not come before the `at` of any fault
//! (that fault would break the healed phase) nor after `budget.max_time` (the healed phase would
//! never begin). Without it, the healed phase begins once the last fault fired.
//!
//! ```json
//! "faults": [
//!   {"at": "150ms", "fault": "fail_task", "task": "sum[1]"},
//!   {"when": {"checkpoint_pending": 3}, "fault": "crash_jobmaster", "restart_after": "40ms"},
//!   {"when": {"finished": "src[0]"}, "fault": "delay_spike", "extra": "2ms", "duration": "50ms", "target": "channels"}
//! ],
//! "heal_at": "200ms"
//! ```
//!
//! `jobmaster` (how the JobMaster reacts to failures, P1.8):
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `failover` | what a new JobMaster does after a JobMaster crash: `"restart"` (cancels the tasks and restarts the job from the latest completed checkpoint) or `"reconcile"` (keeps them running and rebuilds the job from the TaskManagers' reports, P3; streaming only) | `"restart"` |
//! | `restart_strategy` | Flink's fixed-delay restart strategy: `{"delay": D, "max_attempts": N}`; `delay` is one duration from a failure to the restart (may be 0), `max_attempts` the restarts allowed in all (0: the first failure fails the job); each field defaults on its own | `{"delay": "10ms", "max_attempts": 5}` |
//! | `failover_scope` | which tasks a failover restarts: `"region"` (the pipelined region of the failed tasks, Flink's default) or `"full"` (every task of the job) | `"region"` |
//! | `heartbeat_timeout` | one duration above 0: how long until a lost TaskManager or JobMaster is noticed | `"50ms"` |
//! | `reconcile_timeout` | one duration above 0: under `"reconcile"`, how long a new JobMaster waits for the TaskManagers' reports (P3.4) | `"50ms"` |
//! | `terminal_state_retention` | one duration (0 allowed): under `"reconcile"`, how long a TaskManager remembers a task that ended, to report it (P3.1) | `"200ms"` |
//!
//! `expect` (only what is listed is checked, except `violations`):
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `status` | the final job status, a Flink name such as `"FINISHED"`, `"RUNNING"`, `"FAILED"` | not checked |
//! | `violations` | ids of the invariants expected to be violated, such as `"exactly-once-output"` | `[]`: no violation |
//! | `sink_records` | records delivered by all sink subtasks together | not checked |
//! | `sinks` | object from sink vertex id to the records that sink delivered | `{}` |
//! | `trace_hash` | `"0x"` and 16 hex digits, as a summary prints it | not checked |
//! | `checkpoints` | list of expected checkpoints, below; needs a `checkpointing` block. Only the listed ids are checked, each only in the fields it gives | `[]` |
//! | `completed_checkpoints` | count of checkpoints completed during the whole run; needs a `checkpointing` block | not checked |
//! | `retrigger_rpcs` | count of re-trigger RPCs `option1` sent during the whole run; needs a `checkpointing` block | not checked |
//! | `committed_records` | records committed by all two-phase-commit sinks together; needs such a sink | not checked |
//! | `failovers` | count of failovers (restarts of a region or of the whole job) during the whole run; in a batch job the JobMaster's failovers (not its JobManager recoveries) | not checked |
//! | `reconciliations` | the outcome of each reconciliation in order (`"RUNNING"`, `"FINISHED"`, `"FAILING"`); needs `jobmaster.failover: "reconcile"` | not checked |
//! | `rpcs_kept`, `rpcs_resent` | RPCs TaskManagers kept while no JobMaster was reachable, and kept RPCs they sent again after registering (P3.3), during the whole run; need `jobmaster.failover: "reconcile"` | not checked |
//! | `restores` | streaming: one object per failover that restored, in order, each checked only in the fields it gives: `checkpoint` (restored from; 0 for none), `scope` (`"region"` or `"full"`), `restarted` and `finished` (subtask names, compared as sets; `finished`: redeployed finished on restore, F1.6), `records_replayed` (records the restarted sources emit again) | not checked |
//!
//! `expect.checkpoints[]` (subtasks are written `vertex[i]`, `i` 0-based and below the
//! vertex's parallelism; a list is compared as a set, so its order does not matter and no entry
//! may appear twice):
//!
//! | field | meaning | default |
//! | --- | --- | --- |
//! | `id` | checkpoint id, at least 1; each id once in the list | required |
//! | `outcome` | `"completed"`, `"aborted"`, or `"never_triggered"` (no checkpoint got this id) | not checked |
//! | `abort_reason` | non-empty text compared exactly with the simulator's reason id; not with outcome `completed` or `never_triggered` | not checked |
//! | `triggered` | subtasks the trigger plan sent the trigger RPC to (its `to_trigger`, P1.1), like `["src[0]", "src[1]"]` | not checked |
//! | `finished` | subtasks the trigger plan recorded as finished | not checked |
//! | `fully_finished` | vertex ids the trigger plan recorded as fully finished | not checked |
//! | `duration_at_least`, `duration_at_most` | durations: bounds on the time from trigger to completion (the checkpoint must complete) | not checked |
//! | `channel_state_at_least`, `channel_state_at_most` | records persisted as channel state, input and output side together (P1.4) | not checked |
//!
//! A `never_triggered` checkpoint has no trigger plan, so it takes none of the last three.
//!
//! # Errors
//!
//! Loading stops at the first problem. A file that is not JSON is reported at `line:column`.
//! Then the schema is read in the order of the text: wrong types, unknown fields, missing
//! required fields and unreadable values (durations, status names, invariant ids) are reported
//! at their JSON path, like `job.vertices[2].parallelism`. Then the rules between values are
//! checked in the order of the tables above; and last, a fully valid scenario that uses a feature
//! not implemented yet is refused by `validate::reject_unsupported`, which says so.

mod batch;
pub mod bounds;
mod error;
mod raw;
mod restore_from;
mod restores;
mod splits;
mod types;
mod validate;

pub use batch::{
    AdaptiveParallelism, Batch, Coordinator, ExpectedRecovery, JobEvents, ShuffleKind, Speculative,
};
pub use error::ScenarioError;
pub use restore_from::{RestoreFrom, RestoredOperator, RestoredRecord, RestoredState};
pub use types::{
    Budget, Chain, ChainedOperator, ChannelLatency, CheckpointMode, CheckpointOutcome,
    Checkpointing, Cluster, Delivery, DurationRange, Edge, Exchange, Expect, ExpectedCheckpoint,
    ExpectedRestore, Failover, FailoverScope, Fault, FaultKind, FaultTrigger, FinishProtocol, Job,
    JobMasterConfig, Mode, Network, NetworkBuffers, Operator, Partitioner, Pattern, Predicate,
    Records, Release, RestartStrategy, RestoreScope, Scenario, SnapshotPhase, SpikeTarget,
    SubtaskRef, TieBreak, Vertex,
};

use std::path::Path;

/// Reads and parses the scenario file at `path`; a file that cannot be read is a
/// [`ScenarioError`] too, so the CLI reports every bad input the same way.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ScenarioError::new(&file, "$", format!("cannot read the file: {e}")))?;
    parse(&text, &file)
}

/// Parses and validates a scenario held in memory; `file` is only used in messages.
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let scenario = parse_valid(text, file)?;
    validate::reject_unsupported(&scenario).map_err(|p| p.in_file(file))?;
    Ok(scenario)
}

/// Everything [`parse`] does except refusing features that are not implemented yet, so the
/// tests can see how such a scenario reads once they are.
fn parse_valid(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let document: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        ScenarioError::new(
            file,
            format!("{}:{}", e.line(), e.column()),
            format!("invalid JSON: {}", without_position(&e)),
        )
    })?;
    // Read the schema from the text rather than from `document`: a key written twice is an
    // error in the text, but already collapsed into one in a `Value`.
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let raw::Object(mut raw): raw::Object<raw::RawScenario> =
        serde_path_to_error::deserialize(&mut deserializer).map_err(|e| schema_error(file, e))?;
    let mut document = document;
    if let Some(restore_from::RawRestoreSource::File(path)) = &raw.restore_from {
        let (checkpoint, value) = restore_from::load_file(path, file)?;
        raw.restore_from = Some(restore_from::RawRestoreSource::Inline(checkpoint));
        document["restore_from"] = value;
    }
    validate::validate(raw, document).map_err(|p| p.in_file(file))
}

/// Turns a serde error into a [`ScenarioError`] at the JSON path serde was reading.
fn schema_error(file: &str, e: serde_path_to_error::Error<serde_json::Error>) -> ScenarioError {
    let path = match e.path().to_string() {
        root if root == "." => "$".to_owned(),
        path => path,
    };
    ScenarioError::new(file, path, without_position(e.inner()))
}

/// serde_json's message without its trailing " at line L column C": the error already names
/// where it is, and the path is what a user can search for in the file.
fn without_position(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match message.strip_suffix(&suffix) {
        Some(bare) => bare.to_owned(),
        None => message,
    }
}

#[cfg(test)]
mod tests;
