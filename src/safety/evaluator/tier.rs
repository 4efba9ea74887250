//! Stage 4: the risk score's tier. Advisory passes to stage 5; confirm
//! pauses for approval; verify pauses for an out-of-band code; danger zone
//! stops the agent.

use crate::{policy::RuleAction, safety::directive::SafetyTier};

use super::{Decided, Factor, PauseKind, Stage, StageInput, StageReport, Verdict};

pub fn run(input: &StageInput<'_>) -> StageReport {
    let score = input.score;
    let tier = SafetyTier::from_score(score);
    let mut factors: Vec<Factor> = Vec::new();
    let mut top_rule = None;
    if let Some(matches) = &input.matches {
        for &index in &matches.risk {
            let rule = input.policy.rule(index);
            if let RuleAction::Risk { score: rule_score, reason } = &rule.action {
                factors.push(Factor::of(
                    Stage::SafetyTier,
                    format!(
                        "{} scores {rule_score}: {reason}",
                        matches.describe(input.policy, index)
                    ),
                ));
                if *rule_score == score && top_rule.is_none() {
                    top_rule = Some(index);
                }
            }
        }
    }
    if let Some(agent_score) = input.facts.agent_risk
        && agent_score >= score
        && agent_score > 0
    {
        factors
            .push(Factor::of(Stage::SafetyTier, format!("agent-reported riskScore {agent_score}")));
    }
    let summary = format!("risk score {score}: {} tier", tier.name());
    factors.push(Factor::of(Stage::SafetyTier, &summary));
    let (verdict, reason) = match tier {
        SafetyTier::Advisory => {
            return StageReport { stage: Stage::SafetyTier, summary, decided: None };
        }
        SafetyTier::Confirm => (
            Verdict::Pause(PauseKind::Approval),
            format!("Risk score {score} (confirm tier) needs human approval"),
        ),
        SafetyTier::Verify => (
            Verdict::Pause(PauseKind::Verification),
            format!("Risk score {score} (verify tier) needs out-of-band verification"),
        ),
        SafetyTier::DangerZone => {
            (Verdict::Stop, format!("Risk score {score} (danger zone): agent stopped"))
        }
    };
    StageReport {
        stage: Stage::SafetyTier,
        summary,
        decided: Some(Decided { verdict, reason: Some(reason), rule: top_rule, factors }),
    }
}
