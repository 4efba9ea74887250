//! `safety-dongle serve`: assemble the operation registry and router from
//! the configuration, then serve MCP on stdio or loopback HTTP.

use std::{process::ExitCode, sync::Arc};

use serde_json::{Map, Value, json};

use crate::{
    config::Config,
    policy::CompiledPolicy,
    protocol::{introspect::Introspect, limits::Limits, registry::Registry, router::Router},
    safety::{
        engine::{LoopConfig, SafetyLoop},
        operations,
    },
    server,
    store::Store,
    verify::link::VerifierLink,
};

use super::ServeArgs;

pub(super) fn run(args: ServeArgs) -> ExitCode {
    let Some(mut config) = super::load_config(args.config.as_deref()) else {
        return ExitCode::from(1);
    };
    if let Some(dir) = args.data_dir {
        config.data_dir = Some(dir);
    }
    if let Some(mode) = args.mode {
        config.mode = mode;
    }
    if let Some(endpoints) = args.endpoints {
        config.endpoints = endpoints;
    }
    if !args.policies.is_empty() {
        config.policies = args.policies;
    }
    let Some((router, runtime)) = router_and_runtime(&config) else {
        return ExitCode::from(1);
    };
    let served = runtime.block_on(async {
        match args.http {
            Some(addr) => server::http::serve_http(router, addr).await,
            None => server::serve_stdio(router).await,
        }
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("safety-dongle: {error}");
            ExitCode::from(1)
        }
    }
}

/// The router over the configuration and a runtime to run it on; `None`
/// (after saying why) means exit 1.
pub fn router_and_runtime(config: &Config) -> Option<(Arc<Router>, tokio::runtime::Runtime)> {
    let router = build_router(config).map_err(|message| eprintln!("safety-dongle: {message}")).ok()?;
    Some((Arc::new(router), super::runtime()?))
}

/// Everything `serve` needs, assembled from the configuration: the state
/// store, the compiled policy, the safety loop and the router over every
/// operation. Errors are for the operator, so they may name files.
pub fn build_router(config: &Config) -> Result<Router, String> {
    let safety = Arc::new(build_safety_loop(config)?);
    let mode = safety.mode();
    let mut registry = Registry::default();
    registry.register(Arc::new(Introspect::default())).map_err(|e| e.to_string())?;
    operations::register(&mut registry, safety).map_err(|e| e.to_string())?;
    Ok(Router::new(registry, config.endpoints, Limits::default(), capabilities(mode.name())))
}

/// The policy, the store and the loop over them.
pub fn build_safety_loop(config: &Config) -> Result<SafetyLoop, String> {
    let policy = CompiledPolicy::load(&config.policies).map_err(|errors| {
        errors.iter().map(|e| e.render()).collect::<Vec<_>>().join("\n")
    })?;
    let store = open_store(config)?;
    let settings = &config.verifier;
    let verifier = VerifierLink::locate(settings.program.as_deref())
        .map(|program| VerifierLink::new(program, settings.channels.clone(), settings.command.clone()));
    if verifier.is_none() {
        tracing::warn!("safety-dongle-verifier not found next to this program or on PATH: no human can be asked, so blocks and pauses stay until `safety-dongle unblock` or expiry");
    }
    let loop_config = LoopConfig {
        mode: config.mode,
        challenge_ttl_ms: i64::try_from(settings.challenge_ttl_secs.saturating_mul(1000)).unwrap_or(i64::MAX),
        approval_wait: std::time::Duration::from_secs(settings.approval_timeout_secs),
        verifier,
    };
    Ok(SafetyLoop::new(Arc::new(store), Arc::new(policy), loop_config))
}

pub fn open_store(config: &Config) -> Result<Store, String> {
    let data_dir = config
        .data_dir
        .as_deref()
        .ok_or("no data folder: this platform has none by default; pass --data-dir or set data_dir")?;
    Store::open(data_dir).map_err(|e| e.to_string())
}

/// `_protocol.capabilities`: only what is enforced is claimed.
fn capabilities(safety_loop: &str) -> Map<String, Value> {
    match json!({
        "execution_safety_loop": safety_loop,
        "batch": false,
        "confirmation": false,
        "field_selection": false,
        "pagination": false,
        "warnings": false,
    }) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
