//! Replay over trails written directly: rows compared with their recorded
//! decision when the deciding policy's text is not kept, rows decided by
//! the loop's state counted apart, and agents told apart by the sections
//! that apply to them.

use std::path::PathBuf;

use crate::{
    policy::{CompiledPolicy, PolicySource},
    store::{
        Store,
        audit::{self, AuditDecision, AuditEntry, AuditEvent, AuditStage},
    },
};

use super::{ReplayOptions, replay};
use crate::lab::Strictness;

fn compile(name: &str, text: &str) -> CompiledPolicy {
    CompiledPolicy::compile(&[PolicySource { path: PathBuf::from(name), text: text.into() }])
        .unwrap_or_else(|e| panic!("{e:#?}"))
}

const OPTIONS: ReplayOptions = ReplayOptions { since_ms: 0, agent: None, rows_per_transition: 10 };

/// `(agent, hint, decision, stage)` rows recorded under `hash`.
fn trail(
    rows: &[(&str, &str, &str, &str)],
    hash: &str,
    kept: Option<&CompiledPolicy>,
) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store
        .write(|tx| {
            if let Some(policy) = kept {
                audit::remember_policy(tx, policy.hash(), &policy.stored_sources())?;
            }
            for (agent, hint, decision, stage) in rows {
                audit::append(
                    tx,
                    &AuditEntry {
                        hint: Some(hint),
                        stage: AuditStage::parse(stage),
                        policy_hash: hash,
                        ..AuditEntry::of(
                            agent,
                            AuditEvent::Step,
                            AuditDecision::parse(decision).unwrap(),
                        )
                    },
                )?;
            }
            Ok(())
        })
        .unwrap();
    (dir, store)
}

#[test]
fn without_the_deciding_policy_rows_are_compared_with_their_recorded_decision() {
    let candidate = compile("new.toml", "[defaults]\nrequiresApproval = [\"git push\"]\n");
    let rows = [
        ("a", "git push origin main", "stop", "stage 3"),
        ("a", "ls", "continue", "stage 5"),
        ("b", "ls", "pause", "stage 1"),
        ("c", "ls", "refused", "block"),
    ];
    let (_dir, store) = trail(&rows, "an unknown policy", None);
    let report = replay(&store, &candidate, &OPTIONS).unwrap();
    assert_eq!((report.rows_read, report.replayed, report.unchanged), (4, 2, 1));
    assert_eq!(
        (report.compared_with.recorded_policy, report.compared_with.recorded_decision),
        (0, 2)
    );
    let counted: Vec<(&str, usize)> =
        report.not_replayed.iter().map(|(why, n)| (*why, *n)).collect();
    assert_eq!(counted, [("decided by the step limit", 1), ("the agent was hard-blocked", 1)]);
    assert_eq!(report.transitions.len(), 1);
    let transition = &report.transitions[0];
    assert_eq!(
        (transition.from, transition.to, transition.loosens),
        (Strictness::Stop, Strictness::Approve, true)
    );
    let row = &transition.rows[0];
    assert!(
        row.before.is_none() && row.recorded.decision == "stop",
        "no policy to explain the old decision with"
    );
    assert_eq!(row.after.decision.rule.as_ref().map(|r| r.pattern.as_str()), Some("git push"));
    assert!(report.loosens);
}

/// A monitoring trail records what the policy decided without enforcing
/// it (`would_stop`, `would_pause`): replayed as those decisions, so a
/// candidate tried during a monitoring rollout is compared with what the
/// old policy said, not with the `continue` the agent was given.
#[test]
fn monitoring_rows_are_compared_as_the_decisions_they_would_have_been() {
    let candidate = compile("new.toml", "[defaults]\nrequiresApproval = [\"git push\"]\n");
    let rows = [
        ("m", "git push origin main", "would_stop", "stage 3"),
        ("m", "git push --tags", "would_pause", "stage 3"),
    ];
    let (_dir, store) = trail(&rows, "an unknown policy", None);
    let report = replay(&store, &candidate, &OPTIONS).unwrap();
    assert_eq!((report.rows_read, report.replayed, report.unchanged), (2, 2, 1));
    let transitions: Vec<_> = report.transitions.iter().map(|t| (t.from, t.to, t.count)).collect();
    assert_eq!(transitions, [(Strictness::Stop, Strictness::Approve, 1)]);
    assert!(report.loosens);
}

#[test]
fn agents_are_judged_with_the_sections_that_apply_to_them() {
    let old = compile("old.toml", "[defaults]\nrequiresApproval = [\"git push\"]\n");
    let new = compile(
        "new.toml",
        "[defaults]\nrequiresApproval = [\"git push\"]\n\n[agents.\"ci-*\"]\ndeny = [\"git push\"]\n",
    );
    let rows = [
        ("coder", "git push", "pause", "stage 3"),
        ("ci-1", "git push", "pause", "stage 3"),
        ("coder", "git push", "pause", "stage 3"),
        ("ci-2", "git push", "pause", "stage 3"),
    ];
    let (_dir, store) = trail(&rows, old.hash(), Some(&old));
    let report = replay(&store, &new, &OPTIONS).unwrap();
    assert_eq!(report.compared_with.recorded_policy, 4, "the kept policy judged every row again");
    assert_eq!(report.unchanged, 2);
    let changed: Vec<(&str, Strictness, Strictness)> = report
        .transitions
        .iter()
        .flat_map(|t| t.rows.iter().map(move |r| (r.agent.as_str(), t.from, t.to)))
        .collect();
    assert_eq!(
        changed,
        [
            ("ci-1", Strictness::Approve, Strictness::Stop),
            ("ci-2", Strictness::Approve, Strictness::Stop)
        ]
    );
    assert!(!report.loosens);
    let only_coder = ReplayOptions { agent: Some("coder".into()), ..OPTIONS };
    assert!(replay(&store, &new, &only_coder).unwrap().transitions.is_empty());
}
