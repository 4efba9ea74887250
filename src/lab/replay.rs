//! Replay: a candidate policy over the actions of an audit trail (steps,
//! hooked and proxied calls), to see what it would change before agents
//! meet it. Reads the state, never writes it.
//!
//! Each replayed action is judged twice in the lab's conditions
//! ([`super::judge`]): by the policy that decided it (its text is kept
//! beside the trail, `audit::remember_policy`) and by the candidate, so a
//! difference is the policies' and nothing else's. A row whose policy text
//! is not kept (written before versions were kept) is compared with its
//! recorded decision instead. Only decisions the policy made are replayed
//! (stages 3-5); rows decided by the loop's state (a standing block, a
//! pause waiting for a human, the step limit, a previous failure, the
//! logging mode, an operation's danger level) are counted apart, since no
//! policy change alone would change them. What the trail does not keep
//! (the working folder, a hooked write's content, an operation's risk
//! floor) is not part of either judgment.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::{
    policy::{AgentSettings, CompiledPolicy},
    store::{
        Store, StoreError,
        audit::{self, AuditRow, AuditStage},
        rfc3339,
    },
};

use super::{
    Strictness, analyse,
    explain::{Explanation, PolicyRef},
    judge, judge_analysed,
};

/// Which rows to replay, and how many of each transition to show.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Rows recorded at or after this time (ms since the epoch).
    pub since_ms: i64,
    pub agent: Option<String>,
    pub rows_per_transition: usize,
}

/// What the candidate would change.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    pub policy: PolicyRef,
    /// Action rows in the window (after `--since` and `--agent`).
    pub rows_read: usize,
    pub replayed: usize,
    pub unchanged: usize,
    /// Rows not replayed, counted by why.
    pub not_replayed: BTreeMap<&'static str, usize>,
    pub compared_with: Baselines,
    /// Each change of decision with its count, looser ones first.
    pub transitions: Vec<Transition>,
    /// Whether any action would be decided more permissively.
    pub loosens: bool,
}

/// What the candidate's decisions were compared with.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Baselines {
    /// Rows judged again with the policy that decided them.
    pub recorded_policy: usize,
    /// Rows compared with their recorded decision (policy text not kept).
    pub recorded_decision: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Transition {
    pub from: Strictness,
    pub to: Strictness,
    pub loosens: bool,
    pub count: usize,
    /// The first rows of the transition, in trail order.
    pub rows: Vec<ReplayRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReplayRow {
    pub seq: i64,
    pub at: String,
    pub agent: String,
    /// `step` (record_execution_step) or `gate` (a hooked or proxied call).
    pub event: String,
    pub action: String,
    pub recorded: Recorded,
    /// The decision of the policy that decided the row, judged again;
    /// `None` when its text is not kept.
    pub before: Option<Explanation>,
    pub after: Explanation,
}

/// The row as the trail has it.
#[derive(Debug, Clone, Serialize)]
pub struct Recorded {
    pub decision: String,
    pub stage: Option<String>,
    pub rule: Option<String>,
    pub policy_sha256: String,
}

/// Replays the trail in `store` with `candidate`.
pub fn replay(
    store: &Store,
    candidate: &CompiledPolicy,
    options: &ReplayOptions,
) -> Result<ReplayReport, StoreError> {
    let (rows, kept) = store.read(|tx| {
        let rows = audit::actions_since(tx, options.since_ms, options.agent.as_deref())?;
        let mut kept: HashMap<String, Option<String>> = HashMap::new();
        for row in &rows {
            if !kept.contains_key(&row.policy_hash) {
                kept.insert(row.policy_hash.clone(), audit::policy_sources(tx, &row.policy_hash)?);
            }
        }
        Ok((rows, kept))
    })?;
    let baselines: HashMap<String, CompiledPolicy> = kept
        .into_iter()
        .filter_map(|(hash, sources)| {
            let policy = CompiledPolicy::from_stored(&hash, &sources?).map_err(|error| tracing::warn!(%error, policy = %hash, "a kept policy cannot be used; its rows are compared with their recorded decisions")).ok()?;
            Some((hash, policy))
        })
        .collect();
    Ok(compare(&rows, &baselines, candidate, options))
}

/// Whether a row is a decision the policy made, or why not.
fn replayable(row: &AuditRow) -> Result<(&str, Option<Strictness>), &'static str> {
    let Some(action) = row.hint.as_deref() else { return Err("no action recorded") };
    match row.stage {
        Some(
            AuditStage::PatternsStage
            | AuditStage::SafetyTierStage
            | AuditStage::RiskToleranceStage,
        ) => Ok((action, Strictness::recorded(row.decision))),
        Some(AuditStage::StepLimitStage) => Err("decided by the step limit"),
        Some(AuditStage::PreviousOutcomeStage) => Err("decided by the previous step's failure"),
        Some(AuditStage::Block) => Err("the agent was hard-blocked"),
        Some(AuditStage::Pending) => Err("a pause was waiting for a human"),
        Some(AuditStage::Lifecycle) => Err("no running execution"),
        Some(AuditStage::Operation) => Err("decided by the operation's danger level"),
        None => Err("not evaluated (logging or disabled mode)"),
        Some(_) => Err("refused before the policy was asked"),
    }
}

