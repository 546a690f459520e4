//! The operators one task runs, head first: Flink's `OperatorChain` (`docs/rules.md` F1.12).
//!
//! A record the task takes enters the head and goes through the members in order, inside the
//! task and within its one step: no channel, no credit, no trace event between them. Each
//! member keeps its own state and is snapshotted on its own, so a checkpoint stores one state
//! per member (under the member's uid, F1.6). At end of input the members end head first, as
//! Flink's `StreamOperatorWrapper` does: what a member emits then (a keyed sum's totals) goes
//! through the members after it before they end in turn.

use super::operator::Operator;
use super::reader::Idle;
use crate::checkpoint::storage::ChainState;
use crate::graph::SubtaskId;
use crate::record::Record;
use crate::scenario::{self, Delivery, DurationRange};

/// Where a record that entered the chain ended up.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flow {
    /// Kept by a member (a keyed sum's input, a sink at the head, a two-phase-commit sink's
    /// transaction): nothing leaves the task.
    Absorbed,
    /// Out of the tail, to the task's output channels.
    Emit(Record),
    /// Written out by an at-least-once sink chained behind other operators: output of the job
    /// that no channel carried, so the task records it (`chained_sink`) for the oracles.
    Sunk(Record),
}

pub struct OperatorChain {
    /// Never empty; one member for a vertex written with `operator`.
    members: Vec<Operator>,
}

impl OperatorChain {
    /// The chain of subtask `index` of a vertex with this specification.
    pub fn new(spec: &scenario::Chain, index: u32) -> OperatorChain {
        OperatorChain {
            members: spec.operators().map(|o| Operator::new(o, index)).collect(),
        }
    }

    fn head_mut(&mut self) -> &mut Operator {
        &mut self.members[0]
    }

    /// Restores each member's state from a checkpoint (P1.8), member `i` from entry `i`.
    pub fn restore(&mut self, state: &ChainState) {
        assert_eq!(
            state.len(),
            self.members.len(),
            "a snapshot of another chain"
        );
        for (member, saved) in self.members.iter_mut().zip(state) {
            member.restore(saved);
        }
    }

    /// Every member was finished in the restored checkpoint (F1.6).
    pub fn finish_on_restore(&mut self) {
        for member in &mut self.members {
            member.finish_on_restore();
        }
    }

    /// The pre-committed transactions restored from a checkpoint, to commit at once (P1.8).
    pub fn take_restored_transactions(&mut self) -> Vec<(u64, Vec<Record>)> {
        self.members
            .iter_mut()
            .flat_map(Operator::take_restored_transactions)
            .collect()
    }

    /// Some member acts on `notifyCheckpointComplete` (P1.7).
    pub fn needs_checkpoint_complete(&self) -> bool {
        self.members.iter().any(Operator::needs_checkpoint_complete)
    }

    /// Every member's state for checkpoint `n`, head first. `head_only` injects
    /// `snapshot-head-only`: the members behind the head are written as they started.
    pub fn snapshot(&mut self, n: u64, head_only: bool) -> ChainState {
        self.members
            .iter_mut()
            .enumerate()
            .map(|(k, m)| {
                let state = m.snapshot(n);
                if head_only && k > 0 {
                    m.initial_state() // the bug
                } else {
                    state
                }
            })
            .collect()
    }

    /// Checkpoint `n` completed: the transactions it commits, oldest first.
    pub fn commit(&mut self, n: u64) -> Vec<(u64, Vec<Record>)> {
        self.members.iter_mut().flat_map(|m| m.commit(n)).collect()
    }

    pub fn is_source(&self) -> bool {
        self.members[0].is_source()
    }

    /// `source-ends-early` (an injected bug) in the head source.
    pub fn end_one_record_early(&mut self) {
        self.head_mut().end_one_record_early();
    }

    pub fn next_source_seq(&mut self) -> Option<u64> {
        self.head_mut().next_source_seq()
    }

    /// F1.14 step 11: records the head source has left to emit (`None`: no limit).
    pub fn records_left(&self) -> Option<u64> {
        self.members[0].records_left()
    }

    /// The head source has no record to emit: why (F1.13: a reader may ask for a split).
    pub fn idle(&mut self) -> Idle {
        self.head_mut().idle()
    }

    /// F1.13: the head source reads splits.
    pub fn read_splits(&mut self) {
        self.head_mut().read_splits();
    }

    /// F1.13 step 1: the head reader's answer from its enumerator.
    pub fn assign_split(&mut self, split: Option<u32>) {
        self.head_mut().assign_split(split);
    }

    pub fn source_interval(&self) -> DurationRange {
        self.members[0].source_interval()
    }

