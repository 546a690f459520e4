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
use crate::jobmaster::batch::Execution;
use crate::status::{ExecutionState, JobStatus};
use crate::taskmanager::batch::Descriptor;
use crate::trace::{RerunReason, TraceEvent};
use crate::world::batch::{Batch, Msg};
use crate::world::Event;
use sim::{Instant, Scheduler};

impl Batch {
    /// Initializes the vertices whose inputs finished, deploys what can run, and ends the job
    /// when every subtask finished.
    pub(crate) fn schedule(&mut self, sched: &mut Scheduler<'_, Event>) {
        let now = sched.now();
        let Some(jm) = self.jm.as_ref() else { return };
        if jm.status != JobStatus::Running {
            return;
        }
        for &v in &self.graph.topological_order.clone() {
            let jm = self.jm.as_ref().expect("alive");
            if jm.parallelism[v.index()].is_some() {
                continue;
            }
            let inputs = &self.graph.vertices[v.index()].inputs;
            let ready = inputs.iter().all(|&e| {
                let up = self.graph.edges[e].from;
                jm.parallelism[up.index()].is_some() && self.vertex_finished(up)
            });
            if ready {
                self.initialize(sched, v);
            }
        }
        let order = self.graph.topological_order.clone();
        for v in order {
            let Some(p) = self.jm.as_ref().expect("alive").parallelism[v.index()] else {
                continue;
            };
            let first = self.graph.vertices[v.index()].first;
            for s in (first..first + p).map(SubtaskId) {
                let e = self.jm.as_ref().expect("alive").exec[s.index()];
                if e.state == ExecutionState::Created
                    && e.hold_until <= now
                    && self.inputs_available(s)
                    && !self.try_deploy(sched, s)
                {
                    break;
                }
            }
        }
        let jm = self.jm.as_ref().expect("alive");
        let all_done = (0..self.graph.vertices.len())
            .all(|v| jm.parallelism[v].is_some() && self.vertex_finished(VertexId(v as u32)));
        if all_done {
            self.finish_job(sched);
        }
    }

    /// P2.7: the job is FINISHED and its sinks' output committed; its result reaches HA
    /// storage `job_result_delay` later, and only from then on is the job over for good.
    pub(crate) fn finish_job(&mut self, sched: &mut Scheduler<'_, Event>) {
        let now = sched.now();
        self.set_job_status(now, JobStatus::Finished);
        self.commit(now);
        let incarnation = self.jm.as_ref().expect("alive").incarnation;
        sched.after(
            self.batch.job_result_delay,
            Event::JobResultWritten { incarnation },
        );
    }

    pub(crate) fn inputs_available(&self, s: SubtaskId) -> bool {
        let jm = self.jm.as_ref().expect("alive");
        data::producers(&self.graph, &jm.parallelism, s)
            .iter()
            .all(|(_, p)| {
                jm.exec[p.index()].state == ExecutionState::Finished
                    && jm.tracker[p.index()].is_some()
            })
    }

    /// P0: a registered TaskManager with a free slot that `usable` admits, the one with the
    /// most free slots first (the lowest number on a tie).
    pub(crate) fn free_task_manager(&self, usable: impl Fn(usize) -> bool) -> Option<usize> {
        let slots = self.slots;
        let jm = self.jm.as_ref().expect("alive");
        (0..self.tms.len())
            .filter(|&t| jm.registered[t].is_some() && jm.slots_used[t] < slots && usable(t))
            .max_by_key(|&t| (slots - jm.slots_used[t], std::cmp::Reverse(t)))
    }

    /// What a deployment of `s` as `attempt` carries: its inputs' partitions as the tracker
    /// knows them, and its vertex's parallelism.
    pub(crate) fn descriptor_for(&self, s: SubtaskId, attempt: u32) -> Descriptor {
        let jm = self.jm.as_ref().expect("alive");
        let inputs: Vec<(usize, SubtaskId, u32, Location)> =
            data::producers(&self.graph, &jm.parallelism, s)
                .into_iter()
                .map(|(edge, p)| {
                    let (attempt, location, _) = jm.tracker[p.index()].expect("available");
                    (edge, p, attempt, location)
                })
                .collect();
        let vertex = self.graph.subtasks[s.index()].vertex;
        Descriptor {
            attempt,
            parallelism: jm.parallelism[vertex.index()].expect("an initialized vertex"),
            inputs,
        }
    }

