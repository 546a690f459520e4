//! A TaskManager of a batch job: the tasks it runs and the result partitions it hosts
//! (blocking exchanges, internal shuffle), losing and re-registering with a leader (P2.3, F2.5).
//!
//! These are methods of the batch cluster ([`Cluster`]), which holds every TaskManager's
//! state beside the links and the shuffle service; the streaming TaskManager is
//! [`super::TaskManager`].

use crate::batch::data::{self, Fragment};
use crate::batch::events::Location;
use crate::bug::Bug;
use crate::graph::{SubtaskId, VertexId};
use crate::scenario::ShuffleKind;
use crate::status::ExecutionState;
use crate::taskmanager::Outbox;
use crate::trace::TraceEvent;
use crate::world::batch::{Cluster, Msg};
use crate::world::Event;
use sim::{Duration, Instant, Scheduler};

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

pub(crate) struct TaskManager {
    pub(crate) process: u32,
    pub(crate) alive: bool,
    pub(crate) connected: bool,
    /// The JobMaster incarnation it works for.
    pub(crate) leader: Option<u32>,
    pub(crate) partitions: Vec<Partition>,
    /// P3.3: RPCs no JobMaster accepted yet, by send order.
    pub(crate) outbox: Outbox<Msg>,
    /// Its RPCs on the wire to the JobMaster: kept ones are resent only once it is empty,
    /// so a resent RPC never overtakes an older one.
    pub(crate) in_flight: u32,
    /// P3.3: its task RPCs on the wire by send order, until they arrive (applied, refused
    /// and kept, or lost with a connection, which it learns of on arrival).
    pub(crate) wire: std::collections::BTreeMap<u64, Msg>,
    /// Bumped by every disconnection.
    pub(crate) link_epoch: u32,
    /// Bumped whenever it loses its leader: a registration timeout armed then (F2.5) acts only
    /// if no later loss re-armed it.
    pub(crate) leader_losses: u32,
}

impl TaskManager {
    /// The first process of a TaskManager, registered with the first JobMaster.
    pub(crate) fn new() -> TaskManager {
        TaskManager {
            process: 0,
            alive: true,
            connected: true,
            leader: Some(0),
            partitions: Vec::new(),
            outbox: Outbox::default(),
            in_flight: 0,
            wire: std::collections::BTreeMap::new(),
            link_epoch: 0,
            leader_losses: 0,
        }
    }

    /// The process died: its memory goes with it (partitions of the internal shuffle, kept
    /// RPCs, what was on the wire), and with it its leader. Returns the dead process.
    pub(crate) fn crash(&mut self) -> u32 {
        self.alive = false;
        self.leader = None;
        self.forget();
        self.process
    }

    /// A replacement process starts, connected and without a leader yet.
    pub(crate) fn restart(&mut self) {
        self.process += 1;
        self.alive = true;
        self.connected = true;
        self.leader = None;
        self.forget();
    }

    fn forget(&mut self) {
        self.partitions.clear();
        self.outbox.clear();
        self.in_flight = 0;
        self.wire.clear();
    }

    /// The connection to the JobMaster is reset: whatever was on the wire either way is lost.
    /// Returns whether it was up (a live, connected process).
    pub(crate) fn disconnect(&mut self) -> bool {
        if !self.alive || !self.connected {
            return false;
        }
        self.connected = false;
        self.link_epoch += 1;
        self.in_flight = 0;
        true
    }

    /// Alive, and working for JobMaster `incarnation`.
    pub(crate) fn works_for(&self, incarnation: u32) -> bool {
        self.alive && self.leader == Some(incarnation)
    }

    /// Process `process`, cut off, still believes in a leader when its heartbeat timeout to
    /// the JobMaster fires: it loses its leader then (F2.5).
    pub(crate) fn misses_leader(&self, process: u32) -> bool {
        self.alive && self.process == process && !self.connected && self.leader.is_some()
    }

    /// It forgets its leader; F2.5: when `arm` (a registration timeout is configured), the
    /// loss is counted, and the returned `(process, losses)` identify the timeout it arms.
    pub(crate) fn forget_leader(&mut self, arm: bool) -> Option<(u32, u32)> {
        self.leader = None;
        arm.then(|| {
            self.leader_losses += 1;
            (self.process, self.leader_losses)
        })
    }

