//! The `safety-dongle` binary: logging to stderr, then the command line.
//! All logic lives in the library.

use std::process::ExitCode;

use tracing::Level;
use tracing_subscriber::{
    EnvFilter, Layer, filter::filter_fn, layer::SubscriberExt, util::SubscriberInitExt,
};

fn main() -> ExitCode {
    // stdout carries MCP in stdio mode, so logs go to stderr only.
    let filter = EnvFilter::try_from_env("SAFETY_DONGLE_LOG")
        .unwrap_or_else(|_| EnvFilter::new("warn,safety_dongle=info"));
    // rmcp logs whole requests at debug level, arguments included (and so
    // verify_challenge's code): whatever the filter asks for, its records
    // below info never reach the log.
    let no_rmcp_payloads =
        filter_fn(|meta| !meta.target().starts_with("rmcp") || *meta.level() <= Level::INFO);
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .with_filter(filter)
                .with_filter(no_rmcp_payloads),
        )
        .init();
    quiet_on_broken_pipe();
    safety_dongle::cli::run()
}

/// A report piped into a reader that stops early (`status | head`) ends
/// the way a shell expects of a process whose pipe closed (status 141,
/// nothing on stderr) instead of panicking. `print!` panics on a write
/// error; stdio serving writes its frames itself and is not affected.
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message =
            info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}
