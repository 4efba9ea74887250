//! `safety-dongle check`: validate the files a user writes and print every
//! error as `file:line:col: message` with the source line and a caret.

use std::process::ExitCode;

use crate::{config::Config, diagnostics::Diagnostic};

use super::CheckArgs;

pub(super) fn run(args: CheckArgs) -> ExitCode {
    let mut errors: Vec<Diagnostic> = Vec::new();
    if let Err(found) = Config::load(args.config.as_deref()) {
        errors.extend(found);
    }
    for path in &args.paths {
        errors.push(Diagnostic::whole_file(
            path,
            "not a file this version can check: pass the config file with --config",
        ));
    }
    for error in &errors {
        eprintln!("{}", error.render());
    }
    if errors.is_empty() {
        let what = args.config.as_deref().map_or_else(|| "default configuration".into(), |p| p.display().to_string());
        println!("{what}: ok");
        ExitCode::SUCCESS
    } else {
        eprintln!("{} error(s)", errors.len());
        ExitCode::from(1)
    }
}
