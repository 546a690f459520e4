//! Swarm testing (Groce, Zhang, Eide, Chen, Regehr, "Swarm testing", ISSTA 2012) for
//! `fuzz --strategy swarm`: each seed first draws a **configuration**, one setting per optional
//! feature of the generator, then its scenario as the plain generator would, with each feature
//! kept as drawn, switched off or switched on as its setting says.
//!
//! Why: the plain generator draws each optional feature (a failing snapshot, cancellation
//! markers, a tolerable-failures limit, chains, network buffers, …) independently, most in one
//! seed of four or five. A bug that needs two or three of them together is then met in one
//! seed of 16 to 125 before any timing luck, and a feature that hides a bug (a restart that
//! clears what a later failure needs) dilutes the rest. A swarm configuration switches most
//! features on in a third of the seeds, off in a third, and leaves them to the generator's own
//! draw in the last third: a pair of rare features co-occurs in about one seed of six, and
//! every feature is also absent often enough for what it masks to show. A feature that hides
//! most bugs when present (a **suppressor**: at-least-once barriers rule out savepoints and
//! alignment, a remote shuffle keeps every partition) is on less often, and one that many bugs
//! need more often (weights per feature, `Feature::weights`, `BatchFeature::weights`, chosen
//! from each feature's failure rates per setting over the injected bugs). The generator's
//! fault kinds in streaming jobs are a swarm of their own already (`generate`: each kind
//! enabled in half the seeds).
//!
//! A batch seed (P2, `batch_gen`) has a configuration of its own, [`BatchSwarm`], over what the
//! batch generator draws: each fault kind (JobManager crashes, lost or cut-off TaskManagers, a
//! failed task, delay spikes, RPC loss, job event store write and read failures, a crash at
//! FINISHED), `failover: reconcile`, speculation, a remote shuffle, a registration timeout and
//! released partitions. Off removes every fault of a kind; on adds one where the plain seed has
//! none, its times from the configuration's own values in the plain generator's ranges.
//!
//! Two settings reach what the plain generator draws rarely or never, situations a user's job
//! can be in: [`Feature::FailingSnapshot`] on always also fails the asynchronous part of the
//! snapshot two checkpoints later (F1.9: two counted failures with a completion between, what
//! `keep-failure-count` needs; the plain generator adds that second one in a third of its seeds
//! with a failing snapshot), and [`Feature::CoarseTimes`] on fixes every channel and RPC latency and every source's record
//! interval to a whole multiple of 100 µs, so messages sent in one instant arrive in one
//! instant and events of different tasks fall on one instant (P1.3 step 3's barrier and
//! EndOfPartition), as in a hand-written scenario. Two batch settings likewise:
//! [`BatchFeature::ShortWindow`] (a reconcile window under 1 ms, shorter than most RPCs, P3.4)
//! and [`BatchFeature::FastHeartbeat`] (1 to 5 ms, so a TaskManager or the JobManager is given
//! up on within a recovery).
//!
//! The configuration is drawn from its own hash of the seed, not from proptest's stream, so
//! every draw of the scenario is what the plain generator makes of that seed, and shrinking
//! (which walks proptest's value tree) keeps the configuration: a pure function of the seed.

/// An optional feature of a generated streaming scenario that a swarm configuration sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Feature {
    /// F1.9: a `fail_snapshot` fault (on: and a second, asynchronous, two checkpoints later).
    FailingSnapshot,
    /// F1.9: a `tolerable_failures` limit.
    TolerableFailures,
    /// F1.9: tasks that initialize for a while, and a trigger by hand that reaches one.
    SlowInitialization,
    /// F1.10: cancellation markers.
    CancelMarkers,
    /// A `hold_channel` fault on one edge.
    HeldChannel,
    /// F1.12: operator chains.
    Chains,
    /// F1.6: the job starts from a checkpoint.
    RestoreFrom,
    /// F1.11: a stop-with-savepoint (where the model runs one).
    Savepoint,
    /// F1.13: the first source reads splits.
    Splits,
    /// F1.14: records travel in network buffers.
    NetworkBuffers,
    /// A latency of their own for one or two channels.
    OwnChannelLatency,
    /// F1.8: snapshots with an asynchronous part.
    AsyncSnapshots,
    /// P1.1: a `min_pause` between checkpoints.
    MinPause,
    /// F1.7: at-least-once barriers.
    AtLeastOnce,
    /// P3: `failover: reconcile`.
    Reconcile,
    /// P1.8: a restart strategy of 1 to 3 attempts.
    FewRestarts,
    /// Every latency and every source's record interval fixed to a whole multiple of 100 µs
    /// (never drawn by the plain generator: left to it, the feature is off).
    CoarseTimes,
}

