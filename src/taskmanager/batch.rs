//! A batch job's part of a TaskManager (`Blocking`: the attempts it hosts, the result
//! partitions it holds under the internal shuffle, its own link bookkeeping) and a batch
//! TaskManager's handlers: the tasks it runs, writing and reading blocking partitions, losing
//! and re-registering with a leader (P2.3, F2.5).
//!
//! The TaskManager is an actor: it owns its process, its leader, its connection, the attempts
//! it hosts and the partitions it holds, and its handlers act through a [`TmCtx`], which lends
//! it only what a TaskManager may touch (its link to the JobMaster, the scheduler, the trace,
//! the deployment descriptors, the shuffle service and the other TaskManagers' partitions to
//! read). What every TaskManager keeps, whatever its mode, is [`super::TaskManager`]'s.

use crate::batch::data::{self, Fragment};
use crate::batch::events::Location;
use crate::batch::oracle::TaskRpc;
use crate::bug::Bug;
use crate::graph::{SubtaskId, VertexId};
use crate::scenario::ShuffleKind;
use crate::status::ExecutionState;
use crate::taskmanager::{Lost, Mode, TaskManager};
use crate::trace::{Call, Rpc, TraceEvent};
use crate::world::batch::TmCtx;
use crate::world::{Act, Event};
use sim::{Duration, Instant};

mod hosting;

/// What a deployment carries besides the attempt (Flink's `TaskDeploymentDescriptor`): its
/// vertex's decided parallelism and, per input, the producer attempt and where its partition is.
#[derive(Clone, Debug, Default)]
pub(crate) struct Descriptor {
    pub(crate) attempt: u32,
    pub(crate) parallelism: u32,
    pub(crate) inputs: Vec<(usize, SubtaskId, u32, Location)>,
}

/// A result partition as its holder keeps it.
pub(crate) struct Partition {
    pub(crate) producer: SubtaskId,
    pub(crate) attempt: u32,
    pub(crate) fragments: Vec<Fragment>,
}

/// What a batch job's TaskManager holds besides what every TaskManager keeps: the attempts it
/// hosts, the result partitions it holds (internal shuffle), and the bookkeeping of its own
/// link to the JobMaster (its RPCs on the wire, the connection's epoch) and of its leader's
/// losses (F2.5).
#[derive(Default)]
pub(crate) struct Blocking {
    /// The attempts deployed here, per attempt, in deployment order: running ones, and ended
    /// ones it still remembers (P3.1) until a deployment replaces them (`hosting.rs`).
    pub(crate) tasks: Vec<Task>,
    pub(crate) partitions: Vec<Partition>,
    /// Its RPCs on the wire to the JobMaster: kept ones are resent only once it is empty,
    /// so a resent RPC never overtakes an older one.
    pub(crate) in_flight: u32,
    /// P3.3: its task RPCs on the wire by send order, until they arrive (applied, refused
    /// and kept, or lost with a connection, which it learns of on arrival).
    pub(crate) wire: std::collections::BTreeMap<u64, Rpc>,
    /// Bumped by every disconnection.
    pub(crate) link_epoch: u32,
    /// Bumped whenever it loses its leader: a registration timeout armed then (F2.5) acts only
    /// if no later loss re-armed it.
    pub(crate) leader_losses: u32,
}

impl Mode for Blocking {
    /// Its tasks, partitions of the internal shuffle and what was on the wire die with the
    /// process.
    fn forget(&mut self) {
        self.tasks.clear();
        self.partitions.clear();
        self.in_flight = 0;
        self.wire.clear();
    }
}

impl TaskManager<Blocking> {
    /// Fault `lose_task_manager`: the process dies with the attempts it runs, each recorded
    /// FAILED before the loss and none reported (no process is left to), and with the
    /// partitions it held under the internal shuffle (`Blocking::forget`, P2.3); a consumer
    /// learns of those only when it misses one (P2.4). `None` if no process of it runs.
    pub(crate) fn lose(&mut self, ctx: &mut TmCtx<'_, '_>) -> Option<Lost> {
        if !self.alive {
            return None;
        }
        self.end_hosted(ctx, ExecutionState::Failed);
        Some(self.lost(ctx))
    }

    /// The connection to the JobMaster is reset: whatever was on the wire either way is lost.
    /// Returns whether it was up (a live, connected process).
    pub(crate) fn disconnect(&mut self) -> bool {
        if !self.alive || !self.connected {
            return false;
        }
        self.connected = false;
        self.mode.link_epoch += 1;
        self.mode.in_flight = 0;
        true
    }

