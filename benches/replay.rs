//! Replay of 100,000 audit rows (`lab::replay`, what `safety-dongle
//! replay` runs): a state whose trail holds 100,000 actions recorded under
//! the shipped default policy (its text kept beside the trail, so every row
//! is judged twice: by the default and by the candidate, default + strict).
//!
//! Two trails: every action distinct (each corpus command with a row
//! number appended as a comment, so nothing is judged from a memo: the
//! worst case), and the corpus's 2,841 commands repeated as agents repeat
//! themselves. Each is timed end to end from the open store (reading the
//! rows, compiling the kept policy, judging, counting), best of 3.
//!
//! Run with `cargo bench --bench replay`.

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

use std::time::Instant;

use safety_dongle::{
    lab::replay::{ReplayOptions, replay},
    policy::{CompiledPolicy, PolicySource},
    store::{
        Store,
        audit::{self, AuditDecision, AuditEntry, AuditEvent, AuditStage},
    },
};

const ROWS: usize = 100_000;

fn policy(names: &[&str]) -> CompiledPolicy {
    let sources: Vec<PolicySource> = names
        .iter()
        .map(|name| PolicySource {
            path: (*name).into(),
            text: std::fs::read_to_string(format!(
                "{}/policies/{name}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap_or_else(|e| panic!("{name}: {e}")),
        })
        .collect();
    CompiledPolicy::compile(&sources).unwrap_or_else(|e| panic!("{e:?}"))
}

/// Every command of the corpus, dangerous and ordinary.
fn corpus() -> Vec<String> {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/commands.toml"))
            .unwrap_or_else(|e| panic!("corpus: {e}"));
    let document: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("corpus: {e}"));
    document
        .values()
        .filter_map(toml::Value::as_array)
        .flatten()
        .filter_map(|group| group.get("commands")?.as_array().cloned())
        .flatten()
        .filter_map(|command| command.as_str().map(str::to_owned))
        .collect()
}

/// A state holding `ROWS` step rows, recorded under `recorded`.
fn trail(
    recorded: &CompiledPolicy,
    action: impl Fn(usize) -> String + Sync,
) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    store
        .write(|tx| {
            audit::remember_policy(tx, recorded.hash(), &recorded.stored_sources())?;
            for row in 0..ROWS {
                let hint = action(row);
                let agent = format!("agent-{}", row % 20);
                audit::append(
                    tx,
                    &AuditEntry {
                        hint: Some(&hint),
                        stage: Some(AuditStage::RiskToleranceStage),
                        policy_hash: recorded.hash(),
                        ..AuditEntry::of(&agent, AuditEvent::Step, AuditDecision::Continue)
                    },
                )?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    (dir, store)
}

fn time_replay(name: &str, store: &Store, candidate: &CompiledPolicy) {
    let options = ReplayOptions { since_ms: 0, agent: None, rows_per_transition: 5 };
    let mut best = f64::MAX;
    let mut summary = String::new();
    for _ in 0..3 {
        let started = Instant::now();
        let report = replay(store, candidate, &options).unwrap_or_else(|e| panic!("{e}"));
        best = best.min(started.elapsed().as_secs_f64());
        assert_eq!(report.rows_read, ROWS);
        let changed: usize = report.transitions.iter().map(|t| t.count).sum();
        summary = format!(
            "{} replayed, {} unchanged, {changed} changed in {} transitions",
            report.replayed,
            report.unchanged,
            report.transitions.len()
        );
    }
    println!("replay {name}: {best:.2} s for {ROWS} rows (best of 3; {summary})");
}

fn main() {
    let recorded = policy(&["default.toml"]);
    let candidate = policy(&["default.toml", "strict.toml"]);
    let commands = corpus();
    println!(
        "corpus: {} commands; {} threads",
        commands.len(),
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    let (_dir, distinct) =
        trail(&recorded, |row| format!("{} # {row}", commands[row % commands.len()]));
    time_replay("every action distinct", &distinct, &candidate);
    let (_dir, repeated) = trail(&recorded, |row| commands[row % commands.len()].clone());
    time_replay("corpus repeated", &repeated, &candidate);
}
