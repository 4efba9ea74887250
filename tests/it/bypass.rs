//! The bypass corpus (`tests/corpus/bypass.toml`) against the shipped
//! default policy: every deny pattern must stop disguised forms of its own
//! action (wrappers, paths, quoting, chains, labels, Unicode tricks), and
//! ordinary development commands must go through untouched.
//!
//! Each test checks the whole corpus and reports every failure in one
//! message, so one run shows the complete list of bypasses and false
//! positives. `cargo test --test integration bypass -- --nocapture` prints
//! the counts.

use std::{collections::BTreeSet, fmt::Write as _, path::PathBuf};

use safety_dongle::{
    policy::{CompiledPolicy, PolicySource, RuleAction, text},
    safety::evaluator::{Evaluation, StepFacts, Verdict, evaluate_step},
};
use serde::Deserialize;

const AGENT: &str = "agent";
const MIN_VARIANTS_PER_RULE: usize = 10;
const MIN_ORDINARY_COMMANDS: usize = 100;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    deny: Vec<DenyCase>,
    ordinary: Ordinary,
}

/// One deny pattern of the policy and disguised forms of its action.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DenyCase {
    /// The pattern exactly as written in the policy.
    rule: String,
    caught: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Ordinary {
    commands: Vec<String>,
}

fn repo_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// The default policy as shipped. A checkout with a group-writable file
/// (umask 002) is read as plain text rather than refused.
fn default_policy() -> CompiledPolicy {
    let path = repo_path("policies/default.toml");
    let source = PolicySource::read(&path).unwrap_or_else(|_| PolicySource {
        path: "default.toml".into(),
        text: std::fs::read_to_string(&path).expect("read policies/default.toml"),
    });
    CompiledPolicy::compile(&[source]).unwrap_or_else(|errors| panic!("default policy does not compile: {errors:?}"))
}

fn corpus() -> Corpus {
    let path = repo_path("tests/corpus/bypass.toml");
    let text = std::fs::read_to_string(&path).expect("read tests/corpus/bypass.toml");
    toml::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The deny patterns of the policy, as written, in policy order.
fn deny_patterns(policy: &CompiledPolicy) -> Vec<&str> {
    policy.rules().iter().filter(|rule| rule.action == RuleAction::Deny).map(|rule| rule.pattern.as_str()).collect()
}

/// What the policy made of one hint.
struct Observed {
    evaluation: Evaluation,
    /// Patterns of the matching deny rules.
    deny: Vec<String>,
    /// Every matching rule, described with its kind and line.
    matched: Vec<String>,
}

fn observe(policy: &CompiledPolicy, hint: &str) -> Observed {
    let settings = policy.settings_for(AGENT);
    let facts = StepFacts { agent: AGENT, hint, outcome: None, step: 1, max_steps: settings.max_steps, agent_risk: None };
    let evaluation = evaluate_step(policy, &facts);
    let (deny, matched) = match text::variants(hint) {
        Ok(variants) => {
            let m = policy.matches(&variants, &settings);
            let deny = m.deny.iter().map(|&i| policy.rule(i).pattern.clone()).collect();
            let matched = m
                .deny
                .iter()
                .chain(&m.requires_approval)
                .chain(&m.risk)
                .map(|&i| policy.rule(i).describe())
                .collect();
            (deny, matched)
        }
        Err(too_long) => (Vec::new(), vec![format!("hint too long ({} bytes)", too_long.bytes)]),
    };
    Observed { evaluation, deny, matched }
}

/// One line for a failure report: the hint, the verdict and why.
fn describe(hint: &str, observed: &Observed) -> String {
    let e = &observed.evaluation;
    let mut line = format!("{hint:?} -> {:?} at stage {} (score {})", e.verdict, e.stage.number(), e.score);
    if let Some(reason) = &e.reason {
        let _ = write!(line, ": {reason}");
    }
    if observed.matched.is_empty() {
        line.push_str("; no rule matched");
    } else {
        let _ = write!(line, "; matched: {}", observed.matched.join(", "));
    }
    line
}

fn report(title: &str, failures: &[String]) -> String {
    let mut message = format!("{} {title}:\n", failures.len());
    for failure in failures {
        let _ = writeln!(message, "  - {failure}");
    }
    message
}

#[test]
fn the_corpus_names_every_deny_rule_with_enough_variants() {
    let policy = default_policy();
    let corpus = corpus();
    let in_policy: BTreeSet<&str> = deny_patterns(&policy).into_iter().collect();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for case in &corpus.deny {
        if !in_policy.contains(case.rule.as_str()) {
            problems.push(format!("corpus rule {:?} is not a deny pattern of default.toml", case.rule));
        }
        if !seen.insert(case.rule.as_str()) {
            problems.push(format!("corpus rule {:?} appears more than once", case.rule));
        }
        if case.caught.len() < MIN_VARIANTS_PER_RULE {
            problems.push(format!(
                "corpus rule {:?} has {} variants, fewer than {MIN_VARIANTS_PER_RULE}",
                case.rule,
                case.caught.len()
            ));
        }
        let mut variants = BTreeSet::new();
        for variant in &case.caught {
            if !variants.insert(variant.as_str()) {
                problems.push(format!("corpus rule {:?} lists {variant:?} twice", case.rule));
            }
        }
    }
    for pattern in &in_policy {
        if !seen.contains(pattern) {
            problems.push(format!("deny pattern {pattern:?} of default.toml has no corpus entry"));
        }
    }
    let commands = &corpus.ordinary.commands;
    if commands.len() < MIN_ORDINARY_COMMANDS {
        problems.push(format!("{} ordinary commands, fewer than {MIN_ORDINARY_COMMANDS}", commands.len()));
    }
    let mut unique = BTreeSet::new();
    for command in commands {
        if !unique.insert(command.as_str()) {
            problems.push(format!("ordinary command {command:?} is listed twice"));
        }
    }
    assert!(problems.is_empty(), "{}", report("problems with the corpus", &problems));
}

#[test]
fn every_disguised_variant_is_stopped_by_its_own_rule() {
    let policy = default_policy();
    let corpus = corpus();
    let mut failures = Vec::new();
    let mut total = 0;
    for case in &corpus.deny {
        for hint in &case.caught {
            total += 1;
            let observed = observe(&policy, hint);
            let stopped = observed.evaluation.verdict == Verdict::Stop;
            let by_its_rule = observed.deny.contains(&case.rule);
            if !(stopped && by_its_rule) {
                failures.push(format!("[{}] {}", case.rule, describe(hint, &observed)));
            }
        }
    }
    println!(
        "bypass corpus: {} of {total} disguised variants over {} deny rules caught by their rule",
        total - failures.len(),
        corpus.deny.len()
    );
    assert!(failures.is_empty(), "{}", report(&format!("of {total} disguised variants not stopped by their rule"), &failures));
}

#[test]
fn ordinary_development_commands_continue() {
    let policy = default_policy();
    let corpus = corpus();
    let commands = &corpus.ordinary.commands;
    let failures: Vec<String> = commands
        .iter()
        .filter_map(|hint| {
            let observed = observe(&policy, hint);
            (observed.evaluation.verdict != Verdict::Continue).then(|| describe(hint, &observed))
        })
        .collect();
    println!("bypass corpus: {} of {} ordinary commands continue", commands.len() - failures.len(), commands.len());
    assert!(failures.is_empty(), "{}", report(&format!("of {} ordinary commands do not continue", commands.len()), &failures));
}
