//! `safety-dongle serve`: assemble the operation registry and router from
//! the configuration, then serve MCP on stdio or loopback HTTP.

use std::{process::ExitCode, sync::Arc};

use serde_json::{Map, Value, json};

use crate::{
    config::Config,
    protocol::{introspect::Introspect, limits::Limits, registry::Registry, router::Router},
    server,
};

use super::ServeArgs;

pub(super) fn run(args: ServeArgs) -> ExitCode {
    let mut config = match Config::load(args.config.as_deref()) {
        Ok(config) => config,
        Err(errors) => {
            for error in errors {
                eprintln!("{}", error.render());
            }
            return ExitCode::from(1);
        }
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
    let router = match build_router(&config) {
        Ok(router) => Arc::new(router),
        Err(message) => {
            eprintln!("safety-dongle: {message}");
            return ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("safety-dongle: cannot start the async runtime: {error}");
            return ExitCode::from(1);
        }
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

/// The registry of built-in operations and the router over it.
pub fn build_router(config: &Config) -> Result<Router, String> {
    let mut registry = Registry::default();
    registry
        .register(Arc::new(Introspect::default()))
        .map_err(|e| e.to_string())?;
    Ok(Router::new(registry, config.endpoints, Limits::default(), capabilities()))
}

/// `_protocol.capabilities`. The safety loop reports "disabled" until its
/// operations are part of this server: a capability is only claimed once it
/// is enforced.
fn capabilities() -> Map<String, Value> {
    match json!({
        "execution_safety_loop": "disabled",
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
