//! JobMaster rules no shipped scenario reaches, staged inside a running world.

use super::*;
use crate::net::LinkId;
use crate::trace::Retain;
use crate::world::Streaming as World;
use sim::{Instant, Model, Scheduler};

/// Runs `world` and, once, just before the first event at which `when` holds, hands the
/// JobMaster and a handler's context to `act`.
struct Staged<W, A> {
    world: World,
    when: W,
    act: Option<A>,
}

impl<W, A> Model for Staged<W, A>
where
    W: Fn(&JobMaster) -> bool,
    A: FnOnce(&mut JobMaster, &mut Ctx<'_, '_>),
{
    type Event = Event;

    fn handle(&mut self, now: Instant, event: Event, sched: &mut Scheduler<'_, Event>) {
        let World {
            graph,
            config,
            jobmaster,
            io,
            task_managers,
            ..
        } = &mut self.world;
        if let Some(jm) = jobmaster.as_mut().filter(|jm| (self.when)(jm)) {
            if let Some(act) = self.act.take() {
                let mut ctx = Ctx {
                    now,
                    graph,
                    config,
                    io,
                    sched,
                    task_managers,
                };
                act(jm, &mut ctx);
            }
        }
        self.world.handle(now, event, sched);
    }

    fn is_done(&self) -> bool {
        self.world.is_done()
    }
}

/// A JobManager crash while TaskManager 1 is lost: the new JobMaster's executions are all
/// CREATED while it waits for TaskManager 1 to register again.
fn waiting_for_a_task_manager() -> crate::scenario::Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/failover-jobmanager-crash-precommitted.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("shipped")).expect("JSON");
    json["cluster"] = serde_json::json!({"task_managers": 2});
    json["faults"]
        .as_array_mut()
        .expect("faults")
        .push(serde_json::json!({
            "at": "30ms", "fault": "lose_task_manager", "task_manager": 1, "restart_after": "200ms"
        }));
    crate::scenario::parse(&json.to_string(), "staged").expect("valid")
}

/// P1.8: failing the job cancels an execution that was never deployed at once, CREATED →
/// CANCELED: no CANCELING, and no `cancelTask` to a TaskManager that hosts nothing.
#[test]
fn failing_a_job_cancels_never_deployed_executions_at_once() {
    let scenario = waiting_for_a_task_manager();
    let mut staged = Staged {
        world: World::new(&scenario, scenario.seed, Retain::Protocol),
        when: |jm: &JobMaster| {
            jm.incarnation() == 1
                && jm
                    .scheduler::<PipelinedRegions>()
                    .executions
                    .iter()
                    .all(|e| e.state == ExecutionState::Created)
        },
        act: Some(|jm: &mut JobMaster, ctx: &mut Ctx<'_, '_>| jm.regions().fail_job(ctx)),
    };
    crate::world::drive_for_test(&mut staged);
    assert!(staged.act.is_none(), "the staged moment never came");
    let world = &staged.world;
    assert_eq!(world.job_status(), JobStatus::Failed);
    let changes: Vec<(ExecutionState, ExecutionState)> = world
        .io
        .trace
        .kept()
        .iter()
        .filter_map(|(_, _, e)| match *e {
            // What became of each CREATED execution but being scheduled.
            TraceEvent::ExecutionState { from, to, .. }
                if from == ExecutionState::Created && to != ExecutionState::Scheduled =>
            {
                Some((from, to))
            }
            _ => None,
        })
        .collect();
    let subtasks = world.graph.subtasks.len();
    assert_eq!(
        changes,
        vec![(ExecutionState::Created, ExecutionState::Canceled); subtasks]
    );
    for tm in 0..2 {
        let link = LinkId::between(Address::JobMaster, Address::TaskManager(tm));
        assert!(
            world
                .io
                .rpc
                .in_flight(link)
                .all(|e| e.message.call != Call::CancelTask),
            "a cancel went to TaskManager{tm}"
        );
    }
}

/// P3.4: a report after the window about an execution the window already settled (kept
/// RUNNING here) changes nothing: not its attempt, and no cancel. Only an execution still
/// RECONCILING, reported by the TaskManager it was placed on, is settled by a late report.
/// The model's TaskManagers report each execution once per JobMaster, so no shipped run sends
/// such a report; a TaskManager whose report crossed a second registration could.
#[test]
fn a_late_report_about_a_settled_execution_changes_nothing() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/reconcile-all-in-time.json");
    let scenario = crate::scenario::load(&path).expect("shipped");
    let s = SubtaskId(0);
    let mut staged = Staged {
        world: World::new(&scenario, scenario.seed, Retain::Protocol),
        when: move |jm: &JobMaster| {
            let regions = jm.scheduler::<PipelinedRegions>();
            jm.incarnation() == 1
                && regions.reports.is_none()
                && jm.status() == JobStatus::Running
                && regions.executions[s.index()].state == ExecutionState::Running
        },
        act: Some(move |jm: &mut JobMaster, ctx: &mut Ctx<'_, '_>| {
            let mut regions = jm.regions();
            let (tm, attempt) = (
                regions.scheduler.placement[s.index()],
                regions.scheduler.executions[s.index()].attempt,
            );
            let stale = (s, attempt + 1);
            regions.on_report_execution(ctx, tm, stale, (ExecutionState::Running, 1));
            let e = regions.scheduler.executions[s.index()];
            assert_eq!(
                (e.attempt, e.state),
                (attempt, ExecutionState::Running),
                "the settled execution changed"
            );
            let link = LinkId::between(Address::JobMaster, Address::TaskManager(tm));
            assert!(
                ctx.io
                    .rpc
                    .in_flight(link)
                    .all(|m| m.message.call != Call::CancelTask),
                "a cancel went to TaskManager{tm}"
            );
        }),
    };
    crate::world::drive_for_test(&mut staged);
    assert!(staged.act.is_none(), "the staged moment never came");
}
