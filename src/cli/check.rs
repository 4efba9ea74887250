//! `safety-dongle check`: validate the files a user writes — the config,
//! the policies it names (or the embedded default), and any policy files
//! given as arguments — and print every error as `file:line:col: message`
//! with the source line and a caret.

use std::process::ExitCode;

use crate::{config::Config, diagnostics::Diagnostic, policy::CompiledPolicy};

use super::CheckArgs;

pub(super) fn run(args: CheckArgs) -> ExitCode {
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut checked: Vec<String> = Vec::new();
    match Config::load(args.config.as_deref()) {
        Ok(config) => {
            checked.push(args.config.as_deref().map_or_else(|| "default configuration".into(), |p| p.display().to_string()));
            match CompiledPolicy::load(&config.policies) {
                Ok(policy) => checked.extend(policy.sources().iter().cloned()),
                Err(found) => errors.extend(found),
            }
        }
        Err(found) => errors.extend(found),
    }
    let (policies, others): (Vec<_>, Vec<_>) = args.paths.iter().partition(|p| p.extension().is_some_and(|e| e == "toml"));
    for path in others {
        errors.push(Diagnostic::whole_file(path, "not a file this version can check (policy files end in .toml)"));
    }
    if !policies.is_empty() {
        let paths: Vec<_> = policies.into_iter().cloned().collect();
        match CompiledPolicy::load(&paths) {
            Ok(policy) => checked.extend(policy.sources().iter().cloned()),
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
