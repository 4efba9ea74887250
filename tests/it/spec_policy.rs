//! Patterns written the spec's way. The example policy of MCP-AQL 8.7.2
//! (`deny: ["drop_*", "delete_all*", "rm -rf*"]`, ...), read from
//! `../shared/spec` at test time, decides through `safety-dongle eval` as
//! its text says; `check` says how its patterns that read two ways were
//! read, refuses rules no action can match, and passes a file of rules a
//! user writes in the same style (`tests/policies/spec-style.toml`) whose
//! examples it judges with the real evaluator.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::support::dongle_command;

/// The spec's example policy (the block after "Pattern examples:" in the
/// version draft), as a TOML policy file in `dir`.
fn spec_example_policy(dir: &Path) -> PathBuf {
    let draft = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/spec/docs/versions/v1.0.0-draft.md");
    let text = std::fs::read_to_string(&draft).unwrap_or_else(|e| {
        panic!("read {}: {e} (../shared must sit beside the checkout)", draft.display())
    });
    let example = text.split_once("Pattern examples:").expect("the draft gives pattern examples").1;
    let block = example.split("```").nth(1).expect("in a code block");
    let mut toml = String::from("[defaults]\n");
    for line in block.lines() {
        // `  deny: ["drop_*", ...],`: a JSON array of strings is a TOML one.
        if let Some((key, list)) = line.trim().trim_end_matches(',').split_once(": [") {
            toml.push_str(&format!("{key} = [{list}\n"));
        }
    }
    assert!(
        toml.contains("deny = [")
            && toml.contains("requiresApproval = [")
            && toml.contains("autoApprove = ["),
        "{toml}"
    );
    let path = dir.join("spec-example.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

async fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = dongle_command(args).current_dir(dir).output().await.expect("run the binary");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Each row: an action, the verdict the spec's example policy gives it,
/// and the pattern that decides (empty: none does).
#[tokio::test]
async fn the_spec_example_policy_decides_as_its_text_says() {
    let dir = tempfile::tempdir().unwrap();
    let policy = spec_example_policy(dir.path());
    let rows: [(&str, &str, &str); 24] = [
        ("rm -rf /", "stop", "rm -rf*"),
        ("rm -rf ~/projects", "stop", "rm -rf*"),
        ("rm -fr /", "stop", "rm -rf*"),
        ("rm -r -f node_modules", "stop", "rm -rf*"),
        ("rm --recursive --force build", "stop", "rm -rf*"),
        ("sudo rm -Rf /srv/data", "stop", "rm -rf*"),
        (r#"postgres__drop_table {"table": "users"}"#, "stop", "drop_*"),
        ("psql -c 'DROP TABLE users'", "stop", "drop_*"),
        (r#"delete_all_records {"collection": "orders"}"#, "stop", "delete_all*"),
        ("terraform apply -force", "pause", "*force*"),
        ("docker rm -f web", "pause", "*force*"),
        ("git push --force-with-lease origin feature", "pause", "*force*"),
        ("git push origin main", "pause", "git push*"),
        (r#"deploy_service {"env": "staging"}"#, "pause", "deploy_*"),
        (r#"github__delete_file {"path": "README.md"}"#, "pause", "delete_*"),
        ("mysql -e 'delete from sessions where id = 7'", "pause", "delete_*"),
        (r#"read_file {"path": "src/main.rs"}"#, "continue", "read_*"),
        (r#"filesystem__list_directory {"path": "src"}"#, "continue", "list_*"),
        ("git stash push", "continue", ""),
        ("rm -r build", "continue", ""),
        ("kubectl apply -f deploy.yaml", "continue", ""),
        ("tar -xf release.tar", "continue", ""),
        ("echo rm -rf /", "continue", ""),
        ("git commit -m 'no force needed'", "continue", ""),
    ];
    for (hint, verdict, pattern) in rows {
        let (code, stdout, stderr) =
            run(dir.path(), &["eval", "--json", "--policy", policy.to_str().unwrap(), hint]).await;
        assert_eq!(code, Some(0), "{hint}: {stderr}");
        let explanation: Value = serde_json::from_str(&stdout).expect("eval --json prints JSON");
        let decision = &explanation["decision"];
        assert_eq!(decision["verdict"], verdict, "{hint}: {decision:#}");
        let decided_by = decision["rule"]["pattern"].as_str().unwrap_or("");
        assert_eq!(decided_by, pattern, "{hint}: {decision:#}");
    }
}

#[tokio::test]
async fn check_passes_the_spec_example_and_says_how_it_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let policy = spec_example_policy(dir.path());
    let (code, stdout, stderr) = run(dir.path(), &["check", policy.to_str().unwrap()]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("spec-example.toml (") && stdout.contains("): ok"), "{stdout}");
    let path = policy.display();
    for (line, read) in [
        (2, "pattern 'rm -rf*': '-rf*' is read as the flags -r -f followed by anything"),
        (3, "pattern '*force*': '*force*' is read as text anywhere in a command"),
    ] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(&format!("note: {path}:{line}:")) && l.contains(read)),
            "no note on line {line}:\n{stderr}"
        );
    }
}

#[tokio::test]
async fn check_refuses_rules_that_can_never_match_at_their_location() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"[defaults]
deny = ["rm -rf \"/\"", "echo * > ~/.bashrc", "path:./secrets/*"]
requiresApproval = ["kubectl --context=prod delete", "rm -rf $HOME/*"]

[[risk]]
keywords = ["prod.db"]
score = 40
reason = "the production database"
"#;
    let policy = dir.path().join("never.toml");
    std::fs::write(&policy, text).unwrap();
    let (code, _, stderr) = run(dir.path(), &["check", policy.to_str().unwrap()]).await;
    assert_eq!(code, Some(1), "{stderr}");
    let path = policy.display();
    for (at, says) in [
        ("2:9", "write `/`"),
        ("2:25", "write:PATH"),
        ("2:47", "write `path:secrets/*`"),
        ("3:21", "write `--context`"),
        ("3:54", "write `~/*`"),
        ("6:13", "'.' is never in a keyword"),
    ] {
        assert!(
            stderr.lines().any(
                |l| l.starts_with(&format!("{path}:{at}: invalid pattern")) && l.contains(says)
            ),
            "nothing at {at} saying {says}:\n{stderr}"
        );
    }
}

/// Rules a user writes in the spec's style, with the actions each must
/// and must not stop, judged by `check` through the real evaluator.
#[tokio::test]
async fn user_rules_in_the_spec_style_decide_their_examples() {
    let dir = tempfile::tempdir().unwrap();
    let rules = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/policies/spec-style.toml");
    let (code, stdout, stderr) = run(dir.path(), &["check", rules.to_str().unwrap()]).await;
    assert_eq!(code, Some(0), "{stderr}");
    let examples =
        stdout.lines().find(|l| l.contains("spec-style.toml (")).expect("the file was checked");
    assert!(examples.contains("11 rules, 51 examples checked"), "{examples}");
}
