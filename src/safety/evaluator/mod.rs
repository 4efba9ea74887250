//! The five-stage evaluator (spec 8.7.2, DESIGN.md 4): pure, no state, no
//! I/O. Stages run in order and the first that decides ends evaluation:
//!
//! 1. step limit; 2. previous outcome; 3. patterns (deny > requiresApproval
//! > autoApprove); 4. safety tier from the risk score; 5. risk tolerance.
//!
//! Every stage reports what it saw, so `safety-dongle eval` can explain a
//! decision stage by stage, and the deciding stage names its rule with file
//! and line in the directive's `factors`. A hint too long to analyse is
//! refused (fail closed) at stage 3, never waved through.

mod outcome;
mod patterns;
mod step_limit;
mod tier;
mod tolerance;

use crate::{
    analysis::{self, Action, Analysis, CurrentFiles, FileWrite, WorkingFolder},
    policy::{AgentSettings, CompiledPolicy, Matches, RuleId, central::FloorOf},
    store::audit::{AuditDecision, AuditStage},
};

use super::directive::SafetyTier;

/// The result of the previous step, as the agent reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failure,
    Skipped,
}

impl Outcome {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "success" => Some(Self::Success),
            "failure" => Some(Self::Failure),
            "skipped" => Some(Self::Skipped),
            _ => None,
        }
    }
}

/// What the evaluator is told about one step.
#[derive(Debug, Clone, Copy)]
pub struct StepFacts<'a> {
    pub agent: &'a str,
    pub hint: &'a str,
    pub outcome: Option<Outcome>,
    /// This step's number in its execution, from 1.
    pub step: u32,
    /// The limit in force (the policy's, possibly lowered by the agent).
    pub max_steps: u32,
    /// A risk score the agent assessed itself; it can only raise ours.
    pub agent_risk: Option<u8>,
    /// Where the action runs, when the caller knows (the hook's `cwd`).
    pub folder: &'a WorkingFolder,
    /// The files the action writes, when the caller knows their content (a
    /// hooked `Write` or `Edit`, each file of a patch).
    pub writes: &'a [FileWrite],
    /// How a file being edited is read as it is now: the evaluator itself
    /// does no I/O.
    pub files: &'a dyn CurrentFiles,
}

pub use crate::store::records::PauseKind;

/// The decision. Deliberately not a bool.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Continue,
    Pause(PauseKind),
    /// Hard block: deny pattern or danger-zone tier.
    Stop,
}

/// How strict a verdict is, named and ordered (the higher, the
/// stricter): how a central floor's verdict is weighed against the
/// merged one's, and how the lab compares decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strictness {
    Continue,
    /// Paused for a human's approval (or for the loop's own reasons).
    Approve,
    /// Paused for an out-of-band code.
    Verify,
    Stop,
}

impl Strictness {
    pub fn of(verdict: Verdict) -> Self {
        match verdict {
            Verdict::Continue => Self::Continue,
            Verdict::Pause(PauseKind::Verification) => Self::Verify,
            Verdict::Pause(_) => Self::Approve,
            Verdict::Stop => Self::Stop,
        }
    }

    /// As an audit row records it (`continue`, `pause`, `stop`, and in
    /// monitoring mode `would_pause`, `would_stop`: what the policy
    /// decided, not enforced); `None` for what is no decision of the
    /// policy's (`refused`, `logging`…).
    pub fn recorded(decision: AuditDecision) -> Option<Self> {
        match decision {
            AuditDecision::Continue => Some(Self::Continue),
            AuditDecision::Pause | AuditDecision::WouldPause => Some(Self::Approve),
            AuditDecision::Stop | AuditDecision::WouldStop => Some(Self::Stop),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Continue => "continue",
            Self::Approve => "approve",
            Self::Verify => "verify",
            Self::Stop => "stop",
        }
    }
}

/// The stages, numbered as in the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    StepLimit = 1,
    PreviousOutcome = 2,
    Patterns = 3,
    SafetyTier = 4,
    RiskTolerance = 5,
}

