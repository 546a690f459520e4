//! What the sinks must hold when checkpoints are at least once (`docs/rules.md` F1.7), for
//! `exactly-once-output`.
//!
//! An at-least-once snapshot may hold records that arrived after a barrier on a channel that
//! delivered its barrier early. After a restore, the producers send those records again, so
//! a sink may receive or commit a record more than once. A keyed sum may also count such a
//! record twice, so its total can come out higher. Nothing may be lost, though. Without a
//! failover, nothing is replayed, and the output must be exactly what a failure-free run
//! gives.
//!
//! So records are matched by identity: sink vertex, origin, key and sequence number. Per
//! identity, a sink must hold at least as many copies as the reference expects. Without a
//! failover it must hold exactly those copies, with exactly the reference's values. After a
//! failover it may hold more copies, and larger values: every value in the workload is positive,
//! and a map only adds to it. An identity the reference does not know is always wrong.

use crate::record::Record;
use std::collections::BTreeMap;

/// Sink vertex, origin, key, sequence number.
type Identity = (u32, u32, u32, u64);

fn identity(vertex: u32, r: &Record) -> Identity {
    (vertex, r.origin.0, r.key, r.seq)
}

/// One way a sink's output breaks the at-least-once promise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The sink never held the record (judged only once the job finished).
    Lost { vertex: u32, record: Record },
    /// A failure-free run does not produce it, or not with this value.
    Unexpected {
        vertex: u32,
        record: Record,
        event: u64,
    },
    /// More copies than expected, although nothing was replayed.
    Duplicate {
        vertex: u32,
        record: Record,
        event: u64,
    },
}

/// Compares `sunk` (sink vertex, record, trace event) with the reference's `expected` copies.
pub fn judge(
    expected: &[(u32, Record)],
    sunk: &[(u32, Record, u64)],
    failed_over: bool,
    finished: bool,
) -> Vec<Problem> {
    let mut want: BTreeMap<Identity, Vec<Record>> = BTreeMap::new();
    for (vertex, r) in expected {
        want.entry(identity(*vertex, r)).or_default().push(*r);
    }
    let mut got: BTreeMap<Identity, Vec<(Record, u64)>> = BTreeMap::new();
    for (vertex, r, event) in sunk {
        got.entry(identity(*vertex, r))
            .or_default()
            .push((*r, *event));
    }
    let mut problems = Vec::new();
    for (id, copies) in &got {
        let vertex = id.0;
        let Some(wanted) = want.get(id) else {
            let (record, event) = copies[0];
            problems.push(Problem::Unexpected {
                vertex,
                record,
                event,
            });
            continue;
        };
        let least = wanted.iter().map(|r| r.value).min().unwrap_or(i64::MIN);
        for (k, &(record, event)) in copies.iter().enumerate() {
            let fits = if failed_over {
                record.value >= least
            } else {
                wanted.iter().any(|w| w.value == record.value)
            };
            if !fits {
                problems.push(Problem::Unexpected {
                    vertex,
                    record,
                    event,
                });
            } else if k >= wanted.len() && !failed_over {
                problems.push(Problem::Duplicate {
                    vertex,
                    record,
                    event,
                });
            }
        }
    }
    if finished {
        for (id, wanted) in &want {
            let held = got.get(id).map_or(0, Vec::len);
            for &record in wanted.iter().skip(held) {
                problems.push(Problem::Lost {
                    vertex: id.0,
                    record,
                });
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SubtaskId;

    fn r(seq: u64, value: i64) -> Record {
        Record {
            origin: SubtaskId(0),
            key: 7,
            seq,
            value,
        }
    }

    #[test]
    fn without_a_failover_the_output_is_exact() {
        let expected = [(2, r(0, 5)), (2, r(1, 6))];
        assert_eq!(
            judge(
                &expected,
                &[(2, r(0, 5), 10), (2, r(1, 6), 11)],
                false,
                true
            ),
            []
        );
        assert_eq!(
            judge(
                &expected,
                &[(2, r(0, 5), 10), (2, r(0, 5), 12), (2, r(1, 6), 11)],
                false,
                true
            ),
            [Problem::Duplicate {
                vertex: 2,
                record: r(0, 5),
                event: 12
            }]
        );
        assert_eq!(
            judge(
                &expected,
                &[(2, r(0, 5), 10), (2, r(1, 7), 11)],
                false,
                true
            ),
            [Problem::Unexpected {
                vertex: 2,
                record: r(1, 7),
                event: 11
            }]
        );
    }

    #[test]
    fn after_a_failover_copies_and_larger_totals_are_allowed_but_nothing_lost() {
        let expected = [(2, r(0, 5)), (2, r(1, 6))];
        let replayed = [(2, r(0, 5), 10), (2, r(0, 5), 20), (2, r(1, 9), 21)];
        assert_eq!(judge(&expected, &replayed, true, true), []);
        assert_eq!(
            judge(&expected, &[(2, r(0, 5), 10)], true, true),
            [Problem::Lost {
                vertex: 2,
                record: r(1, 6)
            }]
        );
        assert_eq!(
            judge(&expected, &[(2, r(0, 5), 10)], true, false),
            [],
            "a run that stopped early loses nothing yet"
        );
        assert_eq!(
            judge(&expected, &[(2, r(0, 4), 10), (2, r(1, 6), 11)], true, true),
            [Problem::Unexpected {
                vertex: 2,
                record: r(0, 4),
                event: 10
            }],
            "a total can only grow with replays"
        );
        assert_eq!(
            judge(
                &expected,
                &[(3, r(0, 5), 10), (2, r(0, 5), 11), (2, r(1, 6), 12)],
                true,
                true
            ),
            [Problem::Unexpected {
                vertex: 3,
                record: r(0, 5),
                event: 10
            }],
            "a sink the record never goes to"
        );
    }
}
