//! Reconciliation (`docs/rules.md` P3, FLINK-5703), what both modes share of it: the
//! reconcile window (`window::Window`: who is expected, who reported in full, the statistics
//! entry, P3.4's outcome table), which the JobMaster holds once whatever its scheduler. What
//! each mode takes from the reports is its scheduler's own: `regions::reconcile` (streaming:
//! executions) and `batch::reconcile` (batch: executions, partitions, splits, inputs).

pub(crate) mod window;
