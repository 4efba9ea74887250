//! The safety-loop operations as MCP-AQL operations, with the parameter
//! names of DESIGN.md section 3 (snake_case, plus the spec's camelCase as
//! aliases): `execute_agent`, `complete_execution`, `abort_execution`,
//! `confirm_operation` on EXECUTE, `record_execution_step` and
//! `verify_challenge` on CREATE, `get_execution_state` on READ. Each parses
//! its parameters, hands them to the executions or to the humans' answers,
//! and serialises the typed result. The three that move an execution
//! through its lifecycle say so in introspection (spec 8.4.5).

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::{
    protocol::{
        error::AqlError,
        params::{ParamSpec, ParamType},
        registry::{
            CallContext, Category, Lifecycle, Operation, OperationFuture, OperationResult,
            OperationSpec, OwnFailures, Registry, RegistryError, ReturnType, ServerFacts,
        },
        request::Params,
        router::Router,
        types::{TypeDef, TypeShape},
    },
    redact::{CODE_PARAM, VERIFY_OPERATION, redact_text},
    store::audit::AuditEvent,
};

use super::{
    answers::HumanAnswers,
    core::LoopCore,
    evaluator::Outcome,
    executions::{ExecuteRequest, FinishRequest, SafetyLoop, StepRequest, tier_names},
    lifecycle::Status,
};

const MAX_AGENT_NAME: usize = 128;

/// Registers the loop's operations and types.
pub fn register(registry: &mut Registry, safety: Arc<SafetyLoop>) -> Result<(), RegistryError> {
    let answers = Arc::new(HumanAnswers::new(safety.core().clone()));
    for kind in [
        Kind::Execute,
        Kind::Step,
        Kind::Complete,
        Kind::Abort,
        Kind::State,
        Kind::Verify,
        Kind::Confirm,
    ] {
        registry.register(Arc::new(LoopOperation {
            spec: kind.spec(),
            kind,
            safety: safety.clone(),
            answers: answers.clone(),
        }))?;
    }
    for def in types() {
        registry.register_type(def);
    }
    Ok(())
}

/// The loop's defaults as introspection data (`_protocol.safety_loop`):
/// the mode, the step limit and risk tolerance agents get when no policy
/// section names them, and the policy's hash, read from the policy in
/// force when asked.
pub struct LoopFacts(pub Arc<LoopCore>);

impl ServerFacts for LoopFacts {
    fn protocol_facts(&self) -> Map<String, Value> {
        let policy = self.0.policy();
        let facts = json!({
            "mode": self.0.mode.name(),
            "max_autonomous_steps": policy.default_max_steps(),
            "risk_tolerance": policy.default_tolerance().name(),
            "policy": policy.hash(),
        });
        Map::from_iter([("safety_loop".to_owned(), facts)])
    }
}

