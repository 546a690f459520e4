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
use crate::scenario::Pattern;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Finished {
    None,
    Partially,
    Fully,
}

/// `Err` names the first rule the checkpoint's `finished` set (indexed by subtask) breaks.
pub fn check(graph: &ExecutionGraph, finished: &[bool]) -> Result<(), String> {
    let state = |v: VertexId| {
        let n = graph.subtasks_of(v).filter(|s| finished[s.index()]).count() as u32;
        match n {
            0 => Finished::None,
            n if n == graph.vertices[v.index()].parallelism => Finished::Fully,
            _ => Finished::Partially,
        }
    };
    for edge in &graph.edges {
        let (up, down) = (state(edge.from), state(edge.to));
        let (u, d) = (
            &graph.vertices[edge.from.index()].name,
            &graph.vertices[edge.to.index()].name,
        );
        match (up, down, edge.pattern) {
            (Finished::None | Finished::Partially, Finished::Fully, _) => {
                return Err(format!(
                    "{d} is fully finished but its predecessor {u} is not"
                ))
            }
            (Finished::None, Finished::Partially, _) => {
                return Err(format!(
                    "{d} is partially finished but its predecessor {u} is entirely running"
                ))
            }
            (Finished::Partially, Finished::Partially, Pattern::AllToAll) => {
                return Err(format!(
                    "{d} is partially finished behind the partially finished {u} over an all-to-all edge"
                ))
            }
            _ => {}
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
            err.contains("fully finished but its predecessor a is not"),
            "{err}"
        );
        let err = check(&forward, &[false, false, true, false]).unwrap_err();
        assert!(err.contains("entirely running"), "{err}");
        let all_to_all = graph("all_to_all");
        let err = check(&all_to_all, &[true, false, true, false]).unwrap_err();
        assert!(err.contains("over an all-to-all edge"), "{err}");
        // The same shape over a pointwise edge is fine.
        assert_eq!(check(&forward, &[true, false, true, false]), Ok(()));
    }
}
