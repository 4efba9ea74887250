//! The policy corpus (`tests/corpus/commands.toml`, written by
//! `tests/corpus/generate.py`) against the shipped default policy: every
//! dangerous row, in each category and disguise, must be caught (paused or
//! stopped), and every ordinary development command, including those that
//! mention dangerous text as data, must continue.
//!
//! The whole corpus runs three ways: in process (which reports every miss
//! with what the analysis saw), through the real binary's
//! `record_execution_step` over stdio, and through `hook claude-code`.
//! `cargo test --test integration corpus -- --nocapture` prints the counts.

use std::{collections::BTreeSet, path::PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use safety_dongle::{
    analysis::analyze,
    policy::{CompiledPolicy, PolicySource},
    safety::evaluator::{Evaluation, StepFacts, Verdict, evaluate_step},
};

use super::support::{RawStdio, ask, dongle_command, execute, scratch_dir, step};

const MIN_ROWS: usize = 1_500;
const MIN_ORDINARY: usize = 600;
const MIN_DATA_MENTIONS: usize = 100;
const MIN_PER_CATEGORY: usize = 10;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    dangerous: Vec<Dangerous>,
    ordinary: Vec<Ordinary>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Dangerous {
    category: String,
    commands: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Ordinary {
    kind: String,
    commands: Vec<String>,
}

fn repo_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn corpus() -> Corpus {
    let text = std::fs::read_to_string(repo_path("tests/corpus/commands.toml")).expect("read tests/corpus/commands.toml");
    toml::from_str(&text).expect("the corpus is valid TOML")
}

fn dangerous_rows(corpus: &Corpus) -> Vec<(&str, &str)> {
    corpus.dangerous.iter().flat_map(|d| d.commands.iter().map(move |c| (d.category.as_str(), c.as_str()))).collect()
}

fn ordinary_rows(corpus: &Corpus) -> Vec<(&str, &str)> {
    corpus.ordinary.iter().flat_map(|o| o.commands.iter().map(move |c| (o.kind.as_str(), c.as_str()))).collect()
}

/// The default policy as shipped. A checkout with a group-writable file
/// (umask 002) is read as plain text rather than refused.
fn default_policy() -> CompiledPolicy {
    let path = repo_path("policies/default.toml");
    let source = PolicySource::read(&path).unwrap_or_else(|_| PolicySource { path: "default.toml".into(), text: std::fs::read_to_string(&path).unwrap() });
    CompiledPolicy::compile(&[source]).unwrap_or_else(|errors| panic!("default policy does not compile: {errors:?}"))
}

fn evaluate(policy: &CompiledPolicy, hint: &str) -> Evaluation {
    evaluate_step(policy, &StepFacts { agent: "agent", hint, outcome: None, step: 1, max_steps: 50, agent_risk: None })
}

/// What the analysis saw, for a failure message.
fn explain(hint: &str, evaluation: &Evaluation) -> String {
    let seen = match analyze(hint) {
        Ok(analysis) => {
            let commands: Vec<String> = analysis.commands.iter().map(|c| c.argv.join(" ")).collect();
            let facts: Vec<&str> = analysis.facts.iter().map(|(f, _)| f.name()).collect();
            format!("runs {commands:?}, writes {:?}, facts {facts:?}", analysis.writes)
        }
        Err(_) => "too long".into(),
    };
    format!("{hint:?} -> {:?} {:?}; {seen}", evaluation.verdict, evaluation.reason)
}

fn caught(verdict: Verdict) -> bool {
    verdict != Verdict::Continue
}

#[test]
fn the_corpus_is_large_and_covers_every_category() {
    let corpus = corpus();
    let (dangerous, ordinary) = (dangerous_rows(&corpus), ordinary_rows(&corpus));
    assert!(dangerous.len() + ordinary.len() >= MIN_ROWS, "{} rows", dangerous.len() + ordinary.len());
    assert!(ordinary.len() >= MIN_ORDINARY, "{} ordinary rows", ordinary.len());
    let data = ordinary.iter().filter(|(kind, _)| *kind == "dangerous text as data").count();
    assert!(data >= MIN_DATA_MENTIONS, "{data} rows mention dangerous text as data");
    let categories: BTreeSet<&str> = corpus.dangerous.iter().map(|d| &d.category[..1]).collect();
    for letter in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"] {
        assert!(categories.contains(letter), "category {letter} is missing");
    }
    for category in &corpus.dangerous {
        assert!(category.commands.len() >= MIN_PER_CATEGORY, "{} has {} rows", category.category, category.commands.len());
    }
    let mut seen = BTreeSet::new();
    let duplicates: Vec<&str> = dangerous.iter().chain(&ordinary).map(|(_, c)| *c).filter(|c| !seen.insert(*c)).collect();
    assert!(duplicates.is_empty(), "rows listed twice: {duplicates:?}");
}

#[test]
fn every_dangerous_row_is_caught_and_every_ordinary_row_continues_in_process() {
    let policy = default_policy();
    let corpus = corpus();
    let dangerous = dangerous_rows(&corpus);
    let ordinary = ordinary_rows(&corpus);
    let mut misses = Vec::new();
    let mut stops = 0;
    for (category, hint) in &dangerous {
        let evaluation = evaluate(&policy, hint);
        stops += usize::from(evaluation.verdict == Verdict::Stop);
        if !caught(evaluation.verdict) {
            misses.push(format!("[{category}] {}", explain(hint, &evaluation)));
        }
    }
    let flagged: Vec<String> = ordinary
        .iter()
        .filter_map(|(kind, hint)| {
            let evaluation = evaluate(&policy, hint);
            caught(evaluation.verdict).then(|| format!("[{kind}] {}", explain(hint, &evaluation)))
        })
        .collect();
    println!(
        "corpus: {} of {} dangerous rows caught ({} stopped), {} of {} ordinary rows flagged",
        dangerous.len() - misses.len(),
        dangerous.len(),
        stops,
        flagged.len(),
        ordinary.len()
    );
    assert!(misses.is_empty() && flagged.is_empty(), "{} missed:\n{}\n\n{} flagged:\n{}", misses.len(), misses.join("\n"), flagged.len(), flagged.join("\n"));
}
