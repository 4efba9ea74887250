//! `safety-dongle doctor`: for every coding agent found on this machine
//! (its settings folder in HOME or the project, or its program on PATH),
//! whether the guard's hook is installed, would fail open (a missing
//! failure guard, a time-out shorter than the hook's deadline or the
//! approval wait, a unit mistake), or sits where the harness skips it (an
//! untrusted folder). Each harness's settings are read by its inspector
//! (`hook::*_settings`). Exits 1 when a harness found is left unguarded or
//! a settings file cannot be read.

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use crate::{
    config::Config,
    hook::{
        claude_settings, codex_settings, copilot_settings, cursor_settings, droid_settings,
        gemini_settings, harness::Harness, inspection::Inspection, install::CLAUDE_CODE,
        opencode_settings,
    },
};

use super::DoctorArgs;

pub(super) fn run(args: DoctorArgs) -> ExitCode {
    let approval_timeout_secs = match Config::load(args.config.as_deref()) {
        Ok(config) => config.verifier.approval_timeout_secs,
        Err(errors) => {
            for error in &errors {
                eprintln!("{}", error.render());
            }
            return ExitCode::from(1);
        }
    };
    let project = args.project.unwrap_or_else(|| std::env::current_dir().unwrap_or_default());
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        eprintln!("HOME is not set: the user's settings cannot be found");
        return ExitCode::from(1);
    };
    let mut unguarded = 0;
    let mut found = 0;
    for harness in Harness::ALL {
        let inspection = inspect(harness, &home, &project, approval_timeout_secs);
        if !present(harness, &home, &project) && inspection.entries.is_empty() {
            continue;
        }
        found += 1;
        if !report(harness, &inspection) {
            unguarded += 1;
        }
    }
    if found == 0 {
        println!("no coding agent found (looked in {} and {})", home.display(), project.display());
    }
    if unguarded == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// The harness's settings, read by its inspector.
fn inspect(harness: Harness, home: &Path, project: &Path, approval: u64) -> Inspection {
    match harness {
        Harness::ClaudeCode => {
            let mut inspection = Inspection::default();
            for file in claude_settings::discover(project, Some(home)) {
                CLAUDE_CODE.inspect_file(&file, approval, &mut inspection);
            }
            inspection
        }
        Harness::Codex => codex_settings::inspect(home, project, approval),
        Harness::Copilot => copilot_settings::inspect(home, project, approval),
        Harness::Gemini => gemini_settings::inspect(home, project, approval),
        Harness::Droid => droid_settings::inspect(home, project, approval),
        Harness::Cursor => cursor_settings::inspect(home, project, approval),
        Harness::Opencode => opencode_settings::inspect(home, project, approval),
    }
}

/// Whether the harness is on this machine or set up for the project.
fn present(harness: Harness, home: &Path, project: &Path) -> bool {
    let (folders, programs): (Vec<PathBuf>, &[&str]) = match harness {
        Harness::ClaudeCode => (vec![home.join(".claude"), project.join(".claude")], &["claude"]),
        Harness::Codex => (vec![home.join(".codex"), project.join(".codex")], &["codex"]),
        Harness::Gemini => (vec![home.join(".gemini"), project.join(".gemini")], &["gemini"]),
        Harness::Copilot => (
            vec![copilot_settings::copilot_home(home), project.join(".github/hooks")],
            &["copilot"],
        ),
        Harness::Droid => (vec![home.join(".factory"), project.join(".factory")], &["droid"]),
        Harness::Cursor => {
            (vec![home.join(".cursor"), project.join(".cursor")], &["cursor-agent", "cursor"])
        }
        Harness::Opencode => (
            vec![
                home.join(".config/opencode"),
                project.join(".opencode"),
                project.join("opencode.json"),
            ],
            &["opencode"],
        ),
    };
    folders.iter().any(|folder| folder.exists()) || programs.iter().any(|program| on_path(program))
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Prints what was found; whether the harness is guarded.
fn report(harness: Harness, inspection: &Inspection) -> bool {
    let guarded = inspection.guarded() && inspection.unreadable.is_empty();
    println!("{harness}: {}", if guarded { "guarded" } else { "NOT GUARDED" });
    for reason in &inspection.unreadable {
        println!("  {reason}");
    }
    if inspection.entries.is_empty() {
        println!(
            "  no safety-dongle hook is installed{}; run `safety-dongle install {harness}`",
            if inspection.files.is_empty() {
                String::new()
            } else {
                format!(
                    " (read {})",
                    inspection
                        .files
                        .iter()
                        .map(|f| f.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
    }
    for entry in &inspection.entries {
        if entry.problems.is_empty() {
            println!("  {} {}: ok", entry.file.display(), entry.location);
        }
        for problem in &entry.problems {
            println!("  {} {}: {problem}", entry.file.display(), entry.location);
        }
    }
    for kind in &inspection.uncovered {
        println!("  nothing guards {kind}");
    }
    guarded
}
