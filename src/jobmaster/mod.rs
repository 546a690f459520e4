//! The JobMaster, one actor for both kinds of job: what every JobMaster keeps (the
//! `Leader`: its incarnation, the job's status, the TaskManager processes registered with it,
//! the restarts counted) beside a [`Scheduler`] that differs by mode, as in Flink, where one
//! JobMaster runs a streaming job with pipelined regions and a batch job with the adaptive
//! batch scheduler.
//!
//! Each mode's state and handlers live in that mode's module: `regions` (streaming: pipelined
//! regions, the checkpoint coordinator, failover from checkpoints, P1; what its reconciliation
//! takes from the reports, P3) and `batch` (the adaptive batch scheduler, the job event log,
//! FLIP-383 recovery and speculation, P2; what its reconciliation takes from the reports, P3).
//! A mode's handlers are methods of [`With`], the JobMaster seen with its scheduler known: they
//! reach the shared part and that mode's state at once, and act through their mode's context
//! (`world::Ctx`, `world::batch::Ctx`). The reconcile window (P3) is the shared part's too,
//! one whatever the mode, and so is the flow of reconciliation around it (`reconcile`), over
//! the hooks each scheduler implements (`reconcile::Reconciles`).

pub mod batch;
pub(crate) mod leader;
pub(crate) mod reconcile;
pub mod regions;
pub(crate) mod restorable;
pub mod transitions;

use crate::bug::Bug;
use crate::status::JobStatus;
use crate::trace::TraceEvent;
use crate::world::{self, Act};
use batch::AdaptiveBatch;
use leader::Leader;
use reconcile::window::Window;
use regions::PipelinedRegions;

/// The JobMaster of a job, streaming or batch.
pub struct JobMaster {
    /// What every JobMaster keeps: its incarnation, the job's status, the TaskManager
    /// processes registered with it (it learns of a loss by heartbeat timeout, of a
    /// replacement by its registration), the restarts counted.
    leader: Leader,
    /// P3: the reconcile window of a JobMaster elected under `failover: reconcile`, while open
    /// (who is expected, who reported in full, its statistics entry). What the reports said
    /// is the scheduler's, each mode taking its own from them.
    window: Option<Window>,
    /// P3: the statistics entry of the window this JobMaster opened, if it did, kept after it
    /// closed: a report that comes late is counted there.
    reconciled: Option<usize>,
    /// The injected bug of the run, if any: which rule this JobMaster breaks on purpose.
    bug: Option<Bug>,
    /// What differs by mode.
    scheduler: Scheduler,
}

/// The JobMaster's scheduler, one per mode, each with that mode's state.
pub enum Scheduler {
    /// A streaming job: every region scheduled at once, checkpoints, failover by region
    /// (P1).
    PipelinedRegions(PipelinedRegions),
    /// A batch job: vertices scheduled as their inputs complete, the job event log and its
    /// recovery (P2).
    AdaptiveBatch(AdaptiveBatch),
}

/// A mode's scheduler state, as the [`Scheduler`] holds it, and what differs by mode in a rule
/// the JobMaster keeps once.
pub(crate) trait Mode: Sized {
    /// The context this mode's handlers act through.
    type Ctx<'a, 's>: Act
    where
        's: 'a;

    fn of(scheduler: &Scheduler) -> Option<&Self>;
    fn of_mut(scheduler: &mut Scheduler) -> Option<&mut Self>;

    /// What of this mode a JobMaster's crash loses beyond the JobMaster itself, once the loss
    /// is recorded (`JobMaster::crash`).
    fn crashed(jm: With<'_, Self>, ctx: &mut Self::Ctx<'_, '_>);
}

impl Mode for PipelinedRegions {
    type Ctx<'a, 's>
        = world::Ctx<'a, 's>
    where
        's: 'a;

    fn of(scheduler: &Scheduler) -> Option<&Self> {
        match scheduler {
            Scheduler::PipelinedRegions(s) => Some(s),
            Scheduler::AdaptiveBatch(_) => None,
        }
    }

