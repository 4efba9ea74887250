//! Humans in the loop, end to end through the real binaries: the dongle
//! spawns the real verifier, whose `command` channel runs a script that
//! plays the human. The script records each request it is shown (as a
//! human reads a dialog) and answers approvals; the test types codes back
//! with the challenge ids the directives carried.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use super::support::{RawStdio, ask, execute, scratch_dir, step, tool_call};

/// How the scripted human answers approval requests.
#[derive(Clone, Copy)]
pub enum Answer {
    Approve,
    Deny,
    /// Keeps the request open this many seconds, then approves.
    ApproveAfter(u32),
    /// Keeps the request open until the test calls [`Setup::let_answer`],
    /// then approves: what happens meanwhile happens before the answer,
    /// however slow the machine.
    ApproveWhenLet,
}

/// A dongle whose verifier reaches a scripted human.
pub struct Setup {
    /// Holds the config, the script, what the human saw and the state.
    pub dir: PathBuf,
    pub config: PathBuf,
    pub seen: PathBuf,
}

pub fn verifier_program() -> PathBuf {
    let path = super::support::binary().with_file_name("safety-dongle-verifier");
    assert!(
        path.is_file(),
        "{} is missing: build the workspace first (cargo build --workspace)",
        path.display()
    );
    path
}

impl Setup {
    pub fn new(answer: Answer, ttl_secs: u64) -> Self {
        Self::with_channels(answer, ttl_secs, "[\"command\"]")
    }

