//! Stage 3: deny > requiresApproval > autoApprove. A deny match stops the
//! agent; a requiresApproval match pauses it, and so does anything the
//! analysis could not resolve (a command named at run time, decoded text
//! run in a shell…: `Fact::needs_a_human`) whatever the rules say; an
//! autoApprove cover of every command lets it continue without scoring,
//! unless the agent itself rated the action above the advisory tier. A hint
//! too long to analyse is refused here.

use crate::{analysis::MAX_HINT_BYTES, policy::RuleId, safety::directive::SafetyTier};

use super::{Decided, PauseKind, Stage, StageInput, StageReport, Verdict, factor};

pub fn run(input: &StageInput<'_>) -> StageReport {
    let Some(matches) = &input.matches else {
        let text = format!(
            "hint of {} bytes is longer than the {MAX_HINT_BYTES} that can be evaluated",
            input.hint_bytes
        );
        return StageReport {
            stage: Stage::Patterns,
            summary: text.clone(),
            decided: Some(Decided {
                verdict: Verdict::Pause(PauseKind::FailClosed),
                reason: Some(format!("Action not evaluated: {text}; describe it in fewer words")),
                rule: None,
                factors: vec![factor(Stage::Patterns, format!("{text}; refusing"))],
            }),
        };
    };
    let policy = input.policy;
    let describe = |rules: &[RuleId]| -> Vec<String> {
        rules.iter().map(|&rule| factor(Stage::Patterns, matches.describe(policy, rule))).collect()
    };
    if let Some(&first) = matches.deny.first() {
        return decided(
            format!("{} deny pattern(s) matched", matches.deny.len()),
            Verdict::Stop,
            format!("Action denied by policy: {}", policy.rule(first).pattern),
            first,
            describe(&matches.deny),
        );
    }
    if let Some(&first) = matches.requires_approval.first() {
        return decided(
            format!("{} requiresApproval pattern(s) matched", matches.requires_approval.len()),
            Verdict::Pause(PauseKind::Approval),
            format!("Action requires human approval: {}", policy.rule(first).pattern),
            first,
            describe(&matches.requires_approval),
        );
    }
    if let Some((fact, detail)) = matches.needs_a_human.first() {
        let factors = matches
            .needs_a_human
            .iter()
            .map(|(f, d)| factor(Stage::Patterns, format!("built-in: {d} (fact:{})", f.name())))
            .collect();
        return StageReport {
            stage: Stage::Patterns,
            summary: format!("{} fact(s) need a human", matches.needs_a_human.len()),
            decided: Some(Decided {
                verdict: Verdict::Pause(PauseKind::Approval),
                reason: Some(format!(
                    "Action requires human approval: what it runs cannot be known in advance ({detail}; fact:{})",
                    fact.name()
                )),
                rule: None,
                factors,
            }),
        };
    }
    // The agent's own risk assessment is never waved through: above the
    // advisory tier it is scored at stage 4 like any other action.
    let agent_flags_risk = input
        .facts
        .agent_risk
        .is_some_and(|score| SafetyTier::from_score(score) > SafetyTier::Advisory);
    if let Some(covering) = matches.auto_approve.as_ref().filter(|_| !agent_flags_risk) {
        let mut rules = covering.clone();
        rules.dedup();
        return StageReport {
            stage: Stage::Patterns,
            summary: "every command is auto-approved".into(),
            decided: Some(Decided {
                verdict: Verdict::Continue,
                reason: None,
                rule: rules.first().copied(),
                factors: describe(&rules),
            }),
        };
    }
    StageReport {
        stage: Stage::Patterns,
        summary: "no deny, requiresApproval or full autoApprove match".into(),
        decided: None,
    }
}

fn decided(
    summary: String,
    verdict: Verdict,
    reason: String,
    rule: RuleId,
    factors: Vec<String>,
) -> StageReport {
    StageReport {
        stage: Stage::Patterns,
        summary,
        decided: Some(Decided { verdict, reason: Some(reason), rule: Some(rule), factors }),
    }
}
