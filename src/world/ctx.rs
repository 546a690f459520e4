//! What a handler may touch: the run's fixed settings ([`Config`]), the JobMaster's process
//! ([`Membership`]), the shared state ([`Io`]: network, storage, trace, oracles, probes, fault
//! plan) and the narrow view of it a handler gets ([`Ctx`]), with what of the TaskManagers it
//! reaches ([`Reach`]): all of them for the JobMaster and the world, its own for a task
//! ([`TaskCtx`]), none for a TaskManager, whose own state is its own, but where each subtask's
//! slot is ([`TmCtx`]).

use super::{Act, Event};
use crate::bug::Bug;
use crate::checkpoint::stats::CheckpointStats;
use crate::checkpoint::storage::{CheckpointStorage, ExternalSystem};
use crate::faults::{Due, FaultPlan};
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::net::{DataPlane, LinkId, RpcLinks};
use crate::oracle::Oracles;
use crate::probes::Probes;
use crate::record::{digest, Element, Record};
use crate::scenario::{DurationRange, FailoverScope, FinishProtocol};
use crate::status::ExecutionState;
use crate::task::Task;
use crate::taskmanager::placement::{Placement, Slot};
use crate::taskmanager::{outbox, Host, Outbox, Pipelined, TaskManager, TaskManagers};
use crate::trace::{Address, Rpc, Trace, TraceEvent};
use sim::{Duration, Instant, Scheduler, Stream};

/// The run's fixed settings that actors consult: which finish protocol, which injected bug.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// `None` when checkpointing is off.
    pub protocol: Option<FinishProtocol>,
    pub bug: Option<Bug>,
    pub channel_latency: DurationRange,
    /// Checkpoints are unaligned (P1.4).
    pub unaligned: bool,
    /// Checkpoints are at least once: barriers are counted, never aligned (F1.7).
    pub at_least_once: bool,
    /// F1.8: how long a snapshot's asynchronous part takes; `None`: synchronous snapshots.
    pub async_duration: Option<DurationRange>,
    /// Aligned checkpoints switch to unaligned after aligning this long (F1.3).
    pub alignment_timeout: Option<Duration>,
    /// P1.5: a finishing task waits until its result partition is fully sent (unaligned only;
    /// otherwise the partition outlives the task).
    pub flush_before_finish: bool,
    /// Under `jobmaster.failover: reconcile` (P3), how long TaskManagers keep terminal task
    /// states (P3.1); `None` under `restart`.
    pub retention: Option<Duration>,
    /// `jobmaster.reconcile_timeout` (P3.4), for `reconcile-outcome`.
    pub reconcile_timeout: Duration,
    /// `checkpointing.min_pause` (P1.1), for the oracles' check of the trigger pace.
    pub min_pause: Duration,
    /// `jobmaster.failover_scope` (P1.8) and the number of TaskManagers, for `failover-scope`.
    pub failover_scope: FailoverScope,
    pub task_managers: u32,
    /// `jobmaster.restart_strategy.max_attempts` (P1.8), for `job-status`.
    pub max_attempts: u32,
    /// `checkpointing.cancel_markers` (F1.10).
    pub cancel_markers: bool,
    /// The scenario has a `stop_with_savepoint` fault (F1.11): `stop-with-savepoint` runs.
    pub stop_with_savepoint: bool,
    /// `checkpointing.tolerable_failures` (F1.9), for `checkpoint-failures`.
    pub tolerable_failures: Option<u32>,
    /// The run uses what `checkpoint-failures` judges (F1.9): a `tolerable_failures` limit,
    /// a `fail_snapshot` fault or tasks that take time to initialize. Without any, none of its
    /// checks can fire, and the oracle stays off the hot path.
    pub checkpoint_failure_checks: bool,
    /// `cluster.task_initialization`: how long a task restores before it is RUNNING;
    /// `None`: at once.
    pub initialization: Option<DurationRange>,
    /// F1.14 step 11: a lone source at a fixed pace wakes only for the steps something could
    /// see (`src/task/pacing.rs`); off under `RunOptions::eager_sources` (a wake-up for every
    /// step), to check that no one can tell.
    pub lazy_sources: bool,
}

/// The JobMaster's process: whether one is alive, and which incarnation was elected last. A
/// TaskManager's process is its own (`TaskManager::process`, `alive`); `Ctx::incarnation`
/// and `Ctx::alive` read both.
pub struct Membership {
    pub jobmaster_alive: bool,
    pub jobmaster: u32,
}

