//! `safety-dongle serve`: assemble the router from the configuration
//! (`assemble`), start the downstream servers, then serve MCP on stdio or
//! loopback HTTP, reloading what the files say as they change (`watch`,
//! `reload`) and taking up new central policy versions; on the way out, end the sessions left and terminate the
//! downstream servers.

use std::{path::Path, process::ExitCode};

use crate::{config::Config, diagnostics::Diagnostic, server};

use super::{
    ServeArgs,
    assemble::{AssembleError, Start, assemble_with_runtime},
    watch::{self, Reread},
};

pub(super) fn run(args: ServeArgs) -> ExitCode {
    let read_since = std::time::SystemTime::now();
    let config = match configure(&args) {
        Ok(config) => config,
        Err(errors) => {
            super::print_diagnostics(&errors);
            return ExitCode::from(1);
        }
    };
    let Some((mut assembled, runtime)) = assemble_with_runtime(&config, Start::Deferred) else {
        return ExitCode::from(1);
    };
    let router = assembled.router.clone();
    let reloader = assembled.reloader.clone();
    let http = args.http;
    let served = runtime.block_on(async {
        assembled.downstreams.start();
        let compiled = assembled.compiled.take();
        let config_file = args.config.clone();
        let reread: Reread = Box::new(move || configure(&args));
        let watcher = assembled.reloader.clone();
        let serving = async {
            match http {
                Some(addr) => server::http::serve_http(assembled.router, addr).await,
                None => server::serve_stdio(assembled.router).await,
            }
        };
        // The policy is compiled beside the first requests (after
        // assemble::COMPILE_GRACE, or sooner when a decision needs it). If
        // it cannot be, nothing was decided (every decision waits for it)
        // and the server stops with the reason, whichever finishes first: a
        // client that left at once must not see a broken policy exit
        // cleanly. Changes are watched once the first policy is in force
        // while the server still serves: a reload compares against it, and
        // watching is no part of the first answers.
        let policy = policy_compiled(compiled);
        tokio::pin!(serving, policy);
        let served = tokio::select! {
            served = &mut serving => (&mut policy).await.and(served),
            compiled = &mut policy => match compiled {
                Ok(()) => {
                    tokio::spawn(watcher.clone().follow_central());
                    if let Err(error) = watch::spawn(watcher, config_file, reread, read_since) {
                        tracing::warn!(%error, "files cannot be watched: changes need a restart");
                    }
                    serving.await
                }
                Err(refused) => Err(refused),
            },
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

/// Resolves once the policy deferred at start-up is in force, or with why
/// it could not be (a compiler that vanished is a refusal too).
async fn policy_compiled(
    compiled: Option<tokio::sync::oneshot::Receiver<Result<(), AssembleError>>>,
) -> std::io::Result<()> {
    let Some(compiled) = compiled else { return Ok(()) };
    match compiled.await {
        Ok(result) => result.map_err(|refused| std::io::Error::other(refused.to_string())),
        Err(_) => Err(std::io::Error::other("the policy compiler stopped before it finished")),
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
        config.override_mode(mode, "--mode").map_err(|refused| {
            vec![Diagnostic::whole_file(Path::new("<command line>"), refused.to_string())]
        })?;
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