    /// It forgets its leader; F2.5: when `arm` (a registration timeout is configured), the
    /// loss is counted, and the returned `(process, losses)` identify the timeout it arms.
    pub(crate) fn forget_leader(&mut self, arm: bool) -> Option<(u32, u32)> {
        self.leader = None;
        arm.then(|| {
            self.mode.leader_losses += 1;
            (self.process, self.mode.leader_losses)
        })
    }

    /// F2.5: the registration timeout armed for `(process, losses)` acts: the same process
    /// lost no leader since and found none.
    pub(crate) fn registration_expired(&self, process: u32, losses: u32) -> bool {
        self.runs(process) && self.mode.leader_losses == losses && self.leader.is_none()
    }

    /// Its partition of `producer`'s attempt, if it is process `process` and still holds it.
    pub(crate) fn partition(
        &self,
        process: u32,
        producer: SubtaskId,
        attempt: u32,
    ) -> Option<&Partition> {
        if !self.runs(process) {
            return None;
        }
        self.mode
            .partitions
            .iter()
            .find(|p| p.producer == producer && p.attempt == attempt)
    }

    /// Releases its partition of `producer`'s attempt; whether it held it.
    pub(crate) fn release(&mut self, producer: SubtaskId, attempt: u32) -> bool {
        let held = &mut self.mode.partitions;
        match held
            .iter()
            .position(|p| p.producer == producer && p.attempt == attempt)
        {
            Some(i) => {
                held.remove(i);
                true
            }
            None => false,
        }
    }

    /// F2.1, F2.5: it releases every partition it holds, and hands them back for the trace.
    pub(crate) fn release_all(&mut self) -> Vec<Partition> {
        std::mem::take(&mut self.mode.partitions)
    }

    /// F2.4 step 1: what it reports to a JobManager that asks: each partition it holds, with
    /// its size in bytes.
    pub(crate) fn held(&self, record_bytes: u64) -> Vec<(SubtaskId, u32, u64)> {
        self.mode
            .partitions
            .iter()
            .map(|p| {
                let bytes = data::total_records(&p.fragments) * record_bytes;
                (p.producer, p.attempt, bytes)
            })
            .collect()
    }
}

/// An attempt its TaskManager hosts (Flink's `Task` in the `TaskSlotTable`).
pub(crate) struct Task {
    pub(crate) subtask: SubtaskId,
    pub(crate) attempt: u32,
    /// P2.8: a speculative attempt, beside the subtask's original one.
    pub(crate) speculative: bool,
    pub(crate) state: ExecutionState,
    pub(crate) output: Vec<Fragment>,
    pub(crate) started: Instant,
    /// When it reached a terminal state (P3.1: kept for `terminal_state_retention`).
    pub(crate) ended: Option<Instant>,
    /// A source's splits so far (its reader's state, reported under P3.2).
    pub(crate) splits: Vec<u32>,
    /// Its vertex's parallelism, from the deployment descriptor.
    pub(crate) parallelism: u32,
    /// A source asked for a split and has no answer yet.
    pub(crate) awaiting_split: bool,
    /// The producer attempts whose partitions it read.
    pub(crate) inputs: Vec<(SubtaskId, u32)>,
}

impl TaskManager<Blocking> {
    /// A message of the JobMaster arrives (fenced and checked by the link layer).
    pub(crate) fn receive(&mut self, ctx: &mut TmCtx<'_, '_>, msg: Rpc) {
        let (subtask, attempt) = (msg.subtask, msg.attempt);
        match msg.call {
            Call::SubmitTask(_) => self.deploy(ctx, subtask, attempt),
            Call::CancelTask => {
                if self.mode.running(subtask, attempt) {
                    self.task_state(ctx, subtask, attempt, ExecutionState::Canceled);
                }
            }
            Call::ReleasePartition => {
                if self.release(subtask, attempt) {
                    ctx.record(TraceEvent::PartitionReleased {
                        subtask,
                        attempt,
                        remote: false,
                    });
                }
            }
            Call::AskPartitions => {
                let held = self.held(ctx.config().record_bytes);
                for (subtask, attempt, bytes) in held {
                    let report = Rpc::new(subtask, attempt, Call::ReportPartition { bytes });
                    self.send_to_jobmaster(ctx, report);
                }
            }
            Call::AssignSplit(split) => {
                if !self.mode.running(subtask, attempt) {
                    return;
                }
                let task = self.mode.task_mut(subtask, attempt).expect("running");
                task.awaiting_split = false;
                match split {
                    Some(split) => {
                        let vertex = ctx.graph().subtasks[subtask.index()].vertex;
                        let records = data::records_per_split(ctx.graph(), vertex);
                        let task = self.mode.task_mut(subtask, attempt).expect("running");
                        task.splits.push(split);
                        task.output
                            .extend(data::split_fragments(vertex, split, records));
                        let cost = self.work_time(ctx, vertex, records);
                        ctx.after(cost, Event::TaskStep { subtask, attempt });
                    }
                    None => self.finish_task(ctx, subtask, attempt),
                }
            }
            // Only the calls above go to a batch TaskManager: messages to the JobMaster, the
            // checkpoint calls of streaming jobs.
            call => unreachable!("{call:?} is never sent to a batch TaskManager"),
        }
    }

