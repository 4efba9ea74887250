//! `safety-dongle demo`: without a human it still shows every outcome and
//! stays closed; in a terminal (tmux plays the person) the approval prompt
//! and the codes shown on the terminal carry it through to the end.

use std::{
    process::Command,
    time::{Duration, Instant},
};

use super::support::dongle_command;

#[tokio::test]
async fn without_a_human_the_demo_shows_every_outcome_and_stays_closed() {
    let output = dongle_command(&["demo"]).env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").stdin(std::process::Stdio::null()).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    for expected in [
        "continue: true, risk tier: advisory",
        "continue: false, risk tier: confirm",
        "continue: false, risk tier: verify",
        "continue: false, stopped: true, risk tier: danger_zone",
        "No channel could show the request to a human",
        "\"blocked\":true",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
}

fn tmux(args: &[&str]) -> String {
    let output = Command::new("tmux").args(args).output().expect("tmux is installed (.ci/run installs it)");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn screen(session: &str) -> String {
    tmux(&["capture-pane", "-t", session, "-p", "-J", "-S", "-300"])
}

fn wait_for(session: &str, what: impl Fn(&str) -> bool, describe: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = screen(session);
        if what(&text) {
            return text;
        }
        assert!(Instant::now() < deadline, "waited for {describe}; the screen shows:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The distinct codes on screen, in order (a typed code echoes, so the
/// same code can appear twice).
fn codes_on(text: &str) -> Vec<String> {
    let mut codes: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        if word.len() == 31 && word.split('-').map(str::len).eq([5, 5, 5, 5, 5, 1]) && !codes.iter().any(|c| c == word) {
            codes.push(word.to_owned());
        }
    }
    codes
}

#[test]
fn in_a_terminal_the_person_approves_and_types_the_codes_shown() {
    let session = format!("demo-{}", std::process::id());
    let binary = super::support::binary();
    let data = super::support::scratch_dir();
    let command = format!("env -u DISPLAY -u WAYLAND_DISPLAY XDG_DATA_HOME={} {} demo; sleep 60", data.display(), binary.display());
    tmux(&["new-session", "-d", "-s", &session, "-x", "220", "-y", "80", &command]);
    let cleanup = scopeguard(&session);

    wait_for(&session, |t| t.contains("Approve? type 'approve'"), "the approval prompt");
    tmux(&["send-keys", "-t", &session, "approve", "Enter"]);
    wait_for(&session, |t| t.contains("\"approved\":true"), "the approval to reach confirm_operation");

    let first = wait_for(&session, |t| codes_on(t).len() == 1 && t.contains("Type the code"), "the first code");
    tmux(&["send-keys", "-t", &session, &codes_on(&first)[0], "Enter"]);
    wait_for(&session, |t| t.contains("\"kind\":\"verify\",\"verified\":true"), "the verify-tier code to verify");

    let second = wait_for(&session, |t| codes_on(t).len() == 2, "the danger-zone code");
    tmux(&["send-keys", "-t", &session, &codes_on(&second)[1], "Enter"]);
    let done = wait_for(&session, |t| t.contains("Done."), "the end of the demo");
    assert!(done.contains("\"kind\":\"danger_zone\",\"verified\":true"), "{done}");
    assert!(done.contains("\"blocked\":false"), "the block was lifted:\n{done}");
    drop(cleanup);
}

/// Kills the tmux session when the test ends, pass or fail.
fn scopeguard(session: &str) -> impl Drop + '_ {
    struct Kill<'a>(&'a str);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = Command::new("tmux").args(["kill-session", "-t", self.0]).output();
        }
    }
    Kill(session)
}
