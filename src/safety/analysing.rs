//! The analysis of an action, done before a decision takes the state's
//! lock. What a text runs does not depend on the state, and hostile text
//! can take a while to read (the analysis budget bounds how long), so it
//! is read on a blocking thread while other agents' decisions go on, and
//! within a deadline. An analysis that misses the deadline, or fails,
//! gives no verdict: the decision refuses (fail closed).

use std::time::Duration;

use crate::analysis::{self, Action, Analysis, FileWrite, OnDisk, WorkingFolder};

/// How long one action's analysis may take before the decision refuses
/// it. The budget (`analysis::budget`) stops the analysis long before
/// this on any machine; the deadline is what holds if it did not.
pub const ANALYSIS_DEADLINE: Duration = Duration::from_secs(15);

/// What the analysis of an action came to.
#[must_use]
pub enum Analysed {
    /// Analysed; `None` when the action is too long to analyse, which the
    /// evaluator refuses.
    Ready(Option<Analysis>),
    /// No analysis to judge by: late, or it failed.
    Missing(&'static str),
}

/// Analyses `hint` (with the files `writes` makes, in `folder`) on a
/// blocking thread, within [`ANALYSIS_DEADLINE`].
pub async fn analyse(hint: &str, folder: &WorkingFolder, writes: &[FileWrite]) -> Analysed {
    let (hint, folder, writes) = (hint.to_owned(), folder.clone(), writes.to_vec());
    let reading = tokio::task::spawn_blocking(move || {
        let files = OnDisk::in_folder(&folder);
        analysis::analyze_action(&Action {
            text: &hint,
            writes: &writes,
            folder: &folder,
            files: &files,
        })
        .ok()
    });
    match tokio::time::timeout(ANALYSIS_DEADLINE, reading).await {
        Ok(Ok(analysis)) => Analysed::Ready(analysis),
        Ok(Err(_)) => Analysed::Missing("the analysis of this action failed"),
        Err(_) => {
            Analysed::Missing("the analysis of this action did not finish within its deadline")
        }
    }
}
