//! The stages' semantics at their boundaries, one row per case.

use crate::{
    analysis::{MAX_HINT_BYTES, NoCurrentFiles},
    policy::{CompiledPolicy, PolicySource},
};

use super::*;

const POLICY: &str = r#"
[defaults]
maxAutonomousSteps = 3
riskTolerance = "moderate"
deny = ["rm -rf /"]
requiresApproval = ["git push*"]
autoApprove = ["ls *", "git push --dry-run*"]

[[risk]]
match = ["score30*"]
score = 30
reason = "thirty"

[[risk]]
match = ["score31*"]
score = 31
reason = "thirty-one"

[[risk]]
match = ["score60*"]
score = 60
reason = "sixty"

[[risk]]
match = ["score61*"]
score = 61
reason = "sixty-one"

[[risk]]
match = ["score85*"]
score = 85
reason = "eighty-five"

[[risk]]
match = ["score86*"]
score = 86
reason = "eighty-six"

[[risk]]
match = ["score26*"]
score = 26
reason = "twenty-six"

[agents."careful"]
riskTolerance = "conservative"
"#;

fn policy() -> CompiledPolicy {
    CompiledPolicy::compile(&[PolicySource { path: "p.toml".into(), text: POLICY.into() }]).unwrap()
}

struct Row {
    agent: &'static str,
    hint: &'static str,
    step: u32,
    outcome: Option<Outcome>,
    agent_risk: Option<u8>,
    verdict: Verdict,
    stage: Stage,
}

fn row(hint: &'static str, verdict: Verdict, stage: Stage) -> Row {
    Row { agent: "a", hint, step: 1, outcome: None, agent_risk: None, verdict, stage }
}

