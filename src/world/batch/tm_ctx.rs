//! A batch TaskManager's view of the world while it handles one event ([`TmCtx`]): what a
//! TaskManager may touch and nothing else. Its own state is its own (`&mut TaskManager`: its
//! tasks, its partitions); the context lends it the scheduler, the trace, its link to the
//! JobMaster, the deployment descriptors the JobMaster wrote, the remote shuffle service, the
//! other TaskManagers' partitions (to read, as a consumer does over the network) and the
//! work-time random stream. It does not lend the JobMaster, the job event store, HA
//! records or the other TaskManagers' state beyond their partitions.

use crate::batch::data::Fragment;
use crate::batch::oracle::TaskRpc;
use crate::bug::Bug;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::scenario::Batch as BatchConfig;
use crate::taskmanager::batch::{Blocking, Descriptor, Partition};
use crate::taskmanager::Outbox;
use crate::taskmanager::TaskManager;
use crate::trace::{Address, Rpc, TraceEvent};
use crate::world::batch::Cluster;
use crate::world::{Act, Event};
use sim::{Duration, Instant, Scheduler};

/// The other TaskManagers, as one of them sees them: their partitions, to read.
pub struct Peers<'a> {
    before: &'a [TaskManager<Blocking>],
    after: &'a [TaskManager<Blocking>],
}

impl<'a> Peers<'a> {
    /// TaskManager `tm` of `tms`, to change, and the others, to read.
    fn around(
        tms: &'a mut [TaskManager<Blocking>],
        tm: u32,
    ) -> (&'a mut TaskManager<Blocking>, Peers<'a>) {
        let (before, rest) = tms.split_at_mut(tm as usize);
        let (me, after) = rest
            .split_first_mut()
            .expect("a TaskManager of the cluster");
        let peers = Peers {
            before: &*before,
            after: &*after,
        };
        (me, peers)
    }

    /// TaskManager `tm`, unless it is the one looking.
    pub(crate) fn get(&self, tm: u32) -> Option<&TaskManager<Blocking>> {
        let tm = tm as usize;
        let split = self.before.len();
        match tm.cmp(&split) {
            std::cmp::Ordering::Less => self.before.get(tm),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => self.after.get(tm - split - 1),
        }
    }
}

/// TaskManager `tm` of `tms`, with its context: the rest of the cluster and the scheduler.
pub(crate) fn split<'a, 's>(
    tms: &'a mut [TaskManager<Blocking>],
    cluster: &'a mut Cluster,
    sched: &'a mut Scheduler<'s, Event>,
    tm: u32,
) -> (&'a mut TaskManager<Blocking>, TmCtx<'a, 's>) {
    let (me, peers) = Peers::around(tms, tm);
    (
        me,
        TmCtx {
            cluster,
            peers,
            sched,
        },
    )
}

/// What a batch TaskManager may touch while it handles one event (module doc).
pub struct TmCtx<'a, 's> {
    cluster: &'a mut Cluster,
    peers: Peers<'a>,
    sched: &'a mut Scheduler<'s, Event>,
}

impl Act for TmCtx<'_, '_> {
    fn now(&self) -> Instant {
        self.sched.now()
    }

    fn record(&mut self, event: TraceEvent) {
        let now = self.sched.now();
        self.cluster.record(now, event);
    }

    fn after(&mut self, delay: Duration, event: Event) {
        self.sched.after(delay, event);
    }
}

impl TmCtx<'_, '_> {
    pub(crate) fn graph(&self) -> &ExecutionGraph {
        &self.cluster.graph
    }

    pub(crate) fn config(&self) -> &BatchConfig {
        &self.cluster.batch
    }

    pub(crate) fn bug(&self) -> Option<Bug> {
        self.cluster.bug
    }

    /// `jobmaster.failover: reconcile` (P3): the window and the terminal-state retention.
    pub(crate) fn reconcile(&self) -> Option<(Duration, Duration)> {
        self.cluster.reconcile
    }

    pub(crate) fn is_source(&self, subtask: SubtaskId) -> bool {
        self.cluster.is_source[subtask.index()]
    }

    /// One draw of a record's processing time from the work stream.
    pub(crate) fn draw_work(&mut self, min: Duration, max: Duration) -> Duration {
        self.cluster.work_rng.duration_between(min, max)
    }

    /// Sends message number `seq` of TaskManager `from` to the JobMaster elected last; whether
    /// it went on the wire (a cut link loses it).
    pub(crate) fn send_to_jobmaster(
        &mut self,
        from: &TaskManager<Blocking>,
        msg: Rpc,
        seq: u64,
    ) -> bool {
        let to = (
            Address::TaskManager(from.index),
            Address::JobMaster,
            self.cluster.jm_incarnation,
        );
        self.cluster.send_to(self.sched, from, to, msg, seq)
    }

