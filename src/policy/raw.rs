//! Policy files as written (DESIGN.md 7.4): serde types that mirror the
//! TOML exactly, with spans for locating errors. Nothing here is trusted
//! until `compile` has checked it.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    pub defaults: Option<RawSection>,
    #[serde(default)]
    pub risk: Vec<Spanned<RawRisk>>,
    #[serde(default)]
    pub agents: BTreeMap<String, Spanned<RawSection>>,
}

/// `[defaults]` or `[agents."glob"]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawSection {
    pub max_autonomous_steps: Option<Spanned<i64>>,
    pub risk_tolerance: Option<Spanned<String>>,
    #[serde(default)]
    pub deny: Vec<Spanned<String>>,
    #[serde(default)]
    pub requires_approval: Vec<Spanned<String>>,
    pub auto_approve: Option<Vec<Spanned<String>>>,
}

/// `[[risk]]`: a scoring rule for stage 4.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRisk {
    #[serde(default, rename = "match")]
    pub patterns: Vec<Spanned<String>>,
    #[serde(default)]
    pub keywords: Vec<Spanned<String>>,
    pub score: Spanned<i64>,
    pub reason: Spanned<String>,
}
