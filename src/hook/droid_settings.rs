//! Factory Droid's settings, checked for a dongle hook that fails open.
//!
//! Droid reads Claude Code's hook format (`hook::grouped`) from
//! `~/.factory/settings.json` and the project's `.factory/settings.json`
//! and `settings.local.json`, with a `timeout` in seconds (default
//! [`DROID_DEFAULT_TIMEOUT_SECS`]). Droid runs the tool when a hook times
//! out, exits 1 or crashes: only exit 2 and a deny block, so the entry must
//! end in `|| exit 2`.

use std::path::Path;

use super::{inspection::Inspection, install::DROID};

/// Droid's time-out for a command hook whose entry sets none.
pub const DROID_DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The dongle's entries in the user's and the project's settings.
pub fn inspect(home: &Path, project: &Path, approval_timeout_secs: u64) -> Inspection {
    let mut inspection = Inspection::default();
    for file in [
        home.join(".factory/settings.json"),
        project.join(".factory/settings.json"),
        project.join(".factory/settings.local.json"),
    ] {
        DROID.inspect_file(&file, approval_timeout_secs, &mut inspection);
    }
    inspection
}
