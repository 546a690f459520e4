//! The one error type of scenario loading.

use std::fmt;

/// Why a scenario file was refused: which file, where in it, and what was expected there.
///
/// Loading stops at the first problem, so a user fixes one clear thing at a time instead of
/// reading a cascade of consequences of the same typo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file as the user named it; only used in messages.
    pub file: String,
    /// Where the problem is: a JSON path such as `job.vertices[2].parallelism`, `$` for the
    /// document as a whole, or `line:column` when the text is not JSON at all.
    pub path: String,
    /// What is wrong and what was expected instead.
    pub message: String,
}

impl ScenarioError {
    pub(crate) fn new(file: &str, path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            file: file.to_owned(),
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: at {}: {}", self.file, self.path, self.message)
    }
}

impl std::error::Error for ScenarioError {}
