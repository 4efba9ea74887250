//! A central policy: the version a team pushes to the shared state
//! (`safety-dongle policy push`), which every dongle on it decides by,
//! with the machine's own policy files layered on top.
//!
//! The local files may only make decisions stricter, never looser. They
//! are merged after the central files as usual (their deny, approval and
//! risk rules add up, their `[defaults]` can only tighten), and, since a
//! merge can loosen (an `autoApprove` list, an agent section's scalars),
//! the central files are also kept compiled alone as a floor: the
//! evaluator judges by both and takes the stricter verdict, and an
//! agent's step limit and risk tolerance are never looser than the
//! floor's. With no local files, the policy is the central one, with the
//! hash it was pushed under.

use std::path::{Path, PathBuf};

use crate::{
    diagnostics::Diagnostic,
    store::{
        StoreError, Tx,
        central::{self, CentralVersion},
    },
};

use super::{CompiledPolicy, PolicySource, StoredPolicyError, StoredSource};

/// One pushed version of a central policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Central {
    pub version: i64,
    /// The hash its files compile to alone, as pushed.
    pub hash: String,
    pub sources: Vec<PolicySource>,
}

impl Central {
    /// A version as the state keeps it, its sources as
    /// `CompiledPolicy::stored_sources` wrote them.
    pub fn from_stored(stored: &CentralVersion) -> Result<Self, StoredPolicyError> {
        let texts: Vec<StoredSource> = serde_json::from_str(&stored.sources)?;
        let sources = texts.into_iter().map(|source| PolicySource { path: PathBuf::from(source.path), text: source.text }).collect();
        Ok(Self { version: stored.version, hash: stored.hash.clone(), sources })
    }

    /// The newest version the state holds, if any was pushed; one whose
    /// kept sources cannot be read is refused with why.
    pub fn latest(tx: &Tx<'_>) -> Result<Option<Self>, StoreError> {
        let Some(stored) = central::latest(tx)? else { return Ok(None) };
        Self::from_stored(&stored).map(Some).map_err(|error| StoreError::CentralPolicy { version: stored.version, why: error.to_string() })
    }
}

impl CompiledPolicy {
    /// The local files on `central`; without a central policy, the local
    /// files alone, or the embedded default when none are named.
    pub fn layered(central: Option<&Central>, local: &[PolicySource]) -> Result<Self, Vec<Diagnostic>> {
        let Some(central) = central else {
            if local.is_empty() {
                return Self::compile(&[PolicySource::embedded_default()]).map(|policy| Self { stands_in: true, ..policy });
            }
            return Self::compile(local);
        };
        let policy = Self::on_floor(&central.sources, local)?;
        let pushed = policy.floor.as_deref().unwrap_or(&policy).hash();
        if pushed != central.hash {
            let at = format!("central policy version {}", central.version);
            return Err(vec![Diagnostic::whole_file(Path::new(&at), format!("its files hash to {pushed}, not to the {} they were pushed as", central.hash))]);
        }
        Ok(Self { central_version: Some(central.version), ..policy })
    }

    /// `local` merged on `central`, with `central` alone as the floor when
    /// there is anything on it.
    pub(super) fn on_floor(central: &[PolicySource], local: &[PolicySource]) -> Result<Self, Vec<Diagnostic>> {
        let all: Vec<PolicySource> = central.iter().chain(local).cloned().collect();
        let mut policy = Self::compile_layers(&all, central.len())?;
        if !central.is_empty() && !local.is_empty() {
            policy.floor = Some(Box::new(Self::compile(central)?));
        }
        Ok(policy)
    }

    /// This policy's own local files on another central version.
    pub fn with_central(&self, central: &Central) -> Result<Self, Vec<Diagnostic>> {
        Self::layered(Some(central), &self.local_sources())
    }

    /// Other local files on this policy's central version, if any.
    pub fn with_local(&self, local: &[PolicySource]) -> Result<Self, Vec<Diagnostic>> {
        Self::layered(self.central().as_ref(), local)
    }

    /// The central files compiled alone, when local files are merged on
    /// them: no decision may be looser than this policy's.
    pub fn floor(&self) -> Option<&CompiledPolicy> {
        self.floor.as_deref()
    }

    /// The central version this policy is layered on, if any.
    pub fn central_version(&self) -> Option<i64> {
        self.central_version
    }

    /// The central version this policy is layered on, with its files.
    pub fn central(&self) -> Option<Central> {
        let version = self.central_version?;
        let hash = self.floor.as_deref().unwrap_or(self).hash().to_owned();
        Some(Central { version, hash, sources: self.sources_where(|source| source.central) })
    }

    /// Where the policy comes from, for people: `central version 3
    /// (team.toml) + local.toml`, or the files' names.
    pub fn provenance(&self) -> String {
        let local = self.texts.iter().filter(|source| !source.central).map(|source| source.path.as_str());
        let Some(version) = self.central_version else { return local.collect::<Vec<_>>().join(", ") };
        let central: Vec<&str> = self.texts.iter().filter(|source| source.central).map(|source| source.path.as_str()).collect();
        std::iter::once(format!("central version {version} ({})", central.join(", "))).chain(local.map(str::to_owned)).collect::<Vec<_>>().join(" + ")
    }

    /// The machine's own policy files (none when the embedded default
    /// stands in for them).
    pub fn local_sources(&self) -> Vec<PolicySource> {
        if self.stands_in {
            return Vec::new();
        }
        self.sources_where(|source| !source.central)
    }

    fn sources_where(&self, keep: impl Fn(&StoredSource) -> bool) -> Vec<PolicySource> {
        self.texts.iter().filter(|source| keep(source)).map(|source| PolicySource { path: PathBuf::from(&source.path), text: source.text.clone() }).collect()
    }
}

#[cfg(test)]
mod tests;
