//! The policy corpus (`tests/corpus/commands.toml`, written by
//! `tests/corpus/generate.py`) against the shipped default policy: every
//! dangerous row, in each category and disguise, must be caught (paused or
//! stopped), and every ordinary development command, including those that
//! mention dangerous text as data, must continue.
//!
//! The whole corpus runs three ways: in process (which reports every miss
//! with what the analysis saw), through the real binary's
//! `record_execution_step` over stdio, and through `hook claude-code`,
//! where a warm judge must answer every row exactly as the hook does
//! in-process.
//! `cargo test --test integration corpus -- --nocapture` prints the counts.

use std::{collections::BTreeSet, path::PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use safety_dongle::{
    analysis::{NoCurrentFiles, WorkingFolder, analyze},
    policy::{CompiledPolicy, PolicySource},
    safety::evaluator::{Evaluation, StepFacts, Verdict, evaluate_step},
};

use super::{
    hook::{decision, unreachable_humans},
    judge::{Judge, Through, answered_alike},
    support::{HttpServer, call, scratch_dir},
};

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

pub(super) fn repo_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn corpus() -> Corpus {
    let text = std::fs::read_to_string(repo_path("tests/corpus/commands.toml"))
        .expect("read tests/corpus/commands.toml");
    toml::from_str(&text).expect("the corpus is valid TOML")
}

fn dangerous_rows(corpus: &Corpus) -> Vec<(&str, &str)> {
    corpus
        .dangerous
        .iter()
        .flat_map(|d| d.commands.iter().map(move |c| (d.category.as_str(), c.as_str())))
        .collect()
}

fn ordinary_rows(corpus: &Corpus) -> Vec<(&str, &str)> {
    corpus
        .ordinary
        .iter()
        .flat_map(|o| o.commands.iter().map(move |c| (o.kind.as_str(), c.as_str())))
        .collect()
}

/// The default policy as shipped. A checkout with a group-writable file
/// (umask 002) is read as plain text rather than refused.
pub(super) fn default_policy() -> CompiledPolicy {
    let path = repo_path("policies/default.toml");
    let source = PolicySource::read(&path).unwrap_or_else(|_| PolicySource {
        path: "default.toml".into(),
        text: std::fs::read_to_string(&path).unwrap(),
    });
    CompiledPolicy::compile(&[source])
        .unwrap_or_else(|errors| panic!("default policy does not compile: {errors:?}"))
}

fn evaluate(policy: &CompiledPolicy, hint: &str) -> Evaluation {
    evaluate_step(
        policy,
        &StepFacts {
            agent: "agent",
            hint,
            outcome: None,
            step: 1,
            max_steps: 50,
            agent_risk: None,
            folder: &WorkingFolder::Project,
            writes: &[],
            files: &NoCurrentFiles,
        },
    )
}

/// What the analysis saw, for a failure message.
fn explain(hint: &str, evaluation: &Evaluation) -> String {
    let seen = match analyze(hint) {
        Ok(analysis) => {
            let commands: Vec<String> =
                analysis.commands.iter().map(|c| c.argv.join(" ")).collect();
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
    assert!(
        dangerous.len() + ordinary.len() >= MIN_ROWS,
        "{} rows",
        dangerous.len() + ordinary.len()
    );
    assert!(ordinary.len() >= MIN_ORDINARY, "{} ordinary rows", ordinary.len());
    let data = ordinary.iter().filter(|(kind, _)| *kind == "dangerous text as data").count();
    assert!(data >= MIN_DATA_MENTIONS, "{data} rows mention dangerous text as data");
    let categories: BTreeSet<&str> = corpus.dangerous.iter().map(|d| &d.category[..1]).collect();
    for letter in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"] {
        assert!(categories.contains(letter), "category {letter} is missing");
    }
    for category in &corpus.dangerous {
        assert!(
            category.commands.len() >= MIN_PER_CATEGORY,
            "{} has {} rows",
            category.category,
            category.commands.len()
        );
    }
    let mut seen = BTreeSet::new();
    let duplicates: Vec<&str> =
        dangerous.iter().chain(&ordinary).map(|(_, c)| *c).filter(|c| !seen.insert(*c)).collect();
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
    assert!(
        misses.is_empty() && flagged.is_empty(),
        "{} missed:\n{}\n\n{} flagged:\n{}",
        misses.len(),
        misses.join("\n"),
        flagged.len(),
        flagged.join("\n")
    );
}

/// Counts of one run of the corpus through a path.
fn report(
    path: &str,
    dangerous: &[(&str, &str)],
    ordinary: &[(&str, &str)],
    missed: &[String],
    flagged: &[String],
) {
    println!(
        "corpus via {path}: {} of {} dangerous rows caught, {} of {} ordinary rows flagged",
        dangerous.len() - missed.len(),
        dangerous.len(),
        flagged.len(),
        ordinary.len()
    );
    assert!(
        missed.is_empty() && flagged.is_empty(),
        "via {path}: {} missed:\n{}\n\n{} flagged:\n{}",
        missed.len(),
        missed.join("\n"),
        flagged.len(),
        flagged.join("\n")
    );
}

/// Whether `record_execution_step` stopped or paused the agent. Each row
/// gets its own MCP session: a hard block also refuses the session that
/// raised it, whatever agent name comes next.
async fn step_objects(server: &HttpServer, index: usize, hint: &str) -> bool {
    let client = server.client().await;
    let agent = format!("corpus-{index}");
    let (started, _) = call(
        &client,
        "mcp_aql_execute",
        json!({"operation": "execute_agent", "params": {"element_name": agent}}),
    )
    .await;
    assert_eq!(started["success"], true, "{started}");
    let (answer, _) = call(&client, "mcp_aql_create", json!({"operation": "record_execution_step", "params": {"element_name": agent, "nextActionHint": hint}})).await;
    assert_eq!(answer["success"], true, "{hint:?}: {answer}");
    let _ = client.cancel().await;
    answer["data"]["continue"] == false
}

/// Every row, numbered, with whether it is dangerous.
fn numbered_rows(
    dangerous: &[(&str, &str)],
    ordinary: &[(&str, &str)],
) -> Vec<(usize, bool, String, String)> {
    dangerous
        .iter()
        .map(|(c, h)| (true, *c, *h))
        .chain(ordinary.iter().map(|(k, h)| (false, *k, *h)))
        .enumerate()
        .map(|(i, (dangerous, label, hint))| (i, dangerous, label.to_owned(), hint.to_owned()))
        .collect()
}

/// Runs `decide` over every row, four at a time, and checks the counts.
async fn run_rows<F, Fut>(
    path: &str,
    dangerous: &[(&str, &str)],
    ordinary: &[(&str, &str)],
    decide: F,
) where
    F: Fn(usize, String) -> Fut,
    Fut: Future<Output = bool> + Send + 'static,
{
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(4));
    let mut tasks = tokio::task::JoinSet::new();
    for (index, is_dangerous, label, hint) in numbered_rows(dangerous, ordinary) {
        let permit = limit.clone().acquire_owned().await.unwrap();
        let decided = decide(index, hint.clone());
        tasks.spawn(async move {
            let objects = decided.await;
            drop(permit);
            (is_dangerous, objects, format!("[{label}] {hint:?}"))
        });
    }
    let (mut missed, mut flagged) = (Vec::new(), Vec::new());
    while let Some(result) = tasks.join_next().await {
        let (is_dangerous, objects, row) = result.unwrap();
        match (is_dangerous, objects) {
            (true, false) => missed.push(row),
            (false, true) => flagged.push(row),
            _ => {}
        }
    }
    report(path, dangerous, ordinary, &missed, &flagged);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_row_decides_the_same_through_record_execution_step() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let corpus = corpus();
    let (dangerous, ordinary) = (dangerous_rows(&corpus), ordinary_rows(&corpus));
    let server = std::sync::Arc::new(HttpServer::start(&["--config", &config]).await);
    run_rows("record_execution_step", &dangerous, &ordinary, |index, hint| {
        let server = server.clone();
        async move { step_objects(&server, index, &hint).await }
    })
    .await;
}

/// The home and project folder the hook runs with: a developer's.
const HOME: &str = "/home/dev";
const PROJECT: &str = "/home/dev/project";

/// The PreToolUse payload Claude Code would send for a row: the hook-shaped
/// rows (`read_file`, `write_file`, `search_files`, `list_files`,
/// `web_search`, a URL, `server__tool {json}`) as the tools they stand for,
/// everything else as a Bash command.
fn payload(index: usize, row: &str) -> Value {
    let session = format!("corpus-{index}");
    let tool = |name: &str, input: Value| json!({"session_id": session, "cwd": PROJECT, "hook_event_name": "PreToolUse", "tool_name": name, "tool_input": input});
    let (head, rest) = row.split_once(' ').unwrap_or((row, ""));
    match head {
        "read_file" => tool("Read", json!({"file_path": rest})),
        "write_file" => tool("Write", json!({"file_path": rest, "content": "x"})),
        "search_files" => {
            let (pattern, path) = rest.split_once(' ').unwrap_or((rest, "."));
            tool("Grep", json!({"pattern": pattern, "path": path}))
        }
        "list_files" => {
            let (pattern, path) = rest.split_once(' ').unwrap_or((rest, "."));
            tool("Glob", json!({"pattern": pattern, "path": path}))
        }
        "web_search" => tool("WebSearch", json!({"query": rest})),
        _ if row.starts_with("https://") && !row.contains(' ') => {
            tool("WebFetch", json!({"url": row, "prompt": "read"}))
        }
        _ if head.contains("__")
            && let Ok(input @ Value::Object(_)) = serde_json::from_str::<Value>(rest) =>
        {
            tool(&format!("mcp__{head}"), input)
        }
        _ => tool("Bash", json!({"command": row})),
    }
}

/// Whether the hook objected (deny); `{}` leaves the call to Claude Code.
/// A warm judge must answer the row exactly as the hook does in-process.
async fn hook_objects(config: &str, index: usize, row: &str) -> bool {
    let agent = format!("corpus-{index}");
    let answer = answered_alike(
        config,
        &[("HOME", HOME)],
        &agent,
        &payload(index, row),
        Through::alternating(index),
    )
    .await;
    let decided = decision(&answer);
    assert_ne!(decided, "allow", "no human can approve here: {row:?}");
    decided == "deny"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_row_decides_the_same_through_the_claude_code_hook() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let _judge = Judge::start(&config, &[("HOME", HOME)], &dir.join("state")).await;
    let corpus = corpus();
    let (dangerous, ordinary) = (dangerous_rows(&corpus), ordinary_rows(&corpus));
    run_rows("hook claude-code", &dangerous, &ordinary, |index, hint| {
        let config = config.clone();
        async move { hook_objects(&config, index, &hint).await }
    })
    .await;
}
