//! Each explanation once: the marker where a narration's reason begins, and the memory of
//! the reasons already given in full, so a repeat is told in short.

use super::*;

/// Marks, inside a narration's text as the narrator writes it, where the explanation begins.
pub(super) const WHY: char = '\u{1f}';

/// Takes the [`WHY`] marker out of `text`, returning the text and the marker's position.
pub(super) fn split_why(text: String) -> (String, Option<usize>) {
    match text.find(WHY) {
        Some(at) => {
            let mut text = text;
            text.remove(at);
            (text, Some(at))
        }
        None => (text, None),
    }
}

/// The explanations already given in full, so that a repeated one is told in short. Two
/// explanations are the same when they cite the same rule and read the same once numbers are
/// left out (checkpoint ids, subtask indexes, durations): "everything it sent before belongs
/// to checkpoint 3" repeats "… to checkpoint 1", while "a source is always triggered by RPC"
/// and "none of its producers was running" are two different reasons.
#[derive(Default)]
pub struct Repeats {
    given: std::collections::BTreeSet<(Option<String>, String)>,
}

impl Repeats {
    /// Whether `n`'s explanation was given before (and records it as given now).
    pub fn told_before(&mut self, n: &Narration) -> bool {
        let Some(at) = n.why else { return false };
        let shape: String = n.text[at..]
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .collect();
        !self.given.insert((n.rule.clone(), shape))
    }
}