    /// Tells the `no-lost-rpc` oracle that process `process` of TaskManager `tm` sent `rpc`.
    pub(crate) fn rpc_sent(&mut self, tm: u32, process: u32, rpc: TaskRpc) {
        self.cluster.oracles.rpc_sent(tm, process, rpc);
    }

    /// P3.3: schedules the retry of `outbox`, process `process` of TaskManager `tm`'s
    /// (`Outbox::schedule_retry`).
    pub(crate) fn schedule_retry(&mut self, outbox: &mut Outbox, tm: u32, process: u32) {
        outbox.schedule_retry(self.sched, tm, process);
    }

    /// P3.3's counters: an RPC kept, and one sent again.
    pub(crate) fn count_kept(&mut self) {
        self.cluster.rpcs_kept += 1;
    }

    pub(crate) fn count_resent(&mut self) {
        self.cluster.rpcs_resent += 1;
    }

    /// P3.3: TaskManager `tm` is about to send its kept RPCs again; the oracles judge whether
    /// it may (it must be able to reach the JobMaster).
    pub(crate) fn resending(&mut self, tm: u32) {
        let index = self.cluster.trace.len().saturating_sub(1);
        let now = self.now();
        self.cluster.oracles.rpcs_resent(tm, (now, index));
    }

    // ---- deployments ------------------------------------------------------------------

    /// The descriptor of attempt `attempt` of `subtask`, and whether it is speculative (P2.8);
    /// `None` when the JobMaster has since replaced it by a newer attempt (stale).
    pub(crate) fn descriptor(
        &self,
        subtask: SubtaskId,
        attempt: u32,
    ) -> Option<(Descriptor, bool)> {
        let i = subtask.index();
        let speculative = self.cluster.spec_descriptors[i]
            .as_ref()
            .is_some_and(|d| d.attempt == attempt);
        let descriptor = if speculative {
            self.cluster.spec_descriptors[i]
                .clone()
                .expect("speculative")
        } else {
            self.cluster.descriptors[i].clone()
        };
        (descriptor.attempt == attempt).then_some((descriptor, speculative))
    }

    // ---- ground truth and statistics ---------------------------------------------------

    /// An original attempt of `subtask` is deployed: the subtask is not finished (yet).
    pub(crate) fn unfinished(&mut self, subtask: SubtaskId) {
        self.cluster.done[subtask.index()] = None;
    }

    /// Attempt `attempt` of `subtask` finished now; a re-run of a recovery adds what it
    /// took, since `started`, to the work the recovery redid. An attempt the JobMaster has
    /// replaced meanwhile (F2.7) finished nothing the job uses.
    pub(crate) fn finished(&mut self, subtask: SubtaskId, attempt: u32, started: Instant) {
        if self.descriptor(subtask, attempt).is_none() {
            return;
        }
        let now = self.sched.now();
        let c = &mut *self.cluster;
        c.done[subtask.index()] = Some((attempt, now));
        if let Some(r) = c.rerun_of[subtask.index()].take() {
            let took = now.saturating_duration_since(started);
            c.recoveries[r].redone = c.recoveries[r].redone + took;
        }
    }

    /// `n` tasks of the latest recovery failed with their TaskManager's leader.
    pub(crate) fn interrupted(&mut self, n: u32) {
        if let Some(r) = self.cluster.recoveries.last_mut() {
            r.interrupted += n;
        }
    }

    /// A sink's attempt stages its output (a file sink's pending files), committed when the
    /// job finishes.
    pub(crate) fn stage(&mut self, subtask: SubtaskId, attempt: u32, output: Vec<Fragment>) {
        self.cluster.staged.push((subtask, attempt, output));
    }

    // ---- partitions elsewhere ----------------------------------------------------------

    /// Writes a partition to the remote shuffle service.
    pub(crate) fn write_remote(&mut self, partition: Partition) {
        self.cluster.remote.push(partition);
    }

    /// The remote shuffle service's partition of `producer`'s attempt.
    pub(crate) fn remote(&self, producer: SubtaskId, attempt: u32) -> Option<&Partition> {
        self.cluster
            .remote
            .iter()
            .find(|p| p.producer == producer && p.attempt == attempt)
    }

    /// Another TaskManager, for its partitions.
    pub(crate) fn peer(&self, tm: u32) -> Option<&TaskManager<Blocking>> {
        self.peers.get(tm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TaskManager sees every other one as its peer, by its own number, and not itself.
    #[test]
    fn peers_are_the_others_by_number() {
        let mut tms: Vec<TaskManager<Blocking>> = (0..4).map(TaskManager::new).collect();
        for me in 0..4u32 {
            let (mine, peers) = Peers::around(&mut tms, me);
            assert_eq!(mine.index, me);
            for tm in 0..5u32 {
                let seen = peers.get(tm).map(|t| t.index);
                let expected = (tm != me && tm < 4).then_some(tm);
                assert_eq!(seen, expected, "TaskManager {me} looking for {tm}");
            }
        }
    }
}
