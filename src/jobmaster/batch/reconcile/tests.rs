//! The reconciling JobMaster's rules (P3.2–P3.4) on reports no shipped scenario produces.
//!
//! The model keeps one task per subtask, so its TaskManagers never report two attempts of one
//! subtask, a split two readers hold, or an input read from a replaced attempt. A TaskManager
//! an earlier JobMaster had given up on could (Flink's `TaskExecutor` keeps running what it
//! was not told to cancel), and the JobMaster must then end the window FAILING. These tests
//! stage a shipped reconciliation, act once inside the world just before a chosen event (a
//! TaskManager's report arrives, a heartbeat times out, a partition file is lost), and check
//! what the JobMaster decides, and that `reconcile-outcome`, which recomputes P3.4 from its
//! own ledger, agrees.

use super::*;
use crate::net::LinkId;
use crate::oracle::invariant::Invariant;
use crate::taskmanager::batch::{Partition, Task};
use crate::trace::{Address, Call, ReconcileOutcome, Retain, Rpc};
use crate::world::batch::{Batch, Cluster};
use sim::{Budget, Model, Scheduler, Simulation};

const SCENARIO: &str = "batch-reconcile-all-in-time.json";

/// A world that lets a test act once, inside it, just before the first event `when` picks.
/// It stops once that act is done and no reconcile window is open (or the job ended).
struct Staged<W, A> {
    world: Batch,
    when: W,
    act: Option<A>,
}

impl<W, A> Model for Staged<W, A>
where
    W: Fn(&Batch, &Event) -> bool,
    A: FnOnce(&mut Batch, &mut Scheduler<'_, Event>),
{
    type Event = Event;

    fn handle(&mut self, now: Instant, event: Event, sched: &mut Scheduler<'_, Event>) {
        if self.act.is_some() && (self.when)(&self.world, &event) {
            (self.act.take().expect("not acted yet"))(&mut self.world, sched);
        }
        self.world.handle(now, event, sched);
    }

    fn is_done(&self) -> bool {
        let open = self.world.jm.as_ref().is_some_and(|jm| jm.window.is_some());
        self.world.is_done() || (self.act.is_none() && !open)
    }
}

/// The world on its own, once the staged act is done.
struct Unstaged<'a>(&'a mut Batch);

impl Model for Unstaged<'_> {
    type Event = Event;

    fn handle(&mut self, now: Instant, event: Event, sched: &mut Scheduler<'_, Event>) {
        self.0.handle(now, event, sched);
    }

    fn is_done(&self) -> bool {
        self.0.is_done()
    }
}

/// The elected JobMaster takes `msg` from TaskManager `tm`.
fn receive(w: &mut Batch, sched: &mut Scheduler<'_, Event>, tm: u32, msg: Rpc) {
    let (mut jm, mut ctx) = w.jobmaster(sched, None).expect("elected");
    jm.receive(&mut ctx, tm, msg);
}

/// The message an event delivers, and where from.
fn arriving(w: &Batch, event: &Event) -> Option<(Address, Rpc)> {
    let Event::Rpc { link } = *event else {
        return None;
    };
    let next = w.cluster.rpc.in_flight(link).next()?;
    Some((link.from(), next.message.msg))
}

/// Every message on its way, with where it goes.
fn messages_on_the_wire(w: &Batch) -> Vec<(Address, Rpc)> {
    (0..w.tms.len() as u32)
        .flat_map(|tm| {
            let task_manager = Address::TaskManager(tm);
            [
                LinkId::between(Address::JobMaster, task_manager),
                LinkId::between(task_manager, Address::JobMaster),
            ]
        })
        .flat_map(|link| {
            w.cluster
                .rpc
                .in_flight(link)
                .map(move |e| (link.to(), e.message.msg))
        })
        .collect()
}

/// What a staged run left: the world, and the events still queued.
struct Staging {
    world: Batch,
    sim: Simulation<Event>,
}