    /// F2.5: the registration timeout armed for `(process, losses)` acts: the same process
    /// lost no leader since and found none.
    pub(crate) fn registration_expired(&self, process: u32, losses: u32) -> bool {
        self.alive
            && self.process == process
            && self.leader_losses == losses
            && self.leader.is_none()
    }

    /// It can register with JobMaster `incarnation`: alive, connected, not registered yet.
    pub(crate) fn may_register(&self, incarnation: u32) -> bool {
        self.alive && self.connected && self.leader != Some(incarnation)
    }

    /// Its partition of `producer`'s attempt, if it is process `process` and still holds it.
    pub(crate) fn partition(
        &self,
        process: u32,
        producer: SubtaskId,
        attempt: u32,
    ) -> Option<&Partition> {
        if !self.alive || self.process != process {
            return None;
        }
        self.partitions
            .iter()
            .find(|p| p.producer == producer && p.attempt == attempt)
    }

    /// Releases its partition of `producer`'s attempt; whether it held it.
    pub(crate) fn release(&mut self, producer: SubtaskId, attempt: u32) -> bool {
        let held = &mut self.partitions;
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
        std::mem::take(&mut self.partitions)
    }

    /// F2.4 step 1: what it reports to a JobManager that asks: each partition it holds, with
    /// its size in bytes.
    pub(crate) fn held(&self, record_bytes: u64) -> Vec<(SubtaskId, u32, u64)> {
        self.partitions
            .iter()
            .map(|p| {
                let bytes = data::total_records(&p.fragments) * record_bytes;
                (p.producer, p.attempt, bytes)
            })
            .collect()
    }
}

/// A running attempt, on its TaskManager.
pub(crate) struct Task {
    pub(crate) attempt: u32,
    pub(crate) task_manager: u32,
    /// The TaskManager process it runs in: a replacement process knows nothing of it.
    pub(crate) process: u32,
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

impl Cluster {
    pub(crate) fn tm_receives(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32, msg: Msg) {
        let now = sched.now();
        match msg {
            Msg::Deploy { subtask, attempt } => self.deploy(sched, tm, subtask, attempt),
            Msg::Cancel { subtask, attempt } => {
                if self.running(subtask, attempt) {
                    self.end_task(now, subtask, attempt, ExecutionState::Canceled);
                }
            }
            Msg::Release { subtask, attempt } => {
                if self.tms[tm as usize].release(subtask, attempt) {
                    self.record(
                        now,
                        TraceEvent::PartitionReleased {
                            subtask,
                            attempt,
                            remote: false,
                        },
                    );
                }
            }
            Msg::AskPartitions => {
                let held = self.tms[tm as usize].held(self.batch.record_bytes);
                for (subtask, attempt, bytes) in held {
                    let report = Msg::Report {
                        subtask,
                        attempt,
                        bytes,
                    };
                    self.send_to_jobmaster(sched, tm, report);
                }
            }
            Msg::AssignSplit {
                subtask,
                attempt,
                split,
            } => {
                if !self.running(subtask, attempt) {
                    return;
                }
                self.task_mut(subtask, attempt)
                    .expect("running")
                    .awaiting_split = false;
                match split {
                    Some(split) => {
                        let vertex = self.graph.subtasks[subtask.index()].vertex;
                        let records = data::records_per_split(&self.graph, vertex);
                        let task = self.task_mut(subtask, attempt).expect("running");
                        task.splits.push(split);
                        task.output
                            .extend(data::split_fragments(vertex, split, records));
                        let cost = self.work_time(vertex, records, tm);
                        sched.after(cost, Event::TaskStep { subtask, attempt });
                    }
                    None => self.finish_task(sched, subtask, attempt),
                }
            }
            Msg::Register
            | Msg::Running { .. }
            | Msg::Finished { .. }
            | Msg::Failed { .. }
            | Msg::RequestSplit { .. }
            | Msg::Report { .. }
            | Msg::ReportExecution { .. }
            | Msg::ReportSplit { .. }
            | Msg::ReportInput { .. }
            | Msg::ReportDone => unreachable!("a JobMaster message"),
        }
    }

