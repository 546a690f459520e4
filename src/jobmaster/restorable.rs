//! The shapes of finished subtasks a checkpoint may be restored from (`docs/rules.md`
//! F1.6, Flink's `VertexFinishedStateChecker`). A vertex is *fully finished* when all its
//! subtasks are recorded finished, *partially finished* when some are. Finishing flows
//! downstream, so in any checkpoint a protocol can produce:
//! - a fully finished vertex has only fully finished predecessors;
//! - a partially finished vertex has no predecessor that is still entirely running;
//! - a partially finished vertex behind an all-to-all edge does not follow a partially
//!   finished predecessor (over all-to-all, one running producer keeps every consumer running).
//!
//! Anything else means the checkpoint is corrupt, and the restore is refused.

use crate::graph::{ExecutionGraph, VertexId};
use crate::scenario::{Pattern, RestoreFrom};

/// A vertex's finished state in a checkpoint, Flink's `VertexFinishedState`; the order is
/// Flink's, which its message lists mixed states in.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Finished {
    None,
    Partially,
    Fully,
}

impl Finished {
    fn flink_name(self) -> &'static str {
        match self {
            Finished::None => "ALL_RUNNING",
            Finished::Partially => "PARTIALLY_FINISHED",
            Finished::Fully => "FULLY_FINISHED",
        }
    }

    fn of(finished: usize, of: usize) -> Finished {
        match finished {
            0 => Finished::None,
            n if n == of => Finished::Fully,
            _ => Finished::Partially,
        }
    }
}

/// `Err` names the first rule the checkpoint's `finished` set (indexed by subtask) breaks.
/// Used at a failover's restore, where every operator of a vertex finished together.
pub fn check(graph: &ExecutionGraph, finished: &[bool]) -> Result<(), String> {
    let states: Vec<Finished> = (0..graph.vertices.len() as u32)
        .map(|v| {
            let v = VertexId(v);
            let n = graph.subtasks_of(v).filter(|s| finished[s.index()]).count();
            Finished::of(n, graph.vertices[v.index()].parallelism as usize)
        })
        .collect();
    check_predecessors(graph, &states)
}

/// F1.6, Flink's `VertexFinishedStateChecker` for a job started from `restore_from`: each
/// operator's finished state is looked up by its uid (an operator the checkpoint does not
/// know runs); a vertex whose operators disagree is refused, then every vertex's
/// predecessors are checked. `Ok` holds the subtasks restored finished: every subtask of a
/// fully finished vertex, and in a partially finished one each subtask that every operator
/// of its chain recorded finished. `ignore_mixed` injects `accept-mixed-chain`: a vertex whose
/// operators disagree takes its head's state.
pub fn check_restore_from(
    graph: &ExecutionGraph,
    restore: &RestoreFrom,
    ignore_mixed: bool,
) -> Result<Vec<bool>, String> {
    let mut states = Vec::with_capacity(graph.vertices.len());
    let mut finished = vec![false; graph.subtasks.len()];
    for (v, vertex) in graph.vertices.iter().enumerate() {
        let mut seen: Vec<Finished> = Vec::new();
        for member in vertex.chain.members() {
            let state = restore
                .operators
                .get(&member.uid)
                .map_or(Finished::None, |op| {
                    Finished::of(
                        op.finished.iter().filter(|&&f| f).count(),
                        op.finished.len(),
                    )
                });
            if !seen.contains(&state) {
                seen.push(state);
            }
        }
        let head = seen[0];
        seen.sort();
        if let [state] = seen[..] {
            states.push(state);
        } else if ignore_mixed {
            states.push(head); // the bug
        } else {
            let names: Vec<&str> = seen.iter().map(|s| s.flink_name()).collect();
            return Err(format!(
                "Can not restore vertex {} which contain mixed operator finished state: [{}]",
                vertex.name,
                names.join(", ")
            ));
        }
        for s in graph.subtasks_of(VertexId(v as u32)) {
            let index = graph.subtasks[s.index()].index as usize;
            finished[s.index()] = match states[v] {
                Finished::Fully => true,
                Finished::None => false,
                Finished::Partially => vertex.chain.members().iter().all(|m| {
                    restore
                        .operators
                        .get(&m.uid)
                        .is_some_and(|op| op.finished.get(index) == Some(&true))
                }),
            };
        }
    }
    check_predecessors(graph, &states)?;
    Ok(finished)
}

