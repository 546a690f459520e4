//! What people read: the timeline, the JSON Lines trace, the summary, and the verdict on a
//! scenario's expectations. Nothing here influences a run; everything renders a finished one.

pub mod batch;
pub mod checkpoint_file;
pub mod cli;
mod expect;
pub mod explain;
pub mod export;
mod output;
mod render;
mod summary;
pub mod viewer;

pub use expect::check_expectations;
pub use render::{event_json, event_line};
pub use summary::{stop_id, summary_json, summary_text};

pub use output::{install_interrupt_cleanup, refuse_overwriting_inputs, write_atomically};
