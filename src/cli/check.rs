//! `safety-dongle check`: validate the files a user writes — the config,
//! the policies, adapter files and client configuration it names (or the
//! embedded default policy), and any policy (`.toml`) or adapter (`*.md`) files given as
//! arguments — and print every error as `file:line:col: message` with the
//! source line and a caret. Warnings (an unknown top-level key in an
//! adapter file) are printed but do not fail the check.

use std::{path::PathBuf, process::ExitCode};

use crate::{
    adapter::{
        definition::{self, Loaded},
        mcp::client_config,
    },
    config::Config,
    diagnostics::Diagnostic,
    policy::CompiledPolicy,
};

use super::CheckArgs;

pub(super) fn run(args: CheckArgs) -> ExitCode {
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut checked: Vec<String> = Vec::new();
    let mut adapters: Vec<PathBuf> = Vec::new();
    match Config::load(args.config.as_deref()) {
        Ok(config) => {
            checked.push(args.config.as_deref().map_or_else(|| "default configuration".into(), |p| p.display().to_string()));
            match CompiledPolicy::load(&config.policies) {
                Ok(policy) => checked.extend(policy.sources().iter().cloned()),
                Err(found) => errors.extend(found),
            }
            adapters.extend(config.adapters);
            if let Some(file) = &config.client_config {
                match client_config::load(file) {
                    Ok(servers) => checked.push(format!("{} ({} servers)", file.display(), servers.len())),
                    Err(found) => errors.extend(found.into_iter().map(|message| Diagnostic::whole_file(file, message))),
                }
            }
        }
        Err(found) => errors.extend(found),
    }
    let mut policies = Vec::new();
    for path in &args.paths {
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => policies.push(path.clone()),
            Some("md") => adapters.push(path.clone()),
            _ if path.is_dir() => adapters.push(path.clone()),
            _ => errors.push(Diagnostic::whole_file(path, "not a file this version can check (policy files end in .toml, adapter files in -adapter.md)")),
        }
    }
    if !policies.is_empty() {
        match CompiledPolicy::load(&policies) {
            Ok(policy) => checked.extend(policy.sources().iter().cloned()),
            Err(found) => errors.extend(found),
        }
    }
    if !adapters.is_empty() {
        match definition::load_all(&adapters) {
            Ok(loaded) => checked.extend(loaded.iter().map(describe)),
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

/// `file (adapter 'name', N operations)`, after printing its warnings.
fn describe(loaded: &Loaded) -> String {
    for warning in &loaded.warnings {
        eprintln!("warning: {}", warning.render());
    }
    let definition = &loaded.definition;
    format!("{} (adapter '{}', {} operations)", definition.file.display(), definition.name, definition.operations.len())
}
