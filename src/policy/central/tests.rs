//! Local policy files on a central policy: they may add strictness and
//! never take it away, whatever they contain.

use std::path::PathBuf;

use super::*;
use crate::{
    lab::{Strictness, judge},
    policy::RiskTolerance,
};

fn source(name: &str, text: &str) -> PolicySource {
    PolicySource { path: PathBuf::from(name), text: text.into() }
}

/// The team's policy: pushes need approval, `rm` is risky enough to
/// pause a conservative agent (not a bolder one), and agents get 5 steps.
const TEAM: &str = "[defaults]\nmaxAutonomousSteps = 5\nriskTolerance = \"conservative\"\nrequiresApproval = [\"git push*\"]\n\n[[risk]]\nmatch = [\"rm *\"]\nscore = 28\nreason = \"deletes files\"\n";

fn central(version: i64) -> Central {
    let sources = vec![source("team.toml", TEAM)];
    let hash = CompiledPolicy::compile(&sources).unwrap().hash().to_owned();
    Central { version, hash, sources }
}

fn on_team(local: &str) -> CompiledPolicy {
    CompiledPolicy::layered(Some(&central(3)), &[source("local.toml", local)]).unwrap_or_else(|e| panic!("{e:#?}"))
}

fn verdict(policy: &CompiledPolicy, agent: &str, action: &str) -> Strictness {
    Strictness::of(judge(policy, agent, action).verdict)
}

#[test]
fn a_central_policy_alone_keeps_the_hash_it_was_pushed_under() {
    let pushed = central(7);
    let policy = CompiledPolicy::layered(Some(&pushed), &[]).unwrap();
    assert_eq!(policy.hash(), pushed.hash);
    assert_eq!(policy.central_version(), Some(7));
    assert!(policy.floor().is_none(), "nothing on it: nothing to hold a floor against");
    assert_eq!(policy.central(), Some(pushed));
    assert!(policy.local_sources().is_empty());
}

#[test]
fn local_files_add_strictness() {
    let policy = on_team("[defaults]\ndeny = [\"curl *\"]\nmaxAutonomousSteps = 3\n");
    assert_eq!(verdict(&policy, "a", "curl https://example.com"), Strictness::Stop);
    assert_eq!(verdict(&CompiledPolicy::layered(Some(&central(3)), &[]).unwrap(), "a", "curl https://example.com"), Strictness::Continue, "control: the team's policy alone lets it through");
    assert_eq!(policy.settings_for("a").max_steps, 3);
}

#[test]
fn nothing_in_a_local_file_loosens_the_central_decision() {
    let loosening = [
        ("[defaults]\nautoApprove = [\"rm *\", \"git push*\"]\n", "rm -rf build"),
        ("[agents.\"a\"]\nautoApprove = [\"rm *\"]\nriskTolerance = \"aggressive\"\n", "rm -rf build"),
        ("[agents.\"*\"]\nriskTolerance = \"aggressive\"\n", "rm -rf build"),
    ];
    for (local, action) in loosening {
        let team_alone = CompiledPolicy::layered(Some(&central(3)), &[]).unwrap();
        let expected = verdict(&team_alone, "a", action);
        assert!(expected > Strictness::Continue, "control: the team's policy holds '{action}' back");
        let merged_alone = CompiledPolicy::compile(&[source("team.toml", TEAM), source("local.toml", local)]).unwrap();
        assert_eq!(verdict(&merged_alone, "a", action), Strictness::Continue, "control: merged plainly, {local:?} lets '{action}' through");
        let layered = on_team(local);
        assert_eq!(verdict(&layered, "a", action), expected, "{local:?} must not loosen '{action}'");
    }
    let evaluation = judge(&on_team("[defaults]\nautoApprove = [\"rm *\"]\n"), "a", "rm -rf build");
    assert!(evaluation.factors.iter().any(|f| f.contains("decided by the central policy")), "the answer says who decided: {:?}", evaluation.factors);
}

#[test]
fn an_agent_section_cannot_raise_the_central_limits() {
    let policy = on_team("[agents.\"a\"]\nmaxAutonomousSteps = 1000\nriskTolerance = \"aggressive\"\n");
    let settings = policy.settings_for("a");
    assert_eq!((settings.max_steps, settings.tolerance), (5, RiskTolerance::Conservative));
}

#[test]
fn layering_is_part_of_the_hash_and_survives_the_audit_trail() {
    let layered = on_team("[defaults]\nautoApprove = [\"rm *\"]\n");
    let merged = CompiledPolicy::compile(&[source("team.toml", TEAM), source("local.toml", "[defaults]\nautoApprove = [\"rm *\"]\n")]).unwrap();
    assert_ne!(layered.hash(), merged.hash(), "the same files decide differently layered");
    let again = CompiledPolicy::from_stored(layered.hash(), &layered.stored_sources()).unwrap();
    assert_eq!(again.hash(), layered.hash());
    assert!(again.floor().is_some());
    assert_eq!(verdict(&again, "a", "rm -rf build"), verdict(&layered, "a", "rm -rf build"));
}

#[test]
fn a_version_whose_files_do_not_hash_as_pushed_is_refused() {
    let mut tampered = central(4);
    tampered.sources[0].text.push_str("\n[agents.\"x\"]\nmaxAutonomousSteps = 9\n");
    let Err(errors) = CompiledPolicy::layered(Some(&tampered), &[]) else { panic!("a tampered version was used") };
    assert!(errors[0].message.contains("not to the"), "{errors:?}");
}

#[test]
fn the_embedded_default_stands_in_only_without_a_central_policy() {
    let alone = CompiledPolicy::layered(None, &[]).unwrap();
    assert_eq!(alone.sources(), [crate::policy::EMBEDDED_DEFAULT_NAME]);
    assert!(alone.local_sources().is_empty());
    let on_team = alone.with_central(&central(2)).unwrap();
    assert_eq!(on_team.sources(), ["team.toml"], "the team's policy replaces the default, not adds to it");
    let with_local = on_team.with_local(&[source("local.toml", "[defaults]\ndeny = [\"curl *\"]\n")]).unwrap();
    assert_eq!(with_local.sources(), ["team.toml", "local.toml"]);
    assert_eq!(with_local.with_central(&central(9)).unwrap().central_version(), Some(9));
    assert_eq!(with_local.with_central(&central(9)).unwrap().local_sources(), [source("local.toml", "[defaults]\ndeny = [\"curl *\"]\n")]);
}