    /// A message of TaskManager `tm` to the JobMaster: under reconciliation a task's RPC waits
    /// behind those no JobMaster took yet (P3.3); without a leader other messages are not sent.
    pub(crate) fn send_to_jobmaster(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        msg: Msg,
    ) {
        if let Some(rpc) = msg.task_rpc() {
            let process = self.tms[tm as usize].process;
            self.oracles.rpc_sent(tm, process, rpc);
        }
        if self.reconcile.is_some() && msg.is_task_rpc() {
            // P3.3: a task's RPC waits behind those no JobMaster took yet.
            let t = &mut self.tms[tm as usize];
            let seq = t.outbox.number();
            if t.leader.is_none() || t.outbox.is_holding() {
                t.outbox.keep(seq, msg);
                self.rpcs_kept += 1;
                return;
            }
            self.send_numbered_to_jobmaster(sched, tm, msg, seq);
            return;
        }
        if self.tms[tm as usize].leader.is_some() {
            self.send_numbered_to_jobmaster(sched, tm, msg, 0);
        }
    }

    pub(crate) fn request_split(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        subtask: SubtaskId,
        attempt: u32,
    ) {
        self.task_mut(subtask, attempt)
            .expect("running")
            .awaiting_split = true;
        self.send_to_jobmaster(sched, tm, Msg::RequestSplit { subtask, attempt });
    }

    /// Attempt `attempt` of `subtask` on its TaskManager: the original's task, or (P2.8) a
    /// speculative one running beside it.
    pub(crate) fn task_ref(&self, subtask: SubtaskId, attempt: u32) -> Option<&Task> {
        let i = subtask.index();
        [&self.tasks[i], &self.spec_tasks[i]]
            .into_iter()
            .flatten()
            .find(|t| t.attempt == attempt)
    }

    pub(crate) fn task_mut(&mut self, subtask: SubtaskId, attempt: u32) -> Option<&mut Task> {
        let i = subtask.index();
        if self.tasks[i].as_ref().is_some_and(|t| t.attempt == attempt) {
            return self.tasks[i].as_mut();
        }
        self.spec_tasks[i].as_mut().filter(|t| t.attempt == attempt)
    }

    pub(crate) fn running(&self, subtask: SubtaskId, attempt: u32) -> bool {
        self.task_ref(subtask, attempt)
            .is_some_and(|t| t.state == ExecutionState::Running)
    }

    /// One draw per step; P2.8: a slow TaskManager's tasks take `slowdown` times as long.
    pub(crate) fn work_time(&mut self, vertex: VertexId, records: u64, tm: u32) -> Duration {
        let range = self.graph.vertices[vertex.index()].process_time;
        let per_record = self.work_rng.duration_between(range.min, range.max);
        let work = per_record
            .checked_mul(records.max(1))
            .unwrap_or(Duration::MAX);
        match self.batch.slowdown.get(tm as usize) {
            Some(&factor) if factor > 1.0 => {
                let slowed = work.as_nanos() as f64 * factor;
                Duration::from_nanos(slowed.min(u64::MAX as f64 / 4.0) as u64)
            }
            _ => work,
        }
    }

    pub(crate) fn task_state(
        &mut self,
        now: Instant,
        subtask: SubtaskId,
        attempt: u32,
        to: ExecutionState,
    ) {
        let task = self.task_mut(subtask, attempt).expect("a task");
        let from = task.state;
        task.state = to;
        if to.is_terminal() {
            task.ended = Some(now);
        }
        let attempt = task.attempt;
        self.record(
            now,
            TraceEvent::TaskState {
                subtask,
                attempt,
                from,
                to,
            },
        );
    }

