//! The TaskManager side of reconciliation (P3) in a streaming world: keeping refused RPCs and
//! retrying them (P3.3), and the report to a newly elected JobMaster (P3.2).

use super::{Ctx, Event};
use crate::bug::Bug;
use crate::graph::SubtaskId;
use crate::task::Task;
use crate::taskmanager::{outbox, TaskManager};
use crate::trace::{Address, Call, Rpc, TraceEvent};
use sim::Duration;

/// P3.3: TaskManager `tm` keeps an RPC no JobMaster accepted, and retries it soon if a
/// JobMaster is there to take it (or else once one is elected).
pub(super) fn keep(ctx: &mut Ctx<'_, '_>, tm: u32, seq: u64, rpc: Rpc) {
    let from = Address::TaskManager(tm);
    ctx.record(TraceEvent::RpcRefused { from, rpc });
    ctx.io.stats.rpcs_kept += 1;
    if ctx.config.bug == Some(Bug::DropRefusedRpc) {
        return; // the bug: the TaskManager forgets it
    }
    ctx.io.outboxes[tm as usize].keep(seq, rpc);
    if ctx.io.membership.jobmaster_alive {
        schedule_retry(ctx, tm);
    }
}

/// P3.3: schedules the retry of TaskManager `task_manager`'s outbox, unless it is empty or
/// one is scheduled.
pub(super) fn schedule_retry(ctx: &mut Ctx<'_, '_>, task_manager: u32) {
    if ctx.io.outboxes[task_manager as usize].claim_retry() {
        let process = ctx.io.membership.task_manager[task_manager as usize];
        ctx.sched.after(
            outbox::RETRY,
            Event::RetryParked {
                task_manager,
                process,
            },
        );
    }
}

/// P3.2: TaskManager `tm` reports to a newly elected JobMaster every execution it hosts, and
/// every one that ended within `retention` (P3.1), then says its report is complete.
pub(super) fn report(
    ctx: &mut Ctx<'_, '_>,
    tm: &TaskManager,
    tasks: &[Option<Task>],
    retention: Duration,
) {
    let from = Address::TaskManager(tm.index());
    for &subtask in tm.hosted() {
        let (attempt, state, ended_at) = match &tasks[subtask.index()] {
            Some(t) if t.task_manager() == tm.index() => (t.attempt(), t.state(), t.ended_at()),
            _ => match tm.ended(subtask) {
                Some(e) => (e.attempt, e.state, Some(e.at)),
                None => continue,
            },
        };
        if let Some(at) = ended_at {
            if ctx.config.bug == Some(Bug::NoTerminalRetention) || at + retention < ctx.now {
                continue; // forgotten
            }
        }
        let call = Call::ReportExecution(state);
        ctx.send(
            from,
            Address::JobMaster,
            Rpc {
                subtask,
                attempt,
                call,
            },
        );
    }
    let done = Rpc {
        subtask: SubtaskId(0),
        attempt: 0,
        call: Call::ReportDone,
    };
    ctx.send(from, Address::JobMaster, done);
    // A question the previous JobMaster took but never answered is asked again of its
    // successor: an `option2` "finishing" report (P1.2) whose answer died with the old leader
    // would leave its task waiting forever.
    for &subtask in tm.hosted() {
        if let Some(t) = tasks[subtask.index()]
            .as_ref()
            .filter(|t| t.task_manager() == tm.index() && t.awaits_finishing_answer())
        {
            let rpc = Rpc {
                subtask,
                attempt: t.attempt(),
                call: Call::Finishing,
            };
            // Unless the question itself is still kept or on its way: then it is not lost.
            let pending = ctx.io.outboxes[tm.index() as usize]
                .kept()
                .chain(ctx.io.rpc.in_flight_from(tm.index()))
                .any(|r| r == rpc);
            if !pending {
                ctx.send(from, Address::JobMaster, rpc);
            }
        }
    }
}
