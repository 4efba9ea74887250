//! Merging, agent sections and validation of policies.

use super::*;

fn source(name: &str, text: &str) -> PolicySource {
    PolicySource { path: PathBuf::from(name), text: text.into() }
}

fn compile(sources: &[(&str, &str)]) -> CompiledPolicy {
    let sources: Vec<PolicySource> = sources.iter().map(|(n, t)| source(n, t)).collect();
    CompiledPolicy::compile(&sources).unwrap_or_else(|e| panic!("{e:#?}"))
}

fn decide(policy: &CompiledPolicy, agent: &str, hint: &str) -> Matches {
    policy.matches(&crate::analysis::analyze(hint).unwrap(), &policy.settings_for(agent))
}

#[test]
fn the_shipped_policies_compile() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    for name in ["default.toml", "strict.toml", "permissive.toml"] {
        let text = std::fs::read_to_string(root.join(name)).unwrap();
        compile(&[(name, &text)]);
    }
    assert_eq!(compile(&[(EMBEDDED_DEFAULT_NAME, EMBEDDED_DEFAULT)]).default_max_steps(), 50);
}

#[test]
fn later_files_can_only_tighten_defaults_and_add_rules() {
    let base =
        "[defaults]\nmaxAutonomousSteps = 20\nriskTolerance = \"moderate\"\ndeny = [\"a*\"]\n";
    let looser =
        "[defaults]\nmaxAutonomousSteps = 90\nriskTolerance = \"aggressive\"\ndeny = [\"b*\"]\n";
    let policy = compile(&[("base.toml", base), ("looser.toml", looser)]);
    let settings = policy.settings_for("anyone");
    assert_eq!((settings.max_steps, settings.tolerance), (20, RiskTolerance::Moderate));
    assert_eq!(decide(&policy, "x", "b thing").deny.len(), 1, "the later file's rules still add");
    let stricter = "[defaults]\nmaxAutonomousSteps = 5\nriskTolerance = \"conservative\"\n";
    let settings = compile(&[("base.toml", base), ("s.toml", stricter)]).settings_for("anyone");
    assert_eq!((settings.max_steps, settings.tolerance), (5, RiskTolerance::Conservative));
}

#[test]
fn agent_sections_add_rules_and_replace_settings_for_matching_agents() {
    let text = r#"
[defaults]
maxAutonomousSteps = 50
deny = ["rm -*r* /"]
autoApprove = ["ls *", "kubectl get *"]

[agents."deploy-*"]
maxAutonomousSteps = 5
riskTolerance = "conservative"
deny = ["kubectl delete*"]
autoApprove = ["kubectl get *"]
"#;
    let policy = compile(&[("p.toml", text)]);
    let deployer = policy.settings_for("deploy-prod");
    assert_eq!((deployer.max_steps, deployer.tolerance), (5, RiskTolerance::Conservative));
    assert_eq!(policy.settings_for("coder").max_steps, 50);
    assert_eq!(policy.sections_for(&deployer), vec!["deploy-*"]);
    assert!(!decide(&policy, "deploy-prod", "kubectl delete pod x").deny.is_empty());
    assert!(
        decide(&policy, "coder", "kubectl delete pod x").deny.is_empty(),
        "other agents are unaffected"
    );
    assert!(!decide(&policy, "deploy-prod", "rm -rf /").deny.is_empty(), "defaults still apply");
    assert!(
        decide(&policy, "deploy-prod", "ls -la").auto_approve.is_none(),
        "the section's autoApprove replaced the defaults'"
    );
    assert!(decide(&policy, "coder", "ls -la").auto_approve.is_some());
    assert!(decide(&policy, "deploy-prod", "kubectl get pods").auto_approve.is_some());
}

#[test]
fn every_error_is_reported_with_its_line() {
    let text = r#"[defaults]
maxAutonomousSteps = 0
riskTolerance = "reckless"
deny = ["ok*", "bad\\"]

[[risk]]
match = ["x*"]
score = 101
reason = "too high"

[[risk]]
score = 10
reason = ""

[agents."a"]
colour = "red"
"#;
    let errors = CompiledPolicy::compile(&[source("bad.toml", text)]).err().expect("errors");
    let lines: Vec<usize> = errors.iter().map(|e| e.line).collect();
    for line in [2, 3, 4, 8, 11, 13, 16] {
        assert!(lines.contains(&line), "no error on line {line}: {errors:#?}");
    }
    assert!(errors.iter().all(|e| e.file == std::path::Path::new("bad.toml")));
}

#[cfg(unix)]
#[test]
fn a_group_writable_policy_file_is_refused() {
    use std::{io::Write, os::unix::fs::PermissionsExt};
    let mut file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    file.write_all(b"[defaults]\n").unwrap();
    std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let errors =
        CompiledPolicy::load(&[file.path().to_path_buf()], crate::config::CentralPolicy::default())
            .err()
            .expect("refused");
    assert!(errors[0].message.contains("writable by group or others"));
}

#[test]
fn auto_approve_refuses_a_text_pattern_that_names_no_program() {
    let errors = CompiledPolicy::compile(&[source(
        "p.toml",
        "[defaults]\nautoApprove = [\"*read*\", \"read_*\"]\n",
    )])
    .err()
    .expect("refused");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].message.contains("autoApprove takes command patterns only")
            && errors[0].col == 16,
        "{errors:#?}"
    );
}

#[test]
fn a_help_invocation_is_not_the_action_but_what_follows_it_is() {
    let policy = compile(&[(
        "p.toml",
        "[defaults]\ndeny = [\"git push --force *\", \"gh release delete *\"]\n",
    )]);
    for hint in ["git push --force origin main --help", "gh release delete v1 -h", "git help push"]
    {
        assert!(decide(&policy, "x", hint).deny.is_empty(), "{hint}");
    }
    for hint in [
        "gh release view --help && gh release delete v1",
        "git push --force origin main -- --help",
        "sudo git push --force origin main",
    ] {
        assert_eq!(decide(&policy, "x", hint).deny.len(), 1, "{hint}");
    }
}
