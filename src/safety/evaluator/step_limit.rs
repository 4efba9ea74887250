//! Stage 1: a step beyond `maxAutonomousSteps` pauses the agent.

use super::{Decided, Factor, PauseKind, Stage, StageInput, StageReport, Verdict};

pub fn run(input: &StageInput<'_>) -> StageReport {
    let (step, max) = (input.facts.step, input.facts.max_steps);
    let summary = format!("step {step} of at most {max}");
    let decided = (step > max).then(|| Decided {
        verdict: Verdict::Pause(PauseKind::StepLimit),
        reason: Some("Step limit exceeded".into()),
        rule: None,
        factors: vec![Factor::of(
            Stage::StepLimit,
            format!("step {step} exceeds maxAutonomousSteps {max}"),
        )],
    });
    StageReport { stage: Stage::StepLimit, summary, decided }
}
