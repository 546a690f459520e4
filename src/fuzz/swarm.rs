//! Swarm testing (Groce, Zhang, Eide, Chen, Regehr, "Swarm testing", ISSTA 2012) for
//! `fuzz --strategy swarm`: each seed first draws a **configuration**, one setting per optional
//! feature of the generator, then its scenario as the plain generator would, with each feature
//! kept as drawn, switched off or switched on as its setting says.
//!
//! Why: the plain generator draws each optional feature (a failing snapshot, cancellation
//! markers, a tolerable-failures limit, chains, network buffers, …) independently, most in one
//! seed of four or five. A bug that needs two or three of them together is then met in one
//! seed of 16 to 125 before any timing luck, and a feature that hides a bug (a restart that
//! clears what a later failure needs) dilutes the rest. A swarm configuration switches each
//! feature on in a third of the seeds, off in a third, and leaves it to the generator's own
//! draw in the last third: a pair of rare features co-occurs in about one seed of six, and
//! every feature is also absent often enough for what it masks to show. The generator's fault
//! kinds are a swarm of their own already (`generate`: each kind enabled in half the seeds).
//!
//! Two settings reach what the plain generator draws rarely or never, situations a user's job
//! can be in: [`Feature::FailingSnapshot`] on always also fails the asynchronous part of the
//! snapshot two checkpoints later (F1.9: two counted failures with a completion between, what
//! `keep-failure-count` needs; the plain generator adds that second one in a third of its seeds
//! with a failing snapshot), and [`Feature::CoarseTimes`] on fixes every channel and RPC latency and every source's record
//! interval to a whole multiple of 100 µs, so messages sent in one instant arrive in one
//! instant and events of different tasks fall on one instant (P1.3 step 3's barrier and
//! EndOfPartition), as in a hand-written scenario.
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
    /// `seed`'s configuration: each feature off, drawn or on with probability one third,
    /// from a SplitMix64 stream of its own (apart from the generator's ChaCha stream).
    pub fn of(seed: u64) -> Swarm {
        let mut state = seed ^ 0x5357_4152_4d5f_4346; // "SWARM_CF"
        let mut settings = [Setting::Drawn; Feature::ALL.len()];
        for setting in &mut settings {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *setting = match (z ^ (z >> 31)) % 3 {
                0 => Setting::Off,
                1 => Setting::Drawn,
                _ => Setting::On,
            };
        }
        Swarm { settings }
    }

    pub fn setting(&self, feature: Feature) -> Setting {
        self.settings[feature as usize]
    }

    /// Whether `feature` is present, given whether the plain generator drew it.
    pub fn has(&self, feature: Feature, drawn: bool) -> bool {
        match self.setting(feature) {
            Setting::Off => false,
            Setting::Drawn => drawn,
            Setting::On => true,
        }
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
    fn a_configuration_is_a_function_of_the_seed_and_uses_every_setting() {
        assert_eq!(Swarm::of(17), Swarm::of(17));
        assert_ne!(Swarm::of(17), Swarm::of(18));
        let mut counts = [0u32; 3];
        for seed in 0..3000 {
            let swarm = Swarm::of(seed);
            for f in Feature::ALL {
                counts[swarm.setting(f) as usize] += 1;
            }
        }
        // 51,000 settings, a third each within a few percent.
        for c in counts {
            assert!((16_000..18_000).contains(&c), "{counts:?}");
        }
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
