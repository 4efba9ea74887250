//! Stage 3: deny > requiresApproval > autoApprove. A deny match stops the
//! agent; a requiresApproval match pauses it, so does a rule needing a human
//! met by what the action may run (words given to a program with no model,
//! a command an unquoted value may turn into another), and so does anything the
//! analysis could not resolve (a command named at run time, decoded text
//! run in a shell…: `Fact::needs_a_human`) whatever the rules say; an
//! autoApprove cover of every command lets it continue without scoring,
//! unless the agent itself rated the action above the advisory tier. A hint
//! too long to analyse is refused here.

use crate::{
    analysis::MAX_HINT_BYTES,
    policy::{RuleAction, RuleId},
    safety::directive::SafetyTier,
};

use super::{Decided, Factor, PauseKind, Stage, StageInput, StageReport, Verdict};

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
                factors: vec![Factor::of(Stage::Patterns, format!("{text}; refusing"))],
            }),
        };
    };
    let policy = input.policy;
    let describe = |rules: &[RuleId]| -> Vec<Factor> {
        rules
            .iter()
            .map(|&rule| Factor::of(Stage::Patterns, matches.describe(policy, rule)))
            .collect()
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
    // What a program with no model may run is a question, never a stop:
    // the rules it meets that would need a human pause the agent.
    let may_run: Vec<RuleId> = matches
        .may_run
        .iter()
        .copied()
        .filter(|&rule| match &policy.rule(rule).action {
            RuleAction::Deny | RuleAction::RequiresApproval => true,
            RuleAction::Risk { score, .. } => SafetyTier::from_score(*score) > SafetyTier::Advisory,
            RuleAction::AutoApprove => false,
        })
        .collect();
    if let Some(&first) = may_run.first() {
        return decided(
            format!("{} rule(s) matched what the action may run", may_run.len()),
            Verdict::Pause(PauseKind::Approval),
            format!(
                "Action requires human approval: what it may run meets {}{}",
                policy.rule(first).pattern,
                matches.subjects.get(&first).map(|on| format!(" on {on}")).unwrap_or_default(),
            ),
            first,
            may_run
                .iter()
                .map(|&rule| {
                    Factor::of(
                        Stage::Patterns,
                        format!("may run: {}", matches.describe(policy, rule)),
                    )
                })
                .collect(),
        );
    }
    if let Some((fact, detail)) = matches.needs_a_human.first() {
        let factors = matches
            .needs_a_human
            .iter()
            .map(|(f, d)| Factor::of(Stage::Patterns, format!("built-in: {d} (fact:{})", f.name())))
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
    factors: Vec<Factor>,
) -> StageReport {
    StageReport {
        stage: Stage::Patterns,
        summary,
        decided: Some(Decided { verdict, reason: Some(reason), rule: Some(rule), factors }),
    }
}
