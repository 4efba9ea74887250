//! A code challenge's life as types. Loaded, it is [`Pending`] only while
//! it waits, unexpired, for a code; one attempt consumes it: the right code
//! makes it [`Verified`], which alone yields the [`Unblock`] proof that
//! lifts a block, and a wrong one makes it [`Failed`], which counts toward
//! a lockout. Each transition is written in the caller's transaction.

use crate::store::Tx;

use crate::store::{
    StoreError,
    records::{self, ChallengeKind, ChallengeRow, ChallengeStatus, CodeHash},
};

use super::{Unblock, code_verified};

/// What an id names.
#[derive(Debug)]
pub enum Loaded {
    Pending(Pending),
    /// An Approve/Deny request: no code answers it.
    Approval(ChallengeRow),
    /// Answered, spent or withdrawn already.
    Spent(ChallengeRow),
    /// Its time ran out (marked so on the way).
    Expired(ChallengeRow),
    Unknown,
}

/// A code challenge waiting for its code.
#[derive(Debug)]
pub struct Pending {
    row: ChallengeRow,
    hash: Option<CodeHash>,
}

/// The right code was typed.
#[derive(Debug)]
pub struct Verified {
    row: ChallengeRow,
    unblock: Unblock,
}

/// Why an attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedBecause {
    WrongCode,
    /// No code was ever shown for it (the verifier sent no hash).
    Unshown,
}

/// A wrong attempt.
#[derive(Debug)]
pub struct Failed {
    row: ChallengeRow,
    pub because: FailedBecause,
}

/// One attempt's result.
#[derive(Debug)]
pub enum Attempt {
    Verified(Verified),
    Failed(Failed),
}

impl Loaded {
    /// Loads challenge `id` as of `now`; an expired one is marked expired.
    pub fn load(tx: &Tx<'_>, id: &str, now: i64) -> Result<Self, StoreError> {
        let Some((row, hash)) = records::challenge(tx, id)? else { return Ok(Self::Unknown) };
        if row.kind == ChallengeKind::Approval {
            return Ok(Self::Approval(row));
        }
        if row.status != ChallengeStatus::Pending {
            return Ok(Self::Spent(row));
        }
        if row.expires_at <= now {
            records::set_challenge_status(tx, id, ChallengeStatus::Expired)?;
            return Ok(Self::Expired(row));
        }
        Ok(Self::Pending(Pending { row, hash }))
    }
}

impl Pending {
    pub fn row(&self) -> &ChallengeRow {
        &self.row
    }

    /// Checks one typed code against the stored salted hash.
    pub fn attempt(self, typed: &str) -> Attempt {
        let Some(hash) = &self.hash else {
            return Attempt::Failed(Failed { row: self.row, because: FailedBecause::Unshown });
        };
        match code_verified(&self.row.agent, hash, typed) {
            Some(unblock) => Attempt::Verified(Verified { row: self.row, unblock }),
            None => Attempt::Failed(Failed { row: self.row, because: FailedBecause::WrongCode }),
        }
    }
}

impl Verified {
    /// Records the verification; a danger-zone challenge's block is lifted
    /// with the proof. Returns the challenge and how it was resolved.
    pub fn commit(self, tx: &Tx<'_>) -> Result<(ChallengeRow, ChallengeStatus), StoreError> {
        records::set_challenge_status(tx, &self.row.id, ChallengeStatus::Verified)?;
        if self.row.kind == ChallengeKind::DangerZone {
            records::remove_block(tx, &self.unblock)?;
        }
        Ok((self.row, self.unblock.resolution()))
    }
}

impl Failed {
    pub fn row(&self) -> &ChallengeRow {
        &self.row
    }

    /// Spends the challenge (only the agent's own attempts do).
    pub fn spend(&self, tx: &Tx<'_>) -> Result<(), StoreError> {
        records::set_challenge_status(tx, &self.row.id, ChallengeStatus::Failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{store::Store, verify::code};

    fn challenge(store: &Store, kind: ChallengeKind, expires_at: i64) -> (String, String) {
        let (code, hash) = code::tests::fresh();
        let id = uuid::Uuid::new_v4().to_string();
        store
            .write(|tx| {
                records::insert_challenge(
                    tx,
                    &ChallengeRow {
                        id: id.clone(),
                        agent: "a".into(),
                        kind,
                        action: "x".into(),
                        reason: "r".into(),
                        created_at: 0,
                        expires_at,
                        status: ChallengeStatus::Pending,
                        durable: true,
                        owner: crate::store::owner::Owner::current(),
                        session_id: None,
                        pause: None,
                    },
                )?;
                records::set_challenge_hash(tx, &id, &hash)
            })
            .unwrap();
        (id, code)
    }

    #[test]
    fn one_attempt_consumes_a_pending_challenge_and_only_the_code_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (id, code) = challenge(&store, ChallengeKind::DangerZone, 1_000);
        store
            .write(|tx| {
                let Loaded::Pending(pending) = Loaded::load(tx, &id, 10)? else {
                    panic!("pending")
                };
                let Attempt::Failed(failed) = pending.attempt("WRONG") else {
                    panic!("a wrong code failed")
                };
                assert_eq!(failed.because, FailedBecause::WrongCode);
                let Loaded::Pending(pending) = Loaded::load(tx, &id, 10)? else {
                    panic!("an unspent failure leaves it pending")
                };
                let Attempt::Verified(verified) = pending.attempt(&code) else {
                    panic!("the code verifies")
                };
                let (_, how) = verified.commit(tx)?;
                assert_eq!(how, ChallengeStatus::Verified);
                assert!(
                    matches!(Loaded::load(tx, &id, 10)?, Loaded::Spent(_)),
                    "verified once, then spent"
                );
                Ok(())
            })
            .unwrap();
        let (late, _) = challenge(&store, ChallengeKind::Verify, 5);
        let load = |id: &str, now: i64| store.write(|tx| Loaded::load(tx, id, now)).unwrap();
        assert!(matches!(load(&late, 5), Loaded::Expired(_)));
        assert!(matches!(load(&late, 0), Loaded::Spent(_)), "marked expired");
        assert!(matches!(load("nope", 0), Loaded::Unknown));
    }
}