fn stage<W, A>(when: W, act: A) -> Staging
where
    W: Fn(&Batch, &Event) -> bool,
    A: FnOnce(&mut Batch, &mut Scheduler<'_, Event>),
{
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(SCENARIO);
    let scenario = crate::scenario::load(&path).expect("a shipped scenario");
    let mut staged = Staged {
        world: Batch::new(&scenario, scenario.seed, Retain::Protocol),
        when,
        act: Some(act),
    };
    let mut sim = Simulation::new(sim::TieBreak::Insertion);
    sim.schedule(Instant::ZERO, Event::Start);
    sim.run(
        &mut staged,
        Budget {
            max_events: 1_000_000,
            max_time: Instant::ZERO.saturating_add(Duration::from_secs(10)),
            max_pending: 1_000_000,
        },
    );
    assert!(staged.act.is_none(), "the staged moment never came");
    Staging {
        world: staged.world,
        sim,
    }
}

/// Just before the last awaited TaskManager's "report done" arrives: every other report of
/// the window is in, so a message the test hands the JobMaster then is the last before it
/// ends the window.
fn before_last_report_done(w: &Batch, event: &Event) -> bool {
    let Some((
        Address::TaskManager(tm),
        Rpc {
            call: Call::ReportDone,
            ..
        },
    )) = arriving(w, event)
    else {
        return false;
    };
    let Some(w) = w.jm.as_ref().and_then(|jm| jm.window.as_ref()) else {
        return false;
    };
    w.missing() == 1 && w.expected(tm).is_some() && !w.reported_in_full(tm)
}

/// Just after the (only) reconcile window closed with the job RUNNING.
fn after_the_window(w: &Batch, _: &Event) -> bool {
    w.cluster.reconciliations.len() == 1
        && w.jm
            .as_ref()
            .is_some_and(|jm| jm.window.is_none() && jm.status() == JobStatus::Running)
}

impl Staging {
    fn outcome(&self) -> ReconcileOutcome {
        self.world
            .cluster
            .trace
            .kept()
            .iter()
            .rev()
            .find_map(|(_, _, e)| match e {
                TraceEvent::ReconcileEnded { outcome, .. } => Some(*outcome),
                _ => None,
            })
            .expect("the window closed")
    }

    /// What `reconcile-outcome` found wrong with the JobMaster's window.
    fn disagreements(self) -> Vec<String> {
        let current = self.world.who_is_current();
        let status = self.world.job_status();
        let Cluster {
            oracles,
            graph,
            committed,
            trace,
            ..
        } = self.world.cluster;
        let last = trace.len().saturating_sub(1);
        oracles
            .finish(&graph, status, &committed, (self.sim.now(), last), &current)
            .into_iter()
            .filter(|v| v.invariant == Invariant::ReconcileOutcome)
            .map(|v| v.message)
            .collect()
    }

    /// The cancels queued for TaskManager `tm`.
    fn cancels_to(&self, tm: u32) -> Vec<(SubtaskId, u32)> {
        self.calls_to(tm, Call::CancelTask)
    }

    /// The partition releases queued for TaskManager `tm`.
    fn releases_to(&self, tm: u32) -> Vec<(SubtaskId, u32)> {
        self.calls_to(tm, Call::ReleasePartition)
    }

    /// The RPCs of `call` queued for TaskManager `tm`: which attempt of which subtask each
    /// is about.
    fn calls_to(&self, tm: u32, call: Call) -> Vec<(SubtaskId, u32)> {
        messages_on_the_wire(&self.world)
            .into_iter()
            .filter(|&(to, msg)| to == Address::TaskManager(tm) && msg.call == call)
            .map(|(_, msg)| (msg.subtask, msg.attempt))
            .collect()
    }
}

/// The original attempts the TaskManagers host, by subtask, each with its TaskManager.
fn originals(w: &Batch) -> Vec<(&Task, u32)> {
    let mut all: Vec<(&Task, u32)> = w
        .tms
        .iter()
        .flat_map(|tm| tm.mode.tasks.iter().map(move |t| (t, tm.index)))
        .filter(|(t, _)| !t.speculative)
        .collect();
    all.sort_by_key(|(t, _)| t.subtask);
    all
}

/// The original attempt of `s` some TaskManager hosts.
fn task_of(w: &Batch, s: SubtaskId) -> &Task {
    originals(w)
        .into_iter()
        .find(|(t, _)| t.subtask == s)
        .expect("hosted")
        .0
}

/// A subtask of vertex `name` that TaskManager `tm` hosts, in `state`, with its attempt.
fn hosted(w: &Batch, name: &str, state: ExecutionState) -> Option<(SubtaskId, u32, u32)> {
    originals(w).into_iter().find_map(|(t, tm)| {
        let vertex = w.cluster.graph.subtasks[t.subtask.index()].vertex.index();
        (w.cluster.graph.vertices[vertex].name == name && t.state == state)
            .then_some((t.subtask, t.attempt, tm))
    })
}

fn report(w: &Batch, s: SubtaskId, attempt: u32, state: ExecutionState) -> Rpc {
    let parallelism = task_of(w, s).parallelism;
    Rpc {
        subtask: s,
        attempt,
        call: Call::ReportExecution { state, parallelism },
    }
}

fn another(w: &Batch, tm: u32) -> u32 {
    (tm + 1) % w.tms.len() as u32
}

/// Hands the JobMaster `msgs` from `tm`, as if they had just arrived, and checks the window
/// ends with `expected` and that the oracle agrees.
fn window_ends(msgs: impl FnOnce(&Batch) -> Vec<(u32, Rpc)>, expected: ReconcileOutcome) {
    let staged = stage(before_last_report_done, |w, sched| {
        for (tm, msg) in msgs(w) {
            receive(w, sched, tm, msg);
        }
    });
    assert_eq!(staged.outcome(), expected);
    assert_eq!(staged.disagreements(), Vec::<String>::new());
}

#[test]
fn unchanged_the_staged_window_ends_running_and_the_oracle_agrees() {
    window_ends(|_| Vec::new(), ReconcileOutcome::Running);
}

/// P3.4: two attempts of one subtask cannot both be current.
#[test]
fn a_second_attempt_of_one_subtask_fails_the_window() {
    window_ends(
        |w| {
            let (s, a, tm) = hosted(w, "agg", ExecutionState::Running).expect("agg runs");
            vec![(tm, report(w, s, a + 1, ExecutionState::Running))]
        },
        ReconcileOutcome::Failing,
    );
}

/// P3.4: one execution cannot run on two TaskManagers.
#[test]
fn one_execution_on_two_task_managers_fails_the_window() {
    window_ends(
        |w| {
            let (s, a, tm) = hosted(w, "agg", ExecutionState::Running).expect("agg runs");
            vec![(another(w, tm), report(w, s, a, ExecutionState::Running))]
        },
        ReconcileOutcome::Failing,
    );
}

/// P3.2: a TaskManager that registers again reports everything again; the same execution
/// from the same TaskManager is no contradiction.
#[test]
fn a_report_sent_again_in_full_is_no_contradiction() {
    window_ends(
        |w| {
            let (s, a, tm) = hosted(w, "agg", ExecutionState::Running).expect("agg runs");
            let mut msgs = vec![(tm, report(w, s, a, ExecutionState::Running))];
            for &(producer, producer_attempt) in &task_of(w, s).inputs {
                msgs.push((
                    tm,
                    Rpc {
                        subtask: s,
                        attempt: a,
                        call: Call::ReportInput {
                            producer,
                            producer_attempt,
                        },
                    },
                ));
            }
            msgs
        },
        ReconcileOutcome::Running,
    );
}

/// Two readers of one source, each with its attempt and TaskManager, and a split the first holds.
fn two_readers(w: &Batch) -> ((SubtaskId, u32, u32), (SubtaskId, u32, u32), u32) {
    let readers: Vec<(SubtaskId, u32, u32)> = originals(w)
        .into_iter()
        .filter_map(|(t, tm)| {
            let vertex = w.cluster.graph.subtasks[t.subtask.index()].vertex.index();
            (w.cluster.graph.vertices[vertex].name == "src").then_some((t.subtask, t.attempt, tm))
        })
        .collect();
    let first = readers[0];
    let split = task_of(w, first.0).splits[0];
    (first, readers[1], split)
}

/// P3.4: a split is read by one reader only; two holding it means one of them is stale.
#[test]
fn a_split_two_readers_hold_fails_the_window() {
    window_ends(
        |w| {
            let (_, (s, a, tm), split) = two_readers(w);
            vec![(
                tm,
                Rpc {
                    subtask: s,
                    attempt: a,
                    call: Call::ReportSplit(split),
                },
            )]
        },
        ReconcileOutcome::Failing,
    );
}

/// P3.2: a split reported for an attempt other than the one reported is not that reader's.
#[test]
fn a_split_of_an_unreported_attempt_is_ignored() {
    window_ends(
        |w| {
            let (_, (s, a, tm), split) = two_readers(w);
            vec![(
                tm,
                Rpc {
                    subtask: s,
                    attempt: a + 1,
                    call: Call::ReportSplit(split),
                },
            )]
        },
        ReconcileOutcome::Running,
    );
}

/// An input and the attempt of its producer that the reports name.
fn an_input(w: &Batch) -> (SubtaskId, u32, u32, SubtaskId, u32) {
    let (s, a, tm) = hosted(w, "agg", ExecutionState::Running).expect("agg runs");
    let (p, pa) = task_of(w, s).inputs[0];
    (s, a, tm, p, pa)
}

/// P3.4: a consumer that read a producer attempt other than the one reported ran on a
/// graph an earlier JobMaster replaced.
#[test]
fn an_input_read_from_a_replaced_attempt_fails_the_window() {
    window_ends(
        |w| {
            let (s, a, tm, p, pa) = an_input(w);
            vec![(
                tm,
                Rpc {
                    subtask: s,
                    attempt: a,
                    call: Call::ReportInput {
                        producer: p,
                        producer_attempt: pa + 1,
                    },
                },
            )]
        },
        ReconcileOutcome::Failing,
    );
}

/// P3.2: an input reported for an attempt other than the one reported is not that
/// consumer's.
#[test]
fn an_input_of_an_unreported_attempt_is_ignored() {
    window_ends(
        |w| {
            let (s, a, tm, p, pa) = an_input(w);
            vec![(
                tm,
                Rpc {
                    subtask: s,
                    attempt: a + 1,
                    call: Call::ReportInput {
                        producer: p,
                        producer_attempt: pa + 1,
                    },
                },
            )]
        },
        ReconcileOutcome::Running,
    );
}

/// After the window a report about an execution the JobMaster did not keep is answered by a
/// cancel (it may run elsewhere under another attempt); about the one it kept, or about an
/// ended one, by nothing.
#[test]
fn a_late_report_of_a_superseded_running_execution_is_cancelled() {
    let late = |to_other: bool, next_attempt: bool, state: ExecutionState| {
        let mut target = None;
        let staged = stage(after_the_window, |w, sched| {
            let (s, a, tm) = hosted(w, "agg", ExecutionState::Running).expect("agg runs");
            let from = if to_other { another(w, tm) } else { tm };
            let attempt = if next_attempt { a + 1 } else { a };
            target = Some((from, s, attempt));
            let report = report(w, s, attempt, state);
            receive(w, sched, from, report);
        });
        let (from, s, attempt) = target.expect("acted");
        (staged.cancels_to(from).contains(&(s, attempt)), staged)
    };
    let running = ExecutionState::Running;
    assert!(late(true, false, running).0, "on another TaskManager");
    assert!(late(false, true, running).0, "another attempt");
    assert!(!late(false, false, running).0, "the kept execution");
    assert!(
        !late(true, false, ExecutionState::Finished).0,
        "an ended one"
    );
    let (_, staged) = late(true, false, running);
    assert_eq!(staged.world.cluster.reconciliations[0].late_reports, 1);
}

/// F2.4: after the window a reported partition is answered by a release unless it is the very
/// one the JobMaster tracks: another attempt of a tracked subtask from the same TaskManager,
/// or the tracked attempt from another one, is not that partition. (The model's TaskManagers
/// never hold two attempts' partitions of one subtask while the JobMaster tracks one: a reset
/// releases the old one first. A TaskManager an earlier JobMaster lost touch with could.)
#[test]
fn a_late_report_of_a_partition_not_tracked_is_released() {
    let late = |other_attempt: bool, other_place: bool| {
        let mut target = None;
        let staged = stage(after_the_window, |w, sched| {
            let (s, a, tm) = hosted(w, "map", ExecutionState::Finished).expect("map finished");
            let from = if other_place { another(w, tm) } else { tm };
            let attempt = if other_attempt { a + 1 } else { a };
            target = Some((from, s, attempt));
            let report = Rpc::new(s, attempt, Call::ReportPartition { bytes: 64 });
            receive(w, sched, from, report);
        });
        let (from, s, attempt) = target.expect("acted");
        staged.releases_to(from).contains(&(s, attempt))
    };
    assert!(late(true, false), "another attempt, same TaskManager");
    assert!(
        late(false, true),
        "the tracked attempt, another TaskManager"
    );
    assert!(late(true, true), "another attempt, another TaskManager");
    assert!(!late(false, false), "the tracked partition");
}

/// P3.4: a TaskManager the JobMaster gives up on in the window is not waited for, and what it
/// reported is void: its executions are unknown.
#[test]
fn a_task_manager_lost_in_the_window_voids_its_reports() {
    let mut lost = None;
    let staged = stage(before_last_report_done, |w, sched| {
        let (s, _, tm) = hosted(w, "agg", ExecutionState::Running).expect("agg runs");
        let process = w.tms[tm as usize].process;
        lost = Some((s, tm));
        let incarnation = w.jm.as_ref().expect("elected").incarnation();
        let timeout = Event::TaskManagerTimeout {
            task_manager: tm,
            dead: process,
            incarnation,
        };
        w.handle(sched.now(), timeout, sched);
    });
    let (s, tm) = lost.expect("acted");
    let e = staged.world.jm.as_ref().expect("elected").batch().exec[s.index()];
    assert!(
        !(e.state == ExecutionState::Running && e.placed == Some(tm)),
        "{s:?} still counted as running on the lost TaskManager{tm}"
    );
    assert_eq!(staged.disagreements(), Vec::<String>::new());
}

/// P3.4: a finished producer whose partition nobody reports cannot be accounted for: its
/// consumers read an output the JobMaster cannot find, so the window ends FAILING.
#[test]
fn a_finished_producer_without_its_partition_fails_the_window() {
    let staged = stage(
        |_, e| matches!(e, Event::JobMasterElected),
        |w, _| {
            let (s, _, tm) = hosted(w, "map", ExecutionState::Finished).expect("map finished");
            w.tms[tm as usize]
                .mode
                .partitions
                .retain(|p| p.producer != s);
        },
    );
    assert_eq!(staged.outcome(), ReconcileOutcome::Failing);
    assert_eq!(staged.disagreements(), Vec::<String>::new());
}

/// P3.3: a split request the old JobMaster never answered is asked again with the report,
/// unless it is still on the wire (it will be refused and kept, or taken): asking twice would
/// have two splits assigned to one request.
#[test]
fn a_split_request_still_on_the_wire_is_not_asked_again() {
    let requests = |on_the_wire: bool| {
        let mut source = None;
        let staged = stage(
            |_, e| matches!(e, Event::JobMasterElected),
            |w, _| {
                let (s, a, tm) = hosted(w, "src", ExecutionState::Finished).expect("src ran");
                let task = w.tms[tm as usize].mode.task_mut(s, a).expect("hosted");
                // As if it still waited for the answer to a request the old JobMaster took.
                task.state = ExecutionState::Running;
                task.ended = None;
                task.awaiting_split = true;
                if on_the_wire {
                    let request = Rpc {
                        subtask: s,
                        attempt: a,
                        call: Call::RequestSplit,
                    };
                    w.tms[tm as usize].mode.wire.insert(u64::MAX, request);
                }
                source = Some(s);
            },
        );
        let s = source.expect("acted");
        let refused = staged
            .world
            .cluster
            .trace
            .kept()
            .iter()
            .filter(|(_, _, e)| {
                matches!(e, TraceEvent::TaskRpcRefused { subtask, .. } if *subtask == s)
            })
            .count();
        let on_its_way = messages_on_the_wire(&staged.world)
            .into_iter()
            .filter(|(_, m)| matches!(m, Rpc { subtask, call: Call::RequestSplit, .. } if subtask == &s))
            .count();
        let kept = staged
            .world
            .tms
            .iter()
            .flat_map(|t| t.outbox.kept())
            .filter(|m| matches!(m, Rpc { subtask, call: Call::RequestSplit, .. } if *subtask == s))
            .count();
        refused + on_its_way + kept
    };
    assert_eq!(
        requests(false),
        1,
        "asked again (refused, on its way, or kept)"
    );
    assert_eq!(requests(true), 0, "not asked again");
}

/// P3.2: a partition a TaskManager reports for an attempt the rebuilt view does not keep (here
/// an older attempt of a finished producer, still on disk) is released; the oracle requires it.
#[test]
fn a_reported_partition_the_window_does_not_keep_is_released() {
    let mut stale = None;
    let staged = stage(
        |_, e| matches!(e, Event::JobMasterElected),
        |w, _| {
            let (s, a, tm) = hosted(w, "map", ExecutionState::Finished).expect("map finished");
            let partitions = &mut w.tms[tm as usize].mode.partitions;
            let kept = partitions
                .iter()
                .find(|p| p.producer == s && p.attempt == a)
                .expect("its partition");
            let old = Partition {
                producer: s,
                attempt: a + 7,
                fragments: kept.fragments.clone(),
            };
            partitions.push(old);
            stale = Some((s, a + 7));
        },
    );
    assert_eq!(staged.outcome(), ReconcileOutcome::Running);
    let (s, attempt) = stale.expect("acted");
    let released = staged.world.cluster.trace.kept().iter().any(|(_, _, e)| {
        matches!(e, TraceEvent::ReleaseRequested { subtask, attempt: a, .. }
            if *subtask == s && *a == attempt)
    });
    assert!(released, "the stale partition is released");
    // On until the release reaches the TaskManager: it drops that partition, not the one the
    // JobMaster kept.
    let mut staged = staged;
    let on_its_way = |st: &Staging| {
        messages_on_the_wire(&st.world).iter().any(|(_, m)| {
            matches!(m, Rpc { subtask, attempt: a, call: Call::ReleasePartition } if *subtask == s && *a == attempt)
        })
    };
    while on_its_way(&staged) {
        let budget = Budget {
            max_events: staged.sim.events_processed() + 1,
            max_time: Instant::ZERO.saturating_add(Duration::from_secs(10)),
            max_pending: 1_000_000,
        };
        staged.sim.run(&mut Unstaged(&mut staged.world), budget);
    }
    let held: Vec<u32> = staged
        .world
        .tms
        .iter()
        .flat_map(|t| &t.mode.partitions)
        .filter(|p| p.producer == s)
        .map(|p| p.attempt)
        .collect();
    assert_eq!(
        held,
        [attempt - 7],
        "the kept partition stays, the stale one is gone"
    );
    assert_eq!(staged.disagreements(), Vec::<String>::new());
}

/// Stages a connection reset under the first message of `kind` on its way from the JobMaster
/// (`from_jobmaster`) or to it, after the window or, for a report, in it: the message arrives
/// on the old connection (P3.3). Returns what the TaskManagers keep to send again.
fn reset_under(kind: fn(&Rpc) -> bool, from_jobmaster: bool) -> Vec<Rpc> {
    let staged = stage(
        |w, e| {
            let Some((from, msg)) = arriving(w, e) else {
                return false;
            };
            let right_way = matches!(from, Address::JobMaster) == from_jobmaster;
            let after = w.cluster.reconciliations.len() == 1
                && w.jm.as_ref().is_some_and(|jm| jm.window.is_none());
            right_way && kind(&msg) && (after || msg.received().is_some())
        },
        |w, _| {
            for t in &mut w.tms {
                t.mode.link_epoch += 1;
            }
        },
    );
    let tms = &staged.world.tms;
    tms.iter().flat_map(|t| t.outbox.kept()).collect()
}

/// P3.3: a task's RPC lost with a reset connection is kept by its TaskManager and sent again;
/// what the JobMaster sent, and a report (the next registration reports everything again),
/// are not the TaskManager's to keep.
#[test]
fn a_reset_connection_keeps_only_the_tasks_rpcs() {
    let kept = reset_under(|m| m.is_task_rpc(), false);
    assert!(
        kept.iter().any(|m| m.is_task_rpc()),
        "the task's RPC is kept"
    );
    let kept = reset_under(|_| true, true);
    assert!(kept.iter().all(|m| m.is_task_rpc()), "kept {kept:?}");
    let kept = reset_under(|m| m.received().is_some(), false);
    assert!(kept.iter().all(|m| m.is_task_rpc()), "kept {kept:?}");
}

/// P0: a message to a TaskManager that is cut off when it arrives is lost (it went out on a
/// connection that no longer exists); the deployment it carried never starts.
#[test]
fn a_deployment_reaching_a_cut_off_task_manager_is_lost() {
    let mut deployed = None;
    let staged = stage(
        |w, e| {
            let after = w.jm.as_ref().is_some_and(|jm| jm.window.is_none())
                && w.cluster.reconciliations.len() == 1;
            after
                && matches!(
                    arriving(w, e),
                    Some((
                        _,
                        Rpc {
                            call: Call::SubmitTask(_),
                            ..
                        }
                    ))
                )
        },
        |w, _| {
            for t in &mut w.tms {
                t.connected = false;
            }
            deployed = Some(());
        },
    );
    deployed.expect("acted");
    let started = staged
        .world
        .cluster
        .trace
        .kept()
        .iter()
        .rev()
        .take_while(|(_, _, e)| !matches!(e, TraceEvent::Deployed { .. }))
        .any(|(_, _, e)| {
            matches!(
                e,
                TraceEvent::TaskState {
                    from: ExecutionState::Created,
                    ..
                }
            )
        });
    assert!(
        !started,
        "a task started from a deployment sent to a cut-off TaskManager"
    );
}