    pub(crate) fn deploy(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        subtask: SubtaskId,
        attempt: u32,
    ) {
        let now = sched.now();
        // A deployment the JobMaster has since replaced by a newer attempt is stale. P2.8: a
        // speculative attempt goes beside the original one.
        let i = subtask.index();
        let speculative = self.spec_descriptors[i]
            .as_ref()
            .is_some_and(|d| d.attempt == attempt);
        let descriptor = if speculative {
            self.spec_descriptors[i].clone().expect("speculative")
        } else {
            self.descriptors[i].clone()
        };
        if descriptor.attempt != attempt {
            return;
        }
        let slot = if speculative {
            &self.spec_tasks[i]
        } else {
            &self.tasks[i]
        };
        if let Some(old) = slot.as_ref().filter(|t| !t.state.is_terminal()) {
            let old = old.attempt;
            self.end_task(now, subtask, old, ExecutionState::Canceled);
        }
        if !speculative {
            self.done[i] = None;
        }
        let task = Some(Task {
            attempt,
            task_manager: tm,
            process: self.tms[tm as usize].process,
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
        });
        if speculative {
            self.spec_tasks[i] = task;
        } else {
            self.tasks[i] = task;
        }
        for to in [
            ExecutionState::Deploying,
            ExecutionState::Initializing,
            ExecutionState::Running,
        ] {
            self.task_state(now, subtask, attempt, to);
        }
        self.send_to_jobmaster(sched, tm, Msg::Running { subtask, attempt });
        if self.is_source[subtask.index()] {
            self.request_split(sched, tm, subtask, attempt);
            return;
        }
        // Blocking inputs are complete: read them whole (P2.1).
        let vertex = self.graph.subtasks[subtask.index()].vertex;
        let decided = descriptor.parallelism;
        let mut input = Vec::new();
        for (edge, producer, p_attempt, location) in descriptor.inputs {
            let found = match location {
                Location::Remote => self
                    .remote
                    .iter()
                    .find(|p| p.producer == producer && p.attempt == p_attempt),
                Location::TaskManager {
                    task_manager,
                    process,
                } => self.tms[task_manager as usize].partition(process, producer, p_attempt),
            };
            let Some(partition) = found else {
                self.record(now, TraceEvent::PartitionNotFound { subtask, producer });
                self.end_task(now, subtask, attempt, ExecutionState::Failed);
                self.send_to_jobmaster(
                    sched,
                    tm,
                    Msg::Failed {
                        subtask,
                        attempt,
                        missing: Some(producer),
                    },
                );
                return;
            };
            input.extend(data::share(
                &self.graph,
                edge,
                producer,
                subtask,
                decided,
                &partition.fragments,
            ));
        }
        data::normalize(&mut input);
        let records = data::total_records(&input);
        self.task_mut(subtask, attempt).expect("deployed").output = input;
        let cost = self.work_time(vertex, records, tm);
        sched.after(cost, Event::TaskStep { subtask, attempt });
    }

    pub(crate) fn task_step(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        subtask: SubtaskId,
        attempt: u32,
    ) {
        if !self.running(subtask, attempt) {
            return;
        }
        let tm = self
            .task_ref(subtask, attempt)
            .expect("running")
            .task_manager;
        if self.is_source[subtask.index()] {
            self.request_split(sched, tm, subtask, attempt);
        } else {
            self.finish_task(sched, subtask, attempt);
        }
    }

    /// The task wrote its whole result partition (or, a sink, staged its output) and ends.
    pub(crate) fn finish_task(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        subtask: SubtaskId,
        attempt: u32,
    ) {
        let now = sched.now();
        let task = self.task_mut(subtask, attempt).expect("running");
        let tm = task.task_manager;
        let mut fragments = std::mem::take(&mut task.output);
        data::normalize(&mut fragments);
        let vertex = self.graph.subtasks[subtask.index()].vertex;
        let records = data::total_records(&fragments);
        let bytes = records * self.batch.record_bytes;
        if self.graph.vertices[vertex.index()].outputs.is_empty() {
            self.staged.push((subtask, attempt, fragments));
        } else {
            let remote = self.batch.shuffle == ShuffleKind::Remote;
            let partition = Partition {
                producer: subtask,
                attempt,
                fragments,
            };
            if remote {
                self.remote.push(partition);
            } else {
                self.tms[tm as usize].partitions.push(partition);
            }
            self.record(
                now,
                TraceEvent::PartitionWritten {
                    subtask,
                    attempt,
                    bytes,
                    remote,
                },
            );
        }
        self.task_state(now, subtask, attempt, ExecutionState::Finished);
        self.done[subtask.index()] = Some((attempt, now));
        if let Some(r) = self.rerun_of[subtask.index()].take() {
            let started = self.task_ref(subtask, attempt).expect("task").started;
            let took = now.saturating_duration_since(started);
            self.recoveries[r].redone = self.recoveries[r].redone + took;
        }
        self.send_to_jobmaster(sched, tm, Msg::Finished { subtask, attempt });
    }

