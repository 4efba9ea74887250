//! Hostile actions through the real binary: bombs and deep nesting that
//! used to abort `serve` (a worker's stack, an allocation of gigabytes)
//! are answered, never with `continue`, and audited while the server goes
//! on; and one agent's expensive action does not hold another agent's
//! decision, because analysis happens before the state is locked.

use std::time::{Duration, Instant};


use super::{
    hook::unreachable_humans,
    support::{RawStdio, ask, envelope_of, execute, scratch_dir, step},
};

/// Actions whose analysis used to crash the process that judged them.
fn bombs() -> Vec<(&'static str, String)> {
    vec![
        ("4,000 nested subshells", format!("{}rm -rf ~{}", "(:;".repeat(2_000), ")".repeat(2_000))),
        ("nested substitutions", format!("echo {}rm -rf ~{}", "$(".repeat(1_300), ")".repeat(1_300))),
        ("a variable doubled 40 times", format!("a=0123456789abcdef; {}echo $a", "a=$a$a; ".repeat(40))),
        ("nested defaults", format!("echo {}x{}", "${x:-".repeat(1_500), "}".repeat(1_500))),
    ]
}

fn audit_rows(config: &str, agent: &str) -> String {
    let output = std::process::Command::new(super::support::binary())
        .args(["audit", "--config", config, "--agent", agent, "--limit", "100"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn bombs_and_deep_nesting_in_a_step_are_refused_audited_and_the_server_goes_on() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let mut raw = RawStdio::initialized(&["serve", "--config", &config]).await;
    for (number, (what, hint)) in bombs().into_iter().enumerate() {
        let agent = format!("bomber-{number}");
        let id = i64::try_from(number).unwrap() * 10;
        assert_eq!(ask(&mut raw, execute(id + 1, &agent)).await["success"], true, "{what}");
        let answer = ask(&mut raw, step(id + 2, &agent, &hint)).await;
        assert_eq!(answer["success"], true, "{what}: {answer}");
        assert_eq!(answer["data"]["continue"], false, "{what} continued: {answer}");
        raw.assert_alive();
        let rows = audit_rows(&config, &agent);
        assert!(rows.lines().any(|row| row.contains("step") && !row.contains("continue")), "{what}: no refusal audited in\n{rows}");
    }
}

/// How long another dongle on the same state takes to let an ordinary
/// step through, timed per step.
async fn bystander_step(bystander: &mut RawStdio, id: i64) -> Duration {
    let started = Instant::now();
    let answer = ask(bystander, step(id, "bystander", "ls -la src")).await;
    let took = started.elapsed();
    assert_eq!(answer["data"]["continue"], true, "an ordinary step is let through: {answer}");
    took
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn expensive_hint() -> String {
    // Thousands of calls that never close: the analysis pays for each up
    // to its budget, most of a second on a debug build.
    format!("python3 -c \"{}\"", "os.system('a', ".repeat(540))
}

#[tokio::test]
async fn an_expensive_action_does_not_hold_another_agents_decision() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    // Two dongles on one state, as two clients (or two machines) have.
    let mut expensive = RawStdio::initialized(&["serve", "--config", &config]).await;
    let mut bystander = RawStdio::initialized(&["serve", "--config", &config]).await;
    assert_eq!(ask(&mut bystander, execute(1, "bystander")).await["success"], true);
    let mut alone = Vec::new();
    for id in 2..8 {
        alone.push(bystander_step(&mut bystander, id).await);
    }
    let alone = median(alone);

    let mut beside = Vec::new();
    for round in 0..5 {
        // A fresh agent each round: a paused one is refused before its
        // action is read.
        let agent = format!("expensive-{round}");
        let id = 10 * (round + 1);
        assert_eq!(ask(&mut expensive, execute(id, &agent)).await["success"], true);
        expensive.send_json(&step(id + 1, &agent, &expensive_hint())).await;
        // The expensive step is in the other dongle's hands (its analysis
        // takes far longer than this); the bystander steps meanwhile.
        tokio::time::sleep(Duration::from_millis(50)).await;
        beside.push(bystander_step(&mut bystander, id + 2).await);
        let answer = expensive.read_json().await;
        assert_eq!(answer["id"], id + 1);
        assert_eq!(envelope_of(&answer)["data"]["continue"], false, "the expensive action is not let through: {answer}");
    }
    let beside = median(beside);
    assert!(beside <= alone + Duration::from_millis(50), "another agent's step took {beside:?} (median) beside an expensive action, {alone:?} alone");
}
