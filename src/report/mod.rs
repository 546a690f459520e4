//! What people read: the timeline, the JSON Lines trace, the summary, and the verdict on a
//! scenario's expectations. Nothing here influences a run; everything renders a finished one.

pub mod batch;
pub mod cli;
mod expect;
pub mod explain;
pub mod export;
mod render;
mod summary;
pub mod viewer;

pub use expect::check_expectations;
pub use render::{event_json, event_line};
pub use summary::{summary_json, summary_text};

use std::io::{self, Write};
use std::path::Path;

/// Writes a file completely or not at all: the content goes to a temporary file beside the
/// target, which is renamed over it only once everything was written. A failure (or a crash)
/// leaves no partial file behind.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    // A temporary file is private (0600); what we write is an ordinary output file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    {
        let mut out = io::BufWriter::new(file.as_file_mut());
        write(&mut out)?;
        out.flush()?;
    }
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
