//! Asking a human: the requests (challenges) the loop and the gate raise,
//! stored before anyone is told of them, shown through the verifier, and
//! the answers to approval requests collected.
//!
//! A code challenge goes to the verifier, which returns only its salted
//! hash (stored durably before this returns). An approval request is
//! followed by a background task that records the human's answer as the
//! challenge's status and on the [`ApprovalBoard`], where
//! `confirm_operation` and the gate collect it. Asking waits only until the
//! request is shown, and says why when no channel could show it. One MCP
//! session may raise at most [`HUMAN_REQUESTS_PER_SESSION`] requests per
//! window, whatever agent names it reports under.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use crate::store::{Tx, owner::Owner};
use verifier_protocol::Tier;

use crate::{
    safety::evaluator::PauseKind,
    store::{
        Store, StoreError, now_ms,
        records::{self, ChallengeKind, ChallengeRow, ChallengeStatus},
        rfc3339,
    },
};

use super::{
    approvals::{ApprovalBoard, Settled},
    error::VerifyError,
    link::{Approved, Decision, HumanRequest, Shown, VerifierLink, VerifierUnavailable},
};

/// At most this many requests for a human (dialogs) raised by one MCP
/// session per window: a session cannot flood a person with dialogs
/// through fresh names.
const HUMAN_REQUESTS_PER_SESSION: u32 = 10;
const HUMAN_REQUEST_WINDOW_MS: i64 = 5 * 60 * 1000;

/// How humans are reached.
#[derive(Debug, Clone)]
pub struct HumanSettings {
    /// How long a verification or approval challenge stays open.
    pub challenge_ttl_ms: i64,
    /// How long collecting an approval waits for the human's answer.
    pub approval_wait: Duration,
    /// How to reach the verifier, or why it cannot be reached: then no
    /// request can be shown (and the loop stays closed).
    pub verifier: Result<VerifierLink, VerifierUnavailable>,
}

/// Whose call, about which action, raises a request for a human.
#[derive(Debug, Clone, Copy)]
pub struct Raised<'a> {
    pub session_id: &'a str,
    pub agent: &'a str,
    pub action: &'a str,
}

/// A request for a human, decided in a transaction, shown after it.
#[derive(Debug, Clone)]
pub struct Ask {
    pub kind: ChallengeKind,
    pub id: String,
    pub agent: String,
    /// The MCP session whose call raised it.
    pub session_id: String,
    pub reason: String,
    pub action: String,
    pub expires_at: i64,
}

pub struct Humans {
    store: Arc<Store>,
    settings: HumanSettings,
    owner: Owner,
    approvals: Arc<ApprovalBoard>,
    /// Approval requests the gate opened: the call they gate is repeated
    /// to collect them, so `confirm_operation` must not spend them.
    gate_approvals: Mutex<HashSet<String>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain data updated in single statements: a panic elsewhere cannot
    // leave it half-changed.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Humans {
    pub fn new(store: Arc<Store>, settings: HumanSettings) -> Self {
        Self { store, settings, owner: Owner::current(), approvals: Arc::new(ApprovalBoard::default()), gate_approvals: Mutex::new(HashSet::new()) }
    }

    pub fn approval_wait(&self) -> Duration {
        self.settings.approval_wait
    }

    /// A request under a fresh challenge id, valid for the configured
    /// challenge lifetime.
    pub fn new_ask(&self, kind: ChallengeKind, raised: Raised<'_>, reason: String, now: i64) -> Ask {
        Ask {
            kind,
            id: uuid::Uuid::new_v4().to_string(),
            agent: raised.agent.to_owned(),
            session_id: raised.session_id.to_owned(),
            reason,
            action: raised.action.to_owned(),
            expires_at: now + self.settings.challenge_ttl_ms,
        }
    }

