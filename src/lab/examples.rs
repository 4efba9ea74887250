//! The examples and counterexamples written with a policy's rules, checked
//! against the whole policy. An example must be decided by its rule as the
//! rule's action says: stopped by a `deny` rule that matches it, paused for
//! approval by a `requiresApproval` rule, auto-approved with the
//! `autoApprove` rule covering it, scored by a `[[risk]]` rule (its score
//! is the action's, and stages 4-5 decide). A counterexample must not be
//! matched by the rule at all (for `autoApprove`: not auto-approved by
//! it). Each failure is reported at the example's `file:line:col`, with
//! what decided instead.
//!
//! Rules of `[defaults]` are judged for an agent named `agent`; rules of an
//! `[agents."glob"]` section for an agent named after the glob (`ci-*` is
//! judged as `ci-`), so the section applies.

use crate::{
    diagnostics::Diagnostic,
    policy::{CompiledPolicy, Example, RuleAction, RuleExamples, RuleId, Scope},
    safety::evaluator::{Evaluation, PauseKind, Stage, Verdict},
};

use super::judge;

/// The agent name rules of `[defaults]` are judged for.
const DEFAULT_AGENT: &str = "agent";

/// Every example that its rule does not decide and every counterexample it
/// matches, located. Each file's examples are judged with the policy as it
/// stands with that file: the files merged before it and itself. Files
/// merged later only add rules (`strict.toml` after `default.toml`), and
/// may decide an earlier file's examples more strictly than it does.
pub fn check(policy: &CompiledPolicy) -> Vec<Diagnostic> {
    let files = policy.sources().len();
    let mut failures = Vec::new();
    for source in 0..files {
        let prefix;
        let standing = if source + 1 == files {
            policy
        } else {
            match policy.prefix(source + 1) {
                Ok(compiled) => {
                    prefix = compiled;
                    &prefix
                }
                Err(errors) => {
                    failures.extend(errors);
                    continue;
                }
            }
        };
        check_file(standing, source, &mut failures);
    }
    failures
}

/// Checks the examples written in file `source` with `policy`.
fn check_file(policy: &CompiledPolicy, source: usize, failures: &mut Vec<Diagnostic>) {
    for set in policy.examples().iter().filter(|set| set.source == source) {
        let rule = policy.rule(set.first_rule());
        let agent = match agent_for(policy, rule.scope) {
            Ok(agent) => agent,
            Err(glob) => {
                let at =
                    set.examples.iter().chain(&set.counterexamples).next().map(|e| e.at.clone());
                failures.extend(at.map(|at| Diagnostic { message: format!("no agent name can be made from agents.\"{glob}\" to judge this rule's examples for; give them in a section with a plainer glob"), ..at }));
                continue;
            }
        };
        for example in &set.examples {
            let evaluation = judge(policy, &agent, &example.text);
            if !decides(policy, set, &evaluation) {
                failures.push(failure(
                    example,
                    format!(
                        "example '{}' must be {} by {}, but {}",
                        example.text,
                        expected(&rule.action),
                        rule.describe(),
                        outcome(policy, &evaluation)
                    ),
                ));
            }
        }
        for counterexample in &set.counterexamples {
            let evaluation = judge(policy, &agent, &counterexample.text);
            if let Some(subject) = matched(set, &evaluation) {
                failures.push(failure(
                    counterexample,
                    format!(
                        "counterexample '{}' must not match {}, but it does{subject}",
                        counterexample.text,
                        rule.describe()
                    ),
                ));
            }
        }
    }
}

/// How many examples and counterexamples the policy carries.
pub fn count(policy: &CompiledPolicy) -> usize {
    policy.examples().iter().map(|set| set.examples.len() + set.counterexamples.len()).sum()
}

fn failure(example: &Example, message: String) -> Diagnostic {
    Diagnostic { message, ..example.at.clone() }
}