/// What handlers share and may touch besides their own actor.
pub struct Io {
    pub data: DataPlane,
    pub rpc: RpcLinks<Rpc>,
    /// Processing times and source pacing.
    pub workload: Stream,
    pub trace: Trace,
    pub oracles: Oracles,
    /// Coverage probes (`crate::probes`): like the oracles, they watch every event; unlike
    /// them, they judge nothing, they only name the situations the run went through.
    pub probes: Probes,
    /// Durable checkpoint storage: survives the JobManager.
    pub storage: CheckpointStorage,
    /// Where two-phase-commit sinks commit.
    pub external: ExternalSystem,
    /// What happened to each checkpoint and failover, for the summary. Written, never read,
    /// by actors.
    pub stats: CheckpointStats,
    pub faults: FaultPlan,
    pub membership: Membership,
    /// F1.14 step 10: room for one network buffer's records while its event is recorded
    /// (reused, so recording a buffer does not allocate).
    pub records: Vec<Record>,
}

/// What of the TaskManagers a handler reaches: their processes (an RPC is sent to one
/// incarnation, and from one) and their outboxes (P3.3: a TaskManager's RPC to the JobMaster
/// goes through its outbox). The JobMaster and the world reach every TaskManager
/// ([`TaskManagers`]); a task only its own ([`Host`]).
pub trait Reach {
    /// The incarnation of TaskManager `task_manager` an RPC sent now is for: its live process
    /// or, while none runs, the next one (a message to it is delivered if that one starts
    /// before it arrives).
    fn incarnation(&self, task_manager: u32) -> u32;
    fn alive(&self, task_manager: u32) -> bool;
    fn outbox(&mut self, task_manager: u32) -> &mut Outbox;
}

impl Reach for &mut TaskManagers {
    #[inline]
    fn incarnation(&self, task_manager: u32) -> u32 {
        let tm = self.get(task_manager);
        tm.process + u32::from(!tm.alive)
    }

    #[inline]
    fn alive(&self, task_manager: u32) -> bool {
        self.get(task_manager).alive
    }

    #[inline]
    fn outbox(&mut self, task_manager: u32) -> &mut Outbox {
        &mut self.get_mut(task_manager).outbox
    }
}

/// A task addresses no TaskManager but its own.
impl Reach for Host<'_> {
    #[inline]
    fn incarnation(&self, task_manager: u32) -> u32 {
        debug_assert_eq!(
            task_manager, self.index,
            "a task reaches its own TaskManager"
        );
        self.process + u32::from(!self.alive)
    }

    #[inline]
    fn alive(&self, task_manager: u32) -> bool {
        debug_assert_eq!(
            task_manager, self.index,
            "a task reaches its own TaskManager"
        );
        self.alive
    }

    #[inline]
    fn outbox(&mut self, task_manager: u32) -> &mut Outbox {
        debug_assert_eq!(
            task_manager, self.index,
            "a task reaches its own TaskManager"
        );
        self.outbox
    }
}

/// A handler's view of the world; `R` is what of the TaskManagers it reaches ([`Reach`]): by
/// default every one (the JobMaster's and the world's view), for a task its own ([`TaskCtx`]),
/// for a TaskManager only P0's placement table ([`TmCtx`]).
pub struct Ctx<'a, 's, R = &'a mut TaskManagers> {
    pub now: Instant,
    pub graph: &'a ExecutionGraph,
    pub config: &'a Config,
    pub io: &'a mut Io,
    pub sched: &'a mut Scheduler<'s, Event>,
    pub task_managers: R,
}

/// A task's view of the world: the shared state, and of the TaskManagers only its own (what a
/// TaskManager sends itself goes through the same view of itself, `TaskManager::sender`).
pub type TaskCtx<'a, 's> = Ctx<'a, 's, Host<'a>>;

/// A streaming TaskManager's view of the world while it handles one event: the shared state,
/// and of the TaskManagers only where each subtask's slot is (P0's [`Placement`], to find the
/// slot a deployment fills). Its own state is its own (`&mut TaskManager<Pipelined>`), and it
/// lends each of its tasks a [`TaskCtx`] (`TaskManager::lend_task`).
pub type TmCtx<'a, 's> = Ctx<'a, 's, &'a Placement>;

impl<'s, R> Ctx<'_, 's, R> {
    /// The same view of the shared state, reaching `reach` of the TaskManagers instead.
    #[inline(always)]
    pub(crate) fn reaching<Q>(&mut self, reach: Q) -> Ctx<'_, 's, Q> {
        Ctx {
            now: self.now,
            graph: self.graph,
            config: self.config,
            io: &mut *self.io,
            sched: &mut *self.sched,
            task_managers: reach,
        }
    }
}

