//! F1.14 step 11: a source at a fixed pace writes its records lazily, when something could see
//! them, instead of taking one kernel event per record.
//!
//! With network buffers a record a source writes stays in its channel's current buffer until
//! the buffer is sent: when it fills, on the buffer timeout, before a barrier or other event.
//! Until then nothing in the run can tell whether it was written at its due time or later. So
//! a lone source (no operator chained behind it, no splits) with a fixed `record_interval`
//! keeps the time its next step is due (`due`, the step the eager model would schedule) and
//! schedules a wake-up ([`Event::SourceWake`]) only for the step that could be seen: the one
//! whose record may fill a buffer, the one that finds the source's end, or, while anything
//! else is going on (blocked, stopping, outputs queued), the very next one. Every event that
//! reaches the task first runs, each at its own time, the steps due at or before now
//! ([`Task::catch_up`]); between two such events a step writes a record into a buffer that
//! cannot fill, which no one observes.

use super::*;
use crate::graph::JobVertex;

/// A lone source at a fixed pace, written lazily (F1.14 step 11).
#[derive(Clone, Copy, Debug)]
pub(super) struct Pacing {
    /// The fixed `record_interval`.
    interval: sim::Duration,
    /// When the source's next step is due (the eager model's `TaskStep`), while one is.
    due: Option<Instant>,
    /// The `SourceWake` that counts: the earliest one asked for since the last fired.
    wake_at: Option<Instant>,
}

impl Pacing {
    /// The pacing of this attempt if it may write lazily: a lone source without splits at a
    /// fixed, non-zero interval, with network buffers and a non-zero buffer timeout (a zero
    /// one sends every record at once).
    pub(super) fn new<R>(
        ctx: &Ctx<'_, '_, R>,
        vertex: &JobVertex,
        chain: &OperatorChain,
    ) -> Option<Pacing> {
        let buffers = ctx.io.data.buffer_settings()?;
        let interval = chain.is_source().then(|| chain.source_interval())?;
        let lone = vertex.chain.len() == 1 && vertex.splits.is_none();
        (lone
            && buffers.timeout > sim::Duration::ZERO
            && interval.min == interval.max
            && interval.min > sim::Duration::ZERO)
            .then_some(Pacing {
                interval: interval.min,
                due: None,
                wake_at: None,
            })
    }
}

impl Task {
    /// The source's next step is due `pause` from now: eagerly a `TaskStep`; paced lazily,
    /// only noted (the wake-up is asked for by [`Task::rearm`], after the event at hand).
    pub(super) fn pace(&mut self, ctx: &mut TaskCtx<'_, '_>, pause: sim::Duration) {
        match &mut self.pacing {
            None => self.schedule_step(ctx, pause),
            Some(p) => {
                self.step_scheduled = true;
                p.due = Some(ctx.now + pause);
            }
        }
    }

    /// F1.14 step 11: runs every step of a lazily paced source that is due at or before now,
    /// each at its own time, before the event at hand acts: records due at or before an
    /// event that could see them are written before it.
    #[inline]
    pub(super) fn catch_up(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        while let Some(due) = self
            .pacing
            .and_then(|p| p.due)
            .filter(|&due| due <= ctx.now)
        {
            if let Some(p) = &mut self.pacing {
                p.due = None;
            }
            let now = std::mem::replace(&mut ctx.now, due);
            let recorded = ctx.io.trace.len();
            self.on_step(ctx);
            // What the wake-ups promise: a step run late records nothing.
            assert!(
                due == now || ctx.io.trace.len() == recorded,
                "a late step of {:?} was seen",
                self.id
            );
            ctx.now = now;
        }
    }

    /// F1.14 step 11: after an event, asks for a wake-up at the first of the source's due
    /// steps that something could see, unless one at or before it is pending already.
    #[inline]
    pub(super) fn rearm(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        let Some(Pacing {
            interval,
            due: Some(due),
            wake_at,
        }) = self.pacing
        else {
            return;
        };
        let unseen = self.unseen_steps(ctx);
        let at = interval
            .checked_mul(unseen - 1)
            .map_or(due, |ahead| due.saturating_add(ahead));
        if wake_at.is_some_and(|w| w <= at) {
            return;
        }
        if let Some(p) = &mut self.pacing {
            p.wake_at = Some(at);
        }
        ctx.sched.at(
            at,
            Event::SourceWake {
                subtask: self.id,
                attempt: self.attempt,
            },
        );
    }

    /// How many steps, from the next due one on, write a record nobody can see yet (at least
    /// one: the last of them may be seen). A record can fill a buffer only once every output
    /// channel's free room is used up by records before it, and the step after the last
    /// record ends the source's input; anything else going on (not processing, outputs
    /// queued, blocked) makes the next step one to run on time, and so does a run that checks
    /// all this (`Config::lazy_sources` off: a wake-up for every step).
    fn unseen_steps(&self, ctx: &TaskCtx<'_, '_>) -> u64 {
        if !ctx.config.lazy_sources
            || self.phase != Phase::Processing
            || !self.pending_out.is_empty()
            || self.blocked_on.is_some()
        {
            return 1;
        }
        let per_buffer = ctx.io.data.records_per_buffer();
        let room = ctx.graph.subtasks[self.id.index()]
            .outputs
            .iter()
            .flat_map(|gate| gate.channels.iter())
            .map(|&channel| per_buffer.saturating_sub(ctx.io.data.unsent(channel)))
            .min()
            .map_or(1, u64::from);
        let to_end = self.chain.records_left().map_or(u64::MAX, |left| left + 1);
        room.min(to_end).max(1)
    }

    /// F1.14 step 11: the wake-up of a lazily paced source.
    pub fn on_source_wake(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        if let Some(p) = &mut self.pacing {
            if p.wake_at == Some(ctx.now) {
                p.wake_at = None;
            }
        }
        self.catch_up(ctx);
        self.rearm(ctx);
    }
}
