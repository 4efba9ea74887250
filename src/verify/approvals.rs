//! Approval requests waiting for a human, and the calls waiting for their
//! answers: the verifier's answer lands here, and `confirm_operation` and
//! the gate wait here for it.
//!
//! Each request moves through [`Stage`]s: waiting for the human, answered,
//! being collected, and (only for `confirm_operation`) kept for one more
//! telling. An Approve's [`Approved`] proof is handed out a single time:
//! the call that takes it records its use, then finishes the collection
//! ([`Collection::finish`]), keeping the answer for the collecting
//! session's next `confirm_operation`, once, without a second use. That
//! call's client may have given up on it before the answer arrived (the
//! TypeScript SDK does after 60 s) and the server cannot always know: its
//! notice of that can come after the answer has gone out. Every other
//! later call, and that session's after the one more telling, finds the
//! request used. Denials and expiries need no keeping: their stored
//! challenge status answers every later question. Once a request leaves
//! the board, its stored status (used, denied, expired, cancelled) speaks
//! for it.

use std::{
    collections::HashMap,
    future::Future,
    sync::{Mutex, MutexGuard},
};

use tokio::sync::watch;

use super::link::{Approved, Decision};

/// Who collects an answer, which decides whether it may be told twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collector<'a> {
    /// `confirm_operation` from this MCP session: collecting lifts a
    /// pause, and the collecting session may hear the answer once more
    /// (its client may have given up before the answer reached it).
    Confirm { session: &'a str },
    /// A gated call (repeated with its confirmation token, or hooked):
    /// collecting lets the call run, so its answer is never told twice.
    GatedCall,
}

/// What waiting for an approval found.
#[derive(Debug)]
pub enum Settled<'a> {
    /// The human approved and this call collects it: record the use, then
    /// [`Collection::finish`].
    Approved(Approved, Collection<'a>),
    /// The human approved, and an earlier `confirm_operation` of this
    /// session collected it: told once more, with nothing further to use.
    ApprovedBefore,
    Denied,
    TimedOut,
    /// Collected by another call.
    Used,
    /// The human has not answered within the wait; the request stays
    /// open until `closes_at` (ms).
    StillPending {
        closes_at: i64,
    },
    /// No such request on the board: its stored status tells.
    Unknown,
}

/// Where one request stands.
#[derive(Debug)]
enum Stage {
    /// Shown; the human has not answered.
    Waiting,
    /// The human answered; nobody has collected it yet.
    Answered(Decision),
    /// A call took the Approve and is recording its use.
    Collecting,
    /// Collected by `confirm_operation` in this session, which may hear
    /// it once more.
    KeptFor(String),
}

struct Slot {
    agent: String,
    /// The MCP session whose call raised the request.
    session: String,
    /// When the human's dialog closes (ms).
    closes_at: i64,
    stage: Stage,
    /// Marked whenever `stage` changes; waiters subscribe under the lock
    /// before looking, so no change is missed.
    changed: watch::Sender<()>,
}

/// A request being opened on the board.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    pub approval_id: &'a str,
    pub agent: &'a str,
    pub session: &'a str,
    pub closes_at: i64,
}

#[derive(Default)]
pub struct ApprovalBoard {
    slots: Mutex<HashMap<String, Slot>>,
}

impl std::fmt::Debug for ApprovalBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalBoard").field("requests", &self.lock().len()).finish()
    }
}

impl ApprovalBoard {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        // Nothing that can panic runs while a slot's stage is out of it: a
        // panic elsewhere cannot leave a slot half-changed.
        self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a request that was shown to a human.
    pub fn open(&self, opening: Opening<'_>) {
        let (changed, _) = watch::channel(());
        let slot = Slot {
            agent: opening.agent.to_owned(),
            session: opening.session.to_owned(),
            closes_at: opening.closes_at,
            stage: Stage::Waiting,
            changed,
        };
        self.lock().insert(opening.approval_id.to_owned(), slot);
    }

    /// Records the verifier's answer to a request still waiting for it.
    pub fn settle(&self, approval_id: &str, decision: Decision) {
        let mut slots = self.lock();
        if let Some(slot) =
            slots.get_mut(approval_id).filter(|slot| matches!(slot.stage, Stage::Waiting))
        {
            slot.stage = Stage::Answered(decision);
            slot.changed.send_replace(());
        }
    }

    /// Takes a request off the board (its session ended, or its answer
    /// could not be recorded): whoever waits for it finds its stored
    /// status.
    pub fn withdraw(&self, approval_id: &str) {
        if let Some(slot) = self.lock().remove(approval_id) {
            slot.changed.send_replace(());
        }
    }

