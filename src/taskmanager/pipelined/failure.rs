//! What ends a streaming TaskManager's tasks other than the JobMaster's RPCs: its process's
//! death (`lose`), an injected task failure (`fail_task`), the loss of a partition a task still
//! reads (`partition_lost`) and, without reconciliation, the loss of its JobMaster
//! (`cancel_orphaned`). Each is the TaskManager's own act on its own tasks; the world only
//! routes the fault or the timeout to it.

use super::Pipelined;
use crate::graph::{ChannelInfo, SubtaskId};
use crate::taskmanager::{Lost, TaskManager};
use crate::world::TmCtx;

impl TaskManager<Pipelined> {
    /// Fault `lose_task_manager` (P1.8): the process dies with its tasks and their buffered
    /// data, silently: no task is reported (no process is left to), and each not ended yet is
    /// recorded FAILED after the loss. `None` if no process of it runs. Else the loss, and the
    /// producers whose finished tasks' result partitions died with it: a consumer elsewhere
    /// still reading one loses its connection (`partition_lost`), which the world routes.
    pub(crate) fn lose(&mut self, ctx: &mut TmCtx<'_, '_>) -> Option<(Lost, Vec<SubtaskId>)> {
        if !self.alive {
            return None;
        }
        // The tasks leave their slots with the process, in slot order.
        let tasks: Vec<_> = self
            .mode
            .tasks
            .iter_mut()
            .filter_map(Option::take)
            .collect();
        let lost = self.lost(ctx);
        let mut finished = Vec::new();
        for mut task in tasks {
            if task.state().is_terminal() {
                finished.push(task.subtask());
            } else {
                task.die(&mut self.sender(ctx));
            }
        }
        Some((lost, finished))
    }

    /// Fault `fail_task` (P1.8): its task of `subtask`, if deployed and still running, fails
    /// (FAILED, reported) and leaves its slot; it remembers it (P3.1).
    pub(crate) fn fail_task(&mut self, ctx: &mut TmCtx<'_, '_>, subtask: SubtaskId) {
        let slot = ctx.slot(subtask).slot;
        let failed = match self.lend_task(ctx, slot) {
            Some((task, mut ctx)) if !task.state().is_terminal() => {
                task.fail(&mut ctx);
                true
            }
            _ => false,
        };
        if failed {
            self.leave(slot, ctx.now);
        }
    }

    /// The finished producer of `channel` died with its TaskManager, and its result partition
    /// with it: the consumer here, if still reading that input, loses its connection and fails
    /// (the JobMaster would otherwise never restart the finished producer; the region failover
    /// then runs both again, P1.8).
    pub(crate) fn partition_lost(&mut self, ctx: &mut TmCtx<'_, '_>, channel: &ChannelInfo) {
        let slot = ctx.slot(channel.to).slot;
        let reading = self
            .task(slot)
            .is_some_and(|t| !t.state().is_terminal() && !t.input_ended(channel.input_slot));
        if reading {
            self.fail_task(ctx, channel.to);
        }
    }

    /// Its JobMaster is gone and none took over (P1.8, without reconciliation): its task of
    /// `subtask` is cancelled, unreported (no JobMaster to tell), and leaves its slot
    /// unremembered (no JobMaster will ask for it).
    pub(crate) fn cancel_orphaned(&mut self, ctx: &mut TmCtx<'_, '_>, subtask: SubtaskId) {
        let slot = ctx.slot(subtask).slot;
        if let Some((task, mut ctx)) = self.lend_task(ctx, slot) {
            if !task.state().is_terminal() {
                task.cancel(&mut ctx, false);
            }
        }
        self.clear(slot);
    }
}
