//! Unit tests of the batch world's own plumbing (what the oracles are told).

use super::*;

/// `reconcile-outcome` is told every kind of report the JobMaster takes, and nothing else.
#[test]
fn the_oracle_learns_every_report_and_nothing_else() {
    let (s, p) = (SubtaskId(1), SubtaskId(0));
    let state = ExecutionState::Running;
    let reports = [
        Rpc {
            subtask: s,
            attempt: 2,
            call: Call::ReportExecution {
                state,
                parallelism: 3,
            },
        },
        Rpc {
            subtask: s,
            attempt: 2,
            call: Call::ReportSplit(4),
        },
        Rpc {
            subtask: s,
            attempt: 2,
            call: Call::ReportInput {
                producer: p,
                producer_attempt: 1,
            },
        },
        Rpc {
            subtask: s,
            attempt: 2,
            call: Call::ReportPartition { bytes: 64 },
        },
        Rpc::of_task_manager(Call::ReportDone),
    ];
    let told: Vec<String> = reports
        .iter()
        .map(|m| format!("{:?}", m.received().expect("a report")))
        .collect();
    assert_eq!(
        told,
        [
            "Execution { subtask: SubtaskId(1), attempt: 2, state: Running, parallelism: 3 }",
            "Split { subtask: SubtaskId(1), attempt: 2, split: 4 }",
            "Input { subtask: SubtaskId(1), attempt: 2, producer: SubtaskId(0), producer_attempt: 1 }",
            "Partition { subtask: SubtaskId(1), attempt: 2 }",
            "Done",
        ]
    );
    let others = [
        Rpc::of_task_manager(Call::RegisterTaskManager),
        Rpc {
            subtask: s,
            attempt: 2,
            call: Call::update(ExecutionState::Running),
        },
        Rpc {
            subtask: s,
            attempt: 2,
            call: Call::RequestSplit,
        },
    ];
    assert!(others.iter().all(|m| m.received().is_none()));
}
