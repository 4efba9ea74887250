//! The `safety-dongle` binary: logging to stderr, then the command line.
//! All logic lives in the library.

use std::process::ExitCode;

use tracing::Level;
use tracing_subscriber::{EnvFilter, Layer, filter::filter_fn, layer::SubscriberExt, util::SubscriberInitExt};

fn main() -> ExitCode {
    // stdout carries MCP in stdio mode, so logs go to stderr only.
    let filter = EnvFilter::try_from_env("SAFETY_DONGLE_LOG").unwrap_or_else(|_| EnvFilter::new("warn,safety_dongle=info"));
    // rmcp logs whole requests at debug level, arguments included (and so
    // verify_challenge's code): whatever the filter asks for, its records
    // below info never reach the log.
    let no_rmcp_payloads = filter_fn(|meta| !meta.target().starts_with("rmcp") || *meta.level() <= Level::INFO);
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false).with_filter(filter).with_filter(no_rmcp_payloads))
        .init();
    safety_dongle::cli::run()
}
