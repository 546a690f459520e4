//! The TaskManager side of reconciliation (P3), for both kinds of job: the report to a newly
//! elected JobMaster (P3.2) and the RPCs kept while no JobMaster takes them, retried in send
//! order (P3.3, with the [`Outbox`](super::Outbox) of both modes).
//!
//! Both are methods of the TaskManager of their mode, each acting through its mode's view of
//! the world (`world::TmCtx`, `world::batch::TmCtx`): the reports differ in what a TaskManager
//! hosts (a streaming one its tasks, a batch one its attempts, splits, inputs and partitions).

use super::batch::Blocking;
use super::{Pipelined, TaskManager};
use crate::batch::data;
use crate::bug::Bug;
use crate::net::LinkId;
use crate::source_mutant::{on, SourceMutant};
use crate::status::ExecutionState;
use crate::trace::{Address, Call, Rpc, TraceEvent};
use crate::world::{batch, Act, TmCtx};
use sim::Duration;

// ---- streaming jobs ----------------------------------------------------------------------

impl TaskManager<Pipelined> {
    /// P3.3: it keeps an RPC no JobMaster accepted, and retries it soon if a JobMaster is there
    /// to take it (or else once one is elected).
    pub(crate) fn keep(&mut self, ctx: &mut TmCtx<'_, '_>, seq: u64, rpc: Rpc) {
        let from = Address::TaskManager(self.index);
        ctx.record(TraceEvent::RpcRefused { from, rpc });
        ctx.io.stats.rpcs_kept += 1;
        if ctx.config.bug == Some(Bug::DropRefusedRpc) {
            return; // the bug: the TaskManager forgets it
        }
        self.outbox.keep(seq, rpc);
        if ctx.io.membership.jobmaster_alive {
            self.schedule_retry(ctx);
        }
    }

    /// P3.3: schedules the retry of its outbox (`Outbox::schedule_retry`).
    pub(crate) fn schedule_retry(&mut self, ctx: &mut TmCtx<'_, '_>) {
        self.outbox
            .schedule_retry(ctx.sched, self.index, self.process);
    }

    /// P3.3: its process `process`, if still the one running, sends the kept RPCs again to the
    /// leader it follows, in their original order, once none of its RPCs is on the wire (so a
    /// resent one never overtakes an older one).
    pub(crate) fn retry_parked(&mut self, ctx: &mut TmCtx<'_, '_>, process: u32) {
        let Some(leader) = self.leader.filter(|_| self.runs(process)) else {
            return; // the process died, and its outbox with it
        };
        let resend_now = ctx.config.bug == Some(Bug::ResendBeforeDrained);
        if !resend_now && ctx.io.rpc.in_flight_from(self.index).next().is_some() {
            // Older RPCs are still on the wire: resent now, the kept ones would land behind
            // them. Holding lets the wire drain.
            self.outbox.retry_later();
            self.schedule_retry(ctx);
            return;
        }
        let mut kept = self.outbox.take();
        // source mutant resend-newest-first
        let next = |kept: &mut std::collections::BTreeMap<_, _>| {
            if on(SourceMutant::ResendNewestFirst) {
                kept.pop_last()
            } else {
                kept.pop_first()
            }
        };
        let from = Address::TaskManager(self.index);
        while let Some((seq, rpc)) = next(&mut kept) {
            ctx.io.stats.rpcs_resent += 1;
            self.sender(ctx)
                .send_numbered(from, Address::JobMaster, leader, seq, rpc);
        }
    }

    /// P3.2: it reports to a newly elected JobMaster every execution it hosts, and every one
    /// that ended within `retention` (P3.1), then says its report is complete.
    pub(crate) fn report(&mut self, ctx: &mut TmCtx<'_, '_>, retention: Duration) {
        let from = Address::TaskManager(self.index);
        for i in 0..self.hosted().len() {
            let subtask = self.hosted()[i];
            let (attempt, state, ended_at) = match self.task(ctx.slot(subtask).slot) {
                Some(t) => (t.attempt(), t.state(), t.ended_at()),
                // P3.1: a task that left its slot is remembered for the retention.
                _ if ctx.config.bug == Some(Bug::ForgetEndedTasks) => continue,
                _ => match self.ended(subtask) {
                    Some(e) => (e.attempt, e.state, Some(e.at)),
                    None => continue,
                },
            };
            if let Some(at) = ended_at {
                if ctx.config.bug == Some(Bug::NoTerminalRetention)
                    || super::forgotten(at, ctx.now, retention)
                {
                    continue; // forgotten
                }
            }
            let parallelism = ctx.graph.vertex_of(subtask).parallelism;
            let call = Call::ReportExecution { state, parallelism };
            let rpc = Rpc {
                subtask,
                attempt,
                call,
            };
            self.sender(ctx).send(from, Address::JobMaster, rpc);
        }
        let done = Rpc::of_task_manager(Call::ReportDone);
        self.sender(ctx).send(from, Address::JobMaster, done);
        // A question the previous JobMaster took but never answered is asked again of its
        // successor: an `option2` "finishing" report (P1.2) whose answer died with the old
        // leader would leave its task waiting forever.
        for i in 0..self.hosted().len() {
            let subtask = self.hosted()[i];
            let Some(t) = self
                .task(ctx.slot(subtask).slot)
                .filter(|t| t.awaits_finishing_answer())
            else {
                continue;
            };
            let rpc = Rpc::new(subtask, t.attempt(), Call::Finishing);
            // Unless the question itself is still kept or on its way: then it is not lost.
            let pending = self
                .outbox
                .kept()
                .chain(ctx.io.rpc.in_flight_from(self.index))
                .any(|r| r == rpc);
            if !pending {
                self.sender(ctx).send(from, Address::JobMaster, rpc);
            }
        }
    }
}

