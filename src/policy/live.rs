//! The policy in force in a running dongle, replaceable whole while it
//! serves: a reload swaps in a new compiled policy, and every decision
//! takes one snapshot, so it is judged, and its audit row named, by one
//! version from start to end. Calls in flight keep the version they took.

use std::sync::{Arc, RwLock};

use super::CompiledPolicy;

pub struct LivePolicy(RwLock<Arc<CompiledPolicy>>);

impl LivePolicy {
    pub fn new(policy: Arc<CompiledPolicy>) -> Self {
        Self(RwLock::new(policy))
    }

    /// The policy in force now.
    pub fn current(&self) -> Arc<CompiledPolicy> {
        // A poisoned lock still holds a whole policy: replacement is one
        // pointer store.
        self.0.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// Puts `policy` in force; returns the one it replaces.
    pub fn replace(&self, policy: Arc<CompiledPolicy>) -> Arc<CompiledPolicy> {
        std::mem::replace(&mut *self.0.write().unwrap_or_else(|poisoned| poisoned.into_inner()), policy)
    }
}
