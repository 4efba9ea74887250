//! The policy in force in a running dongle, replaceable whole while it
//! serves: a reload swaps in a new compiled policy, and every decision
//! takes one snapshot, so it is judged, and its audit row named, by one
//! version from start to end. Calls in flight keep the version they took.
//!
//! A server may start before its policy is compiled ([`LivePolicy::compiling`]):
//! whoever needs the policy first says so and waits for it, so nothing is
//! ever decided without one, and the compiler
//! ([`LivePolicy::wait_until_wanted`]) starts at once when it is wanted,
//! else after a grace period that lets the client's handshake be answered
//! first. If it cannot be compiled, the server stops (the caller's duty)
//! and nobody is answered.

use std::{
    sync::{Arc, Condvar, Mutex, MutexGuard},
    time::Duration,
};

use super::CompiledPolicy;

pub struct LivePolicy {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    current: Option<Arc<CompiledPolicy>>,
    /// Someone waits for the first policy.
    wanted: bool,
}

impl LivePolicy {
    pub fn new(policy: Arc<CompiledPolicy>) -> Self {
        Self {
            state: Mutex::new(State { current: Some(policy), wanted: false }),
            changed: Condvar::new(),
        }
    }

    /// A policy still being compiled: [`LivePolicy::current`] waits until
    /// [`LivePolicy::replace`] puts one in force.
    pub fn compiling() -> Self {
        Self { state: Mutex::default(), changed: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock still holds a whole policy: replacement is one
        // pointer store.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The policy in force now (asking for the first one and waiting for
    /// it, if need be).
    pub fn current(&self) -> Arc<CompiledPolicy> {
        let mut state = self.lock();
        loop {
            if let Some(policy) = &state.current {
                return policy.clone();
            }
            if !state.wanted {
                state.wanted = true;
                self.changed.notify_all();
            }
            state = self.changed.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// For the compiler of the first policy: returns once someone waits
    /// for it, or after `grace`, whichever is first.
    pub fn wait_until_wanted(&self, grace: Duration) {
        let state = self.lock();
        let _ = self
            .changed
            .wait_timeout_while(state, grace, |state| !state.wanted && state.current.is_none());
    }

    /// Puts `policy` in force; returns the one it replaces, if any.
    pub fn replace(&self, policy: Arc<CompiledPolicy>) -> Option<Arc<CompiledPolicy>> {
        let replaced = self.lock().current.replace(policy);
        self.changed.notify_all();
        replaced
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_wait_for_the_first_policy_and_then_see_each_swap() {
        let live = Arc::new(LivePolicy::compiling());
        let reader = {
            let live = live.clone();
            std::thread::spawn(move || live.current().hash().to_owned())
        };
        let asked = std::time::Instant::now();
        live.wait_until_wanted(Duration::from_secs(30));
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "a waiting reader wakes the compiler before its grace period ends"
        );
        std::thread::sleep(Duration::from_millis(20));
        assert!(!reader.is_finished(), "nothing is read before a policy is in force");
        let first = Arc::new(
            CompiledPolicy::compile(&[super::super::PolicySource::embedded_default()]).unwrap(),
        );
        assert!(live.replace(first.clone()).is_none());
        assert_eq!(reader.join().unwrap(), first.hash());
        let second = Arc::new(
            CompiledPolicy::compile(&[super::super::PolicySource {
                path: "other.toml".into(),
                text: "[defaults]\nmaxAutonomousSteps = 3\n".into(),
            }])
            .unwrap(),
        );
        assert_eq!(
            live.replace(second.clone()).map(|old| old.hash().to_owned()),
            Some(first.hash().to_owned())
        );
        assert_eq!(live.current().hash(), second.hash());
    }

    #[test]
    fn with_nobody_waiting_the_compiler_starts_after_its_grace_period() {
        let live = LivePolicy::compiling();
        let started = std::time::Instant::now();
        live.wait_until_wanted(Duration::from_millis(30));
        assert!(started.elapsed() >= Duration::from_millis(30));
    }
}
