//! The `AutonomyDirective` (spec 8.7.1) and the notifications it carries
//! (8.7.3), as data and as the camelCase JSON agents read.

use crate::names::named_enum;
use serde_json::{Map, Value, json};

named_enum! {
    /// The risk tier of an action (spec 8.7.2, stage 4).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    pub enum SafetyTier {
        Advisory => "advisory",
        Confirm => "confirm",
        Verify => "verify",
        DangerZone => "danger_zone",
    }
}

impl SafetyTier {
    pub fn from_score(score: u8) -> Self {
        match score {
            0..=30 => Self::Advisory,
            31..=60 => Self::Confirm,
            61..=85 => Self::Verify,
            _ => Self::DangerZone,
        }
    }
}

pub use crate::store::records::NotificationKind;

#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub kind: NotificationKind,
    pub message: String,
    pub metadata: Map<String, Value>,
    /// RFC 3339.
    pub timestamp: String,
}

impl Notification {
    pub fn to_json(&self) -> Value {
        json!({
            "type": self.kind.name(),
            "message": self.message,
            "metadata": self.metadata,
            "timestamp": self.timestamp,
        })
    }
}

/// What a directive tells the agent to do: the spec's `continue` and
/// `stopped` flags, of which only three of the four pairs mean anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectiveVerdict {
    /// `continue: true`: go ahead.
    Continue,
    /// `continue: false`: not this action; the agent is not blocked
    /// (a human is asked, a pause waits, or the action was refused).
    Hold,
    /// `continue: false, stopped: true`: the agent is hard-blocked until
    /// a human lifts the block.
    Stop,
}

impl DirectiveVerdict {
    pub fn proceeds(self) -> bool {
        self == Self::Continue
    }
}

/// The answer to every `record_execution_step`.
#[derive(Debug, Clone, PartialEq)]
pub struct Directive {
    pub verdict: DirectiveVerdict,
    pub factors: Vec<String>,
    pub reason: Option<String>,
    pub steps_remaining: Option<u32>,
    pub next_step_risk: Option<SafetyTier>,
    pub notifications: Vec<Notification>,
}

impl Directive {
    /// A refusal with one reason, for cases decided before evaluation.
    pub fn refuse(reason: impl Into<String>, factor: impl Into<String>) -> Self {
        Self {
            verdict: DirectiveVerdict::Hold,
            factors: vec![factor.into()],
            reason: Some(reason.into()),
            steps_remaining: None,
            next_step_risk: None,
            notifications: Vec::new(),
        }
    }

    /// The spec's JSON: `continue` and `factors` always; the rest where
    /// they apply.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("continue".into(), self.verdict.proceeds().into());
        object.insert("factors".into(), json!(self.factors));
        if self.verdict == DirectiveVerdict::Stop {
            object.insert("stopped".into(), true.into());
        }
        if let Some(reason) = &self.reason {
            object.insert("reason".into(), reason.clone().into());
        }
        if let Some(remaining) = self.steps_remaining {
            object.insert("stepsRemaining".into(), remaining.into());
        }
        if let Some(tier) = self.next_step_risk {
            object.insert("nextStepRisk".into(), tier.name().into());
        }
        if !self.notifications.is_empty() {
            object.insert(
                "notifications".into(),
                self.notifications.iter().map(Notification::to_json).collect(),
            );
        }
        Value::Object(object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_follow_the_spec_table() {
        let cases = [
            (0, "advisory"),
            (30, "advisory"),
            (31, "confirm"),
            (60, "confirm"),
            (61, "verify"),
            (85, "verify"),
            (86, "danger_zone"),
            (100, "danger_zone"),
        ];
        for (score, tier) in cases {
            assert_eq!(SafetyTier::from_score(score).name(), tier, "score {score}");
        }
    }

    #[test]
    fn json_carries_continue_and_factors_always_and_the_rest_when_set() {
        let minimal = Directive {
            verdict: DirectiveVerdict::Continue,
            factors: vec![],
            reason: None,
            steps_remaining: None,
            next_step_risk: None,
            notifications: vec![],
        };
        assert_eq!(minimal.to_json(), json!({"continue": true, "factors": []}));
        let stop = Directive {
            verdict: DirectiveVerdict::Stop,
            reason: Some("r".into()),
            steps_remaining: Some(3),
            next_step_risk: Some(SafetyTier::DangerZone),
            ..minimal
        };
        let value = stop.to_json();
        assert_eq!(value["stopped"], true);
        assert_eq!(value["stepsRemaining"], 3);
        assert_eq!(value["nextStepRisk"], "danger_zone");
    }
}
