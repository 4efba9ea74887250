//! Examples and counterexamples checked against the whole policy, and the
//! shipped policies' own examples.

use std::path::{Path, PathBuf};

use crate::policy::{CompiledPolicy, PolicySource};

use super::{check, name_matching};

fn compile(text: &str) -> CompiledPolicy {
    CompiledPolicy::compile(&[PolicySource { path: PathBuf::from("lab.toml"), text: text.into() }])
        .unwrap_or_else(|e| panic!("{e:#?}"))
}

fn failures(text: &str) -> Vec<(usize, usize, String)> {
    check(&compile(text)).into_iter().map(|d| (d.line, d.col, d.message)).collect()
}

#[test]
fn examples_decided_by_their_rule_pass_and_others_fail_at_their_location_naming_the_decider() {
    let text = r#"[defaults]
deny = [{ match = "rm -r /", examples = ["rm -rf /", "sudo rm -fr /"], counterexamples = ["rm -rf ./build"] }]
requiresApproval = [{ match = "sudo", examples = ["sudo apt update", "sudo rm -rf /"] }]
"#;
    let found = failures(text);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (line, col, message) = &found[0];
    assert_eq!((*line, *col), (3, 70), "located at the failing example");
    assert!(
        message.contains("'sudo rm -rf /'") && message.contains("paused for approval"),
        "{message}"
    );
    assert!(
        message.contains("stopped")
            && message.contains("deny pattern 'rm -r /' (policy lab.toml:2)"),
        "names the rule that decided: {message}"
    );
}

#[test]
fn a_counterexample_the_rule_matches_fails_with_what_it_matched() {
    let found = failures(
        "[defaults]\ndeny = [{ match = \"git push -f\", counterexamples = [\"git push --force origin main\", \"git push origin main\"] }]\n",
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, 2);
    assert!(
        found[0].2.contains("must not match deny pattern 'git push -f'")
            && found[0].2.contains("git push --force origin main"),
        "{}",
        found[0].2
    );
}

#[test]
fn auto_approve_and_risk_examples_must_be_decided_by_their_own_stage() {
    let text = r#"[defaults]
autoApprove = [{ match = "ls", examples = ["ls -la", "ls && rm -rf x"], counterexamples = ["ls; curl x"] }]

[[risk]]
match = ["npm publish"]
keywords = ["prod"]
score = 75
reason = "publishes"
examples = ["npm publish", "deploy to prod", "npm test"]
"#;
    let found = failures(text);
    let lines: Vec<(usize, &str)> = found.iter().map(|(l, _, m)| (*l, m.as_str())).collect();
    assert_eq!(lines.len(), 2, "{found:#?}");
    assert!(
        lines[0].0 == 2 && lines[0].1.contains("'ls && rm -rf x' must be auto-approved"),
        "{lines:?}"
    );
    assert!(
        lines[1].0 == 9
            && lines[1].1.contains("'npm test' must be scored 75")
            && lines[1].1.contains("continues at stage 5"),
        "{lines:?}"
    );
}

#[test]
fn section_rules_are_judged_for_an_agent_the_section_applies_to() {
    let text = r#"[defaults]
requiresApproval = ["git push"]

[agents."ci-*"]
deny = [{ match = "git push", examples = ["git push origin main"] }]

[agents."bot-[0-9]"]
deny = [{ match = "npm publish", examples = ["npm publish"], counterexamples = ["npm pack"] }]
"#;
    assert_eq!(failures(text), vec![]);
    assert_eq!(name_matching("ci-*"), "ci-");
    assert_eq!(name_matching("{deploy,release}-?"), "deploy-x");
    assert_eq!(name_matching("bot-[0-9]"), "bot-0");
    let unnameable = "[agents.\"[!a]\"]\ndeny = [{ match = \"x\", examples = [\"x\"] }]\n";
    let found = failures(unnameable);
    assert!(found.len() == 1 && found[0].2.contains("no agent name"), "{found:#?}");
}

fn shipped(names: &[&str]) -> CompiledPolicy {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let sources: Vec<PolicySource> = names
        .iter()
        .map(|name| PolicySource {
            path: PathBuf::from(name),
            text: std::fs::read_to_string(root.join(name)).unwrap(),
        })
        .collect();
    CompiledPolicy::compile(&sources).unwrap_or_else(|e| panic!("{e:#?}"))
}

/// Every rule of every shipped policy carries at least one example, and
/// every example holds, as the policies are meant to be used: default
/// alone, default then strict, permissive alone.
#[test]
fn every_rule_of_the_shipped_policies_carries_examples_that_hold() {
    for names in [&["default.toml"][..], &["default.toml", "strict.toml"], &["permissive.toml"]] {
        let policy = shipped(names);
        let with_examples: Vec<_> =
            policy.examples().iter().filter(|set| !set.examples.is_empty()).collect();
        let bare: Vec<String> = policy
            .rule_ids()
            .filter(|&(id, _)| !with_examples.iter().any(|set| set.covers(id)))
            .map(|(_, rule)| rule.describe())
            .collect();
        assert!(bare.is_empty(), "{names:?}: rules without examples: {bare:#?}");
        let failed: Vec<String> = check(&policy).iter().map(ToString::to_string).collect();
        assert!(failed.is_empty(), "{names:?}: {failed:#?}");
    }
}

/// A file merged later may decide an earlier file's examples more strictly
/// (that is what merging `strict.toml` is for); its own examples are
/// judged with everything merged before it.
#[test]
fn each_files_examples_are_judged_with_the_files_merged_up_to_it() {
    let base = "[defaults]\nrequiresApproval = [{ match = \"git push\", examples = [\"git push origin main\"] }]\n";
    let stricter = "[defaults]\ndeny = [{ match = \"git push\", examples = [\"git push --tags\"] }]\nrequiresApproval = [{ match = \"git commit\", examples = [\"git commit -m x\", \"git push -u origin x\"] }]\n";
    let sources = [("base.toml", base), ("stricter.toml", stricter)]
        .map(|(name, text)| PolicySource { path: PathBuf::from(name), text: text.into() });
    let failures: Vec<String> = check(&CompiledPolicy::compile(&sources).unwrap())
        .into_iter()
        .map(|d| format!("{}:{}", d.file.display(), d.line))
        .collect();
    assert_eq!(
        failures,
        ["stricter.toml:3"],
        "only the later file's example that its own deny decides fails"
    );
}