/// A request the server refused because answering it panicked, audited
/// for the agent acting in its session (the operation as the hint: its
/// parameters may hold what must not be stored).
impl OwnFailures for LoopCore {
    fn request_failed(&self, call: &CallContext, operation: &str) {
        let agent = self.acting_agent(call);
        self.audit_own_failure(
            &agent,
            Some(&call.session_id),
            AuditEvent::Request,
            &redact_text(operation),
        );
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Execute,
    Step,
    Complete,
    Abort,
    State,
    Verify,
    Confirm,
}

struct LoopOperation {
    spec: OperationSpec,
    kind: Kind,
    safety: Arc<SafetyLoop>,
    answers: Arc<HumanAnswers>,
}

fn agent_param() -> ParamSpec {
    ParamSpec::required(
        "element_name",
        ParamType::String,
        "The agent's name; blocks and limits apply per agent",
    )
}

/// The lifecycle `execute_agent`, `complete_execution` and
/// `abort_execution` move an execution through: the five core states;
/// `abort_execution` cancels; a failed execution stays failed (a retry is
/// a new `execute_agent`); a call is answered at once, with no progress
/// to report.
fn execution_lifecycle() -> Lifecycle {
    Lifecycle {
        states: Status::ALL.iter().map(|status| status.name()).collect(),
        supports_cancel: true,
        supports_retry: false,
        progress_reporting: false,
    }
}

fn outcome_param(description: &str) -> ParamSpec {
    ParamSpec::optional("outcome", ParamType::String, description)
        .one_of(&["success", "failure", "skipped"])
}

impl Kind {
    fn spec(self) -> OperationSpec {
        let (name, category, description, params, returns, example) = match self {
            Kind::Execute => (
                "execute_agent",
                Category::Execute,
                "Start a monitored execution: from now on report every action with record_execution_step before taking it",
                vec![
                    agent_param(),
                    ParamSpec::optional("parameters", ParamType::Object, "Execution parameters, e.g. { goal: \"...\" }"),
                    ParamSpec::optional("max_autonomous_steps", ParamType::Integer, "Lower the policy's step limit for this execution (never raises it)")
                        .alias("maxAutonomousSteps"),
                ],
                ("ExecutionState", "object", "The new execution, running"),
                json!({ "element_name": "coder", "parameters": { "goal": "fix the failing test" } }),
            ),
            Kind::Step => (
                "record_execution_step",
                Category::Create,
                "Report the action you are about to take and get an AutonomyDirective: proceed only if continue is true",
                vec![
                    agent_param(),
                    ParamSpec::required("next_action_hint", ParamType::String, "The action you intend to take next, specifically (command, tool and target)")
                        .alias("nextActionHint"),
                    ParamSpec::optional("step_description", ParamType::String, "What the step just completed did").alias("stepDescription"),
                    outcome_param("Result of the previous step; failure pauses the agent"),
                    ParamSpec::optional("findings", ParamType::String, "Observations from the completed step"),
                    ParamSpec::optional("risk_score", ParamType::Integer, "Your own 0-100 risk estimate; can raise the computed score, never lower it")
                        .alias("riskScore"),
                ],
                ("AutonomyDirective", "object", "Whether to proceed, and why"),
                json!({ "element_name": "coder", "next_action_hint": "executing shell command: cargo test", "outcome": "success" }),
            ),
            Kind::Complete => (
                "complete_execution",
                Category::Execute,
                "Finish the agent's execution normally (outcome failure marks it failed)",
                vec![agent_param(), outcome_param("How the execution ended"), ParamSpec::optional("summary", ParamType::String, "What was done")],
                ("ExecutionState", "object", "The finished execution"),
                json!({ "element_name": "coder", "outcome": "success", "summary": "tests pass" }),
            ),
            Kind::Abort => (
                "abort_execution",
                Category::Execute,
                "Cancel the agent's execution, e.g. after a stop directive",
                vec![agent_param(), ParamSpec::optional("reason", ParamType::String, "Why it was aborted")],
                ("ExecutionState", "object", "The cancelled execution"),
                json!({ "element_name": "coder", "reason": "user asked to stop" }),
            ),
            Kind::Verify => (
                VERIFY_OPERATION,
                Category::Create,
                "Submit the code a human read from the verification dialog (never guess: one attempt per challenge)",
                vec![
                    ParamSpec::required("challenge_id", ParamType::String, "The verificationId from the notification").alias("challengeId"),
                    ParamSpec::required(CODE_PARAM, ParamType::String, "The code exactly as the human gave it (case, spaces and hyphens do not matter)"),
                ],
                ("VerificationResult", "object", "Whether the challenge was verified"),
                json!({ "challenge_id": "6f1c2d4e-0000-4000-8000-000000000000", "code": "ABCDE-FGHJK-MNPQR-STVWX-YZ012-3" }),
            ),
            Kind::Confirm => (
                "confirm_operation",
                Category::Execute,
                "Wait for a human's answer to an approval request (approvalId from an autonomy_pause notification)",
                vec![ParamSpec::required("approval_id", ParamType::String, "The approvalId from the notification").alias("approvalId")],
                ("ApprovalResult", "object", "Approved, or an error when denied or not yet answered"),
                json!({ "approval_id": "6f1c2d4e-0000-4000-8000-000000000000" }),
            ),
            Kind::State => (
                "get_execution_state",
                Category::Read,
                "The agent's latest execution, whether it is blocked, and any request waiting for a human",
                vec![agent_param()],
                ("ExecutionState", "object", "Execution state, block and pending request"),
                json!({ "element_name": "coder" }),
            ),
        };
        OperationSpec {
            name: name.into(),
            category,
            description: description.into(),
            params,
            returns: ReturnType { name: returns.0, kind: returns.1, description: returns.2 },
            examples: vec![(description.into(), example)],
            source: None,
            origin: None,
            danger_level: None,
            lifecycle: matches!(self, Kind::Execute | Kind::Complete | Kind::Abort)
                .then(execution_lifecycle),
            field_presets: Default::default(),
        }
    }
}

fn agent(operation: &str, params: &Params) -> Result<String, AqlError> {
    let name = params.str("element_name").unwrap_or_default();
    if name.trim().is_empty()
        || name.chars().count() > MAX_AGENT_NAME
        || name.chars().any(char::is_control)
    {
        return Err(AqlError::bad_value(
            operation,
            "element_name",
            &format!("must be 1 to {MAX_AGENT_NAME} printable characters"),
        ));
    }
    Ok(name.to_owned())
}

fn outcome(params: &Params) -> Option<Outcome> {
    params.str("outcome").and_then(Outcome::parse)
}

fn bounded_integer(
    operation: &str,
    params: &Params,
    name: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<Option<i64>, AqlError> {
    let Some(value) = params.get(name) else { return Ok(None) };
    let number = value.as_i64().or_else(|| value.as_f64().map(|f| f as i64));
    match number {
        Some(n) if range.contains(&n) => Ok(Some(n)),
        _ => Err(AqlError::bad_value(
            operation,
            name,
            &format!("must be between {} and {}", range.start(), range.end()),
        )),
    }
}

impl LoopOperation {
    async fn run(&self, call: &CallContext, params: Params) -> OperationResult {
        let operation = self.spec.name.as_str();
        let params = &params;
        match self.kind {
            Kind::Verify => {
                let id = params.str("challenge_id").unwrap_or_default();
                return answer(
                    self.answers
                        .verify_challenge(call, id, params.str(CODE_PARAM).unwrap_or_default())
                        .await,
                );
            }
            Kind::Confirm => {
                return answer(
                    self.answers.confirm(call, params.str("approval_id").unwrap_or_default()).await,
                );
            }
            _ => {}
        }
        let agent = agent(operation, params)?;
        match self.kind {
            Kind::Execute => {
                let max_steps = bounded_integer(
                    operation,
                    params,
                    "max_autonomous_steps",
                    1..=i64::from(u32::MAX),
                )?;
                let goal = params
                    .get("parameters")
                    .and_then(|p| p.get("goal"))
                    .and_then(|g| g.as_str())
                    .map(str::to_owned);
                answer(
                    self.safety
                        .execute(
                            call,
                            ExecuteRequest {
                                agent,
                                goal,
                                max_steps: max_steps.and_then(|n| u32::try_from(n).ok()),
                            },
                        )
                        .await,
                )
            }
            Kind::Step => {
                let agent_risk = bounded_integer(operation, params, "risk_score", 0..=100)?;
                // A code has no business in a hint; it would be stored with it.
                let hint =
                    redact_text(params.str("next_action_hint").unwrap_or_default()).into_owned();
                let request = StepRequest {
                    agent,
                    hint,
                    outcome: outcome(params),
                    agent_risk: agent_risk.and_then(|n| u8::try_from(n).ok()),
                };
                let directive = self.safety.step(call, request).await;
                if !directive.verdict.proceeds() {
                    call.halt.raise();
                }
                Ok(directive.to_json())
            }
            Kind::Complete => answer(self.safety.complete(
                call,
                FinishRequest {
                    agent,
                    outcome: outcome(params),
                    text: params.str("summary").map(str::to_owned),
                },
            )),
            Kind::Abort => answer(self.safety.abort(
                call,
                FinishRequest {
                    agent,
                    outcome: None,
                    text: params.str("reason").map(str::to_owned),
                },
            )),
            Kind::State => answer(self.safety.state(&agent)),
            Kind::Verify | Kind::Confirm => Err(AqlError::internal("operation routed twice")),
        }
    }
}

/// A typed result on the wire; a refusal as the wire's error.
fn answer<T: Serialize, E: Into<AqlError>>(result: Result<T, E>) -> OperationResult {
    let value = result.map_err(Into::into)?;
    serde_json::to_value(value).map_err(|_| AqlError::internal("a result could not be serialised"))
}

impl Operation for LoopOperation {
    fn spec(&self) -> &OperationSpec {
        &self.spec
    }

    fn invoke<'a>(
        &'a self,
        _router: &'a Router,
        call: &'a CallContext,
        params: Params,
    ) -> OperationFuture<'a> {
        Box::pin(self.run(call, params))
    }
}

