//! In-process evaluation latency: a 200-character hint against a
//! 1,000-rule policy (the shipped default plus generated rules of every
//! kind). Reports p50, p99 and max over 200,000 evaluations.
//!
//! Run with `cargo bench --bench evaluate`.

use std::{fmt::Write as _, hint::black_box, time::Instant};

use safety_dongle::{
    analysis::WorkingFolder,
    policy::{CompiledPolicy, PolicySource},
    safety::evaluator::{StepFacts, evaluate_step},
};

const EVALUATIONS: usize = 200_000;

/// The shipped default policy plus generated rules up to 1,000.
fn thousand_rule_policy() -> CompiledPolicy {
    let default = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/policies/default.toml"))
        .unwrap_or_else(|e| panic!("read default policy: {e}"));
    let shipped = CompiledPolicy::compile(&[PolicySource { path: "default.toml".into(), text: default.clone() }])
        .unwrap_or_else(|e| panic!("{e:?}"))
        .rules()
        .len();
    let mut extra = String::from("[defaults]\ndeny = [\n");
    let generated = 1_000 - shipped;
    for i in 0..generated / 4 {
        let _ = writeln!(extra, "  \"tool{i} --destroy*\", \"*secret-store-{i}/*\",");
    }
    extra.push_str("]\nrequiresApproval = [\n");
    for i in 0..generated / 4 {
        let _ = writeln!(extra, "  \"deploy-service-{i} *\",");
    }
    extra.push_str("]\n[[risk]]\nmatch = [\n");
    let remaining = generated - 3 * (generated / 4);
    for i in 0..remaining {
        let _ = writeln!(extra, "  \"*customer-db-{i}*\",");
    }
    extra.push_str("]\nscore = 70\nreason = \"touches a customer database\"\n");
    let policy = CompiledPolicy::compile(&[
        PolicySource { path: "default.toml".into(), text: default },
        PolicySource { path: "generated.toml".into(), text: extra },
    ])
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(policy.rules().len(), 1_000, "the benchmark needs exactly 1,000 rules");
    policy
}

fn percentile(sorted: &[u128], p: f64) -> u128 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let policy = thousand_rule_policy();
    let hint = "executing shell command: cd /home/dev/project && RUST_LOG=debug cargo test --workspace -- --nocapture 2>&1 | tee /tmp/test-output.log; echo finished with status $? and then tell the user what happened";
    assert_eq!(hint.chars().count(), 200, "the benchmark hint is 200 characters");
    let facts = StepFacts { agent: "coder", hint, outcome: None, step: 3, max_steps: 50, agent_risk: None, folder: &WorkingFolder::Project };
    for _ in 0..5_000 {
        black_box(evaluate_step(&policy, black_box(&facts)));
    }
    let mut nanos = Vec::with_capacity(EVALUATIONS);
    for _ in 0..EVALUATIONS {
        let start = Instant::now();
        black_box(evaluate_step(&policy, black_box(&facts)));
        nanos.push(start.elapsed().as_nanos());
    }
    nanos.sort_unstable();
    println!(
        "evaluate 200-char hint, 1,000-rule policy ({EVALUATIONS} runs): p50 {:.2} us, p99 {:.2} us, max {:.2} us",
        percentile(&nanos, 0.5) as f64 / 1e3,
        percentile(&nanos, 0.99) as f64 / 1e3,
        *nanos.last().unwrap_or(&0) as f64 / 1e3,
    );
}
