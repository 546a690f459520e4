//! A vertex's operators: `operator` (one) or `chain` (several run by one task, F1.12), each
//! with its own fields and the uid its state is stored under (F1.6).

use super::{problem, Problem};
use crate::scenario::raw::{self, OperatorKind, RawChainMember, RawRecords};
use crate::scenario::types::{Chain, ChainedOperator, Delivery, DurationRange, Mode, Operator};

/// The most operators one chain may hold: chains in real jobs are short, and a bound keeps
/// every per-record loop over a chain short too.
pub(in crate::scenario) const MAX_CHAIN: usize = 8;

/// The operator-specific fields, as written on a vertex or on a chain member.
pub(in crate::scenario) struct Fields {
    pub records: Option<RawRecords>,
    pub record_interval: Option<DurationRange>,
    pub keys: Option<u32>,
    pub delivery: Option<Delivery>,
}

/// The kind of the vertex's first operator, if the vertex names one.
pub(super) fn head_kind(
    operator: Option<OperatorKind>,
    chain: Option<&[RawChainMember]>,
) -> Option<OperatorKind> {
    operator.or_else(|| chain.and_then(|c| c.first()).map(|m| m.operator))
}

/// Builds vertex `i`'s chain from `operator` or `chain`, whichever it has.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_chain(
    i: usize,
    id: &str,
    operator: Option<OperatorKind>,
    chain: Option<Vec<RawChainMember>>,
    fields: Fields,
    parallelism: u32,
    checkpointing: bool,
    mode: Mode,
) -> Result<Chain, Problem> {
    let at = |field: &str| format!("job.vertices[{i}].{field}");
    match (operator, chain) {
        (None, None) => Err(problem(
            format!("job.vertices[{i}]"),
            format!(
                "{id:?} needs `operator` (what its tasks run: \"source\", \"map\", \
                 \"keyed_sum\" or \"sink\"), or `chain` (several operators one task runs, head \
                 first)"
            ),
        )),
        (Some(_), Some(_)) => Err(problem(
            at("chain"),
            "give either `operator` (one operator) or `chain` (several), not both",
        )),
        (Some(kind), None) => {
            let operator = build(kind, fields, parallelism, checkpointing, mode, &at, id)?;
            Ok(Chain::single(id, operator))
        }
        (None, Some(members)) => {
            let present = [
                ("records", fields.records.is_some()),
                ("record_interval", fields.record_interval.is_some()),
                ("keys", fields.keys.is_some()),
                ("delivery", fields.delivery.is_some()),
            ];
            for (field, present) in present {
                if present {
                    return Err(problem(
                        at(field),
                        format!(
                            "with `chain`, `{field}` belongs to the chain member it applies \
                             to, like {{\"operator\": \"source\", \"records\": 100}}"
                        ),
                    ));
                }
            }
            check_members(i, id, members, parallelism, checkpointing, mode)
        }
    }
}

fn check_members(
    i: usize,
    id: &str,
    members: Vec<RawChainMember>,
    parallelism: u32,
    checkpointing: bool,
    mode: Mode,
) -> Result<Chain, Problem> {
    let path = format!("job.vertices[{i}].chain");
    if members.is_empty() || members.len() > MAX_CHAIN {
        return Err(problem(
            path,
            format!(
                "a chain holds 1 to {MAX_CHAIN} operators, not {}",
                members.len()
            ),
        ));
    }
    if mode == Mode::Batch && members.len() > 1 {
        return Err(problem(
            path,
            "operator chains are modelled in streaming jobs only: a batch job's tasks run one \
             operator each here; give each operator a vertex of its own",
        ));
    }
    let last = members.len() - 1;
    let mut keyed_sum: Option<usize> = None;
    let mut chain = Vec::with_capacity(members.len());
    for (k, member) in members.into_iter().enumerate() {
        let at = |field: &str| format!("job.vertices[{i}].chain[{k}].{field}");
        match member.operator {
            OperatorKind::Source if k > 0 => {
                return Err(problem(
                    at("operator"),
                    "a source can only head a chain: it has no input to be chained behind",
                ))
            }
            OperatorKind::Sink if k < last => {
                return Err(problem(
                    at("operator"),
                    "a sink can only end a chain: it has no output to chain another operator to",
                ))
            }
            OperatorKind::KeyedSum => {
                if let Some(first) = keyed_sum {
                    return Err(problem(
                        at("operator"),
                        format!(
                            "chain[{first}] is already a keyed_sum: a keyed operator needs its \
                             input partitioned by its own keys, and in Flink that keyBy starts \
                             a new vertex"
                        ),
                    ));
                }
                if k > 0 && member_is_source(&chain) {
                    return Err(problem(
                        at("operator"),
                        "a keyed_sum needs its input partitioned by key (an all_to_all \
                         key_hash edge into its vertex), and behind a source in the same \
                         chain it has none; give it a vertex of its own",
                    ));
                }
                keyed_sum = Some(k);
            }
            OperatorKind::Source | OperatorKind::Map | OperatorKind::Sink => {}
        }
        let uid = match member.uid {
            Some(uid) if uid.trim().is_empty() => {
                return Err(problem(
                    at("uid"),
                    "must not be empty: a checkpoint stores the operator's state under it",
                ))
            }
            Some(uid) => uid,
            None => format!("{id}.{k}"),
        };
        let fields = Fields {
            records: member.records,
            record_interval: member.record_interval,
            keys: member.keys,
            delivery: member.delivery,
        };
        let operator = build(
            member.operator,
            fields,
            parallelism,
            checkpointing,
            mode,
            &at,
            id,
        )?;
        chain.push(ChainedOperator { uid, operator });
    }
    Ok(Chain::new(chain))
}

