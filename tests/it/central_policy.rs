//! A central policy (`safety-dongle policy push`) through the real binary:
//! running dongles decide by a new version from their next decision, with
//! no restart; their own policy files can add to it and never loosen it;
//! audit rows and `status` name what decided; a push that fails its checks
//! changes nothing. On one machine's SQLite state and on a team's
//! PostgreSQL database.

use std::process::{Command, Output};

use serde_json::Value;

use super::{
    humans::{Answer, Setup},
    postgres_cluster::Cluster,
    support::{ask, binary, execute, step},
};

/// The team's policy: `curl` talks to the network and needs a code.
const TEAM: &str = "[defaults]\nrequiresApproval = [\"git push*\"]\n\n[[risk]]\nmatch = [\"curl *\"]\nscore = 70\nreason = \"talks to the network\"\n";

/// A machine's own file: it would wave `curl` through, and it denies `wget`.
const LOCAL: &str = "[defaults]\nautoApprove = [\"curl *\"]\ndeny = [\"wget *\"]\n";

fn run(setup: &Setup, args: &[&str]) -> (Output, String) {
    let output =
        Command::new(binary()).args(args).arg("--config").arg(&setup.config).output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output, said)
}

/// Pushes `text` as `team.toml`; returns the version's hash.
fn push(setup: &Setup, text: &str) -> String {
    let file = setup.dir.join("team.toml");
    std::fs::write(&file, text).unwrap();
    let (output, said) = run(setup, &["policy", "push", file.to_str().unwrap()]);
    assert!(output.status.success(), "{said}");
    let hash = said
        .split("(sha256 ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("no hash in {said}"));
    assert_eq!(hash.len(), 64, "{said}");
    hash.to_owned()
}

fn audit_lines(setup: &Setup, agent: &str) -> Vec<String> {
    let (output, said) = run(setup, &["audit", "--agent", agent]);
    assert!(output.status.success(), "{said}");
    said.lines().map(str::to_owned).collect()
}

/// `status` once it says what `shows` looks for (within 10 s).
fn status_once(setup: &Setup, shows: impl Fn(&str) -> bool, what: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (output, said) = run(setup, &["status"]);
        assert!(output.status.success(), "{said}");
        if shows(&said) {
            return said;
        }
        assert!(std::time::Instant::now() < deadline, "{what}: {said}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

fn factors(answer: &Value) -> String {
    answer["factors"].to_string()
}

#[tokio::test]
async fn a_pushed_version_decides_at_once_and_the_local_file_only_adds_to_it() {
    let setup = Setup::new(Answer::Approve, 300).with_policies(&[("local.toml", LOCAL)]);
    let mut raw = setup.start().await;
    assert_eq!(ask(&mut raw, execute(1, "before")).await["success"], true);
    let before =
        ask(&mut raw, step(2, "before", "curl https://example.com/a")).await["data"].clone();
    assert_eq!(
        before["continue"], true,
        "control: the local file alone lets curl through: {before}"
    );

    let pushed = push(&setup, TEAM);
    // No wait: the next decision takes up the new version itself.
    assert_eq!(ask(&mut raw, execute(3, "after")).await["success"], true);
    let held = ask(&mut raw, step(4, "after", "curl https://example.com/b")).await["data"].clone();
    assert_eq!(
        held["continue"], false,
        "the local autoApprove cannot loosen the team's decision: {held}"
    );
    assert!(factors(&held).contains("decided by the central policy"), "{held}");
    assert_eq!(ask(&mut raw, execute(5, "fetcher")).await["success"], true);
    let denied =
        ask(&mut raw, step(6, "fetcher", "wget https://example.com/c")).await["data"].clone();
    assert_eq!(denied["stopped"], true, "the local file still adds its deny: {denied}");

    let said = status_once(
        &setup,
        |said| said.contains("central version 1 (team.toml) + "),
        "the dongle says what it decides by",
    );
    assert!(
        said.contains(&format!("central policy: version 1 (sha256 {})", &pushed[..16])),
        "{said}"
    );
    let layered = audit_lines(&setup, "after")
        .into_iter()
        .find(|line| line.contains("step  pause"))
        .unwrap_or_else(|| panic!("no paused step"));
    let before_row = audit_lines(&setup, "before")
        .into_iter()
        .find(|line| line.contains("step  continue"))
        .unwrap_or_else(|| panic!("no step before"));
    let policy_of = |line: &str| line.split("  policy ").nth(1).unwrap_or_default().to_owned();
    assert_ne!(
        policy_of(&layered),
        policy_of(&before_row),
        "each row names the version that decided it: {layered} / {before_row}"
    );
    let verified = run(&setup, &["audit", "verify"]);
    assert!(verified.0.status.success(), "{}", verified.1);
    raw.assert_alive();
}

#[tokio::test]
async fn a_push_that_fails_its_checks_or_repeats_the_version_changes_nothing() {
    let setup = Setup::new(Answer::Approve, 300).setting("central_policy = \"replace\"");
    let first = push(&setup, TEAM);

    let broken = setup.dir.join("broken.toml");
    std::fs::write(&broken, "[defaults]\ndeny = [\"rm -rf /\"]\nmaxAutonomousSteps = 0\n").unwrap();
    let (refused, said) = run(&setup, &["policy", "push", broken.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(said.contains("broken.toml:3:"), "located: {said}");
    let wrong_example = setup.dir.join("example.toml");
    std::fs::write(
        &wrong_example,
        "[defaults]\ndeny = [{ match = \"rm -rf /\", examples = [\"ls -la\"] }]\n",
    )
    .unwrap();
    let (refused, said) = run(&setup, &["policy", "push", wrong_example.to_str().unwrap()]);
    assert_eq!(
        refused.status.code(),
        Some(1),
        "an example not decided as written is refused: {said}"
    );

    let file = setup.dir.join("team.toml");
    let (again, said) = run(&setup, &["policy", "push", file.to_str().unwrap()]);
    assert!(again.status.success() && said.contains("nothing pushed"), "{said}");
    let (_, said) = run(&setup, &["status"]);
    assert!(
        said.contains(&format!("central policy: version 1 (sha256 {})", &first[..16])),
        "{said}"
    );

    let mut raw = setup.start().await;
    assert_eq!(ask(&mut raw, execute(1, "coder")).await["success"], true);
    let held = ask(&mut raw, step(2, "coder", "curl https://example.com")).await["data"].clone();
    assert_eq!(held["continue"], false, "a dongle started after the push decides by it: {held}");
    let row = audit_lines(&setup, "coder")
        .into_iter()
        .find(|line| line.contains("step  pause"))
        .unwrap_or_else(|| panic!("no paused step"));
    assert!(
        row.ends_with(&format!("policy {}", &first[..16])),
        "with no local files the row names the pushed version: {row}"
    );
}

/// What anyone who can write the state could push to switch the guard
/// off: everything auto-approved, at any risk, for any number of steps.
const ALLOW_ALL: &str = "[defaults]\nautoApprove = [\"*\"]\nriskTolerance = \"aggressive\"\nmaxAutonomousSteps = 100000\n\n[agents.\"*\"]\nautoApprove = [\"*\"]\nriskTolerance = \"aggressive\"\n";

/// Issue 31: a pushed version with no local policy files used to decide
/// alone. The machine's own policy (here the embedded default) stays a
/// floor unless its config file opts in to `central_policy = "replace"`.
#[tokio::test]
async fn a_pushed_version_cannot_loosen_the_machines_own_policy_unless_its_config_says_so() {
    // The block the first raises taints the session: it goes last.
    let held_back = [("npm publish", "continue"), ("rm -rf / --no-preserve-root", "stopped")];
    for (opt_in, loosened) in
        [("", false), ("central_policy = \"floor\"", false), ("central_policy = \"replace\"", true)]
    {
        let setup = Setup::new(Answer::Deny, 300).setting(opt_in);
        push(&setup, ALLOW_ALL);
        let mut raw = setup.start().await;
        for (id, (action, key)) in (1..).step_by(2).zip(held_back) {
            let agent = format!("coder-{id}");
            let started = ask(&mut raw, execute(id, &agent)).await;
            assert_eq!(started["success"], true, "{opt_in:?}: {started}");
            let answer = ask(&mut raw, step(id + 1, &agent, action)).await["data"].clone();
            let held = if key == "stopped" {
                answer["stopped"] == true
            } else {
                answer["continue"] == false
            };
            assert_eq!(held, !loosened, "{opt_in:?}: '{action}' -> {answer}");
            if held && key == "continue" {
                assert!(
                    factors(&answer).contains("decided by this machine's own policy"),
                    "{answer}"
                );
            }
        }
        raw.assert_alive();
        let (output, said) =
            run(&setup, &["eval", "--agent", "coder", "rm -rf / --no-preserve-root"]);
        assert!(output.status.success(), "{said}");
        assert_eq!(
            said.contains("stop"),
            !loosened,
            "eval explains as a dongle decides ({opt_in:?}): {said}"
        );
    }
}

/// Two dongles on one database, started before the push: both decide by
/// the new version, the idle one shows it in `status` within seconds.
#[tokio::test]
async fn every_dongle_on_a_team_database_takes_up_a_push() {
    let cluster = Cluster::start();
    let url = cluster.database();
    let laptop =
        Setup::new(Answer::Approve, 300).sharing(&url).setting("central_policy = \"replace\"");
    let runner =
        Setup::new(Answer::Approve, 300).sharing(&url).with_policies(&[("local.toml", LOCAL)]);
    let mut on_laptop = laptop.start().await;
    let mut on_runner = runner.start().await;
    assert_eq!(ask(&mut on_runner, execute(1, "ci")).await["success"], true);
    assert_eq!(
        ask(&mut on_runner, step(2, "ci", "curl https://example.com/a")).await["data"]["continue"],
        true,
        "control"
    );

    assert_eq!(ask(&mut on_laptop, execute(1, "coder")).await["success"], true);
    let pushed = push(&laptop, TEAM);
    status_once(
        &laptop,
        |said| said.matches("central version 1 (team.toml)").count() == 2,
        "both dongles take up the push without a decision",
    );
    let held =
        ask(&mut on_runner, step(3, "ci", "curl https://example.com/b")).await["data"].clone();
    assert_eq!(held["continue"], false, "{held}");
    let told = ask(&mut on_laptop, step(2, "coder", "cargo build")).await["data"].clone();
    assert!(
        told["notifications"].to_string().contains("The central policy is now version 1"),
        "agents are told: {told}"
    );
    let row = audit_lines(&laptop, "coder")
        .into_iter()
        .find(|line| line.contains("step  continue"))
        .unwrap_or_else(|| panic!("no step"));
    assert!(row.ends_with(&format!("policy {}", &pushed[..16])), "{row}");
    on_laptop.assert_alive();
    on_runner.assert_alive();
}
