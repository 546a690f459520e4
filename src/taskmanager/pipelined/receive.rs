//! A streaming TaskManager receiving an RPC from the JobMaster (Flink's `TaskExecutor`
//! gateway): `submitTask` deploys an attempt into its subtask's slot, `cancelTask` cancels it,
//! and any other call goes to the attempt it names. The TaskManager acts through its view of
//! the world (`TmCtx`), which it lends each of its tasks as the task's own (`lend_task`).

use super::Pipelined;
use crate::task::Task;
use crate::taskmanager::TaskManager;
use crate::trace::{Address, Call, Rpc};
use crate::world::{TaskCtx, TmCtx};

impl TaskManager<Pipelined> {
    /// It receives `rpc` from the JobMaster.
    pub(crate) fn receive(&mut self, ctx: &mut TmCtx<'_, '_>, rpc: Rpc) {
        let subtask = rpc.subtask;
        let place = ctx.slot(subtask);
        debug_assert_eq!(
            place.task_manager, self.index,
            "P0: a subtask's slot is fixed"
        );
        let slot = place.slot;
        match rpc.call {
            Call::SubmitTask(restore) => {
                if let Some((old, mut ctx)) = self.lend_task(ctx, slot) {
                    if !old.state().is_terminal() {
                        // The slot still runs a previous attempt: it is cancelled first.
                        old.cancel(&mut ctx, false);
                    }
                }
                let task = Task::new(ctx, subtask, rpc.attempt, self.index, restore);
                self.submit(slot, task);
                self.on_task(ctx, slot, None, Task::start);
            }
            Call::CancelTask => {
                let cancelled = match self.lend_task(ctx, slot) {
                    Some((task, mut ctx))
                        if task.attempt() == rpc.attempt && !task.state().is_terminal() =>
                    {
                        task.cancel(&mut ctx, true);
                        true
                    }
                    _ => false,
                };
                if cancelled {
                    self.leave(slot, ctx.now);
                }
            }
            call => {
                let on_rpc = |task: &mut Task, ctx: &mut TaskCtx| task.on_rpc(ctx, call);
                match (self.on_task(ctx, slot, Some(rpc.attempt), on_rpc), call) {
                    // A task that failed itself (F1.9) leaves its slot.
                    (Some(true), _) => self.leave(slot, ctx.now),
                    (Some(false), _) => {}
                    // F1.9: the TaskManager no longer hosts the attempt; a trigger fails
                    // ("checkpoint request for unknown task"), and the coordinator hears of it.
                    (
                        None,
                        Call::TriggerCheckpoint(n) | Call::TriggerSavepoint { checkpoint: n, .. },
                    ) => {
                        let failed = Rpc {
                            call: Call::TriggerFailed(n),
                            ..rpc
                        };
                        let from = Address::TaskManager(self.index);
                        self.sender(ctx).send(from, Address::JobMaster, failed);
                    }
                    // Other calls have nothing to deliver to.
                    (None, _) => {}
                }
            }
        }
    }
}