    /// A message to the JobMaster: under reconciliation a task's RPC waits behind those no
    /// JobMaster took yet (P3.3); without a leader other messages are not sent.
    pub(crate) fn send_to_jobmaster(&mut self, ctx: &mut TmCtx<'_, '_>, msg: Rpc) {
        if let Some(rpc) = TaskRpc::of(msg) {
            ctx.rpc_sent(self.index, self.process, rpc);
        }
        if ctx.reconcile().is_some() && msg.is_task_rpc() {
            // P3.3: a task's RPC waits behind those no JobMaster took yet.
            let seq = self.outbox.number();
            if self.leader.is_none() || self.outbox.is_holding() {
                self.outbox.keep(seq, msg);
                ctx.count_kept();
                return;
            }
            self.send_numbered(ctx, msg, seq);
            return;
        }
        if self.leader.is_some() {
            self.send_numbered(ctx, msg, 0);
        }
    }

    /// Sends its message number `seq` to the JobMaster elected last (P3.3: a resent one keeps
    /// its number); one on the wire counts as in flight, and a task's RPC under
    /// reconciliation is remembered until it arrives.
    pub(crate) fn send_numbered(&mut self, ctx: &mut TmCtx<'_, '_>, msg: Rpc, seq: u64) {
        if !ctx.send_to_jobmaster(self, msg, seq) {
            return;
        }
        self.mode.in_flight += 1;
        if ctx.reconcile().is_some() && msg.is_task_rpc() {
            self.mode.wire.insert(seq, msg);
        }
    }

    fn request_split(&mut self, ctx: &mut TmCtx<'_, '_>, subtask: SubtaskId, attempt: u32) {
        self.mode
            .task_mut(subtask, attempt)
            .expect("running")
            .awaiting_split = true;
        self.send_to_jobmaster(ctx, Rpc::new(subtask, attempt, Call::RequestSplit));
    }

    /// One draw per step; P2.8: a slow TaskManager's tasks take `slowdown` times as long.
    fn work_time(&self, ctx: &mut TmCtx<'_, '_>, vertex: VertexId, records: u64) -> Duration {
        let range = ctx.graph().vertices[vertex.index()].process_time;
        let per_record = ctx.draw_work(range.min, range.max);
        let work = per_record
            .checked_mul(records.max(1))
            .unwrap_or(Duration::MAX);
        let factor = ctx.config().slowdown.get(self.index as usize);
        slowed(work, factor.copied().unwrap_or(1.0))
    }