/// Whether the rules of `set` decided the evaluation as their action says.
pub fn decides(policy: &CompiledPolicy, set: &RuleExamples, evaluation: &Evaluation) -> bool {
    let Some(matches) = &evaluation.matches else { return false };
    let ours = |list: &[RuleId]| list.iter().any(|&rule| set.covers(rule));
    let at_patterns = evaluation.stage == Stage::Patterns;
    match &policy.rule(set.first_rule()).action {
        RuleAction::Deny => {
            at_patterns && evaluation.verdict == Verdict::Stop && ours(&matches.deny)
        }
        RuleAction::RequiresApproval => {
            at_patterns
                && evaluation.verdict == Verdict::Pause(PauseKind::Approval)
                && ours(&matches.requires_approval)
        }
        RuleAction::AutoApprove => {
            at_patterns
                && evaluation.verdict == Verdict::Continue
                && matches.auto_approve.as_deref().is_some_and(ours)
        }
        RuleAction::Risk { score, .. } => {
            matches!(evaluation.stage, Stage::SafetyTier | Stage::RiskTolerance)
                && evaluation.score == *score
                && ours(&matches.risk)
        }
    }
}

/// ` on <subject>` when a rule of `set` matched the evaluated action.
fn matched(set: &RuleExamples, evaluation: &Evaluation) -> Option<String> {
    let matches = evaluation.matches.as_ref()?;
    let listed = matches
        .deny
        .iter()
        .chain(&matches.requires_approval)
        .chain(&matches.risk)
        .chain(&matches.may_run)
        .chain(matches.auto_approve.iter().flatten());
    let rule = listed.copied().find(|&rule| set.covers(rule))?;
    Some(matches.subjects.get(&rule).map(|subject| format!(" on {subject}")).unwrap_or_default())
}

fn expected(action: &RuleAction) -> String {
    match action {
        RuleAction::Deny => "stopped".into(),
        RuleAction::RequiresApproval => "paused for approval".into(),
        RuleAction::AutoApprove => "auto-approved".into(),
        RuleAction::Risk { score, .. } => format!("scored {score}"),
    }
}

/// `it is stopped at stage 3 (patterns) by deny pattern '…' (policy …)`.
pub fn outcome(policy: &CompiledPolicy, evaluation: &Evaluation) -> String {
    let verdict = match evaluation.verdict {
        Verdict::Continue => "continues",
        Verdict::Pause(PauseKind::Verification) => "is paused for verification",
        Verdict::Pause(_) => "is paused",
        Verdict::Stop => "is stopped",
    };
    let by = match (evaluation.rule, &evaluation.reason) {
        (Some(rule), _) => format!(" by {}", policy.rule(rule).describe()),
        (None, Some(reason)) => format!(": {reason}"),
        (None, None) => String::new(),
    };
    let scored = match evaluation.stage {
        Stage::SafetyTier | Stage::RiskTolerance => {
            format!(" with risk score {}", evaluation.score)
        }
        _ => String::new(),
    };
    format!(
        "it {verdict} at stage {} ({}){scored}{by}",
        evaluation.stage.number(),
        evaluation.stage.name()
    )
}

/// The agent a rule's examples are judged for; the section's glob when no
/// name can be made from it.
pub(super) fn agent_for(policy: &CompiledPolicy, scope: Scope) -> Result<String, String> {
    let Scope::Agents(index) = scope else { return Ok(DEFAULT_AGENT.to_owned()) };
    let glob = policy.section_pattern(index).unwrap_or_default();
    let name = name_matching(glob);
    let applies = policy.sections_for(&policy.settings_for(&name)).contains(&glob);
    if applies { Ok(name) } else { Err(glob.to_owned()) }
}

/// A name the glob probably matches: `*` as nothing, `?` as `x`, a class
/// as its first member, alternatives as the first, escapes as the
/// character. The caller checks that it does.
fn name_matching(glob: &str) -> String {
    let mut name = String::new();
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => {}
            '?' => name.push('x'),
            '\\' => name.extend(chars.next()),
            '[' => {
                if let Some(first) = chars.next_if(|c| !matches!(c, '!' | '^')) {
                    name.push(first);
                }
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                }
            }
            '{' => {
                let mut first = true;
                for c in chars.by_ref() {
                    match c {
                        '}' => break,
                        ',' => first = false,
                        c if first => name.push(c),
                        _ => {}
                    }
                }
            }
            c => name.push(c),
        }
    }
    name
}

#[cfg(test)]
mod tests;
