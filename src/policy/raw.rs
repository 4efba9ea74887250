//! Policy files as written (DESIGN.md 7.4): serde types that mirror the
//! TOML exactly, with spans for locating errors. Nothing here is trusted
//! until `compile` has checked it.
//!
//! A rule in `deny`, `requiresApproval` or `autoApprove` is a pattern, or
//! an inline table that gives the pattern with the actions it must decide
//! and must not match: `{ match = "rm -r /", examples = ["rm -rf /"],
//! counterexamples = ["rm -rf ./build"] }`. A `[[risk]]` table carries
//! `examples` and `counterexamples` as keys of its own.

use std::{collections::BTreeMap, fmt};

use serde::{
    Deserialize, Deserializer,
    de::{self, MapAccess, Visitor},
};
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
    pub deny: Vec<Spanned<RawRule>>,
    #[serde(default)]
    pub requires_approval: Vec<Spanned<RawRule>>,
    pub auto_approve: Option<Vec<Spanned<RawRule>>>,
}

/// One rule of a section's list, as a bare pattern or as a table with its
/// examples.
#[derive(Debug)]
pub enum RawRule {
    Pattern(String),
    WithExamples(RawExamples),
}

/// A rule's pattern (`match`) with its examples, as an inline table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExamples {
    #[serde(rename = "match")]
    pub pattern: Spanned<String>,
    #[serde(default)]
    pub examples: Vec<Spanned<String>>,
    #[serde(default)]
    pub counterexamples: Vec<Spanned<String>>,
}

impl RawRule {
    /// The pattern, located at its own text (inside the table, if any).
    pub fn pattern(rule: &Spanned<RawRule>) -> Spanned<String> {
        match rule.get_ref() {
            RawRule::Pattern(pattern) => Spanned::new(rule.span(), pattern.clone()),
            RawRule::WithExamples(table) => table.pattern.clone(),
        }
    }

    pub fn examples(&self) -> &[Spanned<String>] {
        match self {
            RawRule::Pattern(_) => &[],
            RawRule::WithExamples(table) => &table.examples,
        }
    }

    pub fn counterexamples(&self) -> &[Spanned<String>] {
        match self {
            RawRule::Pattern(_) => &[],
            RawRule::WithExamples(table) => &table.counterexamples,
        }
    }
}

impl<'de> Deserialize<'de> for RawRule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RuleVisitor;
        impl<'de> Visitor<'de> for RuleVisitor {
            type Value = RawRule;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a pattern, or a table { match = \"pattern\", examples = [...], counterexamples = [...] }")
            }

            fn visit_str<E: de::Error>(self, pattern: &str) -> Result<RawRule, E> {
                Ok(RawRule::Pattern(pattern.to_owned()))
            }

            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<RawRule, M::Error> {
                RawExamples::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawRule::WithExamples)
            }
        }
        deserializer.deserialize_any(RuleVisitor)
    }
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
    #[serde(default)]
    pub examples: Vec<Spanned<String>>,
    #[serde(default)]
    pub counterexamples: Vec<Spanned<String>>,
}
