//! `safety-dongle unblock`, the operator's way out at a terminal, through
//! the real binaries: a pseudo-terminal that any agent can open (`script`)
//! gets nowhere by typing the agent's name when a channel can show a code;
//! a person (tmux) who types back the code the verifier showed elsewhere
//! lifts the block; the name fallback remains only without such a channel.

use std::path::Path;

use serde_json::Value;

use super::{
    humans::{Answer, Setup},
    support::dongle_command,
    terminal::Terminal,
};

/// Hard-blocks `agent` the way Claude Code's hook would.
async fn block(setup: &Setup, agent: &str) {
    use tokio::io::AsyncWriteExt;
    let mut child = dongle_command(&[
        "hook",
        "claude-code",
        "--config",
        setup.config.to_str().unwrap(),
        "--agent",
        agent,
    ])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(br#"{"session_id":"p","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}"#)
        .await
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("\"deny\""));
    assert!(is_blocked(setup, agent).await, "the hook blocked {agent}");
}

async fn cli(setup: &Setup, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--config", setup.config.to_str().unwrap()]);
    let output = dongle_command(&all).output().await.unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

async fn is_blocked(setup: &Setup, agent: &str) -> bool {
    cli(setup, &["status"])
        .await
        .lines()
        .any(|line| line.trim_start().starts_with(&format!("{agent}  since")))
}

/// The requests the human was shown for unblocking `agent`.
fn unblock_requests(seen: &Path, agent: &str) -> Vec<Value> {
    std::fs::read_dir(seen)
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            serde_json::from_str::<Value>(&std::fs::read_to_string(entry.path()).ok()?).ok()
        })
        .filter(|request| request["action"] == format!("safety-dongle unblock {agent}"))
        .collect()
}

/// `echo NAME | script -qec 'safety-dongle unblock NAME' /dev/null`: what
/// an agent with a shell can do; returns the screen output.
fn unblock_in_a_pseudo_terminal(setup: &Setup, agent: &str) -> String {
    let command = format!(
        "{} unblock --config {} {agent}",
        super::support::binary().display(),
        setup.config.display()
    );
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("echo {agent} | script -qec '{command}' /dev/null"))
        .output()
        .expect("script (util-linux) runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn a_name_typed_into_a_pseudo_terminal_no_longer_lifts_a_block() {
    let setup = Setup::new(Answer::Deny, 300);
    block(&setup, "coder").await;
    let screen = unblock_in_a_pseudo_terminal(&setup, "coder");
    assert!(screen.contains("A code was shown on the command channel"), "{screen}");
    assert!(screen.contains("not the code that was shown"), "{screen}");
    assert!(is_blocked(&setup, "coder").await, "the name lifted the block:\n{screen}");
    let shown = unblock_requests(&setup.seen, "coder");
    assert_eq!(shown.len(), 1, "a fresh code went to the human out of band");
    assert!(
        !screen.contains(shown[0]["code"].as_str().unwrap()),
        "the code never reaches the terminal that asks for it"
    );
    assert!(
        cli(&setup, &["audit", "--agent", "coder"]).await.contains("refused"),
        "the attempt is audited"
    );
}

#[tokio::test]
async fn the_code_shown_out_of_band_lifts_the_block_and_a_wrong_one_does_not() {
    let setup = Setup::new(Answer::Deny, 300);
    block(&setup, "coder").await;
    let command = format!(
        "{} unblock --config {} coder; sleep 60",
        super::support::binary().display(),
        setup.config.display()
    );

    let wrong = Terminal::run(&command);
    wrong.wait_for(|t| t.contains("Type it here"), "the code prompt");
    let first = unblock_requests(&setup.seen, "coder");
    assert_eq!(first.len(), 1);
    wrong.type_line("AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-A");
    wrong.wait_for(|t| t.contains("not the code that was shown"), "the refusal");
    assert!(is_blocked(&setup, "coder").await);
    drop(wrong);

    let right = Terminal::run(&command);
    right.wait_for(|t| t.contains("Type it here"), "the code prompt");
    let requests = unblock_requests(&setup.seen, "coder");
    let fresh = requests
        .iter()
        .find(|r| r["code"] != first[0]["code"])
        .expect("every attempt gets a fresh code");
    right.type_line(fresh["code"].as_str().unwrap());
    right.wait_for(|t| t.contains("agent 'coder' unblocked (audited)"), "the unblock");
    assert!(!is_blocked(&setup, "coder").await);
    assert!(
        cli(&setup, &["audit", "--agent", "coder"]).await.contains("operator_code"),
        "audited as a code typed at the terminal"
    );
}

#[tokio::test]
async fn without_an_out_of_band_channel_the_name_fallback_lifts_the_block_and_says_so() {
    let setup = Setup::with_channels(Answer::Deny, 300, "[\"terminal\"]");
    block(&setup, "coder").await;
    let screen = unblock_in_a_pseudo_terminal(&setup, "coder");
    assert!(screen.contains("No channel other than this terminal can show a code"), "{screen}");
    assert!(screen.contains("agent 'coder' unblocked (audited)"), "{screen}");
    assert!(!is_blocked(&setup, "coder").await);
    assert!(
        cli(&setup, &["audit", "--agent", "coder"]).await.contains("operator_no_channel"),
        "audited as the weaker proof"
    );
}
