//! Every mode x situation through every door, in one table: the same
//! attempt as a step (`record_execution_step`), as a hooked call
//! (`Gate::decide`) and as a proxied call (`Gate::admit`) gets the same
//! answer, the same audit row and the same block afterwards. Each case
//! runs on a fresh state; a situation that needs a standing block or a
//! pause raises it through an enforcing loop on the same state (as a
//! teammate's enforcing dongle would), then asks the loop in the mode
//! under test. No human can be reached, so a request for one is never
//! answered.

use std::{sync::Arc, time::Duration};

use serde_json::{Value, json};

use crate::{
    config::LoopMode,
    gate::{Gate, GateDecision, GatedCall, danger::DangerLevel},
    policy::{CompiledPolicy, PolicySource},
    protocol::registry::CallContext,
    store::{Store, audit, records},
    verify::{
        humans::{HumanSettings, Humans},
        link::VerifierUnavailable,
    },
};

use super::{
    core::LoopCore,
    directive::DirectiveVerdict,
    executions::{ExecuteRequest, SafetyLoop, StepRequest},
};

const POLICY: &str = "[defaults]\nmaxAutonomousSteps = 50\ndeny = [\"rm -rf /\", \"srv__drop*\"]\nrequiresApproval = [\"git push*\", \"srv__push*\"]\n";
const AGENT: &str = "table-agent";
const SESSION: &str = "table-session";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Situation {
    Ordinary,
    /// A deny pattern matches.
    Denied,
    /// A requiresApproval pattern matches.
    NeedsApproval,
    /// Over 8 KiB: the evaluator cannot judge it (fail closed).
    TooLong,
    /// The agent was hard-blocked before (an ordinary action).
    Blocked,
    /// A request for a human holds the agent (an ordinary action).
    Paused,
}

impl Situation {
    /// The action as a step or a hook reports it.
    fn text(self) -> String {
        match self {
            Self::Denied => "sudo /bin/rm -rf /".into(),
            Self::NeedsApproval => "git push origin main".into(),
            Self::TooLong => format!("echo {}", "a".repeat(9 * 1024)),
            Self::Ordinary | Self::Blocked | Self::Paused => "cargo build".into(),
        }
    }

