//! Confirmation tokens (`security/confirmation-tokens.md`): `conf_` and
//! 128 random bits, bound to the operation, the SHA-256 of its canonical
//! arguments, the source it belongs to, and the MCP session and agent that
//! received it (spec 2.3.3), valid for five minutes, used at most once,
//! and revoked when their session ends.
//!
//! A token stands for an approval request shown to a human; presenting it
//! proves nothing by itself. The gate redeems it only when the human
//! approved that request, so an agent cannot confirm its own call.

use std::{
    collections::HashMap,
    sync::{Mutex, MutexGuard},
};

use sha2::{Digest, Sha256};

use crate::{protocol::error::AqlError, store::rfc3339};

/// How long a token can be redeemed (the spec's default TTL).
pub const TOKEN_TTL_MS: i64 = 5 * 60 * 1000;

/// What a token was issued for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub operation: String,
    pub params_hash: [u8; 32],
    pub source: String,
    pub session_id: String,
    pub agent: String,
}

impl Scope {
    pub fn new(
        operation: &str,
        canonical_params: &str,
        source: &str,
        session_id: &str,
        agent: &str,
    ) -> Self {
        Self {
            operation: operation.to_owned(),
            params_hash: Sha256::digest(canonical_params.as_bytes()).into(),
            source: source.to_owned(),
            session_id: session_id.to_owned(),
            agent: agent.to_owned(),
        }
    }
}

struct Issued {
    scope: Scope,
    approval_id: String,
    expires_at: i64,
    used: bool,
}

#[derive(Default)]
pub struct ConfirmationTokens {
    issued: Mutex<HashMap<String, Issued>>,
}

impl ConfirmationTokens {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Issued>> {
        // Entries are replaced whole: a panic elsewhere cannot leave one
        // half-written.
        self.issued.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A fresh token for `scope`, standing for `approval_id`; `None` when
    /// the OS cannot supply randomness (the caller refuses the call).
    pub fn issue(&self, scope: Scope, approval_id: &str, now: i64) -> Option<(String, i64)> {
        let mut bytes = [0_u8; 16];
        getrandom::fill(&mut bytes).ok()?;
        let token = format!("conf_{}", crate::hex::encode(&bytes));
        let expires_at = now + TOKEN_TTL_MS;
        let mut issued = self.lock();
        issued.retain(|_, entry| entry.expires_at > now && !entry.used);
        issued.insert(
            token.clone(),
            Issued { scope, approval_id: approval_id.to_owned(), expires_at, used: false },
        );
        Some((token, expires_at))
    }

    /// The approval a token stands for, if it is known, unexpired, unused
    /// and presented for exactly the call it was issued for.
    pub fn check(&self, token: &str, scope: &Scope, now: i64) -> Result<String, AqlError> {
        let issued = self.lock();
        let Some(entry) = issued.get(token) else {
            return Err(AqlError::token_invalid(token, "no such confirmation token"));
        };
        if entry.used {
            return Err(AqlError::token_used(token));
        }
        if entry.expires_at <= now {
            return Err(AqlError::token_expired(token, &rfc3339(entry.expires_at), &rfc3339(now)));
        }
        if entry.scope.session_id != scope.session_id || entry.scope.agent != scope.agent {
            return Err(AqlError::token_invalid(
                token,
                "it was issued to another session or agent",
            ));
        }
        let (issued_for, requested) = (&entry.scope.operation, &scope.operation);
        if entry.scope.source != scope.source || issued_for != requested {
            return Err(AqlError::token_scope_mismatch(
                token,
                issued_for,
                requested,
                &format!("operation '{issued_for}' of '{}'", entry.scope.source),
            ));
        }
        if entry.scope.params_hash != scope.params_hash {
            return Err(AqlError::token_scope_mismatch(
                token,
                issued_for,
                requested,
                "the same operation with other parameters",
            ));
        }
        Ok(entry.approval_id.clone())
    }

    /// Revokes every token issued in `session` (it ended).
    pub fn revoke_session(&self, session: &str) {
        self.lock().retain(|_, entry| entry.scope.session_id != session);
    }

    /// Revokes every token (the process is exiting).
    pub fn revoke_all(&self) {
        self.lock().clear();
    }

    /// Marks a token used: its human has answered (either way).
    pub fn spend(&self, token: &str) {
        if let Some(entry) = self.lock().get_mut(token) {
            entry.used = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::error::ErrorCode;

    #[test]
    fn a_token_is_bound_to_its_call_and_single_use() {
        let tokens = ConfirmationTokens::default();
        let scope = Scope::new("fs__write_file", r#"{"path":"a"}"#, "fs", "s1", "agent");
        let (token, expires_at) = tokens.issue(scope.clone(), "approval-1", 1_000).unwrap();
        assert!(token.starts_with("conf_") && token.len() == 5 + 32, "{token}");
        assert_eq!(expires_at, 1_000 + TOKEN_TTL_MS);
        assert_eq!(tokens.check(&token, &scope, 2_000).unwrap(), "approval-1");

        let other_params = Scope::new("fs__write_file", r#"{"path":"b"}"#, "fs", "s1", "agent");
        assert_eq!(
            tokens.check(&token, &other_params, 2_000).unwrap_err().code,
            ErrorCode::TokenScopeMismatch
        );
        let other_op = Scope::new("fs__move_file", r#"{"path":"a"}"#, "fs", "s1", "agent");
        let mismatch = tokens.check(&token, &other_op, 2_000).unwrap_err();
        assert_eq!(mismatch.code, ErrorCode::TokenScopeMismatch);
        assert_eq!(
            (
                &mismatch.details["token"],
                &mismatch.details["token_operation"],
                &mismatch.details["requested_operation"]
            ),
            (&token.clone().into(), &"fs__write_file".into(), &"fs__move_file".into())
        );
        let other_source = Scope::new("fs__write_file", r#"{"path":"a"}"#, "gh", "s1", "agent");
        assert_eq!(
            tokens.check(&token, &other_source, 2_000).unwrap_err().code,
            ErrorCode::TokenScopeMismatch
        );
        let other_session = Scope::new("fs__write_file", r#"{"path":"a"}"#, "fs", "s2", "agent");
        assert_eq!(
            tokens.check(&token, &other_session, 2_000).unwrap_err().code,
            ErrorCode::TokenInvalid
        );
        let other_agent = Scope::new("fs__write_file", r#"{"path":"a"}"#, "fs", "s1", "other");
        assert_eq!(
            tokens.check(&token, &other_agent, 2_000).unwrap_err().code,
            ErrorCode::TokenInvalid
        );

        let expired = tokens.check(&token, &scope, expires_at + 1_000).unwrap_err();
        assert_eq!(expired.code, ErrorCode::TokenExpired);
        assert_eq!(
            (expired.details["expired_at"].as_str(), expired.details["current_time"].as_str()),
            (Some("1970-01-01T00:05:01.000Z"), Some("1970-01-01T00:05:02.000Z"))
        );
        assert_eq!(
            tokens.check("conf_nope", &scope, 2_000).unwrap_err().code,
            ErrorCode::TokenInvalid
        );
        tokens.spend(&token);
        assert_eq!(
            tokens.check(&token, &scope, 2_000).unwrap_err().code,
            ErrorCode::TokenAlreadyUsed
        );
        let (second, _) = tokens.issue(scope.clone(), "approval-2", 1_000).unwrap();
        assert_ne!(second, token);
        tokens.revoke_session("s1");
        assert_eq!(
            tokens.check(&second, &scope, 2_000).unwrap_err().code,
            ErrorCode::TokenInvalid,
            "revoked with its session"
        );
    }
}
