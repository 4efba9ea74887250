//! The adapter runtime's own cost, release build, in process:
//!
//! - per-call overhead: `GET /v1/items/{id}` on an axum server on
//!   127.0.0.1, called through the dongle's router (validation, the gate
//!   with its policy evaluation and audit row, request building, the
//!   transport, response parsing, the envelope's data) versus a raw
//!   reqwest call of the same URL that reads the body; median of the
//!   difference over interleaved calls;
//! - loading 100 small adapter files (5 operations each) from a folder.
//!
//! Run with `cargo bench --bench adapters`.

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{Router as Http, routing::get};
use safety_dongle::{
    adapter::{definition, http},
    config::LoopMode,
    gate::Gate,
    policy::{CompiledPolicy, PolicySource},
    protocol::{
        limits::Limits,
        registry::{CallContext, Category, Registry},
        router::Router,
        surface::{Endpoint, Surface},
    },
    safety::core::LoopCore,
    store::Store,
    verify::{
        humans::{HumanSettings, Humans},
        link::VerifierUnavailable,
    },
};
use serde_json::{Map, Value, json};

const CALLS: usize = 5_000;
const WARMUP: usize = 500;
const LOAD_RUNS: usize = 30;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn adapter_text(name: &str, base_url: &str) -> String {
    let mut text = format!(
        "---\nname: {name}\ntype: adapter\nversion: \"1.0.0\"\ndescription: \"bench\"\ntarget:\n  base_url: \"{base_url}\"\n  transport: http\n  protocol: rest\n  serialization: json\noperations:\n  read:\n"
    );
    for i in 0..5 {
        text.push_str(&format!(
            "    - name: get_item{i}\n      maps_to: \"GET /items/{{id}}\"\n      description: \"Get an item\"\n      params:\n        id: {{type: string, required: true, description: \"The item\"}}\n        expand: {{type: boolean, default: false}}\n        state: {{type: string, enum: [open, closed, all], default: open}}\n"
        ));
    }
    text.push_str("---\n\n# Bench adapter\n");
    text
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dongle-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    dir
}

fn router(folder: &Path, data: &Path) -> Router {
    let store = Arc::new(Store::open(data).unwrap_or_else(|e| panic!("{e}")));
    // The shipped policy, with a step budget that lasts the whole run: each
    // call spends a step, and no human is here to grant a new budget.
    let text = include_str!("../policies/default.toml")
        .replace("maxAutonomousSteps = 50", "maxAutonomousSteps = 1000000");
    let policy = Arc::new(
        CompiledPolicy::compile(&[PolicySource { path: "default.toml".into(), text }])
            .unwrap_or_else(|e| panic!("{e:?}")),
    );
    let humans = HumanSettings {
        challenge_ttl_ms: 300_000,
        approval_wait: Duration::from_secs(1),
        verifier: Err(VerifierUnavailable::NotFound),
    };
    let gate = Arc::new(Gate::new(Arc::new(LoopCore::new(
        store.clone(),
        policy,
        LoopMode::Enforcing,
        Humans::new(store, humans),
    ))));
    let loaded = definition::load_all(&[folder.to_path_buf()]).unwrap_or_else(|e| panic!("{e:?}"));
    let adapters: Vec<_> = loaded.into_iter().map(|l| l.definition).collect();
    let mut registry = Registry::default();
    http::register(&mut registry, &adapters, &gate).unwrap_or_else(|e| panic!("{e}"));
    Router::new(registry, Surface::default(), Limits::default(), Map::new())
}

fn overhead(runtime: &tokio::runtime::Runtime) {
    let (base, folder, data) = runtime.block_on(async {
        let app = Http::new().route(
            "/v1/items/{id}",
            get(|| async {
                (
                    [("content-type", "application/json")],
                    r#"{"id":"42","name":"widget","state":"open"}"#,
                )
            }),
        );
        let listener =
            tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
        let port = listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let folder = scratch("overhead");
        std::fs::write(
            folder.join("bench-api-adapter.md"),
            adapter_text("bench-api", &format!("http://127.0.0.1:{port}/v1")),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        (format!("http://127.0.0.1:{port}/v1"), folder, scratch("overhead-state"))
    });
    let router = router(&folder, &data);
    let raw = reqwest::Client::new();
    let url = format!("{base}/items/42");
    let call = CallContext::new("bench");
    let arguments: Map<String, Value> = match json!({"operation": "bench_api__get_item0", "params": {"id": "42"}})
    {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let (mut direct, mut through) = (Vec::with_capacity(CALLS), Vec::with_capacity(CALLS));
    runtime.block_on(async {
        for i in 0..WARMUP + CALLS {
            let start = Instant::now();
            let body = raw
                .get(&url)
                .send()
                .await
                .unwrap_or_else(|e| panic!("{e}"))
                .bytes()
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let raw_time = start.elapsed();
            assert!(!body.is_empty());
            let start = Instant::now();
            let answer = router.handle(&call, Endpoint::Semantic(Category::Read), &arguments).await;
            let dongle_time = start.elapsed();
            assert_eq!(
                answer.as_ref().ok().map(|v| v["name"].clone()),
                Some(json!("widget")),
                "{answer:?}"
            );
            if i >= WARMUP {
                direct.push(raw_time);
                through.push(dongle_time);
            }
        }
    });
    let (direct, through) = (median(direct), median(through));
    println!(
        "per-call overhead (median of {CALLS}): {:.1} µs  (through the dongle {:.1} µs, raw reqwest {:.1} µs)",
        (through.as_secs_f64() - direct.as_secs_f64()) * 1e6,
        through.as_secs_f64() * 1e6,
        direct.as_secs_f64() * 1e6
    );
}

fn load_hundred() {
    let folder = scratch("hundred");
    for i in 0..100 {
        std::fs::write(
            folder.join(format!("api{i}-adapter.md")),
            adapter_text(&format!("api{i}"), "https://api.example.com"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    let mut times = Vec::new();
    for _ in 0..LOAD_RUNS {
        let start = Instant::now();
        let loaded =
            definition::load_all(std::slice::from_ref(&folder)).unwrap_or_else(|e| panic!("{e:?}"));
        times.push(start.elapsed());
        assert_eq!(loaded.len(), 100);
    }
    println!(
        "load 100 adapter files (500 operations), median of {LOAD_RUNS}: {:.2} ms",
        median(times).as_secs_f64() * 1e3
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    overhead(&runtime);
    load_hundred();
}