    /// A record the head source emitted, through the members behind it.
    #[inline]
    pub fn emitted_by_head(&mut self, record: Record) -> Flow {
        self.pass(1, record)
    }

    /// One input record, through the whole chain.
    #[inline]
    pub fn process(&mut self, record: Record) -> Flow {
        self.pass(0, record)
    }

    /// `record` through members `from..`: each either passes a record on or keeps it.
    #[inline]
    fn pass(&mut self, from: usize, mut record: Record) -> Flow {
        for (k, member) in self.members.iter_mut().enumerate().skip(from) {
            match member.process(record) {
                Some(out) => record = out,
                None if k > 0 && member.delivery() == Some(Delivery::AtLeastOnce) => {
                    return Flow::Sunk(record)
                }
                None => return Flow::Absorbed,
            }
        }
        Flow::Emit(record)
    }

    /// End of input, head first: each member's end-of-input output (a keyed sum's totals, one
    /// record per key, identified by `(me, key)`) goes through the members after it.
    pub fn end_of_input(&mut self, me: SubtaskId) -> Vec<Flow> {
        let mut flows = Vec::new();
        for k in 0..self.members.len() {
            for record in self.members[k].end_of_input(me) {
                flows.push(self.pass(k + 1, record));
            }
        }
        flows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::storage::OperatorState;
    use crate::scenario::{Chain, ChainedOperator, Operator as Spec};

    fn chain(specs: &[Spec]) -> OperatorChain {
        let members = specs
            .iter()
            .enumerate()
            .map(|(k, o)| ChainedOperator {
                uid: format!("v.{k}"),
                operator: o.clone(),
            })
            .collect();
        OperatorChain::new(&Chain::new(members), 0)
    }

    fn record(key: u32, value: i64) -> Record {
        Record {
            origin: SubtaskId(0),
            key,
            seq: 0,
            value,
        }
    }

    const SINK: Spec = Spec::Sink {
        delivery: Delivery::AtLeastOnce,
    };

    /// A record goes through every member; a chained sink writes it out, a head sink takes it.
    #[test]
    fn a_record_flows_through_the_members_in_order() {
        let mut maps = chain(&[Spec::Map, Spec::Map]);
        let Flow::Emit(out) = maps.process(record(3, 10)) else {
            panic!("two maps emit")
        };
        assert_eq!(
            out.value,
            crate::record::map_value(crate::record::map_value(10))
        );
        let mut sunk = chain(&[Spec::Map, SINK]);
        assert!(matches!(sunk.process(record(3, 10)), Flow::Sunk(r) if r.value == out.value - 1));
        assert_eq!(chain(&[SINK]).process(record(3, 10)), Flow::Absorbed);
    }

    /// End of input goes head first: the keyed sum's totals pass the map behind it.
    #[test]
    fn end_of_input_emits_through_the_members_behind() {
        let mut c = chain(&[Spec::Map, Spec::KeyedSum { keys: 4 }, Spec::Map]);
        assert_eq!(c.process(record(5, 10)), Flow::Absorbed);
        assert_eq!(c.process(record(9, 20)), Flow::Absorbed);
        let flows = c.end_of_input(SubtaskId(7));
        let totals: Vec<(u32, i64)> = flows
            .iter()
            .map(|f| match f {
                Flow::Emit(r) => (r.key, r.value),
                other => panic!("{other:?}"),
            })
            .collect();
        let m = crate::record::map_value;
        assert_eq!(totals, [(1, m(m(10) + m(20)))]);
    }

    /// A snapshot holds one state per member, and a restore gives each its own back; the
    /// injected `snapshot-head-only` writes the members behind the head as they started.
    #[test]
    fn each_member_is_snapshotted_and_restored() {
        let specs = [Spec::Map, Spec::KeyedSum { keys: 4 }];
        let mut c = chain(&specs);
        c.process(record(1, 5));
        let state = c.snapshot(1, false);
        assert_eq!(
            state,
            [
                OperatorState::Stateless,
                OperatorState::KeyedSum {
                    sums: vec![(1, crate::record::map_value(5))]
                }
            ]
        );
        let mut restored = chain(&specs);
        restored.restore(&state);
        assert_eq!(restored.snapshot(2, false), state);
        let bugged = c.snapshot(3, true);
        assert_eq!(bugged[1], OperatorState::KeyedSum { sums: vec![] });
        // The bug spares the head: its state is written as it is.
        let mut head = chain(&[Spec::KeyedSum { keys: 4 }, Spec::Map]);
        head.process(record(1, 5));
        let whole = head.snapshot(4, false);
        assert_ne!(whole[0], OperatorState::KeyedSum { sums: vec![] });
        assert_eq!(head.snapshot(5, true)[0], whole[0]);
    }
}
