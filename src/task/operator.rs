//! The operators a task runs (`docs/rules.md` P0), with the state each keeps.

use super::reader::{Idle, SplitReader};
use crate::checkpoint::storage::OperatorState;
use crate::graph::SubtaskId;
use crate::record::{map_value, Record};
use crate::scenario::{self, Delivery, DurationRange, Records};
use crate::source_mutant::{on, SourceMutant};
use std::collections::BTreeMap;

pub enum Operator {
    /// Emits records `0..limit` (or forever when unbounded), one per `interval`; or, with
    /// `splits`, the records of the splits its enumerator assigns (F1.13).
    Source {
        next: u64,
        limit: Option<u64>,
        interval: DurationRange,
        splits: Option<Box<SplitReader>>,
    },
    Map,
    /// Sums values per key (`key % keys`) and emits the totals at end of input. A `BTreeMap` so
    /// totals come out in key order, whatever order the records came in.
    KeyedSum {
        keys: u32,
        sums: BTreeMap<u32, i64>,
    },
    /// Collects records; what it received is the run's output (the oracles read it from the
    /// trace).
    Sink,
    /// A two-phase-commit sink (P1.7): a transaction per checkpoint, pre-committed when the
    /// snapshot is taken and committed when the checkpoint is notified complete. Records
    /// become output only when committed.
    TwoPhaseCommitSink {
        open: Vec<Record>,
        /// Pre-committed transactions by checkpoint id, oldest first.
        precommitted: Vec<(u64, Vec<Record>)>,
    },
}

impl Operator {
    /// The operator of subtask `index` of a vertex with this specification.
    pub fn new(spec: &scenario::Operator, index: u32) -> Operator {
        match spec {
            scenario::Operator::Source {
                records,
                record_interval,
            } => Operator::Source {
                next: 0,
                limit: match records[index as usize] {
                    Records::Bounded(n) => Some(n),
                    Records::Unbounded => None,
                },
                interval: *record_interval,
                splits: None,
            },
            scenario::Operator::Map => Operator::Map,
            scenario::Operator::KeyedSum { keys } => Operator::KeyedSum {
                keys: *keys,
                sums: BTreeMap::new(),
            },
            scenario::Operator::Sink {
                delivery: Delivery::AtLeastOnce,
            } => Operator::Sink,
            scenario::Operator::Sink {
                delivery: Delivery::TwoPhaseCommit,
            } => Operator::TwoPhaseCommitSink {
                open: Vec::new(),
                precommitted: Vec::new(),
            },
        }
    }

    /// Restores the state written for a checkpoint (P1.8).
    pub fn restore(&mut self, state: &OperatorState) {
        match (self, state) {
            (Operator::Source { next, .. }, OperatorState::Source { offset }) => {
                // source mutant restore-offset-plus-one
                *next = *offset + u64::from(on(SourceMutant::RestoreOffsetPlusOne));
            }
            (
                Operator::Source {
                    splits: Some(reader),
                    ..
                },
                OperatorState::SplitReader { splits },
            ) => reader.restore(splits),
            (Operator::Map | Operator::Sink, OperatorState::Stateless) => {}
            (Operator::KeyedSum { sums, .. }, OperatorState::KeyedSum { sums: saved }) => {
                *sums = saved.iter().copied().collect();
            }
            (
                Operator::TwoPhaseCommitSink { open, precommitted },
                OperatorState::TwoPhaseCommitSink { pending },
            ) => {
                open.clear();
                *precommitted = pending.clone();
            }
            (operator, state) => unreachable!(
                "a snapshot of another operator: {state:?} for {}",
                operator.kind()
            ),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Operator::Source { .. } => "source",
            Operator::Map => "map",
            Operator::KeyedSum { .. } => "keyed_sum",
            Operator::Sink => "sink",
            Operator::TwoPhaseCommitSink { .. } => "two-phase-commit sink",
        }
    }

    /// How a sink writes out what it receives; `None` for other operators.
    pub fn delivery(&self) -> Option<Delivery> {
        match self {
            Operator::Sink => Some(Delivery::AtLeastOnce),
            Operator::TwoPhaseCommitSink { .. } => Some(Delivery::TwoPhaseCommit),
            Operator::Source { .. } | Operator::Map | Operator::KeyedSum { .. } => None,
        }
    }

    /// The operator was finished in the restored checkpoint (F1.6): a source has nothing left
    /// to emit.
    pub fn finish_on_restore(&mut self) {
        if let Operator::Source {
            next,
            limit,
            splits,
            ..
        } = self
        {
            *next = limit.unwrap_or(*next);
            *limit = Some(*next);
            if let Some(reader) = splits {
                reader.finish_on_restore();
            }
        }
    }

    /// F1.13: the source reads the splits its enumerator assigns, `records` each.
    pub fn read_splits(&mut self) {
        if let Operator::Source { limit, splits, .. } = self {
            let records = limit.expect("a source that reads splits is bounded (validation)");
            *splits = Some(Box::new(SplitReader::new(records)));
        }
    }

    /// F1.13 step 1: the enumerator's answer to the reader's request.
    pub fn assign_split(&mut self, split: Option<u32>) {
        match self {
            Operator::Source {
                splits: Some(reader),
                ..
            } => reader.assign(split),
            _ => unreachable!("only a source that reads splits is assigned one"),
        }
    }

    /// The state the operator starts with (only `snapshot-head-only` writes it).
    pub fn initial_state(&self) -> OperatorState {
        match self {
            Operator::Source {
                splits: Some(_), ..
            } => OperatorState::SplitReader { splits: Vec::new() },
            Operator::Source { .. } => OperatorState::Source { offset: 0 },
            Operator::Map | Operator::Sink => OperatorState::Stateless,
            Operator::KeyedSum { .. } => OperatorState::KeyedSum { sums: Vec::new() },
            Operator::TwoPhaseCommitSink { .. } => OperatorState::TwoPhaseCommitSink {
                pending: Vec::new(),
            },
        }
    }

