//! Failed verification attempts: whom they count against, and the lockout
//! they earn.
//!
//! A challenge's id is no secret (the danger-zone broadcast and
//! `get_execution_state` carry it), so any session can submit codes for
//! it. Only attempts from the blocked agent's own sessions may spend the
//! challenge or count against the agent; attempts from any other session
//! count against that session alone, so nobody can burn another agent's
//! challenge or lock it out. Either subject is allowed
//! [`FAILURES_PER_WINDOW`] failures per [`FAILURE_WINDOW_MS`]; then a
//! lockout that doubles with each repetition, capped at
//! [`MAX_LOCKOUT_MS`].

use crate::store::Tx;

use crate::store::{StoreError, records};

/// Failed verifications per subject per window before a lockout.
pub const FAILURES_PER_WINDOW: u32 = 10;
pub const FAILURE_WINDOW_MS: i64 = 60 * 1000;
/// The longest lockout, however often it repeats.
pub const MAX_LOCKOUT_MS: i64 = 60 * 60 * 1000;

/// Whom a failed attempt counts against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject<'a> {
    /// The agent whose challenge it is, attempting from its own session.
    Agent(&'a str),
    /// Another session.
    Session(&'a str),
}

impl Subject<'_> {
    /// The key its failures and lockouts are stored under.
    pub fn key(&self) -> String {
        match self {
            Self::Agent(name) => format!("agent:{name}"),
            Self::Session(id) => format!("session:{id}"),
        }
    }
}

/// How long the lockout of the given level lasts: one window, doubling
/// per level, at most [`MAX_LOCKOUT_MS`].
pub fn lockout_ms(level: u32) -> i64 {
    FAILURE_WINDOW_MS.saturating_mul(1_i64 << level.min(32)).min(MAX_LOCKOUT_MS)
}

/// Until when the subject is locked out, if it is at `now`.
pub fn locked_until(
    tx: &Tx<'_>,
    subject: &Subject<'_>,
    now: i64,
) -> Result<Option<i64>, StoreError> {
    Ok(records::lockout(tx, &subject.key())?.map(|(until, _)| until).filter(|until| *until > now))
}

/// Records one failure against the subject; returns the end of the
/// lockout it earned, if it earned one.
pub fn record_failure(
    tx: &Tx<'_>,
    subject: &Subject<'_>,
    now: i64,
) -> Result<Option<i64>, StoreError> {
    let key = subject.key();
    records::insert_failure(tx, &key, now)?;
    if records::failures_since(tx, &key, now - FAILURE_WINDOW_MS)? < FAILURES_PER_WINDOW {
        return Ok(None);
    }
    let level = records::lockout(tx, &key)?.map_or(0, |(_, level)| level.saturating_add(1));
    let until = now + lockout_ms(level);
    records::set_lockout(tx, &key, until, level)?;
    Ok(Some(until))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lockouts_double_and_stop_at_an_hour() {
        let minutes: Vec<i64> = (0..9).map(|level| lockout_ms(level) / 60_000).collect();
        assert_eq!(minutes, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(lockout_ms(u32::MAX), MAX_LOCKOUT_MS);
    }

    #[test]
    fn subjects_never_share_a_key() {
        assert_ne!(Subject::Agent("x").key(), Subject::Session("x").key());
    }
}
