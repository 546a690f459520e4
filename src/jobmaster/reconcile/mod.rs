//! Reconciliation (`docs/rules.md` P3, FLINK-5703), what both modes' JobMasters share of it:
//! the reconcile window ([`window::Window`]: who is expected, who reported in full, the
//! statistics entry, P3.4's outcome table). What each mode takes from the reports is its own:
//! `regions::reconcile` (streaming: executions) and `batch::reconcile` (batch: executions,
//! partitions, splits, inputs).

pub(crate) mod window;