impl Feature {
    /// The weights of off, drawn and on: a third each, but for the features that hide most
    /// bugs when present (measured, `flinksim hunt` and per-feature failure rates: at-least-once
    /// barriers rule out savepoints and alignment, a start from a checkpoint skips the failovers
    /// a run would have, a fixed channel latency or coarse times hold checkpoints one at a time
    /// or on one grid), on in one seed of seven or five; network buffers, which the plain
    /// generator draws in one seed of four and which many alignment bugs need, on in two of four.
    fn weights(self) -> [u64; 3] {
        match self {
            Feature::AtLeastOnce | Feature::RestoreFrom => [3, 3, 1],
            Feature::OwnChannelLatency | Feature::CoarseTimes => [2, 2, 1],
            Feature::NetworkBuffers => [1, 1, 2],
            _ => [1, 1, 1],
        }
    }

    pub const ALL: [Feature; 17] = [
        Feature::FailingSnapshot,
        Feature::TolerableFailures,
        Feature::SlowInitialization,
        Feature::CancelMarkers,
        Feature::HeldChannel,
        Feature::Chains,
        Feature::RestoreFrom,
        Feature::Savepoint,
        Feature::Splits,
        Feature::NetworkBuffers,
        Feature::OwnChannelLatency,
        Feature::AsyncSnapshots,
        Feature::MinPause,
        Feature::AtLeastOnce,
        Feature::Reconcile,
        Feature::FewRestarts,
        Feature::CoarseTimes,
    ];
}

/// What a configuration does with one feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// The feature is absent.
    Off,
    /// The plain generator's draw decides.
    Drawn,
    /// The feature is present.
    On,
}

/// One seed's swarm configuration: a setting per [`Feature`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Swarm {
    settings: [Setting; Feature::ALL.len()],
}

impl Swarm {
    /// `seed`'s configuration: each feature off, drawn or on as its weights say (most a third
    /// each), from a SplitMix64 stream of its own (apart from the generator's ChaCha stream).
    pub fn of(seed: u64) -> Swarm {
        let mut stream = Stream::new(seed, 0x5357_4152_4d5f_4346); // "SWARM_CF"
        Swarm {
            settings: Feature::ALL.map(|f| stream.setting(f.weights())),
        }
    }

    pub fn setting(&self, feature: Feature) -> Setting {
        self.settings[feature as usize]
    }

    /// Whether `feature` is present, given whether the plain generator drew it.
    pub fn has(&self, feature: Feature, drawn: bool) -> bool {
        self.setting(feature).apply(drawn)
    }

    /// A generator draw `draw` whose value 0 means "present" (its one-in-`n` draws), set: 1
    /// (absent) when off, 0 when on, `draw` as it was when drawn.
    pub fn draw(&self, feature: Feature, draw: u8) -> u8 {
        match self.setting(feature) {
            Setting::Off => 1,
            Setting::Drawn => draw,
            Setting::On => 0,
        }
    }
}

impl Setting {
    /// Whether a feature with this setting is present, given whether the plain generator
    /// drew it.
    pub fn apply(self, drawn: bool) -> bool {
        match self {
            Setting::Off => false,
            Setting::Drawn => drawn,
            Setting::On => true,
        }
    }
}

/// A SplitMix64 stream from a seed and a salt of its own: a configuration's settings, and the
/// values of what a batch configuration switches on.
struct Stream(u64);

impl Stream {
    fn new(seed: u64, salt: u64) -> Stream {
        Stream(seed ^ salt)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        crate::record::mix64(self.0)
    }

    /// A setting drawn with the weights (off, drawn, on).
    fn setting(&mut self, [off, drawn, on]: [u64; 3]) -> Setting {
        match self.next() % (off + drawn + on) {
            r if r < off => Setting::Off,
            r if r < off + drawn => Setting::Drawn,
            _ => Setting::On,
        }
    }
}

