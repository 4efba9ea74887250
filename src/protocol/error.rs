//! The structured errors of MCP-AQL: a closed set of codes, each with the
//! message template and `details` keys of `error-codes.md`.
//!
//! Every failure an agent can see is an [`AqlError`]. Messages name the
//! operation and parameter involved and never carry internal detail (no file
//! paths, no Rust error text, no stack traces): constructors take only the
//! facts the agent supplied or can act on.

use crate::names::named_enum;
use serde_json::{Map, Value, json};

/// The error codes this server emits. Closed on purpose: a new failure mode
/// needs a deliberate code, not a free-form string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    ValidationMissingParam,
    ValidationInvalidType,
    ValidationInvalidValue,
    ValidationUnknownParam,
    ValidationInvalidEncoding,
    ValidationPayloadTooLarge,
    ValidationEndpointMismatch,
    NotFoundOperation,
    NotFoundResource,
    PermissionDenied,
    ConflictAlreadyExists,
    RateLimitExceeded,
    RateLimitQuotaExhausted,
    PermissionDangerLevelDenied,
    ConfirmationRequired,
    TokenInvalid,
    TokenExpired,
    TokenAlreadyUsed,
    TokenScopeMismatch,
    TransportNetworkError,
    TransportTimeout,
    TransportDnsError,
    TransportConnectionRefused,
    TransportTlsError,
    SerializationParseError,
    AuthCredentialMissing,
    ToolExecutionFailed,
    BatchValidationError,
    InternalError,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ValidationMissingParam => "VALIDATION_MISSING_PARAM",
            Self::ValidationInvalidType => "VALIDATION_INVALID_TYPE",
            Self::ValidationInvalidValue => "VALIDATION_INVALID_VALUE",
            Self::ValidationUnknownParam => "VALIDATION_UNKNOWN_PARAM",
            Self::ValidationInvalidEncoding => "VALIDATION_INVALID_ENCODING",
            Self::ValidationPayloadTooLarge => "VALIDATION_PAYLOAD_TOO_LARGE",
            Self::ValidationEndpointMismatch => "VALIDATION_ENDPOINT_MISMATCH",
            Self::NotFoundOperation => "NOT_FOUND_OPERATION",
            Self::NotFoundResource => "NOT_FOUND_RESOURCE",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::ConflictAlreadyExists => "CONFLICT_ALREADY_EXISTS",
            Self::RateLimitExceeded => "RATE_LIMIT_EXCEEDED",
            Self::RateLimitQuotaExhausted => "RATE_LIMIT_QUOTA_EXHAUSTED",
            Self::PermissionDangerLevelDenied => "PERMISSION_DANGER_LEVEL_DENIED",
            Self::ConfirmationRequired => "CONFIRMATION_REQUIRED",
            Self::TokenInvalid => "TOKEN_INVALID",
            Self::TokenExpired => "TOKEN_EXPIRED",
            Self::TokenAlreadyUsed => "TOKEN_ALREADY_USED",
            Self::TokenScopeMismatch => "TOKEN_SCOPE_MISMATCH",
            Self::TransportNetworkError => "TRANSPORT_NETWORK_ERROR",
            Self::TransportTimeout => "TRANSPORT_TIMEOUT",
            Self::TransportDnsError => "TRANSPORT_DNS_ERROR",
            Self::TransportConnectionRefused => "TRANSPORT_CONNECTION_REFUSED",
            Self::TransportTlsError => "TRANSPORT_TLS_ERROR",
            Self::SerializationParseError => "SERIALIZATION_PARSE_ERROR",
            Self::AuthCredentialMissing => "AUTH_CREDENTIAL_MISSING",
            Self::ToolExecutionFailed => "TOOL_EXECUTION_FAILED",
            Self::BatchValidationError => "BATCH_VALIDATION_ERROR",
            Self::InternalError => "INTERNAL_ERROR",
        }
    }

    /// Whether an agent can recover on its own, which decides MCP's `isError`
    /// (`mcp-integration.md` 4.1.2: recoverable errors travel with
    /// `isError: false`, everything else with `isError: true`).
    pub fn is_recoverable(self) -> bool {
        matches!(
            self,
            Self::ValidationMissingParam
                | Self::ValidationInvalidType
                | Self::ValidationInvalidValue
                | Self::NotFoundOperation
                | Self::NotFoundResource
                | Self::PermissionDenied
                | Self::RateLimitExceeded
                | Self::RateLimitQuotaExhausted
                | Self::PermissionDangerLevelDenied
                | Self::ConfirmationRequired
                | Self::BatchValidationError
        )
    }

    /// Whether the failure is a refusal (by the policy, a human, a block,
    /// a pause, a trust level, a token or a rate limit) rather than a
    /// mistake: a batch halts at a refusal, so nothing that may depend on
    /// the refused item runs (`operations.md` 7.5.2).
    pub fn is_refusal(self) -> bool {
        matches!(
            self,
            Self::PermissionDenied
                | Self::PermissionDangerLevelDenied
                | Self::ConfirmationRequired
                | Self::TokenInvalid
                | Self::TokenExpired
                | Self::TokenAlreadyUsed
                | Self::TokenScopeMismatch
                | Self::RateLimitExceeded
                | Self::RateLimitQuotaExhausted
        )
    }
}

