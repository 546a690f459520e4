//! The deterministic kernel of flinksim. It knows nothing of Flink, JSON, files or the CLI.
//!
//! Module map:
//! - [`time`]: virtual time as integer nanoseconds ([`Instant`], [`Duration`]).