/// One replayed row's two decisions.
struct Compared<'a> {
    row: &'a AuditRow,
    action: &'a str,
    before: Strictness,
    after: Strictness,
    judged_again: bool,
}

fn compare(
    rows: &[AuditRow],
    baselines: &HashMap<String, CompiledPolicy>,
    candidate: &CompiledPolicy,
    options: &ReplayOptions,
) -> ReplayReport {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).clamp(1, 8);
    let chunk = rows.len().div_ceil(threads).max(1);
    let judged: Vec<Vec<Result<Compared<'_>, &'static str>>> = std::thread::scope(|scope| {
        let workers: Vec<_> = rows
            .chunks(chunk)
            .map(|rows| scope.spawn(move || judge_rows(rows, baselines, candidate)))
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let mut report = ReplayReport {
        policy: PolicyRef::of(candidate),
        rows_read: rows.len(),
        replayed: 0,
        unchanged: 0,
        not_replayed: BTreeMap::new(),
        compared_with: Baselines::default(),
        transitions: Vec::new(),
        loosens: false,
    };
    let mut transitions: BTreeMap<(Strictness, Strictness), Transition> = BTreeMap::new();
    for judged in judged.into_iter().flatten() {
        let compared = match judged {
            Ok(compared) => compared,
            Err(why) => {
                *report.not_replayed.entry(why).or_default() += 1;
                continue;
            }
        };
        report.replayed += 1;
        if compared.judged_again {
            report.compared_with.recorded_policy += 1;
        } else {
            report.compared_with.recorded_decision += 1;
        }
        if compared.before == compared.after {
            report.unchanged += 1;
            continue;
        }
        let (from, to) = (compared.before, compared.after);
        let transition = transitions.entry((from, to)).or_insert_with(|| Transition {
            from,
            to,
            loosens: to < from,
            count: 0,
            rows: Vec::new(),
        });
        transition.count += 1;
        if transition.rows.len() < options.rows_per_transition {
            transition.rows.push(explained(&compared, baselines, candidate));
        }
    }
    report.transitions = transitions.into_values().collect();
    report.transitions.sort_by_key(|t| (!t.loosens, t.from, t.to));
    report.loosens = report.transitions.iter().any(|t| t.loosens);
    report
}

/// Judges each row with its own policy (or takes its recorded decision)
/// and with the candidate, judging each distinct action once per policy
/// and agent settings (agents to whom the same sections apply are judged
/// alike).
fn judge_rows<'a>(
    rows: &'a [AuditRow],
    baselines: &HashMap<String, CompiledPolicy>,
    candidate: &CompiledPolicy,
) -> Vec<Result<Compared<'a>, &'static str>> {
    let mut before_seen: HashMap<(&str, AgentSettings, &str), Strictness> = HashMap::new();
    let mut after_seen: HashMap<(AgentSettings, &str), Strictness> = HashMap::new();
    rows.iter()
        .map(|row| {
            let (action, recorded) = replayable(row)?;
            let agent = row.agent.as_str();
            let baseline = baselines.get(&row.policy_hash);
            let before_key = baseline
                .map(|policy| (row.policy_hash.as_str(), policy.settings_for(agent), action));
            let after_key = (candidate.settings_for(agent), action);
            let (before_known, after_known) = (
                before_key.and_then(|key| before_seen.get(&key).copied()),
                after_seen.get(&after_key).copied(),
            );
            // The action is analysed once for both policies, and not at
            // all when both decisions are already known.
            let mut analysis = (after_known.is_none()
                || (baseline.is_some() && before_known.is_none()))
            .then(|| analyse(action));
            let (before, judged_again) = match (baseline, before_known) {
                (Some(_), Some(known)) => (known, true),
                (Some(policy), None) => {
                    let analysed = analysis.clone().flatten();
                    let before =
                        Strictness::of(judge_analysed(policy, agent, action, analysed).verdict);
                    before_seen.extend(before_key.map(|key| (key, before)));
                    (before, true)
                }
                (None, _) => (recorded.ok_or("not a decision of the policy's")?, false),
            };
            let after = match after_known {
                Some(known) => known,
                None => {
                    let after = Strictness::of(
                        judge_analysed(candidate, agent, action, analysis.take().flatten()).verdict,
                    );
                    after_seen.insert(after_key, after);
                    after
                }
            };
            Ok(Compared { row, action, before, after, judged_again })
        })
        .collect()
}

fn explained(
    compared: &Compared<'_>,
    baselines: &HashMap<String, CompiledPolicy>,
    candidate: &CompiledPolicy,
) -> ReplayRow {
    let row = compared.row;
    let explain = |policy: &CompiledPolicy| {
        Explanation::new(
            policy,
            &row.agent,
            compared.action,
            &judge(policy, &row.agent, compared.action),
        )
    };
    ReplayRow {
        seq: row.seq,
        at: rfc3339(row.at),
        agent: row.agent.clone(),
        event: row.event.name().to_owned(),
        action: compared.action.to_owned(),
        recorded: Recorded {
            decision: row.decision.name().to_owned(),
            stage: row.stage.map(|stage| stage.name().to_owned()),
            rule: row.rule.clone(),
            policy_sha256: row.policy_hash.clone(),
        },
        before: compared
            .judged_again
            .then(|| baselines.get(&row.policy_hash).map(explain))
            .flatten(),
        after: explain(candidate),
    }
}

#[cfg(test)]
mod tests;
