//! A reference model of the safety loop, and the real engine driven by the
//! same random command sequences (proptest-state-machine). After every
//! command the engine's answer must be exactly the model's.
//!
//! The properties this pins down: a blocked agent never gets
//! `continue: true` and never starts an execution (renaming itself in the
//! same session included); a step beyond the limit never proceeds, however
//! executions are restarted; blocks survive a restart; and only an
//! unblock lifts a block.

use std::sync::Arc;

use futures::executor::block_on;
use proptest::prelude::*;
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest, prop_state_machine};
use serde_json::Value;

use crate::{
    config::LoopMode,
    policy::{CompiledPolicy, PolicySource},
    protocol::registry::CallContext,
    store::{Store, records},
    verify::{
        humans::{HumanSettings, Humans},
        operator_override,
    },
};

use super::{
    core::LoopCore,
    executions::{ExecuteRequest, FinishRequest, SafetyLoop, StepRequest},
};

const AGENTS: [&str; 2] = ["alpha", "beta"];
const SESSIONS: usize = 2;
const MAX_STEPS: u32 = 4;
const POLICY: &str = "[defaults]\nmaxAutonomousSteps = 4\ndeny = [\"rm -rf /\"]\nrequiresApproval = [\"git push*\"]\n";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hint {
    Benign,
    Approval,
    Deny,
}

impl Hint {
    fn text(self) -> &'static str {
        match self {
            Self::Benign => "executing shell command: cargo build",
            Self::Approval => "git push origin main",
            Self::Deny => "sudo /bin/rm -rf /",
        }
    }
}

#[derive(Debug, Clone)]
enum Command {
    Execute { agent: usize, session: usize },
    Step { agent: usize, session: usize, hint: Hint },
    Complete { agent: usize, session: usize },
    Abort { agent: usize, session: usize },
    Unblock { agent: usize },
    Restart,
}

/// What the engine must answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Started,
    Finished,
    Refused,
    Continue,
    Pause,
    Stop,
    Done,
}

#[derive(Debug, Clone, Default)]
struct AgentModel {
    blocked: bool,
    /// Counts this agent's blocks: a session taint names the block it came from.
    block_generation: u32,
    running: bool,
    steps: u32,
    paused: bool,
}

#[derive(Debug, Clone)]
struct Model {
    agents: [AgentModel; 2],
    /// For each session, the agent whose block tainted it, and which block.
    taint: [Option<(usize, u32)>; SESSIONS],
    last: Answer,
}

impl Model {
    fn blocked_in(&self, agent: usize, session: usize) -> bool {
        self.agents[agent].blocked
            || self.taint[session].is_some_and(|(other, generation)| {
                self.agents[other].blocked && self.agents[other].block_generation == generation
            })
    }
}

struct Reference;

impl ReferenceStateMachine for Reference {
    type State = Model;
    type Transition = Command;

    fn init_state() -> BoxedStrategy<Model> {
        Just(Model { agents: Default::default(), taint: [None; SESSIONS], last: Answer::Done }).boxed()
    }

    fn transitions(_: &Model) -> BoxedStrategy<Command> {
        let agent = 0..AGENTS.len();
        let session = 0..SESSIONS;
        let hint = prop_oneof![4 => Just(Hint::Benign), 1 => Just(Hint::Approval), 1 => Just(Hint::Deny)];
        prop_oneof![
            3 => (agent.clone(), session.clone()).prop_map(|(agent, session)| Command::Execute { agent, session }),
            8 => (agent.clone(), session.clone(), hint).prop_map(|(agent, session, hint)| Command::Step { agent, session, hint }),
            1 => (agent.clone(), session.clone()).prop_map(|(agent, session)| Command::Complete { agent, session }),
            1 => (agent.clone(), session.clone()).prop_map(|(agent, session)| Command::Abort { agent, session }),
            1 => agent.prop_map(|agent| Command::Unblock { agent }),
            1 => Just(Command::Restart),
        ]
        .boxed()
    }

    fn apply(mut state: Model, command: &Command) -> Model {
        state.last = match *command {
            Command::Execute { agent, session } => {
                if state.blocked_in(agent, session) || state.agents[agent].running {
                    Answer::Refused
                } else {
                    state.agents[agent].running = true;
                    state.agents[agent].steps = 0;
                    Answer::Started
                }
            }
            Command::Step { agent, session, hint } => {
                if state.blocked_in(agent, session) {
                    Answer::Stop
                } else if !state.agents[agent].running {
                    Answer::Pause
                } else {
                    let model = &mut state.agents[agent];
                    model.steps += 1;
                    if model.paused {
                        Answer::Pause
                    } else if model.steps > MAX_STEPS {
                        model.paused = true;
                        Answer::Pause
                    } else {
                        match hint {
                            Hint::Benign => Answer::Continue,
                            Hint::Approval => {
                                model.paused = true;
                                Answer::Pause
                            }
                            Hint::Deny => {
                                model.blocked = true;
                                model.block_generation += 1;
                                state.taint[session] = Some((agent, model.block_generation));
                                Answer::Stop
                            }
                        }
                    }
                }
            }
            Command::Complete { agent, session } | Command::Abort { agent, session } => {
                if state.blocked_in(agent, session) || !state.agents[agent].running {
                    Answer::Refused
                } else {
                    state.agents[agent].running = false;
                    Answer::Finished
                }
            }
            Command::Unblock { agent } => {
                state.agents[agent].blocked = false;
                Answer::Done
            }
            Command::Restart => {
                // The process exits: its sessions end, and with them their
                // executions and the requests waiting for a human.
                for model in &mut state.agents {
                    model.paused = false;
                    model.running = false;
                }
                state.taint = [None; SESSIONS];
                Answer::Done
            }
        };
        state
    }
}

