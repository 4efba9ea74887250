//! The policy in force in a running dongle, replaceable whole while it
//! serves: a reload swaps in a new compiled policy, and every decision
//! takes one snapshot, so it is judged, and its audit row named, by one
//! version from start to end. Calls in flight keep the version they took.
//!
//! A server may start before its policy is compiled ([`LivePolicy::compiling`]):
//! whoever needs the policy first waits for it, so nothing is ever
//! decided without one. If it cannot be compiled, the server stops
//! (the caller's duty) and nobody is answered.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::CompiledPolicy;

pub struct LivePolicy {
    current: Mutex<Option<Arc<CompiledPolicy>>>,
    compiled: Condvar,
}

impl LivePolicy {
    pub fn new(policy: Arc<CompiledPolicy>) -> Self {
        Self { current: Mutex::new(Some(policy)), compiled: Condvar::new() }
    }

    /// A policy still being compiled: [`LivePolicy::current`] waits until
    /// [`LivePolicy::replace`] puts one in force.
    pub fn compiling() -> Self {
        Self { current: Mutex::new(None), compiled: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Arc<CompiledPolicy>>> {
        // A poisoned lock still holds a whole policy: replacement is one
        // pointer store.
        self.current.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The policy in force now (waiting for the first one, if need be).
    pub fn current(&self) -> Arc<CompiledPolicy> {
        let mut current = self.lock();
        loop {
            if let Some(policy) = &*current {
                return policy.clone();
            }
            current = self.compiled.wait(current).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// Puts `policy` in force; returns the one it replaces, if any.
    pub fn replace(&self, policy: Arc<CompiledPolicy>) -> Option<Arc<CompiledPolicy>> {
        let replaced = self.lock().replace(policy);
        self.compiled.notify_all();
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
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!reader.is_finished(), "nothing is read before a policy is in force");
        let first = Arc::new(CompiledPolicy::compile(&[super::super::PolicySource::embedded_default()]).unwrap());
        assert!(live.replace(first.clone()).is_none());
        assert_eq!(reader.join().unwrap(), first.hash());
        let second = Arc::new(CompiledPolicy::compile(&[super::super::PolicySource { path: "other.toml".into(), text: "[defaults]\nmaxAutonomousSteps = 3\n".into() }]).unwrap());
        assert_eq!(live.replace(second.clone()).map(|old| old.hash().to_owned()), Some(first.hash().to_owned()));
        assert_eq!(live.current().hash(), second.hash());
    }
}
