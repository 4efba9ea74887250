//! Asking a human: the requests (challenges) the loop and the gate raise,
//! stored before anyone is told of them, shown through the verifier, and
//! the answers to approval requests collected.
//!
//! A code challenge goes to the verifier, which returns only its salted
//! hash (stored durably before this returns). An approval request is
//! followed by a background task that records the human's answer as the
//! challenge's status, with its audit row, and on the [`ApprovalBoard`],
//! where `confirm_operation` and the gate collect it. Asking waits only
//! until the request is shown, and says why when no channel could show
//! it. One MCP session may raise at most [`HUMAN_REQUESTS_PER_SESSION`]
//! requests per window, whatever agent names it reports under.
//!
//! Collecting an answer waits for it at most `approval_timeout_secs`, and
//! ends by the time the request must answer (an MCP request's is under
//! the 60 s after which common clients give up on it), telling a
//! client that asked for progress every few seconds that a human is still
//! being waited for.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use crate::store::{Tx, owner::Owner};
use verifier_protocol::Tier;

use crate::{
    protocol::registry::{CallContext, Progress},
    store::{
        Store, StoreError,
        audit::{self, AuditEntry, AuditEvent, AuditStage},
        now_ms,
        records::{self, ChallengeKind, ChallengeRow, ChallengeStatus, PauseKind},
        rfc3339,
    },
};

use super::{
    approvals::{ApprovalBoard, Collection, Collector, Opening, Settled},
    error::{AskAgain, VerifyError},
    link::{Approved, Decision, HumanRequest, Shown, VerifierLink, VerifierUnavailable},
};

/// At most this many requests for a human (dialogs) raised by one MCP
/// session per window: a session cannot flood a person with dialogs
/// through fresh names.
const HUMAN_REQUESTS_PER_SESSION: u32 = 10;
const HUMAN_REQUEST_WINDOW_MS: i64 = 5 * 60 * 1000;

/// How often a client that asked for progress hears that a human is still
/// being waited for.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// How humans are reached.
#[derive(Debug, Clone)]
pub struct HumanSettings {
    /// How long a verification or approval challenge stays open.
    pub challenge_ttl_ms: i64,
    /// How long collecting an approval waits for the human's answer, at
    /// most (a request that must answer sooner waits less).
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
    /// Whether an approval request is still waiting on the board for the
    /// human's answer.
    #[cfg(test)]
    pub fn approval_still_waiting(&self, approval_id: &str) -> bool {
        self.approvals.still_waiting(approval_id)
    }

    pub fn new(store: Arc<Store>, settings: HumanSettings) -> Self {
        Self {
            store,
            settings,
            owner: Owner::current(),
            approvals: Arc::new(ApprovalBoard::default()),
            gate_approvals: Mutex::new(HashSet::new()),
        }
    }

    pub fn approval_wait(&self) -> Duration {
        self.settings.approval_wait
    }

