//! `safety-dongle check`: validate the files a user writes — the config,
//! the policies, adapter files and client configuration it names (or the
//! embedded default policy), and any policy (`.toml`) or adapter (`*.md`) files given as
//! arguments — and print every error as `file:line:col: message` with the
//! source line and a caret. A policy's examples and counterexamples are
//! checked against the whole policy it belongs to (`lab::examples`). Warnings (an unknown top-level key in an
//! adapter file) and notes (how a policy pattern that reads two ways, such
//! as the spec's `rm -rf*`, was read) are printed but do not fail the check. Claude Code
//! settings (given as `.json`, and those of the current project and the
//! user whenever they exist) are checked for a dongle hook that could fail
//! open (`hook::grouped`).

use std::{path::PathBuf, process::ExitCode};

use crate::{
    adapter::{
        definition::{self, Loaded},
        mcp::client_config,
    },
    config::{CentralPolicy, Config, StateLocation, VerifierSettings},
    diagnostics::Diagnostic,
    hook::{claude_settings, install::CLAUDE_CODE},
    lab,
    policy::CompiledPolicy,
};

use super::CheckArgs;

pub(super) fn run(args: CheckArgs) -> ExitCode {
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut checked: Vec<String> = Vec::new();
    let mut adapters: Vec<PathBuf> = Vec::new();
    let mut approval_timeout_secs = VerifierSettings::default().approval_timeout_secs;
    let mut team_state = false;
    match Config::load(args.config.as_deref()) {
        Ok(config) => {
            approval_timeout_secs = config.verifier.approval_timeout_secs;
            team_state = matches!(config.state, StateLocation::Postgres { .. });
            checked.push(
                args.config
                    .as_deref()
                    .map_or_else(|| "default configuration".into(), |p| p.display().to_string()),
            );
            check_policy(&config.policies, &mut checked, &mut errors);
            adapters.extend(config.adapters);
            if let Some(file) = &config.client_config {
                match client_config::load(file) {
                    Ok(servers) => {
                        checked.push(format!("{} ({} servers)", file.display(), servers.len()))
                    }
                    Err(found) => errors.extend(
                        found.into_iter().map(|message| Diagnostic::whole_file(file, message)),
                    ),
                }
            }
        }
        Err(found) => errors.extend(found),
    }
    let mut policies = Vec::new();
    let here = std::env::current_dir().unwrap_or_default();
    let mut settings =
        claude_settings::discover(&here, std::env::var_os("HOME").map(PathBuf::from).as_deref());
    for path in &args.paths {
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => policies.push(path.clone()),
            Some("json") => settings.push(path.clone()),
            Some("md") => adapters.push(path.clone()),
            _ if path.is_dir() => adapters.push(path.clone()),
            _ => errors.push(Diagnostic::whole_file(path, "not a file this version can check (policy files end in .toml, adapter files in -adapter.md)")),
        }
    }
    if !policies.is_empty() {
        check_policy(&policies, &mut checked, &mut errors);
    }
    if !adapters.is_empty() {
        match definition::load_all(&adapters) {
            Ok(loaded) => checked.extend(loaded.iter().map(describe)),
            Err(found) => errors.extend(found),
        }
    }
    for file in &settings {
        match check_claude_settings(file, approval_timeout_secs, team_state) {
            Ok(hooks) => {
                checked.push(format!("{} ({hooks} safety-dongle hook entries)", file.display()))
            }
            Err(found) => errors.extend(found),
        }
    }
    for error in &errors {
        eprintln!("{}", error.render());
    }
    if errors.is_empty() {
        for what in checked {
            println!("{what}: ok");
        }
        ExitCode::SUCCESS
    } else {
        eprintln!("{} error(s)", errors.len());
        ExitCode::from(1)
    }
}

/// Compiles the policy files (merged in order) and checks the examples
/// written with their rules against the whole policy.
fn check_policy(paths: &[PathBuf], checked: &mut Vec<String>, errors: &mut Vec<Diagnostic>) {
    match CompiledPolicy::load(paths, CentralPolicy::default()) {
        Ok(policy) => {
            for note in policy.notes() {
                eprintln!("note: {}", note.render());
            }
            let failures = lab::examples::check(&policy);
            if failures.is_empty() {
                let examples = lab::examples::count(&policy);
                checked.push(format!(
                    "{} ({} rules, {examples} examples checked)",
                    policy.sources().join(" + "),
                    policy.rules().len()
                ));
            }
            errors.extend(failures);
        }
        Err(found) => errors.extend(found),
    }
}

/// How many dongle hook entries a Claude Code settings file has, or what
/// could make one of them fail open. With a `team_state`, an entry that
/// names its agent is warned about: every machine using the settings then
/// shares that one agent's blocks and step budget.
fn check_claude_settings(
    file: &std::path::Path,
    approval_timeout_secs: u64,
    team_state: bool,
) -> Result<usize, Vec<Diagnostic>> {
    let whole = |message: String| vec![Diagnostic::whole_file(file, message)];
    let text = std::fs::read_to_string(file)
        .map_err(|e| whole(format!("cannot be read: {}", crate::diagnostics::io_reason(&e))))?;
    let document: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| whole(format!("is not JSON: {e}")))?;
    let hooks = CLAUDE_CODE.dongle_hooks(&document).map_err(|error| whole(error.to_string()))?;
    let named = hooks.iter().filter_map(|entry| Some((entry, entry.agent.as_deref()?)));
    for (entry, agent) in named.filter(|_| team_state) {
        let warning = Diagnostic::whole_file(
            file,
            format!(
                "{}: --agent {agent} is the same name on every machine and for every user of these settings, and the state is a team database: one developer's block would refuse everyone's calls, all would share one step budget, and an unblock anywhere would lift it; leave --agent out (each machine, user and project then has its own name) or make it unique per machine",
                entry.location
            ),
        );
        eprintln!("warning: {}", warning.render());
    }
    let problems: Vec<Diagnostic> = hooks
        .iter()
        .flat_map(|entry| {
            CLAUDE_CODE
                .problems(entry, approval_timeout_secs)
                .into_iter()
                .map(|problem| format!("{}: {problem}", entry.location))
        })
        .map(|problem| Diagnostic::whole_file(file, problem))
        .collect();
    if problems.is_empty() { Ok(hooks.len()) } else { Err(problems) }
}

/// `file (adapter 'name', N operations)`, after printing its warnings.
fn describe(loaded: &Loaded) -> String {
    for warning in &loaded.warnings {
        eprintln!("warning: {}", warning.render());
    }
    let definition = &loaded.definition;
    format!(
        "{} (adapter '{}', {} operations)",
        definition.file.display(),
        definition.name,
        definition.operations.len()
    )
}