/// What exceeded a payload limit (spec 4.7.5), with its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    RequestSize,
    ResponseSize,
    StringLength,
    ArrayElements,
    NestingDepth,
}

impl LimitKind {
    fn name(self) -> &'static str {
        match self {
            Self::RequestSize => "request_size",
            Self::ResponseSize => "response_size",
            Self::StringLength => "string_length",
            Self::ArrayElements => "array_elements",
            Self::NestingDepth => "nesting_depth",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Self::RequestSize | Self::ResponseSize | Self::StringLength => "bytes",
            Self::ArrayElements => "elements",
            Self::NestingDepth => "levels",
        }
    }
}

named_enum! {
    /// The time window of a rate limit (`error-codes.md` 5.5).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum LimitWindow {
        Second => "second",
        Minute => "minute",
        Hour => "hour",
        Day => "day",
    }
}

/// What a `RATE_LIMIT_EXCEEDED` tells a client about the limit it ran
/// into (`error-codes.md` 5.5). What is not known (an upstream's 429
/// names no limit of its own) is left out, never made up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitState {
    /// The limit and its window, when known.
    pub limit: Option<(u64, LimitWindow)>,
    pub remaining: u64,
    /// How long until a call may go again, when known.
    pub wait: Option<LimitWait>,
}

/// When a refused call may go again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitWait {
    pub retry_after_seconds: u64,
    /// The same moment as an RFC 3339 time.
    pub resets_at: String,
}

impl LimitState {
    /// Adds the spec's `limit`, `window`, `remaining`, `resets_at` and
    /// `retry_after_seconds` to an error's details.
    pub fn add_to(&self, details: &mut Map<String, Value>) {
        if let Some((limit, window)) = self.limit {
            details.insert("limit".into(), limit.into());
            details.insert("window".into(), window.name().into());
        }
        details.insert("remaining".into(), self.remaining.into());
        if let Some(wait) = &self.wait {
            details.insert("resets_at".into(), wait.resets_at.clone().into());
            details.insert("retry_after_seconds".into(), wait.retry_after_seconds.into());
        }
    }
}

/// A failure to report to the agent as `{success:false, error:{…}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct AqlError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Map<String, Value>,
}

