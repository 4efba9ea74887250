//! Stage 3: deny > requiresApproval > autoApprove. A deny match stops the
//! agent; a requiresApproval match pauses it; an autoApprove cover of every
//! segment lets it continue without scoring, unless the agent itself rated
//! the action above the advisory tier. A hint too long to analyse is
//! refused here.

use crate::{policy::text::MAX_HINT_BYTES, safety::directive::SafetyTier};

use super::{Decided, PauseKind, Stage, StageInput, StageReport, Verdict, factor};

pub fn run(input: &StageInput<'_>) -> StageReport {
    let Some(matches) = &input.matches else {
        let text = format!("hint of {} bytes is longer than the {MAX_HINT_BYTES} that can be evaluated", input.hint_bytes);
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
    let describe = |indices: &[usize]| -> Vec<String> {
        indices.iter().map(|&i| factor(Stage::Patterns, policy.rule(i).describe())).collect()
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
    // The agent's own risk assessment is never waved through: above the
    // advisory tier it is scored at stage 4 like any other action.
    let agent_flags_risk = input.facts.agent_risk.is_some_and(|score| SafetyTier::from_score(score) > SafetyTier::Advisory);
    if let Some(covering) = matches.auto_approve.as_ref().filter(|_| !agent_flags_risk) {
        let mut rules = covering.clone();
        rules.dedup();
        return StageReport {
            stage: Stage::Patterns,
            summary: "every segment is auto-approved".into(),
            decided: Some(Decided { verdict: Verdict::Continue, reason: None, rule: rules.first().copied(), factors: describe(&rules) }),
        };
    }
    StageReport { stage: Stage::Patterns, summary: "no deny, requiresApproval or full autoApprove match".into(), decided: None }
}

fn decided(summary: String, verdict: Verdict, reason: String, rule: usize, factors: Vec<String>) -> StageReport {
    StageReport {
        stage: Stage::Patterns,
        summary,
        decided: Some(Decided { verdict, reason: Some(reason), rule: Some(rule), factors }),
    }
}
