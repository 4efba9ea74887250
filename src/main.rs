//! The `safety-dongle` binary: logging to stderr, then the command line.
//! All logic lives in the library.

use std::process::ExitCode;

use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    // stdout carries MCP in stdio mode, so logs go to stderr only.
    let filter = EnvFilter::try_from_env("SAFETY_DONGLE_LOG").unwrap_or_else(|_| EnvFilter::new("warn,safety_dongle=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    safety_dongle::cli::run()
}
