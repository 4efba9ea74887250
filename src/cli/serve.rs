//! `safety-dongle serve`: assemble the router from the configuration
//! (`assemble`), start the downstream servers, then serve MCP on stdio or
//! loopback HTTP; on the way out, end the sessions left and terminate the
//! downstream servers.

use std::process::ExitCode;

use crate::server;

use super::{ServeArgs, assemble::assemble_with_runtime};

pub(super) fn run(args: ServeArgs) -> ExitCode {
    let Some(mut config) = super::load_config(args.config.as_deref()) else {
        return ExitCode::from(1);
    };
    if let Some(dir) = args.data_dir {
        config.data_dir = Some(dir);
    }
    if let Some(mode) = args.mode
        && let Err(refused) = config.override_mode(mode, "--mode")
    {
        eprintln!("safety-dongle: {refused}");
        return ExitCode::from(1);
    }
    if let Some(endpoints) = args.endpoints {
        config.endpoints = endpoints;
    }
    if !args.policies.is_empty() {
        config.policies = args.policies;
    }
    if let Some(file) = args.import_client_config {
        config.client_config = Some(file);
    }
    let Some((assembled, runtime)) = assemble_with_runtime(&config) else {
        return ExitCode::from(1);
    };
    let router = assembled.router.clone();
    let served = runtime.block_on(async {
        assembled.downstreams.start();
        let served = match args.http {
            Some(addr) => server::http::serve_http(assembled.router, addr).await,
            None => server::serve_stdio(assembled.router).await,
        };
        assembled.downstreams.shutdown().await;
        served
    });
    // Whatever sessions are left end with the process (spec 2.3.3).
    router.end_session(None);
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
