//! Humans in the loop, and proof that a human, not the agent, decided.
//!
//! `humans` raises requests (challenges) and asks through `link`, the
//! verifier process that shows codes and approval requests; `code` checks
//! a typed code against the hash it sent, `challenge` is a code
//! challenge's life as a typed state machine, and `attempts` limits wrong
//! ones; `approvals` holds the answers until they are collected (the
//! loop's `safety::answers` collects them), its refusals typed in
//! `error`. Keeping codes out of action texts is `crate::redact`'s.
//!
//! An [`Unblock`] is the only value that can lift a hard block
//! (`store::records::remove_block` takes one). Its fields are private and
//! it is built only here: by a correct out-of-band code for a challenge
//! ([`code_verified`]), by an operator at an interactive terminal who typed
//! back a fresh code the verifier showed elsewhere ([`operator_code`]), or,
//! only where no channel could show one, by an operator who typed the
//! agent's name back ([`operator_override`]). An approval exists
//! only as a `link::Approved`, built from the verifier's answer. No MCP
//! operation can make either from anything the agent sends.

pub mod approvals;
pub mod attempts;
pub mod challenge;
pub mod code;
pub mod error;
pub mod humans;
pub mod link;

use crate::store::records::CodeHash;
use std::fmt;

use crate::store::records::ChallengeStatus;

/// Proof that a block on `agent` may be lifted.
#[derive(Debug)]
pub struct Unblock {
    agent: String,
    resolution: ChallengeStatus,
}

impl Unblock {
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// How the block was resolved, as recorded on its challenge and audit row.
    pub fn resolution(&self) -> ChallengeStatus {
        self.resolution
    }
}

/// Why an operator override was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverrideRefused {
    /// Standard input is not an interactive terminal (a script or an agent
    /// could be driving it).
    NotATerminal,
    /// The name typed back did not match.
    NameMismatch,
    /// The code typed back is not the one the verifier showed.
    WrongCode,
}

impl fmt::Display for OverrideRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotATerminal => f.write_str("unblock works only from an interactive terminal"),
            Self::NameMismatch => {
                f.write_str("the name typed back does not match; nothing was changed")
            }
            Self::WrongCode => {
                f.write_str("that is not the code that was shown; nothing was changed")
            }
        }
    }
}

/// A block lifted by the right code for its challenge: checks the typed
/// code against the stored salted hash, and only then yields the proof.
pub(crate) fn code_verified(agent: &str, code: &CodeHash, typed: &str) -> Option<Unblock> {
    code::matches(code, typed)
        .then(|| Unblock { agent: agent.to_owned(), resolution: ChallengeStatus::Verified })
}

/// An operator's unblock at an interactive terminal, proven by typing back
/// the code the verifier showed out of band for it: a pseudo-terminal an
/// agent opens gets no further than the name.
pub(crate) fn operator_code(
    agent: &str,
    code: &CodeHash,
    typed: &str,
    stdin_is_terminal: bool,
) -> Result<Unblock, OverrideRefused> {
    if !stdin_is_terminal {
        return Err(OverrideRefused::NotATerminal);
    }
    if !code::matches(code, typed) {
        return Err(OverrideRefused::WrongCode);
    }
    Ok(Unblock { agent: agent.to_owned(), resolution: ChallengeStatus::OperatorCode })
}

/// An operator's override, made at an interactive terminal by typing the
/// agent's name back: only for when no channel could show a code.
pub(crate) fn operator_override(
    agent: &str,
    typed_back: &str,
    stdin_is_terminal: bool,
) -> Result<Unblock, OverrideRefused> {
    if !stdin_is_terminal {
        return Err(OverrideRefused::NotATerminal);
    }
    if typed_back.trim() != agent {
        return Err(OverrideRefused::NameMismatch);
    }
    Ok(Unblock { agent: agent.to_owned(), resolution: ChallengeStatus::OperatorOverride })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_needs_a_terminal_and_the_exact_name() {
        assert_eq!(operator_override("a", "a", false).unwrap_err(), OverrideRefused::NotATerminal);
        assert_eq!(
            operator_override("agent-1", "agent-2", true).unwrap_err(),
            OverrideRefused::NameMismatch
        );
        assert_eq!(operator_override("agent-1", " agent-1\n", true).unwrap().agent(), "agent-1");
    }

    #[test]
    fn an_operator_code_needs_a_terminal_and_the_shown_code() {
        let (code, hash) = code::tests::fresh();
        assert_eq!(
            operator_code("a", &hash, &code, false).unwrap_err(),
            OverrideRefused::NotATerminal
        );
        assert_eq!(operator_code("a", &hash, "a", true).unwrap_err(), OverrideRefused::WrongCode);
        let unblock = operator_code("a", &hash, &code, true).unwrap();
        assert_eq!((unblock.agent(), unblock.resolution()), ("a", ChallengeStatus::OperatorCode));
    }
}
