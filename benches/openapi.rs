//! OpenAPI import of GitHub's REST API description (`@octokit/openapi`,
//! 13 MB of JSON, about 1,200 operations): the median of several runs
//! in-process (parse, resolve, emit), and end to end through the release
//! binary (read the file, import, write the adapter), target at most 1 s;
//! then loading the resulting adapter file as `serve` does (parse and
//! validate every operation, build them into a registry), target at most
//! 100 ms.
//!
//! Needs `tests/downstream/install.sh` to have run. Run with
//! `cargo bench --bench openapi`.

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use safety_dongle::{
    adapter::{
        definition, http,
        openapi::{ImportOptions, import},
    },
    config::LoopMode,
    gate::Gate,
    policy::CompiledPolicy,
    protocol::registry::Registry,
    safety::core::LoopCore,
    store::Store,
    verify::{
        humans::{HumanSettings, Humans},
        link::VerifierUnavailable,
    },
};

const RUNS: usize = 11;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/downstream/node_modules/@octokit/openapi/generated/api.github.com.json");
    let text = std::fs::read_to_string(&spec).unwrap_or_else(|e| {
        panic!("read {}: {e} (run tests/downstream/install.sh)", spec.display())
    });
    let options =
        ImportOptions { name: Some("github-api".into()), source: "api.github.com.json".into() };

    let mut operations = 0;
    let mut in_process = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let imported = import(&text, &options).unwrap_or_else(|e| panic!("import: {e}"));
        in_process.push(start.elapsed());
        operations = imported.operations;
        std::hint::black_box(imported);
    }

    let output = Path::new(env!("CARGO_TARGET_TMPDIR")).join("github-api-adapter.md");
    let mut end_to_end = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_safety-dongle"))
            .args(["adapter", "import-openapi", "--name", "github-api", "-o"])
            .arg(&output)
            .arg(&spec)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        end_to_end.push(start.elapsed());
        assert!(status.success(), "import-openapi failed");
    }
    let size = std::fs::metadata(&output).map(|m| m.len()).unwrap_or(0);

    println!(
        "import of GitHub's description ({:.1} MB, {operations} operations, adapter {:.1} MB), median of {RUNS}: in-process {:.0} ms, binary end to end {:.0} ms",
        text.len() as f64 / 1e6,
        size as f64 / 1e6,
        median(in_process).as_secs_f64() * 1e3,
        median(end_to_end).as_secs_f64() * 1e3,
    );

    let state = Path::new(env!("CARGO_TARGET_TMPDIR")).join("openapi-bench-state");
    let store = std::sync::Arc::new(Store::open(&state).unwrap_or_else(|e| panic!("{e}")));
    let policy = std::sync::Arc::new(
        CompiledPolicy::load(&[], safety_dongle::config::CentralPolicy::default())
            .unwrap_or_else(|e| panic!("{e:?}")),
    );
    let humans = HumanSettings {
        challenge_ttl_ms: 300_000,
        approval_wait: Duration::from_secs(1),
        verifier: Err(VerifierUnavailable::NotFound),
    };
    let gate = std::sync::Arc::new(Gate::new(std::sync::Arc::new(LoopCore::new(
        store.clone(),
        policy,
        LoopMode::Enforcing,
        Humans::new(store, humans),
    ))));
    let mut loading = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let loaded = definition::load_file(&output).unwrap_or_else(|e| panic!("load: {e:?}"));
        let mut registry = Registry::default();
        let registered =
            http::register(&mut registry, std::slice::from_ref(&loaded.definition), &gate)
                .unwrap_or_else(|e| panic!("{e}"));
        loading.push(start.elapsed());
        assert_eq!(registered, operations);
    }
    println!(
        "loading the imported GitHub adapter ({operations} operations: parse, validate, register), median of {RUNS}: {:.1} ms",
        median(loading).as_secs_f64() * 1e3
    );
}
