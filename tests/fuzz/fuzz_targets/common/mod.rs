//! What the analysis fuzz targets share: the shipped default policy and
//! one judgement of an action as every door makes it (the text redacted,
//! analysed, then evaluated), which must return a verdict whatever the
//! input (never a panic, a hang or an unbounded allocation), and never
//! `continue` for an action too long to analyse.

use std::sync::OnceLock;

use safety_dongle::{
    analysis::{Action, CurrentFiles, FileWrite, WorkingFolder, analyze_action},
    policy::{CompiledPolicy, PolicySource},
    redact::redact_text,
    safety::evaluator::{StepFacts, Verdict, evaluate_analysed},
};

/// The policy a fresh install decides by.
fn default_policy() -> &'static CompiledPolicy {
    static POLICY: OnceLock<CompiledPolicy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let source = PolicySource {
            path: "default.toml".into(),
            text: include_str!("../../../../policies/default.toml").into(),
        };
        CompiledPolicy::compile(&[source]).expect("the shipped default policy compiles")
    })
}

/// Judges `text` (writing `write`, the files as `files` has them) in
/// `folder` as a step of an execution.
pub fn judge(
    text: &str,
    write: Option<&FileWrite>,
    folder: &WorkingFolder,
    files: &dyn CurrentFiles,
) {
    let text = redact_text(text);
    let analysis = analyze_action(&Action {
        text: &text,
        writes: write.map_or(&[][..], std::slice::from_ref),
        folder,
        files,
    })
    .ok();
    let unread = analysis.is_none();
    let facts = StepFacts {
        agent: "fuzz",
        hint: &text,
        outcome: None,
        step: 1,
        max_steps: 50,
        agent_risk: None,
        folder,
        writes: write.map_or(&[][..], std::slice::from_ref),
        files,
    };
    let verdict = evaluate_analysed(default_policy(), &facts, analysis).verdict;
    assert!(!unread || verdict != Verdict::Continue, "an action too long to analyse continued");
}