    /// Takes off the board every request `session` raised and every answer
    /// kept for it: nobody is left to hear them. `None`: every session.
    pub fn session_ended(&self, session: Option<&str>) {
        let mut slots = self.lock();
        slots.retain(|_, slot| {
            let ends = session.is_none_or(|ended| {
                slot.session == ended
                    || matches!(&slot.stage, Stage::KeptFor(kept) if kept == ended)
            });
            if ends {
                slot.changed.send_replace(());
            }
            !ends
        });
    }

    /// Whether the request is on the board still waiting for the human's
    /// answer (tests wait for an answer to land instead of sleeping).
    #[cfg(test)]
    pub fn still_waiting(&self, approval_id: &str) -> bool {
        self.lock().get(approval_id).is_some_and(|slot| matches!(slot.stage, Stage::Waiting))
    }

    pub fn agent_of(&self, approval_id: &str) -> Option<String> {
        self.lock().get(approval_id).map(|slot| slot.agent.clone())
    }

    /// Waits for the human's answer until it comes or `give_up` resolves,
    /// and collects it for `collector`.
    pub async fn wait(
        &self,
        approval_id: &str,
        collector: Collector<'_>,
        give_up: impl Future<Output = ()>,
    ) -> Settled<'_> {
        tokio::pin!(give_up);
        loop {
            let mut changed = match self.collect(&mut self.lock(), approval_id, collector) {
                Ok(settled) => return settled,
                Err(changed) => changed,
            };
            tokio::select! {
                _ = changed.changed() => {}
                () = &mut give_up => {
                    let slots = self.lock();
                    return slots.get(approval_id).map_or(Settled::Unknown, |slot| Settled::StillPending { closes_at: slot.closes_at });
                }
            }
        }
    }

    /// What the request's stage gives `collector` now, or, while it must
    /// wait (the human has not answered, or another call is still
    /// recording its use of the Approve), what tells it of the next change,
    /// subscribed before the lock is let go so no change is missed.
    fn collect<'b>(
        &'b self,
        slots: &mut HashMap<String, Slot>,
        approval_id: &str,
        collector: Collector<'_>,
    ) -> Result<Settled<'b>, watch::Receiver<()>> {
        let Some(slot) = slots.get_mut(approval_id) else { return Ok(Settled::Unknown) };
        // Each arm puts back the stage it leaves the request in.
        match std::mem::replace(&mut slot.stage, Stage::Collecting) {
            stage @ (Stage::Waiting | Stage::Collecting) => {
                slot.stage = stage;
                Err(slot.changed.subscribe())
            }
            Stage::KeptFor(session) => {
                if matches!(collector, Collector::Confirm { session: asking } if asking == session)
                {
                    slots.remove(approval_id);
                    Ok(Settled::ApprovedBefore)
                } else {
                    slot.stage = Stage::KeptFor(session);
                    Ok(Settled::Used)
                }
            }
            // Collecting until the taker finishes.
            Stage::Answered(Decision::Approve(approved)) => Ok(Settled::Approved(
                approved,
                Collection { board: self, approval_id: approval_id.to_owned(), finished: false },
            )),
            // The stored status answers everyone else.
            Stage::Answered(Decision::Deny) => {
                slots.remove(approval_id);
                Ok(Settled::Denied)
            }
            Stage::Answered(Decision::TimedOut) => {
                slots.remove(approval_id);
                Ok(Settled::TimedOut)
            }
        }
    }

    /// The end of a collection: the Approve is kept for `kept_for`'s next
    /// `confirm_operation`, or leaves the board.
    fn collected(&self, approval_id: &str, kept_for: Option<&str>) {
        let mut slots = self.lock();
        match kept_for {
            Some(session) => {
                if let Some(slot) = slots.get_mut(approval_id) {
                    slot.stage = Stage::KeptFor(session.to_owned());
                    slot.changed.send_replace(());
                }
            }
            None => {
                if let Some(slot) = slots.remove(approval_id) {
                    slot.changed.send_replace(());
                }
            }
        }
    }
}

/// The duty of the call that took an Approve: to finish the collection
/// once its use is recorded. Dropped unfinished (the use could not be
/// recorded), the Approve leaves the board untold.
#[derive(Debug)]
#[must_use = "finish the collection once the Approve's use is recorded"]
pub struct Collection<'a> {
    board: &'a ApprovalBoard,
    approval_id: String,
    finished: bool,
}

impl Collection<'_> {
    /// The use is recorded; `keep_for`: the session that may hear the
    /// answer once more, if any.
    pub fn finish(mut self, keep_for: Option<&str>) {
        self.finished = true;
        self.board.collected(&self.approval_id, keep_for);
    }
}

