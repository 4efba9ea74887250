//! In-process evaluation latency against a 1,000-rule policy (the shipped
//! default plus generated rules of every kind): a 200-character command
//! and a 200-character hint with a label (p50, p99 and max over 200,000
//! evaluations each) and an 8 KiB script (over 2,000), each parsed,
//! analysed and matched from scratch; the analysis alone; and, as the
//! floor under both, tree-sitter-bash's parse alone of the same texts and
//! of a 64 KiB script (with that script's whole analysis).
//!
//! Run with `cargo bench --bench evaluate`; `cargo bench --bench evaluate
//! -- WORDS` runs only the measurements whose name contains WORDS (to
//! profile one of them).

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

use std::{fmt::Write as _, hint::black_box, time::Instant};

#[path = "support/build_script.rs"]
mod build_script;

use safety_dongle::{
    analysis::{
        Action, Change, FileWrite, NoCurrentFiles, WorkingFolder, analyze_action, analyze_in,
    },
    policy::{CompiledPolicy, PolicySource},
    safety::evaluator::{StepFacts, evaluate_step},
};

const EVALUATIONS: usize = 200_000;

/// The shipped default policy plus generated rules up to 1,000.
fn thousand_rule_policy() -> CompiledPolicy {
    let default =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/policies/default.toml"))
            .unwrap_or_else(|e| panic!("read default policy: {e}"));
    let shipped = CompiledPolicy::compile(&[PolicySource {
        path: "default.toml".into(),
        text: default.clone(),
    }])
    .unwrap_or_else(|e| panic!("{e:?}"))
    .rules()
    .len();
    let mut extra = String::from("[defaults]\ndeny = [\n");
    let generated = 1_000 - shipped;
    for i in 0..generated / 4 {
        let _ = writeln!(extra, "  \"tool{i} --destroy*\", \"path:**/secret-store-{i}/**\",");
    }
    extra.push_str("]\nrequiresApproval = [\n");
    for i in 0..generated / 4 {
        let _ = writeln!(extra, "  \"deploy-service-{i} *\",");
    }
    extra.push_str("]\n[[risk]]\nmatch = [\n");
    let remaining = generated - 3 * (generated / 4);
    for i in 0..remaining {
        let _ = writeln!(extra, "  \"* customer-db-{i}*\",");
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

/// Whether the measurement named `what` was asked for.
fn wanted(what: &str) -> bool {
    std::env::args().skip(1).filter(|arg| !arg.starts_with("--")).all(|only| what.contains(&only))
}

/// Runs `work` `runs` times after a warm-up; returns sorted nanoseconds.
fn measure(runs: usize, mut work: impl FnMut()) -> Vec<u128> {
    for _ in 0..runs / 40 {
        work();
    }
    let mut nanos = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        work();
        nanos.push(start.elapsed().as_nanos());
    }
    nanos.sort_unstable();
    nanos
}

/// The whole evaluation, and the analysis alone (the rest is matching).
fn measure_both(policy: &CompiledPolicy, what: &str, hint: &str, runs: usize) {
    let facts = StepFacts {
        agent: "coder",
        hint,
        outcome: None,
        step: 3,
        max_steps: 50,
        agent_risk: None,
        folder: &WorkingFolder::Project,
        writes: &[],
        files: &NoCurrentFiles,
    };
    timed(&format!("evaluate {what}, 1,000-rule policy"), runs, || {
        black_box(evaluate_step(policy, black_box(&facts)));
    });
    timed(&format!("  of which analysis of the {what}"), runs, || {
        let _ = black_box(analyze_in(black_box(hint), &WorkingFolder::Project));
    });
}

/// The floor under any analysis of `text` built on tree-sitter-bash: the
/// grammar's parse alone, with a parser made once.
fn measure_parse(what: &str, text: &str, runs: usize) {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .unwrap_or_else(|e| panic!("the bash grammar: {e}"));
    timed(&format!("  the grammar alone: tree-sitter-bash parses the {what}"), runs, || {
        black_box(parser.parse(black_box(text), None));
    });
}

/// Measures and reports `work` if it was asked for.
fn timed(what: &str, runs: usize, work: impl FnMut()) {
    if !wanted(what) {
        return;
    }
    let nanos = measure(runs, work);
    println!(
        "{what} ({} runs): p50 {:.2} us, p99 {:.2} us, max {:.2} us",
        nanos.len(),
        percentile(&nanos, 0.5) as f64 / 1e3,
        percentile(&nanos, 0.99) as f64 / 1e3,
        *nanos.last().unwrap_or(&0) as f64 / 1e3,
    );
}

/// An ordinary build script of exactly 8 KiB: the longest hint analysed.
fn eight_kib_script() -> String {
    let lines = [
        "cd /home/dev/project && cargo build --release --locked 2>&1 | tee build.log",
        "if [ -f package.json ]; then npm ci && npm run lint -- --max-warnings=0; fi",
        "for f in src/*.rs; do rustfmt --check \"$f\" || echo \"needs fmt: $f\"; done",
        "git status --short && git diff --stat HEAD~1 -- src/ tests/",
        "python3 -m pytest -q tests/python -k 'not slow' --maxfail=1",
        "docker build -t app:dev . && docker run --rm app:dev ./app --version",
    ];
    let mut script = String::new();
    for line in lines.iter().cycle() {
        if script.len() + line.len() + 1 > safety_dongle::analysis::MAX_HINT_BYTES {
            break;
        }
        script.push_str(line);
        script.push('\n');
    }
    while script.len() < safety_dongle::analysis::MAX_HINT_BYTES {
        script.push('#');
    }
    script
}

fn main() {
    let policy = thousand_rule_policy();
    let command = "cd /home/dev/project && RUST_LOG=debug cargo test --workspace --all-features --locked -- --nocapture 2>&1 | tee /tmp/test-output.log; echo finished with status $? and then tell the user what happened.";
    assert_eq!(command.chars().count(), 200, "the benchmark command is 200 characters");
    measure_both(&policy, "200-char command", command, EVALUATIONS);
    measure_parse("200-char command", command, EVALUATIONS);
    // A label (`executing shell command: `) makes the text after it be
    // analysed as well as the whole: two parses.
    let labelled = "executing shell command: cd /home/dev/project && RUST_LOG=debug cargo test --workspace -- --nocapture 2>&1 | tee /tmp/test-output.log; echo finished with status $? and then tell the user what happened";
    assert_eq!(labelled.chars().count(), 200, "the labelled hint is 200 characters");
    measure_both(&policy, "200-char labelled hint", labelled, EVALUATIONS);
    let script = eight_kib_script();
    assert_eq!(script.len(), 8 * 1024);
    measure_both(&policy, "8 KiB script", &script, 2_000);
    measure_parse("8 KiB script", &script, 2_000);
    let large = build_script::sixty_four_kib();
    measure_parse("64 KiB script", &large, 200);
    timed(
        "  and its analysis as a planted write (what a 64 KiB Write of it costs the judge)",
        200,
        || {
            let writes = [FileWrite {
                path: "scripts/build-all.sh".into(),
                change: Change::Whole(large.clone()),
            }];
            let action = Action {
                text: "write_file scripts/build-all.sh",
                writes: &writes,
                folder: &WorkingFolder::Project,
                files: &NoCurrentFiles,
            };
            let _ = black_box(analyze_action(black_box(&action)));
        },
    );
}
