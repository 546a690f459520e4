//! `expect.restores` (P1.8): what each failover's restore must show, checked against the job
//! when the scenario is read.

use super::types::Job;
use super::validate::{problem, Problem};

/// Checks `expect.restores`: its subtask names must exist; lists are kept sorted, since they
/// are compared as sets.
pub(super) fn check_expected_restores(
    raw: Vec<super::raw::RawExpectedRestore>,
    job: &Job,
) -> Result<Vec<super::types::ExpectedRestore>, Problem> {
    let names = |list: Option<Vec<String>>, path: String| {
        list.map(|names| {
            let mut checked = Vec::with_capacity(names.len());
            for (k, name) in names.into_iter().enumerate() {
                super::validate::check_subtask(&name, job)
                    .map_err(|m| problem(format!("{path}[{k}]"), m))?;
                if checked.contains(&name) {
                    return Err(problem(
                        format!("{path}[{k}]"),
                        format!("{name} is listed twice"),
                    ));
                }
                checked.push(name);
            }
            checked.sort();
            Ok(checked)
        })
        .transpose()
    };
    raw.into_iter()
        .enumerate()
        .map(|(i, r)| {
            Ok(super::types::ExpectedRestore {
                checkpoint: r.checkpoint,
                scope: r.scope,
                restarted: names(r.restarted, format!("expect.restores[{i}].restarted"))?,
                finished: names(r.finished, format!("expect.restores[{i}].finished"))?,
                records_replayed: r.records_replayed,
            })
        })
        .collect()
}