impl Drop for Collection<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.board.collected(&self.approval_id, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const ME: Collector<'static> = Collector::Confirm { session: "s1" };
    const OTHER: Collector<'static> = Collector::Confirm { session: "s2" };

    fn board_with(id: &str) -> ApprovalBoard {
        let board = ApprovalBoard::default();
        board.open(Opening { approval_id: id, agent: "agent", session: "s1", closes_at: 42 });
        board
    }

    fn soon() -> tokio::time::Sleep {
        tokio::time::sleep(Duration::from_millis(20))
    }

    /// A future that never resolves: the wait ends only with an answer.
    async fn never() {
        std::future::pending::<()>().await;
    }

    fn approve(board: &ApprovalBoard, id: &str) {
        board.settle(id, Decision::Approve(Approved::for_tests(id)));
    }

    #[tokio::test]
    async fn an_answer_is_collected_once_and_waiting_is_bounded() {
        let board = board_with("a");
        assert!(matches!(
            board.wait("a", ME, soon()).await,
            Settled::StillPending { closes_at: 42 }
        ));
        assert_eq!(board.agent_of("a").as_deref(), Some("agent"));
        board.settle("a", Decision::Deny);
        assert!(matches!(board.wait("a", ME, never()).await, Settled::Denied));
        assert!(
            matches!(board.wait("a", ME, never()).await, Settled::Unknown),
            "the stored status answers later questions"
        );
        board.open(Opening { approval_id: "b", agent: "agent", session: "s1", closes_at: 42 });
        board.settle("b", Decision::TimedOut);
        board.settle("b", Decision::Deny);
        assert!(
            matches!(board.wait("b", ME, never()).await, Settled::TimedOut),
            "the first answer stands"
        );
        assert!(matches!(board.wait("never-opened", ME, never()).await, Settled::Unknown));
    }

    #[tokio::test]
    async fn an_approve_collected_for_a_gated_call_is_told_once() {
        let board = board_with("a");
        approve(&board, "a");
        let Settled::Approved(proof, collection) = board.wait("a", ME, never()).await else {
            panic!("approved")
        };
        assert_eq!(proof.approval_id(), "a");
        collection.finish(None);
        assert!(
            matches!(board.wait("a", ME, never()).await, Settled::Unknown),
            "used: the stored status says so"
        );
    }

    #[tokio::test]
    async fn an_approve_confirm_operation_collected_is_told_once_more_to_its_session_only() {
        let board = board_with("a");
        approve(&board, "a");
        let Settled::Approved(_, collection) = board.wait("a", ME, never()).await else {
            panic!("approved")
        };
        collection.finish(Some("s1"));
        assert!(matches!(board.wait("a", OTHER, never()).await, Settled::Used), "another session");
        assert!(
            matches!(board.wait("a", Collector::GatedCall, never()).await, Settled::Used),
            "a gated call"
        );
        assert!(
            matches!(board.wait("a", ME, never()).await, Settled::ApprovedBefore),
            "the collecting session"
        );
        assert!(matches!(board.wait("a", ME, never()).await, Settled::Unknown), "only once");
    }

    #[tokio::test]
    async fn a_waiter_of_the_same_session_hears_the_approve_another_of_its_calls_collected() {
        let board = board_with("a");
        // A retry waits while the abandoned call is still waiting too.
        let retry = board.wait("a", ME, never());
        tokio::pin!(retry);
        assert!(
            tokio::time::timeout(Duration::from_millis(10), &mut retry).await.is_err(),
            "nothing to hear yet"
        );
        approve(&board, "a");
        let Settled::Approved(_, collection) = board.wait("a", ME, never()).await else {
            panic!("approved")
        };
        assert!(
            tokio::time::timeout(Duration::from_millis(10), &mut retry).await.is_err(),
            "the use is still being recorded"
        );
        collection.finish(Some("s1"));
        assert!(matches!(retry.await, Settled::ApprovedBefore));
    }

    #[tokio::test]
    async fn an_unfinished_collection_tells_nobody() {
        let board = board_with("a");
        approve(&board, "a");
        let Settled::Approved(_, collection) = board.wait("a", ME, never()).await else {
            panic!("approved")
        };
        drop(collection);
        assert!(matches!(board.wait("a", ME, never()).await, Settled::Unknown));
    }

    #[tokio::test]
    async fn a_session_that_ends_takes_its_requests_and_kept_answers_along() {
        let board = board_with("raised");
        board.open(Opening { approval_id: "kept", agent: "agent", session: "s3", closes_at: 42 });
        approve(&board, "kept");
        let Settled::Approved(_, collection) = board.wait("kept", ME, never()).await else {
            panic!("approved")
        };
        collection.finish(Some("s1"));
        let waiting = board.wait("raised", OTHER, never());
        tokio::pin!(waiting);
        assert!(tokio::time::timeout(Duration::from_millis(10), &mut waiting).await.is_err());
        board.session_ended(Some("s1"));
        assert!(matches!(waiting.await, Settled::Unknown), "a waiter learns at once");
        assert!(matches!(board.wait("kept", ME, never()).await, Settled::Unknown));
        assert_eq!(board.agent_of("raised"), None);
    }
}
