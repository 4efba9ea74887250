//! The policy lab: what a policy author uses to know what a policy will do
//! before agents meet it. Every tool here judges actions the same way
//! ([`judge`]): as a first step of a fresh execution, in the project
//! folder, with no file read from disk, so that the answer depends on the
//! policy and the action only. Nothing here writes state.
//!
//! - [`examples`]: the examples and counterexamples written with rules,
//!   checked against the whole policy (`safety-dongle check`);
//! - [`explain`]: an evaluation as data (`eval --json`, replay rows);
//! - [`replay`]: a candidate policy over the actions of an audit trail;
//! - [`diff`]: two policies side by side, rules and examples.

pub mod diff;
pub mod examples;
pub mod explain;
pub mod replay;

pub use crate::safety::evaluator::Strictness;

use crate::{
    analysis::{self, Action, Analysis, NoCurrentFiles, WorkingFolder},
    policy::CompiledPolicy,
    safety::evaluator::{Evaluation, StepFacts, evaluate_analysed},
};

/// Evaluates `action` for `agent` in the lab's fixed conditions.
pub fn judge(policy: &CompiledPolicy, agent: &str, action: &str) -> Evaluation {
    judge_analysed(policy, agent, action, analyse(action))
}

/// What `action` runs, in the lab's conditions (`None`: too long).
pub fn analyse(action: &str) -> Option<Analysis> {
    analysis::analyze_action(&Action {
        text: action,
        writes: &[],
        folder: &WorkingFolder::Project,
        files: &NoCurrentFiles,
    })
    .ok()
}

/// [`judge`] with the action already analysed by [`analyse`].
pub fn judge_analysed(
    policy: &CompiledPolicy,
    agent: &str,
    action: &str,
    analysis: Option<Analysis>,
) -> Evaluation {
    let facts = StepFacts {
        agent,
        hint: action,
        outcome: None,
        step: 1,
        max_steps: policy.settings_for(agent).max_steps,
        agent_risk: None,
        folder: &WorkingFolder::Project,
        writes: &[],
        files: &NoCurrentFiles,
    };
    evaluate_analysed(policy, &facts, analysis)
}