struct Engine {
    _dir: tempfile::TempDir,
    store: Arc<Store>,
    policy: Arc<CompiledPolicy>,
    safety: SafetyLoop,
}

impl Engine {
    fn start(store: Arc<Store>, policy: Arc<CompiledPolicy>) -> SafetyLoop {
        let humans = HumanSettings {
            challenge_ttl_ms: 3_600_000,
            approval_wait: std::time::Duration::from_millis(1),
            verifier: Err(crate::verify::link::VerifierUnavailable::NotFound),
        };
        SafetyLoop::new(Arc::new(LoopCore::new(store.clone(), policy, LoopMode::Enforcing, Humans::new(store, humans))))
    }
}

fn session(index: usize) -> CallContext {
    CallContext::new(format!("session-{index}"))
}

fn directive_answer(value: &Value) -> Answer {
    match (value["continue"].as_bool(), value["stopped"].as_bool()) {
        (Some(true), _) => Answer::Continue,
        (Some(false), Some(true)) => Answer::Stop,
        _ => Answer::Pause,
    }
}

struct RealLoop;

impl StateMachineTest for RealLoop {
    type SystemUnderTest = Engine;
    type Reference = Reference;

    fn init_test(_: &Model) -> Engine {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path()).unwrap());
        let source = PolicySource { path: "model.toml".into(), text: POLICY.into() };
        let policy = Arc::new(CompiledPolicy::compile(&[source]).unwrap());
        let safety = Engine::start(store.clone(), policy.clone());
        Engine { _dir: dir, store, policy, safety }
    }

    fn apply(mut engine: Engine, model: &Model, command: Command) -> Engine {
        let answer = match command {
            Command::Execute { agent, session: s } => {
                let request = ExecuteRequest { agent: AGENTS[agent].into(), goal: None, max_steps: None };
                match block_on(engine.safety.execute(&session(s), request)) {
                    Ok(_) => Answer::Started,
                    Err(_) => Answer::Refused,
                }
            }
            Command::Step { agent, session: s, hint } => {
                let request = StepRequest { agent: AGENTS[agent].into(), hint: hint.text().into(), outcome: None, agent_risk: None };
                let directive = block_on(engine.safety.step(&session(s), request)).to_json();
                let answer = directive_answer(&directive);
                if answer == Answer::Continue {
                    let remaining = directive["stepsRemaining"].as_u64().expect("stepsRemaining");
                    assert!(remaining < u64::from(MAX_STEPS), "a step beyond the limit proceeded: {directive}");
                }
                answer
            }
            Command::Complete { agent, session: s } => {
                let request = FinishRequest { agent: AGENTS[agent].into(), outcome: None, text: None };
                match engine.safety.complete(&session(s), request) {
                    Ok(_) => Answer::Finished,
                    Err(_) => Answer::Refused,
                }
            }
            Command::Abort { agent, session: s } => {
                let request = FinishRequest { agent: AGENTS[agent].into(), outcome: None, text: None };
                match engine.safety.abort(&session(s), request) {
                    Ok(_) => Answer::Finished,
                    Err(_) => Answer::Refused,
                }
            }
            Command::Unblock { agent } => {
                let unblock = operator_override(AGENTS[agent], AGENTS[agent], true).unwrap();
                engine.store.write_durable(|tx| records::remove_block(tx, &unblock)).unwrap();
                Answer::Done
            }
            Command::Restart => {
                engine.safety.core().end_session(None, crate::store::now_ms()).unwrap();
                engine.safety = Engine::start(engine.store.clone(), engine.policy.clone());
                Answer::Done
            }
        };
        assert_eq!(answer, model.last, "engine and model disagree");
        engine
    }

    fn check_invariants(engine: &Engine, model: &Model) {
        for (index, agent) in AGENTS.iter().enumerate() {
            let blocked = engine.store.read(|tx| records::block_of(tx, agent)).unwrap().is_some();
            assert_eq!(blocked, model.agents[index].blocked, "stored block of {agent}");
        }
    }
}

prop_state_machine! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
    #[test]
    fn no_command_sequence_lets_a_blocked_agent_act_or_escape_the_step_limit(sequential 1..60 => RealLoop);
}