/// An optional feature of a generated batch scenario (P2, `batch_gen`) that a swarm
/// configuration sets. The fault features count the faults of one kind: off removes them all,
/// on adds one where the plain generator drew none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BatchFeature {
    /// P2.4: JobManager crashes (on: at least two, so one may land in the other's recovery).
    JobManagerCrashes,
    /// P2.3: a TaskManager lost (a `lose_task_manager` fault).
    LostTaskManager,
    /// P2.3: a TaskManager cut off for a while (`disconnect_task_manager`).
    DisconnectedTaskManager,
    /// A failed source or `agg` subtask.
    FailedTask,
    /// A delay spike on the RPCs.
    DelaySpike,
    /// P3.3: RPCs lost for a while, sent again after a delay.
    RpcLoss,
    /// F2.3: the job event store fails to write.
    WriteFailure,
    /// F2.4 step 5: the job event store fails to read the log back.
    ReadFailure,
    /// P2.7: a JobManager crash the moment the job is FINISHED.
    CrashAtFinish,
    /// P3: `failover: reconcile`.
    Reconcile,
    /// P3.4: a reconcile window of 0.3 to 1 ms, shorter than most RPCs (never drawn by the
    /// plain generator, whose windows are 1 to 60 ms: left to it, the feature is off).
    ShortWindow,
    /// P2.8: speculative execution (only under restart).
    Speculation,
    /// A heartbeat timeout of 1 to 5 ms instead of 50, so a lost TaskManager is noticed
    /// within `previous_worker_timeout` and before it returns (never drawn by the plain
    /// generator: left to it, the feature is off).
    FastHeartbeat,
    /// F2.1: a remote shuffle service.
    RemoteShuffle,
    /// F2.5: a registration timeout after which TaskManagers release kept partitions.
    RegistrationTimeout,
    /// F2.1: TaskManagers release their partitions on losing the JobManager.
    ReleasePartitions,
}

impl BatchFeature {
    pub const ALL: [BatchFeature; 16] = [
        BatchFeature::JobManagerCrashes,
        BatchFeature::LostTaskManager,
        BatchFeature::DisconnectedTaskManager,
        BatchFeature::FailedTask,
        BatchFeature::DelaySpike,
        BatchFeature::RpcLoss,
        BatchFeature::WriteFailure,
        BatchFeature::ReadFailure,
        BatchFeature::CrashAtFinish,
        BatchFeature::Reconcile,
        BatchFeature::ShortWindow,
        BatchFeature::Speculation,
        BatchFeature::FastHeartbeat,
        BatchFeature::RemoteShuffle,
        BatchFeature::RegistrationTimeout,
        BatchFeature::ReleasePartitions,
    ];

    /// The weights of off, drawn and on.
    fn weights(self) -> [u64; 3] {
        use BatchFeature as F;
        match self {
            // Present in every plain seed, and most batch bugs need one: rarely off.
            F::JobManagerCrashes => [1, 3, 3],
            // Suppressors: a remote shuffle keeps every partition, released partitions are
            // gone, a failed read restarts the job in full; each hides the bugs of partition
            // tracking and recovery, so rarely on.
            F::RemoteShuffle => [3, 2, 1],
            F::ReleasePartitions => [2, 2, 1],
            F::ReadFailure => [2, 3, 1],
            // A short window or a fast heartbeat changes every recovery: on in one seed of four.
            F::ShortWindow | F::FastHeartbeat => [1, 2, 1],
            // Needed by the reconciliation bugs (with a failed task during the outage).
            F::Reconcile | F::FailedTask => [1, 2, 2],
            _ => [1, 1, 1],
        }
    }
}

/// One batch seed's swarm configuration: a setting per [`BatchFeature`], and the values of
/// what it switches on where the plain generator drew nothing (from a stream of their own, so
/// shrinking, which walks the generator's draws, keeps them too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchSwarm {
    settings: [Setting; BatchFeature::ALL.len()],
    values: u64,
}