    pub fn with_channels(answer: Answer, ttl_secs: u64, channels: &str) -> Self {
        let dir = scratch_dir();
        let seen = dir.join("seen");
        std::fs::create_dir_all(&seen).unwrap();
        let reply = match answer {
            Answer::Approve => "echo approve".to_owned(),
            Answer::Deny => "echo deny".to_owned(),
            Answer::ApproveAfter(secs) => format!("sleep {secs}; echo approve"),
            // Bounded (about a minute), so a test that fails first leaves
            // no script waiting forever.
            Answer::ApproveWhenLet => format!(
                "i=0; while [ ! -e \"{}\" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; echo approve",
                dir.join("answer-now").display()
            ),
        };
        let script = dir.join("human.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nf=$(mktemp \"{}/request.XXXXXX\")\ncat > \"$f\"\n{reply}\n",
                seen.display()
            ),
        )
        .unwrap();
        let config = dir.join("config.toml");
        std::fs::write(
            &config,
            format!(
                "data_dir = \"{}\"\n[verifier]\nprogram = \"{}\"\nchannels = {channels}\ncommand = [\"/bin/sh\", \"{}\"]\nchallenge_ttl_secs = {ttl_secs}\napproval_timeout_secs = 10\n",
                dir.join("state").display(),
                verifier_program().display(),
                script.display()
            ),
        )
        .unwrap();
        Self { dir, config, seen }
    }

    /// The same dongle with its state in the PostgreSQL database at `url`
    /// (its data folder stays its own).
    pub fn sharing(self, url: &str) -> Self {
        self.setting(&format!("state = \"{url}\""))
    }

    /// The dongle's own policy files, written into its folder.
    pub fn with_policies(self, files: &[(&str, &str)]) -> Self {
        let paths: Vec<String> = files
            .iter()
            .map(|(name, text)| {
                let path = self.dir.join(name);
                std::fs::write(&path, text).unwrap();
                format!("{:?}", path.display().to_string())
            })
            .collect();
        self.setting(&format!("policies = [{}]", paths.join(", ")))
    }

    /// Adds a top-level setting to the config file.
    pub fn setting(self, line: &str) -> Self {
        let config = std::fs::read_to_string(&self.config).unwrap();
        std::fs::write(&self.config, format!("{line}\n{config}")).unwrap();
        self
    }

    pub async fn start(&self) -> RawStdio {
        self.start_with_env(&[]).await
    }

    pub async fn start_with_env(&self, env: &[(&str, &str)]) -> RawStdio {
        let config = self.config.to_str().unwrap().to_owned();
        let mut raw = RawStdio::start_with(&["serve", "--config", &config], env);
        raw.handshake().await;
        raw
    }

    /// Lets an [`Answer::ApproveWhenLet`] human answer.
    pub fn let_answer(&self) {
        std::fs::write(self.dir.join("answer-now"), "").unwrap();
    }

    /// The request the human was shown for `id` (a challenge or approval).
    pub fn shown(&self, id: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            for entry in std::fs::read_dir(&self.seen).unwrap().flatten() {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                if let Ok(request) = serde_json::from_str::<Value>(&text)
                    && (request["challenge_id"] == id || request["approval_id"] == id)
                {
                    return request;
                }
            }
            assert!(Instant::now() < deadline, "the human was never shown {id}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The code the human read for a challenge.
    pub fn code_for(&self, challenge_id: &str) -> String {
        self.shown(challenge_id)["code"]
            .as_str()
            .expect("a code request carries the code")
            .to_owned()
    }
}

pub fn verify(id: i64, challenge: &str, code: &str) -> Value {
    tool_call(
        id,
        "mcp_aql_create",
        "verify_challenge",
        json!({"challenge_id": challenge, "code": code}),
    )
}

pub fn confirm(id: i64, approval: &str) -> Value {
    tool_call(id, "mcp_aql_execute", "confirm_operation", json!({"approval_id": approval}))
}

/// The id in a directive's last notification of `kind` under `key`.
pub fn notified_id(directive: &Value, kind: &str, key: &str) -> String {
    directive["notifications"]
        .as_array()
        .and_then(|all| all.iter().rev().find(|n| n["type"] == kind))
        .and_then(|n| n["metadata"][key].as_str())
        .unwrap_or_else(|| panic!("no {kind} notification with {key} in {directive}"))
        .to_owned()
}

fn is_uuid_v4(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok_and(|u| u.get_version_num() == 4)
}

#[tokio::test]
async fn danger_zone_from_trigger_to_unblock_with_the_generated_id() {
    let human = Setup::new(Answer::Approve, 300);
    let mut raw = human.start().await;
    assert_eq!(ask(&mut raw, execute(1, "coder")).await["success"], true);
    let stop =
        ask(&mut raw, step(2, "coder", "executing shell command: sudo rm -rf /")).await["data"]
            .clone();
    assert_eq!(stop["stopped"], true, "{stop}");
    let challenge = notified_id(&stop, "danger_zone", "verificationId");
    assert!(is_uuid_v4(&challenge));
    let request = human.shown(&challenge);
    assert_eq!(
        (request["type"].as_str(), request["tier"].as_str(), request["agent"].as_str()),
        (Some("verification_code"), Some("danger_zone"), Some("coder"))
    );
    let code = request["code"].as_str().unwrap().to_owned();
    let shape: Vec<usize> = code.split('-').map(str::len).collect();
    assert_eq!(shape, vec![5, 5, 5, 5, 5, 1], "26 characters in groups of five: {code}");

    assert_eq!(ask(&mut raw, execute(3, "coder")).await["error"]["code"], "PERMISSION_DENIED");
    // The human types it lower-case with spaces: still the same code.
    let typed = code.to_lowercase().replace('-', " ");
    let verified = ask(&mut raw, verify(4, &challenge, &typed)).await;
    assert_eq!(verified["data"]["verified"], true, "{verified}");
    assert_eq!(
        ask(&mut raw, execute(5, "coder")).await["error"]["code"],
        "CONFLICT_ALREADY_EXISTS",
        "unblocked: only the old execution is in the way"
    );
    let next = ask(&mut raw, step(6, "coder", "cargo build")).await["data"].clone();
    assert_eq!(next["continue"], true, "{next}");
    let again = ask(&mut raw, verify(7, &challenge, &code)).await;
    assert_eq!(again["error"]["code"], "TOKEN_ALREADY_USED", "a code works once");
}

#[tokio::test]
async fn verify_tier_pauses_until_the_code_is_typed_back() {
    let human = Setup::new(Answer::Approve, 300);
    let mut raw = human.start().await;
    ask(&mut raw, execute(1, "publisher")).await;
    let pause =
        ask(&mut raw, step(2, "publisher", "npm publish --access public")).await["data"].clone();
    assert_eq!(
        (pause["continue"].as_bool(), pause["nextStepRisk"].as_str()),
        (Some(false), Some("verify"))
    );
    assert!(pause.get("stopped").is_none());
    let challenge = notified_id(&pause, "autonomy_pause", "verificationId");
    let waiting = ask(&mut raw, step(3, "publisher", "cargo build")).await["data"].clone();
    assert_eq!(waiting["continue"], false, "paused until verified: {waiting}");
    let code = human.code_for(&challenge);
    assert_eq!(ask(&mut raw, verify(4, &challenge, &code)).await["data"]["verified"], true);
    assert_eq!(ask(&mut raw, step(5, "publisher", "cargo build")).await["data"]["continue"], true);
}

#[tokio::test]
async fn a_wrong_code_uses_the_challenge_up() {
    let human = Setup::new(Answer::Approve, 300);
    let mut raw = human.start().await;
    ask(&mut raw, execute(1, "a")).await;
    let stop = ask(&mut raw, step(2, "a", "drop table users")).await["data"].clone();
    let challenge = notified_id(&stop, "danger_zone", "verificationId");
    let code = human.code_for(&challenge);
    let wrong = ask(&mut raw, verify(3, &challenge, "00000-00000-00000-00000-00000-0")).await;
    assert_eq!(wrong["error"]["code"], "PERMISSION_DENIED");
    let late = ask(&mut raw, verify(4, &challenge, &code)).await;
    assert_eq!(late["error"]["code"], "TOKEN_ALREADY_USED", "one attempt per challenge");
    assert_eq!(
        ask(&mut raw, execute(5, "a")).await["error"]["code"],
        "PERMISSION_DENIED",
        "still blocked"
    );
}

#[tokio::test]
async fn approvals_are_approved_or_denied_only_by_the_human() {
    for (answer, expected) in [(Answer::Approve, None), (Answer::Deny, Some("PERMISSION_DENIED"))] {
        let human = Setup::new(answer, 300);
        let mut raw = human.start().await;
        ask(&mut raw, execute(1, "pusher")).await;
        let pause = ask(&mut raw, step(2, "pusher", "git push origin main")).await["data"].clone();
        assert_eq!(pause["continue"], false);
        let approval = notified_id(&pause, "autonomy_pause", "approvalId");
        assert!(is_uuid_v4(&approval));
        assert_eq!(human.shown(&approval)["type"], "approval_request");
        // verify_challenge cannot be used to approve.
        let sneaky = ask(&mut raw, verify(3, &approval, "00000-00000-00000-00000-00000-0")).await;
        assert_eq!(
            (sneaky["error"]["code"].as_str(), sneaky["error"]["details"]["token"].as_str()),
            (Some("TOKEN_INVALID"), Some(approval.as_str())),
            "{sneaky}"
        );
        let answered = ask(&mut raw, confirm(4, &approval)).await;
        match expected {
            None => {
                assert_eq!(answered["data"]["approved"], true, "{answered}");
                assert_eq!(
                    ask(&mut raw, step(5, "pusher", "cargo build")).await["data"]["continue"],
                    true,
                    "the pause is lifted"
                );
                // The session may hear it once more (its client may have
                // given up before the answer came), without a second use.
                let twice = ask(&mut raw, confirm(6, &approval)).await;
                assert_eq!(
                    (twice["data"]["approved"].as_bool(), twice["data"]["redelivered"].as_bool()),
                    (Some(true), Some(true)),
                    "{twice}"
                );
                let thrice = ask(&mut raw, confirm(7, &approval)).await;
                assert_eq!(thrice["error"]["code"], "TOKEN_ALREADY_USED", "an approval is used up");
            }
            Some(code) => assert_eq!(answered["error"]["code"], code, "{answered}"),
        }
    }
}

#[tokio::test]
async fn an_unanswered_approval_cannot_be_confirmed_and_the_server_keeps_serving() {
    let human = Setup::new(Answer::ApproveWhenLet, 300);
    let mut raw = human.start().await;
    ask(&mut raw, execute(1, "slow")).await;
    let pause = ask(&mut raw, step(2, "slow", "git push origin main")).await["data"].clone();
    let approval = notified_id(&pause, "autonomy_pause", "approvalId");
    human.shown(&approval);
    // While the human thinks (until let answer), other agents' calls flow.
    assert_eq!(ask(&mut raw, execute(3, "other")).await["success"], true);
    assert_eq!(ask(&mut raw, step(4, "other", "cargo build")).await["data"]["continue"], true);
    human.let_answer();
    // confirm_operation waits for the answer, then succeeds.
    let answered = ask(&mut raw, confirm(5, &approval)).await;
    assert_eq!(answered["data"]["approved"], true, "{answered}");
}

const TTL_SECS: u64 = 4;

#[tokio::test]
async fn challenges_expire_and_a_blocked_agent_gets_a_fresh_one() {
    // Long enough for a code to be shown and typed back on a slow machine
    // (a verifier started, a script run), short enough to wait out.
    let human = Setup::new(Answer::Approve, TTL_SECS);
    let mut raw = human.start().await;
    ask(&mut raw, execute(1, "late")).await;
    let stop = ask(&mut raw, step(2, "late", "mkfs.ext4 /dev/sda1")).await["data"].clone();
    let first = notified_id(&stop, "danger_zone", "verificationId");
    let first_code = human.code_for(&first);
    tokio::time::sleep(Duration::from_millis(TTL_SECS * 1_000 + 300)).await;
    let expired = ask(&mut raw, verify(3, &first, &first_code)).await;
    assert_eq!(expired["error"]["code"], "TOKEN_EXPIRED", "{expired}");
    let details = &expired["error"]["details"];
    let at = |field: &str| humantime::parse_rfc3339(details[field].as_str().unwrap()).unwrap();
    assert_eq!(details["token"], first.as_str(), "{expired}");
    assert!(at("expired_at") < at("current_time"), "it expired before it was presented: {expired}");
    // The next call by the blocked agent issues a new challenge and code.
    let refused = ask(&mut raw, execute(4, "late")).await;
    let second = refused["error"]["details"]["verificationId"].as_str().unwrap().to_owned();
    assert_ne!(second, first);
    let second_code = human.code_for(&second);
    assert_ne!(second_code, first_code);
    assert_eq!(ask(&mut raw, verify(5, &second, &second_code)).await["data"]["verified"], true);
    // At most three challenges per agent per five minutes: the first block,
    // its re-issue and a second block use them up, so the second block's
    // expired challenge is not replaced within the window.
    let stop = ask(&mut raw, step(6, "late", "mkfs.ext4 /dev/sda1")).await["data"].clone();
    let mut ids = vec![notified_id(&stop, "danger_zone", "verificationId")];
    for round in 0..3 {
        tokio::time::sleep(Duration::from_millis(TTL_SECS * 1_000 + 100)).await;
        let refused = ask(&mut raw, execute(10 + round, "late")).await;
        assert_eq!(refused["error"]["code"], "PERMISSION_DENIED", "still blocked");
        ids.push(refused["error"]["details"]["verificationId"].as_str().unwrap().to_owned());
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "no fourth challenge within five minutes: {ids:?}");
}

#[tokio::test]
async fn failed_verifications_lock_the_agent_out_across_a_restart() {
    let human = Setup::new(Answer::Approve, 300);
    let mut raw = human.start().await;
    ask(&mut raw, execute(1, "guesser")).await;
    let pause = ask(&mut raw, step(2, "guesser", "npm publish")).await["data"].clone();
    let challenge = notified_id(&pause, "autonomy_pause", "verificationId");
    let mut codes = Vec::new();
    for attempt in 0..10 {
        let answer =
            ask(&mut raw, verify(10 + attempt, &challenge, "00000-00000-00000-00000-00000-0"))
                .await;
        codes.push(answer["error"]["code"].as_str().unwrap_or("").to_owned());
    }
    assert_eq!(codes[0], "PERMISSION_DENIED");
    assert!(codes[1..].iter().all(|c| c == "TOKEN_ALREADY_USED"), "{codes:?}");
    let locked = ask(&mut raw, verify(30, &challenge, "00000-00000-00000-00000-00000-0")).await;
    assert_eq!(locked["error"]["code"], "RATE_LIMIT_EXCEEDED", "{locked}");
    raw.child.kill().await.unwrap();

    // The agent comes back in a new process and session, as its own.
    let mut raw = human.start().await;
    assert_eq!(ask(&mut raw, execute(31, "guesser")).await["success"], true);
    let still = ask(&mut raw, verify(32, &challenge, "00000-00000-00000-00000-00000-0")).await;
    assert_eq!(
        still["error"]["code"], "RATE_LIMIT_EXCEEDED",
        "the lockout survives a restart: {still}"
    );
    let details = &still["error"]["details"];
    let retry = details["retry_after_seconds"].as_i64().unwrap();
    assert!(retry > 0 && retry <= 3600, "{retry}");
    assert_eq!(
        (&details["limit"], &details["remaining"], &details["window"]),
        (&json!(10), &json!(0), &json!("minute")),
        "ten failures a minute: {still}"
    );
    // Another agent is not locked out by this one.
    ask(&mut raw, execute(33, "bystander")).await;
    let other = ask(&mut raw, step(34, "bystander", "npm publish")).await["data"].clone();
    let other_challenge = notified_id(&other, "autonomy_pause", "verificationId");
    let ok = ask(&mut raw, verify(35, &other_challenge, &human.code_for(&other_challenge))).await;
    assert_eq!(ok["data"]["verified"], true, "{ok}");
    let audit = super::support::dongle_command(&[
        "audit",
        "--config",
        human.config.to_str().unwrap(),
        "--agent",
        "guesser",
    ])
    .output()
    .await
    .unwrap();
    let audit = String::from_utf8_lossy(&audit.stdout);
    assert!(
        audit.contains("lockout") && audit.contains("agent:guesser locked out until"),
        "the lockout is audited:\n{audit}"
    );
}

/// A challenge's id is public (broadcast, readable with
/// get_execution_state): another session's wrong codes must neither spend
/// it nor lock its agent out.
#[tokio::test]
async fn another_session_can_neither_burn_a_challenge_nor_lock_its_agent_out() {
    let human = Setup::new(Answer::Approve, 300);
    let mut agent = human.start().await;
    ask(&mut agent, execute(1, "victim")).await;
    let stop = ask(&mut agent, step(2, "victim", "cat ~/.aws/credentials")).await["data"].clone();
    let challenge = notified_id(&stop, "danger_zone", "verificationId");

    let mut other = human.start().await;
    let mut codes = Vec::new();
    for attempt in 0..12 {
        let answer =
            ask(&mut other, verify(10 + attempt, &challenge, "00000-00000-00000-00000-00000-0"))
                .await;
        codes.push(answer["error"]["code"].as_str().unwrap_or("").to_owned());
    }
    assert!(
        codes[..10].iter().all(|c| c == "PERMISSION_DENIED"),
        "the challenge stays open: {codes:?}"
    );
    assert!(
        codes[10..].iter().all(|c| c == "RATE_LIMIT_EXCEEDED"),
        "the other session locks itself out: {codes:?}"
    );
    let locked = ask(&mut other, verify(30, &challenge, &human.code_for(&challenge))).await;
    assert_eq!(locked["error"]["details"]["scope"], "session", "{locked}");

    // The agent's own attempt is neither locked out nor facing a spent
    // challenge, and the right code lifts its block.
    let lifted = ask(&mut agent, verify(40, &challenge, &human.code_for(&challenge))).await;
    assert_eq!(lifted["data"]["verified"], true, "{lifted}");
    let next = ask(&mut agent, step(41, "victim", "cargo build")).await;
    assert_eq!(next["data"]["continue"], true, "unblocked: {next}");
}

/// One session cannot flood a person with dialogs by reporting under ever
/// new agent names.
#[tokio::test]
async fn requests_for_a_human_are_bounded_per_session_across_agent_names() {
    let human = Setup::new(Answer::Approve, 300);
    let mut raw = human.start().await;
    let mut unshown = Vec::new();
    for index in 0..12 {
        let agent = format!("name-{index}");
        ask(&mut raw, execute(100 + index * 2, &agent)).await;
        let pause =
            ask(&mut raw, step(101 + index * 2, &agent, "npm publish")).await["data"].clone();
        assert_eq!(pause["continue"], false, "still paused: {pause}");
        if pause["reason"].as_str().unwrap_or("").contains("already asked a human 10 times") {
            unshown.push(index);
        }
    }
    assert_eq!(unshown, [10, 11], "the 11th and 12th requests open no dialog");
    // The ten verifiers show their requests in their own time.
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_dir(&human.seen).unwrap().count() < 10 {
        assert!(
            Instant::now() < deadline,
            "the human was shown {} requests",
            std::fs::read_dir(&human.seen).unwrap().count()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        std::fs::read_dir(&human.seen).unwrap().count(),
        10,
        "the human was shown ten requests"
    );
    // Another session is not held back by this one.
    let mut fresh = human.start().await;
    ask(&mut fresh, execute(1, "elsewhere")).await;
    let pause = ask(&mut fresh, step(2, "elsewhere", "npm publish")).await["data"].clone();
    human.code_for(&notified_id(&pause, "autonomy_pause", "verificationId"));
}

#[tokio::test]
async fn without_a_display_the_dialog_fails_fast_and_the_next_channel_is_tried() {
    let human = Setup::with_channels(Answer::Approve, 300, "[\"dialog\", \"command\"]");
    let mut raw = human.start_with_env(&[("DISPLAY", ""), ("WAYLAND_DISPLAY", "")]).await;
    ask(&mut raw, execute(1, "headless")).await;
    // A dialog hanging for want of a display would hold the step until
    // `ask` gives up; failing at once, the command channel shows it.
    let stop = ask(&mut raw, step(2, "headless", "rm -rf /")).await["data"].clone();
    let challenge = notified_id(&stop, "danger_zone", "verificationId");
    assert!(human.code_for(&challenge).len() == 31, "shown through the command channel");

    let only_dialog = Setup::with_channels(Answer::Approve, 300, "[\"dialog\"]");
    let mut raw = only_dialog.start_with_env(&[("DISPLAY", ""), ("WAYLAND_DISPLAY", "")]).await;
    ask(&mut raw, execute(1, "headless")).await;
    let stop = ask(&mut raw, step(2, "headless", "rm -rf /")).await["data"].clone();
    let reason = stop["reason"].as_str().unwrap();
    assert!(reason.contains("No channel could show") && reason.contains("no display"), "{reason}");
    assert!(reason.contains("safety-dongle unblock headless"), "the way out is named: {reason}");
    assert_eq!(stop["stopped"], true, "the dongle stays closed");
}

pub fn state_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join("state"))
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn an_approved_step_limit_grants_a_fresh_budget() {
    let human = Setup::new(Answer::Approve, 300);
    let mut raw = human.start().await;
    let start = tool_call(
        1,
        "mcp_aql_execute",
        "execute_agent",
        json!({"element_name": "runner", "maxAutonomousSteps": 2}),
    );
    assert_eq!(ask(&mut raw, start).await["data"]["maxAutonomousSteps"], 2);
    for id in 2..4 {
        assert_eq!(
            ask(&mut raw, step(id, "runner", "cargo build")).await["data"]["continue"],
            true
        );
    }
    let limit = ask(&mut raw, step(4, "runner", "cargo build")).await["data"].clone();
    assert_eq!(
        (limit["continue"].as_bool(), limit["reason"].as_str()),
        (Some(false), Some("Step limit exceeded")),
        "{limit}"
    );
    let approval = notified_id(&limit, "autonomy_pause", "approvalId");
    // A new execution does not escape the pause.
    ask(
        &mut raw,
        tool_call(5, "mcp_aql_execute", "abort_execution", json!({"element_name": "runner"})),
    )
    .await;
    ask(&mut raw, execute(6, "runner")).await;
    assert_eq!(ask(&mut raw, step(7, "runner", "cargo build")).await["data"]["continue"], false);
    assert_eq!(ask(&mut raw, confirm(8, &approval)).await["data"]["approved"], true);
    let after = ask(&mut raw, step(9, "runner", "cargo build")).await["data"].clone();
    assert_eq!(after["continue"], true, "{after}");
    // Hearing the Approve again grants no second budget.
    let heard = ask(&mut raw, confirm(10, &approval)).await["data"].clone();
    assert_eq!(
        (heard["approved"].as_bool(), heard["redelivered"].as_bool()),
        (Some(true), Some(true)),
        "{heard}"
    );
    let next = ask(&mut raw, step(11, "runner", "cargo build")).await["data"].clone();
    assert_eq!(
        next["stepsRemaining"].as_u64(),
        after["stepsRemaining"].as_u64().map(|left| left - 1),
        "{next}"
    );
}

/// The environment a program wrote with `env` (`NAME=value` lines), once
/// the file is whole (within 10 s).
fn written_env(file: &Path) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && text.ends_with("END=1\n")
        {
            return text.lines().map(str::to_owned).collect();
        }
        assert!(Instant::now() < deadline, "{} was never written", file.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Issue 31: the dongle's environment may hold the state's password and
/// other credentials; neither the verifier nor the `command` channel's
/// program inherits them, and both still get what reaching a human needs.
#[tokio::test]
async fn the_verifier_and_its_channel_programs_get_a_minimal_environment() {
    let setup = Setup::new(Answer::Approve, 300);
    // The verifier, seen from inside: a wrapper that writes its
    // environment down, then becomes the real verifier.
    let wrapper = setup.dir.join("verifier.sh");
    let verifier_env = setup.dir.join("verifier.env");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n{{ env; echo END=1; }} > \"{}\"\nexec \"{}\" \"$@\"\n",
            verifier_env.display(),
            verifier_program().display()
        ),
    )
    .unwrap();
    let channel_env = setup.dir.join("channel.env");
    let human = setup.dir.join("human.sh");
    let script = std::fs::read_to_string(&human).unwrap();
    std::fs::write(
        &human,
        script.replacen(
            "\n",
            &format!("\n{{ env; echo END=1; }} > \"{}\"\n", channel_env.display()),
            1,
        ),
    )
    .unwrap();
    let config = std::fs::read_to_string(&setup.config).unwrap();
    std::fs::write(
        &setup.config,
        config.replace(
            &format!("program = \"{}\"", verifier_program().display()),
            &format!("program = \"{}\"", wrapper.display()),
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o700)).unwrap();
    }

    let secrets = [
        ("SAFETY_DONGLE_STATE_PASSWORD", "hunter2-state"),
        ("PGPASSWORD", "hunter2-pg"),
        ("AWS_SECRET_ACCESS_KEY", "hunter2-aws"),
        ("SOME_TEAM_TOKEN", "hunter2-token"),
    ];
    let needed = [
        ("DISPLAY", ":93"),
        ("XDG_RUNTIME_DIR", "/run/user/4242"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/4242/bus"),
        ("LANG", "C.UTF-8"),
        ("LC_MESSAGES", "C"),
    ];
    let env: Vec<(&str, &str)> = secrets.iter().chain(&needed).copied().collect();
    let mut raw = setup.start_with_env(&env).await;
    assert_eq!(ask(&mut raw, execute(1, "pusher")).await["success"], true);
    let paused = ask(&mut raw, step(2, "pusher", "git push origin main")).await["data"].clone();
    assert_eq!(paused["continue"], false, "{paused}");

    for (who, file) in
        [("the verifier", &verifier_env), ("the command channel's program", &channel_env)]
    {
        let seen = written_env(file);
        for (name, value) in secrets {
            assert!(
                !seen
                    .iter()
                    .any(|line| line.starts_with(&format!("{name}=")) || line.contains(value)),
                "{who} inherited {name}: {seen:?}"
            );
        }
        for (name, value) in
            needed.iter().chain(&[("HOME", std::env::var("HOME").unwrap_or_default().as_str())])
        {
            assert!(seen.contains(&format!("{name}={value}")), "{who} lacks {name}: {seen:?}");
        }
        assert!(seen.iter().any(|line| line.starts_with("PATH=")), "{who} lacks PATH: {seen:?}");
    }
    raw.assert_alive();
}