    /// A request under a fresh challenge id, valid for the configured
    /// challenge lifetime.
    pub fn new_ask(
        &self,
        kind: ChallengeKind,
        raised: Raised<'_>,
        reason: String,
        now: i64,
    ) -> Ask {
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
    pub fn record(
        &self,
        tx: &Tx<'_>,
        ask: &Ask,
        record_expiry: i64,
        pause: Option<PauseKind>,
        now: i64,
    ) -> Result<(), StoreError> {
        records::insert_challenge(
            tx,
            &ChallengeRow {
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
            },
        )
    }

    /// Records an approval request that gates one call: collected by
    /// repeating the call, never by `confirm_operation`; it holds `pause`
    /// on the agent while it waits.
    pub fn record_gate_approval(
        &self,
        tx: &Tx<'_>,
        ask: &Ask,
        pause: Option<PauseKind>,
        now: i64,
    ) -> Result<(), StoreError> {
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

    /// Waits for the human's answer to an approval request, at most
    /// `approval_wait` and only until `call` must answer, and collects it
    /// for `collector`, reporting progress to a client that asked for it.
    /// A gated call stops waiting when its client gives up on it:
    /// collecting would let the call run for nobody. `confirm_operation`
    /// waits on, so an answer that comes meanwhile is recorded at once,
    /// and its session hears it on its next call.
    pub async fn wait(
        &self,
        approval_id: &str,
        call: &CallContext,
        collector: Collector<'_>,
    ) -> Settled<'_> {
        let limit = call.wait_within_answer_time(self.settings.approval_wait);
        let give_up = async {
            let deadline = tokio::time::sleep(limit);
            match collector {
                Collector::GatedCall => tokio::select! {
                    () = deadline => {}
                    () = call.cancelled.cancelled() => {}
                },
                Collector::Confirm { .. } => deadline.await,
            }
        };
        let waiting = self.approvals.wait(approval_id, collector, give_up);
        let settled = call
            .reporting_progress(waiting, PROGRESS_EVERY, |elapsed| {
                waiting_for_human(approval_id, elapsed, limit)
            })
            .await;
        if !matches!(settled, Settled::StillPending { .. }) {
            lock(&self.gate_approvals).remove(approval_id);
        }
        settled
    }

    /// The session ended: the requests it raised and the answers kept for
    /// it leave the board (their stored challenges are cancelled apart);
    /// `None`: every session.
    pub fn session_ended(&self, session: Option<&str>) {
        self.approvals.session_ended(session);
    }

    /// Makes a challenge committed with a normal write durable, then asks.
    pub async fn sync_and_ask(&self, ask: &Ask) -> Result<(), Vec<String>> {
        self.store
            .sync_barrier_async()
            .await
            .map_err(|_| vec!["the challenge could not be made durable".to_owned()])?;
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
        let raised = self.store.read(|tx| {
            records::challenges_in_session_since(
                tx,
                &ask.session_id,
                now_ms() - HUMAN_REQUEST_WINDOW_MS,
            )
        });
        match raised {
            Ok(count) if count <= HUMAN_REQUESTS_PER_SESSION => {}
            Ok(_) => {
                return Err(vec![format!(
                    "this MCP session already asked a human {HUMAN_REQUESTS_PER_SESSION} times in {} minutes, so no dialog was opened",
                    HUMAN_REQUEST_WINDOW_MS / 60_000
                )]);
            }
            Err(_) => {
                return Err(vec![
                    "the safety state could not be read, so no dialog was opened".into(),
                ]);
            }
        }
        let expires_at = rfc3339(ask.expires_at);
        let timeout_secs =
            u64::try_from((ask.expires_at - now_ms()).max(1_000) / 1_000).unwrap_or(1);
        let tier = match ask.kind {
            ChallengeKind::DangerZone => Some(Tier::DangerZone),
            ChallengeKind::Verify => Some(Tier::Verify),
            ChallengeKind::Approval => None,
        };
        let request = HumanRequest {
            id: &ask.id,
            agent: &ask.agent,
            tier,
            reason: &ask.reason,
            action: &ask.action,
            expires_at: &expires_at,
            timeout_secs,
        };
        if ask.kind == ChallengeKind::Approval {
            return self.ask_approval(link, &request, ask).await;
        }
        let outcome = link.show_code(&request).await;
        if let Some(hash) = outcome.hash.clone()
            && let id = ask.id.clone()
            && self
                .store
                .write_durable_async(move |tx| records::set_challenge_hash(tx, &id, &hash))
                .await
                .is_err()
        {
            return Err(vec!["the code's hash could not be stored".into()]);
        }
        match (outcome.hash, outcome.shown) {
            (Some(_), Shown::On(_)) => Ok(()),
            (None, Shown::On(_)) => {
                Err(vec!["verifier: showed a code without sending its hash".into()])
            }
            (_, Shown::Nowhere(errors)) => Err(errors),
        }
    }

    /// Shows an approval request and follows it: the human's answer
    /// becomes the challenge's status and lands on the board.
    async fn ask_approval(
        &self,
        link: &VerifierLink,
        request: &HumanRequest<'_>,
        ask: &Ask,
    ) -> Result<(), Vec<String>> {
        let ticket = link.ask_approval(request).await;
        if let (Shown::On(_), Some(decision)) = (&ticket.shown, ticket.decision) {
            self.approvals.open(Opening {
                approval_id: &ask.id,
                agent: &ask.agent,
                session: &ask.session_id,
                closes_at: ask.expires_at,
            });
            let (board, store, ask) = (self.approvals.clone(), self.store.clone(), ask.clone());
            tokio::spawn(async move {
                let decision = decision.await.unwrap_or(Decision::TimedOut);
                let status = match &decision {
                    Decision::Approve(_) => ChallengeStatus::Approved,
                    Decision::Deny => ChallengeStatus::Denied,
                    Decision::TimedOut => ChallengeStatus::Expired,
                };
                // Only a request still waiting takes the answer: one whose
                // session ended stays cancelled.
                let id = ask.id.clone();
                let waiting =
                    store.write_durable_async(move |tx| record_answer(tx, &ask, status)).await;
                match waiting {
                    Ok(true) => board.settle(&id, decision),
                    Ok(false) => board.withdraw(&id),
                    // Not recorded: the request stays unanswered until it
                    // expires (fail closed).
                    Err(error) => {
                        tracing::error!(%error, "a human's answer to an approval request could not be recorded")
                    }
                }
            });
        }
        match ticket.shown {
            Shown::On(_) => Ok(()),
            Shown::Nowhere(errors) => Err(errors),
        }
    }
}

/// The human's answer to `ask`, as its challenge's status with an audit
/// row, if the request still waits for it; `false` when it no longer does.
fn record_answer(tx: &Tx<'_>, ask: &Ask, status: ChallengeStatus) -> Result<bool, StoreError> {
    let waiting = records::settle_challenge(tx, &ask.id, status)?;
    if waiting {
        let entry = AuditEntry {
            session_id: Some(&ask.session_id),
            hint: Some(&ask.id),
            stage: Some(AuditStage::Human),
            policy_hash: "-",
            ..AuditEntry::of(&ask.agent, AuditEvent::Approval, status.into())
        };
        audit::append(tx, &entry)?;
    }
    Ok(waiting)
}

/// A progress report while a call waits up to `limit` for a human.
fn waiting_for_human(approval_id: &str, elapsed: Duration, limit: Duration) -> Progress {
    let (elapsed, limit) = (elapsed.as_secs_f64().floor(), limit.as_secs_f64().ceil());
    Progress {
        progress: elapsed,
        total: Some(limit),
        message: Some(format!(
            "Waiting for a human to approve or deny request {approval_id} ({elapsed} s of up to {limit} s in this call)"
        )),
    }
}

/// The human's Approve for `collector` to spend, or why there is none.
pub fn approved<'a>(
    approval_id: &str,
    settled: Settled<'a>,
    store: &Store,
    collector: Collector<'_>,
) -> Result<(Approved, Collection<'a>), VerifyError> {
    let id = approval_id.to_owned();
    match settled {
        Settled::Approved(approved, collection) => Ok((approved, collection)),
        Settled::StillPending { closes_at } => {
            let ask_again = match collector {
                Collector::Confirm { .. } => AskAgain::ConfirmOperation,
                Collector::GatedCall => AskAgain::RepeatTheCall,
            };
            Err(VerifyError::StillPending { id, closes_at: rfc3339(closes_at), ask_again })
        }
        Settled::Denied => Err(VerifyError::Denied(id)),
        Settled::TimedOut => {
            Err(VerifyError::Expired { expired_at: expiry_of(store, approval_id)?, id })
        }
        // Told again only to a confirm_operation, which answers it before
        // asking for an Approve to spend.
        Settled::Used | Settled::ApprovedBefore => Err(VerifyError::Used(id)),
        Settled::Unknown => {
            let stored = store.read(|tx| records::challenge(tx, approval_id))?;
            Err(match stored.map(|(challenge, _)| challenge) {
                Some(challenge) if challenge.status == ChallengeStatus::Used => {
                    VerifyError::Used(id)
                }
                Some(challenge) if challenge.status == ChallengeStatus::Denied => {
                    VerifyError::Denied(id)
                }
                Some(challenge) if challenge.status == ChallengeStatus::Expired => {
                    VerifyError::Expired { id, expired_at: challenge.expires_at }
                }
                Some(challenge) if challenge.status == ChallengeStatus::Cancelled => {
                    VerifyError::Invalid { id, why: "the session that raised this request ended" }
                }
                Some(_) => VerifyError::Invalid {
                    id,
                    why: "no human was asked about this request (no channel could show it, or the dongle restarted)",
                },
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Guards against a hang only: every wait below ends by itself long
    /// before.
    const HANG: Duration = Duration::from_secs(30);

    fn humans_with_request(dir: &Path, approval_wait: Duration) -> Humans {
        let store = Arc::new(Store::open(&dir.join("state")).unwrap());
        let humans = Humans::new(
            store,
            HumanSettings {
                challenge_ttl_ms: 60_000,
                approval_wait,
                verifier: Err(VerifierUnavailable::NotFound),
            },
        );
        humans.approvals.open(Opening {
            approval_id: "a",
            agent: "agent",
            session: "s1",
            closes_at: 7,
        });
        humans
    }

    #[tokio::test]
    async fn a_call_waits_no_longer_than_its_request_may_take() {
        let dir = tempfile::tempdir().unwrap();
        let humans = humans_with_request(dir.path(), Duration::from_secs(3600));
        let mut call = CallContext::new("s1");
        call.answer_by = Some(tokio::time::Instant::now() + Duration::from_millis(10));
        let settled = tokio::time::timeout(
            HANG,
            humans.wait("a", &call, Collector::Confirm { session: "s1" }),
        )
        .await
        .expect("bounded by when the request must answer");
        assert!(matches!(settled, Settled::StillPending { closes_at: 7 }), "{settled:?}");
    }

    #[tokio::test]
    async fn a_gated_call_stops_waiting_when_its_client_gives_up_and_confirm_operation_waits_on() {
        let dir = tempfile::tempdir().unwrap();
        let humans = humans_with_request(dir.path(), HANG * 2);
        let call = CallContext::new("s1");
        call.cancelled.cancel();
        let gated = tokio::time::timeout(HANG, humans.wait("a", &call, Collector::GatedCall))
            .await
            .expect("a gated call stops at once");
        assert!(matches!(gated, Settled::StillPending { .. }), "{gated:?}");
        let confirming = humans.wait("a", &call, Collector::Confirm { session: "s1" });
        tokio::pin!(confirming);
        assert!(
            tokio::time::timeout(Duration::from_millis(20), &mut confirming).await.is_err(),
            "confirm_operation waits on for the answer"
        );
        humans.approvals.settle("a", Decision::Approve(Approved::for_tests("a")));
        let Settled::Approved(_, collection) = confirming.await else {
            panic!("the answer that came meanwhile is collected")
        };
        collection.finish(Some("s1"));
    }
}