impl TmCtx<'_, '_> {
    /// Where `subtask` runs (P0).
    #[inline]
    pub fn slot(&self, subtask: SubtaskId) -> Slot {
        self.task_managers.of(subtask)
    }
}

impl<'s> Ctx<'_, 's> {
    /// `subtask`'s current attempt, if deployed, and its view of the world.
    #[inline]
    pub fn lend(&mut self, subtask: SubtaskId) -> Option<(&mut Task, TaskCtx<'_, 's>)> {
        let (task, host) = self.task_managers.lend(subtask)?;
        let ctx = Ctx {
            now: self.now,
            graph: self.graph,
            config: self.config,
            io: &mut *self.io,
            sched: &mut *self.sched,
            task_managers: host,
        };
        Some((task, ctx))
    }

    /// TaskManager `task_manager`, with its view of the world ([`TmCtx`]).
    pub fn task_manager(
        &mut self,
        task_manager: u32,
    ) -> (&mut TaskManager<Pipelined>, TmCtx<'_, 's>) {
        let (tm, placement) = self.task_managers.split(task_manager);
        let ctx = Ctx {
            now: self.now,
            graph: self.graph,
            config: self.config,
            io: &mut *self.io,
            sched: &mut *self.sched,
            task_managers: placement,
        };
        (tm, ctx)
    }

    /// Hands an event to `subtask`'s current attempt, if one is deployed and, given `attempt`,
    /// it is that one: `handle` runs in the task's view of the world (`lend`). `None` if there
    /// was no such task; else whether the task failed itself (its snapshot's synchronous part
    /// threw, F1.9: it must then leave its slot, `TaskManagers::leave`).
    #[inline(always)]
    pub fn on_task(
        &mut self,
        subtask: SubtaskId,
        attempt: Option<u32>,
        handle: impl FnOnce(&mut Task, &mut TaskCtx<'_, 's>),
    ) -> Option<bool> {
        let (task, mut ctx) = self.lend(subtask)?;
        if attempt.is_some_and(|a| a != task.attempt()) {
            return None;
        }
        handle(task, &mut ctx);
        Some(task.state() == ExecutionState::Failed)
    }
}

impl<R> Act for Ctx<'_, '_, R> {
    #[inline]
    fn now(&self) -> Instant {
        self.now
    }

    #[inline]
    fn record(&mut self, event: TraceEvent) {
        Ctx::record(self, event);
    }

    #[inline]
    fn after(&mut self, delay: Duration, event: Event) {
        self.sched.after(delay, event);
    }
}

impl<R> Ctx<'_, '_, R> {
    /// Records `event` in the trace and shows it to the oracles, the probes and the fault plan.
    #[inline]
    pub fn record(&mut self, event: TraceEvent) {
        let index = self.io.trace.record(self.now, event);
        self.io.oracles.observe(
            self.graph,
            &self.io.storage,
            &self.io.faults,
            index,
            self.now,
            &event,
        );
        self.observed(index, &event);
    }

    /// What watches every recorded event besides the trace and the oracles: the probes, and
    /// the fault plan's triggers.
    #[inline(always)]
    fn observed(&mut self, index: u64, event: &TraceEvent) {
        self.io.probes.observe(event);
        for due in self.io.faults.observe(self.graph, index, event) {
            let event = match due {
                Due::Fire(index) => Event::Fault { index },
                Due::Release(index) => Event::ReleaseChannel { index },
            };
            self.sched.after(Duration::ZERO, event);
        }
    }

    /// F1.14 step 10: records `event`, a network buffer's send, arrival or take, as one trace
    /// event, and shows the oracles each of its `records` as its own record-level event
    /// (`as_event`), in order, all at the buffer event's index: the oracles judge records,
    /// the hash covers buffers. The record-level events are kept for rendering only when
    /// everything is kept (`--timeline all`, `--trace`).
    #[inline]
    pub fn record_buffer(
        &mut self,
        event: TraceEvent,
        records: &[Record],
        as_event: impl Fn(Record) -> TraceEvent,
    ) {
        let index = self.io.trace.record(self.now, event);
        self.io.oracles.observe_buffer(
            self.graph,
            &self.io.storage,
            &self.io.faults,
            index,
            self.now,
            &event,
            records,
            &as_event,
        );
        if self.io.trace.keeps_details() {
            for &record in records {
                self.io.trace.detail(index, self.now, as_event(record));
            }
        }
        self.observed(index, &event);
    }

