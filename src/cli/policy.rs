//! `safety-dongle policy diff OLD NEW`: the settings and rules one policy
//! file adds, removes and changes against another, and the examples of
//! both whose decision changes (`lab::diff`); `--json` for scripts.

use std::process::ExitCode;

use crate::{
    lab::diff::{PolicyDiff, diff},
    policy::CompiledPolicy,
};

use super::{PolicyDiffArgs, print_diagnostics, print_json};

pub(super) fn diff_files(args: PolicyDiffArgs) -> ExitCode {
    let load = |path: &std::path::PathBuf| CompiledPolicy::load(std::slice::from_ref(path)).map_err(|errors| print_diagnostics(&errors)).ok();
    let (Some(old), Some(new)) = (load(&args.old), load(&args.new)) else {
        return ExitCode::from(1);
    };
    let found = diff(&old, &new);
    if args.json {
        if !print_json(&found, "diff") {
            return ExitCode::from(1);
        }
    } else {
        print_diff(&found);
    }
    ExitCode::SUCCESS
}

fn print_diff(found: &PolicyDiff) {
    println!("old: {} (sha256 {})", found.old.sources.join(", "), &found.old.sha256[..16]);
    println!("new: {} (sha256 {})", found.new.sources.join(", "), &found.new.sha256[..16]);
    let none = || "none".to_owned();
    for change in &found.settings {
        println!("setting  {}: {} -> {}", change.setting, change.old.clone().unwrap_or_else(none), change.new.clone().unwrap_or_else(none));
    }
    let rule = |r: &crate::lab::explain::RuleRef| {
        let section = r.agents.as_deref().map(|glob| format!(" [agents.\"{glob}\"]")).unwrap_or_default();
        format!("{} '{}'{section} ({}:{})", r.action, r.pattern, r.file, r.line)
    };
    for added in &found.added {
        println!("added    {}", rule(added));
    }
    for removed in &found.removed {
        println!("removed  {}", rule(removed));
    }
    for changed in &found.changed {
        println!("changed  {} -> {}: {}", rule(&changed.old), rule(&changed.new), changed.what.join(", "));
    }
    println!("examples: {} judged by both, {} decided differently", found.examples_judged, found.examples.len());
    for example in &found.examples {
        let decided = |d: &crate::lab::explain::Decision| match &d.rule {
            Some(r) => format!("{} by {}", d.verdict.strictness.name(), rule(r)),
            None => format!("{} at stage {}", d.verdict.strictness.name(), d.stage),
        };
        let direction = if example.loosens { "LOOSER" } else { "stricter" };
        println!("  '{}' (with {}): {} -> {} ({direction})", example.action, rule(&example.written_with), decided(&example.old), decided(&example.new));
    }
}
