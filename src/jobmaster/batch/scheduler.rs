//! The adaptive batch scheduler (P2.1): a vertex is initialized once its inputs finish (its
//! parallelism from their bytes when `auto`), a subtask is deployed once its inputs are
//! available and a slot is free; failover, cancels, resets (P2.4 step 4) and releases.

use crate::batch::data;
use crate::batch::events::{JobEvent, Location};
use crate::batch::recovery::{self, Plan};
use crate::bug::Bug;
use crate::coordinator::Enumerator;
use crate::graph::{SubtaskId, VertexId};
use crate::jobmaster::batch::speculation::may_finish;
use crate::jobmaster::batch::AdaptiveBatch;
use crate::jobmaster::batch::Execution;
use crate::jobmaster::With;
use crate::status::{ExecutionState, JobStatus};
use crate::taskmanager::batch::Descriptor;
use crate::trace::{Call, RerunReason, Restore, Rpc, TraceEvent};
use crate::world::batch::Ctx;
use crate::world::{Act, Event};

impl With<'_, AdaptiveBatch> {
    /// Initializes the vertices whose inputs finished, deploys what can run, and ends the job
    /// when every subtask finished.
    pub(crate) fn schedule(&mut self, ctx: &mut Ctx<'_, '_>) {
        let now = ctx.now();
        if self.leader.status != JobStatus::Running {
            return;
        }
        for &v in &ctx.cluster.graph.topological_order.clone() {
            if self.scheduler.parallelism[v.index()].is_some() {
                continue;
            }
            let inputs = &ctx.cluster.graph.vertices[v.index()].inputs;
            let ready = inputs.iter().all(|&e| {
                let up = ctx.cluster.graph.edges[e].from;
                self.scheduler.parallelism[up.index()].is_some() && self.vertex_finished(ctx, up)
            });
            if ready {
                self.initialize(ctx, v);
            }
        }
        let order = ctx.cluster.graph.topological_order.clone();
        for v in order {
            let Some(p) = self.scheduler.parallelism[v.index()] else {
                continue;
            };
            let first = ctx.cluster.graph.vertices[v.index()].first;
            for s in (first..first + p).map(SubtaskId) {
                let e = self.scheduler.exec[s.index()];
                if e.state == ExecutionState::Created
                    && e.hold_until <= now
                    && self.inputs_available(ctx, s)
                    && !self.try_deploy(ctx, s)
                {
                    break;
                }
            }
        }
        let all_done = (0..ctx.cluster.graph.vertices.len()).all(|v| {
            self.scheduler.parallelism[v].is_some() && self.vertex_finished(ctx, VertexId(v as u32))
        });
        if all_done {
            self.finish_job(ctx);
        }
    }

    /// P2.7: the job is FINISHED and its sinks' output committed; its result reaches HA
    /// storage `job_result_delay` later, and only from then on is the job over for good.
    pub(crate) fn finish_job(&mut self, ctx: &mut Ctx<'_, '_>) {
        self.set_job_status(ctx, JobStatus::Finished);
        self.commit(ctx);
        let incarnation = self.leader.incarnation;
        ctx.sched.after(
            ctx.cluster.batch.job_result_delay,
            Event::JobResultWritten { incarnation },
        );
    }

    pub(crate) fn inputs_available(&self, ctx: &Ctx<'_, '_>, s: SubtaskId) -> bool {
        data::producers(&ctx.cluster.graph, &self.scheduler.parallelism, s)
            .iter()
            .all(|(_, p)| {
                self.scheduler.exec[p.index()].state == ExecutionState::Finished
                    && self.scheduler.tracker[p.index()].is_some()
            })
    }

    /// P0: a registered TaskManager with a free slot that `usable` admits, the one with the
    /// most free slots first (the lowest number on a tie).
    pub(crate) fn free_task_manager(
        &self,
        ctx: &Ctx<'_, '_>,
        usable: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let slots = ctx.cluster.slots;
        (0..ctx.tms.len())
            .filter(|&t| {
                self.leader.task_managers[t].is_some()
                    && self.scheduler.slots_used[t] < slots
                    && usable(t)
            })
            .max_by_key(|&t| (slots - self.scheduler.slots_used[t], std::cmp::Reverse(t)))
    }

    /// What a deployment of `s` as `attempt` carries: its inputs' partitions as the tracker
    /// knows them, and its vertex's parallelism.
    pub(crate) fn descriptor_for(
        &self,
        ctx: &Ctx<'_, '_>,
        s: SubtaskId,
        attempt: u32,
    ) -> Descriptor {
        let inputs: Vec<(usize, SubtaskId, u32, Location)> =
            data::producers(&ctx.cluster.graph, &self.scheduler.parallelism, s)
                .into_iter()
                .map(|(edge, p)| {
                    let (attempt, location, _) =
                        self.scheduler.tracker[p.index()].expect("available");
                    (edge, p, attempt, location)
                })
                .collect();
        let vertex = ctx.cluster.graph.subtasks[s.index()].vertex;
        Descriptor {
            attempt,
            parallelism: self.scheduler.parallelism[vertex.index()].expect("an initialized vertex"),
            inputs,
        }
    }

    pub(crate) fn try_deploy(&mut self, ctx: &mut Ctx<'_, '_>, s: SubtaskId) -> bool {
        let now = ctx.now();
        let bug = self.bug == Some(Bug::DeployBeforeReport);
        let Some(tm) = self.free_task_manager(ctx, |t| self.scheduler.accounted[t] || bug) else {
            return false;
        };
        let attempt = self.scheduler.exec[s.index()].attempt;
        ctx.cluster.descriptors[s.index()] = self.descriptor_for(ctx, s, attempt);
        self.scheduler.slots_used[tm] += 1;
        self.scheduler.exec[s.index()].placed = Some(tm as u32);
        self.scheduler.exec[s.index()].deployed_at = Some(now);
        self.exec_state(ctx, s, ExecutionState::Deploying);
        ctx.record(TraceEvent::Deployed {
            subtask: s,
            attempt,
            task_manager: tm as u32,
            speculative: false,
        });
        self.arm_speculation_check(ctx);
        self.send_to_task_manager(
            ctx,
            tm as u32,
            Rpc::new(s, attempt, Call::SubmitTask(Restore::FRESH)),
        );
        true
    }

    /// P2.1: a vertex is initialized once its inputs finished; an `"auto"` vertex gets its
    /// parallelism from the bytes they produced.
    pub(crate) fn initialize(&mut self, ctx: &mut Ctx<'_, '_>, v: VertexId) {
        let vertex = &ctx.cluster.graph.vertices[v.index()];
        let input_bytes: u64 = vertex
            .inputs
            .iter()
            .flat_map(|&e| {
                let up = ctx.cluster.graph.edges[e].from;
                let first = ctx.cluster.graph.vertices[up.index()].first;
                let p = self.scheduler.parallelism[up.index()].unwrap_or(0);
                (first..first + p).map(|s| self.scheduler.tracker[s as usize].map_or(0, |t| t.2))
            })
            .sum();
        let adaptive = ctx.cluster.adaptive[v.index()];
        let parallelism = if adaptive {
            let a = ctx.cluster.batch.adaptive;
            let tasks = if self.bug == Some(Bug::AdaptiveRoundsDown) {
                input_bytes / a.bytes_per_task
            } else {
                input_bytes.div_ceil(a.bytes_per_task)
            };
            (tasks as u32).clamp(a.min, a.max)
        } else {
            vertex.parallelism
        };
        self.set_parallelism(ctx, v, parallelism);
        ctx.record(TraceEvent::VertexInitialized {
            vertex: v,
            parallelism,
            input_bytes,
            adaptive,
        });
        self.log(
            ctx,
            JobEvent::VertexInitialized {
                vertex: v,
                parallelism,
            },
        );
    }

    pub(crate) fn set_parallelism(&mut self, ctx: &Ctx<'_, '_>, v: VertexId, p: u32) {
        let splits = ctx.cluster.batch.coordinators[v.index()].map(|c| c.splits);
        self.scheduler.parallelism[v.index()] = Some(p);
        if let Some(splits) = splits {
            if self.scheduler.enumerators[v.index()].is_none() {
                self.scheduler.enumerators[v.index()] = Some(Enumerator::new(splits, p));
            }
        }
    }

    pub(crate) fn commit(&mut self, ctx: &mut Ctx<'_, '_>) {
        let mut outputs = Vec::new();
        for (v, vertex) in ctx.cluster.graph.vertices.iter().enumerate() {
            if !vertex.outputs.is_empty() {
                continue;
            }
            let p = self.scheduler.parallelism[v].expect("finished");
            for s in (vertex.first..vertex.first + p).map(SubtaskId) {
                let attempt = self.scheduler.exec[s.index()].attempt;
                let fragments = ctx
                    .cluster
                    .staged
                    .iter()
                    .find(|(t, a, _)| *t == s && *a == attempt)
                    .map(|(_, _, f)| f.clone())
                    .unwrap_or_default();
                outputs.push((s, fragments));
            }
        }
        for (s, fragments) in outputs {
            // P2.7: one output per sink subtask (a file per subtask index): a JobManager that
            // finishes a recovered job again replaces what the one before committed.
            ctx.cluster.committed.retain(|(t, _)| *t != s);
            let records = data::total_records(&fragments);
            ctx.record(TraceEvent::OutputCommitted {
                subtask: s,
                records,
            });
            ctx.cluster.committed.push((s, fragments));
        }
    }

    /// Resets `seeds` and everything P2.4 step 4's region expansion adds, then schedules after
    /// the restart delay (a task failure, a lost partition, a lost TaskManager).
    pub(crate) fn failover(&mut self, ctx: &mut Ctx<'_, '_>, seeds: Vec<(SubtaskId, RerunReason)>) {
        ctx.cluster.failovers += 1;
        if let Err(exhausted) = self.leader.count_restart(ctx.cluster.max_restarts) {
            // P1.8: the strategy gave up after `max_restarts` restarts.
            ctx.record(exhausted);
            let running: Vec<SubtaskId> = (0..ctx.cluster.graph.subtasks.len() as u32)
                .map(SubtaskId)
                .filter(|s| {
                    matches!(
                        self.scheduler.exec[s.index()].state,
                        ExecutionState::Deploying
                            | ExecutionState::Initializing
                            | ExecutionState::Running
                    )
                })
                .collect();
            self.set_job_status(ctx, JobStatus::Failing);
            for s in running {
                self.cancel(ctx, s);
            }
            self.set_job_status(ctx, JobStatus::Failed);
            return;
        }
        let plan = {
            recovery::expand(
                &ctx.cluster.graph,
                &recovery::View {
                    parallelism: &self.scheduler.parallelism,
                    finished: &self
                        .scheduler
                        .exec
                        .iter()
                        .map(|e| e.state != ExecutionState::Created)
                        .collect::<Vec<_>>(),
                    tracked: &self
                        .scheduler
                        .tracker
                        .iter()
                        .map(Option::is_some)
                        .collect::<Vec<_>>(),
                    remembered: &self.scheduler.remembered,
                },
                seeds,
                self.bug,
            )
        };
        self.reset(ctx, &plan, true);
        let incarnation = self.leader.incarnation;
        ctx.sched.after(
            ctx.cluster.restart_delay,
            Event::RestartDelay { incarnation },
        );
    }

    pub(crate) fn cancel(&mut self, ctx: &mut Ctx<'_, '_>, s: SubtaskId) {
        // P2.8: a failover or a reset ends every attempt of the subtask.
        self.cancel_spec(ctx, s);
        let e = self.scheduler.exec[s.index()];
        if may_finish(e.state) {
            self.exec_state(ctx, s, ExecutionState::Canceling);
            self.exec_state(ctx, s, ExecutionState::Canceled);
            self.send_cancel(ctx, s, e);
            self.free_slot(s);
        }
    }

    /// Tells the TaskManager attempt `e` of `s` went to that the JobMaster cancelled it.
    pub(crate) fn send_cancel(&mut self, ctx: &mut Ctx<'_, '_>, s: SubtaskId, e: Execution) {
        if let Some(tm) = e.placed {
            let cancel = Rpc::new(s, e.attempt, Call::CancelTask);
            self.send_to_task_manager(ctx, tm, cancel);
        }
    }

    /// Resets every subtask of `plan` to a fresh attempt: cancels it if it runs, releases its
    /// partition, returns its splits (`subtaskReset`), and logs the reset (F2.3).
    pub(crate) fn reset(&mut self, ctx: &mut Ctx<'_, '_>, plan: &Plan, hold: bool) {
        let now = ctx.now();
        for &(s, reason) in &plan.reset {
            self.cancel(ctx, s);
            if let Some((attempt, location, _)) = self.scheduler.tracker[s.index()].take() {
                self.release(ctx, s, attempt, location);
            }
            let e = &mut self.scheduler.exec[s.index()];
            let was = e.state;
            let was_created = was == ExecutionState::Created;
            e.attempt = ctx.cluster.next_attempt[s.index()];
            ctx.cluster.next_attempt[s.index()] += 1;
            e.state = ExecutionState::Created;
            e.placed = None;
            e.deployed_at = None;
            self.scheduler.ran[s.index()] = None;
            if hold {
                e.hold_until = now + ctx.cluster.restart_delay;
            }
            // F2.6: a reset makes a new execution (a new attempt, CREATED); the bug reuses the
            // old one, which leaves a terminal state.
            if self.bug == Some(Bug::ReuseTerminalExecution) && was.is_terminal() {
                let attempt = e.attempt;
                ctx.record(TraceEvent::ExecutionState {
                    subtask: s,
                    attempt,
                    from: was,
                    to: ExecutionState::Created,
                });
            }
            let v = ctx.cluster.graph.subtasks[s.index()].vertex;
            let index = ctx.cluster.graph.subtasks[s.index()].index;
            if self.bug != Some(Bug::SkipCoordinatorReset) || !plan.recovery {
                if let Some(e) = self.scheduler.enumerators[v.index()].as_mut() {
                    e.subtask_reset(index);
                }
            }
            if !was_created {
                ctx.record(TraceEvent::SubtaskReset { subtask: s, reason });
            }
            if let (Some(_), Some(r)) = (ctx.cluster.done[s.index()], plan.recovery_index) {
                ctx.cluster.rerun_of[s.index()] = Some(r);
            }
        }
        for &v in &plan.fresh_enumerators {
            let splits = ctx.cluster.batch.coordinators[v.index()]
                .expect("a coordinator")
                .splits;
            let p = self.scheduler.parallelism[v.index()].expect("initialized");
            self.scheduler.enumerators[v.index()] = Some(Enumerator::new(splits, p));
            self.scheduler.remembered[v.index()] = false;
        }
        let subtasks: Vec<SubtaskId> = plan.reset.iter().map(|&(s, _)| s).collect();
        if !subtasks.is_empty() {
            self.log(ctx, JobEvent::Reset { subtasks });
        }
    }

    pub(crate) fn release(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        s: SubtaskId,
        attempt: u32,
        location: Location,
    ) {
        match location {
            Location::Remote => {
                if let Some(i) = ctx
                    .cluster
                    .remote
                    .iter()
                    .position(|p| p.producer == s && p.attempt == attempt)
                {
                    ctx.cluster.remote.remove(i);
                    ctx.record(TraceEvent::PartitionReleased {
                        subtask: s,
                        attempt,
                        remote: true,
                    });
                }
            }
            Location::TaskManager { task_manager, .. } => self.send_to_task_manager(
                ctx,
                task_manager,
                Rpc::new(s, attempt, Call::ReleasePartition),
            ),
        }
    }
}
