//! Approval requests waiting for a human: the verifier's answer lands
//! here, and `confirm_operation` waits here for it. An approval is used at
//! most once: the [`Approved`] proof is handed out a single time. Once an
//! answer has been collected the request leaves the board; its stored
//! challenge status (used, denied, expired) answers later questions.

use std::{
    collections::HashMap,
    sync::{Mutex, MutexGuard},
    time::Duration,
};

use tokio::sync::watch;

use super::link::{Approved, Decision};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pending,
    Approved,
    Denied,
    TimedOut,
}

/// What waiting for an approval found.
#[derive(Debug)]
pub enum Settled {
    Approved(Approved),
    Denied,
    TimedOut,
    /// Approved before, and already used.
    Used,
    /// The human has not answered within the wait.
    StillPending,
    /// No such request in this process.
    Unknown,
}

struct Slot {
    agent: String,
    status: watch::Sender<Status>,
    approved: Option<Approved>,
}

#[derive(Default)]
pub struct ApprovalBoard {
    slots: Mutex<HashMap<String, Slot>>,
}

impl ApprovalBoard {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a request that was shown to a human.
    pub fn open(&self, approval_id: &str, agent: &str) {
        let (status, _) = watch::channel(Status::Pending);
        self.lock().insert(approval_id.to_owned(), Slot { agent: agent.to_owned(), status, approved: None });
    }

    /// Records the verifier's answer.
    pub fn settle(&self, approval_id: &str, decision: Decision) {
        let mut slots = self.lock();
        let Some(slot) = slots.get_mut(approval_id) else { return };
        let status = match decision {
            Decision::Approve(approved) => {
                slot.approved = Some(approved);
                Status::Approved
            }
            Decision::Deny => Status::Denied,
            Decision::TimedOut => Status::TimedOut,
        };
        slot.status.send_replace(status);
    }

    pub fn agent_of(&self, approval_id: &str) -> Option<String> {
        self.lock().get(approval_id).map(|slot| slot.agent.clone())
    }

    /// Waits up to `limit` for the human's answer.
    pub async fn wait(&self, approval_id: &str, limit: Duration) -> Settled {
        let receiver = match self.lock().get(approval_id) {
            Some(slot) => slot.status.subscribe(),
            None => return Settled::Unknown,
        };
        let mut receiver = receiver;
        let _ = tokio::time::timeout(limit, receiver.wait_for(|s| *s != Status::Pending)).await;
        let mut slots = self.lock();
        let Some(slot) = slots.get_mut(approval_id) else { return Settled::Unknown };
        let status = *slot.status.borrow();
        let settled = match status {
            Status::Pending => return Settled::StillPending,
            Status::Denied => Settled::Denied,
            Status::TimedOut => Settled::TimedOut,
            Status::Approved => slot.approved.take().map_or(Settled::Used, Settled::Approved),
        };
        slots.remove(approval_id);
        settled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_are_collected_once_and_waiting_is_bounded() {
        let board = ApprovalBoard::default();
        board.open("a", "agent");
        assert!(matches!(board.wait("a", Duration::from_millis(20)).await, Settled::StillPending));
        assert_eq!(board.agent_of("a").as_deref(), Some("agent"));
        board.settle("a", Decision::Deny);
        assert!(matches!(board.wait("a", Duration::from_secs(5)).await, Settled::Denied));
        assert!(matches!(board.wait("a", Duration::from_millis(1)).await, Settled::Unknown), "collected once, then gone");
        board.open("b", "agent");
        board.settle("b", Decision::TimedOut);
        assert!(matches!(board.wait("b", Duration::from_secs(5)).await, Settled::TimedOut));
        assert!(matches!(board.wait("never-opened", Duration::from_millis(1)).await, Settled::Unknown));
    }
}
