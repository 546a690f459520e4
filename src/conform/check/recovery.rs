//! The batch recovery rules after a JobManager crash (P2.4, F2.3, F2.4): what was recovered
//! FINISHED, and what ran again.

use super::Checker;
use crate::conform::trace::Event;
use crate::conform::InputError;
use crate::graph::SubtaskId;
use std::collections::BTreeSet;

impl Checker<'_> {
    /// P2.4 (F2.3, F2.4): after a JobManager crash, the executions recovered FINISHED are a
    /// replayable prefix of the job events the old JobMaster wrote (up to a finished event that
    /// carries a snapshot), and the re-run set is the model's closure from the unfinished
    /// subtasks and the producers of partitions that went missing.
    pub(super) fn batch_recovery(&mut self) -> Result<(), InputError> {
        let Some(&crash) = self.crashes.first() else {
            return Ok(());
        };
        let entries = self.trace.entries.clone();
        let mut logged: Vec<(SubtaskId, bool)> = Vec::new();
        let mut restored: BTreeSet<SubtaskId> = BTreeSet::new();
        let mut rerun: BTreeSet<SubtaskId> = BTreeSet::new();
        let mut released: BTreeSet<SubtaskId> = BTreeSet::new();
        let mut missed: BTreeSet<SubtaskId> = BTreeSet::new();
        // Producers whose partition a TaskManager reported before the JobMaster classified
        // the partitions (later reports are answered by a release, F2.4 step 3).
        let mut reported: BTreeSet<SubtaskId> = BTreeSet::new();
        let mut classified = false;
        let mut first_restore_line = 0;
        for (i, e) in entries.iter().enumerate() {
            let line = i + 2;
            match &e.event {
                Event::JobEventWritten {
                    event,
                    subtask: Some(s),
                    snapshot,
                    ..
                } if event == "execution_vertex_finished" && e.time < crash => {
                    logged.push((self.subtask(line, s)?, *snapshot));
                }
                Event::ExecutionState {
                    subtask, from, to, ..
                } if e.time > crash => {
                    let s = self.subtask(line, subtask)?;
                    if from == "CREATED" && to == "FINISHED" {
                        restored.insert(s);
                        if first_restore_line == 0 {
                            first_restore_line = line;
                        }
                    }
                    if to == "SCHEDULED" || to == "DEPLOYING" {
                        rerun.insert(s);
                    }
                }
                Event::LateReport { task_manager } if e.time > crash => {
                    // F2.4 step 3: a report is late only once the JobMaster stopped waiting.
                    if !classified {
                        self.depart(
                            line,
                            e.time,
                            "late-report-released",
                            "F2.4",
                            format!("{task_manager}'s report released as late before the JobMaster classified its partitions"),
                        );
                    }
                    self.report.outcomes.late_reports += 1;
                }
                Event::PartitionReported { producer, .. } if e.time > crash && !classified => {
                    let name = producer.split('#').next().unwrap_or(producer);
                    reported.insert(self.subtask(line, name)?);
                }
                Event::PartitionsRecovered {
                    released: r,
                    missed: m,
                    ..
                } if e.time > crash && !classified => {
                    classified = true;
                    for p in r {
                        let name = p.split('#').next().unwrap_or(p);
                        released.insert(self.subtask(line, name)?);
                    }
                    for p in m {
                        let name = p.split('#').next().unwrap_or(p);
                        missed.insert(self.subtask(line, name)?);
                    }
                }
                _ => {}
            }
        }
        // F2.3: replay keeps finished events up to the last one carrying a snapshot.
        let cuts: Vec<usize> = (0..=logged.len())
            .filter(|&k| k == 0 || logged[k - 1].1)
            .collect();
        let prefix =
            |k: usize| -> BTreeSet<SubtaskId> { logged[..k].iter().map(|e| e.0).collect() };
        let longest = *cuts.last().expect("0 is a cut");
        if !cuts.iter().any(|&k| prefix(k) == restored) {
            let extra = self.names(restored.difference(&prefix(longest)).copied());
            let expected = self.names(prefix(longest));
            let got = self.names(restored.iter().copied());
            let time = entries
                .get(first_restore_line.saturating_sub(2))
                .map_or(crash, |e| e.time);
            self.depart(
                first_restore_line,
                time,
                "recovered-as-logged",
                "P2.4",
                format!("recovered FINISHED {got}; the job events written before the crash replay to {expected} (not in them: {extra})"),
            );
        } else if prefix(longest) != restored {
            self.report.skipped.push(format!(
                "recovered-as-logged: recovery kept a shorter replayable prefix than the {longest} finished events written (a write still in the buffer at the crash)"
            ));
        }
        // P2.4 step 4: from every unfinished subtask and every producer of a missed partition,
        // consumers that ran on a partition produced again and producers whose partition is
        // unavailable (not reported in time, or released), until nothing changes.
        let unavailable: BTreeSet<SubtaskId> = restored
            .iter()
            .copied()
            .filter(|p| !reported.contains(p) || released.contains(p))
            .collect();
        let all: Vec<SubtaskId> = (0..self.graph.subtasks.len() as u32)
            .map(SubtaskId)
            .collect();
        let mut expected: BTreeSet<SubtaskId> = all
            .iter()
            .copied()
            .filter(|s| !restored.contains(s))
            .chain(missed.iter().copied())
            .collect();
        let mut queue: Vec<SubtaskId> = expected.iter().copied().collect();
        while let Some(s) = queue.pop() {
            let sub = &self.graph.subtasks[s.index()];
            let producers: Vec<SubtaskId> = sub
                .inputs
                .iter()
                .map(|c| self.graph.channels[c.index()].from)
                .collect();
            let consumers: Vec<SubtaskId> = sub
                .outputs
                .iter()
                .flat_map(|g| g.channels.iter())
                .map(|c| self.graph.channels[c.index()].to)
                .collect();
            let again = producers
                .into_iter()
                .filter(|p| unavailable.contains(p))
                .chain(consumers.into_iter().filter(|c| restored.contains(c)));
            for x in again.collect::<Vec<_>>() {
                if expected.insert(x) {
                    queue.push(x);
                }
            }
        }
        if expected != rerun {
            let extra = self.names(rerun.difference(&expected).copied());
            let missing = self.names(expected.difference(&rerun).copied());
            let end = entries.last().map_or(0, |e| e.time);
            self.depart(
                0,
                end,
                "minimal-rerun",
                "P2.4",
                format!(
                    "re-ran {}; the model re-runs {} for these events and partitions (re-ran beyond it: {extra}; not re-run: {missing})",
                    self.names(rerun.iter().copied()),
                    self.names(expected.iter().copied())
                ),
            );
        }
        self.report.outcomes.kept = restored.difference(&rerun).map(|&s| self.name(s)).collect();
        self.report.outcomes.rerun = rerun.iter().map(|&s| self.name(s)).collect();
        Ok(())
    }
}
