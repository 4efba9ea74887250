//! What this process knows about its MCP sessions: which agent runs an
//! execution in each, and which sessions a hard block tainted (so an
//! agent cannot shed its block by reporting under another name in the
//! same session). Both end with their session.

use std::{
    collections::HashMap,
    sync::{Mutex, MutexGuard},
};

#[derive(Default)]
pub struct Sessions {
    /// The agent whose execution this process started in each session,
    /// until it finishes: who a proxied call in that session acts for.
    agents: Mutex<HashMap<String, String>>,
    /// Sessions that triggered a hard block: the blocked agent and the
    /// block's `blocked_at`. The taint lasts exactly as long as that block.
    tainted: Mutex<HashMap<String, (String, i64)>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The maps hold plain data updated in single statements: a panic
    // elsewhere cannot leave them half-changed.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Sessions {
    pub fn agent_of(&self, session: &str) -> Option<String> {
        lock(&self.agents).get(session).cloned()
    }

    pub fn set_agent(&self, session: &str, agent: &str) {
        lock(&self.agents).insert(session.to_owned(), agent.to_owned());
    }

    /// Forgets the session's agent if it is `agent` (its execution ended).
    pub fn clear_agent(&self, session: &str, agent: &str) {
        let mut agents = lock(&self.agents);
        if agents.get(session).is_some_and(|running| running == agent) {
            agents.remove(session);
        }
    }

    /// The agent whose block (raised at `blocked_at`) tainted the session.
    pub fn taint_of(&self, session: &str) -> Option<(String, i64)> {
        lock(&self.tainted).get(session).cloned()
    }

    pub fn taint(&self, session: &str, agent: &str, blocked_at: i64) {
        lock(&self.tainted).insert(session.to_owned(), (agent.to_owned(), blocked_at));
    }

    pub fn clear_taint(&self, session: &str) {
        lock(&self.tainted).remove(session);
    }

    /// Whether `session` acts as `agent`: it runs the agent's execution,
    /// or the agent's block tainted it.
    pub fn acts_as(&self, session: &str, agent: &str) -> bool {
        lock(&self.agents).get(session).is_some_and(|running| running == agent)
            || lock(&self.tainted).get(session).is_some_and(|(tainter, _)| tainter == agent)
    }

    /// Forgets the session.
    pub fn end(&self, session: &str) {
        lock(&self.agents).remove(session);
        lock(&self.tainted).remove(session);
    }
}