impl BatchSwarm {
    /// `seed`'s batch configuration, from a SplitMix64 stream salted apart from the streaming
    /// one's.
    pub fn of(seed: u64) -> BatchSwarm {
        let mut stream = Stream::new(seed, 0x5357_4152_4d5f_4254); // "SWARM_BT"
        BatchSwarm {
            settings: BatchFeature::ALL.map(|f| stream.setting(f.weights())),
            values: stream.next(),
        }
    }

    pub fn setting(&self, feature: BatchFeature) -> Setting {
        self.settings[feature as usize]
    }

    /// Whether `feature` is present, given whether the plain generator drew it.
    pub fn has(&self, feature: BatchFeature, drawn: bool) -> bool {
        self.setting(feature).apply(drawn)
    }

    /// A value in `range` for what `feature` switches on, the same for every call.
    pub fn value(&self, feature: BatchFeature, key: u64, range: std::ops::Range<u64>) -> u64 {
        let mut stream = Stream::new(self.values, (feature as u64) << 32 | key);
        range.start + stream.next() % (range.end - range.start)
    }
}

/// The swarm of a campaign that has one: `has` and `draw` under `None` are the plain
/// generator's own draws.
pub trait MaybeSwarm {
    fn has(&self, feature: Feature, drawn: bool) -> bool;
    fn draw(&self, feature: Feature, draw: u8) -> u8;
}

impl MaybeSwarm for Option<Swarm> {
    fn has(&self, feature: Feature, drawn: bool) -> bool {
        self.map_or(drawn, |s| s.has(feature, drawn))
    }

    fn draw(&self, feature: Feature, draw: u8) -> u8 {
        self.map_or(draw, |s| s.draw(feature, draw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_is_a_function_of_the_seed_and_follows_its_weights() {
        assert_eq!(Swarm::of(17), Swarm::of(17));
        assert_ne!(Swarm::of(17), Swarm::of(18));
        assert_eq!(BatchSwarm::of(17), BatchSwarm::of(17));
        assert_ne!(BatchSwarm::of(17), BatchSwarm::of(18));
        let index = |s: Setting| s as usize;
        // 6,000 seeds: each setting's share within two percentage points of its weight's.
        let close = |counts: [u32; 3], weights: [u64; 3], what: String| {
            let sum: u64 = weights.iter().sum();
            for (c, w) in counts.iter().zip(weights) {
                let expected = 6000.0 * w as f64 / sum as f64;
                assert!(
                    (f64::from(*c) - expected).abs() < 120.0,
                    "{what}: {counts:?}"
                );
            }
        };
        for f in Feature::ALL {
            let mut counts = [0u32; 3];
            for seed in 0..6000 {
                counts[index(Swarm::of(seed).setting(f))] += 1;
            }
            close(counts, f.weights(), format!("{f:?}"));
        }
        for f in BatchFeature::ALL {
            let mut counts = [0u32; 3];
            for seed in 0..6000 {
                counts[index(BatchSwarm::of(seed).setting(f))] += 1;
            }
            close(counts, f.weights(), format!("{f:?}"));
        }
        // The values of what a batch configuration switches on: fixed per seed, in range.
        let swarm = BatchSwarm::of(5);
        let v = swarm.value(BatchFeature::FailedTask, 0, 1..40_000);
        assert_eq!(v, swarm.value(BatchFeature::FailedTask, 0, 1..40_000));
        assert!((1..40_000).contains(&v));
    }

    #[test]
    fn a_setting_overrides_the_draw_unless_it_leaves_it() {
        let seed = (0..)
            .find(|&s| Swarm::of(s).setting(Feature::Chains) == Setting::Off)
            .expect("some seed");
        let off = Swarm::of(seed);
        assert_eq!(
            (off.draw(Feature::Chains, 0), off.draw(Feature::Chains, 3)),
            (1, 1)
        );
        let seed = (0..)
            .find(|&s| Swarm::of(s).setting(Feature::Chains) == Setting::On)
            .expect("some seed");
        let on = Swarm::of(seed);
        assert_eq!(
            (on.draw(Feature::Chains, 0), on.draw(Feature::Chains, 3)),
            (0, 0)
        );
        let none: Option<Swarm> = None;
        assert_eq!(none.draw(Feature::Chains, 3), 3);
        assert!(none.has(Feature::Chains, true) && !none.has(Feature::Chains, false));
    }
}