    pub(crate) fn try_deploy(&mut self, sched: &mut Scheduler<'_, Event>, s: SubtaskId) -> bool {
        let now = sched.now();
        let bug = self.bug == Some(Bug::DeployBeforeReport);
        let jm = self.jm.as_ref().expect("alive");
        let Some(tm) = self.free_task_manager(|t| jm.accounted[t] || bug) else {
            return false;
        };
        let attempt = jm.exec[s.index()].attempt;
        self.descriptors[s.index()] = self.descriptor_for(s, attempt);
        let jm = self.jm.as_mut().expect("alive");
        jm.slots_used[tm] += 1;
        jm.exec[s.index()].placed = Some(tm as u32);
        jm.exec[s.index()].deployed_at = Some(now);
        self.exec_state(now, s, ExecutionState::Deploying);
        self.record(
            now,
            TraceEvent::Deployed {
                subtask: s,
                attempt,
                task_manager: tm as u32,
                speculative: false,
            },
        );
        self.arm_speculation_check(sched);
        self.send_to_task_manager(
            sched,
            tm as u32,
            Msg::Deploy {
                subtask: s,
                attempt,
            },
        );
        true
    }

    /// P2.1: a vertex is initialized once its inputs finished; an `"auto"` vertex gets its
    /// parallelism from the bytes they produced.
    pub(crate) fn initialize(&mut self, sched: &mut Scheduler<'_, Event>, v: VertexId) {
        let now = sched.now();
        let vertex = &self.graph.vertices[v.index()];
        let jm = self.jm.as_ref().expect("alive");
        let input_bytes: u64 = vertex
            .inputs
            .iter()
            .flat_map(|&e| {
                let up = self.graph.edges[e].from;
                let first = self.graph.vertices[up.index()].first;
                let p = jm.parallelism[up.index()].unwrap_or(0);
                (first..first + p).map(|s| jm.tracker[s as usize].map_or(0, |t| t.2))
            })
            .sum();
        let adaptive = self.adaptive[v.index()];
        let parallelism = if adaptive {
            let a = self.batch.adaptive;
            let tasks = if self.bug == Some(Bug::AdaptiveRoundsDown) {
                input_bytes / a.bytes_per_task
            } else {
                input_bytes.div_ceil(a.bytes_per_task)
            };
            (tasks as u32).clamp(a.min, a.max)
        } else {
            vertex.parallelism
        };
        self.set_parallelism(v, parallelism);
        self.record(
            now,
            TraceEvent::VertexInitialized {
                vertex: v,
                parallelism,
                input_bytes,
                adaptive,
            },
        );
        self.log(
            sched,
            JobEvent::VertexInitialized {
                vertex: v,
                parallelism,
            },
        );
    }

    pub(crate) fn set_parallelism(&mut self, v: VertexId, p: u32) {
        let splits = self.batch.coordinators[v.index()].map(|c| c.splits);
        let jm = self.jm.as_mut().expect("alive");
        jm.parallelism[v.index()] = Some(p);
        if let Some(splits) = splits {
            if jm.enumerators[v.index()].is_none() {
                jm.enumerators[v.index()] = Some(Enumerator::new(splits, p));
            }
        }
    }

