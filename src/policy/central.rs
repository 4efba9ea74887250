//! A central policy: the version a team pushes to the shared state
//! (`safety-dongle policy push`), which every dongle on it decides by,
//! with the machine's own policy files layered on top.
//!
//! The local files may only make decisions stricter, never looser. They
//! are merged after the central files as usual (their deny, approval and
//! risk rules add up, their `[defaults]` can only tighten), and, since a
//! merge can loosen (an `autoApprove` list, an agent section's scalars),
//! the central files are also kept compiled alone as a floor: the
//! evaluator judges by every floor and the merge and takes the strictest
//! verdict, and an agent's step limit and risk tolerance are never looser
//! than any floor's.
//!
//! Whoever can write the shared state can push (on SQLite, the agent's
//! own user), so by default ([`CentralPolicy::Floor`]) the machine's own
//! files, or the embedded default when none are named, are a floor too: a
//! push adds strictness to this machine and never takes any away. Only
//! the permission-checked config file can let a central version replace
//! them ([`CentralPolicy::Replace`]): then the local files only tighten
//! it, and with none the central version decides alone, with the hash it
//! was pushed under.

use std::path::{Path, PathBuf};

use crate::{
    config::CentralPolicy,
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
        let sources = texts
            .into_iter()
            .map(|source| PolicySource { path: PathBuf::from(source.path), text: source.text })
            .collect();
        Ok(Self { version: stored.version, hash: stored.hash.clone(), sources })
    }

    /// The newest version the state holds, if any was pushed; one whose
    /// kept sources cannot be read is refused with why.
    pub fn latest(tx: &Tx<'_>) -> Result<Option<Self>, StoreError> {
        let Some(stored) = central::latest(tx)? else { return Ok(None) };
        Self::from_stored(&stored).map(Some).map_err(|error| StoreError::CentralPolicy {
            version: stored.version,
            why: error.to_string(),
        })
    }
}

/// Which layer a floor is: named when it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloorOf {
    /// The central files alone, under the machine's own.
    Central,
    /// The machine's own files (or the embedded default) alone, under a
    /// central version.
    Machine,
}

impl FloorOf {
    /// What an answer decided by this floor says.
    pub fn explanation(self) -> &'static str {
        match self {
            Self::Central => {
                "decided by the central policy: local policy files may only make its decisions stricter"
            }
            Self::Machine => {
                "decided by this machine's own policy: a central policy may only make its decisions stricter (central_policy = \"floor\")"
            }
        }
    }
}

/// One layer of a layered policy compiled alone.
pub struct Floor {
    pub policy: CompiledPolicy,
    /// Where the layer's rules begin among the layered policy's: its rule
    /// `i` is the layered policy's rule `first_rule + i`.
    pub first_rule: usize,
    pub of: FloorOf,
}

/// How the files of one compiled policy are layered, as its hash and its
/// kept sources record.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Layers {
    /// The first this many files are a central policy's.
    pub central_files: usize,
    /// The files after them are the machine's own, kept as a floor.
    pub machine_floor: bool,
}

impl CompiledPolicy {
    /// The local files on `central`, standing to it as `under_central`
    /// says; without a central policy, the local files alone, or the
    /// embedded default when none are named.
    pub fn layered(
        central: Option<&Central>,
        local: &[PolicySource],
        under_central: CentralPolicy,
    ) -> Result<Self, Vec<Diagnostic>> {
        let stands_in = local.is_empty();
        let default = [PolicySource::embedded_default()];
        let machine = if stands_in { &default[..] } else { local };
        let Some(central) = central else {
            return Self::compile(machine).map(|policy| Self {
                stands_in,
                under_central,
                ..policy
            });
        };
        let local = match under_central {
            CentralPolicy::Floor => machine,
            CentralPolicy::Replace => local,
        };
        let policy = Self::on_floor(&central.sources, local, under_central)?;
        let pushed = policy.central_floor().unwrap_or(&policy).hash();
        if pushed != central.hash {
            let at = format!("central policy version {}", central.version);
            return Err(vec![Diagnostic::whole_file(
                Path::new(&at),
                format!(
                    "its files hash to {pushed}, not to the {} they were pushed as",
                    central.hash
                ),
            )]);
        }
        Ok(Self { central_version: Some(central.version), stands_in, under_central, ..policy })
    }

    /// `local` merged on `central`, with each compiled alone as a floor
    /// when there is anything on it: `central` always, `local` too when
    /// it stands as the machine's floor.
    pub(super) fn on_floor(
        central: &[PolicySource],
        local: &[PolicySource],
        under_central: CentralPolicy,
    ) -> Result<Self, Vec<Diagnostic>> {
        let all: Vec<PolicySource> = central.iter().chain(local).cloned().collect();
        let layered = !central.is_empty() && !local.is_empty();
        let machine_floor = layered && under_central == CentralPolicy::Floor;
        let mut policy =
            Self::compile_layers(&all, Layers { central_files: central.len(), machine_floor })?;
        if layered {
            let central = Self::compile(central)?;
            let central_rules = central.rules.len();
            policy.floors.push(Floor { policy: central, first_rule: 0, of: FloorOf::Central });
            if machine_floor {
                policy.floors.push(Floor {
                    policy: Self::compile(local)?,
                    first_rule: central_rules,
                    of: FloorOf::Machine,
                });
            }
        }
        Ok(Self { under_central, ..policy })
    }

    /// This policy's own local files on another central version (or on
    /// none).
    pub fn with_central(&self, central: Option<&Central>) -> Result<Self, Vec<Diagnostic>> {
        Self::layered(central, &self.local_sources(), self.under_central)
    }

    /// Other local files, standing `under_central` this policy's central
    /// version, if any.
    pub fn with_local(
        &self,
        local: &[PolicySource],
        under_central: CentralPolicy,
    ) -> Result<Self, Vec<Diagnostic>> {
        Self::layered(self.central().as_ref(), local, under_central)
    }

    /// The layers compiled alone, when files are layered on a central
    /// policy: no decision may be looser than any of theirs.
    pub fn floors(&self) -> &[Floor] {
        &self.floors
    }

    /// The central files compiled alone, when anything is layered on them.
    fn central_floor(&self) -> Option<&CompiledPolicy> {
        self.floors.iter().find(|floor| floor.of == FloorOf::Central).map(|floor| &floor.policy)
    }

    /// The central version this policy is layered on, if any.
    pub fn central_version(&self) -> Option<i64> {
        self.central_version
    }

    /// The central version this policy is layered on, with its files.
    pub fn central(&self) -> Option<Central> {
        let version = self.central_version?;
        let hash = self.central_floor().unwrap_or(self).hash().to_owned();
        Some(Central { version, hash, sources: self.sources_where(|source| source.central) })
    }

    /// Where the policy comes from, for people: `central version 3
    /// (team.toml) + local.toml`, or the files' names.
    pub fn provenance(&self) -> String {
        let local =
            self.texts.iter().filter(|source| !source.central).map(|source| source.path.as_str());
        let Some(version) = self.central_version else {
            return local.collect::<Vec<_>>().join(", ");
        };
        let central: Vec<&str> = self
            .texts
            .iter()
            .filter(|source| source.central)
            .map(|source| source.path.as_str())
            .collect();
        std::iter::once(format!("central version {version} ({})", central.join(", ")))
            .chain(local.map(str::to_owned))
            .collect::<Vec<_>>()
            .join(" + ")
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
        self.texts
            .iter()
            .filter(|source| keep(source))
            .map(|source| PolicySource {
                path: PathBuf::from(&source.path),
                text: source.text.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
