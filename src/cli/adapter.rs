//! `safety-dongle adapter import-openapi SPEC [--name NAME] [-o FILE]`:
//! turns an OpenAPI or Swagger document into an adapter file, written to
//! FILE or to standard output. Warnings and a one-line summary go to
//! standard error. Exit 1 when the document cannot be read or imported or
//! the adapter cannot be written; FILE is not touched unless the import
//! succeeded.

use std::{
    fs::File,
    io::{Read, Write},
    path::Path,
    process::ExitCode,
};

use crate::{
    adapter::openapi::{self, ImportOptions},
    diagnostics::io_reason,
};

use super::ImportOpenApiArgs;

/// Larger documents are refused unread (GitHub's, among the largest
/// there are, is 13 MB), so pointing at a device or a huge file cannot
/// exhaust memory.
const MAX_SPEC_BYTES: u64 = 128 << 20;

pub(super) fn import_openapi(args: ImportOpenApiArgs) -> ExitCode {
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("safety-dongle: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &ImportOpenApiArgs) -> Result<(), String> {
    let spec = args.spec.display();
    let text = read_spec(&args.spec).map_err(|reason| format!("{spec}: {reason}"))?;
    let source = args
        .spec
        .file_name()
        .map_or_else(|| spec.to_string(), |name| name.to_string_lossy().into_owned());
    let options = ImportOptions { name: args.name.clone(), source };
    let imported = openapi::import(&text, &options).map_err(|error| format!("{spec}: {error}"))?;
    for warning in &imported.warnings {
        eprintln!("warning: {warning}");
    }
    let into = match &args.output {
        Some(path) => {
            std::fs::write(path, &imported.text)
                .map_err(|e| format!("cannot write {}: {}", path.display(), io_reason(&e)))?;
            if !path.to_string_lossy().ends_with("-adapter.md") {
                eprintln!(
                    "warning: adapter files are named NAME-adapter.md; {} is not",
                    path.display()
                );
            }
            path.display().to_string()
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(imported.text.as_bytes()).and_then(|()| stdout.flush()).map_err(
                |e| format!("cannot write the adapter to standard output: {}", io_reason(&e)),
            )?;
            "standard output".to_owned()
        }
    };
    eprintln!("imported {} operations from {spec} into {into}", imported.operations);
    Ok(())
}

fn read_spec(path: &Path) -> Result<String, String> {
    let file = File::open(path).map_err(|e| io_reason(&e).to_owned())?;
    let mut bytes = Vec::new();
    file.take(MAX_SPEC_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io_reason(&e).to_owned())?;
    if bytes.len() as u64 > MAX_SPEC_BYTES {
        return Err(format!(
            "larger than {} MiB; not an OpenAPI document this tool reads",
            MAX_SPEC_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|_| "not valid UTF-8 text".to_owned())
}
