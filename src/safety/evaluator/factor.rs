//! A factor: one reason a decision gives, as data: the evaluator stage
//! that found it (none for what the loop adds around the evaluation: a
//! mode, an operation's own danger, a channel that could not show a
//! request) and its text. It is written as `stage 3: text` only where it
//! leaves the loop (a directive's `factors`, an error's details, an
//! explanation), so a reader that wants the text alone (a person's
//! approval dialog) takes it rather than parsing the prefix back off.

use std::fmt;

use super::Stage;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Factor {
    pub stage: Option<Stage>,
    pub text: String,
}

impl Factor {
    /// A reason found by `stage`.
    pub fn of(stage: Stage, text: impl fmt::Display) -> Self {
        Self { stage: Some(stage), text: text.to_string() }
    }

    /// A reason the loop gives beside the evaluation.
    pub fn plain(text: impl Into<String>) -> Self {
        Self { stage: None, text: text.into() }
    }
}

impl fmt::Display for Factor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stage {
            Some(stage) => write!(f, "stage {}: {}", stage.number(), self.text),
            None => f.write_str(&self.text),
        }
    }
}

/// The factors as their wire text, in order.
pub fn written(factors: &[Factor]) -> Vec<String> {
    factors.iter().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_factor_is_written_with_its_stage_and_a_plain_one_as_it_is() {
        let factors = [
            Factor::of(Stage::Patterns, "deny pattern 'rm -rf /'"),
            Factor::plain("monitoring mode: directive is advisory"),
        ];
        assert_eq!(
            written(&factors),
            ["stage 3: deny pattern 'rm -rf /'", "monitoring mode: directive is advisory"]
        );
    }
}
