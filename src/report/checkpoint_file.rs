//! The checkpoint file `flinksim run --save-checkpoint N FILE` writes (F1.6): the same JSON a
//! scenario's `restore_from` takes inline, so a job can be started from it, unchanged or
//! changed. Each operator is written under its uid, with its parallelism, which subtasks were
//! finished, and each subtask's state.

use crate::checkpoint::storage::{OperatorState, SavedCheckpoint};
use crate::graph::{ExecutionGraph, SubtaskId, VertexId};
use serde_json::{json, Value};

/// The file's JSON, or why this checkpoint cannot be written as one.
pub fn checkpoint_json(graph: &ExecutionGraph, saved: &SavedCheckpoint) -> Result<Value, String> {
    let id = saved.checkpoint.id;
    let snapshot = |s: SubtaskId| {
        saved
            .snapshots
            .binary_search_by_key(&s, |(x, _)| *x)
            .ok()
            .map(|i| &saved.snapshots[i].1)
    };
    let mut operators = serde_json::Map::new();
    for (v, vertex) in graph.vertices.iter().enumerate() {
        let subtasks: Vec<SubtaskId> = graph.subtasks_of(VertexId(v as u32)).collect();
        for s in &subtasks {
            if snapshot(*s).is_some_and(|x| !x.input_state.is_empty() || !x.output_state.is_empty())
            {
                return Err(format!(
                    "checkpoint {id} holds records in flight at {} (unaligned channel state), \
                     which a checkpoint file does not carry; save an aligned checkpoint",
                    graph.subtask_name(*s)
                ));
            }
        }
        for (k, member) in vertex.chain.members().iter().enumerate() {
            let finished: Vec<bool> = subtasks
                .iter()
                .map(|&s| {
                    saved.checkpoint.finished.contains(&s)
                        || snapshot(s).is_some_and(|x| x.finished)
                })
                .collect();
            let state: Vec<Value> = subtasks
                .iter()
                .map(|&s| match snapshot(s).and_then(|x| x.state.get(k)) {
                    None | Some(OperatorState::Stateless) => Value::Null,
                    Some(OperatorState::Source { offset }) => json!({"offset": offset}),
                    // F1.13: written for the record; `restore_from` refuses a job with splits.
                    Some(OperatorState::SplitReader { splits }) => json!({"splits": splits}),
                    Some(OperatorState::KeyedSum { sums }) => json!({"sums": sums}),
                    Some(OperatorState::TwoPhaseCommitSink { pending }) => json!({
                        "pending": pending.iter().map(|(c, records)| json!({
                            "checkpoint": c,
                            "records": records.iter().map(|r| json!([
                                graph.subtask_name(r.origin).to_string(), r.seq, r.key, r.value
                            ])).collect::<Vec<_>>(),
                        })).collect::<Vec<_>>(),
                    }),
                })
                .collect();
            let all = finished.iter().all(|&f| f);
            let none = !finished.iter().any(|&f| f);
            let mut entry = json!({"parallelism": vertex.parallelism});
            if all || !none {
                entry["finished"] = if all { json!(true) } else { json!(finished) };
            }
            if state.iter().any(|x| !x.is_null()) {
                entry["state"] = json!(state);
            }
            operators.insert(member.uid.clone(), entry);
        }
    }
    Ok(json!({"checkpoint": id, "operators": operators}))
}