fn types() -> Vec<TypeDef> {
    use ParamType::{Array, Boolean, Integer, Object, String};
    vec![
        TypeDef {
            name: "AutonomyDirective",
            description: "The answer to record_execution_step: proceed only if continue is true",
            shape: TypeShape::Object(vec![
                ParamSpec::required(
                    "continue",
                    Boolean,
                    "Whether the agent may take the reported action",
                ),
                ParamSpec::required("factors", Array, "Why: the stage and rule that decided"),
                ParamSpec::optional(
                    "stopped",
                    Boolean,
                    "Hard block: cease all actions until a human unblocks",
                ),
                ParamSpec::optional("reason", String, "Why the agent was paused or stopped"),
                ParamSpec::optional("stepsRemaining", Integer, "Steps left before the step limit"),
                ParamSpec::optional("nextStepRisk", String, "SafetyTier of the reported action"),
                ParamSpec::optional(
                    "notifications",
                    Array,
                    "AgentNotification events since the last step",
                ),
            ]),
        },
        TypeDef {
            name: "SafetyTier",
            description: "Risk tier of an action",
            shape: TypeShape::Enum(tier_names()),
        },
        TypeDef {
            name: "AgentNotification",
            description: "An event for the agent (pull-based)",
            shape: TypeShape::Object(vec![
                ParamSpec::required(
                    "type",
                    String,
                    "permission_pending, autonomy_pause, danger_zone, status or error",
                ),
                ParamSpec::required("message", String, "What happened"),
                ParamSpec::optional(
                    "metadata",
                    Object,
                    "verificationId or approvalId, agent, level",
                ),
                ParamSpec::required("timestamp", String, "ISO 8601"),
            ]),
        },
        TypeDef {
            name: "ExecutionState",
            description: "An execution (spec 8.4.3)",
            shape: TypeShape::Object(vec![
                ParamSpec::required("execution_id", String, "Unique id"),
                ParamSpec::required("status", String, "An ExecutionStatus"),
                ParamSpec::optional("started_at", String, "ISO 8601"),
                ParamSpec::optional("finished_at", String, "ISO 8601, once terminal"),
                ParamSpec::optional("steps", Integer, "Steps recorded"),
                ParamSpec::optional("stepsRemaining", Integer, "Steps left before the step limit"),
                ParamSpec::optional(
                    "blocked",
                    Boolean,
                    "Whether the agent is hard-blocked (get_execution_state)",
                ),
            ]),
        },
        TypeDef {
            name: "ExecutionStatus",
            description: "Execution lifecycle states",
            shape: TypeShape::Enum(Status::ALL.map(Status::name).to_vec()),
        },
    ]
}
