//! The verifier binary's command line: `--version` answers, anything else is
//! a usage error, so a mistaken spawn fails closed.

use std::process::Command;

fn verifier(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_safety-dongle-verifier"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run verifier: {e}"))
}

#[test]
fn version_answers() {
    let output = verifier(&["--version"]);
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.trim(), format!("safety-dongle-verifier {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn anything_else_is_a_usage_error() {
    for args in [&[][..], &["--show"], &["--version", "extra"]] {
        let output = verifier(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "nothing on stdout for {args:?}");
    }
}
