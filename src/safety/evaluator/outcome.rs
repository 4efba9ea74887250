//! Stage 2: a reported failure of the previous step pauses the agent, so a
//! failure is not followed by autonomous recovery attempts.

use super::{Decided, Factor, Outcome, PauseKind, Stage, StageInput, StageReport, Verdict};

pub fn run(input: &StageInput<'_>) -> StageReport {
    let (summary, decided) = match input.facts.outcome {
        None => ("no outcome reported; stage skipped".to_owned(), None),
        Some(Outcome::Failure) => (
            "previous step failed".to_owned(),
            Some(Decided {
                verdict: Verdict::Pause(PauseKind::PreviousFailure),
                reason: Some("Previous step failed: report the failure before going on".into()),
                rule: None,
                factors: vec![Factor::of(
                    Stage::PreviousOutcome,
                    "previous step reported outcome 'failure'",
                )],
            }),
        ),
        Some(Outcome::Success) => ("previous step succeeded".to_owned(), None),
        Some(Outcome::Skipped) => ("previous step was skipped".to_owned(), None),
    };
    StageReport { stage: Stage::PreviousOutcome, summary, decided }
}