    /// Stores the challenge an [`Ask`] describes, holding `pause` on its
    /// agent while it waits; `record_expiry` is when it stops being valid
    /// (`i64::MAX` for one only a human can end).
    pub fn record(&self, tx: &Tx<'_>, ask: &Ask, record_expiry: i64, pause: Option<PauseKind>, now: i64) -> Result<(), StoreError> {
        records::insert_challenge(tx, &ChallengeRow {
            id: ask.id.clone(),
            agent: ask.agent.clone(),
            kind: ask.kind,
            action: ask.action.clone(),
            reason: ask.reason.clone(),
            created_at: now,
            expires_at: record_expiry,
            status: ChallengeStatus::Pending,
            durable: ask.kind == ChallengeKind::DangerZone,
            owner: self.owner.clone(),
            session_id: Some(ask.session_id.clone()),
            pause,
        })
    }

    /// Records an approval request that gates one call: collected by
    /// repeating the call, never by `confirm_operation`; it holds `pause`
    /// on the agent while it waits.
    pub fn record_gate_approval(&self, tx: &Tx<'_>, ask: &Ask, pause: Option<PauseKind>, now: i64) -> Result<(), StoreError> {
        self.record(tx, ask, ask.expires_at, pause, now)?;
        lock(&self.gate_approvals).insert(ask.id.clone());
        Ok(())
    }

    pub fn is_gate_approval(&self, approval_id: &str) -> bool {
        lock(&self.gate_approvals).contains(approval_id)
    }

    /// The agent an approval request in this process is about.
    pub fn agent_of(&self, approval_id: &str) -> Option<String> {
        self.approvals.agent_of(approval_id)
    }

    /// Waits (bounded) for the human's answer to an approval request.
    pub async fn wait(&self, approval_id: &str) -> Settled {
        let settled = self.approvals.wait(approval_id, self.settings.approval_wait).await;
        if !matches!(settled, Settled::StillPending) {
            lock(&self.gate_approvals).remove(approval_id);
        }
        settled
    }

    /// Makes a challenge committed with a normal write durable, then asks.
    pub async fn sync_and_ask(&self, ask: &Ask) -> Result<(), Vec<String>> {
        self.store.sync_barrier_async().await.map_err(|_| vec!["the challenge could not be made durable".to_owned()])?;
        self.ask(ask).await
    }

    /// Shows a code or an approval request to a human through the
    /// verifier. A code's salted hash is stored durably before this
    /// returns.
    pub async fn ask(&self, ask: &Ask) -> Result<(), Vec<String>> {
        let link = match &self.settings.verifier {
            Ok(link) => link,
            Err(unavailable) => return Err(vec![unavailable.to_string()]),
        };
        // The request itself is already stored, so it counts.
        let raised = self.store.read(|tx| records::challenges_in_session_since(tx, &ask.session_id, now_ms() - HUMAN_REQUEST_WINDOW_MS));
        match raised {
            Ok(count) if count <= HUMAN_REQUESTS_PER_SESSION => {}
            Ok(_) => {
                return Err(vec![format!(
                    "this MCP session already asked a human {HUMAN_REQUESTS_PER_SESSION} times in {} minutes, so no dialog was opened",
                    HUMAN_REQUEST_WINDOW_MS / 60_000
                )]);
            }
            Err(_) => return Err(vec!["the safety state could not be read, so no dialog was opened".into()]),
        }
        let expires_at = rfc3339(ask.expires_at);
        let timeout_secs = u64::try_from((ask.expires_at - now_ms()).max(1_000) / 1_000).unwrap_or(1);
        let tier = match ask.kind {
            ChallengeKind::DangerZone => Some(Tier::DangerZone),
            ChallengeKind::Verify => Some(Tier::Verify),
            ChallengeKind::Approval => None,
        };
        let request = HumanRequest { id: &ask.id, agent: &ask.agent, tier, reason: &ask.reason, action: &ask.action, expires_at: &expires_at, timeout_secs };
        if ask.kind == ChallengeKind::Approval {
            return self.ask_approval(link, &request, ask).await;
        }
        let outcome = link.show_code(&request).await;
        if let Some((salt, hash)) = outcome.hash.clone()
            && let id = ask.id.clone()
            && self.store.write_durable_async(move |tx| records::set_challenge_hash(tx, &id, &salt, &hash)).await.is_err()
        {
            return Err(vec!["the code's hash could not be stored".into()]);
        }
        match (outcome.hash, outcome.shown) {
            (Some(_), Shown::On(_)) => Ok(()),
            (None, Shown::On(_)) => Err(vec!["verifier: showed a code without sending its hash".into()]),
            (_, Shown::Nowhere(errors)) => Err(errors),
        }
    }

