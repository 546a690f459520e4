//! `restore_from` (F1.6): a job that starts from a checkpoint instead of from nothing, given
//! inline or as a file that `flinksim run --save-checkpoint` wrote. The checkpoint names each
//! operator by its uid, so it can be restored into a changed job graph; what the restore then
//! refuses (Flink's `VertexFinishedStateChecker`) is decided when the job starts, not here:
//! here only the values are checked.
//!
//! ```json
//! "restore_from": {
//!   "checkpoint": 7,
//!   "operators": {
//!     "src": {"parallelism": 2, "finished": [true, false], "state": [null, {"offset": 40}]},
//!     "totals": {"parallelism": 2, "state": [{"sums": [[3, 120]]}, {"sums": []}]},
//!     "sink": {"parallelism": 1, "finished": true}
//!   }
//! }
//! ```

use super::raw::Object;
use super::types::{Job, Operator};
use super::validate::{problem, Problem};
use indexmap::IndexMap;
use serde::Deserialize;

/// The most operators, and subtasks per operator, a checkpoint may describe; the most entries
/// in one state. A checkpoint is written per subtask, so this bounds what a run holds.
const MAX_OPERATORS: usize = 1_000;
const MAX_ENTRIES: usize = 100_000;

/// `restore_from`, as written: inline, or the path of a checkpoint file (resolved by
/// [`super::load`] before validation, relative to the scenario file's folder).
pub(super) enum RawRestoreSource {
    Inline(RawRestoreFrom),
    File(String),
}

impl<'de> Deserialize<'de> for RawRestoreSource {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, Visitor};
        struct SourceVisitor;
        impl<'de> Visitor<'de> for SourceVisitor {
            type Value = RawRestoreSource;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a checkpoint: an object with `checkpoint` and `operators`, or the path of \
                     a file `flinksim run --save-checkpoint` wrote",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawRestoreSource, E> {
                Ok(RawRestoreSource::File(v.to_owned()))
            }
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<RawRestoreSource, A::Error> {
                RawRestoreFrom::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawRestoreSource::Inline)
            }
        }
        d.deserialize_any(SourceVisitor)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRestoreFrom {
    checkpoint: u64,
    #[serde(default)]
    allow_non_restored_state: bool,
    #[serde(default)]
    operators: RawOperators,
}

/// `operators` in file order; a uid written twice is an error, not a silent overwrite.
#[derive(Default)]
struct RawOperators(Vec<(String, RawRestoredOperator)>);

impl<'de> Deserialize<'de> for RawOperators {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, Visitor};
        struct OperatorsVisitor;
        impl<'de> Visitor<'de> for OperatorsVisitor {
            type Value = RawOperators;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object from operator uid to that operator's checkpointed state")
            }
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RawOperators, A::Error> {
                let mut out: Vec<(String, RawRestoredOperator)> = Vec::new();
                while let Some(uid) = map.next_key::<String>()? {
                    if out.iter().any(|(u, _)| *u == uid) {
                        return Err(de::Error::custom(format!(
                            "operator uid {uid:?} is listed twice"
                        )));
                    }
                    let Object(op) = map.next_value::<Object<RawRestoredOperator>>()?;
                    out.push((uid, op));
                }
                Ok(RawOperators(out))
            }
        }
        d.deserialize_map(OperatorsVisitor)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRestoredOperator {
    parallelism: u32,
    #[serde(default)]
    finished: Option<RawFinished>,
    #[serde(default)]
    state: Option<Vec<Option<Object<RawState>>>>,
}

/// `finished`: `true`/`false` for every subtask, or one per subtask.
enum RawFinished {
    All(bool),
    Each(Vec<bool>),
}

impl<'de> Deserialize<'de> for RawFinished {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, Visitor};
        struct FinishedVisitor;
        impl<'de> Visitor<'de> for FinishedVisitor {
            type Value = RawFinished;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("true or false for every subtask, or a list with one per subtask")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawFinished, E> {
                Ok(RawFinished::All(v))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<RawFinished, A::Error> {
                Vec::<bool>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(RawFinished::Each)
            }
        }
        d.deserialize_any(FinishedVisitor)
    }
}

