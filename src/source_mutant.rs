//! Source mutants: one-line bugs of the kind an engineer really writes into a model like this
//! one (an off-by-one in a count, a missing check of an attempt number, a loop over the outbox
//! in the wrong order), each switched on at run time so one build serves them all. They are
//! what `flinksim hunt` measures the exploration strategies against besides the injected bugs
//! (`crate::bug`): an injected bug comes with the oracle meant to catch it and a generator bias
//! toward the shapes it needs, a source mutant with neither, as a bug nobody planted.
//!
//! They exist only in a build with the cargo feature `source-mutants`: without it [`on`] is a
//! constant `false`, every mutated line is the original after constant folding, and a normal
//! build runs exactly the code it would without this module. With it, [`activate`] (or the
//! environment variable `FLINKSIM_SOURCE_MUTANT=NAME`, read once by the `flinksim` command)
//! switches one on for the whole process; campaigns on any thread count see the same one.

/// One source mutant. Each names the line it changes (`// source mutant NAME` marks it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SourceMutant {
    /// `task/barrier.rs`: an alignment completes when one barrier is still owed (`<= 1` for
    /// `== 0`).
    BarrierCountOffByOne,
    /// `checkpoint/mod.rs`: the coordinator completes a checkpoint one acknowledgement early.
    AckCountOffByOne,
    /// `jobmaster/regions/mod.rs`: a state report from a replaced attempt is applied (the attempt
    /// check is missing).
    StateReportIgnoresAttempt,
    /// `world/streaming.rs`: kept RPCs are sent again newest first, not in outbox order.
    ResendNewestFirst,
    /// `task/operator.rs`: a restored source resumes one record after its offset.
    RestoreOffsetPlusOne,
    /// `task/operator.rs`: a completed checkpoint `n` also commits the transaction of `n + 1`.
    CommitOneAhead,
    /// `task/reader.rs`: a source split ends one record early.
    SplitEndsEarly,
    /// `task/unaligned.rs`: channel-state spilling skips one record more than it should.
    SpillSkipsOneMore,
    /// `task/mod.rs`: a barrier of the checkpoint the task last performed is not stale (`<`
    /// for `<=`).
    StaleBarrierExclusive,
    /// `task/tracker.rs`: a cancellation marker aborts the checkpoints before its own, not its
    /// own (`<` for `<=`).
    CancelMarkerExclusive,
}

impl SourceMutant {
    pub const ALL: [SourceMutant; 10] = [
        SourceMutant::BarrierCountOffByOne,
        SourceMutant::AckCountOffByOne,
        SourceMutant::StateReportIgnoresAttempt,
        SourceMutant::ResendNewestFirst,
        SourceMutant::RestoreOffsetPlusOne,
        SourceMutant::CommitOneAhead,
        SourceMutant::SplitEndsEarly,
        SourceMutant::SpillSkipsOneMore,
        SourceMutant::StaleBarrierExclusive,
        SourceMutant::CancelMarkerExclusive,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SourceMutant::BarrierCountOffByOne => "barrier-count-off-by-one",
            SourceMutant::AckCountOffByOne => "ack-count-off-by-one",
            SourceMutant::StateReportIgnoresAttempt => "state-report-ignores-attempt",
            SourceMutant::ResendNewestFirst => "resend-newest-first",
            SourceMutant::RestoreOffsetPlusOne => "restore-offset-plus-one",
            SourceMutant::CommitOneAhead => "commit-one-ahead",
            SourceMutant::SplitEndsEarly => "split-ends-early",
            SourceMutant::SpillSkipsOneMore => "spill-skips-one-more",
            SourceMutant::StaleBarrierExclusive => "stale-barrier-exclusive",
            SourceMutant::CancelMarkerExclusive => "cancel-marker-exclusive",
        }
    }

    pub fn from_name(name: &str) -> Option<SourceMutant> {
        SourceMutant::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Whether this build has source mutants at all (the `source-mutants` feature).
pub const ENABLED: bool = cfg!(feature = "source-mutants");

#[cfg(feature = "source-mutants")]
static ACTIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether `mutant` is switched on. Always `false` without the `source-mutants` feature.
#[inline(always)]
pub fn on(mutant: SourceMutant) -> bool {
    #[cfg(feature = "source-mutants")]
    {
        ACTIVE.load(std::sync::atomic::Ordering::Relaxed) == mutant as usize + 1
    }
    #[cfg(not(feature = "source-mutants"))]
    {
        let _ = mutant;
        false
    }
}

/// Switches `mutant` on for the whole process (`None`: the model as written). Returns false,
/// changing nothing, in a build without the `source-mutants` feature.
pub fn activate(mutant: Option<SourceMutant>) -> bool {
    #[cfg(feature = "source-mutants")]
    {
        ACTIVE.store(
            mutant.map_or(0, |m| m as usize + 1),
            std::sync::atomic::Ordering::Relaxed,
        );
        true
    }
    #[cfg(not(feature = "source-mutants"))]
    {
        mutant.is_none()
    }
}