    fn of_mut(scheduler: &mut Scheduler) -> Option<&mut Self> {
        match scheduler {
            Scheduler::PipelinedRegions(s) => Some(s),
            Scheduler::AdaptiveBatch(_) => None,
        }
    }

    /// Nothing: what a streaming JobMaster must not lose is in durable checkpoint storage
    /// already (P1), and what it kept only in memory (its view, its pending checkpoints, the
    /// enumerators' assignments since the last checkpoint) goes with it.
    fn crashed(_: With<'_, Self>, _: &mut Self::Ctx<'_, '_>) {}
}

impl Mode for AdaptiveBatch {
    type Ctx<'a, 's>
        = world::batch::Ctx<'a, 's>
    where
        's: 'a;

    fn of(scheduler: &Scheduler) -> Option<&Self> {
        match scheduler {
            Scheduler::AdaptiveBatch(s) => Some(s),
            Scheduler::PipelinedRegions(_) => None,
        }
    }

    fn of_mut(scheduler: &mut Scheduler) -> Option<&mut Self> {
        match scheduler {
            Scheduler::AdaptiveBatch(s) => Some(s),
            Scheduler::PipelinedRegions(_) => None,
        }
    }

    /// P2.2: the job event log's write buffer (`With::<AdaptiveBatch>::lose_write_buffer`).
    fn crashed(mut jm: With<'_, Self>, ctx: &mut Self::Ctx<'_, '_>) {
        jm.lose_write_buffer(ctx);
    }
}

/// The invariant every accessor of a mode's scheduler relies on.
const ONE_MODE: &str = "a world holds JobMasters of its own mode only: a streaming world one \
                        with pipelined regions, a batch world one with the adaptive batch scheduler";

/// The JobMaster seen with its scheduler of mode `S` known: the shared part beside that mode's
/// state. A mode's handlers are its methods (`impl With<'_, PipelinedRegions>` in `regions`,
/// `impl With<'_, AdaptiveBatch>` in `batch`).
pub struct With<'a, S> {
    pub(crate) leader: &'a mut Leader,
    pub(crate) window: &'a mut Option<Window>,
    pub(crate) reconciled: &'a mut Option<usize>,
    pub(crate) bug: Option<Bug>,
    pub(crate) scheduler: &'a mut S,
}

impl<S> With<'_, S> {
    /// The job's status goes to `to`, recorded (`Leader::set_status`): one rule for both
    /// modes, through either mode's context.
    pub(crate) fn set_job_status(&mut self, ctx: &mut impl Act, to: JobStatus) {
        let event = self.leader.set_status(to);
        ctx.record(event);
    }
}

impl JobMaster {
    pub fn status(&self) -> JobStatus {
        self.leader.status
    }

    pub fn incarnation(&self) -> u32 {
        self.leader.incarnation
    }

    /// The scheduler's state, of mode `S` ([`ONE_MODE`]).
    pub(crate) fn scheduler<S: Mode>(&self) -> &S {
        S::of(&self.scheduler).expect(ONE_MODE)
    }

    /// Fault `crash_jobmaster`, both modes: the JobManager process dies, and this JobMaster
    /// with everything it kept (its scheduler's state, the reconcile window, the TaskManagers
    /// registered with it); only durable state survives it. Its loss is recorded, then what of
    /// its mode `S` goes with it (`Mode::crashed`). Returns its incarnation, which the
    /// TaskManagers' heartbeat timeout names.
    pub(crate) fn crash<S: Mode>(mut self, ctx: &mut S::Ctx<'_, '_>) -> u32 {
        let incarnation = self.incarnation();
        ctx.record(TraceEvent::JobMasterLost { incarnation });
        S::crashed(self.with::<S>(), ctx);
        incarnation
    }

    /// The JobMaster with its scheduler of mode `S` ([`ONE_MODE`]): what that mode's handlers
    /// act on.
    pub(crate) fn with<S: Mode>(&mut self) -> With<'_, S> {
        With {
            leader: &mut self.leader,
            window: &mut self.window,
            reconciled: &mut self.reconciled,
            bug: self.bug,
            scheduler: S::of_mut(&mut self.scheduler).expect(ONE_MODE),
        }
    }
}