/// One subtask's state of one operator: the field says which kind of operator it is for.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawState {
    offset: Option<u64>,
    sums: Option<Vec<(u32, i64)>>,
    pending: Option<Vec<Object<RawTransaction>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTransaction {
    checkpoint: u64,
    records: Vec<(String, u64, u32, i64)>,
}

/// A validated `restore_from`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoreFrom {
    /// The id the checkpoint had; the job's own checkpoints continue after it.
    pub checkpoint: u64,
    /// Flink's `--allowNonRestoredState`: state for an operator the job no longer has is
    /// dropped instead of refused.
    pub allow_non_restored_state: bool,
    /// By operator uid, in file order.
    pub operators: IndexMap<String, RestoredOperator>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoredOperator {
    /// The operator's parallelism when the checkpoint was taken.
    pub parallelism: u32,
    /// Per subtask (of `parallelism`): recorded finished.
    pub finished: Vec<bool>,
    /// Per subtask: its state (`Initial` when none was written).
    pub state: Vec<RestoredState>,
}

impl RestoredOperator {
    /// Every subtask finished: Flink's `FullyFinishedOperatorState`.
    pub fn fully_finished(&self) -> bool {
        self.finished.iter().all(|&f| f)
    }

    /// Holds state a job must not silently drop (Flink drops empty state of an operator it
    /// no longer has, finished-only state included).
    pub fn has_state(&self) -> bool {
        self.state.iter().any(|s| match s {
            RestoredState::Initial => false,
            RestoredState::Source { .. } => true,
            RestoredState::KeyedSum { sums } => !sums.is_empty(),
            RestoredState::TwoPhaseCommitSink { pending } => !pending.is_empty(),
        })
    }
}

/// One subtask's restored state of one operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RestoredState {
    Initial,
    /// The next sequence number the source subtask emits.
    Source {
        offset: u64,
    },
    /// Totals by key (`key % keys`).
    KeyedSum {
        sums: Vec<(u32, i64)>,
    },
    /// Pre-committed transactions, by checkpoint id, oldest first; committed on restore.
    TwoPhaseCommitSink {
        pending: Vec<(u64, Vec<RestoredRecord>)>,
    },
}

/// A record of a pre-committed transaction: `origin` names a subtask of this job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoredRecord {
    /// The subtask that made it (a source's, or a keyed sum's for a total).
    pub origin: super::SubtaskRef,
    pub seq: u64,
    pub key: u32,
    pub value: i64,
}

