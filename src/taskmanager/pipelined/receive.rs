//! A streaming TaskManager receiving an RPC from the JobMaster (Flink's `TaskExecutor`
//! gateway): `submitTask` deploys an attempt into its subtask's slot, `cancelTask` cancels it,
//! and any other call goes to the attempt it names. The TaskManager acts through the world's
//! view (`Ctx`), which lends each of its tasks the task's own view (`Ctx::lend`).

use crate::task::Task;
use crate::trace::{Address, Call, Rpc};
use crate::world::{Ctx, TaskCtx};

/// TaskManager `tm` receives `rpc` from the JobMaster.
pub(crate) fn receive(ctx: &mut Ctx<'_, '_>, tm: u32, rpc: Rpc) {
    let subtask = rpc.subtask;
    match rpc.call {
        Call::SubmitTask(restore) => {
            if let Some((old, mut ctx)) = ctx.lend(subtask) {
                if !old.state().is_terminal() {
                    // The slot still runs a previous attempt: it is cancelled first.
                    old.cancel(&mut ctx, false);
                }
            }
            let task = Task::new(ctx, subtask, rpc.attempt, tm, restore);
            let slot = ctx.task_managers.place(subtask);
            debug_assert_eq!(slot.task_manager, tm, "P0: a subtask's slot is fixed");
            ctx.task_managers.get_mut(tm).submit(slot.slot, task);
            ctx.on_task(subtask, None, Task::start);
        }
        Call::CancelTask => {
            let cancelled = match ctx.lend(subtask) {
                Some((task, mut ctx))
                    if task.attempt() == rpc.attempt && !task.state().is_terminal() =>
                {
                    task.cancel(&mut ctx, true);
                    true
                }
                _ => false,
            };
            if cancelled {
                ctx.task_managers.leave(subtask, ctx.now);
            }
        }
        call => {
            let on_rpc = |task: &mut Task, ctx: &mut TaskCtx| task.on_rpc(ctx, call);
            match (ctx.on_task(subtask, Some(rpc.attempt), on_rpc), call) {
                // A task that failed itself (F1.9) leaves its slot.
                (Some(true), _) => ctx.task_managers.leave(subtask, ctx.now),
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
                    ctx.send(Address::TaskManager(tm), Address::JobMaster, failed);
                }
                // Other calls have nothing to deliver to.
                (None, _) => {}
            }
        }
    }
}
