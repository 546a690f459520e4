//! The output rules: what the sinks committed (streaming, after removing re-commits) or wrote
//! in their last run (batch) is the expected output exactly once (P4); re-commits only after a
//! restore (P1.8); nothing emitted by a vertex deployed finished on restore (F1.6).

use super::{expected, Checker};
use crate::conform::trace::Event;
use crate::conform::InputError;
use std::collections::BTreeMap;

impl Checker<'_> {
    /// `exactly-once-output` (P4, P1.7, P1.8): after removing re-commits (same writer, attempt
    /// and sequence number: the committer is idempotent), the committed records are the
    /// expected ones exactly once. A re-commit is legal only after a restore.
    pub(super) fn commits(&mut self) -> Result<(), InputError> {
        let sinks = self
            .graph
            .vertices
            .iter()
            .filter(|v| v.outputs.is_empty())
            .count();
        let named = self
            .trace
            .entries
            .iter()
            .all(|e| !matches!(&e.event, Event::Commit { sink: None, .. }));
        if sinks > 1 && !named {
            self.report.skipped.push(format!(
                "exactly-once-output, recommit-only-after-restore: {sinks} sinks share one commit log whose lines do not name the sink, so (writer, attempt, seq) cannot tell their records apart"
            ));
            return Ok(());
        }
        type Key = (Option<String>, u32, u32, u64);
        let mut seen: BTreeMap<Key, (u64, i64, i64, u64)> = BTreeMap::new();
        let mut kept: Vec<(i64, i64)> = Vec::new();
        let mut raw = 0u64;
        let entries = self.trace.entries.clone();
        for (i, e) in entries.iter().enumerate() {
            let Event::Commit {
                checkpoint,
                writer,
                attempt,
                seq,
                key,
                value,
                sink,
                ..
            } = &e.event
            else {
                continue;
            };
            raw += 1;
            let line = i + 2;
            let id: Key = (sink.clone(), *writer, *attempt, *seq);
            match seen.get(&id).copied() {
                None => {
                    seen.insert(id, (*checkpoint, *key, *value, e.time));
                    kept.push((*key, *value));
                }
                Some((c0, k0, v0, t0)) => {
                    if (c0, k0, v0) != (*checkpoint, *key, *value) {
                        self.depart(
                            line,
                            e.time,
                            "exactly-once-output",
                            "P4",
                            format!(
                                "writer {writer} attempt {attempt} seq {seq} committed as ({key}, {value}) of checkpoint {checkpoint}, earlier as ({k0}, {v0}) of checkpoint {c0}"
                            ),
                        );
                    } else if !self.restores.iter().any(|&(r, _)| r >= t0 && r <= e.time) {
                        self.depart(
                            line,
                            e.time,
                            "recommit-only-after-restore",
                            "P1.8",
                            format!(
                                "writer {writer} attempt {attempt} seq {seq} committed again with no restore since its first commit"
                            ),
                        );
                    }
                }
            }
        }
        self.report.outcomes.committed = Some(kept.len() as u64);
        self.report.outcomes.committed_raw = Some(raw);
        let Some(expected) = expected::output(&self.trace.header.params) else {
            self.report
                .skipped
                .push("exactly-once-output: params do not say the sources' records".into());
            return Ok(());
        };
        kept.sort_unstable();
        if kept != expected {
            let missing = multiset_minus(&expected, &kept);
            let extra = multiset_minus(&kept, &expected);
            let end = self.trace.entries.last().map_or(0, |e| e.time);
            self.depart(
                0,
                end,
                "exactly-once-output",
                "P4",
                format!(
                    "committed {} records after de-duplication, expected {}: missing {:?}, extra {:?}",
                    kept.len(),
                    expected.len(),
                    &missing[..missing.len().min(5)],
                    &extra[..extra.len().min(5)]
                ),
            );
        }
        Ok(())
    }

    /// P2.4 / P4: what a batch job's sink subtasks wrote in their last run (a sink subtask that
    /// runs again writes again from sequence number 0) is the expected output exactly once.
    pub(super) fn batch_output(&mut self) {
        let mut last_run: BTreeMap<u32, Vec<(i64, i64)>> = BTreeMap::new();
        let mut any = false;
        for e in &self.trace.entries {
            if let Event::Output {
                writer,
                seq,
                key,
                value,
                ..
            } = &e.event
            {
                any = true;
                let run = last_run.entry(*writer).or_default();
                if *seq == 0 {
                    run.clear();
                }
                run.push((*key, *value));
            }
        }
        if !any {
            self.report
                .skipped
                .push("batch output: no output.jsonl in the run".into());
            return;
        }
        let Some(expected) = expected::output(&self.trace.header.params) else {
            self.report
                .skipped
                .push("batch output: params do not say the sources' records".into());
            return;
        };
        let mut got: Vec<(i64, i64)> = last_run.into_values().flatten().collect();
        got.sort_unstable();
        self.report.outcomes.committed = Some(got.len() as u64);
        if got != expected {
            let end = self.trace.entries.last().map_or(0, |e| e.time);
            let missing = multiset_minus(&expected, &got);
            let extra = multiset_minus(&got, &expected);
            self.depart(
                0,
                end,
                "exactly-once-output",
                "P4",
                format!(
                    "the sinks' last runs wrote {} records, expected {}: missing {:?}, extra {:?}",
                    got.len(),
                    expected.len(),
                    &missing[..missing.len().min(5)],
                    &extra[..extra.len().min(5)]
                ),
            );
        }
    }

    /// F1.6: a vertex whose last attempts were all deployed finished on restore emits nothing
    /// (REST `write-records` of the vertex is what its last attempts emitted).
    pub(super) fn emitted_nothing(&mut self) {
        let fo_restore = self.report.outcomes.finished_on_restore.clone();
        for v in &self.trace.header.vertices {
            let all = (0..v.parallelism).all(|i| fo_restore.contains(&format!("{}[{i}]", v.id)));
            if !all {
                continue;
            }
            match v.records_out {
                Some(0) => {}
                Some(n) => {
                    let end = self.trace.entries.last().map_or(0, |e| e.time);
                    self.depart(
                        0,
                        end,
                        "finished-on-restore-emits-nothing",
                        "F1.6",
                        format!("{} was deployed finished on restore, yet its last attempts emitted {n} records", v.id),
                    );
                }
                None => self.report.skipped.push(format!(
                    "finished-on-restore-emits-nothing: no REST write-records for {}",
                    v.id
                )),
            }
        }
    }
}

fn multiset_minus(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut counts: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    for x in a {
        *counts.entry(*x).or_default() += 1;
    }
    for x in b {
        *counts.entry(*x).or_default() -= 1;
    }
    counts
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .flat_map(|(x, n)| std::iter::repeat_n(x, n as usize))
        .collect()
}