    /// The pre-committed transactions restored from a checkpoint, to commit at once (P1.8).
    pub fn take_restored_transactions(&mut self) -> Vec<(u64, Vec<Record>)> {
        match self {
            Operator::TwoPhaseCommitSink { precommitted, .. } => std::mem::take(precommitted),
            Operator::Source { .. }
            | Operator::Map
            | Operator::KeyedSum { .. }
            | Operator::Sink => Vec::new(),
        }
    }

    /// Acts on `notifyCheckpointComplete`, so its task must wait for a checkpoint covering its
    /// final state before finishing (P1.7).
    pub fn needs_checkpoint_complete(&self) -> bool {
        matches!(self, Operator::TwoPhaseCommitSink { .. })
    }

    /// The state to write for checkpoint `n`. A two-phase-commit sink pre-commits its open
    /// transaction as the transaction of `n`.
    pub fn snapshot(&mut self, n: u64) -> OperatorState {
        match self {
            Operator::Source {
                splits: Some(reader),
                ..
            } => reader.snapshot(),
            Operator::Source { next, .. } => OperatorState::Source { offset: *next },
            Operator::Map | Operator::Sink => OperatorState::Stateless,
            Operator::KeyedSum { sums, .. } => OperatorState::KeyedSum {
                sums: sums.iter().map(|(&k, &v)| (k, v)).collect(),
            },
            Operator::TwoPhaseCommitSink { open, precommitted } => {
                precommitted.push((n, std::mem::take(open)));
                OperatorState::TwoPhaseCommitSink {
                    pending: precommitted.clone(),
                }
            }
        }
    }

    /// Checkpoint `n` completed: commits every pre-committed transaction up to `n` (later ones
    /// wait for their own checkpoint). Returns the committed transactions, oldest first.
    pub fn commit(&mut self, n: u64) -> Vec<(u64, Vec<Record>)> {
        match self {
            Operator::TwoPhaseCommitSink { precommitted, .. } => {
                let keep = precommitted
                    .iter()
                    // source mutant commit-one-ahead
                    .position(|(c, _)| *c > n + u64::from(on(SourceMutant::CommitOneAhead)))
                    .unwrap_or(precommitted.len());
                precommitted.drain(..keep).collect()
            }
            Operator::Source { .. }
            | Operator::Map
            | Operator::KeyedSum { .. }
            | Operator::Sink => Vec::new(),
        }
    }

    pub fn is_source(&self) -> bool {
        matches!(self, Operator::Source { .. })
    }

    /// `source-ends-early` (an injected bug): a bounded source's limit is one record short.
    pub fn end_one_record_early(&mut self) {
        if let Operator::Source {
            limit: Some(limit), ..
        } = self
        {
            *limit = limit.saturating_sub(1);
        }
    }

    /// The sequence number of the next record a source emits, or `None` when it has none now
    /// ([`Operator::idle`] says why).
    pub fn next_source_seq(&mut self) -> Option<u64> {
        match self {
            Operator::Source {
                next,
                limit,
                splits,
                ..
            } => {
                if let Some(reader) = splits {
                    return reader.next_seq(); // F1.13
                }
                if limit.is_some_and(|limit| *next >= limit) {
                    return None;
                }
                *next += 1;
                Some(*next - 1)
            }
            _ => unreachable!("only sources emit on their own"),
        }
    }

    /// F1.14 step 11: records a bounded source has left (`None`: unbounded, or reading
    /// splits, whose end the reader knows).
    pub fn records_left(&self) -> Option<u64> {
        match self {
            Operator::Source {
                next,
                limit,
                splits: None,
                ..
            } => limit.map(|limit| limit.saturating_sub(*next)),
            _ => None,
        }
    }

    /// A source with no record to emit: its input ended, or (F1.13) a reader holding no split
    /// asks for one or waits for the answer.
    pub fn idle(&mut self) -> Idle {
        match self {
            Operator::Source {
                splits: Some(reader),
                ..
            } => reader.idle(),
            _ => Idle::End,
        }
    }

    pub fn source_interval(&self) -> DurationRange {
        match self {
            Operator::Source { interval, .. } => *interval,
            _ => unreachable!("only sources have a pace"),
        }
    }

    /// Processes one input record; returns the record to emit, if any.
    #[inline]
    pub fn process(&mut self, record: Record) -> Option<Record> {
        match self {
            Operator::Source { .. } => unreachable!("sources have no input"),
            Operator::Map => Some(Record {
                value: map_value(record.value),
                ..record
            }),
            Operator::KeyedSum { keys, sums } => {
                let total = sums.entry(record.key % *keys).or_insert(0);
                *total = total.wrapping_add(record.value);
                None
            }
            Operator::Sink => None,
            Operator::TwoPhaseCommitSink { open, .. } => {
                open.push(record);
                None
            }
        }
    }

    /// What the operator emits when its input ends: a keyed sum's totals, one record per key,
    /// identified by `(this subtask, key)`.
    pub fn end_of_input(&mut self, me: SubtaskId) -> Vec<Record> {
        match self {
            Operator::KeyedSum { sums, .. } => sums
                .iter()
                .map(|(&key, &value)| Record {
                    origin: me,
                    key,
                    seq: u64::from(key),
                    value,
                })
                .collect(),
            Operator::Source { .. }
            | Operator::Map
            | Operator::Sink
            | Operator::TwoPhaseCommitSink { .. } => Vec::new(),
        }
    }
}
