//! The JobMaster: schedules the job, tracks its *view* of every execution (which lags the tasks
//! by RPC latency) and decides the job's status.

pub mod transitions;

use crate::bug::Bug;
use crate::checkpoint::CheckpointCoordinator;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::scenario::{Checkpointing, Cluster};
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{Address, Call, Rpc, TraceEvent};
use crate::world::Ctx;

/// The JobMaster's record of one subtask's current attempt: its *view*, which lags the task.
#[derive(Clone, Copy, Debug)]
pub struct Execution {
    pub attempt: u32,
    pub state: ExecutionState,
}

pub struct JobMaster {
    status: JobStatus,
    executions: Vec<Execution>,
    /// Which TaskManager hosts each subtask: subtask `i` of every vertex shares slot `i`
    /// (Flink's default slot sharing), and slots fill TaskManager after TaskManager.
    placement: Vec<u32>,
    finished: usize,
    checkpoints: Option<CheckpointCoordinator>,
}

impl JobMaster {
    pub fn new(
        graph: &ExecutionGraph,
        cluster: Cluster,
        checkpointing: Option<Checkpointing>,
        bug: Option<Bug>,
    ) -> JobMaster {
        let placement = graph
            .subtasks
            .iter()
            .map(|s| s.index / cluster.slots_per_task_manager)
            .collect();
        JobMaster {
            status: JobStatus::Initializing,
            executions: vec![
                Execution {
                    attempt: 0,
                    state: ExecutionState::Created,
                };
                graph.subtasks.len()
            ],
            placement,
            finished: 0,
            checkpoints: checkpointing
                .map(|c| CheckpointCoordinator::new(c, bug, graph.subtasks.len())),
        }
    }

    pub fn status(&self) -> JobStatus {
        self.status
    }

    /// Submission: initialize the job and deploy every subtask (streaming schedules all at
    /// once, Flink's `PipelinedRegionSchedulingStrategy` with one region per pipelined job).
    pub fn start(&mut self, ctx: &mut Ctx<'_, '_>) {
        self.set_status(ctx, JobStatus::Created);
        self.set_status(ctx, JobStatus::Running);
        for i in 0..self.executions.len() {
            let subtask = SubtaskId(i as u32);
            self.set_execution(ctx, subtask, ExecutionState::Scheduled);
            self.set_execution(ctx, subtask, ExecutionState::Deploying);
            ctx.send(
                Address::JobMaster,
                Address::TaskManager(self.placement[i]),
                Rpc {
                    subtask,
                    attempt: self.executions[i].attempt,
                    call: Call::SubmitTask,
                },
            );
        }
        if let Some(cc) = &mut self.checkpoints {
            cc.start(ctx);
        }
    }

    /// An RPC from a TaskManager.
    pub fn on_rpc(&mut self, ctx: &mut Ctx<'_, '_>, rpc: Rpc) {
        let (view, placement) = (&self.executions[..], &self.placement[..]);
        match (rpc.call, &mut self.checkpoints) {
            (Call::UpdateTaskExecutionState(state), _) => {
                self.on_task_state(ctx, rpc.subtask, rpc.attempt, state)
            }
            (Call::AcknowledgeCheckpoint { checkpoint, .. }, Some(cc)) => {
                cc.on_acknowledge(ctx, view, placement, rpc, checkpoint)
            }
            (Call::DeclineCheckpoint { checkpoint, reason }, Some(cc)) => {
                cc.on_decline(ctx, view, placement, checkpoint, reason)
            }
            (Call::TriggerMissed(checkpoint), Some(cc)) => {
                cc.on_trigger_missed(ctx, view, placement, rpc.subtask, checkpoint)
            }
            (Call::Finishing, Some(cc)) => cc.on_finishing(ctx, view, placement, rpc.subtask),
            (call, _) => unreachable!("{call:?} is never sent to the JobMaster here"),
        }
    }

    pub fn on_checkpoint_tick(&mut self, ctx: &mut Ctx<'_, '_>) {
        if let (Some(cc), JobStatus::Running) = (&mut self.checkpoints, self.status) {
            cc.on_tick(ctx, &self.executions, &self.placement);
        }
    }

    pub fn on_checkpoint_trigger_at(&mut self, ctx: &mut Ctx<'_, '_>) {
        if let (Some(cc), JobStatus::Running) = (&mut self.checkpoints, self.status) {
            cc.on_trigger_at(ctx, &self.executions, &self.placement);
        }
    }

    pub fn on_checkpoint_expired(&mut self, ctx: &mut Ctx<'_, '_>, checkpoint: u64) {
        if let Some(cc) = &mut self.checkpoints {
            cc.on_expired(ctx, &self.executions, &self.placement, checkpoint);
        }
    }

    /// A TaskManager reported a task's new state (`updateTaskExecutionState`).
    pub fn on_task_state(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        subtask: SubtaskId,
        attempt: u32,
        state: ExecutionState,
    ) {
        if self.executions[subtask.index()].attempt != attempt {
            return; // a report about an attempt that has been replaced
        }
        self.set_execution(ctx, subtask, state);
        if state == ExecutionState::Finished {
            self.finished += 1;
            if self.finished == self.executions.len() {
                self.set_status(ctx, JobStatus::Finished);
                if let Some(cc) = &mut self.checkpoints {
                    cc.on_job_ended(ctx);
                }
            }
        }
    }

    fn set_status(&mut self, ctx: &mut Ctx<'_, '_>, to: JobStatus) {
        let from = std::mem::replace(&mut self.status, to);
        ctx.record(TraceEvent::JobStatus { from, to });
    }

    fn set_execution(&mut self, ctx: &mut Ctx<'_, '_>, subtask: SubtaskId, to: ExecutionState) {
        let execution = &mut self.executions[subtask.index()];
        let from = std::mem::replace(&mut execution.state, to);
        ctx.record(TraceEvent::ExecutionState {
            subtask,
            attempt: execution.attempt,
            from,
            to,
        });
    }
}