    pub(crate) fn end_task(
        &mut self,
        now: Instant,
        subtask: SubtaskId,
        attempt: u32,
        to: ExecutionState,
    ) {
        if self
            .task_ref(subtask, attempt)
            .is_some_and(|t| !t.state.is_terminal())
        {
            if to == ExecutionState::Canceled {
                self.task_state(now, subtask, attempt, ExecutionState::Canceling);
            }
            self.task_state(now, subtask, attempt, to);
        }
    }

    /// The TaskManager lost its JobMaster (F2.5): it fails the job's running tasks and keeps
    /// its partitions, or releases them when configured to (F2.1).
    pub(crate) fn lose_leader(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32) {
        let now = sched.now();
        let timeout = self.batch.registration_timeout;
        let armed = self.tms[tm as usize].forget_leader(timeout.is_some());
        self.record(now, TraceEvent::LeaderLost { task_manager: tm });
        // F2.5: kept partitions wait for a new JobManager only so long.
        if let (Some(timeout), Some((process, losses))) = (timeout, armed) {
            sched.after(
                timeout,
                Event::RegistrationTimeout {
                    task_manager: tm,
                    process,
                    losses,
                },
            );
        }
        if self.reconcile.is_some() {
            // P3.1: under reconciliation the tasks keep running; their RPCs wait.
            return;
        }
        let hosted = self.hosted(tm);
        if let Some(r) = self.recoveries.last_mut() {
            r.interrupted += hosted.len() as u32;
        }
        for (s, attempt) in hosted {
            self.end_task(now, s, attempt, ExecutionState::Failed);
        }
        if !self.batch.keep_partitions {
            self.drop_partitions(now, tm);
        }
    }

    /// The attempts TaskManager `tm` runs (originals first, then speculative ones, P2.8), by
    /// subtask.
    pub(crate) fn hosted(&self, tm: u32) -> Vec<(SubtaskId, u32)> {
        let live = |t: &Option<Task>| {
            t.as_ref()
                .filter(|t| t.task_manager == tm && !t.state.is_terminal())
                .map(|t| t.attempt)
        };
        let mut hosted = Vec::new();
        for table in [&self.tasks, &self.spec_tasks] {
            for (i, t) in table.iter().enumerate() {
                if let Some(attempt) = live(t) {
                    hosted.push((SubtaskId(i as u32), attempt));
                }
            }
        }
        hosted
    }

    /// TaskManager `tm` drops every partition it holds (F2.1, F2.5).
    fn drop_partitions(&mut self, now: Instant, tm: u32) {
        for p in self.tms[tm as usize].release_all() {
            self.record(
                now,
                TraceEvent::PartitionReleased {
                    subtask: p.producer,
                    attempt: p.attempt,
                    remote: false,
                },
            );
        }
    }

    /// F2.5 (Flink's `taskmanager.registration.timeout`): a TaskManager that found no new
    /// JobManager to register with since it lost its leader releases the job's partitions; a
    /// new JobManager will find them missing (P2.4 step 4).
    pub(crate) fn registration_timed_out(
        &mut self,
        now: Instant,
        tm: u32,
        process: u32,
        losses: u32,
    ) {
        if !self.tms[tm as usize].registration_expired(process, losses) {
            return;
        }
        if self.bug == Some(Bug::KeepPartitionsPastRegistrationTimeout) {
            return;
        }
        self.drop_partitions(now, tm);
    }

    /// The TaskManager learns of the current leader, JobMaster `incarnation` (HA), and
    /// registers with it.
    pub(crate) fn register(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32, incarnation: u32) {
        let t = &self.tms[tm as usize];
        if !t.may_register(incarnation) {
            return;
        }
        if t.leader.is_some() {
            self.lose_leader(sched, tm);
        }
        self.tms[tm as usize].leader = Some(incarnation);
        self.record(sched.now(), TraceEvent::LeaderFound { task_manager: tm });
        self.send_to_jobmaster(sched, tm, Msg::Register);
        if self.reconcile.is_some() {
            self.send_reports(sched, tm);
        }
    }
}