    pub(crate) fn commit(&mut self, now: Instant) {
        let jm = self.jm.as_ref().expect("alive");
        let mut outputs = Vec::new();
        for (v, vertex) in self.graph.vertices.iter().enumerate() {
            if !vertex.outputs.is_empty() {
                continue;
            }
            let p = jm.parallelism[v].expect("finished");
            for s in (vertex.first..vertex.first + p).map(SubtaskId) {
                let attempt = jm.exec[s.index()].attempt;
                let fragments = self
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
            self.committed.retain(|(t, _)| *t != s);
            let records = data::total_records(&fragments);
            self.record(
                now,
                TraceEvent::OutputCommitted {
                    subtask: s,
                    records,
                },
            );
            self.committed.push((s, fragments));
        }
    }

    /// Resets `seeds` and everything P2.4 step 4's region expansion adds, then schedules after
    /// the restart delay (a task failure, a lost partition, a lost TaskManager).
    pub(crate) fn failover(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        seeds: Vec<(SubtaskId, RerunReason)>,
    ) {
        let now = sched.now();
        let jm = self.jm.as_mut().expect("alive");
        jm.restarts += 1;
        self.failovers += 1;
        if jm.restarts > self.max_restarts {
            // P1.8: the strategy gave up after `max_restarts` restarts.
            let failovers = jm.restarts - 1;
            self.record(now, TraceEvent::RestartsExhausted { failovers });
            let running: Vec<SubtaskId> = (0..self.graph.subtasks.len() as u32)
                .map(SubtaskId)
                .filter(|s| {
                    matches!(
                        self.jm.as_ref().expect("alive").exec[s.index()].state,
                        ExecutionState::Deploying
                            | ExecutionState::Initializing
                            | ExecutionState::Running
                    )
                })
                .collect();
            self.set_job_status(now, JobStatus::Failing);
            for s in running {
                self.cancel(sched, s);
            }
            self.set_job_status(now, JobStatus::Failed);
            return;
        }
        let plan = {
            let jm = self.jm.as_ref().expect("alive");
            recovery::expand(
                &self.graph,
                &recovery::View {
                    parallelism: &jm.parallelism,
                    finished: &jm
                        .exec
                        .iter()
                        .map(|e| e.state != ExecutionState::Created)
                        .collect::<Vec<_>>(),
                    tracked: &jm.tracker.iter().map(Option::is_some).collect::<Vec<_>>(),
                    remembered: &jm.remembered,
                },
                seeds,
                self.bug,
            )
        };
        self.reset(sched, &plan, true);
        let incarnation = self.jm.as_ref().expect("alive").incarnation;
        sched.after(self.restart_delay, Event::RestartDelay { incarnation });
    }

    pub(crate) fn cancel(&mut self, sched: &mut Scheduler<'_, Event>, s: SubtaskId) {
        let now = sched.now();
        // P2.8: a failover or a reset ends every attempt of the subtask.
        self.cancel_spec(sched, s);
        let e = self.jm.as_ref().expect("alive").exec[s.index()];
        if may_finish(e.state) {
            self.exec_state(now, s, ExecutionState::Canceling);
            self.exec_state(now, s, ExecutionState::Canceled);
            self.send_cancel(sched, s, e);
            self.free_slot(s);
        }
    }

    /// Tells the TaskManager attempt `e` of `s` went to that the JobMaster cancelled it.
    pub(crate) fn send_cancel(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        s: SubtaskId,
        e: Execution,
    ) {
        if let Some(tm) = e.placed {
            let cancel = Msg::Cancel {
                subtask: s,
                attempt: e.attempt,
            };
            self.send_to_task_manager(sched, tm, cancel);
        }
    }

    /// Resets every subtask of `plan` to a fresh attempt: cancels it if it runs, releases its
    /// partition, returns its splits (`subtaskReset`), and logs the reset (F2.3).
    pub(crate) fn reset(&mut self, sched: &mut Scheduler<'_, Event>, plan: &Plan, hold: bool) {
        let now = sched.now();
        for &(s, reason) in &plan.reset {
            self.cancel(sched, s);
            let jm = self.jm.as_mut().expect("alive");
            if let Some((attempt, location, _)) = jm.tracker[s.index()].take() {
                self.release(sched, s, attempt, location);
            }
            let jm = self.jm.as_mut().expect("alive");
            let e = &mut jm.exec[s.index()];
            let was = e.state;
            let was_created = was == ExecutionState::Created;
            e.attempt = self.next_attempt[s.index()];
            self.next_attempt[s.index()] += 1;
            e.state = ExecutionState::Created;
            e.placed = None;
            e.deployed_at = None;
            jm.ran[s.index()] = None;
            if hold {
                e.hold_until = now + self.restart_delay;
            }
            // F2.6: a reset makes a new execution (a new attempt, CREATED); the bug reuses the
            // old one, which leaves a terminal state.
            if self.bug == Some(Bug::ReuseTerminalExecution) && was.is_terminal() {
                let attempt = e.attempt;
                self.record(
                    now,
                    TraceEvent::ExecutionState {
                        subtask: s,
                        attempt,
                        from: was,
                        to: ExecutionState::Created,
                    },
                );
            }
            let jm = self.jm.as_mut().expect("alive");
            let v = self.graph.subtasks[s.index()].vertex;
            let index = self.graph.subtasks[s.index()].index;
            if self.bug != Some(Bug::SkipCoordinatorReset) || !plan.recovery {
                if let Some(e) = jm.enumerators[v.index()].as_mut() {
                    e.subtask_reset(index);
                }
            }
            if !was_created {
                self.record(now, TraceEvent::SubtaskReset { subtask: s, reason });
            }
            if let (Some(_), Some(r)) = (self.done[s.index()], plan.recovery_index) {
                self.rerun_of[s.index()] = Some(r);
            }
        }
        for &v in &plan.fresh_enumerators {
            let splits = self.batch.coordinators[v.index()]
                .expect("a coordinator")
                .splits;
            let jm = self.jm.as_mut().expect("alive");
            let p = jm.parallelism[v.index()].expect("initialized");
            jm.enumerators[v.index()] = Some(Enumerator::new(splits, p));
            jm.remembered[v.index()] = false;
        }
        let subtasks: Vec<SubtaskId> = plan.reset.iter().map(|&(s, _)| s).collect();
        if !subtasks.is_empty() {
            self.log(sched, JobEvent::Reset { subtasks });
        }
    }

    pub(crate) fn release(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        s: SubtaskId,
        attempt: u32,
        location: Location,
    ) {
        match location {
            Location::Remote => {
                if let Some(i) = self
                    .remote
                    .iter()
                    .position(|p| p.producer == s && p.attempt == attempt)
                {
                    self.remote.remove(i);
                    self.record(
                        sched.now(),
                        TraceEvent::PartitionReleased {
                            subtask: s,
                            attempt,
                            remote: true,
                        },
                    );
                }
            }
            Location::TaskManager { task_manager, .. } => self.send_to_task_manager(
                sched,
                task_manager,
                Msg::Release {
                    subtask: s,
                    attempt,
                },
            ),
        }
    }
}