fn member_is_source(chain: &[ChainedOperator]) -> bool {
    matches!(
        chain.first().map(|m| &m.operator),
        Some(Operator::Source { .. })
    )
}

/// One operator of kind `kind` from its fields; `at` makes the JSON path of a field.
fn build(
    kind: OperatorKind,
    fields: Fields,
    parallelism: u32,
    checkpointing: bool,
    mode: Mode,
    at: &dyn Fn(&str) -> String,
    id: &str,
) -> Result<Operator, Problem> {
    let misplaced = [
        ("records", fields.records.is_some(), OperatorKind::Source),
        (
            "record_interval",
            fields.record_interval.is_some(),
            OperatorKind::Source,
        ),
        ("keys", fields.keys.is_some(), OperatorKind::KeyedSum),
        ("delivery", fields.delivery.is_some(), OperatorKind::Sink),
    ];
    for (field, present, owner) in misplaced {
        if present && kind != owner {
            return Err(problem(
                at(field),
                format!(
                    "`{field}` only applies to {} operators, and this one of {id:?} is a {}",
                    owner.name(),
                    kind.name()
                ),
            ));
        }
    }
    Ok(match kind {
        OperatorKind::Source if mode == Mode::Batch => {
            // Batch (P2.1): the enumerator hands out splits on request, so `records` counts
            // the records of one split, the same for every split.
            let per_split = match fields.records {
                None => raw::DEFAULT_RECORDS,
                Some(RawRecords::Every(crate::scenario::Records::Bounded(n))) => {
                    crate::scenario::Records::Bounded(n)
                }
                Some(_) => {
                    return Err(problem(
                        at("records"),
                        "in batch mode a source reads splits: `records` is one whole number, \
                         the records of each split (a list per subtask, or \"unbounded\", \
                         only applies to streaming)",
                    ))
                }
            };
            if fields.record_interval.is_some() {
                return Err(problem(
                    at("record_interval"),
                    "a batch source reads a split at `process_time` per record; \
                     `record_interval` only applies to streaming",
                ));
            }
            Operator::Source {
                records: vec![per_split; parallelism as usize],
                record_interval: raw::DEFAULT_RECORD_INTERVAL,
            }
        }
        OperatorKind::Source => Operator::Source {
            records: subtask_records(fields.records, parallelism)
                .map_err(|message| problem(at("records"), message))?,
            record_interval: fields
                .record_interval
                .unwrap_or(raw::DEFAULT_RECORD_INTERVAL),
        },
        OperatorKind::Map => Operator::Map,
        OperatorKind::KeyedSum => {
            let keys = fields.keys.unwrap_or(raw::DEFAULT_KEYS);
            if keys == 0 {
                return Err(problem(
                    at("keys"),
                    "must be at least 1: records are summed per key",
                ));
            }
            Operator::KeyedSum { keys }
        }
        OperatorKind::Sink => {
            let delivery = fields.delivery.unwrap_or(Delivery::AtLeastOnce);
            if delivery == Delivery::TwoPhaseCommit && !checkpointing {
                return Err(problem(
                    at("delivery"),
                    "a two_phase_commit sink commits on checkpoint completion, so it needs a \
                     `checkpointing` block (or use \"at_least_once\")",
                ));
            }
            Operator::Sink { delivery }
        }
    })
}

/// Expands a source's `records` into one entry per subtask.
fn subtask_records(
    raw: Option<RawRecords>,
    parallelism: u32,
) -> Result<Vec<crate::scenario::Records>, String> {
    let subtasks = parallelism as usize;
    match raw.unwrap_or(RawRecords::Every(raw::DEFAULT_RECORDS)) {
        RawRecords::Every(records) => Ok(vec![records; subtasks]),
        RawRecords::PerSubtask(list) if list.len() == subtasks => Ok(list),
        RawRecords::PerSubtask(list) => Err(format!(
            "lists {} record counts but the vertex has parallelism {parallelism}; give exactly \
             one per subtask, or one number for every subtask",
            list.len()
        )),
    }
}

/// Every operator's uid is unique in the job: a checkpoint stores state under it (F1.6).
pub(super) fn check_uids(vertices: &[crate::scenario::types::Vertex]) -> Result<(), Problem> {
    let mut seen: std::collections::BTreeMap<&str, String> = std::collections::BTreeMap::new();
    for (i, vertex) in vertices.iter().enumerate() {
        let single = vertex.chain.len() == 1 && vertex.chain.members()[0].uid == vertex.id;
        for (k, member) in vertex.chain.members().iter().enumerate() {
            let path = if single {
                format!("job.vertices[{i}].id")
            } else {
                format!("job.vertices[{i}].chain[{k}].uid")
            };
            if let Some(first) = seen.insert(&member.uid, path.clone()) {
                return Err(problem(
                    path,
                    format!(
                        "operator uid {:?} is already used at {first}; a checkpoint stores each \
                         operator's state under its uid, so uids must be unique",
                        member.uid
                    ),
                ));
            }
        }
    }
    Ok(())
}
