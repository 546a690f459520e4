//! The streaming `coordinators` block (F1.13): source vertices that read splits their split
//! enumerator assigns, with the same field name and shape as a batch job's
//! `batch.coordinators.<vertex>.splits` (P2.5).

use super::bounds::MAX_SPLITS;
use super::raw::Object;
use super::types::{Failover, Fault, FaultKind, Job, JobMasterConfig, Mode, Records};
use super::validate::{problem, Problem};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCoordinator {
    splits: u32,
}

/// Records of one split: a split record's sequence number holds the split above bit 32 and
/// the offset below it (README, "The workload").
const MAX_RECORDS_PER_SPLIT: u64 = u32::MAX as u64;

/// Gives each named source vertex its splits; `records` must then be one bounded number, the
/// records of each split.
pub(super) fn check_coordinators(
    raw: BTreeMap<String, Object<RawCoordinator>>,
    job: &mut Job,
    mode: Mode,
) -> Result<(), Problem> {
    if mode == Mode::Batch && !raw.is_empty() {
        return Err(problem(
            "coordinators",
            "a batch job's coordinators are `batch.coordinators` (P2.5); this block is for \
             streaming jobs (F1.13)",
        ));
    }
    for (id, c) in raw {
        let at = format!("coordinators.{id}");
        let Some(v) = job.vertices.iter().position(|v| v.id == id) else {
            let ids: Vec<String> = job.vertices.iter().map(|v| format!("{:?}", v.id)).collect();
            return Err(problem(
                at,
                format!(
                    "unknown vertex {id:?}; the job's vertices are {}",
                    ids.join(", ")
                ),
            ));
        };
        let vertex = &mut job.vertices[v];
        let Some((records, _)) = vertex.chain.source() else {
            return Err(problem(
                format!("{at}.splits"),
                format!(
                    "{id:?} is a {} vertex: only a source's coordinator assigns splits",
                    vertex.chain.describe()
                ),
            ));
        };
        let splits = c.0.splits;
        if !(1..=MAX_SPLITS).contains(&splits) {
            return Err(problem(
                format!("{at}.splits"),
                format!(
                    "must be between 1 and {MAX_SPLITS}: the enumerator keeps each split's \
                     assignment, not {splits}"
                ),
            ));
        }
        let per_split = match records.first() {
            Some(&Records::Bounded(n)) if records.iter().all(|&r| r == Records::Bounded(n)) => n,
            _ => {
                return Err(problem(
                    format!("job.vertices[{v}].records"),
                    format!(
                        "{id:?} reads splits (coordinators.{id}): `records` is one whole \
                         number, the records of each split (a list per subtask, or \
                         \"unbounded\", does not apply to a source that reads splits)"
                    ),
                ))
            }
        };
        if per_split > MAX_RECORDS_PER_SPLIT {
            return Err(problem(
                format!("job.vertices[{v}].records"),
                format!("at most {MAX_RECORDS_PER_SPLIT} records per split, not {per_split}"),
            ));
        }
        vertex.splits = Some(splits);
    }
    Ok(())
}

/// Refuses what splits are not modelled with yet (F1.13).
pub(super) fn check_split_features(
    job: &Job,
    jobmaster: &JobMasterConfig,
    faults: &[Fault],
    restore_from: bool,
) -> Result<(), Problem> {
    let Some(vertex) = job.vertices.iter().find(|v| v.splits.is_some()) else {
        return Ok(());
    };
    let at = format!("coordinators.{}", vertex.id);
    if jobmaster.failover == Failover::Reconcile {
        return Err(problem(
            at,
            "split enumerators under `jobmaster.failover: \"reconcile\"` are not implemented \
             yet (the new JobMaster would rebuild them from the readers' reports); use \
             \"restart\" (F1.13)",
        ));
    }
    if restore_from {
        return Err(problem(
            at,
            "starting a job that reads splits from `restore_from` is not implemented yet \
             (F1.13)",
        ));
    }
    if let Some(i) = faults
        .iter()
        .position(|f| matches!(f.kind, FaultKind::StopWithSavepoint { .. }))
    {
        return Err(problem(
            format!("faults[{i}]"),
            "stop-with-savepoint in a job that reads splits is not implemented yet (F1.13)",
        ));
    }
    Ok(())
}