    /// Puts an element on a channel's wire (the caller has checked credit for records).
    #[inline]
    pub fn push(&mut self, channel: ChannelId, element: Element) {
        let extra = self.io.faults.channel_delay(self.now);
        let (at, epoch) = self.io.data.push(self.now, channel, element, extra);
        let info = &self.graph.channels[channel.index()];
        self.sched.at(
            at,
            Event::Arrive {
                channel,
                consumer: info.to,
                slot: info.input_slot,
                epoch,
                elements: 1,
            },
        );
        self.record(TraceEvent::Push { channel, element });
    }

    /// F1.14: puts `channel`'s current buffer on the wire if the consumer has a buffer for it
    /// (false: no credit, it stays). Its records arrive together; the send is one trace event
    /// (step 10).
    pub fn send_buffer(&mut self, channel: ChannelId) -> bool {
        let extra = self.io.faults.channel_delay(self.now);
        let Some(sent) = self.io.data.send_buffer(self.now, channel, extra) else {
            return false;
        };
        let info = &self.graph.channels[channel.index()];
        self.sched.at(
            sent.arrival,
            Event::Arrive {
                channel,
                consumer: info.to,
                slot: info.input_slot,
                epoch: sent.epoch,
                elements: sent.records,
            },
        );
        let mut records = std::mem::take(&mut self.io.records);
        records.clear();
        self.io
            .data
            .copy_records(channel, sent.first, sent.records as usize, &mut records);
        let event = TraceEvent::BufferSent {
            channel,
            records: sent.records,
            digest: digest(&records),
        };
        self.record_buffer(event, &records, |record| TraceEvent::Push {
            channel,
            element: Element::Record(record),
        });
        self.io.records = records;
        true
    }

    /// Schedules the task's next step after `delay`.
    pub fn step_after(&mut self, delay: Duration, subtask: SubtaskId, attempt: u32) {
        self.sched
            .after(delay, Event::TaskStep { subtask, attempt });
    }
}

impl<R: Reach> Ctx<'_, '_, R> {
    /// The incarnation of `address` an RPC sent now is for, and the one a newly elected
    /// JobMaster expects (P3.1): the JobMaster's, or a TaskManager's (`Reach::incarnation`).
    #[inline]
    pub(crate) fn incarnation(&self, address: Address) -> u32 {
        match address {
            Address::JobMaster => self.io.membership.jobmaster,
            Address::TaskManager(i) => self.task_managers.incarnation(i),
        }
    }

    #[inline]
    pub(crate) fn alive(&self, address: Address) -> bool {
        match address {
            Address::JobMaster => self.io.membership.jobmaster_alive,
            Address::TaskManager(i) => self.task_managers.alive(i),
        }
    }

    /// Sends an RPC; it arrives after the link's latency, in order with earlier RPCs on the
    /// same link, unless its destination dies first.
    pub fn send(&mut self, from: Address, to: Address, rpc: Rpc) {
        let incarnation = self.incarnation(to);
        self.send_to(from, to, incarnation, rpc);
    }

    /// Sends an RPC to one incarnation of the destination process: the one the sender knows
    /// (a JobMaster addresses the TaskManager process that registered with it). If that
    /// process has died, the RPC is lost, even if a replacement runs by now.
    pub fn send_to(&mut self, from: Address, to: Address, incarnation: u32, rpc: Rpc) {
        let seq = match (from, to) {
            (Address::TaskManager(tm), Address::JobMaster) => {
                let outbox = self.task_managers.outbox(tm);
                let seq = outbox.number();
                if outbox.is_holding() && !outbox::is_report(rpc.call) {
                    self.io
                        .oracles
                        .observe_send(from, to, incarnation, rpc, self.now);
                    outbox.keep(seq, rpc); // P3.3: behind the RPCs it keeps, in order
                    self.io.stats.rpcs_kept += 1;
                    return;
                }
                seq
            }
            _ => 0,
        };
        self.send_numbered(from, to, incarnation, seq, rpc);
    }

    /// Sends RPC number `seq` again (P3.3: a kept RPC keeps its place in its sender's order).
    pub fn send_numbered(
        &mut self,
        from: Address,
        to: Address,
        incarnation: u32,
        seq: u64,
        rpc: Rpc,
    ) {
        self.io
            .oracles
            .observe_send(from, to, incarnation, rpc, self.now);
        let link = LinkId::between(from, to);
        let (extra, lost) = self.io.faults.rpc_delay(self.now);
        if let Some(retry) = lost {
            self.record(TraceEvent::RpcLost { from, to, retry });
        }
        let incarnations = (self.incarnation(from), incarnation);
        let at = self
            .io
            .rpc
            .send(self.now, link, seq, rpc, incarnations, extra);
        self.sched.at(at, Event::Rpc { link });
    }
}
