//! Stage 5: the agent's risk tolerance. A score above the threshold
//! (conservative 25, moderate 50, aggressive 75) pauses for approval;
//! otherwise the step may proceed. The tier table of stage 4 already
//! pauses scores above 30, so in practice only a conservative tolerance
//! adds pauses here (scores 26-30).

use super::{Decided, Factor, PauseKind, Stage, StageInput, StageReport, Verdict};

pub fn run(input: &StageInput<'_>) -> StageReport {
    let tolerance = input.settings.tolerance;
    let (score, threshold) = (input.score, tolerance.threshold());
    let mut factors: Vec<Factor> = match &input.matches {
        Some(matches) => matches
            .risk
            .iter()
            .map(|&i| Factor::of(Stage::SafetyTier, input.policy.rule(i).describe()))
            .collect(),
        None => Vec::new(),
    };
    if score > threshold {
        let summary =
            format!("risk score {score} exceeds {} tolerance ({threshold})", tolerance.name());
        factors.push(Factor::of(Stage::RiskTolerance, &summary));
        return StageReport {
            stage: Stage::RiskTolerance,
            summary: summary.clone(),
            decided: Some(Decided {
                verdict: Verdict::Pause(PauseKind::Approval),
                reason: Some(format!(
                    "Risk score {score} exceeds the agent's {} risk tolerance",
                    tolerance.name()
                )),
                rule: None,
                factors,
            }),
        };
    }
    let summary = format!("risk score {score} within {} tolerance ({threshold})", tolerance.name());
    factors.push(Factor::of(Stage::RiskTolerance, &summary));
    StageReport {
        stage: Stage::RiskTolerance,
        summary,
        decided: Some(Decided { verdict: Verdict::Continue, reason: None, rule: None, factors }),
    }
}