    fn deploy(&mut self, ctx: &mut TmCtx<'_, '_>, subtask: SubtaskId, attempt: u32) {
        let now = ctx.now();
        // A deployment the JobMaster has since replaced by a newer attempt is stale. P2.8: a
        // speculative attempt goes beside the original one.
        let Some((descriptor, speculative)) = ctx.descriptor(subtask, attempt) else {
            return;
        };
        self.replace(ctx, subtask, speculative);
        let task = Task {
            subtask,
            attempt,
            speculative,
            state: ExecutionState::Created,
            output: Vec::new(),
            started: now,
            ended: None,
            splits: Vec::new(),
            parallelism: descriptor.parallelism,
            awaiting_split: false,
            inputs: descriptor
                .inputs
                .iter()
                .map(|&(_, p, a, _)| (p, a))
                .collect(),
        };
        self.mode.tasks.push(task);
        if !speculative {
            ctx.unfinished(subtask);
        }
        for to in [
            ExecutionState::Deploying,
            ExecutionState::Initializing,
            ExecutionState::Running,
        ] {
            self.task_state(ctx, subtask, attempt, to);
        }
        self.send_to_jobmaster(
            ctx,
            Rpc::new(subtask, attempt, Call::update(ExecutionState::Running)),
        );
        if ctx.is_source(subtask) {
            self.request_split(ctx, subtask, attempt);
            return;
        }
        // Blocking inputs are complete: read them whole (P2.1).
        let vertex = ctx.graph().subtasks[subtask.index()].vertex;
        let decided = descriptor.parallelism;
        let mut input = Vec::new();
        for (edge, producer, p_attempt, location) in descriptor.inputs {
            let Some(partition) = self.find_input(ctx, producer, p_attempt, location) else {
                ctx.record(TraceEvent::PartitionNotFound { subtask, producer });
                self.fail_task(ctx, subtask, attempt, Some(producer));
                return;
            };
            input.extend(data::share(
                ctx.graph(),
                edge,
                producer,
                subtask,
                decided,
                &partition.fragments,
            ));
        }
        data::normalize(&mut input);
        let records = data::total_records(&input);
        self.mode
            .task_mut(subtask, attempt)
            .expect("deployed")
            .output = input;
        let cost = self.work_time(ctx, vertex, records);
        ctx.after(cost, Event::TaskStep { subtask, attempt });
    }