impl From<Stage> for AuditStage {
    fn from(stage: Stage) -> Self {
        match stage {
            Stage::StepLimit => Self::StepLimitStage,
            Stage::PreviousOutcome => Self::PreviousOutcomeStage,
            Stage::Patterns => Self::PatternsStage,
            Stage::SafetyTier => Self::SafetyTierStage,
            Stage::RiskTolerance => Self::RiskToleranceStage,
        }
    }
}

impl Stage {
    pub fn number(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::StepLimit => "step limit",
            Self::PreviousOutcome => "previous outcome",
            Self::Patterns => "patterns",
            Self::SafetyTier => "safety tier",
            Self::RiskTolerance => "risk tolerance",
        }
    }
}

/// A stage's decision.
#[derive(Debug, Clone)]
pub struct Decided {
    pub verdict: Verdict,
    pub reason: Option<String>,
    /// The rule that decided, as an index into the policy's rules.
    pub rule: Option<RuleId>,
    pub factors: Vec<String>,
}

/// What one stage saw and, if it decided, its decision.
#[derive(Debug, Clone)]
pub struct StageReport {
    pub stage: Stage,
    pub summary: String,
    pub decided: Option<Decided>,
}

/// Everything the stages share, computed once.
pub struct StageInput<'a> {
    pub policy: &'a CompiledPolicy,
    pub facts: &'a StepFacts<'a>,
    pub settings: AgentSettings,
    /// `None` when the hint is too long to analyse.
    pub matches: Option<Matches>,
    /// What the action runs, kept for the evaluation's explanation.
    pub analysis: Option<Analysis>,
    pub hint_bytes: usize,
    pub score: u8,
}

/// The full result: the verdict, its provenance, and every stage's report.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub verdict: Verdict,
    /// The deciding stage (stage 5 when every stage let the step through).
    pub stage: Stage,
    pub rule: Option<RuleId>,
    pub reason: Option<String>,
    pub factors: Vec<String>,
    pub score: u8,
    pub tier: SafetyTier,
    pub trace: Vec<StageReport>,
    /// The rules that matched and what the action runs (`None` when the
    /// hint was too long to analyse), for explanations and for checking a
    /// policy's examples.
    pub matches: Option<Matches>,
    pub analysis: Option<Analysis>,
}