#[test]
fn stages_decide_in_order_at_their_boundaries() {
    use PauseKind::*;
    let rows = [
        // Stage 1: the step beyond the limit pauses, even before a deny.
        Row { step: 3, ..row("cargo build", Verdict::Continue, Stage::RiskTolerance) },
        Row { step: 4, ..row("rm -rf /", Verdict::Pause(StepLimit), Stage::StepLimit) },
        // Stage 2: a reported failure pauses before patterns.
        Row {
            outcome: Some(Outcome::Failure),
            ..row("rm -rf /", Verdict::Pause(PreviousFailure), Stage::PreviousOutcome)
        },
        Row {
            outcome: Some(Outcome::Success),
            ..row("cargo build", Verdict::Continue, Stage::RiskTolerance)
        },
        // Stage 3: deny > requiresApproval > autoApprove.
        row("git push origin main; rm -rf /", Verdict::Stop, Stage::Patterns),
        row("git push --dry-run origin", Verdict::Pause(Approval), Stage::Patterns),
        row("ls -la", Verdict::Continue, Stage::Patterns),
        row("ls -la; score86 now", Verdict::Stop, Stage::SafetyTier),
        // What a program with no model may run is asked about, never
        // stopped for: a deny becomes a question, an advisory score is
        // nothing; known programs and other words stay as they are.
        row("tool rm -rf /", Verdict::Pause(Approval), Stage::Patterns),
        row("uv run -- rm -rf /", Verdict::Pause(Approval), Stage::Patterns),
        row("tool RM.EXE -rf /", Verdict::Pause(Approval), Stage::Patterns),
        row("tool C:\\\\Windows\\\\rm.exe -rf /", Verdict::Pause(Approval), Stage::Patterns),
        row("some-cli explain 'rm -rf /'", Verdict::Pause(Approval), Stage::Patterns),
        row("tool run sh -c 'git push origin main'", Verdict::Pause(Approval), Stage::Patterns),
        row("tool sh -c 'score61 x'", Verdict::Pause(Approval), Stage::Patterns),
        row("tool sh -c 'score30 x'", Verdict::Continue, Stage::RiskTolerance),
        row("tool rm -rf /; rm -rf /", Verdict::Stop, Stage::Patterns),
        row("man rm -rf /", Verdict::Continue, Stage::RiskTolerance),
        row("tool --title 'see <a>/ for rm -rf /'", Verdict::Continue, Stage::RiskTolerance),
        // An unquoted value not known in advance may split into any words,
        // options among them (before `--`): what the command may then be
        // is asked about, never stopped for. Quoted, it is one word; a
        // tool's action written after an option's value stays that action.
        row("git $cmd origin main", Verdict::Pause(Approval), Stage::Patterns),
        row("rm -rf $dir", Verdict::Pause(Approval), Stage::Patterns),
        row("timeout 5 rm $opts /", Verdict::Pause(Approval), Stage::Patterns),
        row("bash -c 'git $(next-step) origin'", Verdict::Pause(Approval), Stage::Patterns),
        row("rm -rf \"$dir\"", Verdict::Continue, Stage::RiskTolerance),
        row("git -C $repo log", Verdict::Continue, Stage::RiskTolerance),
        // Unless what follows it is an option git refuses: then the value's
        // words are what name git's command.
        row("git -C $repo -f origin main", Verdict::Pause(Approval), Stage::Patterns),
        row("git -C $repo --no-pager log -f", Verdict::Continue, Stage::RiskTolerance),
        row("git status $path", Verdict::Continue, Stage::RiskTolerance),
        row("rm -rf -- $dir", Verdict::Pause(Approval), Stage::Patterns),
        row("rm -- $names /", Verdict::Continue, Stage::RiskTolerance),
        // An MCP tool call's values run only under the keys that say so.
        row(r#"create_issue {"title": "rm -rf / again"}"#, Verdict::Continue, Stage::RiskTolerance),
        row(r#"run_task {"command": "rm -rf /"}"#, Verdict::Stop, Stage::Patterns),
        // Stage 4: the tier table's edges.
        row("score30 x", Verdict::Continue, Stage::RiskTolerance),
        row("score31 x", Verdict::Pause(Approval), Stage::SafetyTier),
        row("score60 x", Verdict::Pause(Approval), Stage::SafetyTier),
        row("score61 x", Verdict::Pause(Verification), Stage::SafetyTier),
        row("score85 x", Verdict::Pause(Verification), Stage::SafetyTier),
        row("score86 x", Verdict::Stop, Stage::SafetyTier),
        // The agent's own score raises, never lowers; and it is not waved
        // through by autoApprove.
        Row { agent_risk: Some(90), ..row("cargo build", Verdict::Stop, Stage::SafetyTier) },
        Row {
            agent_risk: Some(0),
            ..row("score61 x", Verdict::Pause(Verification), Stage::SafetyTier)
        },
        Row {
            agent_risk: Some(70),
            ..row("ls -la", Verdict::Pause(Verification), Stage::SafetyTier)
        },
        // Stage 5: only a conservative tolerance adds pauses (26-30).
        row("score26 x", Verdict::Continue, Stage::RiskTolerance),
        Row {
            agent: "careful",
            ..row("score26 x", Verdict::Pause(Approval), Stage::RiskTolerance)
        },
        Row {
            agent: "careful",
            ..row("score30 x", Verdict::Pause(Approval), Stage::RiskTolerance)
        },
    ];
    let policy = policy();
    for case in rows {
        let facts = StepFacts {
            agent: case.agent,
            hint: case.hint,
            outcome: case.outcome,
            step: case.step,
            max_steps: 3,
            agent_risk: case.agent_risk,
            folder: &WorkingFolder::Project,
            writes: &[],
            files: &NoCurrentFiles,
        };
        let evaluation = evaluate_step(&policy, &facts);
        assert_eq!(
            (evaluation.verdict, evaluation.stage),
            (case.verdict, case.stage),
            "{} (agent {}, step {})",
            case.hint,
            case.agent,
            case.step
        );
        assert!(!evaluation.factors.is_empty(), "every decision explains itself: {}", case.hint);
        let deciding = format!("stage {}:", case.stage.number());
        assert!(
            evaluation.factors.iter().any(|f| f.to_string().starts_with(&deciding)),
            "{}: {:?}",
            case.hint,
            evaluation.factors
        );
    }
}

#[test]
fn factors_name_the_rule_with_its_file_and_line() {
    let evaluation = evaluate_step(
        &policy(),
        &StepFacts {
            agent: "a",
            hint: "sudo rm -rf /",
            outcome: None,
            step: 1,
            max_steps: 3,
            agent_risk: None,
            folder: &WorkingFolder::Project,
            writes: &[],
            files: &NoCurrentFiles,
        },
    );
    assert_eq!(
        written(&evaluation.factors),
        vec![
            "stage 3: deny pattern 'rm -rf /' (policy p.toml:5) on `rm -rf /` (via sudo)"
                .to_owned()
        ]
    );
    assert_eq!(evaluation.tier.name(), "danger_zone");
}

#[test]
fn an_over_long_hint_is_refused_not_waved_through() {
    let long = format!("ls {}", "a".repeat(MAX_HINT_BYTES));
    let evaluation = evaluate_step(
        &policy(),
        &StepFacts {
            agent: "a",
            hint: &long,
            outcome: None,
            step: 1,
            max_steps: 3,
            agent_risk: None,
            folder: &WorkingFolder::Project,
            writes: &[],
            files: &NoCurrentFiles,
        },
    );
    assert_eq!(
        (evaluation.verdict, evaluation.stage),
        (Verdict::Pause(PauseKind::FailClosed), Stage::Patterns)
    );
}
