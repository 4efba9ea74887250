//! The peers' own test suites (`../shared/peer-suites/*.jsonl`, read
//! there, never copied here) through the real binary's `hook claude-code`
//! with the shipped default policy, from a scratch git project under a
//! scratch home, one hook process per row, as `benches/peer-suites.py`
//! runs them.
//!
//! A deny or ask row is caught when the hook answers anything but
//! silence; an allow row is flagged when it answers at all. Debatable rows
//! are reported, never gated. Each suite's firm rows must do at least as
//! well as the floor `tests/corpus/peer-floors.toml` records (the floors
//! only rise, towards the goal of 97% caught and 3% flagged), and every
//! row `tests/corpus/peer-disagreements.toml` lists, where our policy
//! disagrees with a peer's label on purpose, must still disagree: the
//! list stays true. `cargo test --test integration peers -- --nocapture`
//! prints the table.

use std::{collections::BTreeMap, path::Path, process::Stdio};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{corpus::repo_path, support::scratch_dir};

const SUITES: [&str; 3] = ["dcg", "ccsn", "holguard"];

#[derive(Deserialize)]
struct Row {
    id: String,
    tool: String,
    command: Option<String>,
    input: Option<Value>,
    label: String,
    #[serde(default)]
    debatable: bool,
}

#[derive(Deserialize)]
struct Floors {
    suite: BTreeMap<String, Floor>,
}

#[derive(Deserialize)]
struct Floor {
    caught_percent: f64,
    flagged_percent: f64,
}

#[derive(Deserialize)]
struct Disagreements {
    #[serde(default)]
    row: Vec<Disagreement>,
}

#[derive(Deserialize)]
struct Disagreement {
    id: String,
    reason: String,
}

fn rows(suite: &str) -> Vec<Row> {
    let path = repo_path(&format!("../shared/peer-suites/{suite}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("read {}: {e} (../shared must sit beside the checkout)", path.display())
    });
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("a peer row"))
        .collect()
}

/// Whether the hook answers anything but silence for `row`.
fn objects(config: &Path, home: &Path, project: &Path, row: &Row) -> bool {
    let tool_input = match (&row.command, &row.input) {
        (Some(command), _) => json!({ "command": command }),
        (None, Some(input)) => input.clone(),
        (None, None) => json!({}),
    };
    let payload = json!({ "session_id": format!("peer-{}", row.id), "cwd": project, "hook_event_name": "PreToolUse", "tool_name": row.tool, "tool_input": tool_input });
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_safety-dongle"))
        .args([
            "hook",
            "claude-code",
            "--config",
            config.to_str().unwrap(),
            "--agent",
            &format!("peer-{}", row.id),
        ])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("USER", "dev")
        .current_dir(project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the hook");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(payload.to_string().as_bytes()).expect("send the payload");
    }
    let output = child.wait_with_output().expect("the hook ends");
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    let decision = answer.pointer("/hookSpecificOutput/permissionDecision").and_then(Value::as_str);
    output.status.code() == Some(2) || matches!(decision, Some("deny" | "ask"))
}

#[test]
fn every_peer_suite_does_at_least_as_well_as_its_floor_and_listed_disagreements_stay_true() {
    let scratch = scratch_dir();
    let home = scratch.join("home/dev");
    let project = home.join("project");
    std::fs::create_dir_all(&project).unwrap();
    assert!(
        std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .status()
            .unwrap()
            .success()
    );
    let config = scratch.join("config.toml");
    // No verifier: a pause is answered at once, with deny.
    std::fs::write(
        &config,
        format!(
            "data_dir = \"{}\"\n[verifier]\nprogram = \"/nonexistent/verifier\"\n",
            scratch.join("state").display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let floors: Floors = toml::from_str(
        &std::fs::read_to_string(repo_path("tests/corpus/peer-floors.toml")).unwrap(),
    )
    .expect("the floors are valid TOML");
    let listed: Disagreements = toml::from_str(
        &std::fs::read_to_string(repo_path("tests/corpus/peer-disagreements.toml")).unwrap(),
    )
    .expect("the disagreements are valid TOML");
    assert!(
        listed.row.iter().all(|row| !row.reason.trim().is_empty()),
        "every listed disagreement says why"
    );
    let listed: BTreeMap<&str, &str> =
        listed.row.iter().map(|row| (row.id.as_str(), row.reason.as_str())).collect();
    let mut failures = Vec::new();
    println!(
        "| suite | firm caught | firm flagged | listed | debatable caught | debatable flagged |"
    );
    for suite in SUITES {
        let rows = rows(suite);
        let answers: Vec<bool> = std::thread::scope(|scope| {
            let halves: Vec<_> = rows
                .chunks(rows.len().div_ceil(2))
                .map(|chunk| {
                    scope.spawn(|| {
                        chunk
                            .iter()
                            .map(|row| objects(&config, &home, &project, row))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            halves.into_iter().flat_map(|half| half.join().expect("a worker")).collect()
        });
        let mut counts = [[0usize; 2]; 4];
        let mut listed_here = 0;
        for (row, objected) in rows.iter().zip(answers) {
            let dangerous = row.label != "allow";
            if !row.debatable && listed.contains_key(row.id.as_str()) {
                listed_here += 1;
                if objected == dangerous {
                    failures.push(format!(
                        "{}: listed as a disagreement ({}) but the hook now agrees with its label",
                        row.id,
                        listed[row.id.as_str()]
                    ));
                }
                continue;
            }
            let slot = usize::from(row.debatable) * 2 + usize::from(!dangerous);
            counts[slot][0] += usize::from(objected);
            counts[slot][1] += 1;
        }
        let percent = |[n, d]: [usize; 2]| if d == 0 { 0.0 } else { 100.0 * n as f64 / d as f64 };
        let show = |[n, d]: [usize; 2]| format!("{n}/{d} ({:.1}%)", percent([n, d]));
        println!(
            "| {suite} | {} | {} | {listed_here} | {} | {} |",
            show(counts[0]),
            show(counts[1]),
            show(counts[2]),
            show(counts[3])
        );
        let floor = &floors.suite[suite];
        if percent(counts[0]) < floor.caught_percent {
            failures.push(format!(
                "{suite}: {} of firm dangerous rows caught, below the floor of {}%",
                show(counts[0]),
                floor.caught_percent
            ));
        }
        if percent(counts[1]) > floor.flagged_percent {
            failures.push(format!(
                "{suite}: {} of firm allow rows flagged, above the ceiling of {}%",
                show(counts[1]),
                floor.flagged_percent
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