fn details(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl AqlError {
    /// An error whose code and details the caller composes (the HTTP
    /// runtime maps an upstream's answers this way). `details` must be a
    /// JSON object; anything else is dropped.
    pub fn new(code: ErrorCode, message: impl Into<String>, details_value: Value) -> Self {
        Self { code, message: message.into(), details: details(details_value) }
    }

    pub fn missing_param(operation: &str, param: &str) -> Self {
        Self {
            code: ErrorCode::ValidationMissingParam,
            message: format!("Missing required parameter '{param}' for operation '{operation}'"),
            details: details(json!({ "param_name": param, "operation": operation })),
        }
    }

    pub fn missing_operation() -> Self {
        Self {
            code: ErrorCode::ValidationMissingParam,
            message: "Missing required parameter 'operation'. Use { operation: \"introspect\", params: { query: \"operations\" } } to list operations".into(),
            details: details(json!({ "param_name": "operation" })),
        }
    }

    /// `operation` is `None` for request-level fields such as `operation`
    /// and `params` themselves. The offending value is echoed back only when
    /// it is a short scalar, so a huge or secret-bearing value is not
    /// repeated into the agent's context.
    pub fn invalid_type(
        operation: Option<&str>,
        param: &str,
        expected: &str,
        value: &Value,
    ) -> Self {
        let actual = json_type_name(value);
        let mut d = details(json!({
            "param_name": param,
            "expected_type": expected,
            "actual_type": actual,
        }));
        if let Some(op) = operation {
            d.insert("operation".into(), op.into());
        }
        if is_short_scalar(value) {
            d.insert("value".into(), value.clone());
        }
        Self {
            code: ErrorCode::ValidationInvalidType,
            message: format!("Parameter '{param}' expected '{expected}', got '{actual}'"),
            details: d,
        }
    }

    pub fn invalid_value(operation: &str, param: &str, allowed: &[Value], value: &Value) -> Self {
        let allowed_text = allowed
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", ");
        let mut d = details(json!({
            "param_name": param,
            "operation": operation,
            "allowed_values": allowed,
        }));
        if is_short_scalar(value) {
            d.insert("value".into(), value.clone());
        }
        Self {
            code: ErrorCode::ValidationInvalidValue,
            message: format!(
                "Parameter '{param}' of operation '{operation}' must be one of: {allowed_text}"
            ),
            details: d,
        }
    }

    pub fn duplicate_param(operation: &str, param: &str, first: &str, second: &str) -> Self {
        Self {
            code: ErrorCode::ValidationInvalidValue,
            message: format!(
                "Parameter '{param}' of operation '{operation}' was given twice, as '{first}' and '{second}'; give it once"
            ),
            details: details(
                json!({ "param_name": param, "operation": operation, "given_as": [first, second] }),
            ),
        }
    }

    pub fn unknown_params(operation: &str, unknown: &[String], valid: &[&str]) -> Self {
        Self {
            code: ErrorCode::ValidationUnknownParam,
            message: format!(
                "Unknown parameter(s) for operation '{operation}': {}",
                unknown.join(", ")
            ),
            details: details(json!({
                "operation": operation,
                "unknown_params": unknown,
                "valid_params": valid,
            })),
        }
    }

    pub fn invalid_encoding(location: &str, reason: &str, byte_offset: Option<usize>) -> Self {
        let mut d = details(json!({ "location": location, "reason": reason }));
        if let Some(offset) = byte_offset {
            d.insert("byte_offset".into(), offset.into());
        }
        Self {
            code: ErrorCode::ValidationInvalidEncoding,
            message: format!("Invalid character encoding in request: {reason} at {location}"),
            details: d,
        }
    }

    pub fn payload_too_large(kind: LimitKind, limit: usize, actual: usize) -> Self {
        Self {
            code: ErrorCode::ValidationPayloadTooLarge,
            message: format!("Payload exceeds {} limit of {limit}", kind.name()),
            details: details(json!({
                "limit_type": kind.name(),
                "limit_value": limit,
                "actual_value": actual,
                "unit": kind.unit(),
            })),
        }
    }

    pub fn endpoint_mismatch(operation: &str, expected_tool: &str, actual_tool: &str) -> Self {
        Self {
            code: ErrorCode::ValidationEndpointMismatch,
            message: format!(
                "Operation '{operation}' must be called via {expected_tool}, not {actual_tool}"
            ),
            details: details(json!({
                "operation": operation,
                "expected_endpoint": expected_tool,
                "actual_endpoint": actual_tool,
            })),
        }
    }

    pub fn unknown_operation(operation: &str, available: &[&str]) -> Self {
        Self {
            code: ErrorCode::NotFoundOperation,
            message: format!(
                "Unknown operation: '{operation}'. Use introspect to discover supported operations"
            ),
            details: details(json!({ "operation": operation, "available": available })),
        }
    }

    /// A parameter value the operation cannot accept, with why.
    pub fn bad_value(operation: &str, param: &str, why: &str) -> Self {
        Self {
            code: ErrorCode::ValidationInvalidValue,
            message: format!("Parameter '{param}' of operation '{operation}' {why}"),
            details: details(json!({ "param_name": param, "operation": operation })),
        }
    }

    /// The agent is hard-blocked; only a human can lift it.
    pub fn agent_blocked(agent: &str, verification_id: &str, reason: &str) -> Self {
        Self {
            code: ErrorCode::PermissionDenied,
            message: format!(
                "Agent '{agent}' is hard-blocked ({reason}). A human must complete challenge {verification_id} out of band, or an operator must run `safety-dongle unblock {agent}` at a terminal"
            ),
            details: details(
                json!({ "agent": agent, "blocked": true, "verificationId": verification_id }),
            ),
        }
    }

    pub fn no_active_execution(agent: &str) -> Self {
        Self {
            code: ErrorCode::NotFoundResource,
            message: format!(
                "Agent '{agent}' has no running execution; start one with execute_agent"
            ),
            details: details(
                json!({ "resource_type": "execution", "resource_id": agent, "agent": agent }),
            ),
        }
    }

    pub fn execution_exists(agent: &str, execution_id: &str) -> Self {
        Self {
            code: ErrorCode::ConflictAlreadyExists,
            message: format!(
                "Agent '{agent}' already has a running execution ({execution_id}); complete or abort it first"
            ),
            details: details(json!({ "agent": agent, "execution_id": execution_id })),
        }
    }

    /// A token (a confirmation token, or a challenge's or approval's id
    /// used as one) that cannot be used; `error-codes.md` 5.9.
    pub fn token_invalid(token: &str, why: &str) -> Self {
        Self {
            code: ErrorCode::TokenInvalid,
            message: format!(
                "Challenge, approval or confirmation token '{token}' cannot be used: {why}"
            ),
            details: details(json!({ "token": token })),
        }
    }

    /// `expired_at` and `current_time` are RFC 3339 times (`error-codes.md`
    /// 5.10).
    pub fn token_expired(token: &str, expired_at: &str, current_time: &str) -> Self {
        Self {
            code: ErrorCode::TokenExpired,
            message: format!(
                "Challenge, approval or confirmation token '{token}' expired at {expired_at}; a new one is issued on the agent's next call"
            ),
            details: details(
                json!({ "token": token, "expired_at": expired_at, "current_time": current_time }),
            ),
        }
    }

    pub fn token_used(token: &str) -> Self {
        Self {
            code: ErrorCode::TokenAlreadyUsed,
            message: format!(
                "Challenge, approval or confirmation token '{token}' was already used; each allows one attempt"
            ),
            details: details(json!({ "token": token })),
        }
    }

    /// A wrong code. Says nothing about how it was wrong.
    pub fn verification_failed(challenge_id: &str) -> Self {
        Self {
            code: ErrorCode::PermissionDenied,
            message: format!(
                "Verification failed for challenge '{challenge_id}'; the challenge is used up"
            ),
            details: details(json!({ "challenge_id": challenge_id, "verified": false })),
        }
    }

    /// A wrong code from a session other than the challenge's agent's: it
    /// neither spends the challenge nor counts against that agent.
    pub fn verification_failed_elsewhere(challenge_id: &str) -> Self {
        Self {
            code: ErrorCode::PermissionDenied,
            message: format!(
                "Verification failed for challenge '{challenge_id}'; this session is not the blocked agent's, so the challenge stays open for it and the failure counts against this session"
            ),
            details: details(json!({ "challenge_id": challenge_id, "verified": false })),
        }
    }

    /// A session other than the challenge's agent's failed too often.
    pub fn session_rate_limited(limit: &LimitState) -> Self {
        let mut error = Self {
            code: ErrorCode::RateLimitExceeded,
            message: format!("Too many failed verifications from this session{}", try_again(limit)),
            details: details(json!({ "scope": "session" })),
        };
        limit.add_to(&mut error.details);
        error
    }

    pub fn rate_limited(agent: &str, limit: &LimitState) -> Self {
        let mut error = Self {
            code: ErrorCode::RateLimitExceeded,
            message: format!(
                "Too many failed verifications for agent '{agent}'{}",
                try_again(limit)
            ),
            details: details(json!({ "agent": agent })),
        };
        limit.add_to(&mut error.details);
        error
    }

    /// A human has not answered an approval request within one call's
    /// wait: recoverable by asking again (`how_to_ask_again`, and as a
    /// request when it is one), which waits on, until the request closes
    /// at `closes_at`. The spec's fields for what to send again are added
    /// by [`Self::to_repeat`].
    #[expect(
        clippy::indexing_slicing,
        reason = "pending is a JSON object built here: indexing it inserts a key"
    )]
    pub fn confirmation_pending(
        approval_id: &str,
        closes_at: &str,
        how_to_ask_again: &str,
        retry: Option<Value>,
    ) -> Self {
        let mut pending =
            json!({ "approval_id": approval_id, "status": "pending", "expires_at": closes_at });
        if let Some(retry) = retry {
            pending["retry"] = retry;
        }
        Self {
            code: ErrorCode::ConfirmationRequired,
            message: format!(
                "The human has not answered approval request '{approval_id}' yet (it stays open until {closes_at}): {how_to_ask_again} to keep waiting. Do not take the action until they approve."
            ),
            details: details(pending),
        }
    }

    /// A pending answer with the spec's fields (`CONFIRMATION_REQUIRED`)
    /// naming what to send again: the operation, its danger level and the
    /// token the retry carries.
    #[must_use]
    pub fn to_repeat(mut self, operation: &str, danger_level: &str, token: &str) -> Self {
        if self.code == ErrorCode::ConfirmationRequired {
            self.details.insert("operation".into(), json!(operation));
            self.details.insert("danger_level".into(), json!(danger_level));
            self.details.insert("confirmation_token".into(), json!(token));
        }
        self
    }

    pub fn approval_denied(approval_id: &str) -> Self {
        Self {
            code: ErrorCode::PermissionDenied,
            message: format!("A human denied approval '{approval_id}': do not take that action"),
            details: details(json!({ "approval_id": approval_id, "approved": false })),
        }
    }

    /// A proxied call the gate sent to a human: retry it with the token
    /// once the human approved (`confirmation-tokens.md`).
    pub fn confirmation_required(
        operation: &str,
        danger_level: &str,
        reason: &str,
        token: &str,
        approval_id: &str,
        expires_at: &str,
    ) -> Self {
        Self {
            code: ErrorCode::ConfirmationRequired,
            message: format!(
                "This operation requires confirmation: a human was asked to approve it ({reason}). Once they approve, repeat the same call with params._confirmation = \"{token}\""
            ),
            details: details(json!({
                "operation": operation,
                "danger_level": danger_level,
                "reasons": [reason],
                "confirmation_token": token,
                "approval_id": approval_id,
                "expires_at": expires_at,
            })),
        }
    }

    /// A proxied call the policy refused.
    pub fn refused_by_policy(operation: &str, reason: &str, factors: &[String]) -> Self {
        Self {
            code: ErrorCode::PermissionDenied,
            message: format!(
                "Permission denied: '{operation}' was refused by the safety policy: {reason}"
            ),
            details: details(
                json!({ "operation": operation, "reason": reason, "factors": factors }),
            ),
        }
    }

    /// An adapter operation whose danger level its trust level does not
    /// allow (`danger-levels.md` 4.4).
    pub fn danger_level_denied(
        operation: &str,
        danger_level: &str,
        trust: &str,
        minimum: &str,
    ) -> Self {
        Self {
            code: ErrorCode::PermissionDangerLevelDenied,
            message: format!(
                "Operation '{operation}' (danger: {danger_level}) denied for adapter trust level '{trust}'; it needs at least '{minimum}'"
            ),
            details: details(
                json!({ "operation": operation, "danger_level": danger_level, "adapter_trust": trust, "minimum_trust_required": minimum }),
            ),
        }
    }

    /// A token presented for another call than the one it was issued
    /// for: another operation, or the same one with other parameters
    /// (`what`); `error-codes.md` 5.12.
    pub fn token_scope_mismatch(
        token: &str,
        token_operation: &str,
        requested_operation: &str,
        what: &str,
    ) -> Self {
        Self {
            code: ErrorCode::TokenScopeMismatch,
            message: format!("Confirmation token '{token}' was issued for {what}"),
            details: details(
                json!({ "token": token, "token_operation": token_operation, "requested_operation": requested_operation }),
            ),
        }
    }

    /// A downstream server that cannot take calls now.
    pub fn downstream_unavailable(server: &str, why: &str) -> Self {
        Self {
            code: ErrorCode::TransportNetworkError,
            message: format!("Downstream server '{server}' is unavailable: {why}"),
            details: details(json!({ "server": server, "reason": why })),
        }
    }

    /// A downstream call the client cancelled: not to be retried.
    pub fn downstream_cancelled(server: &str) -> Self {
        Self {
            code: ErrorCode::TransportNetworkError,
            message: format!(
                "The call to downstream server '{server}' was cancelled by the client"
            ),
            details: details(json!({ "server": server, "cancelled": true })),
        }
    }

    pub fn downstream_timeout(server: &str, tool: &str, timeout_secs: u64) -> Self {
        Self {
            code: ErrorCode::TransportTimeout,
            message: format!(
                "Downstream server '{server}' did not answer '{tool}' within {timeout_secs} s; the call was cancelled"
            ),
            details: details(
                json!({ "server": server, "tool": tool, "timeout_secs": timeout_secs }),
            ),
        }
    }

    /// A downstream tool that answered with `isError`: its own content
    /// travels along, as the downstream wrote it.
    pub fn tool_failed(server: &str, tool: &str, summary: &str, result: Value) -> Self {
        Self {
            code: ErrorCode::ToolExecutionFailed,
            message: format!(
                "Tool '{tool}' of downstream server '{server}' reported an error: {summary}"
            ),
            details: details(json!({ "server": server, "tool": tool, "result": result })),
        }
    }

    /// Arguments the downstream's own input schema refuses.
    pub fn schema_violation(operation: &str, problems: &[String]) -> Self {
        Self {
            code: ErrorCode::ValidationInvalidValue,
            message: format!("Invalid parameters for '{operation}': {}", problems.join("; ")),
            details: details(json!({ "operation": operation, "problems": problems })),
        }
    }

    /// An upstream answered something other than what it declared (its
    /// output or response schema); the answer is withheld.
    pub fn answer_mismatch(operation: &str, problems: &[String]) -> Self {
        Self {
            code: ErrorCode::SerializationParseError,
            message: format!(
                "The answer to '{operation}' does not match its declared output schema, so it is withheld: {}",
                problems.join("; ")
            ),
            details: details(json!({ "operation": operation, "problems": problems })),
        }
    }

    /// A batch request that cannot run at all (no operations, an item that
    /// is not an operation). Batch-level errors carry no details (the
    /// batch schema's failure response has none).
    pub fn batch_invalid(why: impl Into<String>) -> Self {
        Self { code: ErrorCode::BatchValidationError, message: why.into(), details: Map::new() }
    }

    /// For failures inside the server. `what` must be a fixed description
    /// chosen by the caller, never the text of an underlying error.
    pub fn internal(what: &'static str) -> Self {
        Self {
            code: ErrorCode::InternalError,
            message: format!("Internal error: '{what}'"),
            details: Map::new(),
        }
    }
}

/// "; try again in N s", when the wait is known.
fn try_again(limit: &LimitState) -> String {
    limit
        .wait
        .as_ref()
        .map(|wait| format!("; try again in {} s", wait.retry_after_seconds))
        .unwrap_or_default()
}

/// The JSON type name an agent would recognise (`integer` for whole numbers).
pub fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_short_scalar(value: &Value) -> bool {
    match value {
        Value::String(s) => s.len() <= 64,
        Value::Bool(_) | Value::Number(_) | Value::Null => true,
        Value::Array(_) | Value::Object(_) => false,
    }
}

/// On the wire, a store failure is an internal error that names nothing of
/// the state; the detail goes to the log.
impl From<crate::store::StoreError> for AqlError {
    fn from(error: crate::store::StoreError) -> Self {
        tracing::error!(%error, "safety state store failed");
        Self::internal("safety state unavailable")
    }
}
