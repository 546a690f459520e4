//! A streaming job's part of a TaskManager ([`Pipelined`]): the tasks in its slots, which
//! subtasks it hosts, and the tasks that ended and left their slot (P3.1). Its pipelined result
//! partitions are the data plane's channels. A task's handlers borrow what they may touch of
//! their TaskManager as a [`Host`] (`TaskManager::lend`), beside the task itself; where each
//! subtask's slot is, is [`placement`]; the streaming world's TaskManagers with that table are
//! [`TaskManagers`].
//!
//! A streaming TaskManager is an actor as a batch one is: its handlers are methods of
//! `TaskManager<Pipelined>` acting through its view of the world (`world::TmCtx`), which lends
//! each of its tasks the task's own (`lend_task`). What it does with an RPC from the JobMaster
//! is `receive.rs`; what ends its tasks otherwise (its process's death, a failed task, a lost
//! input partition, the loss of its JobMaster) is `failure.rs`; its side of P3 is
//! `taskmanager/reconcile.rs`.

mod cluster;
mod failure;
pub mod placement;
mod receive;

pub use cluster::TaskManagers;

use super::{Mode, Outbox, TaskManager};
use crate::graph::SubtaskId;
use crate::status::ExecutionState;
use crate::task::Task;
use crate::world::{TaskCtx, TmCtx};
use sim::Instant;

/// A task that ended and left its slot (failed, or cancelled by a JobMaster), as the
/// TaskManager remembers it for reports (P3.1).
#[derive(Clone, Copy, Debug)]
pub struct Ended {
    pub subtask: SubtaskId,
    pub attempt: u32,
    pub state: ExecutionState,
    pub at: Instant,
}

/// What a streaming job's TaskManager holds besides what every TaskManager keeps.
#[derive(Default)]
pub struct Pipelined {
    /// The current attempt in each slot, while deployed; slot `i` is the `i`th subtask of
    /// `placement::Placement::on` this TaskManager.
    tasks: Vec<Option<Task>>,
    /// Subtasks deployed here, in first-deployment order (slot `i` of a vertex is always on
    /// the same TaskManager, so this outlives processes; a report reads what runs now).
    hosted: Vec<SubtaskId>,
    /// P3.1: tasks that ended and left their slot.
    ended: Vec<Ended>,
}

impl Mode for Pipelined {
    /// What it remembers of ended tasks dies with the process; its tasks died before it
    /// (`TaskManager::lose`: each dies and is recorded as such).
    fn forget(&mut self) {
        debug_assert!(
            self.tasks.iter().all(Option::is_none),
            "tasks outlived their process"
        );
        self.ended.clear();
    }
}

/// What a task reaches of the TaskManager that hosts it: which one it is, its process (an RPC
/// the task sends is from that incarnation) and its outbox (P3.3: a task's RPC to the JobMaster
/// waits behind the ones its TaskManager keeps). Nothing of the other TaskManagers.
pub struct Host<'a> {
    pub index: u32,
    pub process: u32,
    pub alive: bool,
    pub outbox: &'a mut Outbox,
}

impl TaskManager<Pipelined> {
    /// A TaskManager with `slots` empty slots.
    pub fn with_slots(index: u32, slots: usize) -> Self {
        let mut tm = TaskManager::<Pipelined>::new(index);
        tm.mode.tasks = (0..slots).map(|_| None).collect();
        tm
    }

    /// `submitTask`: `task`, an attempt of `subtask`, takes `slot` (the caller has ended what
    /// ran there); an earlier end of the subtask here is no longer what it reports (P3.1).
    pub fn submit(&mut self, slot: u32, task: Task) {
        let subtask = task.subtask();
        let Pipelined {
            tasks,
            hosted,
            ended,
        } = &mut self.mode;
        if !hosted.contains(&subtask) {
            hosted.push(subtask);
        }
        ended.retain(|e| e.subtask != subtask);
        tasks[slot as usize] = Some(task);
    }

    pub fn hosted(&self) -> &[SubtaskId] {
        &self.mode.hosted
    }

    /// The task in `slot`, if one is deployed there.
    #[inline]
    pub fn task(&self, slot: u32) -> Option<&Task> {
        self.mode.tasks[slot as usize].as_ref()
    }

    /// The task in `slot`, if one is deployed there, with what it may touch of this
    /// TaskManager.
    #[inline]
    pub fn lend(&mut self, slot: u32) -> Option<(&mut Task, Host<'_>)> {
        let task = self.mode.tasks[slot as usize].as_mut()?;
        let host = Host {
            index: self.index,
            process: self.process,
            alive: self.alive,
            outbox: &mut self.outbox,
        };
        Some((task, host))
    }

    /// What a task of this TaskManager may touch of it, for a task that has left its slot and
    /// for the TaskManager's own RPCs.
    fn host(&mut self) -> Host<'_> {
        Host {
            index: self.index,
            process: self.process,
            alive: self.alive,
            outbox: &mut self.outbox,
        }
    }

    /// Its task in `slot`, if one is deployed there, with the task's view of the world.
    #[inline]
    pub(crate) fn lend_task<'c, 's>(
        &'c mut self,
        ctx: &'c mut TmCtx<'_, 's>,
        slot: u32,
    ) -> Option<(&'c mut Task, TaskCtx<'c, 's>)> {
        let (task, host) = self.lend(slot)?;
        Some((task, ctx.reaching(host)))
    }

    /// Its own view as a sender: an RPC it sends itself goes through its outbox as its tasks'
    /// do (P3.3), from its process.
    pub(crate) fn sender<'c, 's>(&'c mut self, ctx: &'c mut TmCtx<'_, 's>) -> TaskCtx<'c, 's> {
        ctx.reaching(self.host())
    }

    /// Hands an event to its task in `slot` if one is deployed there and, given `attempt`, it
    /// is that one (`world::Ctx::on_task`, from the TaskManager): `None` if there was no such
    /// task; else whether the task failed itself (F1.9: it must then leave its slot).
    pub(crate) fn on_task<'s>(
        &mut self,
        ctx: &mut TmCtx<'_, 's>,
        slot: u32,
        attempt: Option<u32>,
        handle: impl FnOnce(&mut Task, &mut TaskCtx<'_, 's>),
    ) -> Option<bool> {
        let (task, mut ctx) = self.lend_task(ctx, slot)?;
        if attempt.is_some_and(|a| a != task.attempt()) {
            return None;
        }
        handle(task, &mut ctx);
        Some(task.state() == ExecutionState::Failed)
    }

    /// The task in `slot` ended and leaves it: the TaskManager remembers it (P3.1).
    pub fn leave(&mut self, slot: u32, now: Instant) {
        if let Some(task) = self.mode.tasks[slot as usize].take() {
            self.mode.ended.push(Ended {
                subtask: task.subtask(),
                attempt: task.attempt(),
                state: task.state(),
                at: task.ended_at().unwrap_or(now),
            });
        }
    }

    /// The task in `slot` leaves it unremembered: the TaskManager cancelled it for want of a
    /// JobMaster (P1.8), and no JobMaster will ask for it.
    pub fn clear(&mut self, slot: u32) {
        self.mode.tasks[slot as usize] = None;
    }

    /// The remembered end of `subtask`'s last attempt here, if it left its slot.
    pub fn ended(&self, subtask: SubtaskId) -> Option<Ended> {
        self.mode
            .ended
            .iter()
            .rev()
            .find(|e| e.subtask == subtask)
            .copied()
    }
}

#[cfg(test)]
mod tests;
