//! `safety-dongle serve`: assemble the router from the configuration
//! (`assemble`), start the downstream servers, then serve MCP on stdio or
//! loopback HTTP, reloading what the files say as they change (`watch`,
//! `reload`); on the way out, end the sessions left and terminate the
//! downstream servers.

use std::{path::Path, process::ExitCode};

use crate::{config::Config, diagnostics::Diagnostic, server};

use super::{
    ServeArgs,
    assemble::assemble_with_runtime,
    watch::{self, Reread},
};

pub(super) fn run(args: ServeArgs) -> ExitCode {
    let config = match configure(&args) {
        Ok(config) => config,
        Err(errors) => {
            super::print_diagnostics(&errors);
            return ExitCode::from(1);
        }
    };
    let Some((assembled, runtime)) = assemble_with_runtime(&config) else {
        return ExitCode::from(1);
    };
    let router = assembled.router.clone();
    let reloader = assembled.reloader.clone();
    let http = args.http;
    let served = runtime.block_on(async {
        assembled.downstreams.start();
        let config_file = args.config.clone();
        let reread: Reread = Box::new(move || configure(&args));
        if let Err(error) = watch::spawn(assembled.reloader.clone(), config_file, reread) {
            tracing::warn!(%error, "files cannot be watched: changes need a restart");
        }
        let served = match http {
            Some(addr) => server::http::serve_http(assembled.router, addr).await,
            None => server::serve_stdio(assembled.router).await,
        };
        assembled.downstreams.shutdown().await;
        served
    });
    // Whatever sessions are left end with the process (spec 2.3.3).
    router.end_session(None);
    reloader.forget();
    // The stdin reader is a blocking thread that only a new line or EOF
    // would end; do not wait for it (a client that keeps stdin open while
    // sending SIGTERM would otherwise keep the process alive).
    runtime.shutdown_background();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("safety-dongle: {error}");
            ExitCode::from(1)
        }
    }
}

/// The configuration `serve` runs with: the config file and environment,
/// then the command line's settings. Read at start-up, and again on every
/// reload.
fn configure(args: &ServeArgs) -> Result<Config, Vec<Diagnostic>> {
    let mut config = Config::load(args.config.as_deref())?;
    if let Some(dir) = &args.data_dir {
        config.data_dir = Some(dir.clone());
    }
    if let Some(mode) = args.mode {
        config.override_mode(mode, "--mode").map_err(|refused| vec![Diagnostic::whole_file(Path::new("<command line>"), refused.to_string())])?;
    }
    if let Some(endpoints) = args.endpoints {
        config.endpoints = endpoints;
    }
    if !args.policies.is_empty() {
        config.policies = args.policies.clone();
    }
    if let Some(file) = &args.import_client_config {
        config.client_config = Some(file.clone());
    }
    Ok(config)
}