// ---- batch jobs --------------------------------------------------------------------------

impl TaskManager<Blocking> {
    /// P3.2: every execution this TaskManager hosts (running, or ended within the retention
    /// of P3.1), a source's splits, every partition it holds; then that the report is done.
    pub(crate) fn send_reports(&mut self, ctx: &mut batch::TmCtx<'_, '_>) {
        let now = ctx.now();
        let (_, retention) = ctx.reconcile().expect("reconciling");
        let mut reports = Vec::new();
        for t in self.mode.originals() {
            let subtask = t.subtask;
            let forgotten = t
                .ended
                .is_some_and(|ended| super::forgotten(ended, now, retention));
            if forgotten {
                continue;
            }
            reports.push(Rpc::new(
                subtask,
                t.attempt,
                Call::ReportExecution {
                    state: t.state,
                    parallelism: t.parallelism,
                },
            ));
            for &split in &t.splits {
                reports.push(Rpc::new(subtask, t.attempt, Call::ReportSplit(split)));
            }
            for &(producer, producer_attempt) in &t.inputs {
                reports.push(Rpc::new(
                    subtask,
                    t.attempt,
                    Call::ReportInput {
                        producer,
                        producer_attempt,
                    },
                ));
            }
        }
        let record_bytes = ctx.config().record_bytes;
        for p in &self.mode.partitions {
            reports.push(Rpc::new(
                p.producer,
                p.attempt,
                Call::ReportPartition {
                    bytes: data::total_records(&p.fragments) * record_bytes,
                },
            ));
        }
        reports.push(Rpc::of_task_manager(Call::ReportDone));
        // A split request the old JobMaster answered too late (fenced) is asked again: the
        // new JobMaster's enumerator answers it once rebuilt. One that is kept, or still on
        // the wire (it will be refused and kept, or applied), is not: it would be answered
        // twice.
        for t in self.mode.originals() {
            let subtask = t.subtask;
            let kept = self
                .outbox
                .kept()
                .chain(self.mode.wire.values().copied())
                .any(|m| {
                    matches!(m, Rpc { subtask: s, attempt, call: Call::RequestSplit }
                    if s == subtask && attempt == t.attempt)
                });
            if t.awaiting_split && t.state == ExecutionState::Running && !kept {
                reports.push(Rpc::new(subtask, t.attempt, Call::RequestSplit));
            }
        }
        for msg in reports {
            self.send_to_jobmaster(ctx, msg);
        }
        self.schedule_retry(ctx);
    }

    /// P3.3: schedules the retry of its outbox (`Outbox::schedule_retry`).
    fn schedule_retry(&mut self, ctx: &mut batch::TmCtx<'_, '_>) {
        let (tm, process) = (self.index, self.process);
        ctx.schedule_retry(&mut self.outbox, tm, process);
    }

    /// P3.3: send the kept RPCs again, in their original order, once none of its RPCs is on
    /// the wire (so a resent one never overtakes an older one).
    pub(crate) fn retry_parked(&mut self, ctx: &mut batch::TmCtx<'_, '_>, process: u32) {
        if self.process != process {
            return;
        }
        self.outbox.retry_later();
        if !self.alive || !self.connected || self.leader.is_none() || !self.outbox.is_holding() {
            return;
        }
        if self.mode.in_flight > 0 {
            self.schedule_retry(ctx);
            return;
        }
        ctx.resending(self.index);
        for (seq, msg) in self.outbox.take() {
            ctx.count_resent();
            self.send_numbered(ctx, msg, seq);
        }
    }

    /// P3.3: its RPC (of its process `from_process`) came back from a connection that reset
    /// under it: it learns so and keeps a task's RPC, unless it died since.
    pub(crate) fn keep_after_reset(
        &mut self,
        ctx: &mut batch::TmCtx<'_, '_>,
        link: LinkId,
        (seq, from_process): (u64, u32),
        msg: Rpc,
    ) {
        let keep = ctx.reconcile().is_some()
            && matches!(link.from(), Address::TaskManager(_))
            && msg.is_task_rpc()
            && self.runs(from_process);
        if keep {
            self.keep_task_rpc(ctx, seq, msg);
        }
    }

    /// P3.3: it keeps its task RPC number `seq` for a retry.
    pub(crate) fn keep_task_rpc(&mut self, ctx: &mut batch::TmCtx<'_, '_>, seq: u64, msg: Rpc) {
        self.outbox.keep(seq, msg);
        ctx.count_kept();
        self.schedule_retry(ctx);
    }
}