    /// The proxied call that means the same.
    fn proxied(self) -> (&'static str, Value) {
        match self {
            Self::Denied => ("srv__drop", json!({"n": 1})),
            Self::NeedsApproval => ("srv__push", json!({"n": 1})),
            Self::TooLong => ("srv__run", json!({"command": Self::TooLong.text()})),
            Self::Ordinary | Self::Blocked | Self::Paused => ("srv__read", json!({"n": 1})),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DoorKind {
    Step,
    Hook,
    Proxy,
}

/// An answer as every door can say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Continue,
    /// Held back; the agent is not blocked by it.
    Refused,
    /// Held back because the agent is hard-blocked.
    Blocked,
}

/// What each door must answer, the audit row's decision and stage
/// (`Some("stage")`: whichever stage of the evaluator let it through),
/// and whether the agent is blocked afterwards.
struct Expected {
    answer: Answer,
    decision: &'static str,
    stage: Option<&'static str>,
    blocked_after: bool,
}

const fn expect(
    answer: Answer,
    decision: &'static str,
    stage: Option<&'static str>,
    blocked_after: bool,
) -> Expected {
    Expected { answer, decision, stage, blocked_after }
}

/// The rule, whatever the door (README "Modes"): enforcing applies the
/// policy's verdicts; monitoring records them (`would_stop`,
/// `would_pause`) and lets the action through; logging and disabled
/// record without evaluating; a standing hard block refuses in every mode.
fn expected(mode: LoopMode, situation: Situation) -> Expected {
    use Answer::{Blocked, Continue, Refused};
    use Situation as S;
    let evaluated = Some("stage");
    let stage_3 = Some("stage 3");
    match (mode, situation) {
        (_, S::Blocked) => expect(Blocked, "refused", Some("block"), true),
        (LoopMode::Enforcing, S::Ordinary) => expect(Continue, "continue", evaluated, false),
        (LoopMode::Enforcing, S::Denied) => expect(Blocked, "stop", stage_3, true),
        (LoopMode::Enforcing, S::NeedsApproval | S::TooLong) => {
            expect(Refused, "pause", stage_3, false)
        }
        (LoopMode::Enforcing, S::Paused) => expect(Refused, "pause", Some("pending"), false),
        (LoopMode::Monitoring, S::Ordinary | S::Paused) => {
            expect(Continue, "continue", evaluated, false)
        }
        (LoopMode::Monitoring, S::Denied) => expect(Continue, "would_stop", stage_3, false),
        (LoopMode::Monitoring, S::NeedsApproval | S::TooLong) => {
            expect(Continue, "would_pause", stage_3, false)
        }
        (LoopMode::Logging | LoopMode::Disabled, _) => expect(Continue, mode.name(), None, false),
    }
}

fn core(store: &Arc<Store>, policy: &Arc<CompiledPolicy>, mode: LoopMode) -> Arc<LoopCore> {
    let humans = HumanSettings {
        challenge_ttl_ms: 3_600_000,
        approval_wait: Duration::from_millis(50),
        verifier: Err(VerifierUnavailable::NotFound),
    };
    Arc::new(LoopCore::new(store.clone(), policy.clone(), mode, Humans::new(store.clone(), humans)))
}

fn call(session: &str) -> CallContext {
    CallContext::new(session)
}

fn step(safety: &SafetyLoop, session: &str, hint: String) -> super::directive::Directive {
    let request = StepRequest { agent: AGENT.into(), hint, outcome: None, agent_risk: None };
    block_on(safety.step(&call(session), request))
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
}

/// Runs `situation` through `door` in `mode` on a fresh state: the answer,
/// the attempt's audit row (decision, stage) and whether the agent is
/// blocked afterwards.
fn run(
    policy: &Arc<CompiledPolicy>,
    mode: LoopMode,
    situation: Situation,
    door: DoorKind,
) -> (Answer, String, Option<String>, bool) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&dir.path().join("state")).unwrap());
    let tested = core(&store, policy, mode);
    let safety = SafetyLoop::new(tested.clone());
    let gate = Gate::new(tested);
    let request = ExecuteRequest { agent: AGENT.into(), goal: None, max_steps: None };
    block_on(safety.execute(&call(SESSION), request)).unwrap();

    // The standing state, raised by an enforcing loop on the same state.
    let enforcing = SafetyLoop::new(core(&store, policy, LoopMode::Enforcing));
    match situation {
        Situation::Blocked => {
            let raised = step(&enforcing, "other-session", Situation::Denied.text());
            assert_eq!(raised.verdict, DirectiveVerdict::Stop, "{raised:?}");
        }
        Situation::Paused => {
            let raised = step(&enforcing, "other-session", Situation::NeedsApproval.text());
            assert_eq!(raised.verdict, DirectiveVerdict::Hold, "{raised:?}");
        }
        _ => {}
    }
    let before = store.read(|tx| audit::actions_since(tx, 0, Some(AGENT))).unwrap().len();

    let answer = match door {
        DoorKind::Step => {
            let directive = step(&safety, SESSION, situation.text());
            match directive.verdict {
                DirectiveVerdict::Continue => Answer::Continue,
                DirectiveVerdict::Stop => Answer::Blocked,
                DirectiveVerdict::Hold => Answer::Refused,
            }
        }
        DoorKind::Hook => {
            let decided = block_on(gate.decide(&call("hook"), AGENT, &situation.text(), &[]));
            match decided {
                GateDecision::Continue { .. } => Answer::Continue,
                GateDecision::Deny { reason, .. } if reason.contains("hard-blocked") => {
                    Answer::Blocked
                }
                GateDecision::Deny { .. } => Answer::Refused,
                GateDecision::HumanApproved(_) => panic!("no human can be reached"),
            }
        }
        DoorKind::Proxy => {
            let (operation, arguments) = situation.proxied();
            let request = GatedCall {
                operation,
                source: "srv",
                danger: DangerLevel::Safe,
                arguments: &arguments,
                token: None,
                trust: None,
                requires_confirmation: false,
            };
            match block_on(gate.admit(&call(SESSION), request)) {
                Ok(_) => Answer::Continue,
                Err(error) if error.message.contains("hard-blocked") => Answer::Blocked,
                Err(_) => Answer::Refused,
            }
        }
    };
    let rows = store.read(|tx| audit::actions_since(tx, 0, Some(AGENT))).unwrap();
    let written = &rows[before..];
    assert_eq!(written.len(), 1, "one audit row per decision: {written:#?}");
    let row = &written[0];
    assert_eq!(row.event.name(), if door == DoorKind::Step { "step" } else { "gate" });
    let blocked = store.read(|tx| records::block_of(tx, AGENT)).unwrap().is_some();
    (
        answer,
        row.decision.name().to_owned(),
        row.stage.map(|stage| stage.name().to_owned()),
        blocked,
    )
}

#[test]
fn every_mode_and_situation_is_decided_alike_through_every_door() {
    let source = PolicySource { path: "table.toml".into(), text: POLICY.into() };
    let policy = Arc::new(CompiledPolicy::compile(&[source]).unwrap());
    let modes = [LoopMode::Enforcing, LoopMode::Monitoring, LoopMode::Logging, LoopMode::Disabled];
    let situations = [
        Situation::Ordinary,
        Situation::Denied,
        Situation::NeedsApproval,
        Situation::TooLong,
        Situation::Blocked,
        Situation::Paused,
    ];
    let mut failures = Vec::new();
    for mode in modes {
        for situation in situations {
            let want = expected(mode, situation);
            for door in [DoorKind::Step, DoorKind::Hook, DoorKind::Proxy] {
                let (answer, decision, stage, blocked) = run(&policy, mode, situation, door);
                let stage_ok = match (want.stage, stage.as_deref()) {
                    (Some("stage"), Some(got)) => got.starts_with("stage "),
                    (want, got) => want == got,
                };
                if answer != want.answer
                    || decision != want.decision
                    || !stage_ok
                    || blocked != want.blocked_after
                {
                    failures.push(format!(
                        "{mode:?} {situation:?} {door:?}: got {answer:?} {decision} {stage:?} blocked={blocked}, want {:?} {} {:?} blocked={}",
                        want.answer, want.decision, want.stage, want.blocked_after
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