pub(super) fn check_restore_from(
    raw: RawRestoreFrom,
    job: &Job,
    streaming: bool,
) -> Result<RestoreFrom, Problem> {
    if !streaming {
        return Err(problem(
            "restore_from",
            "a batch job does not start from a checkpoint: it recovers from job events (P2); \
             remove the field",
        ));
    }
    if raw.checkpoint == 0 {
        return Err(problem(
            "restore_from.checkpoint",
            "checkpoint ids start at 1: give the id of the checkpoint restored",
        ));
    }
    if raw.operators.0.len() > MAX_OPERATORS {
        return Err(problem(
            "restore_from.operators",
            format!(
                "at most {MAX_OPERATORS} operators, not {}",
                raw.operators.0.len()
            ),
        ));
    }
    // uid -> (vertex index, the operator in this job)
    let mut ops: IndexMap<&str, (usize, &Operator)> = IndexMap::new();
    for (v, vertex) in job.vertices.iter().enumerate() {
        for member in vertex.chain.members() {
            ops.insert(member.uid.as_str(), (v, &member.operator));
        }
    }
    let mut operators = IndexMap::new();
    for (uid, raw_op) in raw.operators.0 {
        let at = |field: &str| format!("restore_from.operators.{uid}.{field}");
        let p = raw_op.parallelism;
        if p == 0 || p as usize > MAX_ENTRIES {
            return Err(problem(
                at("parallelism"),
                format!("the operator's parallelism in the checkpoint, 1 to {MAX_ENTRIES}"),
            ));
        }
        let finished = match raw_op.finished {
            None => vec![false; p as usize],
            Some(RawFinished::All(f)) => vec![f; p as usize],
            Some(RawFinished::Each(list)) if list.len() == p as usize => list,
            Some(RawFinished::Each(list)) => {
                return Err(problem(
                    at("finished"),
                    format!(
                        "lists {} subtasks but the operator had parallelism {p}; give one \
                         entry per subtask, or true/false for all",
                        list.len()
                    ),
                ))
            }
        };
        let target = ops.get(uid.as_str()).copied();
        let mut state = Vec::with_capacity(p as usize);
        match raw_op.state {
            None => state.resize(p as usize, RestoredState::Initial),
            Some(list) if list.len() != p as usize => {
                return Err(problem(
                    at("state"),
                    format!(
                        "lists {} subtasks but the operator had parallelism {p}; give one \
                         entry (or null) per subtask",
                        list.len()
                    ),
                ))
            }
            Some(list) => {
                for (i, entry) in list.into_iter().enumerate() {
                    let at = format!("restore_from.operators.{uid}.state[{i}]");
                    state.push(check_state(entry.map(|o| o.0), target, &at, job)?);
                }
            }
        }
        // A key belongs to one key group, so to one subtask, whatever the parallelism; and a
        // keyed sum only holds keys below its `keys`.
        let mut holder: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
        for (i, s) in state.iter().enumerate() {
            if let RestoredState::KeyedSum { sums } = s {
                for &(key, _) in sums {
                    if let Some(Operator::KeyedSum { keys }) = target.map(|(_, o)| o) {
                        if key >= *keys {
                            return Err(problem(
                                format!("restore_from.operators.{uid}.state[{i}].sums"),
                                format!(
                                    "key {key} is not one of this keyed_sum's keys 0 to {}",
                                    keys - 1
                                ),
                            ));
                        }
                    }
                    if let Some(j) = holder.insert(key, i) {
                        return Err(problem(
                            format!("restore_from.operators.{uid}.state[{i}].sums"),
                            format!(
                                "key {key} is also held by subtask {j}: a key belongs to one key \
                                 group, so to one subtask"
                            ),
                        ));
                    }
                }
            }
        }
        let restored = RestoredOperator {
            parallelism: p,
            finished,
            state,
        };
        match target {
            None if restored.has_state() && !raw.allow_non_restored_state => {
                // Flink's `Checkpoints.loadAndValidateCheckpoint`, F1.6.
                return Err(problem(
                    format!("restore_from.operators.{uid}"),
                    format!(
                        "cannot map checkpoint state for operator {uid:?} to the new program, \
                         because the operator is not available in the new program; to skip \
                         it, set restore_from.allow_non_restored_state (Flink's \
                         --allowNonRestoredState)"
                    ),
                ));
            }
            None => {} // empty or allowed: dropped
            Some((v, _)) => {
                let now = job.vertices[v].parallelism;
                let per_subtask = restored.state.iter().any(|s| {
                    matches!(
                        s,
                        RestoredState::Source { .. } | RestoredState::TwoPhaseCommitSink { .. }
                    )
                });
                let partial = !restored.fully_finished() && restored.finished.iter().any(|&f| f);
                if now != p && (per_subtask || partial) {
                    return Err(problem(
                        at("parallelism"),
                        format!(
                            "the operator had parallelism {p} and now has {now}: a source's \
                             offsets, a sink's transactions and partly finished operators are \
                             restored subtask by subtask, so their parallelism must stay (keyed \
                             sums and fully finished operators may change it)"
                        ),
                    ));
                }
                operators.insert(uid, restored);
            }
        }
    }
    Ok(RestoreFrom {
        checkpoint: raw.checkpoint,
        allow_non_restored_state: raw.allow_non_restored_state,
        operators,
    })
}