type StageFn = fn(&StageInput<'_>) -> StageReport;

const PIPELINE: [StageFn; 5] =
    [step_limit::run, outcome::run, patterns::run, tier::run, tolerance::run];

/// Evaluates one step against the policy.
pub fn evaluate_step(policy: &CompiledPolicy, facts: &StepFacts<'_>) -> Evaluation {
    let action =
        Action { text: facts.hint, writes: facts.writes, folder: facts.folder, files: facts.files };
    evaluate_analysed(policy, facts, analysis::analyze_action(&action).ok())
}

/// Evaluates one step whose action is already analysed (`None`: too long
/// to analyse). What an action runs does not depend on the policy, so one
/// analysis can be judged by several policies (`lab::replay`).
///
/// A policy layered on a central one (`policy::central`) is judged by
/// each of its floors too, and the strictest verdict holds: local files
/// can add to a central policy's strictness, never take from it, and
/// (unless the config file lets it replace them) a central policy can add
/// to the machine's own, never take from it.
pub fn evaluate_analysed(
    policy: &CompiledPolicy,
    facts: &StepFacts<'_>,
    analysis: Option<Analysis>,
) -> Evaluation {
    let floors = policy.floors();
    if floors.is_empty() {
        return evaluate_alone(policy, facts, analysis);
    }
    let mut decided = evaluate_alone(policy, facts, analysis.clone());
    for floor in floors {
        let by_floor = evaluate_alone(&floor.policy, facts, analysis.clone())
            .with_rules_from(floor.first_rule);
        decided = stricter(decided, by_floor, floor.of);
    }
    decided
}

/// The evaluation so far, unless the floor's verdict is stricter.
fn stricter(mut decided: Evaluation, mut by_floor: Evaluation, floor: FloorOf) -> Evaluation {
    if Strictness::of(by_floor.verdict) <= Strictness::of(decided.verdict) {
        decided.score = decided.score.max(by_floor.score);
        decided.tier = decided.tier.max(by_floor.tier);
        return decided;
    }
    by_floor.factors.push(floor.explanation().into());
    by_floor
}

impl Evaluation {
    /// A floor's evaluation with its rule indices naming the layered
    /// policy's rules: the floor's rules are the layered policy's from
    /// `first_rule` on, in the same order.
    fn with_rules_from(mut self, first_rule: usize) -> Self {
        if first_rule == 0 {
            return self;
        }
        self.rule = self.rule.map(|rule| rule.after(first_rule));
        self.matches = self.matches.map(|matches| matches.shifted(first_rule));
        for report in &mut self.trace {
            if let Some(decided) = &mut report.decided {
                decided.rule = decided.rule.map(|rule| rule.after(first_rule));
            }
        }
        self
    }
}

/// Evaluates one step against one policy's own rules.
fn evaluate_alone(
    policy: &CompiledPolicy,
    facts: &StepFacts<'_>,
    analysis: Option<Analysis>,
) -> Evaluation {
    let settings = policy.settings_for(facts.agent);
    let matches = analysis.as_ref().map(|analysis| policy.matches(analysis, &settings));
    let score = risk_score(policy, matches.as_ref(), facts.agent_risk);
    let input = StageInput {
        policy,
        facts,
        settings,
        matches,
        analysis,
        hint_bytes: facts.hint.len(),
        score,
    };
    let mut trace = Vec::with_capacity(PIPELINE.len());
    for stage in PIPELINE {
        let report = stage(&input);
        let decided = report.decided.clone();
        let at = report.stage;
        trace.push(report);
        if let Some(decided) = decided {
            return finish(input, at, decided, trace);
        }
    }
    // Stage 5 always decides; reaching here would be a pipeline bug, and the
    // safe answer to a bug is a pause.
    let decided = Decided {
        verdict: Verdict::Pause(PauseKind::FailClosed),
        reason: Some("evaluation did not reach a decision".into()),
        rule: None,
        factors: vec!["evaluation did not reach a decision; refusing".into()],
    };
    finish(input, Stage::RiskTolerance, decided, trace)
}

fn finish(
    input: StageInput<'_>,
    stage: Stage,
    decided: Decided,
    trace: Vec<StageReport>,
) -> Evaluation {
    let implied = match decided.verdict {
        Verdict::Stop => SafetyTier::DangerZone,
        Verdict::Pause(PauseKind::Verification) => SafetyTier::Verify,
        Verdict::Pause(PauseKind::Approval) => SafetyTier::Confirm,
        _ => SafetyTier::Advisory,
    };
    Evaluation {
        verdict: decided.verdict,
        stage,
        rule: decided.rule,
        reason: decided.reason,
        factors: decided.factors,
        score: input.score,
        tier: SafetyTier::from_score(input.score).max(implied),
        trace,
        matches: input.matches,
        analysis: input.analysis,
    }
}

/// The highest score among matching risk rules, raised (never lowered) by
/// the agent's own assessment.
fn risk_score(policy: &CompiledPolicy, matches: Option<&Matches>, agent_risk: Option<u8>) -> u8 {
    let policy_score = matches
        .map(|m| m.risk.iter().filter_map(|&i| rule_score(policy, i)).max().unwrap_or(0))
        .unwrap_or(0);
    policy_score.max(agent_risk.unwrap_or(0).min(100))
}

fn rule_score(policy: &CompiledPolicy, rule: RuleId) -> Option<u8> {
    match policy.rule(rule).action {
        crate::policy::RuleAction::Risk { score, .. } => Some(score),
        _ => None,
    }
}

/// `stage 3: …` — the prefix every factor of a stage carries.
fn factor(stage: Stage, text: impl std::fmt::Display) -> String {
    format!("stage {}: {text}", stage.number())
}

#[cfg(test)]
mod tests;
