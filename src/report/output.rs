//! Output files: written completely or not at all, never over one of the command's own inputs,
//! and never left half-written when the user interrupts a long write.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporary files being written right now, so an interrupt can remove them.
static IN_PROGRESS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs, once at start-up, a SIGINT/SIGTERM handler that removes every temporary file still
/// being written and exits with 130 (the shell's code for an interrupt). Without it, an
/// interrupted `--trace` of hundreds of megabytes would stay behind as a hidden `.tmpXXXXXX`.
pub fn install_interrupt_cleanup() {
    // Failing to install (a handler already set) only loses the cleanup, never a run.
    let _ = ctrlc::set_handler(|| {
        let files = IN_PROGRESS.lock().unwrap_or_else(|e| e.into_inner());
        for path in files.iter() {
            let _ = std::fs::remove_file(path);
        }
        eprintln!("interrupted: partial output files removed");
        std::process::exit(130);
    });
}

/// Writes a file completely or not at all: the content goes to a temporary file beside the
/// target, which is renamed over it only once everything was written. A failure, a crash or an
/// interrupt leaves no partial file behind.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    let temp = file.path().to_path_buf();
    IN_PROGRESS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(temp.clone());
    let result = (|| {
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
        file.persist(path).map(|_| ()).map_err(|e| e.error)
    })();
    IN_PROGRESS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| *p != temp);
    result
}

/// Whether two paths name the same file (both must exist): same device and inode on Unix,
/// the same canonical path elsewhere.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }
}

/// Refuses a command line whose output file is one of its inputs (`run s.json --trace s.json`
/// would replace the scenario with its own trace), or two outputs that are the same file.
/// An output that does not exist yet cannot be an input; two such outputs are compared by
/// their spelling.
pub fn refuse_overwriting_inputs(inputs: &[&Path], outputs: &[(&str, &Path)]) -> io::Result<()> {
    for (flag, output) in outputs {
        if let Some(input) = inputs.iter().find(|i| same_file(i, output)) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{flag} {} is the input file {}: writing it would destroy the input; choose \
                     another output file",
                    output.display(),
                    input.display()
                ),
            ));
        }
    }
    for (i, (flag_a, a)) in outputs.iter().enumerate() {
        for (flag_b, b) in &outputs[i + 1..] {
            if a == b || same_file(a, b) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{flag_a} and {flag_b} name the same file {}: give each its own",
                        a.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("s.json");
        std::fs::write(&input, "{}").unwrap();
        // Another spelling of the same file is still the same file.
        let alias = dir.path().join(".").join("s.json");
        let e = refuse_overwriting_inputs(&[&input], &[("--trace", &alias)]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("would destroy the input"), "{e}");
        let fresh = dir.path().join("t.jsonl");
        assert!(refuse_overwriting_inputs(&[&input], &[("--trace", &fresh)]).is_ok());
        let e = refuse_overwriting_inputs(&[&input], &[("--trace", &fresh), ("--summary", &fresh)])
            .unwrap_err();
        assert!(e.to_string().contains("name the same file"), "{e}");
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "{}");
    }

    #[test]
    fn a_failed_write_leaves_no_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let e = write_atomically(&path, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("disk full"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
