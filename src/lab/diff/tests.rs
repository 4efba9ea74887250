//! Rules matched across two policies by section, pattern and kind, and the
//! union of their examples judged by both.

use std::path::PathBuf;

use crate::policy::{CompiledPolicy, PolicySource};

use super::diff;

fn compile(name: &str, text: &str) -> CompiledPolicy {
    CompiledPolicy::compile(&[PolicySource { path: PathBuf::from(name), text: text.into() }])
        .unwrap_or_else(|e| panic!("{e:#?}"))
}

#[test]
fn rules_added_removed_and_changed_and_the_examples_whose_decision_changes() {
    let old = compile(
        "old.toml",
        r#"[defaults]
maxAutonomousSteps = 50
deny = [{ match = "rm -r /", examples = ["rm -rf /"] }, "git push -f"]
requiresApproval = [{ match = "git push", examples = ["git push origin main"] }, "sudo"]

[[risk]]
match = ["npm publish"]
score = 75
reason = "publishes"
"#,
    );
    let new = compile(
        "new.toml",
        r#"[defaults]
maxAutonomousSteps = 20
deny = [{ match = "rm -r /", examples = ["rm -rf /"] }, { match = "git push", examples = ["git push --tags"] }]
requiresApproval = ["sudo"]

[[risk]]
match = ["npm publish"]
score = 90
reason = "publishes"

[agents."ci-*"]
deny = ["curl"]
"#,
    );
    let found = diff(&old, &new);
    let settings: Vec<(String, Option<String>, Option<String>)> =
        found.settings.iter().map(|s| (s.setting.clone(), s.old.clone(), s.new.clone())).collect();
    assert_eq!(
        settings,
        [
            ("agents.\"ci-*\"".into(), None, Some("present".into())),
            ("defaults.maxAutonomousSteps".into(), Some("50".into()), Some("20".into()))
        ]
    );
    let added: Vec<(&str, &str, Option<&str>)> =
        found.added.iter().map(|r| (r.action, r.pattern.as_str(), r.agents.as_deref())).collect();
    assert_eq!(added, [("deny", "curl", Some("ci-*"))]);
    let removed: Vec<(&str, &str)> =
        found.removed.iter().map(|r| (r.action, r.pattern.as_str())).collect();
    assert_eq!(removed, [("deny", "git push -f")]);
    let changed: Vec<(&str, &str, Vec<String>)> = found
        .changed
        .iter()
        .map(|c| (c.old.pattern.as_str(), c.new.action, c.what.clone()))
        .collect();
    assert_eq!(
        changed,
        [
            ("git push", "deny", vec!["requiresApproval -> deny".to_owned()]),
            ("npm publish", "risk", vec!["score 75 -> 90".to_owned()])
        ]
    );
    assert_eq!(found.examples_judged, 3, "rm -rf / once, and each policy's git push example");
    let examples: Vec<(&str, &str, &str, bool)> = found
        .examples
        .iter()
        .map(|e| {
            (
                e.action.as_str(),
                e.old.verdict.strictness.name(),
                e.new.verdict.strictness.name(),
                e.loosens,
            )
        })
        .collect();
    assert_eq!(
        examples,
        [
            ("git push origin main", "approve", "stop", false),
            ("git push --tags", "approve", "stop", false)
        ]
    );
    assert!(
        diff(&new, &old).examples.iter().all(|e| e.loosens),
        "the other way round, the same examples loosen"
    );
}
