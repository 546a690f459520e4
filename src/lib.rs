//! flinksim: a deterministic discrete-event simulator of Apache Flink's fault-tolerance
//! protocols.
//!
//! A run is a pure function of (scenario, seed): the kernel (crate `sim`) supplies virtual
//! time, the event queue and seeded random streams; this crate supplies the model.
//!
//! Module map (see ARCHITECTURE.md for the whole picture):
//! - [`scenario`]: the scenario file: schema, defaults, validation with JSON-path errors.
//! - [`graph`]: job graph → execution graph: subtasks, channels, routing.
//! - [`record`]: records and channel elements.
//! - [`net`]: data channels (FIFO, latency, credit) and RPC links.
//! - [`task`], [`taskmanager`], [`jobmaster`]: the actors.
//! - [`batch`]: batch execution and job recovery after a JobManager crash (P2, FLIP-383).
//! - [`world`]: holds the actors and dispatches kernel events to them.
//! - [`trace`]: the typed events a run records, hashed and rendered.
//! - [`oracle`]: invariant checkers, read-only.
//! - [`probes`]: coverage probes: the named protocol situations a run went through.
//! - [`run`]: one run from scenario to report.
//! - [`report`]: what people read: timeline, JSON Lines, summary, expectations.
//! - [`status`]: Flink's job and execution status names.
//! - [`bug`]: the catalogue of injected bugs (`--bug NAME`).
//! - [`source_mutant`]: one-line bugs in the model, compiled in only with the
//!   `source-mutants` feature, that `flinksim hunt` measures strategies against.
//! - [`fuzz`]: campaigns: generated scenarios, shrinking, replay, the mutation score.

pub mod batch;
pub mod bug;
pub mod checkpoint;
pub mod compare;
pub mod conform;
pub mod coordinator;
pub mod faults;
pub mod fuzz;
pub mod graph;
pub mod jobmaster;
pub mod net;
pub mod oracle;
pub mod probes;
pub mod record;
pub mod report;
pub mod run;
pub mod scenario;
pub mod source_mutant;
pub mod status;
pub mod task;
pub mod taskmanager;
pub mod trace;
pub mod world;
