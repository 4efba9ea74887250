//! `safety-dongle demo`: without a human it still shows every outcome and
//! stays closed; in a terminal (tmux plays the person) the approval prompt
//! and the codes shown on the terminal carry it through to the end.

use super::{support::dongle_command, terminal::Terminal};

#[tokio::test]
async fn without_a_human_the_demo_shows_every_outcome_and_stays_closed() {
    let output = dongle_command(&["demo"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
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

/// The distinct codes on screen, in order (a typed code echoes, so the
/// same code can appear twice).
fn codes_on(text: &str) -> Vec<String> {
    let mut codes: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        if word.len() == 31
            && word.split('-').map(str::len).eq([5, 5, 5, 5, 5, 1])
            && !codes.iter().any(|c| c == word)
        {
            codes.push(word.to_owned());
        }
    }
    codes
}

#[test]
fn in_a_terminal_the_person_approves_and_types_the_codes_shown() {
    let binary = super::support::binary();
    let data = super::support::scratch_dir();
    let command = format!(
        "env -u DISPLAY -u WAYLAND_DISPLAY XDG_DATA_HOME={} {} demo; sleep 60",
        data.display(),
        binary.display()
    );
    let terminal = Terminal::run(&command);

    terminal.wait_for(|t| t.contains("Approve? type 'approve'"), "the approval prompt");
    terminal.type_line("approve");
    terminal
        .wait_for(|t| t.contains("\"approved\":true"), "the approval to reach confirm_operation");

    let first = terminal
        .wait_for(|t| codes_on(t).len() == 1 && t.contains("Type the code"), "the first code");
    terminal.type_line(&codes_on(&first)[0]);
    terminal.wait_for(
        |t| t.contains("\"kind\":\"verify\",\"verified\":true"),
        "the verify-tier code to verify",
    );

    let second = terminal.wait_for(|t| codes_on(t).len() == 2, "the danger-zone code");
    terminal.type_line(&codes_on(&second)[1]);
    let done = terminal.wait_for(|t| t.contains("Done."), "the end of the demo");
    assert!(done.contains("\"kind\":\"danger_zone\",\"verified\":true"), "{done}");
    assert!(done.contains("\"blocked\":false"), "the block was lifted:\n{done}");
}
