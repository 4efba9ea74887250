//! The words an audit row is written in: what happened ([`AuditEvent`]),
//! what became of it ([`AuditDecision`]) and where it was decided
//! ([`AuditStage`]), each one enum with one name table (`named_enum!`).
//! Code writes variants, never text; a row read back (from the database
//! or the spool) with a word outside these is an error
//! (`StoreError::UnknownName`), never a guess. The words are the ones
//! rows have always been written with, so older rows and their hashes
//! read back unchanged.
//!
//! Where another vocabulary's value is what a row records (an execution's
//! status, a challenge's), a `From` conversion names its word here, one
//! match per vocabulary, so a variant added there must be given one.

use crate::names::named_enum;

use super::records::{ChallengeKind, ChallengeStatus, ExecutionStatus, PauseKind};

named_enum! {
    /// What happened.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum AuditEvent {
        /// A reported step (`record_execution_step`).
        #[default]
        Step => "step",
        /// A hooked, proxied or adapter call judged at the gate.
        Gate => "gate",
        /// What became of a gated call that was let through.
        Call => "call",
        /// A request the server refused because its own code failed.
        Request => "request",
        Execute => "execute",
        Complete => "complete",
        Abort => "abort",
        /// An execution ended for want of its client.
        Abandon => "abandon",
        /// A session ended, its pending requests cancelled.
        SessionEnd => "session_end",
        /// An agent's `confirm_operation` spending a human's Approve.
        Confirm => "confirm",
        /// A code typed back through `verify_challenge`.
        Verify => "verify",
        /// Too many wrong codes: attempts refused for a while.
        Lockout => "lockout",
        /// A human answered an approval request.
        Approval => "approval",
        /// A pause that ended without a human (expired, its owner gone).
        Pause => "pause",
        /// A fresh code for a block whose code was lost.
        Reissue => "reissue",
        /// An operator lifted, or failed to lift, a block.
        Unblock => "unblock",
        /// A policy loaded or pushed.
        Policy => "policy",
        /// A changed configuration, policy, adapter or server reloaded.
        Reload => "reload",
        /// Rows kept while the database was away, dealt with.
        Spool => "spool",
    }
}

named_enum! {
    /// What became of it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum AuditDecision {
        // The loop's decision (`safety::decision`), one word a situation.
        #[default]
        Continue => "continue",
        Pause => "pause",
        Stop => "stop",
        Refused => "refused",
        WouldStop => "would_stop",
        WouldPause => "would_pause",
        WouldRefuse => "would_refuse",
        Logging => "logging",
        Disabled => "disabled",
        // An execution's status.
        Pending => "pending",
        Started => "started",
        Running => "running",
        Completed => "completed",
        Failed => "failed",
        Cancelled => "cancelled",
        // A gated call's outcome.
        Ok => "ok",
        ToolError => "tool_error",
        AnswerMismatch => "answer_mismatch",
        // A challenge's or an approval's end.
        Approved => "approved",
        Denied => "denied",
        Expired => "expired",
        Used => "used",
        Verified => "verified",
        OperatorCode => "operator_code",
        OperatorOverride => "operator_override",
        LockedOut => "locked_out",
        NewChallenge => "new challenge",
        // Policies, reloads, the spool.
        Loaded => "loaded",
        Pushed => "pushed",
        SetAside => "set_aside",
    }
}

named_enum! {
    /// Where, or by what, it was decided.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum AuditStage {
        // The evaluator's five stages (DESIGN.md 4).
        StepLimitStage => "stage 1",
        PreviousOutcomeStage => "stage 2",
        PatternsStage => "stage 3",
        SafetyTierStage => "stage 4",
        RiskToleranceStage => "stage 5",
        /// The operation itself asks for a human.
        Operation => "operation",
        // Decided before the policy was asked.
        Block => "block",
        Lifecycle => "lifecycle",
        Analysis => "analysis",
        State => "state",
        Trust => "trust",
        Pending => "pending",
        Panic => "panic",
        // Codes and humans.
        RateLimit => "rate_limit",
        Human => "human",
        OtherSession => "other_session",
        Expired => "expired",
        Used => "used",
        Unshown => "unshown",
        WrongCode => "wrong_code",
        OperatorCode => "operator_code",
        OperatorNoChannel => "operator_no_channel",
        // What a challenge or a pause was for.
        Verify => "verify",
        DangerZone => "danger_zone",
        Approval => "approval",
        StepLimit => "step_limit",
        PreviousFailure => "previous_failure",
        Verification => "verification",
        FailClosed => "fail_closed",
        // What was loaded or reloaded.
        Central => "central",
        Config => "config",
        Policy => "policy",
        CentralPolicy => "central policy",
        Adapters => "adapters",
        Servers => "servers",
    }
}

impl From<ExecutionStatus> for AuditDecision {
    fn from(status: ExecutionStatus) -> Self {
        match status {
            ExecutionStatus::Pending => Self::Pending,
            ExecutionStatus::Running => Self::Running,
            ExecutionStatus::Completed => Self::Completed,
            ExecutionStatus::Failed => Self::Failed,
            ExecutionStatus::Cancelled => Self::Cancelled,
        }
    }
}

impl From<ChallengeStatus> for AuditDecision {
    fn from(status: ChallengeStatus) -> Self {
        match status {
            ChallengeStatus::Pending => Self::Pending,
            ChallengeStatus::Approved => Self::Approved,
            ChallengeStatus::Denied => Self::Denied,
            ChallengeStatus::Expired => Self::Expired,
            ChallengeStatus::Used => Self::Used,
            ChallengeStatus::Failed => Self::Failed,
            ChallengeStatus::Verified => Self::Verified,
            ChallengeStatus::OperatorCode => Self::OperatorCode,
            ChallengeStatus::OperatorOverride => Self::OperatorOverride,
            ChallengeStatus::Cancelled => Self::Cancelled,
        }
    }
}

impl From<ChallengeKind> for AuditStage {
    fn from(kind: ChallengeKind) -> Self {
        match kind {
            ChallengeKind::Verify => Self::Verify,
            ChallengeKind::DangerZone => Self::DangerZone,
            ChallengeKind::Approval => Self::Approval,
        }
    }
}

impl From<PauseKind> for AuditStage {
    fn from(kind: PauseKind) -> Self {
        match kind {
            PauseKind::StepLimit => Self::StepLimit,
            PauseKind::PreviousFailure => Self::PreviousFailure,
            PauseKind::Approval => Self::Approval,
            PauseKind::Verification => Self::Verification,
            PauseKind::FailClosed => Self::FailClosed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A converted word is the word its source vocabulary writes, so rows
    /// keep reading as they always have.
    #[test]
    fn converted_words_are_the_source_vocabularies_own() {
        for status in ExecutionStatus::ALL {
            assert_eq!(AuditDecision::from(status).name(), status.name());
        }
        for status in ChallengeStatus::ALL {
            assert_eq!(AuditDecision::from(status).name(), status.name());
        }
        for kind in ChallengeKind::ALL {
            assert_eq!(AuditStage::from(kind).name(), kind.name());
        }
        for kind in PauseKind::ALL {
            assert_eq!(AuditStage::from(kind).name(), kind.name());
        }
    }

    #[test]
    fn every_word_reads_back_as_itself() {
        for event in AuditEvent::ALL {
            assert_eq!(AuditEvent::parse(event.name()), Some(event));
        }
        for decision in AuditDecision::ALL {
            assert_eq!(AuditDecision::parse(decision.name()), Some(decision));
        }
        for stage in AuditStage::ALL {
            assert_eq!(AuditStage::parse(stage.name()), Some(stage));
        }
    }
}