/// Finishing flows downstream, so in any checkpoint a protocol can produce:
/// - a fully finished vertex has only fully finished predecessors;
/// - a partially finished vertex has no predecessor that is still entirely running;
/// - a partially finished vertex behind an all-to-all edge has only fully finished
///   predecessors there (over all-to-all, one running producer keeps every consumer running).
///
/// The messages are Flink's.
fn check_predecessors(graph: &ExecutionGraph, states: &[Finished]) -> Result<(), String> {
    const ILLEGAL: &str = "Illegal JobGraph modification. Cannot run a program with";
    for &v in &graph.topological_order {
        let d = &graph.vertices[v.index()].name;
        for &e in &graph.vertices[v.index()].inputs {
            let edge = &graph.edges[e];
            let up = states[edge.from.index()];
            match (states[v.index()], up, edge.pattern) {
                (Finished::Fully, Finished::None | Finished::Partially, _) => {
                    return Err(format!(
                        "{ILLEGAL} fully finished vertices predeceased with the ones not fully \
                         finished. Task vertex {d} has a predecessor not fully finished"
                    ))
                }
                (Finished::Partially, Finished::None | Finished::Partially, Pattern::AllToAll) => {
                    let which = if up == Finished::None {
                        "all running"
                    } else {
                        "partially finished"
                    };
                    return Err(format!(
                        "{ILLEGAL} partially finished vertices predeceased with running or \
                         partially finished ones and connected via the ALL_TO_ALL edges. Task \
                         vertex {d} has a {which} predecessor"
                    ));
                }
                (Finished::Partially, Finished::None, Pattern::Forward) => {
                    return Err(format!(
                        "{ILLEGAL} partially finished vertices predeceased with all running \
                         ones. Task vertex {d} has a all running predecessor"
                    ))
                }
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario;

    fn graph(pattern: &str) -> ExecutionGraph {
        let json = format!(
            r#"{{"name": "t", "mode": "streaming", "job": {{
                "vertices": [
                    {{"id": "a", "operator": "source", "parallelism": 2}},
                    {{"id": "b", "operator": "map", "parallelism": 2}}],
                "edges": [{{"from": "a", "to": "b", "pattern": "{pattern}"}}]}}}}"#
        );
        ExecutionGraph::build(&scenario::parse(&json, "t").expect("valid").job)
    }

    #[test]
    fn shapes_a_protocol_produces_are_accepted() {
        let g = graph("forward");
        for finished in [
            [false, false, false, false],
            [true, false, false, false],
            [true, false, true, false],
            [true, true, false, false],
            [true, true, true, false],
            [true, true, true, true],
        ] {
            assert_eq!(check(&g, &finished), Ok(()), "{finished:?}");
        }
    }

    #[test]
    fn each_inconsistent_shape_is_refused_with_its_rule() {
        let forward = graph("forward");
        let err = check(&forward, &[false, false, true, true]).unwrap_err();
        assert!(
            err.contains("Task vertex b has a predecessor not fully finished"),
            "{err}"
        );
        let err = check(&forward, &[false, false, true, false]).unwrap_err();
        assert!(err.contains("b has a all running predecessor"), "{err}");
        let all_to_all = graph("all_to_all");
        let err = check(&all_to_all, &[true, false, true, false]).unwrap_err();
        assert!(err.contains("via the ALL_TO_ALL edges"), "{err}");
        // The same shape over a pointwise edge is fine.
        assert_eq!(check(&forward, &[true, false, true, false]), Ok(()));
    }
}
