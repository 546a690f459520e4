//! The TaskManager, one type for both kinds of job: a process that hosts tasks in its slots
//! and relays their state reports to the JobMaster, follows a leader, and under
//! `jobmaster.failover: reconcile` (P3) outlives its JobMaster: it keeps the RPCs no JobMaster
//! accepted in an [`Outbox`] and sends them again until one does (P3.3), and it remembers
//! tasks that ended, for a while, so it can report them to the next JobMaster (P3.1).
//!
//! What both modes keep is [`TaskManager`]'s own: which TaskManager it is, its process
//! incarnation and liveness, its connection, the leader it follows and its outbox (of RPCs,
//! one vocabulary for both modes, `crate::trace::rpc`). What only one mode has is its
//! [`Mode`] part, a type parameter because each world holds TaskManagers of its own mode only:
//! [`Pipelined`] (streaming: the tasks in its slots and the tasks that ended there) and
//! `batch::Blocking` (batch: the result partitions it holds and its RPCs on the wire).

pub mod batch;
pub mod outbox;
mod pipelined;
pub(crate) mod reconcile;
pub use outbox::Outbox;
pub use pipelined::{placement, Ended, Host, Pipelined, TaskManagers};

use crate::trace::TraceEvent;
use crate::world::Act;
use sim::{Duration, Instant};

/// P3.1: a task that ended at `ended` is remembered (and reported to a new leader, P3.2) for
/// `retention`; past it, the TaskManager has forgotten it. One rule for both kinds of job.
pub(crate) fn forgotten(ended: Instant, now: Instant, retention: Duration) -> bool {
    now.saturating_duration_since(ended) > retention
}

/// A TaskManager process that died (fault `lose_task_manager`): which TaskManager, and which of
/// its processes. What the loss sets off beyond it is the same in both modes
/// (`world::processes::task_manager_lost`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lost {
    pub task_manager: u32,
    pub process: u32,
}

/// What only one kind of job's TaskManager holds, beside what every TaskManager keeps.
pub trait Mode: Default {
    /// The process died or a new one starts: what of this part lived in the process is gone.
    fn forget(&mut self);
}

/// A TaskManager of either kind of job (module doc): what every TaskManager keeps, and its
/// mode's part.
pub struct TaskManager<M: Mode> {
    /// Which TaskManager of the cluster it is.
    pub(crate) index: u32,
    /// Its process incarnation: a replacement process is the next one.
    pub(crate) process: u32,
    pub(crate) alive: bool,
    /// Its connection to the JobMaster is up (only a batch fault cuts it).
    pub(crate) connected: bool,
    /// The JobMaster incarnation it follows; `None` from its process's death until it learns
    /// of a leader (HA).
    pub(crate) leader: Option<u32>,
    /// P3.3: RPCs no JobMaster accepted yet, by send order.
    pub(crate) outbox: Outbox,
    /// What only its mode has.
    pub(crate) mode: M,
}

impl<M: Mode> TaskManager<M> {
    /// The first process of a TaskManager, registered with the first JobMaster.
    pub fn new(index: u32) -> TaskManager<M> {
        TaskManager {
            index,
            process: 0,
            alive: true,
            connected: true,
            leader: Some(0),
            outbox: Outbox::default(),
            mode: M::default(),
        }
    }

    /// Process `process` of it is the one alive.
    pub(crate) fn runs(&self, process: u32) -> bool {
        self.alive && self.process == process
    }

    /// The process died: its memory goes with it (kept RPCs, and what its mode's part keeps in
    /// the process), and with it its leader. Returns the dead process.
    fn crash(&mut self) -> u32 {
        self.alive = false;
        self.leader = None;
        self.forget();
        self.process
    }

    /// Fault `lose_task_manager`, both modes: the process dies, what it kept goes with it
    /// (`crash`), and the loss is recorded. Its mode's part has ended what it hosted first, as
    /// its mode tells it (each mode's `lose`).
    fn lost(&mut self, ctx: &mut impl Act) -> Lost {
        let process = self.crash();
        ctx.record(TraceEvent::TaskManagerLost {
            task_manager: self.index,
        });
        Lost {
            task_manager: self.index,
            process,
        }
    }

    /// The deployment replaces a lost process, both modes: the next process starts
    /// (`restart`), and is recorded. It registers with the leader it learns of, as its mode
    /// does.
    pub(crate) fn start(&mut self, ctx: &mut impl Act) {
        self.restart();
        ctx.record(TraceEvent::TaskManagerStarted {
            task_manager: self.index,
        });
    }

    /// A replacement process starts, connected and without a leader yet.
    fn restart(&mut self) {
        self.process += 1;
        self.alive = true;
        self.connected = true;
        self.leader = None;
        self.forget();
    }

    fn forget(&mut self) {
        self.outbox.clear();
        self.mode.forget();
    }

    /// Alive, and working for JobMaster `incarnation`.
    pub(crate) fn works_for(&self, incarnation: u32) -> bool {
        self.alive && self.leader == Some(incarnation)
    }

    /// Process `process`, cut off, still believes in a leader when its heartbeat timeout to
    /// the JobMaster fires: it loses its leader then (F2.5).
    pub(crate) fn misses_leader(&self, process: u32) -> bool {
        self.runs(process) && !self.connected && self.leader.is_some()
    }

    /// It can register with JobMaster `incarnation`: alive, connected, not registered yet.
    pub(crate) fn may_register(&self, incarnation: u32) -> bool {
        self.alive && self.connected && self.leader != Some(incarnation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P3.1: a task is remembered for the whole retention, the last instant included, and
    /// forgotten one nanosecond later; a retention of zero keeps it only at the instant it
    /// ended.
    #[test]
    fn an_ended_task_is_forgotten_only_past_the_retention() {
        let ended = Instant::ZERO + Duration::from_nanos(1_000);
        let retention = Duration::from_nanos(500);
        let at = |ns: u64| Instant::ZERO + Duration::from_nanos(ns);
        assert!(!forgotten(ended, at(1_000), retention));
        assert!(!forgotten(ended, at(1_500), retention));
        assert!(forgotten(ended, at(1_501), retention));
        assert!(!forgotten(ended, ended, Duration::ZERO));
        assert!(forgotten(ended, at(1_001), Duration::ZERO));
    }

    /// A process's death takes its leader and what it kept; its replacement is the next
    /// process, connected, and follows no leader until it learns of one. The same for both
    /// modes' TaskManagers.
    #[test]
    fn a_replacement_process_is_the_next_one_and_follows_no_leader_yet() {
        let mut tm = TaskManager::<Pipelined>::new(1);
        assert!(tm.runs(0) && tm.works_for(0));
        tm.outbox.keep(0, rpc());
        assert_eq!(tm.crash(), 0);
        assert!(!tm.runs(0) && !tm.works_for(0) && !tm.outbox.is_holding());
        tm.restart();
        assert!(tm.runs(1) && !tm.runs(0));
        assert!(tm.leader.is_none() && tm.may_register(0));
    }

    fn rpc() -> crate::trace::Rpc {
        crate::trace::Rpc::of_task_manager(crate::trace::Call::ReportDone)
    }
}