    /// The partition of `producer`'s attempt where the deployment said it is: in the remote
    /// shuffle service, here, or on another TaskManager (read over the network).
    fn find_input<'a>(
        &'a self,
        ctx: &'a TmCtx<'_, '_>,
        producer: SubtaskId,
        attempt: u32,
        location: Location,
    ) -> Option<&'a Partition> {
        match location {
            Location::Remote => ctx.remote(producer, attempt),
            Location::TaskManager {
                task_manager,
                process,
            } => {
                let holder = if task_manager == self.index {
                    Some(self)
                } else {
                    ctx.peer(task_manager)
                };
                holder?.partition(process, producer, attempt)
            }
        }
    }

    /// A running task's step ends: a source asks for its next split, any other task has
    /// processed its input.
    pub(crate) fn task_step(&mut self, ctx: &mut TmCtx<'_, '_>, subtask: SubtaskId, attempt: u32) {
        if ctx.is_source(subtask) {
            self.request_split(ctx, subtask, attempt);
        } else {
            self.finish_task(ctx, subtask, attempt);
        }
    }

    /// The task wrote its whole result partition (or, a sink, staged its output) and ends.
    fn finish_task(&mut self, ctx: &mut TmCtx<'_, '_>, subtask: SubtaskId, attempt: u32) {
        let task = self.mode.task_mut(subtask, attempt).expect("running");
        let mut fragments = std::mem::take(&mut task.output);
        data::normalize(&mut fragments);
        let vertex = ctx.graph().subtasks[subtask.index()].vertex;
        let records = data::total_records(&fragments);
        let bytes = records * ctx.config().record_bytes;
        if ctx.graph().vertices[vertex.index()].outputs.is_empty() {
            ctx.stage(subtask, attempt, fragments);
        } else {
            let remote = ctx.config().shuffle == ShuffleKind::Remote;
            let partition = Partition {
                producer: subtask,
                attempt,
                fragments,
            };
            if remote {
                ctx.write_remote(partition);
            } else {
                self.mode.partitions.push(partition);
            }
            ctx.record(TraceEvent::PartitionWritten {
                subtask,
                attempt,
                bytes,
                remote,
            });
        }
        self.task_state(ctx, subtask, attempt, ExecutionState::Finished);
        let started = self.mode.task(subtask, attempt).expect("task").started;
        ctx.finished(subtask, attempt, started);
        self.send_to_jobmaster(
            ctx,
            Rpc::new(subtask, attempt, Call::update(ExecutionState::Finished)),
        );
    }

    /// Its task `subtask` (attempt `attempt`) fails, by a fault or because the partition of
    /// `missing` it reads is not found: it tells the JobMaster.
    pub(crate) fn fail_task(
        &mut self,
        ctx: &mut TmCtx<'_, '_>,
        subtask: SubtaskId,
        attempt: u32,
        missing: Option<SubtaskId>,
    ) {
        self.task_state(ctx, subtask, attempt, ExecutionState::Failed);
        self.send_to_jobmaster(
            ctx,
            Rpc {
                subtask,
                attempt,
                // P2.4: the producer whose partition it missed is the failure's cause.
                call: Call::UpdateTaskExecutionState {
                    state: ExecutionState::Failed,
                    cause: missing,
                },
            },
        );
    }

    /// It lost its JobMaster (F2.5): it fails the job's running tasks (F2.7 step 2: one the
    /// JobMaster deployed again elsewhere too) and keeps its partitions, or releases them when
    /// configured to (F2.1).
    pub(crate) fn lose_leader(&mut self, ctx: &mut TmCtx<'_, '_>) {
        let timeout = ctx.config().registration_timeout;
        let armed = self.forget_leader(timeout.is_some());
        ctx.record(TraceEvent::LeaderLost {
            task_manager: self.index,
        });
        // F2.5: kept partitions wait for a new JobManager only so long.
        if let (Some(timeout), Some((process, losses))) = (timeout, armed) {
            ctx.after(
                timeout,
                Event::RegistrationTimeout {
                    task_manager: self.index,
                    process,
                    losses,
                },
            );
        }
        if ctx.reconcile().is_some() {
            // P3.1: under reconciliation the tasks keep running; their RPCs wait.
            return;
        }
        let failed = self.end_hosted(ctx, ExecutionState::Failed);
        ctx.interrupted(failed);
        if !ctx.config().keep_partitions {
            self.drop_partitions(ctx);
        }
    }

    /// It drops every partition it holds (F2.1, F2.5).
    fn drop_partitions(&mut self, ctx: &mut TmCtx<'_, '_>) {
        for p in self.release_all() {
            ctx.record(TraceEvent::PartitionReleased {
                subtask: p.producer,
                attempt: p.attempt,
                remote: false,
            });
        }
    }

    /// F2.5 (Flink's `taskmanager.registration.timeout`): a TaskManager that found no new
    /// JobManager to register with since it lost its leader releases the job's partitions; a
    /// new JobManager will find them missing (P2.4 step 4).
    pub(crate) fn registration_timed_out(
        &mut self,
        ctx: &mut TmCtx<'_, '_>,
        process: u32,
        losses: u32,
    ) {
        if !self.registration_expired(process, losses) {
            return;
        }
        if ctx.bug() == Some(Bug::KeepPartitionsPastRegistrationTimeout) {
            return;
        }
        self.drop_partitions(ctx);
    }

    /// It learns of the current leader, JobMaster `incarnation` (HA), and registers with it.
    pub(crate) fn register(&mut self, ctx: &mut TmCtx<'_, '_>, incarnation: u32) {
        if !self.may_register(incarnation) {
            return;
        }
        if self.leader.is_some() {
            self.lose_leader(ctx);
        }
        self.leader = Some(incarnation);
        ctx.record(TraceEvent::LeaderFound {
            task_manager: self.index,
        });
        // F2.7 step 3: the slots of attempts the JobMaster replaced meanwhile are refused.
        if ctx.bug() != Some(Bug::KeepReplacedAttempt) {
            self.drop_replaced(ctx);
        }
        self.send_to_jobmaster(ctx, Rpc::of_task_manager(Call::RegisterTaskManager));
        if ctx.reconcile().is_some() {
            self.send_reports(ctx);
        }
    }
}

/// P2.8: `work` on a TaskManager `factor` times slower than normal. Normal speed (1) leaves
/// it exact, as floating point would not past 2^53 ns; a slowed step is capped at a quarter of
/// the clock's range, so that adding it to any instant of a run cannot overflow.
fn slowed(work: Duration, factor: f64) -> Duration {
    if factor > 1.0 {
        let slowed = work.as_nanos() as f64 * factor;
        Duration::from_nanos(slowed.min(u64::MAX as f64 / 4.0) as u64)
    } else {
        work
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_taskmanager_multiplies_its_work_and_a_normal_one_leaves_it_exact() {
        let ns = Duration::from_nanos;
        assert_eq!(slowed(ns(10), 2.5), ns(25));
        assert_eq!(slowed(ns(10), 1000.0), ns(10_000));
        // Past 2^53 ns a product in floating point would round: normal speed does not.
        let long = ns((1 << 60) + 1);
        assert_eq!(slowed(long, 1.0), long);
        // Capped at 2^62 ns, a quarter of the clock's range.
        assert_eq!(slowed(Duration::MAX, 1000.0), ns(1 << 62));
        assert_eq!(slowed(ns(1 << 60), 8.0), ns(1 << 62));
    }
}
