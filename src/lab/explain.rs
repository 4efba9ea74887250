//! An evaluation as data: what `eval --json` prints and what each row of
//! `replay --json` carries, described by `src/lab/explanation.schema.json`.
//! Built from the evaluator's own trace and matches, so it can never say
//! something the decision did not rest on.

use serde::Serialize;

use crate::{
    analysis::Analysis,
    policy::{CompiledPolicy, RuleAction, RuleId, Scope, pattern::PatternKind},
    safety::evaluator::{Evaluation, PauseKind, Verdict, written},
};

use super::Strictness;

/// Everything behind one decision.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub policy: PolicyRef,
    pub agent: AgentRef,
    pub action: String,
    /// What the action runs; `None` when it was too long to analyse.
    pub analysis: Option<AnalysisData>,
    pub stages: Vec<StageData>,
    pub decision: Decision,
    /// Every rule that matched, in policy order, with what it matched.
    pub matches: Vec<RuleMatch>,
    /// The risk rules that scored the action.
    pub risk: Vec<RiskContribution>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PolicyRef {
    pub sources: Vec<String>,
    pub sha256: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct AgentRef {
    pub name: String,
    pub max_autonomous_steps: u32,
    pub risk_tolerance: &'static str,
    /// The `[agents."glob"]` sections that apply.
    pub sections: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AnalysisData {
    pub commands: Vec<CommandData>,
    /// Pipes and substitutions: each stage's programs.
    pub chains: Vec<Vec<Vec<String>>>,
    pub writes: Vec<String>,
    pub reads: Vec<String>,
    pub facts: Vec<FactData>,
    /// Files that run later, judged by what they will run.
    pub judged_files: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CommandData {
    pub program: String,
    pub argv: Vec<String>,
    /// `via sudo`, `planted in .git/hooks/pre-commit line 2`.
    pub origins: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FactData {
    pub fact: &'static str,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct StageData {
    pub stage: u8,
    pub name: &'static str,
    pub summary: String,
    /// `None` when the stage let the action through to the next.
    pub verdict: Option<VerdictData>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct VerdictData {
    /// `continue`, `pause` or `stop`.
    pub verdict: &'static str,
    /// Why a pause waits: `approval`, `verification`, `step_limit`…
    pub pause: Option<&'static str>,
    /// Continue < approve < verify < stop.
    pub strictness: Strictness,
}

#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    #[serde(flatten)]
    pub verdict: VerdictData,
    pub stage: u8,
    pub rule: Option<RuleRef>,
    pub reason: Option<String>,
    pub factors: Vec<String>,
    pub risk_score: u8,
    pub tier: &'static str,
}

/// A rule, as written and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleRef {
    /// `deny`, `requiresApproval`, `autoApprove` or `risk`.
    pub action: &'static str,
    pub pattern: String,
    /// `glob` or `keyword`.
    pub kind: &'static str,
    pub file: String,
    pub line: usize,
    /// The `[agents."glob"]` section it belongs to, if any.
    pub agents: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleMatch {
    pub rule: RuleRef,
    pub subject: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RiskContribution {
    pub rule: RuleRef,
    pub score: u8,
    pub reason: String,
}

impl RuleRef {
    pub fn of(policy: &CompiledPolicy, id: RuleId) -> Self {
        let rule = policy.rule(id);
        Self {
            action: action_name(&rule.action),
            pattern: rule.pattern.clone(),
            kind: kind_name(rule.kind),
            file: rule.origin.file.to_string(),
            line: rule.origin.line,
            agents: match rule.scope {
                Scope::Defaults => None,
                Scope::Agents(section) => policy.section_pattern(section).map(str::to_owned),
            },
        }
    }
}

pub fn kind_name(kind: PatternKind) -> &'static str {
    match kind {
        PatternKind::Glob => "glob",
        PatternKind::Keyword => "keyword",
    }
}

pub fn action_name(action: &RuleAction) -> &'static str {
    match action {
        RuleAction::Deny => "deny",
        RuleAction::RequiresApproval => "requiresApproval",
        RuleAction::AutoApprove => "autoApprove",
        RuleAction::Risk { .. } => "risk",
    }
}

impl PolicyRef {
    pub fn of(policy: &CompiledPolicy) -> Self {
        Self {
            sources: policy.sources().into_iter().map(str::to_owned).collect(),
            sha256: policy.hash().to_owned(),
        }
    }
}

impl VerdictData {
    pub fn of(verdict: Verdict) -> Self {
        let (name, pause) = match verdict {
            Verdict::Continue => ("continue", None),
            Verdict::Pause(kind) => ("pause", Some(kind)),
            Verdict::Stop => ("stop", None),
        };
        Self {
            verdict: name,
            pause: pause.map(PauseKind::name),
            strictness: Strictness::of(verdict),
        }
    }
}

impl Decision {
    pub fn of(policy: &CompiledPolicy, evaluation: &Evaluation) -> Self {
        Self {
            verdict: VerdictData::of(evaluation.verdict),
            stage: evaluation.stage.number(),
            rule: evaluation.rule.map(|index| RuleRef::of(policy, index)),
            reason: evaluation.reason.clone(),
            factors: written(&evaluation.factors),
            risk_score: evaluation.score,
            tier: evaluation.tier.name(),
        }
    }
}

impl AnalysisData {
    pub fn of(analysis: &Analysis) -> Self {
        let program = |index: &usize| {
            analysis.commands.get(*index).map(|c| c.program.clone()).unwrap_or_default()
        };
        Self {
            commands: analysis
                .commands
                .iter()
                .map(|c| CommandData {
                    program: c.program.clone(),
                    argv: c.argv.clone(),
                    origins: c.origins().collect(),
                })
                .collect(),
            chains: analysis
                .feeds
                .iter()
                .map(|stages| {
                    stages.iter().map(|stage| stage.iter().map(program).collect()).collect()
                })
                .collect(),
            writes: analysis.writes.clone(),
            reads: analysis.reads.clone(),
            facts: analysis
                .facts
                .iter()
                .map(|(fact, detail)| FactData { fact: fact.name(), detail: detail.clone() })
                .collect(),
            judged_files: analysis.planted.clone(),
        }
    }
}

impl Explanation {
    /// The explanation of `evaluation`, made for `agent` on `action`.
    pub fn new(
        policy: &CompiledPolicy,
        agent: &str,
        action: &str,
        evaluation: &Evaluation,
    ) -> Self {
        let settings = policy.settings_for(agent);
        let mut matches = Vec::new();
        let mut risk = Vec::new();
        if let Some(found) = &evaluation.matches {
            let mut listed: Vec<RuleId> = found
                .deny
                .iter()
                .chain(&found.requires_approval)
                .chain(&found.risk)
                .chain(&found.may_run)
                .chain(found.auto_approve.iter().flatten())
                .copied()
                .collect();
            listed.sort_unstable();
            listed.dedup();
            for index in listed {
                matches.push(RuleMatch {
                    rule: RuleRef::of(policy, index),
                    subject: found.subjects.get(&index).cloned(),
                });
                if let RuleAction::Risk { score, reason } = &policy.rule(index).action {
                    risk.push(RiskContribution {
                        rule: RuleRef::of(policy, index),
                        score: *score,
                        reason: reason.clone(),
                    });
                }
            }
        }
        Self {
            policy: PolicyRef::of(policy),
            agent: AgentRef {
                name: agent.to_owned(),
                max_autonomous_steps: settings.max_steps,
                risk_tolerance: settings.tolerance.name(),
                sections: policy.sections_for(&settings).into_iter().map(str::to_owned).collect(),
            },
            action: action.to_owned(),
            analysis: evaluation.analysis.as_ref().map(AnalysisData::of),
            stages: evaluation
                .trace
                .iter()
                .map(|report| StageData {
                    stage: report.stage.number(),
                    name: report.stage.name(),
                    summary: report.summary.clone(),
                    verdict: report
                        .decided
                        .as_ref()
                        .map(|decided| VerdictData::of(decided.verdict)),
                })
                .collect(),
            decision: Decision::of(policy, evaluation),
            matches,
            risk,
        }
    }
}