fn check_state(
    raw: Option<RawState>,
    target: Option<(usize, &Operator)>,
    at: &str,
    job: &Job,
) -> Result<RestoredState, Problem> {
    let Some(raw) = raw else {
        return Ok(RestoredState::Initial);
    };
    let given = [
        raw.offset.is_some(),
        raw.sums.is_some(),
        raw.pending.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() != 1 {
        return Err(problem(
            at,
            "give exactly one of `offset` (a source), `sums` (a keyed_sum) or `pending` (a \
             two_phase_commit sink), or null for an operator without state",
        ));
    }
    let state = if let Some(offset) = raw.offset {
        RestoredState::Source { offset }
    } else if let Some(sums) = raw.sums {
        if sums.len() > MAX_ENTRIES {
            return Err(problem(
                format!("{at}.sums"),
                format!("at most {MAX_ENTRIES} keys"),
            ));
        }
        let mut sorted = sums;
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(problem(format!("{at}.sums"), "a key is listed twice"));
        }
        RestoredState::KeyedSum { sums: sorted }
    } else {
        let mut pending = Vec::new();
        let mut total = 0usize;
        for (t, Object(tx)) in raw.pending.unwrap_or_default().into_iter().enumerate() {
            total += tx.records.len();
            if total > MAX_ENTRIES {
                return Err(problem(
                    format!("{at}.pending"),
                    format!("at most {MAX_ENTRIES} records in all"),
                ));
            }
            let mut records = Vec::with_capacity(tx.records.len());
            for (r, (origin, seq, key, value)) in tx.records.into_iter().enumerate() {
                let path = format!("{at}.pending[{t}].records[{r}]");
                let origin = super::validate::subtask_ref(&origin, job)
                    .map_err(|m| problem(path.clone(), m))?;
                records.push(RestoredRecord {
                    origin,
                    seq,
                    key,
                    value,
                });
            }
            pending.push((tx.checkpoint, records));
        }
        pending.sort_by_key(|(c, _)| *c);
        RestoredState::TwoPhaseCommitSink { pending }
    };
    let fits = match target.map(|(_, o)| o) {
        None => true,
        Some(operator) => matches!(
            (&state, operator),
            (RestoredState::Source { .. }, Operator::Source { .. })
                | (RestoredState::KeyedSum { .. }, Operator::KeyedSum { .. })
                | (
                    RestoredState::TwoPhaseCommitSink { .. },
                    Operator::Sink {
                        delivery: super::Delivery::TwoPhaseCommit,
                    },
                )
        ),
    };
    if !fits {
        let name = target.map_or("", |(_, o)| o.name());
        return Err(problem(
            at,
            format!("this state does not fit the operator with that uid in this job, a {name}"),
        ));
    }
    Ok(state)
}

/// The largest checkpoint file read: far above what `MAX_ENTRIES` lets one hold.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// Reads the checkpoint file `path` (relative to the folder of `scenario_file`): the parsed
/// checkpoint and the same as plain JSON, which replaces the path in the scenario's document
/// so that a trace of the run can be replayed without the file.
pub(super) fn load_file(
    path: &str,
    scenario_file: &str,
) -> Result<(RawRestoreFrom, serde_json::Value), super::ScenarioError> {
    let full = std::path::Path::new(scenario_file)
        .parent()
        .unwrap_or(std::path::Path::new(""))
        .join(path);
    let name = full.display().to_string();
    let from_scenario =
        |message: String| super::ScenarioError::new(scenario_file, "restore_from", message);
    let size = std::fs::metadata(&full)
        .map_err(|e| from_scenario(format!("cannot read the checkpoint file {name}: {e}")))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(from_scenario(format!(
            "the checkpoint file {name} has {size} bytes, more than the {MAX_FILE_BYTES} a \
             checkpoint may have"
        )));
    }
    let text = std::fs::read_to_string(&full)
        .map_err(|e| from_scenario(format!("cannot read the checkpoint file {name}: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        super::ScenarioError::new(
            &name,
            format!("{}:{}", e.line(), e.column()),
            format!("invalid JSON: {e}"),
        )
    })?;
    let mut deserializer = serde_json::Deserializer::from_str(&text);
    let Object(raw): Object<RawRestoreFrom> = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|e| {
        let path = match e.path().to_string() {
            root if root == "." => "$".to_owned(),
            path => path,
        };
        super::ScenarioError::new(&name, path, e.inner().to_string())
    })?;
    Ok((raw, value))
}