    /// Shows an approval request and follows it: the human's answer
    /// becomes the challenge's status and lands on the board.
    async fn ask_approval(&self, link: &VerifierLink, request: &HumanRequest<'_>, ask: &Ask) -> Result<(), Vec<String>> {
        let ticket = link.ask_approval(request).await;
        if let (Shown::On(_), Some(decision)) = (&ticket.shown, ticket.decision) {
            self.approvals.open(&ask.id, &ask.agent);
            let (board, store, id) = (self.approvals.clone(), self.store.clone(), ask.id.clone());
            tokio::spawn(async move {
                let decision = decision.await.unwrap_or(Decision::TimedOut);
                let status = match &decision {
                    Decision::Approve(_) => ChallengeStatus::Approved,
                    Decision::Deny => ChallengeStatus::Denied,
                    Decision::TimedOut => ChallengeStatus::Expired,
                };
                // Only a request still waiting takes the answer: one whose
                // session ended stays cancelled.
                let waiting = {
                    let id = id.clone();
                    store.write_durable_async(move |tx| records::settle_challenge(tx, &id, status)).await
                };
                if let Ok(true) = waiting {
                    board.settle(&id, decision);
                }
            });
        }
        match ticket.shown {
            Shown::On(_) => Ok(()),
            Shown::Nowhere(errors) => Err(errors),
        }
    }
}

/// The human's Approve, or why there is none to spend.
pub fn approved(approval_id: &str, settled: Settled, store: &Store) -> Result<Approved, VerifyError> {
    let id = approval_id.to_owned();
    match settled {
        Settled::Approved(approved) => Ok(approved),
        Settled::StillPending => Err(VerifyError::StillPending(id)),
        Settled::Denied => Err(VerifyError::Denied(id)),
        Settled::TimedOut => Err(VerifyError::Expired { expired_at: expiry_of(store, approval_id)?, id }),
        Settled::Used => Err(VerifyError::Used(id)),
        Settled::Unknown => {
            let stored = store.read(|tx| records::challenge(tx, approval_id))?;
            Err(match stored.map(|(challenge, _)| challenge) {
                Some(challenge) if challenge.status == ChallengeStatus::Used => VerifyError::Used(id),
                Some(challenge) if challenge.status == ChallengeStatus::Denied => VerifyError::Denied(id),
                Some(challenge) if challenge.status == ChallengeStatus::Expired => VerifyError::Expired { id, expired_at: challenge.expires_at },
                Some(challenge) if challenge.status == ChallengeStatus::Cancelled => VerifyError::Invalid { id, why: "the session that raised this request ended" },
                Some(_) => VerifyError::Invalid { id, why: "no human was asked about this request (no channel could show it, or the dongle restarted)" },
                None => VerifyError::Invalid { id, why: "no such approval request" },
            })
        }
    }
}

/// When an approval request that timed out stopped waiting: its stored
/// expiry, or now when the row is gone.
fn expiry_of(store: &Store, approval_id: &str) -> Result<i64, VerifyError> {
    let stored = store.read(|tx| records::challenge(tx, approval_id))?;
    Ok(stored.map_or_else(now_ms, |(challenge, _)| challenge.expires_at))
}
