//! Two policies side by side: the settings and rules added, removed and
//! changed, and the union of their examples (and counterexamples) judged
//! by both, listing each whose decision changes.
//!
//! A rule is the same rule in both when its section, pattern and kind
//! match; its line may move. The same rule under another action (a `deny`
//! become `requiresApproval`) or with another score or reason is changed.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::policy::{CompiledPolicy, Rule, RuleAction, RuleId, Scope};

use super::{
    Strictness,
    examples::agent_for,
    explain::{Decision, PolicyRef, RuleRef},
    judge,
};

#[derive(Debug, Clone, Serialize)]
pub struct PolicyDiff {
    pub old: PolicyRef,
    pub new: PolicyRef,
    pub settings: Vec<SettingChange>,
    pub added: Vec<RuleRef>,
    pub removed: Vec<RuleRef>,
    pub changed: Vec<RuleChange>,
    /// Distinct examples and counterexamples of both policies, judged by both.
    pub examples_judged: usize,
    /// Those decided differently.
    pub examples: Vec<ExampleChange>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SettingChange {
    pub setting: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleChange {
    pub old: RuleRef,
    pub new: RuleRef,
    /// `deny -> requiresApproval`, `score 75 -> 90`, `reason …`.
    pub what: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExampleChange {
    pub action: String,
    pub agent: String,
    /// The rule it was written with, in whichever policy has it.
    pub written_with: RuleRef,
    pub old: Decision,
    pub new: Decision,
    pub loosens: bool,
}

/// What identifies a rule across two policies.
type RuleKey = (Option<String>, String, &'static str);

fn key(policy: &CompiledPolicy, rule: &Rule) -> RuleKey {
    let section = match rule.scope {
        Scope::Defaults => None,
        Scope::Agents(index) => policy.section_pattern(index).map(str::to_owned),
    };
    (section, rule.pattern.clone(), super::explain::kind_name(rule.kind))
}

pub fn diff(old: &CompiledPolicy, new: &CompiledPolicy) -> PolicyDiff {
    let mut result = PolicyDiff {
        old: PolicyRef::of(old),
        new: PolicyRef::of(new),
        settings: settings(old, new),
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
        examples_judged: 0,
        examples: Vec::new(),
    };
    rules(old, new, &mut result);
    examples(old, new, &mut result);
    result
}

fn settings(old: &CompiledPolicy, new: &CompiledPolicy) -> Vec<SettingChange> {
    let described = |policy: &CompiledPolicy| -> BTreeMap<String, String> {
        let mut settings = BTreeMap::from([
            ("defaults.maxAutonomousSteps".to_owned(), policy.default_max_steps().to_string()),
            ("defaults.riskTolerance".to_owned(), policy.default_tolerance().name().to_owned()),
        ]);
        for section in policy.section_patterns() {
            settings.insert(format!("agents.\"{section}\""), "present".to_owned());
        }
        settings
    };
    let (old, new) = (described(old), described(new));
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    names
        .into_iter()
        .filter(|name| old.get(*name) != new.get(*name))
        .map(|name| SettingChange {
            setting: name.clone(),
            old: old.get(name).cloned(),
            new: new.get(name).cloned(),
        })
        .collect()
}

fn rules(old: &CompiledPolicy, new: &CompiledPolicy, result: &mut PolicyDiff) {
    let index = |policy: &CompiledPolicy| -> BTreeMap<RuleKey, Vec<RuleId>> {
        let mut keyed: BTreeMap<RuleKey, Vec<RuleId>> = BTreeMap::new();
        for (id, rule) in policy.rule_ids() {
            keyed.entry(key(policy, rule)).or_default().push(id);
        }
        keyed
    };
    let (old_rules, new_rules) = (index(old), index(new));
    for (rule_key, old_indices) in &old_rules {
        let new_indices = new_rules.get(rule_key).map(Vec::as_slice).unwrap_or_default();
        // Same action on both sides first; what is left pairs up as changed.
        let mut unmatched_new: Vec<RuleId> = new_indices.to_vec();
        let mut unmatched_old = Vec::new();
        for &o in old_indices {
            match unmatched_new.iter().position(|&n| new.rule(n).action == old.rule(o).action) {
                Some(at) => drop(unmatched_new.remove(at)),
                None => unmatched_old.push(o),
            }
        }
        let paired = unmatched_old.len().min(unmatched_new.len());
        for (&o, &n) in unmatched_old.iter().zip(&unmatched_new) {
            result.changed.push(RuleChange {
                old: RuleRef::of(old, o),
                new: RuleRef::of(new, n),
                what: changes(&old.rule(o).action, &new.rule(n).action),
            });
        }
        result.removed.extend(
            unmatched_old.get(paired..).unwrap_or_default().iter().map(|&o| RuleRef::of(old, o)),
        );
        result.added.extend(
            unmatched_new.get(paired..).unwrap_or_default().iter().map(|&n| RuleRef::of(new, n)),
        );
    }
    for (rule_key, new_indices) in &new_rules {
        if !old_rules.contains_key(rule_key) {
            result.added.extend(new_indices.iter().map(|&n| RuleRef::of(new, n)));
        }
    }
    let order = |rule: &RuleRef| (rule.file.clone(), rule.line);
    result.added.sort_by_key(order);
    result.removed.sort_by_key(order);
    result.changed.sort_by_key(|change| order(&change.old));
}

fn changes(old: &RuleAction, new: &RuleAction) -> Vec<String> {
    match (old, new) {
        (RuleAction::Risk { score: a, reason: r }, RuleAction::Risk { score: b, reason: s }) => {
            let mut what = Vec::new();
            if a != b {
                what.push(format!("score {a} -> {b}"));
            }
            if r != s {
                what.push(format!("reason '{r}' -> '{s}'"));
            }
            what
        }
        _ => vec![format!(
            "{} -> {}",
            super::explain::action_name(old),
            super::explain::action_name(new)
        )],
    }
}

fn examples(old: &CompiledPolicy, new: &CompiledPolicy, result: &mut PolicyDiff) {
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    for policy in [old, new] {
        for set in policy.examples() {
            let rule = policy.rule(set.first_rule());
            let Ok(agent) = agent_for(policy, rule.scope) else { continue };
            for example in set.examples.iter().chain(&set.counterexamples) {
                if !seen.insert((agent.clone(), example.text.clone())) {
                    continue;
                }
                let (before, after) =
                    (judge(old, &agent, &example.text), judge(new, &agent, &example.text));
                let (from, to) = (Strictness::of(before.verdict), Strictness::of(after.verdict));
                if from != to {
                    result.examples.push(ExampleChange {
                        action: example.text.clone(),
                        agent: agent.clone(),
                        written_with: RuleRef::of(policy, set.first_rule()),
                        old: Decision::of(old, &before),
                        new: Decision::of(new, &after),
                        loosens: to < from,
                    });
                }
            }
        }
    }
    result.examples_judged = seen.len();
}

#[cfg(test)]
mod tests;
