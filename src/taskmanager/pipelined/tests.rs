//! A streaming TaskManager's tasks, watched inside a running world.

use crate::graph::SubtaskId;
use crate::status::ExecutionState;
use crate::trace::{Retain, TraceEvent};
use crate::world::{Event, Streaming};
use sim::{Instant, Model, Scheduler};

/// Two sources and two sinks, slot `i` of each on TaskManager `i`; TaskManager 1 is lost at
/// 10 ms, while every task runs, and not replaced within the run.
fn lost_at_10ms() -> Streaming {
    let scenario = crate::scenario::parse(
        r#"{"name": "host", "mode": "streaming", "job": {"vertices": [
            {"id": "src", "operator": "source", "parallelism": 2, "records": 500,
             "record_interval": "200us"},
            {"id": "sink", "operator": "sink", "parallelism": 2}],
          "edges": [{"from": "src", "to": "sink", "pattern": "forward"}]},
          "cluster": {"task_managers": 2, "slots_per_task_manager": 1},
          "faults": [{"at": "10ms", "fault": "lose_task_manager", "task_manager": 1,
                      "restart_after": "10s"}]}"#,
        "host",
    )
    .expect("valid");
    Streaming::new(&scenario, 1, Retain::Protocol)
}

/// Runs a streaming world up to and including its first fault.
struct UntilFault {
    world: Streaming,
    fired: bool,
}

impl Model for UntilFault {
    type Event = Event;

    fn handle(&mut self, now: Instant, event: Event, sched: &mut Scheduler<'_, Event>) {
        self.fired |= matches!(event, Event::Fault { .. });
        self.world.handle(now, event, sched);
    }

    fn is_done(&self) -> bool {
        self.fired || self.world.is_done()
    }
}

/// The subtasks whose task TaskManager `tm` hosts now.
fn hosted(world: &Streaming, tm: u32) -> Vec<SubtaskId> {
    let tms = &world.task_managers;
    let on = tms.on(tm).iter().copied();
    on.filter(|&s| tms.task(s).is_some()).collect()
}

/// P1.8: the tasks in a lost TaskManager's slots die with its process (each recorded FAILED,
/// none reported), and its slots are empty; the other TaskManager keeps its tasks. Every task
/// is found through its place, on the TaskManager it was deployed to.
#[test]
fn a_task_dies_with_its_task_managers_process() {
    let mut run = UntilFault {
        world: lost_at_10ms(),
        fired: false,
    };
    crate::world::drive_for_test(&mut run);
    assert!(run.fired, "the fault never fired");
    let world = &run.world;
    let (src1, sink1) = (SubtaskId(1), SubtaskId(3));
    assert_eq!(world.task_managers.on(1), [src1, sink1]);
    assert!(!world.task_managers.get(1).alive);
    assert_eq!(hosted(world, 1), []);
    assert_eq!(hosted(world, 0), [SubtaskId(0), SubtaskId(2)]);
    for subtask in hosted(world, 0) {
        let task = world.task_managers.task(subtask).expect("hosted");
        assert_eq!(task.state(), ExecutionState::Running);
    }
    let died: Vec<SubtaskId> = (world.io.trace.kept().iter())
        .filter_map(|(_, _, e)| match *e {
            TraceEvent::TaskState {
                subtask,
                to: ExecutionState::Failed,
                ..
            } => Some(subtask),
            _ => None,
        })
        .collect();
    assert_eq!(died, [src1, sink1]);
}
