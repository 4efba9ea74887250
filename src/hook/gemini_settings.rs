//! Gemini CLI's settings, checked for a dongle hook that fails open or that
//! Gemini skips.
//!
//! Gemini reads hooks in Claude Code's shape (`hook::grouped`) under
//! `BeforeTool` in `~/.gemini/settings.json` and the project's
//! `.gemini/settings.json`, with a `timeout` in milliseconds (default
//! [`GEMINI_DEFAULT_TIMEOUT_MS`]; seconds written there are a time-out of
//! a fraction of a second). It runs no hook at all, the user's included:
//! - in a folder it does not trust while folder trust is on
//!   (`security.folderTrust.enabled`, on unless the user's settings switch
//!   it off). Trust is read from `~/.gemini/trustedFolders.json` as Gemini
//!   reads it: the longest rule whose folder holds the project decides,
//!   `TRUST_PARENT` standing for the rule's parent folder, and no rule at
//!   all is not trusted;
//! - when `hooksConfig.enabled` is false.
//!
//! An entry whose command is listed in `hooksConfig.disabled` is skipped.
//! (Headless, Gemini refuses to start in an untrusted folder; `--skip-trust`
//! or `GEMINI_CLI_TRUST_WORKSPACE=true` trust it for one run, which the
//! doctor cannot see. Checked with Gemini CLI 0.61.0: a user's hook in an
//! untrusted folder did not run until the run was trusted.)

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    inspection::{Inspection, read_json},
    install::GEMINI,
};

/// Gemini's time-out for a command hook whose entry sets none, ms.
pub const GEMINI_DEFAULT_TIMEOUT_MS: u64 = 60_000;

/// The dongle's entries in the user's and the project's settings, each
/// with what would make it fail open or be skipped.
pub fn inspect(home: &Path, project: &Path, approval_timeout_secs: u64) -> Inspection {
    let mut inspection = Inspection::default();
    let mut read = Vec::new();
    for file in [home.join(".gemini/settings.json"), project.join(".gemini/settings.json")] {
        let before = inspection.entries.len();
        if let Some((document, hooks)) =
            GEMINI.inspect_file(&file, approval_timeout_secs, &mut inspection)
        {
            read.push((document, before, hooks));
        }
    }
    let user = read.first().map_or(&Value::Null, |(document, ..)| document);
    let untrusted = untrusted_folder(home, project, user, &mut inspection);
    let switched_off = read.iter().any(|(document, ..)| {
        document.pointer("/hooksConfig/enabled") == Some(&Value::Bool(false))
    });
    let disabled: Vec<&str> = read
        .iter()
        .filter_map(|(document, ..)| document.pointer("/hooksConfig/disabled")?.as_array())
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut skipped = Vec::new();
    for (_, before, hooks) in &read {
        for (offset, hook) in hooks.iter().enumerate() {
            let mut problems: Vec<String> = untrusted.iter().cloned().collect();
            if switched_off {
                problems.push(
                    "Gemini CLI runs no hooks while hooksConfig.enabled is false; set it to true"
                        .into(),
                );
            }
            if disabled.contains(&hook.command.as_str()) {
                problems.push("this command is listed in hooksConfig.disabled, so Gemini CLI skips it; take it off the list (`/hooks` in Gemini CLI)".into());
            }
            skipped.push((before + offset, problems));
        }
    }
    for (index, problems) in skipped {
        if let Some(entry) = inspection.entries.get_mut(index) {
            entry.problems.extend(problems);
        }
    }
    inspection
}

/// Why Gemini runs no hooks in `project`, if it runs none there.
fn untrusted_folder(
    home: &Path,
    project: &Path,
    user_settings: &Value,
    inspection: &mut Inspection,
) -> Option<String> {
    if user_settings.pointer("/security/folderTrust/enabled") == Some(&Value::Bool(false)) {
        return None;
    }
    let file = home.join(".gemini/trustedFolders.json");
    let rules = match read_json(&file) {
        None => Value::Null,
        Some(Err(reason)) => {
            inspection.unreadable.push(reason);
            return None;
        }
        Some(Ok(rules)) => rules,
    };
    let project_real = real(project);
    let decided = rules
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(rule, level)| {
            let folder = match level.as_str()? {
                "TRUST_PARENT" => Path::new(rule).parent()?.to_owned(),
                "TRUST_FOLDER" | "DO_NOT_TRUST" => PathBuf::from(rule),
                _ => return None,
            };
            project_real.starts_with(real(&folder)).then_some((rule.len(), level.as_str()?))
        })
        .max_by_key(|(length, _)| *length)
        .map(|(_, level)| level);
    match decided {
        Some("TRUST_FOLDER" | "TRUST_PARENT") => None,
        _ => Some(format!(
            "Gemini CLI runs no hooks, the user's included, in a folder it does not trust ({} is not trusted in {}): run `gemini` in the project and trust the folder when it asks",
            project.display(),
            file.display()
        )),
    }
}

/// The folder with its links resolved, as Gemini compares them.
fn real(folder: &Path) -> PathBuf {
    std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_owned())
}
